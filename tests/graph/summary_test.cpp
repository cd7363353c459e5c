// summarize(): parameters, histogram, GFLOP, peak activation memory and non-static tensors.
#include "graph/summary.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "graph/demo_model.h"

namespace hsched {
namespace {

NodeId add(Graph& g, const std::string& name, const std::string& op, std::vector<ValueId> inputs,
           std::vector<ValueId> outputs) {
  Node node;
  node.name = name;
  node.op_type = op;
  node.inputs = std::move(inputs);
  node.outputs = std::move(outputs);
  return g.add_node(std::move(node));
}

// x(400 B) -> relu -> a(400 B) -> add(a, b0) -> y(400 B); b0 is a 10-element weight;
// a side branch x -> sigmoid -> s (4000 B) -> reduce -> r(4 B) keeps x alive for a while.
Graph small_graph() {
  Graph g;
  g.name = "small";
  g.opset = 17;
  const ValueId x = g.add_value("x", DType::kF32, Shape{100});
  const ValueId b0 = g.add_constant("b0", Tensor(DType::kF32, {100}));
  g.add_constant("unused", Tensor(DType::kF32, {1000}));
  const ValueId a = g.add_value("a", DType::kF32, Shape{100});
  const ValueId s = g.add_value("s", DType::kF32, Shape{1000});
  const ValueId r = g.add_value("r", DType::kF32, Shape{1});
  const ValueId y = g.add_value("y", DType::kF32, Shape{100});
  g.add_input(x);
  add(g, "relu", "Relu", {x}, {a});
  add(g, "wide", "Tile", {x}, {s});
  add(g, "reduce", "ReduceSum", {s}, {r});
  add(g, "add", "Add", {a, b0}, {y});
  g.add_output(y);
  g.add_output(r);
  return g;
}

TEST(SummaryTest, SmallGraph) {
  const ModelSummary s = summarize(small_graph(), "small.onnx");
  EXPECT_EQ(s.model, "small.onnx");
  EXPECT_EQ(s.opset, 17);
  EXPECT_EQ(s.nodes, 4);
  EXPECT_EQ(s.params, 100);  // "unused" is read by no node
  EXPECT_EQ(s.param_bytes, 400);
  EXPECT_EQ(s.non_static_tensors, 0);
  EXPECT_EQ(s.ops.at("Relu"), 1);
  EXPECT_EQ(s.ops.at("Tile"), 1);
  // relu: x + a = 800; wide: x + a + s = 4800 (x freed after); reduce: a + s + r = 4404.
  EXPECT_EQ(s.peak_activation_bytes, 4800);
  // Relu 100 + Tile 0 + ReduceSum 1000 + Add 100.
  EXPECT_DOUBLE_EQ(s.gflop, 1200 / 1e9);
}

TEST(SummaryTest, CountsNonStaticTensors) {
  Graph g;
  const ValueId x = g.add_value("x", DType::kF32, Shape{kDynamicDim, 4});
  const ValueId y = g.add_value("y", DType::kF32, Shape{});  // rank unknown
  const ValueId z = g.add_value("z", DType::kUndefined, Shape{2, 4});
  g.add_value("dangling", DType::kF32, Shape{kDynamicDim});  // neither fed nor computed
  g.add_input(x);
  add(g, "n0", "Relu", {x}, {y});
  add(g, "n1", "Relu", {y}, {z});
  g.add_output(z);
  const ModelSummary s = summarize(g, "m");
  EXPECT_EQ(s.non_static_tensors, 3);
}

TEST(SummaryTest, CycleFallsBackToNodeOrder) {
  Graph g;
  const ValueId a = g.add_value("a", DType::kF32, Shape{4});
  const ValueId b = g.add_value("b", DType::kF32, Shape{4});
  add(g, "n0", "Relu", {b}, {a});
  add(g, "n1", "Relu", {a}, {b});
  const ModelSummary s = summarize(g, "cyclic");
  EXPECT_EQ(s.nodes, 2);
  EXPECT_EQ(s.ops.at("Relu"), 2);
}

TEST(SummaryTest, TextSortsOpsByCountThenName) {
  ModelSummary s;
  s.model = "m";
  s.ops = {{"Add", 2}, {"Conv", 5}, {"Abs", 2}};
  const std::string text = summary_to_text(s);
  const size_t conv = text.find("Conv");
  const size_t abs = text.find("Abs");
  const size_t add_op = text.find("Add");
  ASSERT_NE(conv, std::string::npos);
  EXPECT_LT(conv, abs);
  EXPECT_LT(abs, add_op);
}

TEST(SummaryTest, JsonMarksDynamicDims) {
  ModelSummary s;
  s.inputs.push_back({"x", DType::kF32, Shape{kDynamicDim, 3}});
  s.outputs.push_back({"y", DType::kI64, Shape{}});
  const nlohmann::json json = summary_to_json(s);
  EXPECT_EQ(json["inputs"][0]["shape"], nlohmann::json({-1, 3}));
  EXPECT_EQ(json["inputs"][0]["dtype"], "f32");
  EXPECT_TRUE(json["outputs"][0]["shape"].is_null());
  EXPECT_EQ(json["outputs"][0]["dtype"], "i64");
}

TEST(SummaryTest, DemoGraph) {
  auto graph = build_demo_graph();
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  const ModelSummary s = summarize(*graph, kDemoModelName);
  EXPECT_EQ(s.opset, 17);
  EXPECT_EQ(s.nodes, 17);
  EXPECT_EQ(s.non_static_tensors, 0);
  EXPECT_EQ(s.ops.at("Conv"), 6);
  EXPECT_EQ(s.ops.at("Relu"), 5);
  EXPECT_EQ(s.ops.at("Add"), 2);
  EXPECT_EQ(s.ops.at("BatchNormalization"), 1);
  EXPECT_EQ(s.ops.at("GlobalAveragePool"), 1);
  EXPECT_EQ(s.ops.at("Flatten"), 1);
  EXPECT_EQ(s.ops.at("Gemm"), 1);
  // Weights: stem 3->16 3x3 (448) + BN (64) + block1 2x 16->16 3x3 (4640) + block2 16->32 3x3
  // (4640), 32->32 3x3 (9248), 1x1 projection (544) + fc 32->10 (330).
  EXPECT_EQ(s.params, 19914);
  EXPECT_EQ(s.param_bytes, 19914 * 4);
  // Worst point: in block1 three 1x16x64x64 f32 tensors (256 KiB each) are live at once.
  EXPECT_EQ(s.peak_activation_bytes, 3 * 16 * 64 * 64 * 4);
  EXPECT_NEAR(s.gflop, 0.07159873, 1e-9);
  ASSERT_EQ(s.inputs.size(), 1u);
  EXPECT_EQ(s.inputs[0].shape, (Shape{1, 3, 64, 64}));
  ASSERT_EQ(s.outputs.size(), 1u);
  EXPECT_EQ(s.outputs[0].shape, (Shape{1, 10}));
}

}  // namespace
}  // namespace hsched
