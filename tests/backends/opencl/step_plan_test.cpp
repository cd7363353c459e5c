// nodes_without_kernels: the analysis alone on a hand-built graph (no device needed), then
// against a ClProgram compiled for the demo model on the first OpenCL device (PoCL in CI;
// skipped, not passed, without one).
#include <algorithm>
#include <set>

#include <gtest/gtest.h>

#include "backends/opencl/program.h"
#include "graph/demo_model.h"
#include "graph/onnx_builder.h"
#include "graph/onnx_import.h"
#include "graph/subgraph.h"
#include "opencl_test_util.h"
#include "support/temp_dir.h"

namespace hsched::opencl {
namespace {

// conv -> relu (its epilogue) -> reshape (a view) -> softmax, and the reshape's output -> MatMul
// -> Add of a constant row (the MatMul's epilogue) -> an exported GELU (one Gelu step in its last
// Mul's place); conv_out's output is also a graph output, so its relu cannot be absorbed.
Graph conv_relu_reshape_graph() {
  OnnxBuilder b(17);
  b.input("x", DType::kF32, {1, 3, 8, 8});
  b.output("y", DType::kF32, {1, 256}).output("c2", DType::kF32, {1, 4, 8, 8});
  b.output("r2", DType::kF32, {1, 4, 8, 8}).output("z", DType::kF32, {1, 8});
  b.output("g", DType::kF32, {1, 8});
  b.initializer_random("wm", {256, 8}, 0.5f, 3).initializer_random("bm", {8}, 0.5f, 4);
  b.initializer_f32("sqrt2", {}, {1.4142135f}).initializer_f32("one", {}, {1.0f});
  b.initializer_f32("half", {}, {0.5f});
  b.initializer_random("w", {4, 3, 3, 3}, 0.5f, 1).initializer_random("w2", {4, 3, 3, 3}, 0.5f, 2);
  b.initializer_i64("shape", {2}, {1, 256});
  set_attr(b.node("Conv", {"x", "w"}, {"c"}, "conv"), "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("Relu", {"c"}, {"r"}, "relu");
  b.node("Reshape", {"r", "shape"}, {"flat"}, "reshape");
  b.node("Softmax", {"flat"}, {"y"}, "softmax");
  set_attr(b.node("Conv", {"x", "w2"}, {"c2"}, "conv_out"), "pads",
           std::vector<int64_t>{1, 1, 1, 1});
  b.node("Relu", {"c2"}, {"r2"}, "relu_out");
  b.node("MatMul", {"flat", "wm"}, {"p"}, "matmul");
  b.node("Add", {"bm", "p"}, {"z"}, "bias");
  b.node("Div", {"z", "sqrt2"}, {"g1"}, "gelu_div");
  b.node("Erf", {"g1"}, {"g2"}, "gelu_erf");
  b.node("Add", {"g2", "one"}, {"g3"}, "gelu_add");
  b.node("Mul", {"z", "g3"}, {"g4"}, "gelu_mul");
  b.node("Mul", {"g4", "half"}, {"g"}, "gelu");
  auto graph = import_onnx_model(b.model(), {}, "cl_step_plan", {});
  EXPECT_TRUE(graph.is_ok()) << graph.status().message();
  return graph.is_ok() ? std::move(*graph) : Graph{};
}

TEST(ClStepPlanTest, ReportsViewsAndFusedEpilogues) {
  const Graph graph = conv_relu_reshape_graph();
  const std::vector<bool> without = nodes_without_kernels(graph);
  ASSERT_EQ(without.size(), graph.nodes().size());
  ASSERT_EQ(graph.nodes().size(), 13u);
  const std::set<std::string> fused = {"relu",     "reshape",  "bias",    "gelu_div",
                                       "gelu_erf", "gelu_add", "gelu_mul"};
  for (NodeId id = 0; id < static_cast<NodeId>(graph.nodes().size()); ++id) {
    const std::string& name = graph.node(id).name;
    EXPECT_EQ(without[static_cast<size_t>(id)], fused.count(name) == 1) << name;
  }
}

// An Add of a column ([N, 1]: one value per row) after a square MatMul is no bias row: not fused.
TEST(ClStepPlanTest, AColumnAddedToAMatMulIsNoBias) {
  OnnxBuilder b(17);
  b.input("x", DType::kF32, {8, 8}).output("y", DType::kF32, {8, 8});
  b.initializer_random("w", {8, 8}, 0.5f, 1).initializer_random("column", {8, 1}, 0.5f, 2);
  b.node("MatMul", {"x", "w"}, {"p"}, "matmul");
  b.node("Add", {"p", "column"}, {"y"}, "add");
  auto graph = import_onnx_model(b.model(), {}, "cl_column", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  EXPECT_EQ(nodes_without_kernels(*graph), std::vector<bool>(2, false));
}

// A Concat of a Conv's output and a Sigmoid made after the Conv copies the Sigmoid's alone (the
// Conv writes in place): half its copies. A Concat of two Convs runs none, nor one of the graph
// input and a Conv, which copies the input (both absorbed); other nodes all theirs.
TEST(ClStepPlanTest, AConcatSharesItsCopiesWithConvsWritingInPlace) {
  OnnxBuilder b(17);
  b.input("x", DType::kF32, {1, 4, 5, 5});
  b.output("y", DType::kF32, {1, 6, 5, 5}).output("z", DType::kF32, {1, 4, 5, 5});
  b.output("v", DType::kF32, {1, 6, 5, 5});
  b.initializer_random("w1", {2, 4, 1, 1}, 0.5f, 1).initializer_random("w2", {2, 4, 1, 1}, 0.5f, 2);
  b.initializer_random("w3", {2, 4, 1, 1}, 0.5f, 3).initializer_random("w4", {2, 4, 1, 1}, 0.5f, 4);
  b.node("Conv", {"x", "w1"}, {"c1"}, "conv1");
  b.node("Sigmoid", {"x"}, {"s"}, "sigmoid");
  set_attr(b.node("Concat", {"c1", "s"}, {"y"}, "partial"), "axis", int64_t{1});
  b.node("Conv", {"x", "w2"}, {"c2"}, "conv2");
  b.node("Conv", {"x", "w3"}, {"c3"}, "conv3");
  set_attr(b.node("Concat", {"c2", "c3"}, {"z"}, "whole"), "axis", int64_t{1});
  b.node("Conv", {"x", "w4"}, {"c4"}, "conv4");
  set_attr(b.node("Concat", {"x", "c4"}, {"v"}, "carried"), "axis", int64_t{1});
  auto graph = import_onnx_model(b.model(), {}, "cl_concat_share", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  const KernelHints hints = kernel_hints(*graph);
  ASSERT_EQ(hints.copy_share.size(), graph->nodes().size());
  for (NodeId id = 0; id < static_cast<NodeId>(graph->nodes().size()); ++id) {
    const std::string& name = graph->node(id).name;
    EXPECT_EQ(hints.without[static_cast<size_t>(id)], name == "whole" || name == "carried") << name;
    EXPECT_DOUBLE_EQ(hints.copy_share[static_cast<size_t>(id)], name == "partial" ? 0.5 : 1.0)
        << name;
  }
}

TEST(ClStepPlanTest, UnsortableGraphReportsNothing) {
  Graph graph;
  const ValueId a = graph.add_value("a", DType::kF32, Shape{1, 4});
  const ValueId b = graph.add_value("b", DType::kF32, Shape{1, 4});
  graph.add_node(Node{"first", "Relu", "", {b}, {a}, {}});
  graph.add_node(Node{"second", "Reshape", "", {a}, {b}, {}});
  graph.add_output(b);
  EXPECT_EQ(nodes_without_kernels(graph), std::vector<bool>(2, false));
}

// The program's kernels are the nodes the analysis does not report, and its counts of views and
// fused activations add up to the reported ones.
void expect_matches_program(const Graph& graph, std::shared_ptr<DeviceRuntime> runtime,
                            const std::string& name) {
  const std::vector<bool> without = nodes_without_kernels(graph);
  const auto reported = std::count(without.begin(), without.end(), true);
  EXPECT_GT(reported, 0) << name;
  auto program = ClProgram::compile(graph, std::move(runtime), Storage::kFloat32, 300000);
  ASSERT_TRUE(program.is_ok()) << name << ": " << program.status().message();
  const ProgramStats& stats = (*program)->stats();
  EXPECT_EQ(static_cast<int64_t>(graph.nodes().size()) - reported, stats.kernels) << name;
  EXPECT_EQ(reported, stats.aliased_views + stats.fused_epilogues) << name;
}

// The hand-built graph, then the demo model's nodes the OpenCL backend takes (all but its
// BatchNormalizations, which a plan would give to another device) as one partition.
TEST(ClStepPlanTest, MatchesCompiledPrograms) {
  test::TempDir cache_dir;
  const std::shared_ptr<DeviceRuntime> runtime = opencl_test::first_runtime(cache_dir);
  if (!runtime) GTEST_SKIP() << "no OpenCL platform or device on this machine";
  expect_matches_program(conv_relu_reshape_graph(), runtime, "conv_relu_reshape");

  auto demo = build_demo_graph();
  ASSERT_TRUE(demo.is_ok()) << demo.status().message();
  auto order = demo->topological_order();
  ASSERT_TRUE(order.is_ok());
  std::vector<NodeId> supported;
  for (NodeId id : *order) {
    if (!check_node(*demo, demo->node(id))) supported.push_back(id);
  }
  ASSERT_GT(supported.size(), 0u);
  expect_matches_program(extract_subgraph(*demo, supported).graph, runtime, kDemoModelName);
}

}  // namespace
}  // namespace hsched::opencl
