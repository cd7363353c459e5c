// `hsched calibrate`'s bad input: one line, exit code 2, and the -o file left as it was. (A real
// calibration takes minutes; the protocol and the profile format are tested in
// tests/scheduler/calibrate_test.cpp.)
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "cli/cli_runner.h"
#include "scheduler/calibration/calibrate_specs.h"
#include "hsched/config.h"
#include "scheduler/config/discover.h"

namespace hsched {
namespace {

TEST(CalibrateCliTest, UnknownDeviceIsOneLineAndWritesNothing) {
  const std::string out = cli_test::make_temp_file();
  std::filesystem::remove(out);
  const cli_test::CliRun run = cli_test::run_cli({"calibrate", "--devices", "nosuch", "-o", out});
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_EQ(cli_test::count_lines(run.err), 1) << run.err;
  EXPECT_NE(run.err.find("'nosuch'"), std::string::npos) << run.err;
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(CalibrateCliTest, OutputThatIsNotAProfileIsKept) {
  const std::string out = cli_test::make_temp_file();
  std::ofstream(out) << "notes: [unfinished\n";
  const cli_test::CliRun run = cli_test::run_cli({"calibrate", "--devices", "cpu", "-o", out});
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_EQ(cli_test::count_lines(run.err), 1) << run.err;
  EXPECT_NE(run.err.find(out), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("--fresh"), std::string::npos) << run.err;
  EXPECT_EQ(cli_test::read_and_remove(out), "notes: [unfinished\n");
}

TEST(CalibrateCliTest, RoundsOutOfRangeAreRefused) {
  const cli_test::CliRun run = cli_test::run_cli({"calibrate", "--rounds", "0", "-o", "x.yaml"});
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("--rounds"), std::string::npos) << run.err;
}

TEST(CalibrateCliTest, CheckOfAProfileOfOtherDevicesIsOneLine) {
  const std::string profile = cli_test::make_temp_file();
  std::ofstream(profile) << "schema_version: 1\nkind: target\nname: t\ndevices:\n"
                            "  - {id: cpu0, name: Elsewhere, kind: cpu, locator: host, "
                            "peak_gflops: {fp32: 10}, memory_bandwidth_gbps: 1, memory_gib: 1, "
                            "ops: '*', probe: [{bench: add_4k, work: 4096, ms: 0.001}]}\n";
  const cli_test::CliRun run = cli_test::run_cli({"calibrate", "--check", profile});
  std::filesystem::remove(profile);
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_EQ(cli_test::count_lines(run.err), 1) << run.err;
  EXPECT_NE(run.err.find(profile + ": none of its devices"), std::string::npos) << run.err;
}

TEST(CalibrateCliTest, CheckWritesNothingSoItTakesNoOutput) {
  const cli_test::CliRun run =
      cli_test::run_cli({"calibrate", "--check", "a.yaml", "-o", "b.yaml"});
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("--check"), std::string::npos) << run.err;
}

// Calibrating the CPU again keeps the earlier calibration of this machine's other devices and
// drops what the file says of devices not here. Every CPU benchmark is in the file, so only the
// overhead chains run: a second or two. The reused points get their work as counted now.
TEST(CalibrateCliTest, DevicesLeftOutKeepTheirEarlierCalibration) {
  DeviceProfile host;
  DeviceProfile other;
  for (const DeviceProfile& device : discover_target().devices) {
    if (device.api == DeviceApi::kHost) host = device;
    if (device.api != DeviceApi::kHost && other.id.empty()) other = device;
  }
  if (other.id.empty()) GTEST_SKIP() << "no device here beside the host CPU";
  host.locator = "host";
  host.calibration = "hsched calibrate, test, 2 CPU threads, 1 rounds";
  for (const calibration::Spec& spec : calibration::specs_for(host)) {
    Curve& curve = host.curves[{spec.cost_class, spec.precision}];
    const double n = static_cast<double>(curve.size() + 1);
    curve.push_back({spec.name, 0.001 * n, 0.001 * n, 0});  // no real work is below 1
  }
  other.calibration = "hsched calibrate, earlier";
  DeviceProfile gone = other;
  gone.id = "gone0";
  gone.name = "A device not on this machine";
  const std::string out = cli_test::make_temp_file();
  std::ofstream(out) << target_yaml(Target{"calibrated", out, {host, other, gone}}, "test");

  const cli_test::CliRun run =
      cli_test::run_cli({"calibrate", "--devices", "cpu", "--rounds", "1", "-o", out});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find(host.id + " (" + host.name + "): 0 measured"), std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find(other.id + " (" + other.name + "): kept as calibrated before"),
            std::string::npos)
      << run.out;
  Result<Target> written = load_target(out);
  std::filesystem::remove(out);
  ASSERT_TRUE(written.is_ok()) << written.status().message();
  ASSERT_EQ(written->devices.size(), 2u);
  EXPECT_EQ(written->devices[0].id, host.id);
  EXPECT_NE(written->devices[0].calibration, host.calibration);
  for (const auto& [key, curve] : written->devices[0].curves) {
    for (const CurvePoint& point : curve) EXPECT_GT(point.work, 1) << point.bench;
  }
  EXPECT_EQ(written->devices[1].id, other.id);
  EXPECT_EQ(written->devices[1].calibration, other.calibration);
}

}  // namespace
}  // namespace hsched
