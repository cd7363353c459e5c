// Opset-18 models: the nodes opset 18 changed are read in their opset-17 forms (graph/opset18.h),
// and what opset 17 cannot express is refused with one line naming the node.
#include <string>

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

TEST(Opset18Test, ReduceAxesInputBecomesTheAttribute) {
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

TEST(Opset18Test, SplitWithNumOutputsImports) {
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

TEST(Opset18Test, WhatOpset17CannotSayIsRefusedNamingTheNode) {
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
    b.input("x", DType::kF32, {4}).output("y", DType::kF32, {4});
    b.node("Relu", {"x"}, {"y"});
    expect_refused(import18(b), "opset 19 is not supported (1 to 18)");
  }
}

// IR versions 9 and 10 (graph/opset18.h read_as_ir8): metadata ignored, overloads refused.
TEST(Opset18Test, NewerIrVersionsReadAsIr8) {
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
