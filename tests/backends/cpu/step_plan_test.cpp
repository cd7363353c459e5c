// nodes_without_steps against what CpuProgram::compile really does: on the demo model and the
// shared models (skipped when absent), every node is either one of the program's steps or one
// the analysis reports, exactly.
#include <algorithm>
#include <cmath>
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

// The same on their INT8 versions (QDQ regions fused into integer ops).
class Int8ModelStepPlanTest : public ::testing::TestWithParam<std::string> {};

TEST_P(Int8ModelStepPlanTest, MatchesProgram) {
  const fs::path path = ::hsched::test::int8_models_dir() / (GetParam() + "_int8") / "model.onnx";
  if (!fs::exists(path)) GTEST_SKIP() << "no model at " << path;
  auto graph = import_onnx_file(path, {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  expect_matches_program(*graph, GetParam() + "_int8");
}

INSTANTIATE_TEST_SUITE_P(Models, Int8ModelStepPlanTest,
                         ::testing::Values("resnet18", "mobilenet_v2", "mobilenet_v3_small",
                                           "squeezenet1_1", "convnext_atto", "vit_tiny",
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

// QDQ models (ONNX Runtime's quantizer's format): each Conv, MatMul and Gemm between
// DequantizeLinear and QuantizeLinear runs as one integer op, QLinearConv or QLinearMatMul, its
// float neighbours gone; a bias quantized with another scale keeps the float Conv. The integer
// sums are exact where the float ones round, so outputs agree within one output step; Add, Mul
// and element moves between Q/DQ run on the bytes with the same float operations: equal outputs.
TEST(StepPlanTest, QdqRegionsRunAsIntegerOps) {
  const auto bytes = [](DType dtype, const std::vector<int64_t>& dims, uint32_t seed) {
    Tensor t = Tensor::uninitialized(dtype, dims);
    for (uint8_t& v : t.values<uint8_t>()) {
      seed = seed * 1664525u + 1013904223u;
      v = static_cast<uint8_t>(seed >> 24);
    }
    return t;
  };
  const auto i32 = [](std::vector<int64_t> dims, std::vector<int32_t> values) {
    return Tensor::from_vector(DType::kI32, std::move(dims), values);
  };
  OnnxBuilder b(13);
  const float sx = 0.05f;
  std::vector<float> sw8(16), sw7(7), sw5(5);
  for (size_t i = 0; i < sw8.size(); ++i) sw8[i] = 0.002f * static_cast<float>(i + 1);
  for (size_t i = 0; i < sw7.size(); ++i) sw7[i] = 0.003f * static_cast<float>(i + 1);
  for (size_t i = 0; i < sw5.size(); ++i) sw5[i] = 0.004f * static_cast<float>(i + 1);
  std::vector<float> sb8(16), sb5(5);
  for (size_t i = 0; i < sb8.size(); ++i) sb8[i] = sx * sw8[i];
  for (size_t i = 0; i < sb5.size(); ++i) sb5[i] = sx * sw5[i];
  std::vector<int32_t> bias16(16), bias5(5);
  for (size_t i = 0; i < bias16.size(); ++i) bias16[i] = static_cast<int32_t>(i * 97) - 700;
  for (size_t i = 0; i < bias5.size(); ++i) bias5[i] = static_cast<int32_t>(i * 31) - 60;
  b.input("x", DType::kF32, {1, 8, 10, 10}).input("x2", DType::kF32, {2, 3, 12});
  b.input("x3", DType::kF32, {4, 12});
  b.output("y1", DType::kF32, {1, 16, 10, 10}).output("y2", DType::kF32, {2, 3, 7});
  b.output("y3", DType::kF32, {4, 5}).output("y4", DType::kF32, {1, 16, 10, 10});
  b.initializer_f32("sx", {}, {sx}).initializer_f32("sy", {}, {0.1f});
  b.initializer("zx", Tensor::from_vector(DType::kU8, {}, std::vector<uint8_t>{128}));
  b.initializer("zy", Tensor::from_vector(DType::kU8, {}, std::vector<uint8_t>{100}));
  b.initializer("w1", bytes(DType::kI8, {16, 8, 3, 3}, 1)).initializer_f32("sw1", {16}, sw8);
  b.initializer("b1", i32({16}, bias16)).initializer_f32("sb1", {16}, sb8);
  b.initializer_f32("sb_other", {16}, std::vector<float>(16, 0.5f));
  b.initializer("w2", bytes(DType::kI8, {12, 7}, 2)).initializer_f32("sw2", {7}, sw7);
  b.initializer("w3", bytes(DType::kI8, {5, 12}, 3)).initializer_f32("sw3", {5}, sw5);
  b.initializer("b3", i32({5}, bias5)).initializer_f32("sb3", {5}, sb5);
  const auto dq = [&](const std::string& in, const std::string& scale, const std::string& zp,
                      const std::string& out, int64_t axis) {
    auto& node = b.node(
        "DequantizeLinear",
        zp.empty() ? std::vector<std::string>{in, scale} : std::vector<std::string>{in, scale, zp},
        {out}, out);
    set_attr(node, "axis", axis);
  };
  const auto qdq_input = [&](const std::string& x) {
    b.node("QuantizeLinear", {x, "sx", "zx"}, {x + "_q"}, x + "_q");
    dq(x + "_q", "sx", "zx", x + "_dq", 1);
  };
  const auto qdq_output = [&](const std::string& f, const std::string& y) {
    b.node("QuantizeLinear", {f, "sy", "zy"}, {f + "_q"}, f + "_q");
    dq(f + "_q", "sy", "zy", y, 1);
  };
  qdq_input("x");
  qdq_input("x2");
  qdq_input("x3");
  dq("w1", "sw1", "", "w1_dq", 0);
  dq("b1", "sb1", "", "b1_dq", 0);
  dq("b1", "sb_other", "", "b1_other", 0);
  dq("w2", "sw2", "", "w2_dq", 1);
  dq("w3", "sw3", "", "w3_dq", 0);
  dq("b3", "sb3", "", "b3_dq", 0);
  set_attr(b.node("Conv", {"x_dq", "w1_dq", "b1_dq"}, {"c1"}, "conv"), "pads",
           std::vector<int64_t>{1, 1, 1, 1});
  set_attr(b.node("Conv", {"x_dq", "w1_dq", "b1_other"}, {"c4"}, "conv_other_bias"), "pads",
           std::vector<int64_t>{1, 1, 1, 1});
  b.node("MatMul", {"x2_dq", "w2_dq"}, {"m2"}, "matmul");
  set_attr(b.node("Gemm", {"x3_dq", "w3_dq", "b3_dq"}, {"g3"}, "gemm"), "transB", 1);
  qdq_output("c1", "y1");
  qdq_output("m2", "y2");
  qdq_output("g3", "y3");
  qdq_output("c4", "y4");
  // A Transpose between pairs of one scale and zero point runs on the bytes, the pairs dropped
  // (x2's DequantizeLinear then has no reader left); a Reshape whose QuantizeLinear has another
  // scale keeps its pairs.
  set_attr(b.node("Transpose", {"x2_dq"}, {"t5"}, "transpose"), "perm",
           std::vector<int64_t>{0, 2, 1});
  b.node("QuantizeLinear", {"t5", "sx", "zx"}, {"t5_q"}, "t5_q");
  dq("t5_q", "sx", "zx", "y5", 1);
  b.initializer_i64("flat", {2}, {4, 12});
  b.node("Reshape", {"x3_dq", "flat"}, {"r6"}, "reshape");
  qdq_output("r6", "y6");
  b.output("y5", DType::kF32, {2, 12, 3}).output("y6", DType::kF32, {4, 12});
  // Add of an 8-bit operand to itself (a function of its byte: a table) and Mul by a float row
  // become one pass each, bit for bit; an Add whose other operand is not a suffix of the shape
  // ([4, 1] onto [4, 12]) stays.
  b.initializer_random("row", {12}, 2.0f, 9).initializer_random("column", {4, 1}, 2.0f, 10);
  b.node("Add", {"x3_dq", "x3_dq"}, {"a7"}, "add_twice");
  qdq_output("a7", "y7");
  b.node("Mul", {"row", "x3_dq"}, {"m8"}, "mul_row");
  qdq_output("m8", "y8");
  b.node("Add", {"x3_dq", "column"}, {"a9"}, "add_column");
  qdq_output("a9", "y9");
  b.output("y7", DType::kF32, {4, 12}).output("y8", DType::kF32, {4, 12});
  b.output("y9", DType::kF32, {4, 12});
  auto graph = import_onnx_model(b.model(), {}, "qdq", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  std::vector<std::string> step_ops;
  nodes_without_steps(*graph, &step_ops);
  for (NodeId id = 0; id < static_cast<NodeId>(graph->nodes().size()); ++id) {
    const std::string& name = graph->node(id).name;
    const auto at = static_cast<size_t>(id);
    const std::string expected =
        name == "conv"                       ? "QLinearConv"
        : name == "matmul" || name == "gemm" ? "QLinearMatMul"
        : name == "conv_other_bias"          ? "Conv"
        : name == "transpose"                ? "Transpose"
        : name == "add_twice"                ? "hsched.QdqTable"  // x + x: x's function
        : name == "mul_row"                  ? "hsched.QdqBinary"
        : name == "add_column"               ? "Add"
        : name == "r6_q"                     ? "QuantizeLinear"
        : name == "x_dq" || name == "x3_dq"  ? "DequantizeLinear"  // unfused readers
        : name == "c1_q" || name == "m2_q" || name == "g3_q" || name == "t5_q" || name == "a7_q" ||
                name == "m8_q" || name == "x2_dq"
            ? ""  // absorbed
            : step_ops[at];
    EXPECT_EQ(step_ops[at], expected) << name;
  }
  expect_matches_program(*graph, "qdq");

  std::vector<Tensor> inputs;
  uint32_t seed = 7;
  for (const std::vector<int64_t>& dims :
       {std::vector<int64_t>{1, 8, 10, 10}, std::vector<int64_t>{2, 3, 12},
        std::vector<int64_t>{4, 12}}) {
    Tensor t = Tensor::uninitialized(DType::kF32, dims);
    for (float& v : t.values<float>()) {
      seed = seed * 1664525u + 1013904223u;
      v = static_cast<float>(seed >> 8) / static_cast<float>(1u << 24) * 12.0f - 6.0f;
    }
    inputs.push_back(std::move(t));
  }
  CpuOptions unfused;
  unfused.fuse = false;
  auto fused_program = CpuProgram::compile(*graph, CpuOptions{});
  auto float_program = CpuProgram::compile(*graph, unfused);
  ASSERT_TRUE(fused_program.is_ok() && float_program.is_ok());
  auto fused = (*fused_program)->run(inputs);
  auto reference = (*float_program)->run(inputs);
  ASSERT_TRUE(fused.is_ok()) << fused.status().message();
  ASSERT_TRUE(reference.is_ok()) << reference.status().message();
  for (size_t o = 0; o < fused->size(); ++o) {
    const auto got = (*fused)[o].values<float>();
    const auto want = (*reference)[o].values<float>();
    ASSERT_EQ(got.size(), want.size());
    size_t differing = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_LE(std::abs(got[i] - want[i]), 0.1f * 1.001f) << "output " << o << " at " << i;
      differing += got[i] != want[i];
    }
    EXPECT_LE(differing, got.size() / 20) << "output " << o;
    // Outputs from one step of the same float operations: the same bytes.
    if (o >= 4) {
      EXPECT_EQ(differing, 0u) << "output " << o;
    }
  }
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
