// The OpenCL backend behind backends/backend.h: every device of every OpenCL platform, its
// capability (the profile's rules, then check_node: what the kernels take), its cost hints
// (kernels per node, the FLOPs its Conv tiles execute, a GPU's fill), fp16 storage for a
// partition whose every node asks fp16, and ClProgram as the Program (one DeviceRuntime per
// device, opened on its first compile, with its on-disk program cache).
#pragma once

#include <memory>

#include "backends/backend.h"

namespace hsched::opencl {

std::unique_ptr<Backend> make_backend();

}  // namespace hsched::opencl
