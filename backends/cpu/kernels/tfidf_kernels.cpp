// TfIdfVectorizer (placeholder: registers nothing yet).
#include "backends/cpu/kernels/kernel.h"

namespace hsched::cpu {

void register_text_kernels(KernelRegistry&) {}

}  // namespace hsched::cpu
