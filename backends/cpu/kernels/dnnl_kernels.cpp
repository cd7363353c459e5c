#include "backends/cpu/kernels/kernel.h"

namespace hsched::cpu {

void register_dnnl_conv_kernels(KernelRegistry& registry);
void register_dnnl_matmul_kernels(KernelRegistry& registry);

void register_dnnl_kernels(KernelRegistry& registry) {
  register_dnnl_conv_kernels(registry);
  register_dnnl_matmul_kernels(registry);
}

}  // namespace hsched::cpu
