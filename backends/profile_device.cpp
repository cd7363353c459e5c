// A device known from its profile alone: the rules a device compiler applies before it looks at
// the numbers (op list, precisions, float data for reduced precisions, static bounded shapes, a
// few attribute values, memory capacity), and no compile. Also the defaults of Device.
#include <algorithm>
#include <array>
#include <utility>

#include "backends/backend.h"
#include "backends/capability_rules.h"

namespace hsched {
namespace {

// In the order a report reads best: what the node is before what it holds.
constexpr std::array<CapabilityRule, 7> kProfileRules = {
    check_default_domain, check_op_listed,     check_precision_listed, check_float_data,
    check_static_shapes,  check_attributes,    check_memory,
};

class ProfileDevice final : public Device {
 public:
  explicit ProfileDevice(DeviceProfile profile) : profile_(std::move(profile)) {}
  const DeviceProfile& profile() const override { return profile_; }
  std::optional<Rejection> check(const Graph& graph, NodeId node,
                                 Precision precision) const override {
    return check_profile_rules(graph, node, profile_, precision);
  }
  Result<std::shared_ptr<Program>> compile(const Graph&, const CompileOptions&) override {
    return Status(ErrorCode::kUnimplemented,
                  "running on " + std::string(device_api_name(profile_.api)) + " device " +
                      profile_.id + " is not built into hsched (it is planned from its profile)");
  }

 private:
  DeviceProfile profile_;
};

}  // namespace

std::optional<Rejection> check_profile_rules(const Graph& graph, NodeId node,
                                             const DeviceProfile& device, Precision precision) {
  for (CapabilityRule rule : kProfileRules) {
    if (auto rejection = rule(graph, node, device, precision)) return rejection;
  }
  return std::nullopt;
}

Precision Device::partition_precision(const std::vector<Precision>& nodes) const {
  const std::vector<Precision> computed = profile().precisions();
  const bool same = !nodes.empty() && std::all_of(nodes.begin(), nodes.end(),
                                                  [&](Precision p) { return p == nodes[0]; });
  const bool native = std::find(computed.begin(), computed.end(), nodes[0]) != computed.end();
  return same && native ? nodes[0] : Precision::kFp32;
}

std::unique_ptr<Device> open_profile_device(const DeviceProfile& profile) {
  return std::make_unique<ProfileDevice>(profile);
}

}  // namespace hsched
