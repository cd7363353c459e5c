// Level Zero without a driver (no ZE_ENABLE_ALT_DRIVERS, no Intel driver on our machines): no
// devices, quietly, and the target and plans every CPU/OpenCL command makes are as without the
// Level Zero discoverer. Also the parts that need no driver at all: matching a GPU seen through
// OpenCL and Level Zero, and the native graph cache.
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "backends/level_zero/backend.h"
#include "backends/level_zero/device.h"
#include "backends/level_zero/cache.h"
#include "graph/demo_model.h"
#include "scheduler/planner/schedule.h"
#include "hsched/config.h"
#include "scheduler/config/discover.h"
#include "support/temp_dir.h"

namespace hsched {
namespace {

namespace fs = std::filesystem;

class NoDriverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* driver = std::getenv("ZE_ENABLE_ALT_DRIVERS");
    if (driver != nullptr && *driver != '\0') GTEST_SKIP() << "a Level Zero driver is configured";
  }
};

TEST_F(NoDriverTest, NoDevicesQuietly) {
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(level_zero::loader_ready());
  EXPECT_TRUE(level_zero::enumerate_devices().empty());
  EXPECT_TRUE(config::backends().find(DeviceApi::kLevelZero)->discover().empty());
  EXPECT_FALSE(level_zero::find_device("level_zero:0:0").has_value());
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

TEST_F(NoDriverTest, TargetAndPlansAsWithoutLevelZero) {
  const Target with = discover_target();
  // The discoverers before Level Zero joined: the first two of the list (CPU, OpenCL).
  std::vector<config::Discoverer> before = config::default_discoverers();
  ASSERT_EQ(before.size(), 3u);
  before.pop_back();
  const Target without = config::discover_target(before);
  ASSERT_EQ(with.devices.size(), without.devices.size());
  for (size_t d = 0; d < with.devices.size(); ++d) {
    EXPECT_EQ(with.devices[d].id, without.devices[d].id);
    EXPECT_EQ(with.devices[d].api, without.devices[d].api);
    EXPECT_NE(with.devices[d].api, DeviceApi::kLevelZero);
  }
  auto graph = build_demo_graph();
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  auto policy = resolve_policy("default");
  ASSERT_TRUE(policy.is_ok()) << policy.status().message();
  auto plan_with = schedule(*graph, with, *policy);
  auto plan_without = schedule(*graph, without, *policy);
  ASSERT_TRUE(plan_with.is_ok()) << plan_with.status().message();
  ASSERT_TRUE(plan_without.is_ok()) << plan_without.status().message();
  ASSERT_EQ(plan_with->nodes.size(), plan_without->nodes.size());
  for (size_t n = 0; n < plan_with->nodes.size(); ++n) {
    EXPECT_EQ(plan_with->nodes[n].device, plan_without->nodes[n].device);
    EXPECT_EQ(plan_with->nodes[n].precision, plan_without->nodes[n].precision);
  }
  EXPECT_EQ(plan_with->partitions.size(), plan_without->partitions.size());
  EXPECT_DOUBLE_EQ(plan_with->predicted_ms, plan_without->predicted_ms);
}

level_zero::DeviceInfo gpu_with(std::optional<level_zero::PciAddress> pci, uint8_t uuid_byte) {
  level_zero::DeviceInfo gpu;
  gpu.type = ZE_DEVICE_TYPE_GPU;
  gpu.name = "Intel(R) Arc(TM) Graphics";
  gpu.pci = pci;
  gpu.uuid.fill(0);
  gpu.uuid[0] = uuid_byte;
  return gpu;
}

// Synthetic identities: no machine of ours has a GPU seen through both APIs.
TEST(CrossApiMatchTest, PciAddressFirstThenUuid) {
  const level_zero::PciAddress address{0, 0, 2, 0};
  const DeviceProfile ze = level_zero::device_profile(gpu_with(address, 0x86));
  DeviceProfile by_pci;
  by_pci.kind = DeviceKind::kGpu;
  by_pci.pci_address = "0000:00:02.0";
  EXPECT_EQ(config::same_device(by_pci, ze).value_or(""), "pci 0000:00:02.0");
  DeviceProfile other_pci = by_pci;
  other_pci.pci_address = "0000:03:00.0";
  EXPECT_FALSE(config::same_device(other_pci, ze).has_value());
  DeviceProfile by_uuid;
  by_uuid.kind = DeviceKind::kGpu;
  by_uuid.uuid = ze.uuid;
  const auto matched =
      config::same_device(by_uuid, level_zero::device_profile(gpu_with(std::nullopt, 0x86)));
  ASSERT_TRUE(matched.has_value());
  EXPECT_EQ(matched->rfind("uuid 86", 0), 0u) << *matched;
  // An all-zero UUID identifies nothing; nor does a device of another kind.
  EXPECT_EQ(level_zero::device_profile(gpu_with(std::nullopt, 0)).uuid, "");
  EXPECT_FALSE(config::same_device(DeviceProfile{}, level_zero::device_profile(gpu_with(std::nullopt, 0))));
  DeviceProfile cpu_by_pci = by_pci;
  cpu_by_pci.kind = DeviceKind::kCpu;
  EXPECT_FALSE(config::same_device(cpu_by_pci, ze).has_value());
}

// Discovery lists a device two APIs see once, as the first backend found it, with the other
// API's view beside it.
TEST(CrossApiMatchTest, DiscoveryListsADeviceSeenTwiceOnce) {
  const level_zero::PciAddress address{0, 0, 2, 0};
  DeviceProfile opencl_gpu;
  opencl_gpu.id = "ocl*";
  opencl_gpu.kind = DeviceKind::kGpu;
  opencl_gpu.api = DeviceApi::kOpenCl;
  opencl_gpu.locator = "opencl:0:0";
  opencl_gpu.pci_address = "0000:00:02.0";
  const DeviceProfile ze_gpu = level_zero::device_profile(gpu_with(address, 0x86));
  const DeviceProfile ze_other = level_zero::device_profile(gpu_with(std::nullopt, 0x42));
  const Target target = config::discover_target(
      {[&] { return std::vector<DeviceProfile>{opencl_gpu}; },
       [&] { return std::vector<DeviceProfile>{ze_gpu, ze_other}; }});
  ASSERT_EQ(target.devices.size(), 2u);
  EXPECT_EQ(target.devices[0].api, DeviceApi::kOpenCl);
  ASSERT_EQ(target.devices[0].views.size(), 1u);
  EXPECT_EQ(target.devices[0].views[0].api, DeviceApi::kLevelZero);
  EXPECT_EQ(target.devices[0].views[0].locator, ze_gpu.locator);
  EXPECT_EQ(target.devices[0].views[0].matched_by, "pci 0000:00:02.0");
  EXPECT_EQ(target.devices[1].api, DeviceApi::kLevelZero);
  EXPECT_TRUE(target.devices[1].views.empty());
}

level_zero::NativeKey key_for(const std::vector<uint8_t>& payload) {
  level_zero::NativeKey key;
  key.driver_uuid = "0123";
  key.driver_version = 7;
  key.device_name = "npu";
  key.device_uuid = "86000000000000000000000000000000";
  key.device_id = 0x7D1D;
  key.graph_extension_version = 0x10000;
  key.compiler_major = 1;
  key.payload = payload;
  return key;
}

TEST(NativeCacheTest, KeyDependsOnDriverDeviceExtensionAndPayload) {
  const std::vector<uint8_t> payload = {1, 2, 3};
  const level_zero::NativeKey base = key_for(payload);
  EXPECT_EQ(base.digest().size(), 64u);  // SHA-256
  const auto changed = [&](auto&& change) {
    level_zero::NativeKey other = base;
    change(other);
    return other.digest() != base.digest();
  };
  const std::vector<uint8_t> other_payload = {1, 2, 4};
  EXPECT_TRUE(changed([&](level_zero::NativeKey& key) { key.payload = other_payload; }));
  EXPECT_TRUE(changed([](level_zero::NativeKey& key) { key.driver_version = 8; }));
  EXPECT_TRUE(changed([](level_zero::NativeKey& key) { key.driver_uuid = "0124"; }));
  EXPECT_TRUE(changed([](level_zero::NativeKey& key) { key.device_id = 1; }));
  EXPECT_TRUE(changed([](level_zero::NativeKey& key) { key.device_uuid[0] = '9'; }));
  EXPECT_TRUE(changed([](level_zero::NativeKey& key) { key.graph_extension_version = 0x10001; }));
  EXPECT_TRUE(changed([](level_zero::NativeKey& key) { key.compiler_minor = 1; }));
  EXPECT_TRUE(changed([](level_zero::NativeKey& key) { key.build_flags = "--x"; }));
}

TEST(NativeCacheTest, StoresLoadsAndDropsBadEntries) {
  test::TempDir dir;
  level_zero::NativeCache cache(dir.path().string());
  const std::vector<uint8_t> payload = {1, 2, 3};
  const std::string key = key_for(payload).bytes();
  EXPECT_EQ(cache.entry_path(key), dir / (key_for(payload).digest() + ".zegraph"));
  EXPECT_FALSE(cache.load(key).has_value());
  const level_zero::NativeCache::Binary binary = {9, 8, 7, 6, 5};
  ASSERT_TRUE(cache.store(key, binary));
  EXPECT_EQ(cache.load(key).value_or(level_zero::NativeCache::Binary{}), binary);
  // A flipped payload byte: the digest catches it, the entry is removed and missed.
  const fs::path path = cache.entry_path(key);
  {
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(-1, std::ios::end);
    file.put(static_cast<char>(0x55));
  }
  EXPECT_FALSE(cache.load(key).has_value());
  EXPECT_FALSE(fs::exists(path));
  // Truncated entry.
  ASSERT_TRUE(cache.store(key, binary));
  fs::resize_file(path, fs::file_size(path) - 2);
  EXPECT_FALSE(cache.load(key).has_value());
  // The entry of another payload's key, renamed to this key's name: a miss.
  const std::string other_key = key_for({1, 2, 4}).bytes();
  ASSERT_TRUE(cache.store(other_key, binary));
  fs::rename(cache.entry_path(other_key), path);
  EXPECT_FALSE(cache.load(key).has_value());
}

TEST(NativeCacheTest, EvictsOldestBeyondTheCap) {
  test::TempDir dir;
  level_zero::NativeCache cache(dir.path().string(), 200);
  const level_zero::NativeCache::Binary big(120, 1);
  ASSERT_TRUE(cache.store("aaaaaaaaaaaaaaaa", big));
  ASSERT_TRUE(cache.store("bbbbbbbbbbbbbbbb", big));  // over the cap: the older entry goes
  EXPECT_FALSE(cache.load("aaaaaaaaaaaaaaaa").has_value());
  EXPECT_TRUE(cache.load("bbbbbbbbbbbbbbbb").has_value());
}

TEST(NativeCacheTest, UnusableDirectoryDisablesTheCache) {
  test::TempDir dir;
  test::write_file(dir / "file", "x");
  level_zero::NativeCache cache((dir / "file" / "sub").string());
  EXPECT_FALSE(cache.store("cccccccccccccccc", {1}));
  EXPECT_FALSE(cache.load("cccccccccccccccc").has_value());
}

// The deploy file's cache_dir (the OpenCL cache's directory, shared with the native cache): a
// world-writable directory turns the cache off.
TEST(NativeCacheTest, WorldWritableExplicitDirectoryDisablesTheCache) {
  test::TempDir dir;
  const fs::path shared = dir / "shared";
  ASSERT_TRUE(fs::create_directory(shared));
  fs::permissions(shared, fs::perms::all);  // 0777
  ::testing::internal::CaptureStderr();
  level_zero::NativeCache cache(shared.string());
  const std::string warning = ::testing::internal::GetCapturedStderr();
  EXPECT_FALSE(cache.usable());
  EXPECT_NE(warning.find(shared.string()), std::string::npos) << warning;
  EXPECT_NE(warning.find("writable by group or others"), std::string::npos) << warning;
  EXPECT_FALSE(cache.store("cccccccccccccccc", {1}));
  EXPECT_FALSE(cache.load("cccccccccccccccc").has_value());
  EXPECT_TRUE(fs::is_empty(shared));
}

}  // namespace
}  // namespace hsched
