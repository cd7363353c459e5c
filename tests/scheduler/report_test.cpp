// The fallback report in its four formats, over a hand-built graph and plan: two partitions
// (gpu0 then cpu0), two transfers, a fallback, a substituted node and a policy placement.
#include "scheduler/report/report.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "graph/onnx_import.h"
#include "scheduler/report/report_timeline.h"
#include "support/scoped_env.h"
#include "support/temp_dir.h"

namespace hsched {
namespace {

using test::ScopedEnv;

constexpr const char* kQuotedName = "mm\"q\\b";                   // MatMul: a quote, a backslash
constexpr const char* kScriptName = "<script>alert(1)</script>";  // NonZero: HTML to escape

struct Fixture {
  Graph graph;
  Plan plan;
};

// x -> conv (Conv) -> a -> mm"q\b (MatMul) -> b -> <script>... (NonZero) -> c -> tail (Relu) -> y
Fixture make_fixture(const std::string& tail_name = "tail") {
  Fixture f;
  Graph& g = f.graph;
  g.name = "tiny";
  const ValueId x = g.add_value("x", DType::kF32, Shape({1, 4}));
  const ValueId a = g.add_value("a", DType::kF32, Shape({1, 4}));
  const ValueId b = g.add_value("b", DType::kF32, Shape({1, 4}));
  const ValueId c = g.add_value("c", DType::kI64, Shape({2, 4}));
  const ValueId y = g.add_value("y", DType::kI64, Shape({2, 4}));
  g.add_input(x);
  g.add_output(y);
  g.add_node(Node{"conv", "Conv", "", {x}, {a}, {}});
  g.add_node(Node{kQuotedName, "MatMul", "", {a, a}, {b}, {}});
  g.add_node(Node{kScriptName, "NonZero", "", {b}, {c}, {}});
  g.add_node(Node{tail_name, "Relu", "", {c}, {y}, {}});

  Plan& p = f.plan;
  p.model = "tiny.onnx";
  p.target.name = "test-target";
  p.target.source = "configs/targets/test-target.yaml";
  DeviceProfile cpu;
  cpu.id = "cpu0";
  cpu.name = "Test CPU";
  cpu.present = true;
  DeviceProfile gpu;
  gpu.id = "gpu0";
  gpu.name = "Test iGPU";
  gpu.kind = DeviceKind::kGpu;
  gpu.api = DeviceApi::kOpenCl;
  p.target.devices = {cpu, gpu};

  p.policy.name = "test-policy";
  p.policy.source = "built-in";
  p.policy.fallback = FallbackMode::kWarn;
  p.policy.objective = Objective::kLatency;
  p.policy.choices[OpClass::kConvLinear] = {{"gpu", Precision::kFp16}};
  p.policy.op_choices["MatMul"] = {{"gpu", Precision::kBf16}};
  p.policy.default_choices = {{"cpu", Precision::kFp32}};

  p.nodes = {
      {0, "gpu0", Precision::kFp16, 0, PlacementReason::kFirstChoice, "", 0.5},
      {1, "gpu0", Precision::kFp16, 0, PlacementReason::kSubstituted,
       "gpu0 computes no bf16; substitute fp16", 0.25},
      {2, "cpu0", Precision::kFp32, 1, PlacementReason::kFallback, "", 0.1},
      {3, "cpu0", Precision::kFp32, 1, PlacementReason::kPolicy, "elementwise runs on the CPU",
       0.01},
  };
  p.partitions = {{0, "gpu0", {0, 1}, 0.75, 12.5}, {1, "cpu0", {2, 3}, 0.11, 0}};
  p.transfers = {{x, -1, 0, "cpu0", "gpu0", 16, 0.02}, {b, 0, 1, "gpu0", "cpu0", 16, 0.03}};
  p.rejections = {
      {2, "gpu0", Precision::kFp16, ReasonCode::kOpUnsupported, "no kernel for op NonZero"}};
  p.fallbacks = {{2,
                  {"gpu", Precision::kFp16},
                  "cpu0",
                  Precision::kFp32,
                  ReasonCode::kOpUnsupported,
                  "no kernel for op NonZero"}};
  p.predicted_ms = 0.91;
  p.predicted_run_ms = 0.78;
  p.single_device_ms = {{"cpu0", 2.5}, {"gpu0", std::numeric_limits<double>::infinity()}};
  return f;
}

std::string render(const Fixture& f, ReportFormat format) {
  Result<std::string> out = format_report(f.graph, f.plan, format);
  EXPECT_TRUE(out.is_ok()) << out.status().message();
  return out.is_ok() ? *out : std::string();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

size_t count_of(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

// A folder holding an executable `dot` with the given shell script body.
void write_fake_dot(const test::TempDir& dir, const std::string& body) {
  test::write_file(dir / "dot", "#!/bin/sh\n" + body + "\n");
  ASSERT_EQ(::chmod((dir / "dot").c_str(), 0755), 0);
}

TEST(ReportFormatTest, NamesRoundTripAndUnknownNamesAreRejected) {
  for (ReportFormat format :
       {ReportFormat::kText, ReportFormat::kJson, ReportFormat::kDot, ReportFormat::kHtml}) {
    EXPECT_EQ(parse_report_format(report_format_name(format)), format);
  }
  EXPECT_EQ(parse_report_format("html"), ReportFormat::kHtml);
  EXPECT_FALSE(parse_report_format("pdf").has_value());
  EXPECT_FALSE(parse_report_format("").has_value());
  EXPECT_FALSE(parse_report_format("TEXT").has_value());
}

TEST(ReportTest, PlanNotMadeForTheGraphIsRefused) {
  Fixture f = make_fixture();
  f.plan.nodes.pop_back();
  Result<std::string> out = format_report(f.graph, f.plan, ReportFormat::kText);
  ASSERT_FALSE(out.is_ok());
  EXPECT_EQ(out.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("tiny.onnx"), std::string::npos);
  EXPECT_NE(out.status().message().find("3 nodes but the graph has 4"), std::string::npos)
      << out.status().message();
}

TEST(ReportTest, TextHasHeaderSummaryTablesAndOneLinePerNodeOffItsFirstChoice) {
  const Fixture f = make_fixture();
  const std::string text = render(f, ReportFormat::kText);
  const std::vector<std::string> lines = lines_of(text);
  const std::vector<std::string> expected = {
      "hsched fallback report: tiny.onnx",
      "  model          tiny.onnx (4 nodes)",
      "  target         test-target (from configs/targets/test-target.yaml)",
      "  policy         test-policy (from built-in)",
      "                 fallback warn, objective latency, 100 expected runs",
      "  devices        cpu0: present on this machine",
      "                   cpu/host, Test CPU",
      "                 gpu0: planned from profile (not present)",
      "                   gpu/opencl, Test iGPU",
      "  nodes          4 nodes in 2 partitions",
      "  per device     cpu0  2 nodes (fp32 2)  1 partition  0.110 ms",
      "                 gpu0  2 nodes (fp16 2)  1 partition  0.750 ms",
      "  transfers      2: 32 bytes, 0.050 ms",
      "  predicted      0.780 ms per run; 0.910 ms with the compile amortised",
      "  compile        12.500 ms once, amortised over 100 runs",
      "  single device  cpu0 2.500 ms, gpu0 n/a",
      "                 best cpu0 2.500 ms; speed-up of this plan 2.75x",
      "  placements     fallback 1, first_choice 1, policy 1, substituted 1",
      "  fallbacks      1: op_unsupported 1",
      "  rejections     1: op_unsupported 1",
      "  id  device  nodes  first node                 last node  compute ms",
      "   0  gpu0        2  conv                       mm\"q\\b          0.750",
      "   1  cpu0        2  <script>alert(1)</script>  tail            0.110",
      "  value  bytes  from          to            ms",
      "  x         16  cpu0 (input)  gpu0 (p0)  0.020",
      "  b         16  gpu0 (p0)     cpu0 (p1)  0.030",
      "Nodes not on their first choice (2)",
      "Placed by the policy, its only choice (1 node)",
      "  op    nodes  placed     detail",
      "  Relu      1  cpu0/fp32  elementwise runs on the CPU",
  };
  for (const std::string& line : expected) {
    EXPECT_EQ(std::count(lines.begin(), lines.end(), line), 1) << "missing: [" << line << "]\n"
                                                               << text;
  }
  // One line per node off its first choice: wanted, placed, reason, detail. Neither conv (first
  // choice) nor tail (the policy's only choice, grouped above) is listed.
  const size_t off_start = text.find("Nodes not on their first choice");
  const std::string off = text.substr(off_start, text.find("Placed by the policy") - off_start);
  const std::vector<std::string> off_lines = {
      "  node                       op       wanted    placed     reason          detail",
      "  mm\"q\\b                     MatMul   gpu/bf16  gpu0/fp16  substituted     gpu0 computes "
      "no bf16; substitute fp16",
      "  <script>alert(1)</script>  NonZero  gpu/fp16  cpu0/fp32  op_unsupported  no kernel for op "
      "NonZero",
  };
  for (const std::string& line : off_lines) {
    EXPECT_NE(off.find(line + "\n"), std::string::npos) << "missing: [" << line << "]\n" << off;
  }
  EXPECT_EQ(off.find("conv "), std::string::npos);
  EXPECT_EQ(off.find("tail "), std::string::npos);
  for (const std::string& line : lines) EXPECT_EQ(line.find_last_not_of(' ') + 1, line.size());
  // Deterministic: the same plan gives the same bytes.
  EXPECT_EQ(render(f, ReportFormat::kText), text);
}

TEST(ReportTest, TextShortensLongNamesInTheMiddle) {
  Fixture f = make_fixture("/blocks/" + std::string(70, 'x') + "/mlp/fc2/Relu");
  f.plan.nodes[3].reason = PlacementReason::kCost;  // listed by name
  const std::string text = render(f, ReportFormat::kText);
  // 32 columns for a node name: its start and (more of) its end, the middle elided.
  EXPECT_NE(text.find("  /blocks/x...xxxxxxx/mlp/fc2/Relu  Relu     cpu/fp32"), std::string::npos)
      << text;
  // 30 columns in the partitions table, where first and last node share a line.
  EXPECT_NE(text.find("  /blocks/x...xxxxx/mlp/fc2/Relu  "), std::string::npos) << text;
  // Within 100 columns, but for the free-form detail, which starts early enough to be read.
  for (const std::string& line : lines_of(text)) {
    const size_t detail = line.find("elementwise runs on the CPU");
    if (detail != std::string::npos) {
      EXPECT_LE(detail, 85u) << line;
    } else if (line.find("no bf16") == std::string::npos &&
               line.find("NonZero") == std::string::npos) {
      EXPECT_LE(line.size(), 100u) << line;
    }
  }
}

TEST(ReportTest, JsonHasEveryFieldOfTheSchema) {
  const Fixture f = make_fixture();
  const nlohmann::json j = nlohmann::json::parse(render(f, ReportFormat::kJson));
  EXPECT_EQ(j["schema_version"], kReportSchemaVersion);
  EXPECT_EQ(j["model"], "tiny.onnx");
  EXPECT_DOUBLE_EQ(j["predicted_ms"].get<double>(), 0.91);
  EXPECT_DOUBLE_EQ(j["predicted_run_ms"].get<double>(), 0.78);
  EXPECT_DOUBLE_EQ(j["single_device_ms"]["cpu0"].get<double>(), 2.5);
  EXPECT_TRUE(j["single_device_ms"]["gpu0"].is_null());

  EXPECT_EQ(j["target"]["name"], "test-target");
  EXPECT_EQ(j["target"]["source"], "configs/targets/test-target.yaml");
  ASSERT_EQ(j["target"]["devices"].size(), 2u);
  EXPECT_EQ(j["target"]["devices"][1], nlohmann::json({{"id", "gpu0"},
                                                       {"kind", "gpu"},
                                                       {"api", "opencl"},
                                                       {"name", "Test iGPU"},
                                                       {"present", false}}));
  EXPECT_EQ(j["policy"]["name"], "test-policy");
  EXPECT_EQ(j["policy"]["source"], "built-in");
  EXPECT_EQ(j["policy"]["fallback"], "warn");
  EXPECT_EQ(j["policy"]["objective"], "latency");

  ASSERT_EQ(j["nodes"].size(), 4u);
  const nlohmann::json& mm = j["nodes"][1];
  EXPECT_EQ(mm["name"], kQuotedName);
  EXPECT_EQ(mm["op"], "MatMul");
  EXPECT_EQ(mm["device"], "gpu0");
  EXPECT_EQ(mm["precision"], "fp16");
  EXPECT_EQ(mm["partition"], 0);
  EXPECT_EQ(mm["wanted"], "gpu/bf16");
  EXPECT_EQ(mm["reason"], "substituted");
  EXPECT_EQ(mm["detail"], "gpu0 computes no bf16; substitute fp16");
  EXPECT_DOUBLE_EQ(mm["predicted_ms"].get<double>(), 0.25);
  EXPECT_EQ(j["nodes"][2]["reason"], "fallback");
  EXPECT_EQ(j["nodes"][3]["reason"], "policy");

  ASSERT_EQ(j["partitions"].size(), 2u);
  EXPECT_EQ(j["partitions"][0]["id"], 0);
  EXPECT_EQ(j["partitions"][0]["device"], "gpu0");
  EXPECT_EQ(j["partitions"][0]["node_count"], 2);
  EXPECT_EQ(j["partitions"][0]["nodes"], nlohmann::json({"conv", kQuotedName}));
  EXPECT_DOUBLE_EQ(j["partitions"][0]["compute_ms"].get<double>(), 0.75);
  EXPECT_DOUBLE_EQ(j["partitions"][0]["compile_ms"].get<double>(), 12.5);

  ASSERT_EQ(j["transfers"].size(), 2u);
  EXPECT_EQ(j["transfers"][1]["value"], "b");
  EXPECT_EQ(j["transfers"][1]["bytes"], 16);
  EXPECT_EQ(j["transfers"][1]["from_partition"], 0);
  EXPECT_EQ(j["transfers"][1]["to_partition"], 1);
  EXPECT_EQ(j["transfers"][1]["from_device"], "gpu0");
  EXPECT_EQ(j["transfers"][1]["to_device"], "cpu0");
  EXPECT_EQ(j["transfers"][0]["from_partition"], -1);

  ASSERT_EQ(j["fallbacks"].size(), 1u);
  EXPECT_EQ(j["fallbacks"][0], nlohmann::json({{"node", kScriptName},
                                               {"op", "NonZero"},
                                               {"wanted", "gpu/fp16"},
                                               {"device", "cpu0"},
                                               {"precision", "fp32"},
                                               {"reason", "op_unsupported"},
                                               {"detail", "no kernel for op NonZero"}}));
  ASSERT_EQ(j["rejections"].size(), 1u);
  EXPECT_EQ(j["rejections"][0]["device"], "gpu0");
  EXPECT_EQ(j["rejections"][0]["precision"], "fp16");
  EXPECT_EQ(j["rejections"][0]["reason"], "op_unsupported");

  const nlohmann::json& s = j["summary"];
  EXPECT_EQ(s["node_count"], 4);
  EXPECT_EQ(s["partition_count"], 2);
  EXPECT_EQ(s["transfer_count"], 2);
  EXPECT_EQ(s["transfer_bytes"], 32);
  EXPECT_DOUBLE_EQ(s["transfer_ms"].get<double>(), 0.05);
  EXPECT_DOUBLE_EQ(s["compile_ms"].get<double>(), 12.5);
  EXPECT_EQ(s["devices"][0]["device"], "cpu0");
  EXPECT_EQ(s["devices"][1]["nodes_per_precision"], nlohmann::json({{"fp16", 2}}));
  EXPECT_EQ(s["fallbacks_by_reason"], nlohmann::json({{"op_unsupported", 1}}));
  EXPECT_EQ(s["placements_by_reason"]["substituted"], 1);
  EXPECT_EQ(s["best_single_device"], nlohmann::json({{"device", "cpu0"}, {"ms", 2.5}}));

  // plan_to_json is the report without its summary.
  nlohmann::json without_summary = j;
  without_summary.erase("summary");
  EXPECT_EQ(plan_to_json(f.graph, f.plan), without_summary);
}

TEST(ReportTest, DotHasOneClusterPerPartitionEscapedNamesAndHighlightedTransfers) {
  const Fixture f = make_fixture();
  const std::string dot = render(f, ReportFormat::kDot);
  EXPECT_EQ(dot.rfind("digraph plan {", 0), 0u);
  EXPECT_EQ(count_of(dot, "subgraph cluster_"), 2u);
  EXPECT_NE(dot.find("label=\"p0: gpu0, 0.750 ms\""), std::string::npos) << dot;
  EXPECT_NE(dot.find("label=\"p1: cpu0, 0.110 ms\""), std::string::npos);
  // The quote and the backslash are escaped; the raw name never appears inside a label.
  EXPECT_NE(dot.find("n1 [label=\"MatMul\\nmm\\\"q\\\\b\\nfp16\""), std::string::npos) << dot;
  EXPECT_EQ(dot.find(kQuotedName), std::string::npos);
  // Fixed colours per kind: gpu nodes green, cpu nodes blue.
  EXPECT_NE(dot.find("n0 [label=\"Conv\\nconv\\nfp16\", fillcolor=\"#d9f0d3\""), std::string::npos);
  EXPECT_NE(dot.find("n3 [label=\"Relu\\ntail\\nfp32\", fillcolor=\"#dbe8f6\""), std::string::npos);
  // Transfers (x into gpu0, b into cpu0) are red and labelled; other edges are not.
  EXPECT_NE(dot.find("in0 -> n0 [tooltip=\"x 1x4 f32\", color=\"#d62728\""), std::string::npos)
      << dot;
  EXPECT_NE(dot.find("n1 -> n2 [tooltip=\"b 1x4 f32\", color=\"#d62728\", fontcolor=\"#d62728\", "
                     "penwidth=2.5, label=\"16 B, 0.030 ms\"]"),
            std::string::npos)
      << dot;
  EXPECT_NE(dot.find("n0 -> n1 [tooltip=\"a 1x4 f32\"];"), std::string::npos);
  EXPECT_EQ(count_of(dot, "penwidth"), 2u);
  EXPECT_EQ(count_of(dot, "n0 -> n1"), 1u);  // MatMul reads `a` twice: one edge
  EXPECT_NE(dot.find("n3 -> out0 [tooltip="), std::string::npos);
  EXPECT_EQ(count_of(dot, "{"), count_of(dot, "}"));
}

TEST(ReportTest, HtmlEscapesEverythingAndShowsDotSourceWithoutGraphviz) {
  const Fixture f = make_fixture();
  const test::TempDir empty;
  const ScopedEnv path("PATH", empty.path().string());
  const std::string html = render(f, ReportFormat::kHtml);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(count_of(html, "<script"), 1u);  // the page's own (zoom and pan), nothing injected
  // The timeline: a bar per partition, names escaped in the tooltips.
  EXPECT_NE(html.find("<svg id=\"timeline\""), std::string::npos);
  EXPECT_EQ(count_of(html, "<rect class=\"partition\""), f.plan.partitions.size());
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(html.find("mm&quot;q\\b"), std::string::npos);
  EXPECT_NE(html.find("<br>gpu0: planned from profile (not present)<br>  gpu/opencl, Test iGPU"),
            std::string::npos);
  EXPECT_NE(html.find("<h2>Nodes not on their first choice (2)</h2>"), std::string::npos);
  EXPECT_NE(html.find("<tr><td>Relu</td><td class=\"num\">1</td><td>cpu0/fp32</td>"),
            std::string::npos);
  EXPECT_NE(html.find("<td>no kernel for op NonZero</td>"), std::string::npos);
  EXPECT_NE(html.find("install graphviz for the graph"), std::string::npos);
  EXPECT_NE(html.find("<pre>digraph plan {"), std::string::npos);
  EXPECT_EQ(count_of(html, "<svg"), 1u);  // the timeline's: no graph
  EXPECT_EQ(html.substr(html.size() - 8), "</html>\n");
}

TEST(ReportTest, HtmlInlinesTheSvgThatDotWrites) {
  const Fixture f = make_fixture();
  const test::TempDir bin;
  write_fake_dot(bin,
                 "grep -q 'subgraph cluster_1' || exit 4\n"
                 "printf '<?xml version=\"1.0\"?>\\n<!DOCTYPE svg>\\n<svg id=\"fake\"></svg>\\n'");
  const ScopedEnv path("PATH", bin.path().string() + ":/usr/bin:/bin");
  const std::string html = render(f, ReportFormat::kHtml);
  EXPECT_NE(html.find("<div class=\"graph zoom\" id=\"graph\">\n<svg id=\"fake\"></svg>"),
            std::string::npos)
      << html;
  EXPECT_EQ(html.find("<?xml"), std::string::npos);
  EXPECT_EQ(html.find("install graphviz"), std::string::npos);
}

TEST(ReportTest, HtmlSurvivesAFailingDot) {
  const Fixture f = make_fixture();
  const test::TempDir bin;
  write_fake_dot(bin, "cat >/dev/null; echo 'Error: syntax' >&2; exit 3");
  const ScopedEnv path("PATH", bin.path().string() + ":/usr/bin:/bin");
  const std::string html = render(f, ReportFormat::kHtml);
  EXPECT_NE(html.find("install graphviz for the graph (graphviz: dot exited with status 3)"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<pre>digraph plan {"), std::string::npos);
}

// True when an executable `dot` is on PATH (Graphviz installed).
bool graphviz_on_path() {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (!dir.empty() && ::access((std::filesystem::path(dir) / "dot").c_str(), X_OK) == 0) {
      return true;
    }
  }
  return false;
}

// With a real Graphviz the DOT we write must lay out: one SVG cluster per partition.
TEST(ReportTest, HtmlDrawsTheGraphWithGraphviz) {
  if (!graphviz_on_path()) GTEST_SKIP() << "Graphviz dot is not on PATH";
  const Fixture f = make_fixture();
  const std::string html = render(f, ReportFormat::kHtml);
  EXPECT_EQ(html.find("install graphviz"), std::string::npos) << html;
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("<title>cluster_1</title>"), std::string::npos);
  EXPECT_EQ(count_of(html, "<script"), 1u);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
}

// A shared model on one CPU partition: every format works at full size and the JSON lists every
// node once.
TEST(ReportTest, SharedModelOnOnePartition) {
  const auto file = test::models_dir() / "mobilenet_v2" / "model.onnx";
  if (!std::filesystem::exists(file)) GTEST_SKIP() << file << " absent";
  Result<Graph> graph = import_onnx_file(file, {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  Fixture f = make_fixture();
  f.graph = std::move(graph).value();
  f.plan.nodes.clear();
  f.plan.fallbacks.clear();
  f.plan.rejections.clear();
  f.plan.transfers.clear();
  Partition all{0, "cpu0", {}, 0, 0};
  for (size_t i = 0; i < f.graph.nodes().size(); ++i) {
    const auto id = static_cast<NodeId>(i);
    f.plan.nodes.push_back({id, "cpu0", Precision::kFp32, 0, PlacementReason::kPolicy, "", 0.01});
    all.nodes.push_back(id);
  }
  f.plan.partitions = {all};
  const nlohmann::json j = nlohmann::json::parse(render(f, ReportFormat::kJson));
  EXPECT_EQ(j["nodes"].size(), f.graph.nodes().size());
  EXPECT_EQ(j["partitions"][0]["node_count"], f.graph.nodes().size());
  EXPECT_EQ(count_of(render(f, ReportFormat::kDot), "subgraph cluster_"), 1u);
  const std::string text = render(f, ReportFormat::kText);
  EXPECT_NE(text.find("Nodes not on their first choice (0)\n  (none)\n"), std::string::npos);
  EXPECT_NE(text.find("Placed by the policy, its only choice (" +
                      std::to_string(f.graph.nodes().size()) + " nodes)"),
            std::string::npos)
      << text;
  if (graphviz_on_path()) {
    EXPECT_NE(render(f, ReportFormat::kHtml).find("<title>cluster_0</title>"), std::string::npos);
  }
}

}  // namespace
}  // namespace hsched

namespace hsched {
namespace {

// One predicted run: a partition starts after the one before it on its device and after every
// transfer into it (its producer's end plus the copy), and lasts its run_ms.
TEST(ReportTest, TimelineSpansFollowDevicesAndTransfers) {
  const Fixture f = make_fixture();
  const std::vector<report::PartitionSpan> spans = report::predicted_spans(f.plan);
  ASSERT_EQ(spans.size(), f.plan.partitions.size());
  for (size_t i = 0; i < spans.size(); ++i) {
    const Partition& p = f.plan.partitions[i];
    EXPECT_NEAR(spans[i].end_ms - spans[i].start_ms, p.run_ms, 1e-12);
    for (size_t j = 0; j < i; ++j) {
      if (f.plan.partitions[j].device == p.device) {
        EXPECT_GE(spans[i].start_ms, spans[j].end_ms);
      }
    }
    for (const Transfer& t : f.plan.transfers) {
      if (t.to_partition != p.id) continue;
      for (size_t j = 0; j < i; ++j) {
        if (f.plan.partitions[j].id == t.from_partition) {
          EXPECT_GE(spans[i].start_ms + 1e-12, spans[j].end_ms + t.predicted_ms);
        }
      }
    }
  }
}

}  // namespace
}  // namespace hsched
