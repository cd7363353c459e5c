#include "backends/cpu/kernels/kernel.h"

#include "backends/cpu/kernels/norm_fusion.h"

namespace hsched::cpu {

void KernelRegistry::add(const std::string& op_type, KernelFactory factory) {
  factories_[op_type] = std::move(factory);
}

Result<std::unique_ptr<Kernel>> KernelRegistry::create(const KernelSpec& spec) const {
  auto it = factories_.find(spec.node.op_type);
  if (it == factories_.end() || !spec.node.domain.empty()) {
    return unimplemented(node_context(spec.node) + ": the CPU backend has no kernel for op '" +
                         spec.node.op_type + "'" +
                         (spec.node.domain.empty() ? "" : " of domain '" + spec.node.domain + "'"));
  }
  return it->second(spec);
}

std::vector<std::string> KernelRegistry::op_types() const {
  std::vector<std::string> ops;
  for (const auto& [op, factory] : factories_) ops.push_back(op);
  return ops;
}

std::string node_context(const Node& node) {
  return "node '" + node.name + "' (" + node.op_type + ")";
}

Status unsupported(const KernelSpec& spec, const std::string& detail) {
  return unimplemented(node_context(spec.node) + ": " + detail);
}

Status invalid_node(const KernelSpec& spec, const std::string& detail) {
  return invalid_argument(node_context(spec.node) + ": " + detail);
}

KernelRegistry make_cpu_kernel_registry() {
  KernelRegistry registry;
  register_elementwise_kernels(registry);
  register_reduction_kernels(registry);
  register_layout_kernels(registry);
  register_dnnl_kernels(registry);
  register_rnn_kernels(registry);
  register_math_kernels(registry);
  register_index_kernels(registry);
  register_sample_kernels(registry);
  register_einsum_kernels(registry);
  register_quant_kernels(registry);
  register_text_kernels(registry);
  register_spectral_kernels(registry);
  register_group_norm_kernel(registry);  // built by the program's fusion pass only
  register_fused_norm_kernels(registry);  // likewise
  return registry;
}

}  // namespace hsched::cpu
