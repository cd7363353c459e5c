// OpenCL discovery on this machine (PoCL in CI), and that discovering it changes nothing of
// where the default policy puts work: PoCL is a CPU-type OpenCL device, not the host CPU.
#include "backends/opencl/device.h"

#include <algorithm>
#include <set>

#include <gtest/gtest.h>

#include "backends/opencl/opencl_test_util.h"
#include "graph/onnx_import.h"
#include "scheduler/planner/schedule.h"
#include "scheduler/config/discover.h"
#include "support/temp_dir.h"

namespace hsched::opencl {
namespace {

// Device-independent: the profile of made-up device facts (runs without OpenCL too).
TEST(OpenClProfileTest, DiscreteGpuProfileFromFacts) {
  DeviceInfo info;
  info.name = "Test GPU";
  info.platform_name = "Test Platform";
  info.vendor_id = 0x10DE;
  info.type = CL_DEVICE_TYPE_GPU;
  info.compute_units = 100;
  info.max_clock_mhz = 2000;
  info.global_memory_bytes = int64_t{8} << 30;
  info.fp16 = true;
  const DeviceProfile gpu = device_profile(info);
  EXPECT_EQ(gpu.kind, DeviceKind::kGpu);
  EXPECT_EQ(gpu.api, DeviceApi::kOpenCl);
  EXPECT_DOUBLE_EQ(gpu.peak_gflops.at(Precision::kFp32), 100 * 2.0 * 256);
  // fp16 is storage only (fp32 math), so at the fp32 rate whether or not cl_khr_fp16 is there.
  EXPECT_DOUBLE_EQ(gpu.peak_gflops.at(Precision::kFp16), 100 * 2.0 * 256);
  EXPECT_FALSE(gpu.zero_copy);
  EXPECT_GT(gpu.transfer_bandwidth_gbps, 0);
  EXPECT_EQ(gpu.memory_bytes, int64_t{8} << 30);

  info.type = CL_DEVICE_TYPE_CPU;  // PoCL-like: a CPU-type device sharing host memory
  info.host_unified_memory = true;
  info.fp16 = false;
  const DeviceProfile cpu = device_profile(info);
  EXPECT_EQ(cpu.kind, DeviceKind::kCpu);
  EXPECT_EQ(cpu.api, DeviceApi::kOpenCl);
  EXPECT_TRUE(cpu.zero_copy);
  EXPECT_DOUBLE_EQ(cpu.peak_gflops.at(Precision::kFp16), cpu.peak_gflops.at(Precision::kFp32));
  EXPECT_EQ(cpu.peak_gflops.count(Precision::kBf16), 0u);
}

TEST(OpenClProfileTest, OpenClDevicesAreNumberedInTheirOwnFamily) {
  auto opencl_devices = [] {
    DeviceInfo gpu_info;
    gpu_info.type = CL_DEVICE_TYPE_GPU;
    DeviceInfo cpu_info;
    cpu_info.type = CL_DEVICE_TYPE_CPU;
    return std::vector<DeviceProfile>{device_profile(cpu_info), device_profile(gpu_info)};
  };
  const Target target = config::discover_target({config::default_discoverers()[0], opencl_devices});
  ASSERT_EQ(target.devices.size(), 3u);
  EXPECT_EQ(target.devices[0].id, "cpu0");
  EXPECT_EQ(target.devices[1].id, "ocl0");
  EXPECT_EQ(target.devices[2].id, "ocl1");
  EXPECT_EQ(match_devices(target, "cpu"), std::vector<std::string>{"cpu0"});
  EXPECT_EQ(match_devices(target, "gpu"), std::vector<std::string>{"ocl1"});
  EXPECT_EQ(match_devices(target, "opencl"), (std::vector<std::string>{"ocl0", "ocl1"}));
}

TEST(OpenClDeviceTest, ReportsTheDeviceFacts) {
  HSCHED_REQUIRE_OPENCL_DEVICE(info);
  EXPECT_FALSE(info.platform_name.empty());
  EXPECT_FALSE(info.name.empty());
  EXPECT_FALSE(info.vendor.empty());
  EXPECT_FALSE(info.driver_version.empty());
  EXPECT_EQ(info.opencl_c_version.rfind("OpenCL C ", 0), 0u) << info.opencl_c_version;
  EXPECT_NE(info.type, 0u);
  EXPECT_GT(info.compute_units, 0u);
  EXPECT_GT(info.global_memory_bytes, 0);
  EXPECT_GT(info.local_memory_bytes, 0);
  EXPECT_EQ(info.fp16, info.extensions.find("cl_khr_fp16") != std::string::npos);
  if (info.platform_name.find("Portable Computing Language") != std::string::npos) {
    // PoCL's CPU device: CPU type, host memory, one compute unit per hardware thread.
    EXPECT_TRUE(info.type & CL_DEVICE_TYPE_CPU);
    EXPECT_TRUE(info.host_unified_memory);
  }
}

TEST(OpenClDeviceTest, ProfileFollowsTheDevice) {
  HSCHED_REQUIRE_OPENCL_DEVICE(info);
  const DeviceProfile profile = device_profile(info);
  EXPECT_EQ(profile.id, kIdFamily);
  EXPECT_EQ(profile.api, DeviceApi::kOpenCl);
  EXPECT_EQ(profile.kind, (info.type & CL_DEVICE_TYPE_GPU) ? DeviceKind::kGpu : DeviceKind::kCpu);
  EXPECT_TRUE(profile.present);
  EXPECT_GT(profile.peak_gflops.at(Precision::kFp32), 0);
  EXPECT_EQ(profile.peak_gflops.count(Precision::kFp16), 1u);  // fp16 storage everywhere
  const std::optional<DeviceInfo> again = find_device(profile.locator);
  ASSERT_TRUE(again.has_value()) << profile.locator;
  EXPECT_EQ(again->name, info.name);
  EXPECT_FALSE(find_device("opencl:99:0").has_value());
  EXPECT_GT(profile.memory_bandwidth_gbps, 0);
  EXPECT_EQ(profile.zero_copy, info.host_unified_memory);
  EXPECT_EQ(profile.memory_bytes, info.global_memory_bytes);
  EXPECT_TRUE(profile.supports_op("Conv"));
  EXPECT_TRUE(profile.supports_op("LayerNormalization"));
  EXPECT_FALSE(profile.supports_op("NonMaxSuppression"));
}

TEST(OpenClDeviceTest, DiscoveredTargetNamesOpenClDevicesOcl) {
  HSCHED_REQUIRE_OPENCL_DEVICE(info);
  const Target target = discover_target();
  ASSERT_GE(target.devices.size(), 2u);
  EXPECT_EQ(target.devices[0].id, "cpu0");
  EXPECT_EQ(target.devices[0].api, DeviceApi::kHost);
  std::set<std::string> ids;
  int opencl_count = 0;
  for (const DeviceProfile& device : target.devices) {
    EXPECT_TRUE(ids.insert(device.id).second) << "duplicate id " << device.id;
    if (device.api == DeviceApi::kOpenCl) {
      EXPECT_EQ(device.id, "ocl" + std::to_string(opencl_count++));
    }
  }
  EXPECT_EQ(opencl_count, static_cast<int>(enumerate_devices().size()));
  // "cpu" is the host; the OpenCL devices answer to "opencl" and their ids.
  EXPECT_EQ(match_devices(target, "cpu"), std::vector<std::string>{"cpu0"});
  EXPECT_EQ(match_devices(target, "opencl").size(), static_cast<size_t>(opencl_count));
  EXPECT_EQ(match_devices(target, "ocl0"), std::vector<std::string>{"ocl0"});
  if (!(info.type & CL_DEVICE_TYPE_GPU)) {
    const std::vector<std::string> gpus = match_devices(target, "gpu");
    EXPECT_EQ(std::count(gpus.begin(), gpus.end(), "ocl0"), 0);
  }
}

TEST(OpenClDeviceTest, DefaultScheduleStaysOnTheHostCpu) {
  HSCHED_REQUIRE_OPENCL_DEVICE(info);
  if (info.type & CL_DEVICE_TYPE_GPU) GTEST_SKIP() << "an OpenCL GPU takes conv/linear by design";
  const auto model = hsched::test::models_dir() / "squeezenet1_1" / "model.onnx";
  if (!std::filesystem::exists(model)) GTEST_SKIP() << model << " not found";
  auto graph = import_onnx_file(model, {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  auto plan = schedule(*graph);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  ASSERT_FALSE(plan->nodes.empty());
  for (const NodePlacement& placement : plan->nodes) EXPECT_EQ(placement.device, "cpu0");
  EXPECT_TRUE(plan->transfers.empty());
}

}  // namespace
}  // namespace hsched::opencl
