// The Level Zero backend's capability: for an NPU, the device profile's answer (ops listed,
// precisions computed, static shapes, memory), then what hsched can hand the NPU's graph
// compiler: precisions the IR writer emits (fp16, fp32) and nodes it can express
// (backends/level_zero/ir ir_supports). A GPU seen through Level Zero takes no node: hsched runs
// GPUs through OpenCL. Used for present Level Zero devices; a device planned from a profile keeps
// the profile's capability (the profile describes Intel's own compiler stack).
#pragma once

#include <memory>

#include "backends/capability.h"

namespace hsched {

std::unique_ptr<Capability> make_level_zero_capability(DeviceProfile device);

}  // namespace hsched
