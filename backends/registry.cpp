#include "backends/registry.h"

#include <utility>

#include "backends/cpu/backend.h"
#include "backends/level_zero/backend.h"
#ifdef HSCHED_WITH_OPENCL
#include "backends/opencl/backend.h"
#endif

namespace hsched {

void BackendRegistry::add(std::unique_ptr<Backend> backend) {
  backends_.push_back(std::move(backend));
}

const Backend* BackendRegistry::find(DeviceApi api) const {
  for (const auto& backend : backends_) {
    if (backend->api() == api) return backend.get();
  }
  return nullptr;
}

std::unique_ptr<Device> BackendRegistry::open(const DeviceProfile& profile,
                                              const DeviceContext& context) const {
  const Backend* backend = find(profile.api);
  return backend != nullptr ? backend->open(profile, context) : open_profile_device(profile);
}

BackendRegistry make_backends(BackendOptions options) {
  BackendRegistry registry;
  registry.add(cpu::make_backend());
#ifdef HSCHED_WITH_OPENCL
  registry.add(opencl::make_backend());
#endif
  registry.add(level_zero::make_backend(std::move(options.npu_3720_profile)));
  return registry;
}

}  // namespace hsched
