// `hsched run --devices opencl` in new processes: the on-disk program cache makes the second
// process build nothing (its first-run time is measured in bench/, not here); a build past the deadline is re-planned to the
// CPU and the run completes. On the first OpenCL device (PoCL in CI); skipped without one.
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "backends/opencl/opencl_test_util.h"
#include "cli/cli_runner.h"
#include "support/scoped_env.h"
#include "support/temp_dir.h"

namespace hsched {
namespace {

namespace fs = std::filesystem;
using test::ScopedEnv;

class RunOpenClTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!opencl_test::first_device()) GTEST_SKIP() << "no OpenCL platform or device";
    model_dir_ = test::models_dir() / "squeezenet1_1";
    if (!fs::exists(model_dir_ / "model.onnx")) GTEST_SKIP() << "no model at " << model_dir_;
  }
  nlohmann::json run_json(const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"run", (model_dir_ / "model.onnx").string(), "--devices",
                                     "opencl", "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto run = cli_test::run_cli(args);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    return run.exit_code == 0 ? nlohmann::json::parse(run.out) : nlohmann::json::object();
  }
  fs::path model_dir_;
  test::TempDir cache_dir_;
};

TEST_F(RunOpenClTest, SecondProcessBuildsNothing) {
  ScopedEnv cache("HSCHED_CACHE_DIR", cache_dir_.path().string());
  const nlohmann::json first = run_json({"--iterations", "3", "--warmup", "0"});
  ASSERT_FALSE(first.empty());
  EXPECT_GT(first["cache"]["programs_built"].get<int>(), 0);
  EXPECT_EQ(first["plan"]["replans"], 0);
  const nlohmann::json second = run_json({"--iterations", "5", "--warmup", "0"});
  ASSERT_FALSE(second.empty());
  EXPECT_EQ(second["cache"]["programs_built"], 0);
  EXPECT_GT(second["cache"]["programs_loaded"].get<int>(), 0);
  EXPECT_GT(second["first_run_ms"].get<double>(), 0.0);
  bool on_opencl = false;
  for (const auto& partition : second["partitions"]) on_opencl |= partition["device"] == "ocl0";
  EXPECT_TRUE(on_opencl) << second.dump();
}

// A profiled OpenCL step reports the host's share of its time, the enqueue (the GPU machine's
// small kernels are bound by it), and its commands' time on the device (event profiling, of
// replayed and of op-layer steps); CPU steps have neither.
TEST_F(RunOpenClTest, ProfileGivesOpenClStepsTheirEnqueueAndDeviceTimes) {
  const nlohmann::json run = run_json({"--iterations", "2", "--warmup", "1", "--profile"});
  ASSERT_FALSE(run.empty());
  int opencl_steps = 0;
  for (const auto& step : run["profile"]["steps"]) {
    if (step["device"] != "ocl0") {
      EXPECT_FALSE(step.contains("enqueue_ms")) << step.dump();
      EXPECT_FALSE(step.contains("device_ms")) << step.dump();
      continue;
    }
    ++opencl_steps;
    ASSERT_TRUE(step.contains("enqueue_ms")) << step.dump();
    EXPECT_GE(step["enqueue_ms"].get<double>(), 0.0) << step.dump();
    EXPECT_LE(step["enqueue_ms"].get<double>(), step["ms"].get<double>()) << step.dump();
    ASSERT_TRUE(step.contains("device_ms")) << step.dump();
    EXPECT_GT(step["device_ms"].get<double>(), 0.0) << step.dump();
  }
  EXPECT_GT(opencl_steps, 0) << run["profile"].dump();
}

