// The CPU backend's capability: what the real CPU kernel library runs (backends/cpu), not what a
// profile claims. The CPU is every plan's last resort and the reference, so its answers must be
// the truth of this build.
#pragma once

#include <memory>

#include "backends/capability.h"
#include "backends/cpu/kernel.h"

namespace hsched {

// Answers for `device` (a CPU of any target, present or planned: the backend is the same code):
// ops of the default domain that `registry` has a kernel for (and the profile lists), computed in
// fp32 only (the CPU kernels have no bf16/int8 paths yet) and only if the profile gives an fp32
// peak. Every other answer is a Rejection naming the op or precision.
std::unique_ptr<Capability> make_cpu_capability(DeviceProfile device, cpu::KernelRegistry registry);

// The same against the CPU kernel library of this build (cpu::make_cpu_kernel_registry()).
std::unique_ptr<Capability> make_cpu_capability(DeviceProfile device);

}  // namespace hsched
