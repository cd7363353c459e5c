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

}  // namespace
}  // namespace hsched
