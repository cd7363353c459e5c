#include "scheduler/cpu_capability.h"

#include <string>
#include <utility>

#include "scheduler/capability_rules.h"

namespace hsched {
namespace {

// The precisions the CPU kernel library computes today.
constexpr Precision kCpuPrecision = Precision::kFp32;

class CpuCapability final : public Capability {
 public:
  CpuCapability(DeviceProfile device, cpu::KernelRegistry registry)
      : device_(std::move(device)), registry_(std::move(registry)) {}

  const DeviceProfile& device() const override { return device_; }

  std::optional<Rejection> check(const Graph& graph, NodeId node,
                                 Precision precision) const override {
    const Node& n = graph.node(node);
    if (auto rejection = sched::check_default_domain(graph, node, device_, precision)) {
      return rejection;
    }
    if (!registry_.supports(n.op_type)) {
      // Worded as the CPU program words it when compiling, so both read the same.
      return Rejection{node, device_.id, precision, ReasonCode::kOpUnsupported,
                       "the CPU backend has no kernel for op '" + n.op_type + "'"};
    }
    if (auto rejection = sched::check_op_listed(graph, node, device_, precision)) {
      return rejection;
    }
    if (precision != kCpuPrecision) {
      return Rejection{node, device_.id, precision, ReasonCode::kPrecisionNotAllowed,
                       std::string("the CPU backend computes fp32 only (no ") +
                           precision_name(precision) + " kernels yet)"};
    }
    return sched::check_precision_listed(graph, node, device_, precision);
  }

 private:
  DeviceProfile device_;
  cpu::KernelRegistry registry_;
};

}  // namespace

std::unique_ptr<Capability> make_cpu_capability(DeviceProfile device,
                                                cpu::KernelRegistry registry) {
  return std::make_unique<CpuCapability>(std::move(device), std::move(registry));
}

std::unique_ptr<Capability> make_cpu_capability(DeviceProfile device) {
  return make_cpu_capability(std::move(device), cpu::make_cpu_kernel_registry());
}

}  // namespace hsched
