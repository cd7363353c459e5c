// ClProgram's fusions (step_plan.h) against the CPU backend: each test compiles a graph of fused
// nodes on the first OpenCL device (PoCL in CI; skipped, not passed, without one), checks how many
// kernels run and how many nodes they absorb, and compares every output (program_fusion_util.h).
// Transformer patterns: program_transformer_test.cpp.
#include <cmath>
#include <set>
#include <string>

#include "graph/onnx_builder.h"
#include "graph/onnx_import.h"
#include "program_fusion_util.h"

namespace hsched::opencl {
namespace {

using fusion_test::ClFusionTest;
using fusion_test::expect_fused_matches_cpu;
using fusion_test::Fused;

// Two MatMuls with their bias Adds (either operand order) fused in, each followed by an exported
// GELU as the rest of its epilogue: x / sqrt(2) and (1 + erf) x * 0.5 in one, x * (1 / sqrt(2))
// and (x * 0.5) (1 + erf) in the other. Two kernels for 14 nodes, the CPU's values to fp32
// rounding.
TEST_F(ClFusionTest, FusedBiasAndGeluMatchTheCpu) {
  OnnxBuilder b(17);
  b.input("x", DType::kF32, {2, 6, 40});
  b.output("y1", DType::kF32, {2, 6, 24}).output("y2", DType::kF32, {2, 6, 24});
  b.initializer_random("w1", {40, 24}, 0.5f, 3).initializer_random("b1", {24}, 0.5f, 4);
  b.initializer_random("w2", {40, 24}, 0.5f, 5).initializer_random("b2", {1, 24}, 0.5f, 6);
  b.initializer_f32("sqrt2", {}, {1.4142135f}).initializer_f32("rsqrt2", {}, {0.70710677f});
  b.initializer_f32("one", {}, {1.0f}).initializer_f32("half", {1}, {0.5f});
  b.node("MatMul", {"x", "w1"}, {"p1"}, "mm1");
  b.node("Add", {"p1", "b1"}, {"z1"}, "bias1");
  b.node("Div", {"z1", "sqrt2"}, {"d1"});
  b.node("Erf", {"d1"}, {"e1"});
  b.node("Add", {"e1", "one"}, {"a1"});
  b.node("Mul", {"z1", "a1"}, {"m1"});
  b.node("Mul", {"m1", "half"}, {"y1"});
  b.node("MatMul", {"x", "w2"}, {"p2"}, "mm2");
  b.node("Add", {"b2", "p2"}, {"z2"}, "bias2");
  b.node("Mul", {"rsqrt2", "z2"}, {"d2"});
  b.node("Erf", {"d2"}, {"e2"});
  b.node("Add", {"one", "e2"}, {"a2"});
  b.node("Mul", {"z2", "half"}, {"h2"});
  b.node("Mul", {"a2", "h2"}, {"y2"});
  auto graph = import_onnx_model(b.model(), {}, "cl_fused", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  Tensor x(DType::kF32, {2, 6, 40});
  auto values = x.values<float>();
  for (size_t i = 0; i < values.size(); ++i) values[i] = std::sin(0.37f * static_cast<float>(i));
  expect_fused_matches_cpu(*graph, runtime_, x, Storage::kFloat32, {2, 12}, 1e-4, 1e-3, 3);
}

// An Add of a row [9] after a MatMul of [7, 9, 3] by a 1-D [3] is no bias of the product's rows
// (its [7, 9] result is [63] dot products, not 7 x 9 of [M, N]): not fused, the CPU's values (a
// differential case once added bias[0] to every element).
TEST_F(ClFusionTest, ARowAfterAMatrixVectorProductIsNoBias) {
  OnnxBuilder b(17);
  b.input("x", DType::kF32, {7, 9, 3}).output("y", DType::kF32, {7, 9});
  b.initializer_random("v", {3}, 0.5f, 5).initializer_random("row", {9}, 0.5f, 6);
  b.node("MatMul", {"x", "v"}, {"p"});
  b.node("Add", {"p", "row"}, {"y"});
  auto graph = import_onnx_model(b.model(), {}, "cl_matrix_vector", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  Tensor x(DType::kF32, {7, 9, 3});
  auto values = x.values<float>();
  for (size_t i = 0; i < values.size(); ++i) values[i] = std::sin(0.31f * static_cast<float>(i));
  expect_fused_matches_cpu(*graph, runtime_, x, Storage::kFloat32, {2, 0}, 1e-5, 1e-4, 3);
}

// Residual Adds in their product's epilogue, after the bias, before the activation: a Conv with
// bias + x then Relu (implicit GEMM), a depthwise Conv + that (direct, the Add's operands
// swapped), a Conv whose K is split + its input then Relu (the split-K reduction), a MatMul with
// bias + a residual then an exported GELU; and Add(c4, c5) of two Convs of x goes to c5, the one
// after which both exist. Seven kernels for 20 nodes, the CPU's values, fp32 and fp16 storage.
TEST_F(ClFusionTest, FusedResidualAddsMatchTheCpu) {
  OnnxBuilder b(17);
  const std::vector<int64_t> shape{1, 8, 6, 6}, wide{1, 64, 6, 6};
  b.input("x", DType::kF32, shape);
  b.output("y2", DType::kF32, shape).output("y3", DType::kF32, shape);
  b.output("y4", DType::kF32, shape).output("y5", DType::kF32, wide);
  b.initializer_random("w1", {8, 8, 3, 3}, 0.3f, 3).initializer_random("b1", {8}, 0.5f, 4);
  b.initializer_random("wd", {8, 1, 3, 3}, 0.5f, 5);
  b.initializer_random("wm", {6, 6}, 0.5f, 6).initializer_random("bm", {6}, 0.5f, 7);
  b.initializer_random("w4", {8, 8, 1, 1}, 0.5f, 8).initializer_random("w5", {8, 8, 1, 1}, 0.5f, 9);
  b.initializer_random("w6", {64, 8, 3, 3}, 0.3f, 10);
  b.initializer_random("w7", {64, 64, 3, 3}, 0.1f, 11);
  b.initializer_f32("sqrt2", {}, {1.4142135f}).initializer_f32("one", {}, {1.0f});
  b.initializer_f32("half", {}, {0.5f});
  const std::vector<int64_t> pads{1, 1, 1, 1};
  set_attr(b.node("Conv", {"x", "w1", "b1"}, {"c1"}), "pads", pads);
  b.node("Add", {"c1", "x"}, {"s1"});
  b.node("Relu", {"s1"}, {"y1"});
  onnx::NodeProto& depthwise = b.node("Conv", {"y1", "wd"}, {"c2"});
  set_attr(depthwise, "pads", pads);
  set_attr(depthwise, "group", int64_t{8});
  b.node("Add", {"x", "c2"}, {"y2"});
  b.node("MatMul", {"y1", "wm"}, {"m"});
  b.node("Add", {"m", "bm"}, {"mb"});
  b.node("Add", {"y2", "mb"}, {"r"});
  b.node("Div", {"r", "sqrt2"}, {"d"});
  b.node("Erf", {"d"}, {"e"});
  b.node("Add", {"e", "one"}, {"a"});
  b.node("Mul", {"r", "a"}, {"g"});
  b.node("Mul", {"g", "half"}, {"y3"});
  b.node("Conv", {"x", "w4"}, {"c4"});
  b.node("Conv", {"x", "w5"}, {"c5"});
  b.node("Add", {"c4", "c5"}, {"y4"});
  set_attr(b.node("Conv", {"x", "w6"}, {"c6"}), "pads", pads);
  set_attr(b.node("Conv", {"c6", "w7"}, {"c7"}), "pads", pads);
  b.node("Add", {"c7", "c6"}, {"s7"});
  b.node("Relu", {"s7"}, {"y5"});
  auto graph = import_onnx_model(b.model(), {}, "cl_residual", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  Tensor x(DType::kF32, shape);
  auto values = x.values<float>();
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = 2.0f * std::sin(0.29f * static_cast<float>(i));
  expect_fused_matches_cpu(*graph, runtime_, x, Storage::kFloat32, {7, 13}, 1e-4, 1e-3, 3);
  // fp16 storage rounds x, the weights and every stored value (up to about 8): 2e-2 absolute.
  expect_fused_matches_cpu(*graph, runtime_, x, Storage::kFloat16, {7, 13}, 2e-2, 1e-2);
}

// Nodes that leave their input's bytes as they are alias it, as views do: Gathers of every
// index in order (1-D along a middle axis; [2, 3] along the last), a Cast to the input's dtype,
// an Expand to its shape. A Gather of the indices reversed and an Expand that adds rows run
// kernels. Three kernels for nine nodes, the CPU's values.
TEST_F(ClFusionTest, NodesLeavingTheirInputAsIsAreViews) {
  OnnxBuilder b(17);
  b.input("x", DType::kF32, {1, 2, 6});
  b.output("y", DType::kF32, {1, 2, 6}).output("z", DType::kF32, {3, 2, 6});
  b.initializer_i64("in_order", {2}, {0, 1}).initializer_i64("reversed", {2}, {1, 0});
  b.initializer_i64("in_order_2d", {2, 3}, {0, 1, 2, 3, 4, 5});
  b.initializer_i64("flat", {3}, {1, 2, 6}).initializer_i64("more", {3}, {3, 2, 6});
  set_attr(b.node("Gather", {"x", "in_order"}, {"g1"}, "gather_in_order"), "axis", int64_t{1});
  set_attr(b.node("Gather", {"g1", "in_order_2d"}, {"g2"}, "gather_2d"), "axis", int64_t{2});
  b.node("Reshape", {"g2", "flat"}, {"r"}, "reshape");
  set_attr(b.node("Cast", {"r"}, {"c"}, "cast_same"), "to", int64_t{1});
  b.node("Expand", {"c", "flat"}, {"e"}, "expand_same");
  set_attr(b.node("Gather", {"x", "reversed"}, {"g3"}, "gather_reversed"), "axis", int64_t{1});
  b.node("Add", {"e", "g3"}, {"y"}, "add");
  b.node("Expand", {"x", "more"}, {"z"}, "expand_rows");
  auto graph = import_onnx_model(b.model(), {}, "cl_as_is", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  const std::vector<bool> without = nodes_without_kernels(*graph);
  const std::set<std::string> views = {"gather_in_order", "gather_2d", "reshape", "cast_same",
                                       "expand_same"};
  for (NodeId id = 0; id < static_cast<NodeId>(graph->nodes().size()); ++id) {
    EXPECT_EQ(without[static_cast<size_t>(id)], views.count(graph->node(id).name) == 1)
        << graph->node(id).name;
  }
  Tensor x(DType::kF32, {1, 2, 6});
  auto values = x.values<float>();
  for (size_t i = 0; i < values.size(); ++i) values[i] = std::sin(0.7f * static_cast<float>(i));
  expect_fused_matches_cpu(*graph, runtime_, x, Storage::kFloat32, {3, 0}, 1e-6, 1e-6, 3);
}

// Activations exported as several nodes, as a Conv's epilogue and alone: Conv -> x * Sigmoid(x),
// a SiLU of the graph input (its Mul's operands swapped), Conv -> GELU with (1 + erf) * 0.5 first.
// Three kernels for 11 nodes, the CPU's values to fp32 rounding, fp32 and fp16 storage.
TEST_F(ClFusionTest, FusedActivationChainsMatchTheCpu) {
  OnnxBuilder b(17);
  b.input("x", DType::kF32, {1, 4, 6, 6});
  for (const char* y : {"y1", "y2", "y3"}) b.output(y, DType::kF32, {1, 4, 6, 6});
  b.initializer_random("w1", {4, 4, 1, 1}, 0.5f, 3).initializer_random("w2", {4, 4, 1, 1}, 0.5f, 4);
  b.initializer_f32("sqrt2", {}, {1.4142135f}).initializer_f32("one", {}, {1.0f});
  b.initializer_f32("half", {}, {0.5f});
  b.node("Conv", {"x", "w1"}, {"c1"});
  b.node("Sigmoid", {"c1"}, {"s1"});
  b.node("Mul", {"c1", "s1"}, {"y1"});
  b.node("Sigmoid", {"x"}, {"s2"});
  b.node("Mul", {"s2", "x"}, {"y2"});
  b.node("Conv", {"x", "w2"}, {"c3"});
  b.node("Div", {"c3", "sqrt2"}, {"d3"});
  b.node("Erf", {"d3"}, {"e3"});
  b.node("Add", {"e3", "one"}, {"a3"});
  b.node("Mul", {"a3", "half"}, {"h3"});
  b.node("Mul", {"c3", "h3"}, {"y3"});
  auto graph = import_onnx_model(b.model(), {}, "cl_chains", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  Tensor x(DType::kF32, {1, 4, 6, 6});
  auto values = x.values<float>();
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = 3.0f * std::sin(0.41f * static_cast<float>(i));
  // fp16 storage rounds x (up to 3) and the Conv's output: 5e-3 absolute.
  expect_fused_matches_cpu(*graph, runtime_, x, Storage::kFloat32, {3, 8}, 1e-4, 1e-3);
  expect_fused_matches_cpu(*graph, runtime_, x, Storage::kFloat16, {3, 8}, 5e-3, 1e-2);
}

// ConvNeXt's channels-first LayerNorm (Transpose to channels-last, LayerNormalization over the
// last axis, Transpose back) as one kernel over the channels: with a bias (axis -1) and without
// (axis 3). Two kernels for six nodes, the CPU's values, fp32 and fp16 storage.
TEST_F(ClFusionTest, ChannelLayerNormMatchesTheCpu) {
  OnnxBuilder b(17);
  b.input("x", DType::kF32, {2, 6, 5, 4});
  b.output("y1", DType::kF32, {2, 6, 5, 4}).output("y2", DType::kF32, {2, 6, 5, 4});
  b.initializer_random("scale", {6}, 1.0f, 3).initializer_random("bias", {6}, 1.0f, 4);
  const std::vector<int64_t> to_last{0, 2, 3, 1}, to_first{0, 3, 1, 2};
  set_attr(b.node("Transpose", {"x"}, {"t1"}), "perm", to_last);
  set_attr(b.node("LayerNormalization", {"t1", "scale", "bias"}, {"n1"}), "epsilon", 1e-6f);
  set_attr(b.node("Transpose", {"n1"}, {"y1"}), "perm", to_first);
  set_attr(b.node("Transpose", {"x"}, {"t2"}), "perm", to_last);
  set_attr(b.node("LayerNormalization", {"t2", "scale"}, {"n2"}), "axis", int64_t{3});
  set_attr(b.node("Transpose", {"n2"}, {"y2"}), "perm", to_first);
  auto graph = import_onnx_model(b.model(), {}, "cl_channel_norm", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  Tensor x(DType::kF32, {2, 6, 5, 4});
  auto values = x.values<float>();
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = 2.0f * std::cos(0.7f * static_cast<float>(i));
  expect_fused_matches_cpu(*graph, runtime_, x, Storage::kFloat32, {2, 4}, 1e-4, 1e-3);
  expect_fused_matches_cpu(*graph, runtime_, x, Storage::kFloat16, {2, 4}, 1e-2, 1e-2);
}

// Convs writing a Concat of their outputs in place, batch 2: a fire module (1x1 and 3x3 expand
// Convs with their Relus, one paired launch), a depthwise Conv (direct) and
// a Conv with K split (a 7x7 over 8 channels) under axis -3; in a Concat of a Conv and the graph
// input the Conv writes in place and copies the input after it (a direct kernel). Five kernels
// for 12 nodes, the CPU's values, fp32 and fp16 storage, replayed runs.
TEST_F(ClFusionTest, ConcatOfConvsIsWrittenInPlace) {
  OnnxBuilder b(17);
  const std::vector<int64_t> pad1{1, 1, 1, 1}, pad3{3, 3, 3, 3};
  b.input("x", DType::kF32, {2, 8, 6, 6});
  b.output("y1", DType::kF32, {2, 11, 6, 6}).output("y2", DType::kF32, {2, 12, 6, 6});
  b.output("y3", DType::kF32, {2, 10, 6, 6});
  b.initializer_random("w0", {3, 8, 1, 1}, 0.5f, 3).initializer_random("w1", {5, 3, 1, 1}, 0.5f, 4);
  b.initializer_random("w3", {6, 3, 3, 3}, 0.5f, 5).initializer_random("b3", {6}, 0.5f, 6);
  b.initializer_random("wd", {8, 1, 3, 3}, 0.5f, 7).initializer_random("wk", {4, 8, 7, 7}, 0.1f, 8);
  b.initializer_random("w5", {2, 8, 1, 1}, 0.5f, 9);
  b.node("Conv", {"x", "w0"}, {"c0"});
  b.node("Relu", {"c0"}, {"s"});
  b.node("Conv", {"s", "w1"}, {"c1"});
  b.node("Relu", {"c1"}, {"e1"});
  onnx::NodeProto& expand3 = b.node("Conv", {"s", "w3", "b3"}, {"c3"});
  set_attr(expand3, "pads", pad1);
  b.node("Relu", {"c3"}, {"e3"});
  set_attr(b.node("Concat", {"e1", "e3"}, {"y1"}), "axis", int64_t{1});
  onnx::NodeProto& depthwise = b.node("Conv", {"x", "wd"}, {"d"});
  set_attr(depthwise, "pads", pad1);
  set_attr(depthwise, "group", int64_t{8});
  set_attr(b.node("Conv", {"x", "wk"}, {"k"}), "pads", pad3);
  set_attr(b.node("Concat", {"d", "k"}, {"y2"}), "axis", int64_t{-3});
  b.node("Conv", {"x", "w5"}, {"c5"});
  set_attr(b.node("Concat", {"c5", "x"}, {"y3"}), "axis", int64_t{1});
  auto graph = import_onnx_model(b.model(), {}, "cl_concat", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  Tensor x(DType::kF32, {2, 8, 6, 6});
  auto values = x.values<float>();
  for (size_t i = 0; i < values.size(); ++i) values[i] = std::sin(0.23f * static_cast<float>(i));
  expect_fused_matches_cpu(*graph, runtime_, x, Storage::kFloat32, {5, 6}, 1e-4, 1e-3, 3);
  expect_fused_matches_cpu(*graph, runtime_, x, Storage::kFloat16, {5, 6}, 1e-2, 1e-2);
}

// Squeeze-and-excitation: x times its per-sample channel gate [N, C, 1, 1] read by the projecting
// Conv as it loads x (implicit GEMM), and x times constant channel factors [1, C, 1, 1] (the Mul's
// operands swapped) by a depthwise Conv (direct). Four kernels for nine nodes (the gate's two
// Convs in one launch), the CPU's values.
TEST_F(ClFusionTest, ChannelScaledConvInputsMatchTheCpu) {
  OnnxBuilder b(17);
  b.input("x", DType::kF32, {2, 8, 5, 5});
  b.output("y1", DType::kF32, {2, 6, 5, 5}).output("y2", DType::kF32, {2, 8, 5, 5});
  b.initializer_random("w1", {4, 8, 1, 1}, 0.5f, 3).initializer_random("w2", {8, 4, 1, 1}, 0.5f, 4);
  b.initializer_random("w3", {6, 8, 1, 1}, 0.5f, 5).initializer_random("wd", {8, 1, 3, 3}, 0.5f, 6);
  b.initializer_random("f", {1, 8, 1, 1}, 1.0f, 7);
  b.node("GlobalAveragePool", {"x"}, {"g"});
  b.node("Conv", {"g", "w1"}, {"s1"});
  b.node("Relu", {"s1"}, {"r1"});
  b.node("Conv", {"r1", "w2"}, {"s2"});
  b.node("HardSigmoid", {"s2"}, {"gate"});
  b.node("Mul", {"x", "gate"}, {"xs"});
  b.node("Conv", {"xs", "w3"}, {"y1"});
  b.node("Mul", {"f", "x"}, {"xf"});
  onnx::NodeProto& depthwise = b.node("Conv", {"xf", "wd"}, {"y2"});
  set_attr(depthwise, "pads", std::vector<int64_t>{1, 1, 1, 1});
  set_attr(depthwise, "group", int64_t{8});
  auto graph = import_onnx_model(b.model(), {}, "cl_channel_scaled", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  Tensor x(DType::kF32, {2, 8, 5, 5});
  auto values = x.values<float>();
  for (size_t i = 0; i < values.size(); ++i) values[i] = std::sin(0.37f * static_cast<float>(i));
  expect_fused_matches_cpu(*graph, runtime_, x, Storage::kFloat32, {4, 5}, 1e-4, 1e-3, 3);
  expect_fused_matches_cpu(*graph, runtime_, x, Storage::kFloat16, {4, 5}, 1e-2, 1e-2);
}

// ConvNeXt's layer scale: a Conv's result times constant factors per output channel, in the Conv
// (its weights and bias scaled once), then its residual Add (1x1, with bias; the Add's operands
// swapped) or activation (a padded 3x3 without bias; factors [C, 1, 1] first in the Mul). A Mul by
// factors per element stays a kernel. Four kernels for eight nodes, the CPU's values.
TEST_F(ClFusionTest, ChannelScaledConvOutputsMatchTheCpu) {
  OnnxBuilder b(17);
  b.input("x", DType::kF32, {2, 8, 5, 5});
  for (const char* y : {"y1", "y2", "y3"}) b.output(y, DType::kF32, {2, 8, 5, 5});
  b.initializer_random("w1", {8, 8, 1, 1}, 0.5f, 3).initializer_random("b1", {8}, 0.5f, 4);
  b.initializer_random("w2", {8, 8, 3, 3}, 0.3f, 5).initializer_random("w3", {8, 8, 1, 1}, 0.5f, 6);
  b.initializer_random("f1", {1, 8, 1, 1}, 1.0f, 7).initializer_random("f2", {8, 1, 1}, 1.0f, 8);
  b.initializer_random("f3", {1, 8, 5, 5}, 1.0f, 9);
  b.node("Conv", {"x", "w1", "b1"}, {"c1"});
  b.node("Mul", {"c1", "f1"}, {"s1"});
  b.node("Add", {"x", "s1"}, {"y1"});
  set_attr(b.node("Conv", {"x", "w2"}, {"c2"}), "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("Mul", {"f2", "c2"}, {"s2"});
  b.node("Relu", {"s2"}, {"y2"});
  b.node("Conv", {"x", "w3"}, {"c3"});
  b.node("Mul", {"c3", "f3"}, {"y3"});
  auto graph = import_onnx_model(b.model(), {}, "cl_channel_scaled_out", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  Tensor x(DType::kF32, {2, 8, 5, 5});
  auto values = x.values<float>();
  for (size_t i = 0; i < values.size(); ++i) values[i] = std::sin(0.41f * static_cast<float>(i));
  expect_fused_matches_cpu(*graph, runtime_, x, Storage::kFloat32, {4, 4}, 1e-4, 1e-3, 3);
  expect_fused_matches_cpu(*graph, runtime_, x, Storage::kFloat16, {4, 4}, 1e-2, 1e-2);
}

// Squeeze-and-excitation: GlobalAveragePool, a 1x1 Conv and its activation, a 1x1 Conv back and
// its gate, then x times the gate read by the projecting Conv. The two 1x1 Convs run in one
// se_gate launch: MobileNet-V3's (biases, Relu, HardSigmoid; batch 2) and EfficientNet's (a SiLU
// exported as x * Sigmoid(x), no first bias, Sigmoid): three kernels each. Where the first Conv's
// result is also a graph output the Convs run apart (the Relu too): five kernels.
TEST_F(ClFusionTest, SqueezeExcitationRunsInOneLaunch) {
  struct Case {
    int64_t batch;
    bool silu, exposed;
    Fused want;
  };
  for (const Case c : {Case{2, false, false, {3, 4}}, Case{1, true, false, {3, 5}},
                       Case{1, false, true, {5, 2}}}) {
    SCOPED_TRACE("batch " + std::to_string(c.batch) + (c.silu ? ", SiLU" : ", Relu") +
                 (c.exposed ? ", exposed" : ""));
    OnnxBuilder b(17);
    b.input("x", DType::kF32, {c.batch, 24, 6, 6});
    b.output("y", DType::kF32, {c.batch, 8, 6, 6});
    if (c.exposed) b.output("s1", DType::kF32, {c.batch, 6, 1, 1});
    b.initializer_random("w1", {6, 24, 1, 1}, 0.5f, 11).initializer_random("b1", {6}, 0.5f, 12);
    b.initializer_random("w2", {24, 6, 1, 1}, 0.5f, 13).initializer_random("b2", {24}, 0.5f, 14);
    b.initializer_random("w3", {8, 24, 1, 1}, 0.5f, 15);
    b.node("GlobalAveragePool", {"x"}, {"g"});
    if (c.silu) {
      b.node("Conv", {"g", "w1"}, {"s1"});
      b.node("Sigmoid", {"s1"}, {"sig"});
      b.node("Mul", {"s1", "sig"}, {"h"});
    } else {
      b.node("Conv", {"g", "w1", "b1"}, {"s1"});
      b.node("Relu", {"s1"}, {"h"});
    }
    b.node("Conv", {"h", "w2", "b2"}, {"s2"});
    b.node(c.silu ? "Sigmoid" : "HardSigmoid", {"s2"}, {"gate"});
    b.node("Mul", {"x", "gate"}, {"xs"});
    b.node("Conv", {"xs", "w3"}, {"y"});
    auto graph = import_onnx_model(b.model(), {}, "cl_squeeze_excitation", {});
    ASSERT_TRUE(graph.is_ok()) << graph.status().message();
    Tensor x(DType::kF32, {c.batch, 24, 6, 6});
    auto values = x.values<float>();
    for (size_t i = 0; i < values.size(); ++i) values[i] = std::sin(0.23f * static_cast<float>(i));
    expect_fused_matches_cpu(*graph, runtime_, x, Storage::kFloat32, c.want, 1e-5, 1e-4, 3);
    expect_fused_matches_cpu(*graph, runtime_, x, Storage::kFloat16, c.want, 1e-2, 1e-2);
  }
}

// PyTorch's guard of fully masked attention rows, Where(IsNaN(softmax), c, softmax), in the
// Softmax: rows of 40 (a work group per row) with one row all -inf, and a LogSoftmax over axis 1
// (an item per column) with one column all -inf, each after its mask's Add. Four kernels for ten
// nodes, the guarded values where the CPU has them.
TEST_F(ClFusionTest, SoftmaxNanGuardMatchesTheCpu) {
  OnnxBuilder b(17);
  const std::vector<int64_t> shape{2, 3, 40};
  b.input("x", DType::kF32, shape);
  b.output("y1", DType::kF32, shape).output("y2", DType::kF32, shape);
  std::vector<float> rows(2 * 3 * 40, 0.0f), columns = rows;
  for (size_t k = 0; k < 40; ++k) rows[40 + k] = -INFINITY;              // row (0, 1)
  for (size_t c = 0; c < 3; ++c) columns[(3 + c) * 40 + 5] = -INFINITY;  // column (1, :, 5)
  b.initializer_f32("rows", shape, rows).initializer_f32("columns", shape, columns);
  b.initializer_f32("zero", {}, {0.0f}).initializer_f32("fill", {1}, {-1.5f});
  b.node("Add", {"x", "rows"}, {"a1"});
  b.node("Softmax", {"a1"}, {"s1"});
  b.node("IsNaN", {"s1"}, {"n1"});
  b.node("Where", {"n1", "zero", "s1"}, {"y1"});
  b.node("Add", {"x", "columns"}, {"a2"});
  set_attr(b.node("LogSoftmax", {"a2"}, {"s2"}), "axis", int64_t{1});
  b.node("IsNaN", {"s2"}, {"n2"});
  b.node("Where", {"n2", "fill", "s2"}, {"y2"});
  auto graph = import_onnx_model(b.model(), {}, "cl_nan_guard", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  Tensor x(DType::kF32, shape);
  auto values = x.values<float>();
  for (size_t i = 0; i < values.size(); ++i) values[i] = std::sin(0.31f * static_cast<float>(i));
  expect_fused_matches_cpu(*graph, runtime_, x, Storage::kFloat32, {4, 4}, 1e-5, 1e-4, 3);
  expect_fused_matches_cpu(*graph, runtime_, x, Storage::kFloat16, {4, 4}, 2e-3, 1e-2);
}

// Attention's scalings as the product's alpha: MatMul(x * 0.125, 0.5 * x^T), both Muls and the
// Transpose absorbed; a GELU whose last Mul (by 0.5) feeds a MatMul stays the GELU's. Three
// kernels for ten nodes.
TEST_F(ClFusionTest, ScaledMatMulMatchesTheCpu) {
  OnnxBuilder b(17);
  b.input("x", DType::kF32, {2, 5, 8});
  b.output("y1", DType::kF32, {2, 5, 5}).output("y2", DType::kF32, {2, 5, 6});
  b.initializer_random("w", {8, 6}, 1.0f, 4);
  b.initializer_f32("eighth", {}, {0.125f}).initializer_f32("half", {1}, {0.5f});
  b.initializer_f32("sqrt2", {}, {1.4142135f}).initializer_f32("one", {}, {1.0f});
  b.node("Mul", {"x", "eighth"}, {"q"});
  set_attr(b.node("Transpose", {"x"}, {"xt"}), "perm", std::vector<int64_t>{0, 2, 1});
  b.node("Mul", {"half", "xt"}, {"k"});
  b.node("MatMul", {"q", "k"}, {"y1"});
  b.node("Div", {"x", "sqrt2"}, {"d"});
  b.node("Erf", {"d"}, {"e"});
  b.node("Add", {"e", "one"}, {"a"});
  b.node("Mul", {"x", "a"}, {"m"});
  b.node("Mul", {"m", "half"}, {"g"});
  b.node("MatMul", {"g", "w"}, {"y2"});
  auto graph = import_onnx_model(b.model(), {}, "cl_scaled", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  Tensor x(DType::kF32, {2, 5, 8});
  auto values = x.values<float>();
  for (size_t i = 0; i < values.size(); ++i) values[i] = std::sin(0.53f * static_cast<float>(i));
  // MatMul(q, k) with both scales and the Transpose, the GELU, MatMul(g, w).
  expect_fused_matches_cpu(*graph, runtime_, x, Storage::kFloat32, {3, 7}, 1e-4, 1e-3, 3);
}

// Attention's heads read in place: x [B, S, H, D] as Q [B, H, S, D] and K^T [B, H, D, S]
// (Transposes (0, 2, 1, 3) and (0, 2, 3, 1)) and as V, the MatMuls reading x through strides,
// and merged back: the product's Transpose (0, 2, 1, 3) is how it stores its result. A Transpose
// (2, 1, 0, 3), whose batch axes do not collapse into one stride, stays a kernel; a product with
// K split (512) stores its result as Transpose (1, 0, 2) from the reduction (a product of
// constants: it runs once, when the program is compiled). Four kernels a run for 11 nodes, the
// CPU's values, fp32 and fp16 storage.
TEST_F(ClFusionTest, TransposedOperandsMatchTheCpu) {
  OnnxBuilder b(17);
  b.input("x", DType::kF32, {1, 8, 2, 4});
  b.output("y1", DType::kF32, {1, 8, 2, 4}).output("y2", DType::kF32, {2, 8, 1, 3});
  b.output("y3", DType::kF32, {3, 2, 4});
  b.initializer_random("w", {4, 3}, 1.0f, 5);
  b.initializer_random("c", {2, 3, 512}, 1.0f, 6).initializer_random("w5", {512, 4}, 0.1f, 7);
  set_attr(b.node("Transpose", {"x"}, {"q"}), "perm", std::vector<int64_t>{0, 2, 1, 3});
  set_attr(b.node("Transpose", {"x"}, {"k"}), "perm", std::vector<int64_t>{0, 2, 3, 1});
  b.node("MatMul", {"q", "k"}, {"s"});
  set_attr(b.node("Transpose", {"x"}, {"v"}), "perm", std::vector<int64_t>{0, 2, 1, 3});
  b.node("MatMul", {"s", "v"}, {"o"});
  set_attr(b.node("Transpose", {"o"}, {"y1"}), "perm", std::vector<int64_t>{0, 2, 1, 3});
  set_attr(b.node("Transpose", {"x"}, {"t"}), "perm", std::vector<int64_t>{2, 1, 0, 3});
  b.node("MatMul", {"t", "w"}, {"y2"});
  b.node("MatMul", {"c", "w5"}, {"z"});
  set_attr(b.node("Transpose", {"z"}, {"y3"}), "perm", std::vector<int64_t>{1, 0, 2});
  auto graph = import_onnx_model(b.model(), {}, "cl_transposed", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  Tensor x(DType::kF32, {1, 8, 2, 4});
  auto values = x.values<float>();
  for (size_t i = 0; i < values.size(); ++i) values[i] = std::sin(0.47f * static_cast<float>(i));
  expect_fused_matches_cpu(*graph, runtime_, x, Storage::kFloat32, {4, 5}, 1e-4, 1e-3, 3);
  expect_fused_matches_cpu(*graph, runtime_, x, Storage::kFloat16, {4, 5}, 1e-2, 1e-2);
}

// Steps that read only constants (int8 weights dequantized, a constant's Relu) run once, when
// the program is compiled; each run reads their outputs: 2 kernels a run (the MatMul with its
// bias, the Mul by the Relu's output), 2 steps run once, and the cost model counts them free.
TEST_F(ClFusionTest, ConstantStepsRunOnceAtCompile) {
  OnnxBuilder b(17);
  b.input("x", DType::kF32, {2, 3, 8});
  b.output("y", DType::kF32, {2, 3, 4});
  Tensor weights(DType::kI8, {8, 4}), zero(DType::kI8, {});
  auto w = weights.values<int8_t>();
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = static_cast<int8_t>(static_cast<int>(i * 7 % 23) - 11);
  zero.values<int8_t>()[0] = 0;
  b.initializer("wq", weights).initializer_f32("scale", {}, {0.05f});
  b.initializer("zero", zero).initializer_random("bias", {4}, 0.5f, 3);
  b.initializer_random("rows", {2, 3, 4}, 0.5f, 4);
  b.node("DequantizeLinear", {"wq", "scale", "zero"}, {"w"});
  b.node("MatMul", {"x", "w"}, {"p"});
  b.node("Add", {"p", "bias"}, {"q"}, "bias_add");
  b.node("Relu", {"rows"}, {"positive"});
  b.node("Mul", {"q", "positive"}, {"y"});
  auto graph = import_onnx_model(b.model(), {}, "cl_constant_steps", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  Tensor x(DType::kF32, {2, 3, 8});
  auto values = x.values<float>();
  for (size_t i = 0; i < values.size(); ++i) values[i] = std::cos(0.41f * static_cast<float>(i));
  for (Storage storage : {Storage::kFloat32, Storage::kFloat16}) {
    const bool half = storage == Storage::kFloat16;
    expect_fused_matches_cpu(*graph, runtime_, x, storage, {2, 1}, half ? 1e-2 : 1e-5,
                             half ? 1e-2 : 1e-4, 3);
    auto program = ClProgram::compile(*graph, runtime_, storage, 300000);
    ASSERT_TRUE(program.is_ok()) << program.status().message();
    EXPECT_EQ((*program)->stats().constant_steps, 2);
  }
  const std::vector<bool> without = nodes_without_kernels(*graph);
  for (NodeId id = 0; id < static_cast<NodeId>(graph->nodes().size()); ++id) {
    const std::string& op = graph->node(id).op_type;
    const bool constant = op == "DequantizeLinear" || op == "Relu";
    EXPECT_EQ(without[static_cast<size_t>(id)], constant || graph->node(id).name == "bias_add")
        << graph->node(id).name;
  }
}

// GroupNorm as exported (Reshape to groups, InstanceNormalization, Reshape back, Mul and Add by
// per-channel constants) and its activation (an exported SiLU, or a Relu) run in the
// normalisation's kernels: one step for the 7 (or 6) nodes after the first Reshape, with rows
// normalised by one work group each and, long and few, in chunks (three kernels).
TEST_F(ClFusionTest, GroupNormAffineAndActivationRunInTheNorm) {
  for (const Shape& dims : {Shape{1, 16, 24, 24}, Shape{2, 8, 64, 64}}) {
    for (const bool silu : {true, false}) {
      SCOPED_TRACE(std::to_string(dims[2]) + (silu ? " SiLU" : " Relu"));
      const int64_t c = dims[1], groups = c / 4;
      OnnxBuilder b(17);
      b.input("x", DType::kF32, dims).output("y", DType::kF32, dims);
      b.initializer_i64("to_groups", {3}, {dims[0], groups, -1});
      b.initializer_i64("back", {4}, {dims[0], c, dims[2], dims[3]});
      b.initializer_random("scale", {groups}, 1.0f, 21)
          .initializer_random("bias", {groups}, 1.0f, 22);
      b.initializer_random("gamma", {c, 1, 1}, 1.0f, 23)
          .initializer_random("beta", {1, c, 1, 1}, 1.0f, 24);
      b.node("Reshape", {"x", "to_groups"}, {"g"});
      b.node("InstanceNormalization", {"g", "scale", "bias"}, {"n"});
      b.node("Reshape", {"n", "back"}, {"r"});
      b.node("Mul", {"r", "gamma"}, {"m"});
      b.node("Add", {"beta", "m"}, {"z"});
      if (silu) {
        b.node("Sigmoid", {"z"}, {"s"});
        b.node("Mul", {"z", "s"}, {"y"});
      } else {
        b.node("Relu", {"z"}, {"y"});
      }
      auto graph = import_onnx_model(b.model(), {}, "cl_group_norm", {});
      ASSERT_TRUE(graph.is_ok()) << graph.status().message();
      Tensor x(DType::kF32, dims);
      auto values = x.values<float>();
      for (size_t i = 0; i < values.size(); ++i)
        values[i] = std::sin(0.07f * static_cast<float>(i));
      const Fused want{1, silu ? 5 : 4};
      expect_fused_matches_cpu(*graph, runtime_, x, Storage::kFloat32, want, 1e-4, 1e-4, 3);
      expect_fused_matches_cpu(*graph, runtime_, x, Storage::kFloat16, want, 2e-2, 1e-2);
    }
  }
}

// A Split whose other outputs are a graph output and unread (found by the differential tester,
// seed 621): the Split still runs for its graph output; the MatMul reads its Transpose in place
// from the Split's output. 2 kernels (Split, MatMul), the Transpose absorbed.
TEST_F(ClFusionTest, SplitWithAGraphOutputStillRuns) {
  OnnxBuilder b(17);
  b.input("x", DType::kF32, {1, 6, 3, 4});
  b.output("y", DType::kF32, {1, 4, 3, 8}).output("s1", DType::kF32, {1, 2, 3, 4});
  b.initializer_i64("sizes", {3}, {2, 2, 2}).initializer_random("w", {2, 8}, 1.0f, 31);
  set_attr(b.node("Split", {"x", "sizes"}, {"s0", "s1", "s2"}), "axis", int64_t{1});
  set_attr(b.node("Transpose", {"s0"}, {"t"}), "perm", std::vector<int64_t>{0, 3, 2, 1});
  b.node("MatMul", {"t", "w"}, {"y"});
  auto graph = import_onnx_model(b.model(), {}, "cl_split_output", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  Tensor x(DType::kF32, {1, 6, 3, 4});
  auto values = x.values<float>();
  for (size_t i = 0; i < values.size(); ++i) values[i] = std::cos(0.29f * static_cast<float>(i));
  expect_fused_matches_cpu(*graph, runtime_, x, Storage::kFloat32, {2, 1}, 1e-5, 1e-4, 3);
}

// Regressions found by the differential tester (seed 623). A Split output that a MatMul reads
// through views and another node reads too (a Relu) keeps the Split running: 5 kernels, the
// three Transposes absorbed. And a MatMul by a 1-D B ([..., M, K] x [K] is [..., M], not [M, N])
// takes no Add of its result's last two dims as a residual shared by every batch.
TEST_F(ClFusionTest, SplitsReadElsewhereAndOneDimensionalProductsStayUnfused) {
  OnnxBuilder b(17);
  b.input("x", DType::kF32, {1, 6, 3, 4});
  b.output("y0", DType::kF32, {1, 4, 3, 8}).output("y1", DType::kF32, {1, 4, 3, 8});
  b.output("y2", DType::kF32, {1, 2, 3, 4}).output("y3", DType::kF32, {1, 4, 3, 8});
  b.initializer_i64("sizes", {3}, {2, 2, 2}).initializer_random("w", {2, 8}, 1.0f, 37);
  set_attr(b.node("Split", {"x", "sizes"}, {"s0", "s1", "s2"}), "axis", int64_t{1});
  for (const char* i : {"0", "1", "2"}) {
    const std::string t = std::string("t") + i;
    set_attr(b.node("Transpose", {std::string("s") + i}, {t}), "perm",
             std::vector<int64_t>{0, 3, 2, 1});
    b.node("MatMul", {t, "w"}, {std::string("y") + (i[0] == '2' ? "3" : i)});
  }
  b.node("Relu", {"s1"}, {"y2"});
  auto graph = import_onnx_model(b.model(), {}, "cl_split_elsewhere", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  Tensor x(DType::kF32, {1, 6, 3, 4});
  auto values = x.values<float>();
  for (size_t i = 0; i < values.size(); ++i) values[i] = std::cos(0.37f * static_cast<float>(i));
  expect_fused_matches_cpu(*graph, runtime_, x, Storage::kFloat32, {5, 3}, 1e-5, 1e-4, 3);

  OnnxBuilder v(17);
  v.input("x", DType::kF32, {2, 3, 5, 4}).input("r", DType::kF32, {3, 5});
  v.output("y", DType::kF32, {2, 3, 5});
  v.initializer_random("w", {4}, 1.0f, 41);
  v.node("MatMul", {"x", "w"}, {"p"});
  v.node("Add", {"p", "r"}, {"y"});
  auto vector_graph = import_onnx_model(v.model(), {}, "cl_vector_product", {});
  ASSERT_TRUE(vector_graph.is_ok()) << vector_graph.status().message();
  auto program = ClProgram::compile(*vector_graph, runtime_, Storage::kFloat32, 300000);
  ASSERT_TRUE(program.is_ok()) << program.status().message();
  EXPECT_EQ((*program)->stats().kernels, 2);
  EXPECT_EQ((*program)->stats().fused_epilogues, 0);
}

}  // namespace
}  // namespace hsched::opencl
