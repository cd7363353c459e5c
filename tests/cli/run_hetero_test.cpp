// `hsched run` of a plan across the CPU and the first OpenCL device (PoCL in CI; skipped without
// one): the --json report per partition, --trace, --requests/--mode throughput, --verify and a
// quarantine in the report. squeezenet1_1 of the shared models, split every 3 nodes.
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "backends/opencl/opencl_test_util.h"
#include "cli/cli_runner.h"
#include "cli/run_command.h"
#include "graph/tensor_proto.h"
#include "scheduler/runtime/compile.h"
#include "support/model_data.h"
#include "support/scoped_env.h"
#include "support/temp_dir.h"

namespace hsched {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class RunHeteroTest : public ::testing::Test {
 protected:
  // One program cache for the suite: each OpenCL program is built once.
  static void SetUpTestSuite() {
    cache_dir_ = std::make_unique<test::TempDir>();
    cache_env_ = std::make_unique<test::ScopedEnv>("HSCHED_CACHE_DIR", cache_dir_->path().string());
  }
  static void TearDownTestSuite() {
    cache_env_.reset();
    cache_dir_.reset();
  }
  void SetUp() override {
    if (!opencl_test::first_device()) GTEST_SKIP() << "no OpenCL platform or device";
    model_dir_ = test::models_dir() / "squeezenet1_1";
    if (!fs::exists(model_dir_ / "model.onnx")) GTEST_SKIP() << "no model at " << model_dir_;
  }
  std::string model() const { return (model_dir_ / "model.onnx").string(); }
  std::string inputs() const { return (model_dir_ / "test_data_set_0").string(); }
  // `hsched run MODEL --devices cpu,opencl --split-every 3 --iterations 2 --warmup 1 EXTRA`.
  cli_test::CliRun run_split(const std::vector<std::string>& extra) const {
    std::vector<std::string> args = {"run",           model(), "--devices",    "cpu,opencl",
                                     "--split-every", "3",     "--iterations", "2",
                                     "--warmup",      "1"};
    args.insert(args.end(), extra.begin(), extra.end());
    return cli_test::run_cli(args);
  }
  json run_split_json(const std::vector<std::string>& extra) const {
    std::vector<std::string> args = extra;
    args.push_back("--json");
    const auto run = run_split(args);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    return run.exit_code == 0 ? json::parse(run.out) : json::object();
  }

