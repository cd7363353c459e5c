// The Level Zero backend behind backends/backend.h: NPUs through the graph extension (a
// partition serialized as OpenVINO IR, built by the driver's compiler or loaded from the native
// cache). Its capability for a present NPU: the profile's rules, the precisions the IR writer
// emits (fp16, fp32), and the nodes it can express (ir/ir.h ir_refusal). A GPU seen through
// Level Zero takes no node (hsched runs GPUs through OpenCL); a device planned from a profile
// keeps the profile's rules (the profile describes Intel's own compiler stack).
//
// NPUs: an NPU 3720 (Meteor Lake) gets the profile BackendOptions::npu_3720_profile gives (the
// shipped target file's npu0) with its own name and locator; any other NPU the conservative
// figures of device_profile (device.h).
#pragma once

#include <functional>
#include <memory>
#include <optional>

#include "backends/backend.h"
#include "backends/level_zero/device.h"

namespace hsched::level_zero {

// The profile of `info`: `shipped_npu` (when given) for an NPU 3720, else device_profile(info).
DeviceProfile npu_profile(const DeviceInfo& info, const std::optional<DeviceProfile>& shipped_npu);

std::unique_ptr<Backend> make_backend(
    std::function<std::optional<DeviceProfile>()> npu_3720_profile);

}  // namespace hsched::level_zero
