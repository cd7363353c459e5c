// Discovery: the devices of this machine as a Target ("this-machine"), from each backend of a
// registry in turn (backends/registry.h); adding a backend is adding it to the registry, not an
// #ifdef here. A device two APIs see (same PCI address or UUID) is listed once, as the first
// backend found it (the CPU, OpenCL, then Level Zero: OpenCL runs GPUs), with the other view in
// DeviceProfile::views.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "backends/registry.h"
#include "hsched/config.h"
#include "hsched/device.h"

namespace hsched::config {

// The backends of this build (make_backends), the NPU 3720's profile read from the shipped
// target file. Made once; immutable.
const BackendRegistry& backends();

// Returns the devices one API finds (possibly none). Ids are assigned by discover_target
// (kind name + index: "cpu0", "gpu0", "gpu1"), so discoverers need not know of each other; a
// discoverer that wants its own id family sets id to "<family>*" ("ocl*": "ocl0", "ocl1"...).
// Contract: never throws, never fails the discovery of others (a missing driver = no devices).
using Discoverer = std::function<std::vector<DeviceProfile>()>;

// The discoverers of backends(), CPU first (it is the host); with `only`, those of that API alone.
std::vector<Discoverer> default_discoverers(std::optional<DeviceApi> only = std::nullopt);

// npu0 of the shipped target core-ultra-7-155h; nullopt when the file cannot be read.
std::optional<DeviceProfile> shipped_npu_3720_profile();

// How `a` and `b` (of one kind) were found to be one device ("pci 0000:03:00.0", "uuid 8680...")
// or nullopt: the PCI address first (APIs report the same bus:device.function), else the UUID
// (Intel's OpenCL and Level Zero runtimes report the same 16 bytes).
std::optional<std::string> same_device(const DeviceProfile& a, const DeviceProfile& b);

// Runs the discoverers in order and numbers the devices per kind (or per requested family),
// each seen once (same_device). Target name "this-machine" (kThisMachineTarget), source
// "discovered"; every device has present = true.
Target discover_target(const std::vector<Discoverer>& discoverers);

}  // namespace hsched::config
