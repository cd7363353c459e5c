// `hsched plan`, `hsched report` and `hsched devices`: the acceptance command (vit_tiny
// on a Core Ultra 7 155H), JSON output, and one-line refusals of bad flags and configs that
// leave no output file behind.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_runner.h"
#include "hsched/report.h"
#include "support/temp_dir.h"

namespace hsched {
namespace {

namespace fs = std::filesystem;
using cli_test::count_lines;
using cli_test::run_cli;

const fs::path kSourceDir = HSCHED_SOURCE_DIR;

std::string deploy_155h() {
  return (kSourceDir / "configs/deploy/core-ultra-7-155h.yaml").string();
}

std::string model(const std::string& name) {
  return (test::models_dir() / name / "model.onnx").string();
}

bool is_conv_linear(const std::string& op) {
  return op == "Conv" || op == "ConvTranspose" || op == "Gemm" || op == "MatMul";
}

void expect_one_line_error(const cli_test::CliRun& run, const std::string& part) {
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_EQ(count_lines(run.err), 1) << run.err;
  EXPECT_NE(run.err.find(part), std::string::npos) << run.err;
  EXPECT_TRUE(run.out.empty()) << run.out;
}

nlohmann::json parse_json(const std::string& text) {
  auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(json.is_discarded()) << text.substr(0, 500);
  return json;
}

// The acceptance command: conv/linear on the GPU in fp16, every other node with a reason. The
// default policy is strict (the promised placement), so every conv/linear is there.
TEST(PlanCliTest, VitTinyOn155hPutsConvLinearOnTheGpuInFp16) {
  if (!fs::exists(model("vit_tiny"))) GTEST_SKIP() << "vit_tiny not in " << test::models_dir();
  const auto text = run_cli({"report", model("vit_tiny"), "--config", deploy_155h()});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("core-ultra-7-155h"), std::string::npos);
  EXPECT_NE(text.out.find("gpu0"), std::string::npos);

