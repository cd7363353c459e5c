// End-to-end tests of the `hsched` program: exit codes, one-line errors, JSON output.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>

#include "cli/cli_runner.h"
#include "graph/demo_model.h"
#include "hsched/model.h"
#include "hsched/report.h"

namespace hsched {
namespace {

using cli_test::count_lines;
using cli_test::run_cli;

// Every error: exit 2, nothing on stdout, exactly one "hsched: error: " line on stderr.
void expect_one_line_error(const cli_test::CliRun& run) {
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(count_lines(run.err), 1) << run.err;
  EXPECT_EQ(run.err.rfind("hsched: error: ", 0), 0u) << run.err;
}

TEST(CliTest, DemoJsonHasTheSummaryFields) {
  const auto run = run_cli({"demo", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.err, "");
  const auto json = nlohmann::json::parse(run.out, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(json.is_discarded()) << run.out;
  for (const char* field :
       {"model", "opset", "inputs", "outputs", "nodes", "ops", "params", "param_bytes", "gflop",
        "peak_activation_bytes", "non_static_tensors"}) {
    EXPECT_TRUE(json.contains(field)) << field;
  }
  EXPECT_EQ(json["model"], "demo-cnn");
  EXPECT_EQ(json["opset"], 17);
  EXPECT_EQ(json["schema_version"], kReportSchemaVersion);
  // The demo also runs its model on this machine: with the default policy, and with the OpenCL
  // devices taking what they can when there are any (same outputs within fp32 reassociation).
  ASSERT_GE(json["runs"].size(), 1u);
  EXPECT_EQ(json["runs"][0]["plan"], "default policy");
  EXPECT_GT(json["runs"][0]["latency_ms"]["median"].get<double>(), 0.0);
  for (const auto& run : json["runs"]) {
    // A run on the simulated NPU (offered when this machine has none) computes in fp16.
    const double bound = run["hardware"] == "simulated" ? 5e-2 : 1e-3;
    EXPECT_LT(run["max_abs_diff_vs_first_run"].get<double>(), bound) << run.dump();
    // Measured next to predicted, per partition and per request.
    EXPECT_GT(run["measured_ms"].get<double>(), 0.0) << run.dump();
    int nodes = 0;
    for (const auto& partition : run["partitions"]) {
      EXPECT_GT(partition["predicted_ms"].get<double>(), 0.0) << partition.dump();
      EXPECT_GT(partition["measured_ms"].get<double>(), 0.0) << partition.dump();
      nodes += partition["nodes"].get<int>();
    }
    EXPECT_EQ(nodes, json["nodes"].get<int>()) << run.dump();
  }
  ASSERT_EQ(json["inputs"].size(), 1u);
  EXPECT_EQ(json["inputs"][0]["name"], "input");
  EXPECT_EQ(json["inputs"][0]["shape"], nlohmann::json({1, 3, 64, 64}));
  EXPECT_EQ(json["inputs"][0]["dtype"], "f32");
  ASSERT_EQ(json["outputs"].size(), 1u);
  EXPECT_EQ(json["outputs"][0]["name"], "logits");
  EXPECT_EQ(json["outputs"][0]["shape"], nlohmann::json({1, 10}));
  EXPECT_EQ(json["ops"]["Conv"], 6);
  EXPECT_TRUE(json["gflop"].is_number());
  EXPECT_EQ(json["non_static_tensors"], 0);
}

TEST(CliTest, DemoTextNamesTheModel) {
  const auto run = run_cli({"demo"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("demo-cnn"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("GFLOP"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("Conv"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("partition  device  nodes  predicted  measured"), std::string::npos)
      << run.out;
}

TEST(CliTest, VersionExitsZero) {
  const auto run = run_cli({"--version"});
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_NE(run.out.find("hsched"), std::string::npos);
}

TEST(CliTest, MissingModelFileIsOneLineNamingTheFile) {
  const std::string path = "/nonexistent/dir/no_such_model.onnx";
  const auto run = run_cli({"info", path});
  expect_one_line_error(run);
  EXPECT_NE(run.err.find("no_such_model.onnx"), std::string::npos) << run.err;
}

TEST(CliTest, UnknownFlagIsOneLineError) {
  expect_one_line_error(run_cli({"demo", "--no-such-flag"}));
  expect_one_line_error(run_cli({"--no-such-flag"}));
}

TEST(CliTest, MissingArgumentsAreOneLineErrors) {
  expect_one_line_error(run_cli({}));
  expect_one_line_error(run_cli({"info"}));
  expect_one_line_error(run_cli({"info", "model.onnx", "--input-shape"}));
  expect_one_line_error(run_cli({"no-such-command"}));
}

// The demo model written to a file, for `hsched info` to import.
class CliModelFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = ::testing::TempDir() + "hsched_cli_demo_" + std::to_string(::getpid()) + ".onnx";
    std::ofstream file(path_, std::ios::binary);
    file << build_demo_model_proto().SerializeAsString();
    ASSERT_TRUE(file.good());
  }
  void TearDown() override { std::remove(path_.c_str()); }

  std::string path_;
};

TEST_F(CliModelFileTest, InfoReportsTheModel) {
  const auto run = run_cli({"info", path_, "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto json = nlohmann::json::parse(run.out);
  EXPECT_EQ(json["model"], path_);
  EXPECT_EQ(json["nodes"], 17);
  EXPECT_EQ(json["non_static_tensors"], 0);
}

TEST_F(CliModelFileTest, InputShapeMatchingTheInputIsAccepted) {
  const auto run = run_cli({"info", path_, "--input-shape", "input=1,3,64,64"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("1x3x64x64"), std::string::npos) << run.out;
}

TEST_F(CliModelFileTest, InputShapeNamingNoInputIsOneLineError) {
  const auto run = run_cli({"info", path_, "--input-shape", "no_such_input=1,3,64,64"});
  expect_one_line_error(run);
  EXPECT_NE(run.err.find("no_such_input"), std::string::npos) << run.err;
}

TEST_F(CliModelFileTest, MalformedInputShapeIsOneLineError) {
  expect_one_line_error(run_cli({"info", path_, "--input-shape", "input"}));
  expect_one_line_error(run_cli({"info", path_, "--input-shape", "input=1,x,64,64"}));
}

// `hsched quantize`: writes a QDQ model `hsched run` runs; calibration sources are checked.
TEST_F(CliModelFileTest, QuantizeWritesAModelThatRuns) {
  const std::string out = path_ + ".int8.onnx";
  auto run = run_cli({"quantize", path_, "--random", "2", "-o", out});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("weights int8 per output channel"), std::string::npos) << run.out;
  EXPECT_EQ(run_cli({"run", out, "--devices", "cpu", "--iterations", "1"}).exit_code, 0);

  // One input set in a folder, as `--calibration DIR` reads it.
  const std::string dir = path_ + ".calibration";
  std::filesystem::create_directories(dir);
  Tensor input(DType::kF32, {1, 3, 64, 64});
  ASSERT_TRUE(write_tensor_file(input, "input", dir + "/input_0.pb").is_ok());
  run = run_cli({"quantize", path_, "--calibration", dir, "-o", out, "--activations", "i8"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  std::filesystem::remove_all(dir);
  std::remove(out.c_str());

  expect_one_line_error(run_cli({"quantize", path_, "-o", out}));  // no calibration source
  expect_one_line_error(
      run_cli({"quantize", path_, "--random", "2", "--calibration", "/nonexistent", "-o", out}));
  expect_one_line_error(run_cli({"quantize", path_, "--calibration", "/nonexistent", "-o", out}));
  expect_one_line_error(
      run_cli({"quantize", path_, "--random", "2", "--activations", "u4", "-o", out}));
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace hsched
