// Level Zero discovery: every device of every driver the loader (libze_loader) finds, with the
// facts the planner and the backend need. No driver installed is the common case: the loader
// answers zeInit with ZE_RESULT_ERROR_UNINITIALIZED (or finds no driver), and discovery then
// finds nothing, quietly; it never fails.
//
// The loader is initialized once per process (zeInit(0): GPUs and NPUs). Which drivers it loads
// is decided then: ZE_ENABLE_ALT_DRIVERS (a path to a driver library, e.g. hsched's simulated NPU)
// must be set before the first call of anything here.
//
// Threading: every function may be called from several threads.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <level_zero/ze_api.h>

#include "hsched/device.h"
#include "hsched/status.h"

namespace hsched::level_zero {

// Graphs one context of Intel's NPU driver holds at once: each compiled graph takes a command
// queue of its own and the driver has 255 per context; the 256th graph fails, with
// ZE_RESULT_ERROR_UNINITIALIZED. hsched refuses it before the driver is asked ("device_limit").
inline constexpr int64_t kMaxGraphsPerContext = 255;

// Whether the loader initialized and has at least one driver. The first call runs zeInit(0);
// later calls return its answer.
bool loader_ready();

// For `hsched demo` on a machine without an NPU: makes the loader load `driver_path` (hsched's
// simulated NPU driver) through ZE_ENABLE_ALT_DRIVERS, when all of these hold: the loader has not
// been initialized yet in this process, ZE_ENABLE_ALT_DRIVERS is unset, `driver_path` is a file,
// and this machine shows no NPU (no /dev/accel/accel* node: Linux's NPU driver creates one per
// NPU). Returns whether it did. The loader then loads that driver only, in this process.
bool use_simulated_driver_if_no_npu(const std::string& driver_path);

// True once the process has begun to exit (an atexit handler registered after zeInit): a build
// abandoned past its deadline must then touch no Level Zero object (the loader and its drivers
// are being torn down) and leaks what it holds instead.
bool process_exiting();

// "ZE_RESULT_ERROR_DEVICE_LOST", ... ("ze_result 0x..." for values this build does not know).
std::string result_name(ze_result_t result);

// The Status for a failed Level Zero call `call` ("zeMemAllocHost") on `device` (its name):
//   device lost                   -> Unavailable       "device_lost: CALL on DEVICE: ..."
//   out of device or host memory  -> ResourceExhausted "memory_exceeded: CALL on DEVICE: ..."
//   anything else                 -> Internal          "level_zero: CALL on DEVICE failed: ..."
Status status_from(ze_result_t result, const std::string& call, const std::string& device);

struct PciAddress {
  uint32_t domain = 0;
  uint32_t bus = 0;
  uint32_t device = 0;
  uint32_t function = 0;
  std::string text() const;  // "0000:03:00.0", as lspci prints it
  bool operator==(const PciAddress&) const = default;
};

using DeviceUuid = std::array<uint8_t, ZE_MAX_DEVICE_UUID_SIZE>;
std::string uuid_text(const DeviceUuid& uuid);  // 32 lower-case hex digits

// Facts one device reports (units: bytes, MHz). Handles are owned by the loader and stay valid
// for the life of the process.
struct DeviceInfo {
  ze_driver_handle_t driver = nullptr;
  ze_device_handle_t device = nullptr;
  int driver_index = 0;  // position in zeDriverGet's list
  int device_index = 0;  // position in the driver's zeDeviceGet list
  ze_device_type_t type = ZE_DEVICE_TYPE_GPU;
  std::string name;
  uint32_t vendor_id = 0;  // PCI ids: vendor 0x8086 Intel
  uint32_t device_id = 0;
  bool integrated = false;  // ZE_DEVICE_PROPERTY_FLAG_INTEGRATED: shares host memory
  uint32_t slices = 0;
  uint32_t subslices_per_slice = 0;
  uint32_t eus_per_subslice = 0;
  uint32_t threads_per_eu = 0;
  uint32_t simd_width = 0;
  uint32_t core_clock_mhz = 0;
  int64_t memory_bytes = 0;       // sum of zeDeviceGetMemoryProperties' totalSize
  int64_t max_alloc_bytes = 0;    // maxMemAllocSize
  bool fp16 = false;              // ZE_DEVICE_MODULE_FLAG_FP16
  bool dp4a = false;              // ZE_DEVICE_MODULE_FLAG_DP4A
  std::optional<PciAddress> pci;  // when the driver implements ZE_extension_pci_properties
  DeviceUuid uuid{};
  uint32_t driver_version = 0;
  std::string driver_uuid;       // hex
  uint32_t graph_extension = 0;  // ZE_extension_graph version the driver lists; 0: none

  uint32_t eu_count() const { return slices * subslices_per_slice * eus_per_subslice; }
  bool is_npu() const { return type == ZE_DEVICE_TYPE_VPU; }
};

// Every device of every driver, in driver then device order (stable across runs on one machine).
// Empty without a driver. Sub-devices are not listed (their root device is).
std::vector<DeviceInfo> enumerate_devices();

// Where `info` sits ("level_zero:DRIVER:DEVICE", indices of enumerate_devices' order): the
// DeviceProfile's locator, by which the executor finds the device again.
std::string locator(const DeviceInfo& info);
// The enumerated device at `locator`; nullopt when there is none.
std::optional<DeviceInfo> find_device(const std::string& locator);

// Meteor Lake's NPU 3720 (device id 0x7D1D, or "3720" in an Intel NPU's name): the device the
// shipped target profile core-ultra-7-155h describes as npu0.
bool is_npu_3720(const DeviceInfo& info);

// The op types NPU graph compilers take (conv/linear, pooling, normalization, common elementwise
// ops and the reshapes between them), for NPUs without a shipped profile. Whether hsched can
// serialize a node is decided per node by the IR writer (ir_supports).
const std::vector<std::string>& npu_ops();

// The planner's view of `info` with conservative figures (for NPUs without a shipped profile and
// for GPUs): kind npu for a VPU, gpu for a GPU; api level_zero; present; locator set; name
// "<device name> (Level Zero)". A GPU gets no ops: hsched runs GPUs through OpenCL, and the
// Level Zero backend runs graphs on NPUs only.
DeviceProfile device_profile(const DeviceInfo& info);

}  // namespace hsched::level_zero
