// DFT and STFT (placeholder: registers nothing yet).
#include "backends/cpu/kernels/kernel.h"

namespace hsched::cpu {

void register_spectral_kernels(KernelRegistry&) {}

}  // namespace hsched::cpu
