// Level Zero discovery through the real loader with hsched's simulated NPU driver
// (ZE_ENABLE_ALT_DRIVERS, set by CTest, with the loader's validation layer): the device and its
// facts, the planner's profile of it, and the target every command plans for.
#include "backends/level_zero/device.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "backends/level_zero/backend.h"
#include "scheduler/config/discover.h"

namespace hsched {
namespace {

class SimulatedNpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* driver = std::getenv("ZE_ENABLE_ALT_DRIVERS");
    if (driver == nullptr || *driver == '\0') {
      GTEST_SKIP() << "ZE_ENABLE_ALT_DRIVERS is not set (CTest sets it to the simulated driver)";
    }
  }
};

TEST_F(SimulatedNpuTest, LoaderFindsOneNpuWithItsFacts) {
  ASSERT_TRUE(level_zero::loader_ready());
  const auto devices = level_zero::enumerate_devices();
  ASSERT_EQ(devices.size(), 1u);
  const level_zero::DeviceInfo& npu = devices[0];
  EXPECT_TRUE(npu.is_npu());
  EXPECT_EQ(npu.type, ZE_DEVICE_TYPE_VPU);
  EXPECT_EQ(npu.vendor_id, 0x8086u);
  EXPECT_EQ(npu.device_id, 0x7D1Du);
  EXPECT_NE(npu.name.find("NPU 3720"), std::string::npos) << npu.name;
  EXPECT_NE(npu.name.find("simulated"), std::string::npos) << npu.name;
  EXPECT_TRUE(npu.integrated);
  EXPECT_TRUE(npu.fp16);
  EXPECT_GT(npu.core_clock_mhz, 0u);
  EXPECT_GT(npu.memory_bytes, 0);
  EXPECT_GT(npu.max_alloc_bytes, 0);
  EXPECT_GT(npu.slices, 0u);
  EXPECT_GT(npu.graph_extension, 0u) << "the driver lists ZE_extension_graph";
  EXPECT_FALSE(npu.driver_uuid.empty());
  EXPECT_TRUE(level_zero::is_npu_3720(npu));
  EXPECT_EQ(level_zero::locator(npu), "level_zero:0:0");
  const auto found = level_zero::find_device("level_zero:0:0");
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->device, npu.device);
  EXPECT_FALSE(level_zero::find_device("level_zero:0:1").has_value());
}

TEST_F(SimulatedNpuTest, NpuGetsTheShippedNpu3720Profile) {
  const auto profiles = config::backends().find(DeviceApi::kLevelZero)->discover();
  ASSERT_EQ(profiles.size(), 1u);
  const DeviceProfile& npu = profiles[0];
  EXPECT_EQ(npu.kind, DeviceKind::kNpu);
  EXPECT_EQ(npu.api, DeviceApi::kLevelZero);
  EXPECT_TRUE(npu.present);
  EXPECT_EQ(npu.locator, "level_zero:0:0");
  EXPECT_NE(npu.name.find("simulated"), std::string::npos) << npu.name;
  // configs/targets/core-ultra-7-155h.yaml npu0: fp16 and int8, no fp32.
  EXPECT_DOUBLE_EQ(npu.peak_gflops.at(Precision::kFp16), 5500);
  EXPECT_DOUBLE_EQ(npu.peak_gflops.at(Precision::kInt8), 11000);
  EXPECT_EQ(npu.peak_gflops.count(Precision::kFp32), 0u);
  EXPECT_TRUE(npu.supports_op("Conv"));
  EXPECT_FALSE(npu.supports_op("NonZero"));
  EXPECT_TRUE(npu.zero_copy);
}

TEST_F(SimulatedNpuTest, ThisMachineTargetListsTheNpu) {
  const Target target = discover_target();
  const auto npus = match_devices(target, "npu");
  ASSERT_EQ(npus.size(), 1u);
  EXPECT_EQ(npus[0], "npu0");
  EXPECT_EQ(match_devices(target, "level_zero"), npus);
  EXPECT_EQ(target.find("npu0")->api, DeviceApi::kLevelZero);
  EXPECT_EQ(target.devices.front().id, "cpu0");  // the host stays first
}

TEST_F(SimulatedNpuTest, ConservativeProfileForAnUnknownNpu) {
  auto devices = level_zero::enumerate_devices();
  ASSERT_FALSE(devices.empty());
  level_zero::DeviceInfo other = devices[0];
  other.device_id = 0x1234;
  other.name = "Some NPU";
  EXPECT_FALSE(level_zero::is_npu_3720(other));
  const DeviceProfile profile = level_zero::npu_profile(other, config::shipped_npu_3720_profile());
  EXPECT_EQ(profile.kind, DeviceKind::kNpu);
  EXPECT_LT(profile.peak_gflops.at(Precision::kFp16), 5500);
  EXPECT_EQ(profile.name, "Some NPU (Level Zero)");
}

}  // namespace
}  // namespace hsched
