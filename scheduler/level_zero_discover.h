// Level Zero devices as the planner sees them, and the match between a GPU seen through Level
// Zero and the same GPU seen through OpenCL.
//
// NPUs: an NPU 3720 (Meteor Lake) gets the figures and op list of the shipped target profile
// (configs/targets/core-ultra-7-155h.yaml, device npu0) with its own name and locator; any other
// NPU the conservative figures of level_zero::device_profile.
// GPUs: hsched runs GPUs through OpenCL. A Level Zero GPU that matches an OpenCL device (same PCI
// address or UUID) is not listed again: `hsched devices` shows it once, the OpenCL entry with the
// Level Zero view beside it. An unmatched one is listed (api level_zero), and its capability
// rejects every node (the Level Zero backend runs NPU graphs only).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "backends/level_zero/device.h"
#include "hsched/device.h"

namespace hsched::sched {

// The Discoverer (discover.h) for Level Zero. Empty without a driver.
std::vector<DeviceProfile> discover_level_zero();

// The profile of `info`: from `shipped_npu` (the shipped profile's npu0, when it could be read)
// for an NPU 3720, else level_zero::device_profile(info).
DeviceProfile level_zero_profile(const level_zero::DeviceInfo& info,
                                 const std::optional<DeviceProfile>& shipped_npu);
// npu0 of the shipped target core-ultra-7-155h; nullopt when the file cannot be read.
std::optional<DeviceProfile> shipped_npu_3720_profile();

// What identifies an OpenCL device across APIs (cl_khr_pci_bus_info, cl_khr_device_uuid).
struct OpenClIdentity {
  std::optional<level_zero::PciAddress> pci;
  std::optional<level_zero::DeviceUuid> uuid;
};

// How `ocl` and `ze` were found to be one device ("pci 0000:03:00.0", "uuid 8680...") or
// nullopt. PCI address first (both APIs report the same bus:device.function); else UUID (Intel's
// OpenCL and Level Zero runtimes report the same 16 bytes).
std::optional<std::string> same_device(const OpenClIdentity& ocl, const level_zero::DeviceInfo& ze);

// A Level Zero device that is also an OpenCL device of this machine.
struct CrossApiView {
  std::string opencl_locator;  // "opencl:P:D"
  std::string level_zero_locator;
  std::string level_zero_name;
  std::string matched_by;  // same_device's answer
};
// Every match between this machine's OpenCL and Level Zero GPUs (each device matched once).
// Verified only with the unit test's synthetic identities: no machine of ours has a GPU seen
// through both APIs.
std::vector<CrossApiView> cross_api_views();

}  // namespace hsched::sched
