#include "backends/level_zero/device.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>

#include "backends/level_zero/ze_graph_ext.h"
#include "core/install_paths.h"

namespace hsched::level_zero {
namespace {

// Conservative figures for devices without a shipped profile, stated once; calibration (issue 8)
// replaces them with measurements.
//   An Intel Xe EU: 8 FP32 lanes with FMA = 16 FLOP per cycle (as the OpenCL backend's estimate);
//   fp16 at twice that. An NPU of unknown make: 1 TFLOP/s fp16, 2 TOP/s int8 (a fifth of the
//   NPU 3720's), shared-DRAM bandwidth 50 GB/s, graph compiles of seconds.
constexpr double kGpuFlopPerEuCycle = 16;
constexpr uint32_t kFallbackClockMhz = 1000;
constexpr double kSharedBandwidthGbps = 50;
constexpr double kDiscreteBandwidthGbps = 200;
constexpr double kPcieBandwidthGbps = 25;
constexpr double kPcieLatencyMs = 0.01;
constexpr double kNpuFp16Gflops = 1000;
constexpr double kNpuInt8Gops = 2000;
constexpr double kNpuLaunchOverheadMs = 0.002;  // nodes run inside one compiled graph
constexpr double kNpuTransferLatencyMs = 0.05;  // submission and fence wait per boundary
constexpr double kNpuCompileMsPerNode = 10;
constexpr double kNpuCompileMsPerPartition = 500;
constexpr double kConvLinearEfficiency = 0.5;
constexpr double kDefaultEfficiency = 0.2;
constexpr uint32_t kVendorIntel = 0x8086;
constexpr uint32_t kNpu3720DeviceId = 0x7D1D;

std::once_flag g_init_once;
std::atomic<bool> g_init_started{false};
bool g_ready = false;
std::atomic<bool> g_exiting{false};

void mark_exiting() { g_exiting = true; }

void initialize() {
  g_init_started = true;
  // zeInit(0): every device type. Without a driver the loader answers
  // ZE_RESULT_ERROR_UNINITIALIZED; that is "no devices", not an error to report.
  if (zeInit(0) != ZE_RESULT_SUCCESS) return;
  uint32_t count = 0;
  if (zeDriverGet(&count, nullptr) != ZE_RESULT_SUCCESS || count == 0) return;
  g_ready = true;
  // Registered after the loader's own static objects exist, so it runs before they are torn down.
  std::atexit(mark_exiting);
}

std::string hex(const uint8_t* bytes, size_t size) {
  std::string text;
  char digits[3];
  for (size_t i = 0; i < size; ++i) {
    std::snprintf(digits, sizeof(digits), "%02x", bytes[i]);
    text += digits;
  }
  return text;
}

// Extensions the driver lists: name -> version.
std::vector<ze_driver_extension_properties_t> driver_extensions(ze_driver_handle_t driver) {
  uint32_t count = 0;
  if (zeDriverGetExtensionProperties(driver, &count, nullptr) != ZE_RESULT_SUCCESS) return {};
  std::vector<ze_driver_extension_properties_t> extensions(count);
  if (count > 0 &&
      zeDriverGetExtensionProperties(driver, &count, extensions.data()) != ZE_RESULT_SUCCESS) {
    return {};
  }
  extensions.resize(count);
  return extensions;
}

uint32_t extension_version(const std::vector<ze_driver_extension_properties_t>& extensions,
                           const char* name) {
  for (const auto& extension : extensions) {
    if (std::strncmp(extension.name, name, ZE_MAX_EXTENSION_NAME) == 0) {
      return std::max<uint32_t>(1, extension.version);
    }
  }
  return 0;
}

// The device's facts; nullopt when its basic properties cannot be read.
std::optional<DeviceInfo> read_device(
    ze_driver_handle_t driver, ze_device_handle_t device,
    const std::vector<ze_driver_extension_properties_t>& extensions) {
  DeviceInfo info;
  info.driver = driver;
  info.device = device;
  ze_device_properties_t properties{};
  properties.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
  if (zeDeviceGetProperties(device, &properties) != ZE_RESULT_SUCCESS) return std::nullopt;
  info.type = properties.type;
  info.name.assign(properties.name, strnlen(properties.name, sizeof(properties.name)));
  info.vendor_id = properties.vendorId;
  info.device_id = properties.deviceId;
  info.integrated = (properties.flags & ZE_DEVICE_PROPERTY_FLAG_INTEGRATED) != 0;
  info.slices = properties.numSlices;
  info.subslices_per_slice = properties.numSubslicesPerSlice;
  info.eus_per_subslice = properties.numEUsPerSubslice;
  info.threads_per_eu = properties.numThreadsPerEU;
  info.simd_width = properties.physicalEUSimdWidth;
  info.core_clock_mhz = properties.coreClockRate;
  info.max_alloc_bytes = static_cast<int64_t>(properties.maxMemAllocSize);
  std::copy(std::begin(properties.uuid.id), std::end(properties.uuid.id), info.uuid.begin());

  uint32_t memory_count = 0;
  if (zeDeviceGetMemoryProperties(device, &memory_count, nullptr) == ZE_RESULT_SUCCESS &&
      memory_count > 0) {
    std::vector<ze_device_memory_properties_t> memories(memory_count);
    for (auto& memory : memories) memory.stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES;
    if (zeDeviceGetMemoryProperties(device, &memory_count, memories.data()) == ZE_RESULT_SUCCESS) {
      for (uint32_t m = 0; m < memory_count && m < memories.size(); ++m) {
        info.memory_bytes += static_cast<int64_t>(memories[m].totalSize);
      }
    }
  }
  ze_device_module_properties_t module{};
  module.stype = ZE_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES;
  if (zeDeviceGetModuleProperties(device, &module) == ZE_RESULT_SUCCESS) {
    info.fp16 = (module.flags & ZE_DEVICE_MODULE_FLAG_FP16) != 0;
    info.dp4a = (module.flags & ZE_DEVICE_MODULE_FLAG_DP4A) != 0;
  }
  if (extension_version(extensions, ZE_PCI_PROPERTIES_EXT_NAME) != 0) {
    ze_pci_ext_properties_t pci{};
    pci.stype = ZE_STRUCTURE_TYPE_PCI_EXT_PROPERTIES;
    if (zeDevicePciGetPropertiesExt(device, &pci) == ZE_RESULT_SUCCESS) {
      info.pci =
          PciAddress{pci.address.domain, pci.address.bus, pci.address.device, pci.address.function};
    }
  }
  info.graph_extension = extension_version(extensions, ZE_GRAPH_EXT_NAME);
  return info;
}

}  // namespace

bool loader_ready() {
  std::call_once(g_init_once, initialize);
  return g_ready;
}

bool process_exiting() { return g_exiting.load(); }

bool use_simulated_driver_if_no_npu(const std::string& driver_path) {
  namespace fs = std::filesystem;
  const std::optional<fs::path> installed = installed_library("libze_hsched_sim.so");
  const std::string driver = installed ? installed->string() : driver_path;
  if (g_init_started.load() || driver.empty()) return false;
  const char* configured = std::getenv("ZE_ENABLE_ALT_DRIVERS");
  if (configured != nullptr && *configured != '\0') return false;
  std::error_code error;
  if (!fs::is_regular_file(driver, error)) return false;
  for (const fs::directory_entry& entry : fs::directory_iterator("/dev/accel", error)) {
    if (entry.path().filename().string().rfind("accel", 0) == 0) return false;  // an NPU is here
  }
  return ::setenv("ZE_ENABLE_ALT_DRIVERS", driver.c_str(), 1) == 0;
}

std::string result_name(ze_result_t result) {
  struct Name {
    ze_result_t result;
    const char* name;
  };
#define HSCHED_ZE_RESULT(name) \
  Name { name, #name }
  static constexpr Name kNames[] = {
      HSCHED_ZE_RESULT(ZE_RESULT_SUCCESS),
      HSCHED_ZE_RESULT(ZE_RESULT_NOT_READY),
      HSCHED_ZE_RESULT(ZE_RESULT_ERROR_DEVICE_LOST),
      HSCHED_ZE_RESULT(ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY),
      HSCHED_ZE_RESULT(ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY),
      HSCHED_ZE_RESULT(ZE_RESULT_ERROR_MODULE_BUILD_FAILURE),
      HSCHED_ZE_RESULT(ZE_RESULT_ERROR_UNINITIALIZED),
      HSCHED_ZE_RESULT(ZE_RESULT_ERROR_UNSUPPORTED_VERSION),
      HSCHED_ZE_RESULT(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE),
      HSCHED_ZE_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT),
      HSCHED_ZE_RESULT(ZE_RESULT_ERROR_INVALID_NULL_HANDLE),
      HSCHED_ZE_RESULT(ZE_RESULT_ERROR_INVALID_NULL_POINTER),
      HSCHED_ZE_RESULT(ZE_RESULT_ERROR_INVALID_SIZE),
      HSCHED_ZE_RESULT(ZE_RESULT_ERROR_INVALID_ENUMERATION),
      HSCHED_ZE_RESULT(ZE_RESULT_ERROR_INVALID_NATIVE_BINARY),
      HSCHED_ZE_RESULT(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE),
      HSCHED_ZE_RESULT(ZE_RESULT_ERROR_UNKNOWN),
  };
#undef HSCHED_ZE_RESULT
  for (const Name& entry : kNames) {
    if (entry.result == result) return entry.name;
  }
  char text[32];
  std::snprintf(text, sizeof(text), "ze_result 0x%x", static_cast<unsigned>(result));
  return text;
}

Status status_from(ze_result_t result, const std::string& call, const std::string& device) {
  const std::string where = call + " on " + device;
  switch (result) {
    case ZE_RESULT_ERROR_DEVICE_LOST:
      return Status(ErrorCode::kUnavailable, "device_lost: " + where + ": " + result_name(result));
    case ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY:
    case ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY:
      return Status(ErrorCode::kResourceExhausted,
                    "memory_exceeded: " + where + ": " + result_name(result));
    default:
      return internal_error("level_zero: " + where + " failed: " + result_name(result));
  }
}

std::string PciAddress::text() const {
  char text[32];
  std::snprintf(text, sizeof(text), "%04x:%02x:%02x.%x", domain, bus, device, function);
  return text;
}

std::string uuid_text(const DeviceUuid& uuid) { return hex(uuid.data(), uuid.size()); }

std::vector<DeviceInfo> enumerate_devices() {
  std::vector<DeviceInfo> devices;
  if (!loader_ready()) return devices;
  uint32_t driver_count = 0;
  if (zeDriverGet(&driver_count, nullptr) != ZE_RESULT_SUCCESS || driver_count == 0) {
    return devices;
  }
  std::vector<ze_driver_handle_t> drivers(driver_count);
  if (zeDriverGet(&driver_count, drivers.data()) != ZE_RESULT_SUCCESS) return devices;
  drivers.resize(driver_count);
  for (size_t d = 0; d < drivers.size(); ++d) {
    ze_driver_properties_t driver_properties{};
    driver_properties.stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES;
    if (zeDriverGetProperties(drivers[d], &driver_properties) != ZE_RESULT_SUCCESS) continue;
    const auto extensions = driver_extensions(drivers[d]);
    uint32_t device_count = 0;
    if (zeDeviceGet(drivers[d], &device_count, nullptr) != ZE_RESULT_SUCCESS) continue;
    std::vector<ze_device_handle_t> handles(device_count);
    if (device_count > 0 &&
        zeDeviceGet(drivers[d], &device_count, handles.data()) != ZE_RESULT_SUCCESS) {
      continue;
    }
    handles.resize(device_count);
    for (size_t i = 0; i < handles.size(); ++i) {
      std::optional<DeviceInfo> info = read_device(drivers[d], handles[i], extensions);
      if (!info) continue;
      info->driver_index = static_cast<int>(d);
      info->device_index = static_cast<int>(i);
      info->driver_version = driver_properties.driverVersion;
      info->driver_uuid = hex(driver_properties.uuid.id, sizeof(driver_properties.uuid.id));
      devices.push_back(std::move(*info));
    }
  }
  return devices;
}

std::string locator(const DeviceInfo& info) {
  return "level_zero:" + std::to_string(info.driver_index) + ":" +
         std::to_string(info.device_index);
}

std::optional<DeviceInfo> find_device(const std::string& locator_text) {
  for (DeviceInfo& info : enumerate_devices()) {
    if (locator(info) == locator_text) return std::move(info);
  }
  return std::nullopt;
}

bool is_npu_3720(const DeviceInfo& info) {
  if (!info.is_npu() || info.vendor_id != kVendorIntel) return false;
  return info.device_id == kNpu3720DeviceId || info.name.find("3720") != std::string::npos;
}

const std::vector<std::string>& npu_ops() {
  static const std::vector<std::string> kOps = {"Conv",
                                                "ConvTranspose",
                                                "Gemm",
                                                "MatMul",
                                                "MaxPool",
                                                "AveragePool",
                                                "GlobalAveragePool",
                                                "GlobalMaxPool",
                                                "BatchNormalization",
                                                "InstanceNormalization",
                                                "LayerNormalization",
                                                "Softmax",
                                                "Add",
                                                "Sub",
                                                "Mul",
                                                "Div",
                                                "Pow",
                                                "Sqrt",
                                                "Exp",
                                                "Erf",
                                                "Relu",
                                                "LeakyRelu",
                                                "Elu",
                                                "Sigmoid",
                                                "HardSigmoid",
                                                "HardSwish",
                                                "Tanh",
                                                "Gelu",
                                                "Clip",
                                                "Reshape",
                                                "Flatten",
                                                "Squeeze",
                                                "Unsqueeze",
                                                "Transpose",
                                                "Concat",
                                                "Split",
                                                "Identity",
                                                "QuantizeLinear",
                                                "DequantizeLinear"};
  return kOps;
}

DeviceProfile device_profile(const DeviceInfo& info) {
  DeviceProfile profile;
  profile.name = info.name + " (Level Zero)";
  profile.kind = info.is_npu() ? DeviceKind::kNpu : DeviceKind::kGpu;
  profile.api = DeviceApi::kLevelZero;
  profile.present = true;
  profile.locator = locator(info);
  if (info.pci) profile.pci_address = info.pci->text();
  if (info.uuid != DeviceUuid{}) profile.uuid = uuid_text(info.uuid);
  profile.memory_bytes = info.memory_bytes;
  profile.max_partitions = kMaxGraphsPerContext;
  profile.zero_copy = info.integrated;
  profile.default_efficiency = kDefaultEfficiency;
  profile.efficiency[OpClass::kConvLinear] = kConvLinearEfficiency;
  if (info.is_npu()) {
    profile.peak_gflops[Precision::kFp16] = kNpuFp16Gflops;
    profile.peak_gflops[Precision::kInt8] = kNpuInt8Gops;
    profile.memory_bandwidth_gbps = kSharedBandwidthGbps;
    profile.launch_overhead_ms = kNpuLaunchOverheadMs;
    profile.transfer_latency_ms = kNpuTransferLatencyMs;
    profile.compile_ms_per_node = kNpuCompileMsPerNode;
    profile.compile_ms_per_partition = kNpuCompileMsPerPartition;
    profile.ops = npu_ops();
    return profile;
  }
  const uint32_t clock_mhz = info.core_clock_mhz > 0 ? info.core_clock_mhz : kFallbackClockMhz;
  const double fp32 =
      std::max<uint32_t>(1, info.eu_count()) * (clock_mhz / 1000.0) * kGpuFlopPerEuCycle;
  profile.peak_gflops[Precision::kFp32] = fp32;
  if (info.fp16) profile.peak_gflops[Precision::kFp16] = 2 * fp32;
  if (info.integrated) {
    profile.memory_bandwidth_gbps = kSharedBandwidthGbps;
  } else {
    profile.memory_bandwidth_gbps = kDiscreteBandwidthGbps;
    profile.transfer_bandwidth_gbps = kPcieBandwidthGbps;
    profile.transfer_latency_ms = kPcieLatencyMs;
  }
  return profile;  // no ops: the Level Zero backend runs no GPU graphs (OpenCL does)
}

}  // namespace hsched::level_zero
