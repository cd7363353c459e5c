// nodes_without_steps against what CpuProgram::compile really does: on the demo model and the
// shared models (skipped when absent), every node is either one of the program's steps or one
// the analysis reports, exactly.
#include <algorithm>
#include <filesystem>

#include <gtest/gtest.h>

#include "backends/cpu/program.h"
#include "graph/demo_model.h"
#include "graph/onnx_builder.h"
#include "graph/onnx_import.h"
#include "support/temp_dir.h"

namespace hsched::cpu {
namespace {

namespace fs = std::filesystem;

int64_t count_without_steps(const Graph& graph) {
  const std::vector<bool> without = nodes_without_steps(graph);
  EXPECT_EQ(without.size(), graph.nodes().size());
  return std::count(without.begin(), without.end(), true);
}

// The program's steps are the nodes the analysis does not report, and the program's own counts
// of folded, fused and aliased nodes add up to the reported ones.
void expect_matches_program(const Graph& graph, const std::string& name) {
  const int64_t without = count_without_steps(graph);
  auto program = CpuProgram::compile(graph, CpuOptions{});
  ASSERT_TRUE(program.is_ok()) << name << ": " << program.status().message();
  const CpuProgramStats& stats = (*program)->stats();
  EXPECT_EQ(static_cast<int64_t>(graph.nodes().size()) - without, stats.kernels) << name;
  EXPECT_EQ(without, stats.folded_nodes + stats.fused_nodes + stats.aliased_views) << name;
}

TEST(StepPlanTest, DemoModelMatchesProgram) {
  auto graph = build_demo_graph();
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  ASSERT_GT(count_without_steps(*graph), 0);  // at least the stem's fused ReLU
  expect_matches_program(*graph, kDemoModelName);
}

class SharedModelStepPlanTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SharedModelStepPlanTest, MatchesProgram) {
  const fs::path path = ::hsched::test::models_dir() / GetParam() / "model.onnx";
  if (!fs::exists(path)) GTEST_SKIP() << "no model at " << path;
  auto graph = import_onnx_file(path, {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  EXPECT_GT(count_without_steps(*graph), 0);  // every one of them has fused activations
  expect_matches_program(*graph, GetParam());
}

INSTANTIATE_TEST_SUITE_P(Models, SharedModelStepPlanTest,
                         ::testing::Values("resnet18", "mobilenet_v2", "convnext_atto", "vit_tiny",
                                           "bert_mini", "vae_decoder_small"));

// Conv -> Relu (a post-op) -> Reshape (a view of an activation) -> Softmax, plus Mul of two
// initializers (folded) feeding an Add.
TEST(StepPlanTest, ReportsFusedViewAndFoldedNodes) {
  OnnxBuilder b(17);
  b.input("x", DType::kF32, {1, 3, 8, 8}).output("y", DType::kF32, {1, 256});
  b.initializer_random("w", {4, 3, 3, 3}, 0.5f, 1);
  b.initializer_i64("shape", {2}, {1, 256});
  b.initializer_random("k1", {1, 256}, 0.5f, 2).initializer_random("k2", {1, 256}, 0.5f, 3);
  set_attr(b.node("Conv", {"x", "w"}, {"c"}, "conv"), "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("Relu", {"c"}, {"r"}, "relu");
  b.node("Reshape", {"r", "shape"}, {"flat"}, "reshape");
  b.node("Mul", {"k1", "k2"}, {"k"}, "mul");
  b.node("Add", {"flat", "k"}, {"sum"}, "add");
  b.node("Softmax", {"sum"}, {"y"}, "softmax");
  auto graph = import_onnx_model(b.model(), {}, "step_plan", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  const size_t values_before = graph->values().size();
  const std::vector<bool> without = nodes_without_steps(*graph);
  ASSERT_EQ(without.size(), graph->nodes().size());
  for (NodeId id = 0; id < static_cast<NodeId>(graph->nodes().size()); ++id) {
    const std::string& name = graph->node(id).name;
    const bool expected = name == "relu" || name == "reshape" || name == "mul";
    EXPECT_EQ(without[static_cast<size_t>(id)], expected) << name;
  }
  EXPECT_EQ(graph->values().size(), values_before);  // the analysis works on a copy
  expect_matches_program(*graph, "step_plan");
}

TEST(StepPlanTest, UnsortableGraphReportsNothing) {
  Graph graph;
  const ValueId a = graph.add_value("a", DType::kF32, Shape{1, 4});
  const ValueId b = graph.add_value("b", DType::kF32, Shape{1, 4});
  graph.add_node(Node{"first", "Relu", "", {b}, {a}, {}});
  graph.add_node(Node{"second", "Identity", "", {a}, {b}, {}});
  graph.add_output(b);
  EXPECT_EQ(nodes_without_steps(graph), std::vector<bool>(2, false));
}

}  // namespace
}  // namespace hsched::cpu