  fs::path model_dir_;
  static std::unique_ptr<test::TempDir> cache_dir_;
  static std::unique_ptr<test::ScopedEnv> cache_env_;
};

std::unique_ptr<test::TempDir> RunHeteroTest::cache_dir_;
std::unique_ptr<test::ScopedEnv> RunHeteroTest::cache_env_;

std::vector<float> floats_of(const fs::path& file) {
  auto tensor = read_tensor_file(file);
  EXPECT_TRUE(tensor.is_ok()) << file << ": " << tensor.status().message();
  if (!tensor.is_ok()) return {};
  const auto values = tensor->values<float>();
  return {values.begin(), values.end()};
}

TEST_F(RunHeteroTest, JsonMeasuresEveryPartitionOnBothDevices) {
  const json report = run_split_json({});
  ASSERT_FALSE(report.empty());
  ASSERT_GT(report["partitions"].size(), 2u);
  std::set<std::string> devices;
  for (const json& partition : report["partitions"]) {
    devices.insert(partition["device"].get<std::string>());
    EXPECT_GT(partition["nodes"].get<int>(), 0) << partition.dump();
    EXPECT_GT(partition["predicted_ms"].get<double>(), 0.0) << partition.dump();
    EXPECT_GT(partition["measured_ms"].get<double>(), 0.0) << partition.dump();
    const json& transfers = partition["transfers"];
    if (partition["device"] == "cpu0") {
      EXPECT_EQ(transfers["upload_bytes"], 0) << partition.dump();  // host memory: no copies
      EXPECT_EQ(transfers["download_bytes"], 0) << partition.dump();
    } else {
      EXPECT_GT(transfers["download_bytes"].get<int64_t>(), 0) << partition.dump();
      EXPECT_GE(transfers["download_ms"].get<double>(), 0.0) << partition.dump();
    }
  }
  EXPECT_EQ(devices.size(), 2u) << report["partitions"].dump();
  EXPECT_EQ(devices.count("cpu0"), 1u);
  // The plan's transfers: values crossing between the two devices.
  ASSERT_GT(report["transfers"].size(), 0u);
  for (const json& transfer : report["transfers"]) {
    EXPECT_NE(transfer["from_device"], transfer["to_device"]) << transfer.dump();
    EXPECT_GT(transfer["bytes"].get<int64_t>(), 0) << transfer.dump();
    EXPECT_FALSE(transfer["value"].get<std::string>().empty());
  }
  EXPECT_EQ(report["quarantined"], json::array());
  EXPECT_EQ(report["verify"], false);
  EXPECT_GT(report["plan"]["measured_ms"].get<double>(), 0.0);
  // The fields that were there before stay.
  EXPECT_GT(report["latency_ms"]["median"].get<double>(), 0.0);
  EXPECT_EQ(report["iterations"], 2);
}

TEST_F(RunHeteroTest, TextHasThePartitionTable) {
  const auto run = run_split({});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("partition  device  nodes  predicted"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("  request  "), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("quarantined"), std::string::npos) << run.out;
}

TEST_F(RunHeteroTest, TraceHasOneTrackPerDeviceUsedWithEveryPartitionRun) {
  test::TempDir dir;
  const fs::path file = dir / "trace.json";
  const json report = run_split_json({"--trace", file.string()});
  ASSERT_FALSE(report.empty());
  std::ifstream in(file);
  ASSERT_TRUE(in.good()) << file;
  const json trace = json::parse(in);
  EXPECT_EQ(trace["displayTimeUnit"], "ms");

  std::map<int, std::string> track_device;  // tid -> device id ("cpu0 (2)" -> "cpu0")
  std::set<std::string> primary_tracks;
  for (const json& event : trace["traceEvents"]) {
    if (event["ph"] != "M" || event["name"] != "thread_name") continue;
    const std::string name = event["args"]["name"].get<std::string>();
    track_device[event["tid"].get<int>()] = name.substr(0, name.find(' '));
    if (name.find(' ') == std::string::npos) primary_tracks.insert(name);
  }
  std::set<std::string> used;
  for (const json& partition : report["partitions"]) used.insert(partition["device"]);
  EXPECT_EQ(primary_tracks, used);  // one track named by each device the plan used

  std::map<std::pair<int, int>, json> partition_events;  // (request, partition)
  size_t compiles = 0;
  for (const json& event : trace["traceEvents"]) {
    if (event["ph"] != "X") continue;
    ASSERT_EQ(track_device.count(event["tid"].get<int>()), 1u) << event.dump();
    if (event["cat"] == "compile") ++compiles;
    if (event["cat"] != "partition") continue;
    const int partition = event["args"]["partition"].get<int>();
    EXPECT_EQ(track_device[event["tid"].get<int>()],
              report["partitions"][static_cast<size_t>(partition)]["device"])
        << event.dump();
    partition_events[{event["args"]["request"].get<int>(), partition}] = event;
  }
  EXPECT_GE(compiles, report["partitions"].size());
  // Warm-up + timed runs: every partition of every request.
  EXPECT_EQ(partition_events.size(), 3 * report["partitions"].size());
  // Transfers lie inside a partition of theirs, on its track.
  size_t transfers = 0;
  for (const json& event : trace["traceEvents"]) {
    if (event["ph"] != "X" || event["cat"] != "transfer") continue;
    ++transfers;
    const double start = event["ts"].get<double>();
    const double end = start + event["dur"].get<double>();
    bool nested = false;
    for (const auto& [key, partition] : partition_events) {
      const double p_start = partition["ts"].get<double>();
      const double p_end = p_start + partition["dur"].get<double>();
      nested |= key.second == event["args"]["partition"] && partition["tid"] == event["tid"] &&
                start >= p_start && end <= p_end + 1e-3;
    }
    EXPECT_TRUE(nested) << event.dump();
  }
  EXPECT_GT(transfers, 0u);
}

TEST_F(RunHeteroTest, TraceIntoAMissingFolderIsOneLineAndNoFile) {
  test::TempDir dir;
  const fs::path file = dir / "missing" / "trace.json";
  const auto run = run_split({"--trace", file.string()});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(cli_test::count_lines(run.err), 1) << run.err;
  EXPECT_NE(run.err.find(file.string()), std::string::npos) << run.err;
  EXPECT_TRUE(run.out.empty()) << run.out;
  EXPECT_FALSE(fs::exists(file));
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST_F(RunHeteroTest, ThroughputGivesTheOutputsOfASingleRun) {
  test::TempDir dir;
  const json report = run_split_json({"--inputs", inputs(), "--requests", "20", "--mode",
                                      "throughput", "--outputs", (dir / "stream").string()});
  ASSERT_FALSE(report.empty());
  const json& throughput = report["throughput"];
  EXPECT_EQ(throughput["requests"], 20);
  EXPECT_EQ(throughput["mode"], "throughput");
  EXPECT_GT(throughput["requests_per_s"].get<double>(), 0.0);
  EXPECT_GT(throughput["sequential_requests_per_s"].get<double>(), 0.0);
  EXPECT_GT(throughput["speedup"].get<double>(), 0.0);
  EXPECT_EQ(throughput["identical_outputs"], true) << throughput.dump();

  const auto single = cli_test::run_cli({"run", model(), "--devices", "cpu,opencl", "--split-every",
                                         "3", "--iterations", "1", "--warmup", "0", "--inputs",
                                         inputs(), "--outputs", (dir / "single").string()});
  ASSERT_EQ(single.exit_code, 0) << single.err;
  const std::vector<float> stream = floats_of(dir / "stream" / "output_0.pb");
  const std::vector<float> one = floats_of(dir / "single" / "output_0.pb");
  ASSERT_FALSE(one.empty());
  EXPECT_EQ(stream, one);
  // And both are the model's reference outputs.
  const std::vector<float> want = floats_of(model_dir_ / "test_data_set_0" / "output_0.pb");
  ASSERT_EQ(want.size(), one.size());
  for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(one[i], want[i], 1e-3) << "element " << i;
}

TEST_F(RunHeteroTest, LatencyModeAndBadRequestCounts) {
  const json report = run_split_json({"--requests", "3"});
  ASSERT_FALSE(report.empty());
  EXPECT_EQ(report["throughput"]["mode"], "latency");
  EXPECT_GT(report["throughput"]["requests_per_s"].get<double>(), 0.0);
  for (const char* bad : {"0", "100001", "x"}) {
    const auto run = run_split({"--requests", bad, "--mode", "throughput"});
    EXPECT_EQ(run.exit_code, 2) << bad;
    EXPECT_EQ(cli_test::count_lines(run.err), 1) << run.err;
    EXPECT_NE(run.err.find("--requests"), std::string::npos) << run.err;
  }
  const auto mode = run_split({"--requests", "2", "--mode", "fastest"});
  EXPECT_EQ(mode.exit_code, 2);
  EXPECT_NE(mode.err.find("--mode: unknown mode 'fastest'"), std::string::npos) << mode.err;
}

TEST_F(RunHeteroTest, VerifyOnPoclReportsNoQuarantine) {
  const json report = run_split_json({"--verify"});
  ASSERT_FALSE(report.empty());
  EXPECT_EQ(report["verify"], true);
  EXPECT_GT(report["verified_partition_runs"].get<int>(), 0);
  EXPECT_EQ(report["quarantined"], json::array());
  bool checked = false;
  for (const json& partition : report["partitions"]) {
    if (partition["device"] != "cpu0") checked |= partition["verify_ms"].get<double>() > 0;
  }
  EXPECT_TRUE(checked) << report["partitions"].dump();
}

// The policy's `verify` key turns verification on without the flag.
TEST_F(RunHeteroTest, PolicyVerifyKeyTurnsVerificationOn) {
  test::TempDir dir;
  test::write_file(
      dir / "verify.yaml",
      "schema_version: 1\nkind: policy\nname: verify-opencl\n"
      "default: [{device: opencl, precision: fp32}]\nobjective: strict\nverify: true\n");
  const auto run = cli_test::run_cli({"run", model(), "--policy", (dir / "verify.yaml").string(),
                                      "--iterations", "1", "--warmup", "0", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json report = json::parse(run.out);
  EXPECT_EQ(report["verify"], true);
  EXPECT_GT(report["verified_partition_runs"].get<int>(), 0);
}

// A wrong OpenCL result planted through the test hook: quarantined, reported (JSON and text),
// and the outputs written are still the model's.
TEST_F(RunHeteroTest, PlantedWrongResultIsQuarantinedAndReported) {
  test::TempDir dir;
  cli::RunArgs args;
  args.model_path = model();
  args.source.devices = "opencl";
  args.inputs_dir = inputs();
  args.outputs_dir = (dir / "out").string();
  args.iterations = 2;
  args.warmup = 0;
  args.verify = true;
  args.json = true;
  const runtime::ScopedDeviceOutputHook hook([](int, std::vector<Tensor>& outputs) {
    for (Tensor& output : outputs) {
      if (output.dtype() != DType::kF32) continue;
      // A copy: the executor may hold the device's tensor elsewhere.
      Tensor wrong(output.dtype(), output.dims());
      const auto from = output.values<float>();
      auto to = wrong.values<float>();
      for (size_t i = 0; i < from.size(); ++i) to[i] = from[i] + 1.0f;
      output = std::move(wrong);
    }
    return Status::ok();
  });
  std::ostringstream warnings;
  auto result = cli::run_model(args, warnings);
  ASSERT_TRUE(result.is_ok()) << result.status().message();
  const json report = json::parse(*result);
  ASSERT_GT(report["quarantined"].size(), 0u) << report.dump();
  for (const json& q : report["quarantined"]) {
    EXPECT_NE(q["device"], "cpu0") << q.dump();
    EXPECT_EQ(q["reason"], "verification_failed") << q.dump();
    EXPECT_NEAR(q["max_abs"].get<double>(), 1.0, 1e-3) << q.dump();
    EXPECT_GT(q["mean_abs"].get<double>(), 0.5) << q.dump();
    EXPECT_EQ(report["partitions"][q["partition"].get<size_t>()]["device"], "cpu0") << q.dump();
  }
  const std::vector<float> got = floats_of(dir / "out" / "output_0.pb");
  const std::vector<float> want = floats_of(model_dir_ / "test_data_set_0" / "output_0.pb");
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-3) << "element " << i;

  args.json = false;
  args.outputs_dir.clear();
  result = cli::run_model(args, warnings);
  ASSERT_TRUE(result.is_ok()) << result.status().message();
  EXPECT_NE(result->find("quarantined  partition "), std::string::npos) << *result;
  EXPECT_NE(result->find("verification_failed (max |diff| 1"), std::string::npos) << *result;
}

// A device that fails mid-run (the hook returns its error): the partition is quarantined with
// device_lost and the device's message, and the report says so.
TEST_F(RunHeteroTest, LostDeviceIsReportedWithItsMessage) {
  cli::RunArgs args;
  args.model_path = model();
  args.source.devices = "opencl";
  args.iterations = 1;
  args.warmup = 0;
  const runtime::ScopedDeviceOutputHook hook([](int, std::vector<Tensor>&) {
    return internal_error("planted: CL_OUT_OF_RESOURCES");
  });
  std::ostringstream warnings;
  auto result = cli::run_model(args, warnings);
  ASSERT_TRUE(result.is_ok()) << result.status().message();
  EXPECT_NE(result->find("quarantined  partition "), std::string::npos) << *result;
  EXPECT_NE(result->find(": device_lost ("), std::string::npos) << *result;
  EXPECT_NE(result->find("planted: CL_OUT_OF_RESOURCES"), std::string::npos) << *result;
}

}  // namespace
}  // namespace hsched
