// `hsched devices` and `hsched run --policy npu-offload` in new processes with hsched's simulated
// NPU driver (ZE_ENABLE_ALT_DRIVERS and the loader's validation layer, set by CTest): the NPU is
// listed and labelled simulated; a second process loads the cached native graph instead of
// compiling it; and each fault of the simulated driver (HSCHED_ZE_SIM_FAULTS) ends with the run
// completed, its outputs correct, the report naming the fault, within the deadline + 5 s.
// Skipped without the simulated driver or without the model.
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_runner.h"
#include "support/model_data.h"
#include "support/scoped_env.h"
#include "support/temp_dir.h"

namespace hsched {
namespace {

namespace fs = std::filesystem;
using test::ScopedEnv;
using Clock = std::chrono::steady_clock;

constexpr const char* kFaultsEnv = "HSCHED_ZE_SIM_FAULTS";

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

class RunLevelZeroTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* driver = std::getenv("ZE_ENABLE_ALT_DRIVERS");
    if (driver == nullptr || *driver == '\0') GTEST_SKIP() << "ZE_ENABLE_ALT_DRIVERS is not set";
    model_dir_ = test::models_dir() / "squeezenet1_1";
    if (!fs::exists(model_dir_ / "model.onnx")) GTEST_SKIP() << "no model at " << model_dir_;
  }
  // `hsched run MODEL --policy POLICY --json` with the reference inputs, outputs written to
  // out_; the parsed report, empty when the run failed.
  nlohmann::json run_json(const std::vector<std::string>& extra,
                          const std::string& policy = "npu-offload") {
    std::vector<std::string> args = {"run",
                                     (model_dir_ / "model.onnx").string(),
                                     "--policy",
                                     policy,
                                     "--json",
                                     "--warmup",
                                     "0",
                                     "--inputs",
                                     (model_dir_ / "test_data_set_0").string(),
                                     "--outputs",
                                     out_.path().string()};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto run = cli_test::run_cli(args);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    return run.exit_code == 0 ? nlohmann::json::parse(run.out) : nlohmann::json::object();
  }
  // The written outputs against the references: |a-b| <= 5e-2 + 5e-2|b| (fp16 partitions).
  void expect_outputs_correct() {
    const auto got = test::read_tensors(out_.path(), "output_");
    const auto want = test::read_tensors(model_dir_ / "test_data_set_0", "output_");
    ASSERT_FALSE(want.empty());
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < want.size(); ++k) {
      ASSERT_EQ(got[k].dims(), want[k].dims());
      const auto a = got[k].values<float>();
      const auto b = want[k].values<float>();
      size_t bad = 0;
      for (size_t i = 0; i < a.size(); ++i) {
        bad += !(std::abs(a[i] - b[i]) <= 5e-2 + 5e-2 * std::abs(b[i]));
      }
      EXPECT_EQ(bad, 0u) << "output " << k;
    }
  }
  static bool ran_on(const nlohmann::json& report, const std::string& device) {
    for (const auto& partition : report["partitions"]) {
      if (partition["device"] == device) return true;
    }
    return false;
  }
  fs::path model_dir_;
  test::TempDir cache_dir_;
  test::TempDir out_;
};

