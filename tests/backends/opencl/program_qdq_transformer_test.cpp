// ClProgram's fusions of a quantized transformer block (the QDQ format, as ONNX Runtime's
// quantizer writes it): attention's MatMuls reading qkv through its quantized moves and q's and
// k's scaling, the second storing its result transposed; a Linear adding its residual (or an
// attention mask) in its epilogue; a LayerNormalization and a NaN guard run by the MatMul reading
// them. Against the CPU, on the first OpenCL device (PoCL in CI; skipped, not passed, without
// one).
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "backends/opencl/program.h"
#include "graph/onnx_builder.h"
#include "graph/onnx_import.h"
#include "program_test_util.h"

namespace hsched::opencl {
namespace {

using program_test::ClProgramTest;
using program_test::expect_a_step_apart;
using program_test::expect_kernels_a_step_apart;
using program_test::quantized_constant;
using program_test::quantized_linear;
using program_test::requantized;
using program_test::run_on_cpu;
using program_test::u8_ramp;

// Attention as ONNX Runtime's quantizer writes it (ViT's): qkv [1, 40, 48] reshaped into 3 x 2
// heads of 8, transposed, split into q, k and v, k transposed, q and k each scaled by a
// quantized constant, every move between a DequantizeLinear and QuantizeLinear of the same
// parameters; softmax(q k^T) v, its heads transposed back and merged. Three kernels: the MatMuls
// read qkv in place (through the moves, q and k through their scaling), the second stores its
// result transposed, and the Softmax.
TEST_F(ClProgramTest, QdqAttentionReadsQkvThroughItsMovesAndScales) {
  OnnxBuilder b(17);
  b.input("x", DType::kU8, {1, 40, 48});
  b.output("y", DType::kI8, {1, 40, 16});
  b.initializer_f32("xs", {}, {0.05f})
      .initializer("xz", Tensor::from_vector(DType::kU8, {}, std::vector<uint8_t>{120}))
      .initializer_f32("ys", {}, {0.04f})
      .initializer("yz", Tensor::from_vector(DType::kI8, {}, std::vector<int8_t>{3}))
      .initializer_i64("heads", {5}, {1, 40, 3, 2, 8})
      .initializer_i64("merged", {3}, {1, 40, 16})
      .initializer_i64("thirds", {3}, {1, 1, 1})
      .initializer_i64("axis0", {1}, {0});
  quantized_constant(b, "c_q", 0.59f, 1.0f / 255);
  quantized_constant(b, "c_k", 0.61f, 1.0f / 255);
  // `op` of `in` into `out`, between a DequantizeLinear and QuantizeLinear of x's parameters.
  const auto move = [&](const char* op, const std::vector<std::string>& in, const std::string& out,
                        const char* name) -> onnx::NodeProto& {
    onnx::NodeProto& node = b.node(op, in, {out + "_f"}, name);
    requantized(b, out + "_f", out, 0.05f, 120);
    return node;
  };
  b.node("DequantizeLinear", {"x", "xs", "xz"}, {"xd"}, "dq_x");
  move("Reshape", {"xd", "heads"}, "r", "reshape");
  set_attr(move("Transpose", {"r"}, "t", "transpose"), "perm", std::vector<int64_t>{2, 0, 3, 1, 4});
  b.node("Split", {"t", "thirds"}, {"s0", "s1", "s2"}, "split");
  for (const char* part : {"s0", "s1", "s2"}) {
    requantized(b, part, std::string(part) + "d", 0.05f, 120);
  }
  move("Squeeze", {"s0d", "axis0"}, "q", "squeeze_q");
  move("Squeeze", {"s1d", "axis0"}, "k", "squeeze_k");
  move("Squeeze", {"s2d", "axis0"}, "v", "squeeze_v");
  set_attr(move("Transpose", {"k"}, "kt", "transpose_k"), "perm", std::vector<int64_t>{0, 1, 3, 2});
  b.node("Mul", {"q", "c_q"}, {"qm"}, "scale_q");
  requantized(b, "qm", "qmd", 0.03f, 128);
  b.node("Mul", {"kt", "c_k"}, {"km"}, "scale_k");
  requantized(b, "km", "kmd", 0.03f, 128);
  b.node("MatMul", {"qmd", "kmd"}, {"w"}, "qk");
  requantized(b, "w", "wd", 0.08f, 128);
  set_attr(b.node("Softmax", {"wd"}, {"p"}, "softmax"), "axis", int64_t{-1});
  requantized(b, "p", "pd", 1.0f / 255, 0);
  b.node("MatMul", {"pd", "v"}, {"o"}, "av");
  // The result, its heads merged: i8 all the way.
  b.node("QuantizeLinear", {"o", "ys", "yz"}, {"o_q"}, "q_o");
  b.node("DequantizeLinear", {"o_q", "ys", "yz"}, {"od"}, "dq_o");
  set_attr(b.node("Transpose", {"od"}, {"ot"}, "transpose_o"), "perm",
           std::vector<int64_t>{0, 2, 1, 3});
  b.node("QuantizeLinear", {"ot", "ys", "yz"}, {"ot_q"}, "q_ot");
  b.node("DequantizeLinear", {"ot_q", "ys", "yz"}, {"otd"}, "dq_ot");
  b.node("Reshape", {"otd", "merged"}, {"y_f"}, "merge");
  b.node("QuantizeLinear", {"y_f", "ys", "yz"}, {"y"}, "q_y");
  auto graph = import_onnx_model(b.model(), {}, "cl_qdq_attention", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  expect_kernels_a_step_apart(runtime_, *graph, 3, "quantized attention");
}

// BERT's attention weights as ONNX Runtime's quantizer writes them: the quantized Softmax, then
// PyTorch's guard Where(IsNaN(p), 0, p) of its dequantized value (never NaN) quantized again to
// another scale, read by the product with V: two kernels, the guard and its requantization
// tabulated by the MatMul reading them (a chain of one op that nothing else fuses). With the
// IsNaN's mask also a graph output the guard is not fused, and the mask is still written (the
// fused program once read it from a buffer never made: a crash found by qdq_graphs.py).
TEST_F(ClProgramTest, QdqNanGuardRunsInTheMatMulReadingIt) {
  for (const bool mask_is_output : {false, true}) {
    SCOPED_TRACE(mask_is_output ? "the mask a graph output" : "the mask read by the guard alone");
    OnnxBuilder b(17);
    b.input("s", DType::kU8, {1, 2, 40, 40}).input("v", DType::kU8, {1, 2, 40, 8});
    b.output("y", DType::kI8, {1, 2, 40, 8});
    if (mask_is_output) b.output("nan", DType::kBool, {1, 2, 40, 40});
    b.initializer_f32("ss", {}, {0.08f})
        .initializer("sz", Tensor::from_vector(DType::kU8, {}, std::vector<uint8_t>{128}))
        .initializer_f32("vs", {}, {0.05f})
        .initializer("vz", Tensor::from_vector(DType::kU8, {}, std::vector<uint8_t>{120}))
        .initializer_f32("zero", {1}, {0.0f})
        .initializer_f32("ys", {}, {0.02f})
        .initializer("yz", Tensor::from_vector(DType::kI8, {}, std::vector<int8_t>{-5}));
    b.node("DequantizeLinear", {"s", "ss", "sz"}, {"sd"}, "dq_s");
    set_attr(b.node("Softmax", {"sd"}, {"p"}, "softmax"), "axis", int64_t{-1});
    requantized(b, "p", "pd", 1.0f / 255, 0);
    b.node("IsNaN", {"pd"}, {"nan"}, "isnan");
    b.node("Where", {"nan", "zero", "pd"}, {"g"}, "guard");
    requantized(b, "g", "gd", 0.002f, 0);
    b.node("DequantizeLinear", {"v", "vs", "vz"}, {"vd"}, "dq_v");
    b.node("MatMul", {"gd", "vd"}, {"o"}, "av");
    b.node("QuantizeLinear", {"o", "ys", "yz"}, {"y"}, "q_y");
    auto graph = import_onnx_model(b.model(), {}, "cl_qdq_nan_guard", {});
    ASSERT_TRUE(graph.is_ok()) << graph.status().message();
    const std::vector<Tensor> inputs = {u8_ramp({1, 2, 40, 40}, 37), u8_ramp({1, 2, 40, 8}, 53)};
    const std::vector<Tensor> expected = run_on_cpu(*graph, inputs);
    ASSERT_EQ(expected.size(), mask_is_output ? 2u : 1u);
    auto program = ClProgram::compile(*graph, runtime_, Storage::kFloat32, 300000);
    ASSERT_TRUE(program.is_ok()) << program.status().message();
    if (!mask_is_output) {
      EXPECT_EQ((*program)->stats().kernels, 2);
    }
    auto outputs = (*program)->run(inputs);
    ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
    ASSERT_EQ(outputs->size(), expected.size());
    expect_a_step_apart((*outputs)[0], expected[0], 20, "attention weights through a NaN guard");
    if (mask_is_output) {
      const auto mask = (*outputs)[1].values<uint8_t>();
      const auto want = expected[1].values<uint8_t>();
      ASSERT_EQ(mask.size(), want.size());
      EXPECT_TRUE(std::equal(mask.begin(), mask.end(), want.begin())) << "the mask";
    }
  }
}

// The same Linear (or its product alone) then a residual Add of 8-bit x of the result's shape
// between its DequantizeLinear and QuantizeLinear (a transformer's attention projection or MLP
// output), or of one [M, N] for both batches (an attention mask): one launch, the residual added
// after the bias's requantization.
TEST_F(ClProgramTest, QdqLinearAddsItsResidualAfterItsBias) {
  for (const auto& [bias, x_batch] :
       {std::pair{true, 2}, std::pair{false, 2}, std::pair{false, 1}}) {
    OnnxBuilder b(17);
    b.input("a", DType::kU8, {2, 3, 40}).input("x", DType::kU8, {x_batch, 3, 24});
    b.output("y", DType::kI8, {2, 3, 24});
    quantized_linear(b);
    b.initializer_f32("xs", {}, {0.07f})
        .initializer("xz", Tensor::from_vector(DType::kU8, {}, std::vector<uint8_t>{130}))
        .initializer_f32("ys", {}, {0.37f})
        .initializer("yz", Tensor::from_vector(DType::kI8, {}, std::vector<int8_t>{-3}));
    if (bias) {
      b.node("DequantizeLinear", {"bq", "bs"}, {"bd"}, "dq_bias");
      b.node("Add", {"pd", "bd"}, {"s"}, "bias");
      b.node("QuantizeLinear", {"s", "ps", "pz"}, {"sq"}, "q_s");
      b.node("DequantizeLinear", {"sq", "ps", "pz"}, {"sd"}, "dq_s");
    }
    b.node("DequantizeLinear", {"x", "xs", "xz"}, {"xd"}, "dq_x");
    b.node("Add", {"xd", bias ? "sd" : "pd"}, {"r"}, "residual");
    b.node("QuantizeLinear", {"r", "ys", "yz"}, {"y"}, "q_y");
    auto graph = import_onnx_model(b.model(), {}, "cl_qdq_linear_residual", {});
    ASSERT_TRUE(graph.is_ok()) << graph.status().message();
    expect_kernels_a_step_apart(
        runtime_, *graph, 1,
        std::string(bias ? "with" : "without") + " a bias" + (x_batch == 1 ? ", shared" : ""),
        {u8_ramp({2, 3, 40}, 53), u8_ramp({x_batch, 3, 24}, 29)}, 12);
  }
}

// The same LayerNormalization (K 200: several values a lane) quantized to u8 and read by a
// quantized MatMul only: one kernel, the MatMul normalizing its A as it loads it, its output the
// same bytes as with the LayerNormalization's own kernel (its output then a graph output too).
TEST_F(ClProgramTest, QdqLayerNormRunsInTheMatMulReadingIt) {
  std::vector<int8_t> w(200 * 24);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int8_t>((i * 7919 + 5) % 255 - 127);
  std::vector<Tensor> outputs[2];
  for (const bool alone : {false, true}) {
    OnnxBuilder b(17);
    b.input("x", DType::kU8, {2, 3, 200});
    b.output("y", DType::kI8, {2, 3, 24});
    if (alone) b.output("nq", DType::kU8, {2, 3, 200});
    b.initializer_f32("xs", {}, {0.05f})
        .initializer("xz", Tensor::from_vector(DType::kU8, {}, std::vector<uint8_t>{110}))
        .initializer_random("gamma", {200}, 1.0f, 5)
        .initializer_random("beta", {200}, 0.5f, 6)
        .initializer_f32("ns", {}, {0.03f})
        .initializer("nz", Tensor::from_vector(DType::kU8, {}, std::vector<uint8_t>{128}))
        .initializer("w", Tensor::from_vector(DType::kI8, {200, 24}, w))
        .initializer_f32("ws", {}, {0.002f})
        .initializer_f32("ys", {}, {0.05f})
        .initializer("yz", Tensor::from_vector(DType::kI8, {}, std::vector<int8_t>{-4}));
    b.node("DequantizeLinear", {"x", "xs", "xz"}, {"xd"}, "dq_x");
    b.node("LayerNormalization", {"xd", "gamma", "beta"}, {"n"}, "norm");
    b.node("QuantizeLinear", {"n", "ns", "nz"}, {"nq"}, "q_n");
    b.node("DequantizeLinear", {"nq", "ns", "nz"}, {"nd"}, "dq_n");
    b.node("DequantizeLinear", {"w", "ws"}, {"wd"}, "dq_w");
    b.node("MatMul", {"nd", "wd"}, {"p"}, "linear");
    b.node("QuantizeLinear", {"p", "ys", "yz"}, {"y"}, "q_y");
    auto graph = import_onnx_model(b.model(), {}, "cl_qdq_layer_norm_linear", {});
    ASSERT_TRUE(graph.is_ok()) << graph.status().message();
    if (!alone) expect_kernels_a_step_apart(runtime_, *graph, 1, "LayerNormalization -> MatMul");
    auto program = ClProgram::compile(*graph, runtime_, Storage::kFloat32, 300000);
    ASSERT_TRUE(program.is_ok()) << program.status().message();
    EXPECT_EQ((*program)->stats().kernels, alone ? 2 : 1);
    auto run = (*program)->run({u8_ramp({2, 3, 200}, 37)});
    ASSERT_TRUE(run.is_ok()) << run.status().message();
    outputs[alone ? 1 : 0] = std::move(*run);
  }
  const auto merged = outputs[0][0].values<int8_t>();
  const auto apart = outputs[1][0].values<int8_t>();
  ASSERT_EQ(merged.size(), apart.size());
  EXPECT_TRUE(std::equal(merged.begin(), merged.end(), apart.begin()));
}

}  // namespace
}  // namespace hsched::opencl
