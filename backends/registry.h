// The backends of a build, as an object: the planner and the runtime iterate over it, tests make
// their own. Nothing here is global.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "backends/backend.h"

namespace hsched {

class BackendRegistry {
 public:
  void add(std::unique_ptr<Backend> backend);
  const std::vector<std::unique_ptr<Backend>>& backends() const { return backends_; }
  // The backend of `api`, or nullptr.
  const Backend* find(DeviceApi api) const;
  // A device for `profile`: its backend's, or one known from the profile alone when this build
  // has no backend for its API.
  std::unique_ptr<Device> open(const DeviceProfile& profile,
                               const DeviceContext& context = {}) const;

 private:
  std::vector<std::unique_ptr<Backend>> backends_;
};

// What the backends of this build are made with.
struct BackendOptions {
  // The profile an NPU 3720 gets (figures and op list of the shipped target file), or nullopt:
  // the Level Zero backend's conservative figures. Asked only when such an NPU is found.
  std::function<std::optional<DeviceProfile>()> npu_3720_profile;
};

// The CPU (first: it is the host), OpenCL and Level Zero backends.
BackendRegistry make_backends(BackendOptions options);

}  // namespace hsched
