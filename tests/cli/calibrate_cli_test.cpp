// `hsched calibrate`'s bad input: one line, exit code 2, and the -o file left as it was. (A real
// calibration takes minutes; the protocol and the profile format are tested in
// tests/scheduler/calibrate_test.cpp.)
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "cli/cli_runner.h"

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

}  // namespace
}  // namespace hsched
