// Calibrating a device that computes no fp32: hsched's simulated NPU (fp16 and int8) through the
// real Level Zero loader. Its overhead chains and byte classes run in its base precision, fp16
// (before, its first overhead chain was planned in fp32 and the calibration failed); its QDQ
// benchmarks in fp16 too. Skipped, not passed, without the simulated driver.
#include <algorithm>

#include <gtest/gtest.h>

#include "scheduler/calibration/calibrate.h"
#include "scheduler/calibration/calibrate_specs.h"
#include "scheduler/config/discover.h"

namespace hsched::calibration {
namespace {

TEST(CalibrateLevelZeroTest, ADeviceWithoutFp32IsCalibratedInItsBasePrecision) {
  DeviceProfile host, npu;
  for (const DeviceProfile& device : hsched::discover_target().devices) {
    if (device.api == DeviceApi::kHost) host = device;
    if (device.api == DeviceApi::kLevelZero) npu = device;
  }
  if (npu.id.empty()) GTEST_SKIP() << "no Level Zero device (the simulated driver is not loaded)";
  const std::vector<Precision> computes = npu.precisions();
  ASSERT_EQ(std::count(computes.begin(), computes.end(), Precision::kFp32), 0);
  EXPECT_EQ(base_precision(npu), Precision::kFp16);
  EXPECT_EQ(base_precision(host), Precision::kFp32);

  // One round of one elementwise benchmark, besides the overhead chains every calibration runs.
  CalibrateOptions options;
  options.protocol.rounds = 1;
  for (const Spec& spec : specs_for(npu)) {
    if (spec.cost_class == CostClass::kElementwise) {
      EXPECT_EQ(spec.precision, Precision::kFp16) << spec.name;
      options.only = {spec.name};
      break;
    }
  }
  ASSERT_FALSE(options.only.empty());
  // And one convolution in QDQ form, planned in fp16 (the Q/DQ nodes as FakeQuantize).
  for (const Spec& spec : specs_for(npu)) {
    if (spec.quantized && spec.cost_class == CostClass::kConv) {
      options.only.push_back(spec.name);
      break;
    }
  }
  ASSERT_EQ(options.only.size(), 2u);
  Result<CalibrationReport> report = calibrate_device(npu, host, nullptr, options);
  ASSERT_TRUE(report.is_ok()) << report.status().message();
  EXPECT_EQ(report->measured, 2);
  EXPECT_EQ(report->profile.curves.count({CostClass::kElementwise, Precision::kFp16}), 1u);
  EXPECT_EQ(report->profile.qdq_curves.count(CostClass::kConv), 1u);
  // The fp16 overhead chains ran: a partition's cost beyond its nodes plus one tiny node's is
  // the short chain's time. (Either alone may be 0: with one round on a loaded machine the long
  // chain can measure more than the short one's per-node share, and run_overhead_ms is then 0.)
  EXPECT_GT(report->profile.run_overhead_ms + report->profile.launch_overhead_ms, 0);
}

}  // namespace
}  // namespace hsched::calibration
