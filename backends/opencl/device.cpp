#include "backends/opencl/device.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <sstream>

namespace hsched::opencl {
namespace {

// Estimates, stated once; calibration (issue 8) replaces them with measurements.
// FP32 FLOP per cycle per compute unit (an FMA counts 2):
//   NVIDIA SM: 128 FP32 lanes (Ampere/Hopper); Intel Xe EU: 8 lanes; AMD CU: 64 lanes;
//   a CPU-type device (PoCL: one compute unit per thread) with AVX2/AVX-512 FMA: 32.
constexpr double kNvidiaFlopPerCycle = 256;
constexpr double kIntelGpuFlopPerCycle = 16;
constexpr double kAmdFlopPerCycle = 128;
constexpr double kCpuDeviceFlopPerCycle = 32;
constexpr double kOtherFlopPerCycle = 16;
constexpr uint32_t kVendorNvidia = 0x10DE;
constexpr uint32_t kVendorIntel = 0x8086;
constexpr uint32_t kVendorAmd = 0x1002;
constexpr uint32_t kFallbackClockMhz = 1000;
// Devices sharing host DRAM: ~8 GB/s per compute unit, saturating at 100 GB/s (as the host CPU
// in scheduler/config/discover.cpp). Discrete GPUs: ~25 GB/s of device memory per compute unit (an
// H100 SXM: 132 SMs, 3.3 TB/s), over PCIe 4.0 x16 (~25 GB/s) to the host.
constexpr double kSharedBandwidthPerUnitGbps = 8;
constexpr double kSharedMinBandwidthGbps = 8;
constexpr double kSharedMaxBandwidthGbps = 100;
constexpr double kDiscreteBandwidthPerUnitGbps = 25;
constexpr double kPcieBandwidthGbps = 25;
constexpr double kPcieLatencyMs = 0.01;
constexpr double kGpuLaunchOverheadMs = 0.01;  // clEnqueueNDRangeKernel + completion event
constexpr double kCpuDeviceLaunchOverheadMs = 0.02;
// A program built from source on a fresh machine (PoCL: seconds); a cached binary is far less.
constexpr double kCompileMsPerPartition = 1000;
constexpr double kConvLinearEfficiency = 0.5;
constexpr double kDefaultEfficiency = 0.3;

template <cl_device_info kParam, typename T>
T scalar_info(const cl::Device& device) {
  T value{};
  if (clGetDeviceInfo(device(), kParam, sizeof(value), &value, nullptr) != CL_SUCCESS) return T{};
  return value;
}

bool has_extension(const std::string& extensions, const std::string& name) {
  std::istringstream words(extensions);
  std::string word;
  while (words >> word) {
    if (word == name) return true;
  }
  return false;
}

double flop_per_cycle(const DeviceInfo& info) {
  if (info.type & CL_DEVICE_TYPE_CPU) return kCpuDeviceFlopPerCycle;
  switch (info.vendor_id) {
    case kVendorNvidia:
      return kNvidiaFlopPerCycle;
    case kVendorIntel:
      return kIntelGpuFlopPerCycle;
    case kVendorAmd:
      return kAmdFlopPerCycle;
    default:
      return kOtherFlopPerCycle;
  }
}

DeviceInfo read_device(const cl::Platform& platform, const cl::Device& device) {
  DeviceInfo info;
  info.platform = platform;
  info.device = device;
  std::string platform_name;
  if (platform.getInfo(CL_PLATFORM_NAME, &platform_name) == CL_SUCCESS) {
    while (!platform_name.empty() && platform_name.back() == '\0') platform_name.pop_back();
    info.platform_name = platform_name;
  }
  info.name = device_string(device, CL_DEVICE_NAME);
  info.vendor = device_string(device, CL_DEVICE_VENDOR);
  info.vendor_id = scalar_info<CL_DEVICE_VENDOR_ID, cl_uint>(device);
  info.driver_version = device_string(device, CL_DRIVER_VERSION);
  info.device_version = device_string(device, CL_DEVICE_VERSION);
  info.opencl_c_version = device_string(device, CL_DEVICE_OPENCL_C_VERSION);
  info.type = scalar_info<CL_DEVICE_TYPE, cl_device_type>(device);
  info.compute_units = scalar_info<CL_DEVICE_MAX_COMPUTE_UNITS, cl_uint>(device);
  info.max_clock_mhz = scalar_info<CL_DEVICE_MAX_CLOCK_FREQUENCY, cl_uint>(device);
  info.global_memory_bytes =
      static_cast<int64_t>(scalar_info<CL_DEVICE_GLOBAL_MEM_SIZE, cl_ulong>(device));
  info.local_memory_bytes =
      static_cast<int64_t>(scalar_info<CL_DEVICE_LOCAL_MEM_SIZE, cl_ulong>(device));
  // Deprecated in OpenCL 2.0 but still answered by every runtime we target; the only portable
  // way to tell an integrated device (zero-copy buffers) from a discrete one.
  info.host_unified_memory = scalar_info<CL_DEVICE_HOST_UNIFIED_MEMORY, cl_bool>(device) != 0;
  info.extensions = device_string(device, CL_DEVICE_EXTENSIONS);
  info.fp16 = has_extension(info.extensions, "cl_khr_fp16");
  info.integer_dot_product = has_extension(info.extensions, "cl_khr_integer_dot_product");
  return info;
}

}  // namespace

std::string device_string(const cl::Device& device, cl_device_info param) {
  std::string value;
  if (device.getInfo(param, &value) != CL_SUCCESS) return {};
  while (!value.empty() && value.back() == '\0') value.pop_back();
  return value;
}

std::vector<DeviceInfo> enumerate_devices() {
  std::vector<DeviceInfo> devices;
  std::vector<cl::Platform> platforms;
  // No ICD loader configuration or no platform: CL_PLATFORM_NOT_FOUND_KHR, nothing to list.
  if (cl::Platform::get(&platforms) != CL_SUCCESS) return devices;
  for (size_t p = 0; p < platforms.size(); ++p) {
    std::vector<cl::Device> platform_devices;
    if (platforms[p].getDevices(CL_DEVICE_TYPE_ALL, &platform_devices) != CL_SUCCESS) continue;
    for (size_t d = 0; d < platform_devices.size(); ++d) {
      DeviceInfo info = read_device(platforms[p], platform_devices[d]);
      info.platform_index = static_cast<int>(p);
      info.device_index = static_cast<int>(d);
      devices.push_back(std::move(info));
    }
  }
  return devices;
}

namespace {

bool has_extension(const DeviceInfo& info, const std::string& name) {
  return (" " + info.extensions + " ").find(" " + name + " ") != std::string::npos;
}

// The PCI address (cl_khr_pci_bus_info) as lspci prints it, or "".
std::string pci_address(const DeviceInfo& info) {
  cl_device_pci_bus_info_khr bus{};
  if (!has_extension(info, "cl_khr_pci_bus_info") ||
      clGetDeviceInfo(info.device(), CL_DEVICE_PCI_BUS_INFO_KHR, sizeof(bus), &bus, nullptr) !=
          CL_SUCCESS) {
    return "";
  }
  char text[32];
  std::snprintf(text, sizeof(text), "%04x:%02x:%02x.%x", bus.pci_domain, bus.pci_bus,
                bus.pci_device, bus.pci_function);
  return text;
}

// The device UUID (cl_khr_device_uuid) as 32 lower-case hex digits, or "" (none, or all zero).
std::string uuid(const DeviceInfo& info) {
  std::array<uint8_t, CL_UUID_SIZE_KHR> bytes{};
  if (!has_extension(info, "cl_khr_device_uuid") ||
      clGetDeviceInfo(info.device(), CL_DEVICE_UUID_KHR, bytes.size(), bytes.data(), nullptr) !=
          CL_SUCCESS ||
      bytes == decltype(bytes){}) {
    return "";
  }
  std::string text;
  for (uint8_t byte : bytes) {
    char digits[3];
    std::snprintf(digits, sizeof(digits), "%02x", byte);
    text += digits;
  }
  return text;
}

}  // namespace

DeviceProfile device_profile(const DeviceInfo& info) {
  DeviceProfile profile;
  profile.id = kIdFamily;
  profile.name = info.name + " (" + info.platform_name + ", OpenCL)";
  profile.kind = (info.type & CL_DEVICE_TYPE_GPU) ? DeviceKind::kGpu : DeviceKind::kCpu;
  profile.api = DeviceApi::kOpenCl;
  profile.present = true;
  profile.locator = locator(info);
  profile.pci_address = pci_address(info);
  profile.uuid = uuid(info);
  const uint32_t clock_mhz = info.max_clock_mhz > 0 ? info.max_clock_mhz : kFallbackClockMhz;
  const uint32_t units = std::max<uint32_t>(1, info.compute_units);
  // An estimate, not a measurement: units x clock x the vendor's FLOP per cycle per unit.
  const double fp32 = units * (clock_mhz / 1000.0) * flop_per_cycle(info);
  profile.peak_gflops[Precision::kFp32] = fp32;
  // fp16 on every device: the kernels store fp16 (vload_half/vstore_half) and compute in fp32,
  // so it runs at the fp32 rate on half the bytes, cl_khr_fp16 or not.
  profile.peak_gflops[Precision::kFp16] = fp32;
  profile.efficiency[OpClass::kConvLinear] = kConvLinearEfficiency;
  profile.default_efficiency = kDefaultEfficiency;
  profile.zero_copy = info.host_unified_memory;
  if (info.host_unified_memory) {
    profile.memory_bandwidth_gbps = std::clamp(units * kSharedBandwidthPerUnitGbps,
                                               kSharedMinBandwidthGbps, kSharedMaxBandwidthGbps);
  } else {
    profile.memory_bandwidth_gbps = units * kDiscreteBandwidthPerUnitGbps;
    profile.transfer_bandwidth_gbps = kPcieBandwidthGbps;
    profile.transfer_latency_ms = kPcieLatencyMs;
  }
  profile.launch_overhead_ms =
      profile.kind == DeviceKind::kGpu ? kGpuLaunchOverheadMs : kCpuDeviceLaunchOverheadMs;
  profile.memory_bytes = info.global_memory_bytes;
  profile.compile_ms_per_partition = kCompileMsPerPartition;
  profile.ops = supported_ops();
  return profile;
}

const std::vector<std::string>& supported_ops() {
  static const std::vector<std::string> kOps = {
      // conv/linear and pooling
      "Conv", "ConvTranspose", "Gemm", "MatMul", "MaxPool", "AveragePool", "GlobalAveragePool",
      "GlobalMaxPool",
      // elementwise and activations
      "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "PRelu", "Mod", "Sqrt", "Exp", "Log", "Neg",
      "Abs", "Reciprocal", "Erf", "Relu", "LeakyRelu", "Clip", "Sigmoid", "HardSigmoid",
      "HardSwish", "Tanh", "Gelu", "IsNaN", "Where", "Cast", "CastLike", "Sin", "Cos", "Tan",
      "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Floor", "Ceil", "Round",
      "Sign", "Softplus", "Softsign", "Elu", "Selu", "ThresholdedRelu", "Shrink", "IsInf", "Sum",
      "Mean", "BitShift",
      // int8 (QDQ and QOperator models): quantized data held as its integer values
      "QuantizeLinear", "DequantizeLinear", "MatMulInteger", "ConvInteger", "QLinearMatMul",
      "QLinearConv", "DynamicQuantizeLinear",
      // comparisons and logic (bools held as 1 and 0)
      "Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "And", "Or", "Xor", "Not",
      // normalization
      "Softmax", "LogSoftmax", "Hardmax", "LayerNormalization", "InstanceNormalization",
      "BatchNormalization",
      // reductions
      "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
      "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp", "ArgMax", "ArgMin",
      // data movement and views
      "Resize", "Upsample", "Concat", "Split", "Gather", "Expand", "Transpose", "Identity",
      "Reshape", "Flatten", "Squeeze", "Unsqueeze", "DepthToSpace", "SpaceToDepth", "Slice",
      "Trilu", "Dropout", "Pad", "Tile", "ReverseSequence",
      // by indices on the device
      "GatherElements", "ScatterElements", "Scatter", "GatherND", "ScatterND", "TopK", "OneHot",
      // generators and the rest
      "ConstantOfShape", "Range", "EyeLike", "LRN", "GridSample", "DFT", "STFT", "Det"};
  return kOps;
}

std::string locator(const DeviceInfo& info) {
  return "opencl:" + std::to_string(info.platform_index) + ":" + std::to_string(info.device_index);
}

std::optional<DeviceInfo> find_device(const std::string& locator_text) {
  for (DeviceInfo& info : enumerate_devices()) {
    if (locator(info) == locator_text) return std::move(info);
  }
  return std::nullopt;
}

std::vector<DeviceProfile> discover_devices() {
  std::vector<DeviceProfile> profiles;
  for (const DeviceInfo& info : enumerate_devices()) profiles.push_back(device_profile(info));
  return profiles;
}

}  // namespace hsched::opencl
