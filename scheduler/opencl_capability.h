// The OpenCL backend's capability: the device profile's answer (ops listed, precisions computed,
// memory), then the backend's own rules (backends/opencl/node_ops.h check_node: dtypes,
// attributes, shapes the kernels take). Used for every OpenCL device, present or planned from a
// profile, since the backend code that would run there is the same.
#pragma once

#include <memory>

#include "backends/capability.h"

namespace hsched {

std::unique_ptr<Capability> make_opencl_capability(DeviceProfile device);

}  // namespace hsched
