#include "scheduler/level_zero_capability.h"

#include <string>
#include <utility>

#include "backends/level_zero/ir/ir.h"

namespace hsched {
namespace {

// The reason code for ir_supports' answer (one line naming the node, the op and what is at
// fault): the kind of fault its words name, else the op itself.
ReasonCode reason_for(const std::string& message) {
  if (message.find("attribute") != std::string::npos) return ReasonCode::kAttributeUnsupported;
  if (message.find("element type") != std::string::npos ||
      message.find("dtype") != std::string::npos) {
    return ReasonCode::kDtypeUnsupported;
  }
  if (message.find("shape") != std::string::npos || message.find("rank") != std::string::npos) {
    return ReasonCode::kShapeUnsupported;
  }
  return ReasonCode::kOpUnsupported;
}

class LevelZeroCapability final : public Capability {
 public:
  explicit LevelZeroCapability(DeviceProfile device)
      : profile_(make_profile_capability(std::move(device))) {}

  const DeviceProfile& device() const override { return profile_->device(); }

  std::optional<Rejection> check(const Graph& graph, NodeId node,
                                 Precision precision) const override {
    const DeviceProfile& npu = device();
    if (npu.kind != DeviceKind::kNpu) {
      return Rejection{node, npu.id, precision, ReasonCode::kOpUnsupported,
                       "the Level Zero backend runs graphs on NPUs only; hsched runs GPUs "
                       "through OpenCL"};
    }
    if (auto rejection = profile_->check(graph, node, precision)) return rejection;
    if (precision != Precision::kFp16 && precision != Precision::kFp32) {
      return Rejection{node, npu.id, precision, ReasonCode::kPrecisionNotAllowed,
                       std::string("the Level Zero backend builds fp16 and fp32 graphs; ") +
                           precision_name(precision) + " needs quantized IR, not built"};
    }
    if (const Status supported = ir::ir_supports(graph, graph.node(node)); !supported.is_ok()) {
      return Rejection{node, npu.id, precision, reason_for(supported.message()),
                       "the Level Zero backend's IR writer: " + supported.message()};
    }
    return std::nullopt;
  }

 private:
  std::unique_ptr<Capability> profile_;
};

}  // namespace

std::unique_ptr<Capability> make_level_zero_capability(DeviceProfile device) {
  return std::make_unique<LevelZeroCapability>(std::move(device));
}

}  // namespace hsched
