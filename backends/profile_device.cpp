// The capability of a device known from its profile alone: a GPU or NPU we plan for (present or
// not) whose backend adds no rules of its own yet. The rules are those a device compiler applies
// before it looks at the numbers: op list, precisions, float data for reduced precisions, static
// bounded shapes, a few attribute values, memory capacity.
#include <array>
#include <utility>

#include "backends/capability.h"
#include "scheduler/capability_rules.h"

namespace hsched {
namespace {

// In the order a report reads best: what the node is before what it holds.
constexpr std::array<sched::CapabilityRule, 7> kProfileRules = {
    sched::check_default_domain, sched::check_op_listed,     sched::check_precision_listed,
    sched::check_float_data,     sched::check_static_shapes, sched::check_attributes,
    sched::check_memory,
};

class ProfileCapability final : public Capability {
 public:
  explicit ProfileCapability(DeviceProfile device) : device_(std::move(device)) {}

  const DeviceProfile& device() const override { return device_; }

  std::optional<Rejection> check(const Graph& graph, NodeId node,
                                 Precision precision) const override {
    for (sched::CapabilityRule rule : kProfileRules) {
      if (auto rejection = rule(graph, node, device_, precision)) return rejection;
    }
    return std::nullopt;
  }

 private:
  DeviceProfile device_;
};

}  // namespace

std::unique_ptr<Capability> make_profile_capability(DeviceProfile device) {
  return std::make_unique<ProfileCapability>(std::move(device));
}

}  // namespace hsched
