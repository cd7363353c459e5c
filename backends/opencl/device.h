// OpenCL discovery: every device of every platform, with the facts the planner and the backend
// need, and the DeviceProfile the scheduler sees for it. Without an OpenCL ICD (no platform)
// discovery finds nothing; it never fails.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backends/opencl/opencl.h"
#include "hsched/device.h"

namespace hsched::opencl {

// Facts one device reports through clGetDeviceInfo (units: bytes, MHz).
struct DeviceInfo {
  cl::Platform platform;
  cl::Device device;
  int platform_index = 0;  // position in clGetPlatformIDs' list
  int device_index = 0;    // position in the platform's clGetDeviceIDs(ALL) list
  std::string platform_name;
  std::string name;
  std::string vendor;
  uint32_t vendor_id = 0;  // PCI vendor id: 0x10DE NVIDIA, 0x8086 Intel, 0x1002 AMD
  std::string driver_version;
  std::string device_version;    // "OpenCL 3.0 PoCL ..."
  std::string opencl_c_version;  // "OpenCL C 1.2 ..."
  cl_device_type type = 0;       // CL_DEVICE_TYPE_{CPU,GPU,ACCELERATOR,...} bits
  uint32_t compute_units = 0;
  uint32_t max_clock_mhz = 0;
  int64_t global_memory_bytes = 0;
  int64_t local_memory_bytes = 0;
  bool host_unified_memory = false;  // CL_DEVICE_HOST_UNIFIED_MEMORY
  bool fp16 = false;                 // cl_khr_fp16
  bool integer_dot_product = false;  // cl_khr_integer_dot_product
  std::string extensions;            // space-separated, as reported
};

// A string query of `device` ("" when it fails; trailing NULs removed).
std::string device_string(const cl::Device& device, cl_device_info param);

// Every device of every platform, in platform then device order (stable across runs on one
// machine). Empty when there is no platform or a query fails for a whole platform.
std::vector<DeviceInfo> enumerate_devices();

// Id family of OpenCL devices: discover_target (scheduler/config/discover.h) numbers ids ending in '*'
// within their family, so OpenCL devices are "ocl0", "ocl1"... whatever their kind.
inline constexpr const char* kIdFamily = "ocl*";

// The planner's view of `info`. id kIdFamily; kind as the device reports it (a CPU-type
// device such as PoCL's stays kind cpu, a GPU kind gpu); api opencl; present. Peaks and bandwidth
// are estimates from compute units and clock (see device.cpp) until calibration (issue 8).
DeviceProfile device_profile(const DeviceInfo& info);

// Where `info` sits ("opencl:PLATFORM:DEVICE", indices of enumerate_devices' order): the
// DeviceProfile's locator, by which the executor finds the device again.
std::string locator(const DeviceInfo& info);
// The enumerated device at `locator`; nullopt when there is none (the machine changed).
std::optional<DeviceInfo> find_device(const std::string& locator);

// The op types the OpenCL backend is planned to run. Kernels land with issue 5's kernel work;
// until an op's kernel exists the backend rejects it at compile time (the scheduler re-plans it).
const std::vector<std::string>& supported_ops();

// The Discoverer (scheduler/config/discover.h) for OpenCL: device_profile() of every enumerated device.
std::vector<DeviceProfile> discover_devices();

}  // namespace hsched::opencl
