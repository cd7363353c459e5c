// Models of opsets 18 to 22: the nodes those opsets changed are read in their opset-17 forms
// (graph/newer_opsets.h), and what opset 17 cannot express is refused with one line naming the
// node.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "graph/onnx_builder.h"
#include "graph/onnx_import.h"

namespace hsched {
namespace {

Result<Graph> import18(OnnxBuilder& b) { return import_onnx_model(b.model(), {}, "m18.onnx", {}); }

void expect_refused(const Result<Graph>& graph, const std::string& words) {
  ASSERT_FALSE(graph.is_ok());
  EXPECT_NE(graph.status().message().find(words), std::string::npos) << graph.status().message();
  EXPECT_EQ(graph.status().message().find('\n'), std::string::npos);
}

const Node& only_node(const Graph& graph, const std::string& op) {
  for (const Node& node : graph.nodes()) {
    if (node.op_type == op) return node;
  }
  ADD_FAILURE() << "no " << op;
  return graph.nodes().front();
}

TEST(NewerOpsetsTest, ReduceAxesInputBecomesTheAttribute) {
  for (const bool from_constant_node : {false, true}) {
    OnnxBuilder b(18);
    b.input("x", DType::kF32, {2, 3, 4}).output("y", DType::kF32, {2, 1, 1});
    if (from_constant_node) {
      set_attr(b.node("Constant", {}, {"axes"}, "axes"), "value_ints", std::vector<int64_t>{1, -1});
    } else {
      b.initializer_i64("axes", {2}, {1, -1});
    }
    b.node("ReduceMean", {"x", "axes"}, {"y"}, "mean");
    auto graph = import18(b);
    ASSERT_TRUE(graph.is_ok()) << graph.status().message();
    EXPECT_EQ(graph->opset, 17);
    const Node& mean = only_node(*graph, "ReduceMean");
    EXPECT_EQ(mean.inputs.size(), 1u);
    EXPECT_EQ(mean.attr_ints("axes"), (std::vector<int64_t>{1, -1}));
  }
  // No axes: every dim; noop_with_empty_axes 0 is dropped.
  OnnxBuilder b(18);
  b.input("x", DType::kF32, {2, 3}).output("y", DType::kF32, {1, 1});
  set_attr(b.node("ReduceMax", {"x"}, {"y"}, "max"), "noop_with_empty_axes", int64_t{0});
  auto graph = import18(b);
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  EXPECT_FALSE(only_node(*graph, "ReduceMax").has_attr("noop_with_empty_axes"));
}

TEST(NewerOpsetsTest, SplitWithNumOutputsImports) {
  OnnxBuilder b(18);
  b.input("x", DType::kF32, {6, 2})
      .output("a", DType::kF32, {3, 2})
      .output("c", DType::kF32, {3, 2});
  set_attr(b.node("Split", {"x"}, {"a", "c"}, "split"), "num_outputs", int64_t{2});
  auto graph = import18(b);
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  EXPECT_FALSE(only_node(*graph, "Split").has_attr("num_outputs"));

  OnnxBuilder other(18);
  other.input("x", DType::kF32, {6, 2})
      .output("a", DType::kF32, {3, 2})
      .output("c", DType::kF32, {3, 2});
  set_attr(other.node("Split", {"x"}, {"a", "c"}, "split"), "num_outputs", int64_t{3});
  expect_refused(import18(other), "node 'split' (Split): num_outputs 3 differs from its 2 outputs");
}

TEST(NewerOpsetsTest, WhatOpset17CannotSayIsRefusedNamingTheNode) {
  {  // axes computed by the graph
    OnnxBuilder b(18);
    b.input("x", DType::kF32, {2, 3})
        .input("axes", DType::kI64, {1})
        .output("y", DType::kF32, {2, 1});
    b.node("ReduceSum", {"x", "axes"}, {"s"}, "sum");  // ReduceSum's axes input is opset 13's
    b.node("ReduceMean", {"x", "axes"}, {"y"}, "mean");
    expect_refused(import18(b), "node 'mean' (ReduceMean): input 'axes' is not a constant int64");
  }
  {
    OnnxBuilder b(18);
    b.input("x", DType::kF32, {2, 3}).output("y", DType::kF32, {2, 3});
    set_attr(b.node("ReduceL2", {"x"}, {"y"}, "l2"), "noop_with_empty_axes", int64_t{1});
    expect_refused(import18(b), "node 'l2' (ReduceL2): noop_with_empty_axes with no axes");
  }
  {
    OnnxBuilder b(18);
    b.input("x", DType::kF32, {1, 1, 4, 4}).output("y", DType::kF32, {1, 1, 2, 2});
    b.initializer_f32("scales", {4}, {1, 1, 0.5f, 0.5f});
    auto& resize = b.node("Resize", {"x", "", "scales"}, {"y"}, "down");
    set_attr(resize, "antialias", int64_t{1});
    expect_refused(import18(b), "node 'down' (Resize): antialias is not supported");
  }
  {
    OnnxBuilder b(18);
    b.input("x", DType::kF32, {4}).output("y", DType::kF32, {6});
    b.initializer_i64("pads", {2}, {1, 1});
    b.initializer_i64("axes", {1}, {0});
    b.node("Pad", {"x", "pads", "", "axes"}, {"y"}, "pad");
    expect_refused(import18(b), "node 'pad' (Pad): input 'axes' is not supported");
  }
  {
    OnnxBuilder b(18);
    b.input("x", DType::kF32, {4}).input("i", DType::kI64, {1}).input("u", DType::kF32, {1});
    b.output("y", DType::kF32, {4});
    set_attr(b.node("ScatterElements", {"x", "i", "u"}, {"y"}, "scatter"), "reduction",
             std::string("max"));
    expect_refused(import18(b), "node 'scatter' (ScatterElements): reduction 'max'");
  }
  {
    OnnxBuilder b(18);
    b.input("x", DType::kF32, {1, 4, 2, 2}).output("y", DType::kF32, {1, 4, 2, 2});
    b.initializer_f32("scale", {2}, {1, 1}).initializer_f32("bias", {2}, {0, 0});
    set_attr(b.node("GroupNormalization", {"x", "scale", "bias"}, {"y"}, "gn"), "num_groups",
             int64_t{2});
    expect_refused(import18(b), "node 'gn' (GroupNormalization): the op is new in opset 18");
  }
  {
    OnnxBuilder b(19);
    b.input("x", DType::kF32, {1, 1, 4}).output("y", DType::kF32, {1, 1, 4});
    b.initializer_i64("pads", {6}, {0, 0, 1, 0, 0, 1});
    set_attr(b.node("Pad", {"x", "pads"}, {"y"}, "wrap"), "mode", std::string("wrap"));
    expect_refused(import18(b), "node 'wrap' (Pad): mode 'wrap' is not supported");
  }
  {
    OnnxBuilder b(19);
    b.input("x", DType::kF32, {1, 1, 6, 6}).output("y", DType::kF32, {1, 1, 2, 2});
    auto& pool = b.node("AveragePool", {"x"}, {"y"}, "pool");
    set_attr(pool, "kernel_shape", std::vector<int64_t>{2, 2});
    set_attr(pool, "dilations", std::vector<int64_t>{2, 2});
    expect_refused(import18(b), "node 'pool' (AveragePool): attribute 'dilations' other than 1");
  }
  {
    OnnxBuilder b(21);
    b.input("x", DType::kF32, {4, 4}).output("y", DType::kI8, {4, 4});
    b.initializer_f32("scale", {2, 4}, {1, 1, 1, 1, 1, 1, 1, 1});
    auto& quantize = b.node("QuantizeLinear", {"x", "scale"}, {"y"}, "blocked");
    set_attr(quantize, "block_size", int64_t{2});
    set_attr(quantize, "axis", int64_t{0});
    expect_refused(import18(b), "node 'blocked' (QuantizeLinear): attribute 'block_size'");
  }
  {
    OnnxBuilder b(20);
    b.input("x", DType::kF32, {1, 8, 2}).output("y", DType::kF32, {1, 8, 2});
    b.node("DFT", {"x"}, {"y"}, "dft");
    expect_refused(import18(b), "node 'dft' (DFT): DFT of opset 20");
  }
  {
    OnnxBuilder b(19);
    b.input("x", DType::kF32, {1, 1, 4, 4}).output("y", DType::kF32, {1, 1, 2, 2});
    b.initializer_f32("w", {1, 1, 3, 3}, std::vector<float>(9, 1.0f));
    b.initializer_f32("offset", {1, 18, 2, 2}, std::vector<float>(72, 0.0f));
    b.node("DeformConv", {"x", "w", "offset"}, {"y"}, "deform");
    expect_refused(import18(b), "node 'deform' (DeformConv): the op is new in opset 19");
  }
  {
    OnnxBuilder b(23);
    b.input("x", DType::kF32, {4}).output("y", DType::kF32, {4});
    b.node("Relu", {"x"}, {"y"});
    expect_refused(import18(b), "opset 23 is not supported (1 to 22)");
  }
}

std::vector<std::string> op_types(const Graph& graph) {
  std::vector<std::string> ops;
  for (const Node& node : graph.nodes()) ops.push_back(node.op_type);
  return ops;
}

// Gelu of opset 20 becomes the ops torch.onnx wrote it in before: for approximate 'none' the
// pattern the backends fuse (x / sqrt 2, Erf, + 1, x times, * 0.5), for 'tanh' its formula; in
// fp32 its constants are fp32 initializers, in fp16 float ones cast like x.
TEST(NewerOpsetsTest, GeluBecomesItsFormula) {
  for (const std::string approximate : {"none", "tanh"}) {
    for (const DType dtype : {DType::kF32, DType::kF16}) {
      OnnxBuilder b(20);
      b.input("x", dtype, {2, 3}).output("y", dtype, {2, 3});
      set_attr(b.node("Gelu", {"x"}, {"y"}, "gelu"), "approximate", approximate);
      auto graph = import18(b);
      ASSERT_TRUE(graph.is_ok()) << graph.status().message();
      const auto ops = op_types(*graph);
      if (approximate == "none" && dtype == DType::kF32) {
        EXPECT_EQ(ops, (std::vector<std::string>{"Div", "Erf", "Add", "Mul", "Mul"}));
      }
      EXPECT_EQ(std::count(ops.begin(), ops.end(), approximate == "none" ? "Erf" : "Tanh"), 1);
      EXPECT_EQ(graph->value(graph->outputs().at(0)).dtype, dtype);
    }
  }
  {  // x's type undeclared (an intermediate value): constants cast like x, folded once inferred
    OnnxBuilder b(20);
    b.input("x", DType::kF32, {2, 3}).output("y", DType::kF32, {2, 3});
    b.node("Relu", {"x"}, {"r"}, "relu");
    b.node("Gelu", {"r"}, {"y"}, "gelu");
    auto graph = import18(b);
    ASSERT_TRUE(graph.is_ok()) << graph.status().message();
    EXPECT_EQ(op_types(*graph),
              (std::vector<std::string>{"Relu", "Div", "Erf", "Add", "Mul", "Mul"}));
  }
  OnnxBuilder b(20);
  b.input("x", DType::kF32, {2}).output("y", DType::kF32, {2});
  set_attr(b.node("Gelu", {"x"}, {"y"}, "gelu"), "approximate", std::string("fast"));
  expect_refused(import18(b), "node 'gelu' (Gelu): approximate 'fast'");
}

// QuantizeLinear of opset 21 with output_dtype int8 and no zero point: an int8 zero point of 0;
// DequantizeLinear's block_size 0 and Cast's saturate are dropped; GridSample's 'linear' of
// opset 20 is opset 16's 'bilinear'; AveragePool's dilations of 1 are dropped.
TEST(NewerOpsetsTest, AttributesOfNewerOpsetsAtTheirOldMeaning) {
  OnnxBuilder b(21);
  b.input("x", DType::kF32, {1, 1, 4, 4}).input("grid", DType::kF32, {1, 2, 2, 2});
  b.output("y", DType::kF32, {1, 1, 4, 4}).output("sampled", DType::kF32, {1, 1, 2, 2});
  b.output("pooled", DType::kF32, {1, 1, 3, 3});
  b.initializer_f32("scale", {}, {0.5f});
  set_attr(b.node("QuantizeLinear", {"x", "scale"}, {"q"}, "quantize"), "output_dtype",
           int64_t{onnx::TensorProto::INT8});
  set_attr(b.node("DequantizeLinear", {"q", "scale"}, {"dq"}, "dequantize"), "block_size",
           int64_t{0});
  auto& cast = b.node("Cast", {"dq"}, {"y"}, "cast");
  set_attr(cast, "to", int64_t{onnx::TensorProto::FLOAT});
  set_attr(cast, "saturate", int64_t{1});
  set_attr(b.node("GridSample", {"x", "grid"}, {"sampled"}, "sample"), "mode",
           std::string("linear"));
  auto& pool = b.node("AveragePool", {"x"}, {"pooled"}, "pool");
  set_attr(pool, "kernel_shape", std::vector<int64_t>{2, 2});
  set_attr(pool, "dilations", std::vector<int64_t>{1, 1});
  auto graph = import18(b);
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  EXPECT_EQ(graph->opset, 17);
  const Node& quantize = only_node(*graph, "QuantizeLinear");
  ASSERT_EQ(quantize.inputs.size(), 3u);
  EXPECT_EQ(graph->value(quantize.inputs[2]).dtype, DType::kI8);
  EXPECT_EQ(graph->value(quantize.outputs[0]).dtype, DType::kI8);
  EXPECT_FALSE(only_node(*graph, "DequantizeLinear").has_attr("block_size"));
  EXPECT_FALSE(only_node(*graph, "Cast").has_attr("saturate"));
  EXPECT_EQ(only_node(*graph, "GridSample").attr_string("mode", ""), "bilinear");
  EXPECT_FALSE(only_node(*graph, "AveragePool").has_attr("dilations"));
}

// IR versions 9 and 10 (graph/newer_opsets.h read_as_ir8): metadata ignored, overloads refused.
TEST(NewerOpsetsTest, NewerIrVersionsReadAsIr8) {
  const auto relu_model = [](int64_t ir_version) {
    OnnxBuilder b(18);
    b.input("x", DType::kF32, {4}).output("y", DType::kF32, {4});
    b.node("Relu", {"x"}, {"y"}, "relu");
    b.model().set_ir_version(ir_version);
    return b;
  };
  for (const int64_t ir_version : {9, 10}) {
    OnnxBuilder b = relu_model(ir_version);
    // metadata_props (field 9 of NodeProto in IR 10): an entry {key 1, value 2} libonnx 1.12 does
    // not know.
    b.model().mutable_graph()->mutable_node(0)->mutable_unknown_fields()->AddLengthDelimited(
        9, std::string("\x0a\x01k\x12\x01v", 6));
    auto graph = import18(b);
    ASSERT_TRUE(graph.is_ok()) << graph.status().message();
    EXPECT_EQ(only_node(*graph, "Relu").name, "relu");
  }
  OnnxBuilder overloaded = relu_model(10);
  overloaded.model().mutable_graph()->mutable_node(0)->mutable_unknown_fields()->AddLengthDelimited(
      8, "fast");
  expect_refused(import18(overloaded),
                 "node 'relu' (Relu) calls the function overload 'fast' (IR 10)");
  OnnxBuilder newest = relu_model(11);
  expect_refused(import18(newest), "IR version 11 is not supported (3 to 10)");
}

}  // namespace
}  // namespace hsched