TEST_F(RunLevelZeroTest, DevicesListsTheSimulatedNpu) {
  const auto text = cli_test::run_cli({"devices"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("npu0"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("level_zero"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("simulated by hsched"), std::string::npos) << text.out;
  const auto json_run = cli_test::run_cli({"devices", "--json"});
  ASSERT_EQ(json_run.exit_code, 0) << json_run.err;
  const auto json = nlohmann::json::parse(json_run.out);
  bool found = false;
  for (const auto& device : json["devices"]) {
    if (device["id"] != "npu0") {
      EXPECT_FALSE(device["simulated"].get<bool>()) << device.dump();
      continue;
    }
    found = true;
    EXPECT_EQ(device["api"], "level_zero");
    EXPECT_EQ(device["kind"], "npu");
    EXPECT_TRUE(device["simulated"].get<bool>());
    EXPECT_EQ(device["precisions"], nlohmann::json({"fp16", "int8"})) << device.dump();
  }
  EXPECT_TRUE(found) << json_run.out;
}

TEST_F(RunLevelZeroTest, SecondProcessLoadsTheCachedNativeGraph) {
  ScopedEnv cache("HSCHED_CACHE_DIR", cache_dir_.path().string());
  const nlohmann::json first = run_json({"--iterations", "1"});
  ASSERT_FALSE(first.empty());
  EXPECT_TRUE(ran_on(first, "npu0")) << first.dump();
  EXPECT_GT(first["cache"]["programs_built"].get<int>(), 0);
  EXPECT_EQ(first["cache"]["programs_loaded"], 0);
  EXPECT_EQ(first["plan"]["replans"], 0);
  for (const auto& partition : first["partitions"]) {  // the driver was asked and took it all
    if (partition["device"] != "npu0") continue;
    const std::string answer = partition["driver_query"];
    EXPECT_EQ(answer.rfind("driver query: ", 0), 0u) << answer;
    const size_t of = answer.find(" of ");
    ASSERT_NE(of, std::string::npos) << answer;
    EXPECT_EQ(answer.substr(14, of - 14),
              answer.substr(of + 4, answer.find(' ', of + 4) - (of + 4)))
        << answer;
  }
  const nlohmann::json second = run_json({"--iterations", "1"});
  ASSERT_FALSE(second.empty());
  EXPECT_TRUE(ran_on(second, "npu0")) << second.dump();
  EXPECT_EQ(second["cache"]["programs_built"], 0);
  EXPECT_EQ(second["cache"]["programs_loaded"], first["cache"]["programs_built"]);
  for (const auto& partition : second["partitions"]) {  // built before: the driver took it
    if (partition["device"] == "npu0") {
      EXPECT_EQ(partition["driver_query"], "driver query: not asked, the graph is cached");
    }
  }
  expect_outputs_correct();
}

TEST_F(RunLevelZeroTest, BuildPastTheDeadlineRunsOnTheCpu) {
  ScopedEnv cache("HSCHED_CACHE_DIR", cache_dir_.path().string());  // empty: compiles
  ScopedEnv faults(kFaultsEnv, "build_delay_s=60");
  const auto start = Clock::now();
  const nlohmann::json json = run_json({"--compile-timeout-ms", "1000", "--iterations", "1"});
  const double seconds = seconds_since(start);
  ASSERT_FALSE(json.empty());
  // The deadline + 20 s (an ASan build on a loaded 2-core machine took 6.0 s), far from the 60 s
  // the build takes: nobody waits for the abandoned build.
  EXPECT_LT(seconds, 1 + 20);
  EXPECT_EQ(json["plan"]["replans"], 1);
  ASSERT_GT(json["late_rejections"].size(), 0u) << json.dump();
  EXPECT_EQ(json["late_rejections"][0]["reason"], "compile_timeout");
  EXPECT_EQ(json["late_rejections"][0]["device"], "npu0");
  EXPECT_FALSE(ran_on(json, "npu0")) << json.dump();
  expect_outputs_correct();
}

// Progressive start with a build that takes 0.3 s: the first requests run on the CPU while the
// NPU graph builds, later ones on the NPU, and the report counts them. Only the model's tail goes
// to the NPU: the requests are a fixed count, so the CPU's ~4.5 s of them must outlast the build
// on a loaded machine (CI saw a whole-model build take 2.4 s), and the simulated NPU, which runs
// the whole model 14x slower than the CPU, would make the rest of them take minutes.
TEST_F(RunLevelZeroTest, ProgressiveStartMovesToTheNpuOnceBuilt) {
  ScopedEnv faults(kFaultsEnv, "build_delay_s=0.3");
  const test::TempDir policy_dir;
  const fs::path policy = policy_dir.path() / "npu-tail.yaml";
  std::ofstream(policy) << "schema_version: 1\nkind: policy\nname: npu-tail\n"
                           "default: [{device: cpu, precision: fp32}]\n"
                           "ops: {GlobalAveragePool: [{device: npu, precision: fp16}]}\n"
                           "fallback: allow\nobjective: strict\n";
  // The background build runs at nice 19: on a machine other processes keep busy it can take
  // longer than a fixed number of requests, so the count grows until the plan takes over.
  nlohmann::json json;
  int requests = 0;
  for (const int count : {1000, 4000, 16000}) {
    const test::TempDir cache_dir;  // empty: each attempt builds
    ScopedEnv cache("HSCHED_CACHE_DIR", cache_dir.path().string());
    requests = count;
    json = run_json({"--progressive", "--iterations", std::to_string(requests)}, policy.string());
    ASSERT_FALSE(json.empty());
    if (json["progressive"]["requests_on_cpu"].get<int64_t>() < requests) break;
  }
  const auto& progressive = json["progressive"];
  EXPECT_GE(progressive["plan_started_ms"].get<double>(), 0) << json.dump();
  EXPECT_GE(progressive["plan_ready_ms"].get<double>(),
            progressive["plan_started_ms"].get<double>() + 300)
      << json.dump();
  EXPECT_GT(progressive["requests_on_cpu"].get<int64_t>(), 0) << json.dump();
  EXPECT_LT(progressive["requests_on_cpu"].get<int64_t>(), requests) << json.dump();
  EXPECT_TRUE(ran_on(json, "npu0")) << json.dump();
  // compile() returned before the build was done: it did not wait for it.
  EXPECT_LT(json["compile_ms"].get<double>(), progressive["plan_ready_ms"].get<double>())
      << json.dump();
  expect_outputs_correct();
}

// Loading a cached native graph is a driver call that can block as long as a build (the driver
// loads it onto the device): it runs under the same deadline.
TEST_F(RunLevelZeroTest, CachedGraphLoadPastTheDeadlineRunsOnTheCpu) {
  ScopedEnv cache("HSCHED_CACHE_DIR", cache_dir_.path().string());
  const nlohmann::json warm = run_json({"--iterations", "1"});
  ASSERT_FALSE(warm.empty());
  ASSERT_GT(warm["cache"]["programs_built"].get<int>(), 0) << warm.dump();
  ScopedEnv faults(kFaultsEnv, "build_delay_s=60");
  const auto start = Clock::now();
  const nlohmann::json json = run_json({"--compile-timeout-ms", "1000", "--iterations", "1"});
  const double seconds = seconds_since(start);
  ASSERT_FALSE(json.empty());
  // The deadline + 20 s (an ASan build on a loaded 2-core machine took 6.0 s), far from the 60 s
  // the load takes: nobody waits for the abandoned load.
  EXPECT_LT(seconds, 1 + 20);
  EXPECT_EQ(json["plan"]["replans"], 1);
  ASSERT_GT(json["late_rejections"].size(), 0u) << json.dump();
  EXPECT_EQ(json["late_rejections"][0]["reason"], "compile_timeout");
  EXPECT_FALSE(ran_on(json, "npu0")) << json.dump();
  expect_outputs_correct();
}

// The driver's query of supported layers, asked before the build, leaves MaxPool out (a fault
// removes it from the simulated compiler's table): the MaxPool nodes move to the CPU with reason
// driver_unsupported, the rest stays on the NPU, and the report shows the query's answer.
TEST_F(RunLevelZeroTest, LayersTheDriverQueryRefusesRunOnTheCpu) {
  ScopedEnv cache("HSCHED_CACHE_DIR", cache_dir_.path().string());
  ScopedEnv faults(kFaultsEnv, "unsupported_layers=MaxPool");
  const nlohmann::json json = run_json({"--iterations", "1"});
  ASSERT_FALSE(json.empty());
  EXPECT_GE(json["plan"]["replans"].get<int>(), 1);
  size_t refused = 0;
  for (const auto& rejection : json["late_rejections"]) {
    EXPECT_EQ(rejection["reason"], "driver_unsupported") << rejection.dump();
    EXPECT_NE(rejection["detail"].get<std::string>().find("query of supported layers"),
              std::string::npos)
        << rejection.dump();
    ++refused;
  }
  EXPECT_EQ(refused, 3u) << json.dump();  // squeezenet1_1's three MaxPool nodes
  EXPECT_TRUE(ran_on(json, "npu0")) << json.dump();
  expect_outputs_correct();
}

// The query lists MaxPool but its build fails (a fault): the partition moves to the CPU with
// reason compile_failed, and the detail carries the compiler's build log naming the layer.
TEST_F(RunLevelZeroTest, ABuildTheQueryAcceptedThenFailedCarriesTheCompilerLog) {
  ScopedEnv cache("HSCHED_CACHE_DIR", cache_dir_.path().string());
  ScopedEnv faults(kFaultsEnv, "failing_layers=MaxPool");
  const nlohmann::json json = run_json({"--iterations", "1"});
  ASSERT_FALSE(json.empty());
  ASSERT_GT(json["late_rejections"].size(), 0u) << json.dump();
  const auto& rejection = json["late_rejections"][0];
  EXPECT_EQ(rejection["reason"], "compile_failed") << rejection.dump();
  const std::string detail = rejection["detail"];
  EXPECT_NE(detail.find("compiler log: layer '"), std::string::npos) << detail;
  EXPECT_NE(detail.find("(MaxPool): lowering failed"), std::string::npos) << detail;
  expect_outputs_correct();
}

TEST_F(RunLevelZeroTest, DeviceLostRunsOnTheCpu) {
  ScopedEnv cache("HSCHED_CACHE_DIR", cache_dir_.path().string());
  ScopedEnv faults(kFaultsEnv, "device_lost_after=1");
  const auto start = Clock::now();
  const nlohmann::json json = run_json({"--iterations", "3"});
  ASSERT_FALSE(json.empty());
  EXPECT_LT(seconds_since(start), 30 + 5);
  ASSERT_GT(json["quarantined"].size(), 0u) << json.dump();
  EXPECT_EQ(json["quarantined"][0]["device"], "npu0");
  EXPECT_EQ(json["quarantined"][0]["reason"], "device_lost") << json.dump();
  EXPECT_FALSE(ran_on(json, "npu0")) << "every later run is on the CPU: " << json.dump();
  expect_outputs_correct();
}

TEST_F(RunLevelZeroTest, OutOfDeviceMemoryRunsOnTheCpu) {
  ScopedEnv cache("HSCHED_CACHE_DIR", cache_dir_.path().string());
  ScopedEnv faults(kFaultsEnv, "oom=1");
  const nlohmann::json json = run_json({"--iterations", "1"});
  ASSERT_FALSE(json.empty());
  // The graph cannot be created: a late rejection of the NPU's nodes naming the fault.
  ASSERT_GT(json["late_rejections"].size(), 0u) << json.dump();
  EXPECT_EQ(json["late_rejections"][0]["device"], "npu0");
  EXPECT_NE(json["late_rejections"][0]["detail"].get<std::string>().find("memory_exceeded"),
            std::string::npos)
      << json["late_rejections"][0].dump();
  EXPECT_FALSE(ran_on(json, "npu0")) << json.dump();
  expect_outputs_correct();
}

TEST_F(RunLevelZeroTest, CorruptOutputIsCaughtByVerify) {
  ScopedEnv cache("HSCHED_CACHE_DIR", cache_dir_.path().string());
  ScopedEnv faults(kFaultsEnv, "corrupt_output=1");
  const nlohmann::json json = run_json({"--iterations", "1", "--verify"});
  ASSERT_FALSE(json.empty());
  ASSERT_GT(json["quarantined"].size(), 0u) << json.dump();
  EXPECT_EQ(json["quarantined"][0]["device"], "npu0");
  EXPECT_EQ(json["quarantined"][0]["reason"], "verification_failed");
  expect_outputs_correct();
}

// `hsched demo` on a machine without an NPU offers hsched's simulated NPU by itself (no
// ZE_ENABLE_ALT_DRIVERS given): one more run, labelled simulated, with fp16 results close to the
// CPU's; the default-policy run stays on the real devices.
TEST(DemoLevelZeroTest, DemoOffersTheSimulatedNpu) {
  std::error_code error;
  for (const auto& entry : fs::directory_iterator("/dev/accel", error)) {
    if (entry.path().filename().string().rfind("accel", 0) == 0) {
      GTEST_SKIP() << "this machine has an NPU (" << entry.path() << ")";
    }
  }
  ScopedEnv no_driver("ZE_ENABLE_ALT_DRIVERS", "");  // the demo chooses
  const auto run = cli_test::run_cli({"demo", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto json = nlohmann::json::parse(run.out);
  ASSERT_GE(json["runs"].size(), 2u) << run.out;
  EXPECT_EQ(json["runs"][0]["plan"], "default policy");
  EXPECT_EQ(json["runs"][0]["hardware"], "real");
  const auto& npu = json["runs"].back();
  EXPECT_EQ(npu["plan"], "npu-offload policy, simulated NPU");
  EXPECT_EQ(npu["hardware"], "simulated");
  EXPECT_NE(npu["placement"].get<std::string>().find("simulated by hsched"), std::string::npos)
      << npu.dump();
  EXPECT_LT(npu["max_abs_diff_vs_first_run"].get<double>(), 5e-2) << npu.dump();
  const auto text = cli_test::run_cli({"demo"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("run (npu-offload policy, simulated NPU)"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("hsched's simulated NPU driver"), std::string::npos) << text.out;
}

}  // namespace
}  // namespace hsched
