#include "scheduler/opencl_capability.h"

#include <utility>

#include "backends/opencl/node_ops.h"

namespace hsched {
namespace {

class OpenClCapability final : public Capability {
 public:
  explicit OpenClCapability(DeviceProfile device)
      : profile_(make_profile_capability(std::move(device))) {}

  const DeviceProfile& device() const override { return profile_->device(); }

  std::optional<Rejection> check(const Graph& graph, NodeId node,
                                 Precision precision) const override {
    if (auto rejection = profile_->check(graph, node, precision)) return rejection;
    if (auto unsupported = opencl::check_node(graph, graph.node(node))) {
      return Rejection{node, device().id, precision, unsupported->reason,
                       "the OpenCL backend: " + unsupported->detail};
    }
    return std::nullopt;
  }

 private:
  std::unique_ptr<Capability> profile_;
};

}  // namespace

std::unique_ptr<Capability> make_opencl_capability(DeviceProfile device) {
  return std::make_unique<OpenClCapability>(std::move(device));
}

}  // namespace hsched
