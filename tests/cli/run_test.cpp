// `hsched run` on the CPU: inputs and outputs as .pb folders, JSON fields, and clear refusals.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_runner.h"
#include "graph/onnx_builder.h"
#include "graph/tensor_proto.h"
#include "hsched/report.h"
#include "support/temp_dir.h"

namespace hsched {
namespace {

std::string relu_model(const test::TempDir& dir) {
  OnnxBuilder b(17);
  b.input("x", DType::kF32, {1, 4}).output("y", DType::kF32, {1, 4});
  b.node("Relu", {"x"}, {"y"}, "relu");
  test::write_file(dir / "relu.onnx", b.serialize());
  return (dir / "relu.onnx").string();
}

TEST(RunCliTest, ReadsInputsWritesOutputsAndReportsJson) {
  test::TempDir dir;
  const std::string model = relu_model(dir);
  std::filesystem::create_directories(dir / "in");
  const Tensor x = Tensor::from_vector(DType::kF32, {1, 4}, std::vector<float>{-1, 2, -3, 4});
  ASSERT_TRUE(write_tensor_file(x, "x", dir / "in" / "input_0.pb").is_ok());
  const auto run = cli_test::run_cli({"run", model, "--devices", "cpu", "--inputs",
                                      (dir / "in").string(), "--outputs", (dir / "out").string(),
                                      "--iterations", "3", "--warmup", "1", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto json = nlohmann::json::parse(run.out);
  EXPECT_EQ(json["iterations"], 3);
  ASSERT_EQ(json["devices"].size(), 1u);  // --devices cpu: the host CPU alone
  EXPECT_EQ(json["devices"][0]["id"], "cpu0");
  EXPECT_EQ(json["devices"][0]["api"], "host");
  EXPECT_EQ(json["cache"]["programs_built"], 0);
  EXPECT_GE(json["first_run_ms"].get<double>(), 0.0);
  EXPECT_EQ(json["schema_version"], kReportSchemaVersion);
  const auto& latency = json["latency_ms"];
  EXPECT_LE(latency["min"].get<double>(), latency["median"].get<double>());
  EXPECT_EQ(latency["p50"], latency["median"]);
  EXPECT_LE(latency["median"].get<double>(), latency["p90"].get<double>());
  EXPECT_LE(latency["p90"].get<double>(), latency["p99"].get<double>());
  EXPECT_LE(latency["p99"].get<double>(), latency["max"].get<double>());
  EXPECT_GT(json["runs_per_s"].get<double>(), 0.0);
  EXPECT_EQ(json["outputs"][0]["name"], "y");
  EXPECT_EQ(json["outputs"][0]["shape"], nlohmann::json({1, 4}));
  EXPECT_EQ(json["outputs"][0]["dtype"], "f32");
  auto y = read_tensor_file(dir / "out" / "output_0.pb");
  ASSERT_TRUE(y.is_ok()) << y.status().message();
  const auto v = y->values<float>();
  EXPECT_EQ(std::vector<float>(v.begin(), v.end()), (std::vector<float>{0, 2, 0, 4}));
}

// The OpenCL drivers this machine's ICD loader would load (/etc/OpenCL/vendors/*.icd).
std::vector<std::string> opencl_driver_names() {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/etc/OpenCL/vendors", error)) {
    if (entry.path().extension() != ".icd") continue;
    std::string library;
    std::getline(std::ifstream(entry.path()) >> std::ws, library);
    if (!library.empty()) names.push_back(std::filesystem::path(library).filename().string());
  }
  return names;
}

// `--devices cpu` probes the host alone: no OpenCL driver is loaded (seen through the dynamic
// loader's LD_DEBUG=libs trace), while `hsched devices`, which probes every backend, loads one.
TEST(RunCliTest, DevicesCpuLoadsNoOpenClDriver) {
  const std::vector<std::string> drivers = opencl_driver_names();
  if (drivers.empty()) GTEST_SKIP() << "no OpenCL driver registered in /etc/OpenCL/vendors";
  test::TempDir dir;
  const std::string model = relu_model(dir);
  ::setenv("LD_DEBUG", "libs", 1);
  const auto cpu_run = cli_test::run_cli({"run", model, "--devices", "cpu", "--iterations", "1"});
  const auto all = cli_test::run_cli({"devices"});
  ::unsetenv("LD_DEBUG");
  ASSERT_EQ(cpu_run.exit_code, 0) << cpu_run.err.substr(cpu_run.err.size() - 2000);
  ASSERT_EQ(all.exit_code, 0);
  bool loaded_by_devices = false;
  for (const std::string& driver : drivers) {
    EXPECT_EQ(cpu_run.err.find(driver), std::string::npos) << driver << " loaded by --devices cpu";
    loaded_by_devices |= all.err.find(driver) != std::string::npos;
  }
  EXPECT_TRUE(loaded_by_devices) << "`hsched devices` loaded none of the OpenCL drivers";
}

TEST(RunCliTest, ProfileListsTimePerOpAndSteps) {
  test::TempDir dir;
  const std::string model = relu_model(dir);
  const auto json_run = cli_test::run_cli({"run", model, "--iterations", "2", "--profile", "--json"});
  ASSERT_EQ(json_run.exit_code, 0) << json_run.err;
  const auto json = nlohmann::json::parse(json_run.out);
  ASSERT_EQ(json["profile"]["steps"].size(), 1u);
  EXPECT_EQ(json["profile"]["steps"][0]["node"], "relu");
  EXPECT_EQ(json["profile"]["ops"][0]["op"], "Relu");
  EXPECT_EQ(json["profile"]["ops"][0]["device"], "cpu0");
  EXPECT_GE(json["profile"]["ops"][0]["ms"].get<double>(), 0.0);
  const auto text_run = cli_test::run_cli({"run", model, "--iterations", "2", "--profile"});
  ASSERT_EQ(text_run.exit_code, 0) << text_run.err;
  EXPECT_NE(text_run.out.find("profile      cpu0  Relu"), std::string::npos) << text_run.out;
  EXPECT_NE(text_run.out.find("slowest"), std::string::npos) << text_run.out;
}

TEST(RunCliTest, InputOfTheWrongShapeIsRefusedWithNothingWritten) {
  test::TempDir dir;
  const std::string model = relu_model(dir);
  std::filesystem::create_directories(dir / "in");
  const Tensor x = Tensor::from_vector(DType::kF32, {2, 2}, std::vector<float>{1, 2, 3, 4});
  ASSERT_TRUE(write_tensor_file(x, "x", dir / "in" / "input_0.pb").is_ok());
  const auto run = cli_test::run_cli({"run", model, "--inputs", (dir / "in").string(), "--outputs",
                                      (dir / "out").string()});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(cli_test::count_lines(run.err), 1) << run.err;
  EXPECT_NE(run.err.find("input_0.pb: holds f32 2x2 but input 'x' is f32 1x4"), std::string::npos)
      << run.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "out"));
}

// A model with a batch dim left open (torch's dynamic_axes) runs on the input files' dims; a
// file that contradicts a fixed dim is refused as before.
TEST(RunCliTest, InputFilesFixTheDimsTheModelLeavesOpen) {
  test::TempDir dir;
  OnnxBuilder b(17);
  b.input("x", DType::kF32, {kDynamicDim, 4}).output("y", DType::kF32, {kDynamicDim, 4});
  b.node("Relu", {"x"}, {"y"}, "relu");
  test::write_file(dir / "batch.onnx", b.serialize());
  const std::string model = (dir / "batch.onnx").string();
  std::filesystem::create_directories(dir / "in");
  const Tensor x =
      Tensor::from_vector(DType::kF32, {2, 4}, std::vector<float>{-1, 2, -3, 4, 5, -6, 7, -8});
  ASSERT_TRUE(write_tensor_file(x, "x", dir / "in" / "input_0.pb").is_ok());
  const auto run =
      cli_test::run_cli({"run", model, "--devices", "cpu", "--inputs", (dir / "in").string(),
                         "--outputs", (dir / "out").string(), "--iterations", "1", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto y = read_tensor_file(dir / "out" / "output_0.pb");
  ASSERT_TRUE(y.is_ok()) << y.status().message();
  EXPECT_EQ(y->dims(), (std::vector<int64_t>{2, 4}));
  const auto v = y->values<float>();
  EXPECT_EQ(std::vector<float>(v.begin(), v.end()), (std::vector<float>{0, 2, 0, 4, 5, 0, 7, 0}));
  const Tensor wide = Tensor::from_vector(DType::kF32, {1, 3}, std::vector<float>{1, 2, 3});
  ASSERT_TRUE(write_tensor_file(wide, "x", dir / "in" / "input_0.pb").is_ok());
  const auto refused = cli_test::run_cli({"run", model, "--inputs", (dir / "in").string()});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("input_0.pb: holds f32 1x3 but input 'x' is f32 ?x4"),
            std::string::npos)
      << refused.err;
}

TEST(RunCliTest, OpTheCpuLacksIsOneLineNamingNodeAndOp) {
  test::TempDir dir;
  OnnxBuilder b(17);
  b.input("x", DType::kF32, {4}).output("y", DType::kF32, {4});
  b.node("Bernoulli", {"x"}, {"y"}, "coin");
  test::write_file(dir / "coin.onnx", b.serialize());
  const auto run = cli_test::run_cli({"run", (dir / "coin.onnx").string()});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(cli_test::count_lines(run.err), 1) << run.err;
  EXPECT_NE(run.err.find("node 'coin' (Bernoulli)"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("no kernel for op 'Bernoulli'"), std::string::npos) << run.err;
}

TEST(RunCliTest, UnknownDeviceAndBadCountsAreRefused) {
  test::TempDir dir;
  const std::string model = relu_model(dir);
  auto run = cli_test::run_cli({"run", model, "--devices", "tpu"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("--devices: unknown or absent device 'tpu'"), std::string::npos) << run.err;
  run = cli_test::run_cli({"run", model, "--iterations", "0"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("--iterations"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace hsched