TEST_F(RunOpenClTest, BuildPastTheDeadlineRunsOnTheCpuWithCorrectOutputs) {
  ScopedEnv cache("HSCHED_CACHE_DIR", cache_dir_.path().string());  // empty: builds from source
  ScopedEnv delay("HSCHED_OPENCL_TEST_BUILD_DELAY_MS", "30000");
  test::TempDir out;
  const auto start = std::chrono::steady_clock::now();
  const nlohmann::json json =
      run_json({"--compile-timeout-ms", "1000", "--iterations", "1", "--warmup", "0", "--inputs",
                (model_dir_ / "test_data_set_0").string(), "--outputs", out.path().string()});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(json.empty());
  // The deadline + 15 s (ASan on a loaded machine took 7 s), far from the 30 s build: nobody
  // waits for the abandoned build.
  EXPECT_LT(seconds, 1 + 15);
  EXPECT_EQ(json["plan"]["replans"], 1);
  ASSERT_GT(json["late_rejections"].size(), 0u);
  EXPECT_EQ(json["late_rejections"][0]["reason"], "compile_timeout");
  EXPECT_NE(json["late_rejections"][0]["detail"].get<std::string>().find("1000 ms deadline"),
            std::string::npos);
  for (const auto& partition : json["partitions"]) EXPECT_EQ(partition["device"], "cpu0");
  const auto compare = cli_test::run_cli({"run", (model_dir_ / "model.onnx").string(), "--devices",
                                          "cpu", "--iterations", "1", "--warmup", "0", "--inputs",
                                          (model_dir_ / "test_data_set_0").string(), "--outputs",
                                          (out.path() / "cpu").string()});
  ASSERT_EQ(compare.exit_code, 0) << compare.err;
  // The CPU ran it in both processes: the outputs are the same bytes.
  std::ifstream a(out.path() / "output_0.pb", std::ios::binary);
  std::ifstream b(out.path() / "cpu" / "output_0.pb", std::ios::binary);
  const std::string bytes_a((std::istreambuf_iterator<char>(a)), {});
  const std::string bytes_b((std::istreambuf_iterator<char>(b)), {});
  EXPECT_FALSE(bytes_a.empty());
  EXPECT_EQ(bytes_a, bytes_b);
}

// The deploy file's cache_dir and compile_timeout_ms reach the run: its deadline is the one a slow
// build runs into, and (under a deadline no build misses, even under a sanitizer) its programs
// land in that folder.
TEST_F(RunOpenClTest, DeployFileSetsTheCacheFolderAndTheDeadline) {
  test::TempDir dir;
  test::write_file(dir / "opencl-first.yaml",
                   "schema_version: 1\nkind: policy\nname: opencl-first\n"
                   "default: [{device: opencl, precision: fp32}]\nobjective: strict\n");
  const auto deploy = [&](const std::string& deadline_ms) {
    const fs::path path = dir / ("deploy-" + deadline_ms + ".yaml");
    test::write_file(path,
                     "schema_version: 1\nkind: deployment\ntarget: this-machine\n"
                     "policy: opencl-first.yaml\ncache_dir: programs\ncompile_timeout_ms: " +
                         deadline_ms + "\n");
    return std::vector<std::string>{"run",          (model_dir_ / "model.onnx").string(),
                                    "--config",     path.string(),
                                    "--iterations", "1",
                                    "--warmup",     "0",
                                    "--json"};
  };
  {
    ScopedEnv delay("HSCHED_OPENCL_TEST_BUILD_DELAY_MS", "4000");
    const auto slow = cli_test::run_cli(deploy("1200"));
    ASSERT_EQ(slow.exit_code, 0) << slow.err;
    const auto json = nlohmann::json::parse(slow.out);
    ASSERT_GT(json["late_rejections"].size(), 0u) << slow.out;
    EXPECT_NE(json["late_rejections"][0]["detail"].get<std::string>().find("1200 ms deadline"),
              std::string::npos)
        << json["late_rejections"][0].dump();
  }
  const auto run = cli_test::run_cli(deploy("300000"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto json = nlohmann::json::parse(run.out);
  EXPECT_EQ(json["plan"]["replans"], 0) << run.out;
  bool cached = false;
  for (const auto& entry : fs::directory_iterator(dir / "programs")) {
    cached |= entry.path().extension() == ".clbin";
  }
  EXPECT_TRUE(cached) << "no program in " << (dir / "programs");
}

}  // namespace
}  // namespace hsched
