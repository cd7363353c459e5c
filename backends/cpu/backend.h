// The CPU backend behind backends/backend.h: the host CPU (device.h), its
// capability (what this build's kernel library runs, in fp32: the truth of this build, since the
// CPU is every plan's last resort and the reference), its cost hints (nodes folded, aliased or
// fused at compile time), and CpuProgram as the Program.
#pragma once

#include <memory>

#include "backends/backend.h"

namespace hsched::cpu {

std::unique_ptr<Backend> make_backend();

}  // namespace hsched::cpu