  // The literal rule (strict): conv/linear on the GPU, the rest on the CPU, and the report warns
  // that this is slower than the CPU alone.
  const auto run = run_cli({"report", model("vit_tiny"), "--target", "core-ultra-7-155h",
                            "--policy", "strict", "--format", "json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json report = parse_json(run.out);
  ASSERT_TRUE(report.contains("nodes"));
  int conv_linear = 0;
  for (const auto& node : report["nodes"]) {
    const std::string op = node["op"];
    const std::string where =
        node["device"].get<std::string>() + "/" + node["precision"].get<std::string>();
    const std::string reason = node["reason"];
    SCOPED_TRACE(node["name"].get<std::string>() + " " + op + " on " + where + ": " + reason);
    if (is_conv_linear(op)) {
      ++conv_linear;
      EXPECT_EQ(where, "gpu0/fp16");
      EXPECT_EQ(reason, "first_choice");
    } else {
      // Everything else says why it is on the CPU: the policy keeps it there.
      EXPECT_EQ(where, "cpu0/fp32");
      EXPECT_EQ(reason, "policy");
    }
  }
  EXPECT_EQ(conv_linear, 74);  // the patch Conv, 6 MatMuls per block x 12, the head Gemm
  const auto& slower = report["summary"]["slower_than_single_device"];
  ASSERT_TRUE(slower.is_object()) << report["summary"].dump();
  EXPECT_EQ(slower["device"], "cpu0");
  EXPECT_GT(slower["gap_ms"].get<double>(), 0);
  EXPECT_NE(slower["rule"].get<std::string>().find("strict"), std::string::npos);
}

// The default policy's choices under the latency objective: the cost model keeps the conv/linear
// nodes whose GPU partition would cost more than it saves on the CPU, and says so with both
// predictions; the plan beats the CPU alone.
// The default policy is cost-aware: nodes moved off their first choice say why, with figures.
TEST(PlanCliTest, VitTinyDefaultPolicyGivesCostReasons) {
  if (!fs::exists(model("vit_tiny"))) GTEST_SKIP() << "vit_tiny not in " << test::models_dir();
  const auto run =
      run_cli({"report", model("vit_tiny"), "--target", "core-ultra-7-155h", "--format", "json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json report = parse_json(run.out);
  int on_gpu = 0, by_cost = 0;
  for (const auto& node : report["nodes"]) {
    if (node["device"] == "gpu0") ++on_gpu;
    if (node["reason"] != "cost") continue;
    ++by_cost;
    const std::string detail = node["detail"];
    EXPECT_NE(detail.find("gpu0/fp16"), std::string::npos) << detail;
    EXPECT_NE(detail.find("cpu0/fp32"), std::string::npos) << detail;
  }
  EXPECT_GT(on_gpu, 0);
  EXPECT_GT(by_cost, 0);
  EXPECT_LE(report["predicted_ms"].get<double>(), report["single_device_ms"]["cpu0"].get<double>());
}

TEST(PlanCliTest, PlanPrintsEveryNodeAndJson) {
  if (!fs::exists(model("squeezenet1_1"))) GTEST_SKIP() << "squeezenet1_1 not present";
  const auto text = run_cli({"plan", model("squeezenet1_1"), "--target", "core-ultra-7-155h"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_TRUE(text.err.empty()) << text.err;
  EXPECT_NE(text.out.find("/features/features.0/Conv"), std::string::npos);

  const auto json_run = run_cli({"plan", model("squeezenet1_1"), "--target", "core-ultra-7-155h",
                                 "--policy", "cpu-only", "--json"});
  ASSERT_EQ(json_run.exit_code, 0) << json_run.err;
  const nlohmann::json plan = parse_json(json_run.out);
  ASSERT_TRUE(plan["nodes"].is_array());
  EXPECT_GT(plan["nodes"].size(), 10u);
  for (const auto& node : plan["nodes"]) EXPECT_EQ(node["device"], "cpu0");
  EXPECT_EQ(count_lines(text.out), static_cast<int>(plan["nodes"].size()) + 2);
}

TEST(PlanCliTest, DevicesListsThisMachineAndProfiles) {
  const auto here = run_cli({"devices", "--json"});
  ASSERT_EQ(here.exit_code, 0) << here.err;
  const nlohmann::json devices = parse_json(here.out);
  EXPECT_EQ(devices["target"], "this-machine");
  EXPECT_EQ(devices["schema_version"], kReportSchemaVersion);
  ASSERT_FALSE(devices["devices"].empty());
  EXPECT_EQ(devices["devices"][0]["id"], "cpu0");
  EXPECT_EQ(devices["devices"][0]["present"], true);
  EXPECT_GT(devices["devices"][0]["peak_gflops"]["fp32"].get<double>(), 0);

  const auto laptop = run_cli({"devices", "--target", "core-ultra-7-155h"});
  ASSERT_EQ(laptop.exit_code, 0) << laptop.err;
  for (const char* id : {"cpu0", "gpu0", "npu0"}) {
    EXPECT_NE(laptop.out.find(id), std::string::npos) << laptop.out;
  }
  EXPECT_NE(laptop.out.find("planned"), std::string::npos) << laptop.out;
}

TEST(PlanCliTest, MalformedConfigIsOneLineExitTwo) {
  test::TempDir dir;
  test::write_file(dir / "bad.yaml",
                   "schema_version: 1\nkind: deployment\ntarget: core-ultra-7-155h\n"
                   "policy: default\nsurprise: 1\n");
  const auto run =
      run_cli({"plan", model("squeezenet1_1"), "--config", (dir / "bad.yaml").string()});
  expect_one_line_error(run, "surprise");

  test::write_file(dir / "missing.yaml",
                   "schema_version: 1\nkind: deployment\ntarget: no-such-target\n"
                   "policy: default\n");
  expect_one_line_error(
      run_cli({"report", model("squeezenet1_1"), "--config", (dir / "missing.yaml").string()}),
      "no-such-target");
  expect_one_line_error(run_cli({"plan", model("squeezenet1_1"), "--policy", "no-such-policy"}),
                        "no-such-policy");
  expect_one_line_error(run_cli({"plan", model("squeezenet1_1"), "--config", deploy_155h(),
                                 "--target", "core-ultra-7-258v"}),
                        "--target");
  expect_one_line_error(run_cli({"plan", model("squeezenet1_1"), "--devices", "tpu"}),
                        "--devices: unknown or absent device 'tpu'");
  expect_one_line_error(run_cli({"report", model("squeezenet1_1"), "--format", "pdf"}), "--format");
}

TEST(PlanCliTest, OutputFileIsWrittenWholeOrNotAtAll) {
  if (!fs::exists(model("squeezenet1_1"))) GTEST_SKIP() << "squeezenet1_1 not present";
  test::TempDir dir;
  test::write_file(dir / "bad.yaml", "schema_version: 2\nkind: deployment\n");
  const fs::path out = dir / "report.html";
  expect_one_line_error(
      run_cli({"report", model("squeezenet1_1"), "--config", (dir / "bad.yaml").string(),
               "--format", "html", "-o", out.string()}),
      "schema_version");
  EXPECT_FALSE(fs::exists(out));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1)
      << "only bad.yaml may be there";

  const auto good = run_cli({"report", model("squeezenet1_1"), "--config", deploy_155h(),
                             "--format", "dot", "-o", out.string()});
  ASSERT_EQ(good.exit_code, 0) << good.err;
  EXPECT_TRUE(good.out.empty());
  ASSERT_TRUE(fs::exists(out));
  EXPECT_GT(fs::file_size(out), 100u);

  // One spelling everywhere: `plan -o` writes the plan; `report --json` is `--format json`.
  const fs::path plan_file = dir / "plan.json";
  const auto plan = run_cli({"plan", model("squeezenet1_1"), "--config", deploy_155h(), "--json",
                             "-o", plan_file.string()});
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_TRUE(plan.out.empty());
  EXPECT_EQ(nlohmann::json::parse(std::ifstream(plan_file))["schema_version"],
            kReportSchemaVersion);
  const auto json =
      run_cli({"report", model("squeezenet1_1"), "--config", deploy_155h(), "--json"});
  const auto format =
      run_cli({"report", model("squeezenet1_1"), "--config", deploy_155h(), "--format", "json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(json.out, format.out);
  expect_one_line_error(run_cli({"report", model("squeezenet1_1"), "--json", "--format", "text"}),
                        "--json");
}

// --split-every K alternates the listed devices every K nodes (cost ignored): partitions on both,
// every node with the slot it wanted; it applies to whatever policy is in use.
TEST(PlanCliTest, SplitEveryAlternatesTheListedDevices) {
  if (!fs::exists(model("squeezenet1_1"))) GTEST_SKIP() << "squeezenet1_1 not present";
  const auto run = run_cli({"plan", model("squeezenet1_1"), "--target", "core-ultra-7-155h",
                            "--devices", "cpu,gpu", "--split-every", "3", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json plan = parse_json(run.out);
  std::set<std::string> devices;
  for (const auto& partition : plan["partitions"]) devices.insert(partition["device"]);
  EXPECT_EQ(devices, (std::set<std::string>{"cpu0", "gpu0"}));
  EXPECT_GT(plan["partitions"].size(), 4u);
  int slot_cpu = 0, slot_gpu = 0;
  for (const auto& node : plan["nodes"]) {
    const std::string detail = node["detail"];
    SCOPED_TRACE(node["name"].get<std::string>() + ": " + detail);
    if (node["reason"] == "fallback") continue;  // e.g. an op the GPU profile lacks
    EXPECT_EQ(node["reason"], "policy");
    if (detail == "split every 3: slot 0 of cpu, gpu") {
      ++slot_cpu;
      EXPECT_EQ(node["device"], "cpu0");
    } else {
      EXPECT_EQ(detail, "split every 3: slot 1 of cpu, gpu");
      ++slot_gpu;
      EXPECT_EQ(node["device"], "gpu0");
    }
    EXPECT_EQ(node["wanted"].get<std::string>(), node["device"].get<std::string>() + "/fp32");
  }
  EXPECT_GT(slot_cpu, 10);
  EXPECT_GT(slot_gpu, 10);

  // Without --devices: the policy in use (default: its default choices are the CPU alone).
  const auto text = run_cli(
      {"plan", model("squeezenet1_1"), "--target", "core-ultra-7-155h", "--split-every", "2"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("policy default split every 2;"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("split every 2: slot 0 of cpu"), std::string::npos) << text.out;
}

TEST(PlanCliTest, SplitEveryOutOfRangeIsOneLineExitTwo) {
  for (const char* bad : {"0", "1000001", "-3", "2.5", "abc", ""}) {
    SCOPED_TRACE(std::string("--split-every '") + bad + "'");
    for (const char* command : {"plan", "run"}) {
      expect_one_line_error(
          run_cli({command, model("squeezenet1_1"), "--devices", "cpu", "--split-every", bad}),
          "--split-every");
    }
  }
}

TEST(PlanCliTest, RunRefusesDevicesThatAreOnlyPlanned) {
  if (!fs::exists(model("squeezenet1_1"))) GTEST_SKIP() << "squeezenet1_1 not present";
  const auto run = run_cli({"run", model("squeezenet1_1"), "--config", deploy_155h()});
  expect_one_line_error(run, "not present on this machine");
}

}  // namespace
}  // namespace hsched

namespace hsched {
namespace {

// `report --trace` draws a run's last request beside the predicted timeline: a measured bar per
// partition it ran; a trace with another format, or a file that is no trace, is one line.
TEST(PlanCliTest, ReportDrawsARunsTraceOnTheTimeline) {
  if (!fs::exists(model("squeezenet1_1"))) GTEST_SKIP() << "squeezenet1_1 not present";
  test::TempDir dir;
  const fs::path trace = dir / "run.json";
  const auto run = run_cli({"run", model("squeezenet1_1"), "--devices", "cpu", "--iterations", "2",
                            "--warmup", "0", "--trace", trace.string()});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto html = run_cli({"report", model("squeezenet1_1"), "--devices", "cpu", "--format",
                             "html", "--trace", trace.string()});
  ASSERT_EQ(html.exit_code, 0) << html.err;
  const auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = html.out.find(what); at != std::string::npos;
         at = html.out.find(what, at + 1)) {
      ++n;
    }
    return n;
  };
  EXPECT_GE(count("class=\"partition\""), 1u);
  EXPECT_EQ(count("class=\"measured\""), count("class=\"partition\""));
  EXPECT_NE(html.out.find("cpu0 measured"), std::string::npos);
  expect_one_line_error(run_cli({"report", model("squeezenet1_1"), "--devices", "cpu", "--json",
                                 "--trace", trace.string()}),
                        "HTML report's timeline only");
  test::write_file(dir / "junk.json", "{\"not\": \"a trace\"}");
  expect_one_line_error(run_cli({"report", model("squeezenet1_1"), "--devices", "cpu", "--format",
                                 "html", "--trace", (dir / "junk.json").string()}),
                        "not a Chrome trace");
}

}  // namespace
}  // namespace hsched
