// ClProgram's chains of elementwise ops on one 8-bit tensor (fusable_qdq_chain, qdq_chain): a
// GELU or SiLU as ONNX Runtime's quantizer writes it, each op between its own DequantizeLinear
// and QuantizeLinear, runs as one kernel, against the CPU. On the first OpenCL device (PoCL in
// CI; skipped, not passed, without one).
#include <cmath>
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
using program_test::requantized;
using program_test::run_on_cpu;
using program_test::u8_ramp;

// x (u8 [2, 3, 40]) dequantized into "xd"; the output y (i8, scale `y_scale`) quantizes "v".
// With `product` "MatMul" or "Conv", x is the quantized product of the input "in" (u8 [2, 3, k])
// by int8 weights ([k, 40]; a 1-D Conv's [3, 3, 3], k 40).
OnnxBuilder chain_model(const char* output, const std::string& product = "", float y_scale = 0.03f,
                        int64_t k = 40) {
  const bool conv = product == "Conv";
  OnnxBuilder b(17);
  b.input(product.empty() ? "x" : "in", DType::kU8, {2, 3, product.empty() ? 40 : k});
  b.output("y", DType::kI8, {2, 3, 40});
  b.initializer_f32("xs", {}, {0.05f})
      .initializer("xz", Tensor::from_vector(DType::kU8, {}, std::vector<uint8_t>{120}))
      .initializer_f32("ys", {}, {y_scale})
      .initializer("yz", Tensor::from_vector(DType::kI8, {}, std::vector<int8_t>{-122}));
  if (!product.empty()) {
    const std::vector<int64_t> dims =
        conv ? std::vector<int64_t>{3, 3, 3} : std::vector<int64_t>{k, 40};
    std::vector<int8_t> w(static_cast<size_t>(dims[0] * dims[1] * (conv ? 3 : 1)));
    for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int8_t>((i * 7919 + 5) % 255 - 127);
    b.initializer_f32("in_s", {}, {0.04f})
        .initializer("in_z", Tensor::from_vector(DType::kU8, {}, std::vector<uint8_t>{128}))
        .initializer("w", Tensor::from_vector(DType::kI8, dims, w))
        .initializer_f32("ws", {},
                         {conv ? 0.01f : 0.003f * std::sqrt(40.0f / static_cast<float>(k))});
    b.node("DequantizeLinear", {"in", "in_s", "in_z"}, {"in_d"}, "dq_in");
    b.node("DequantizeLinear", {"w", "ws"}, {"wd"}, "dq_w");
    onnx::NodeProto& p = b.node(product, {"in_d", "wd"}, {"p"}, "product");
    if (conv) set_attr(p, "pads", std::vector<int64_t>{1, 1});
    b.node("QuantizeLinear", {"p", "xs", "xz"}, {"x"}, "q_p");
  }
  b.node("DequantizeLinear", {"x", "xs", "xz"}, {"xd"}, "dq_x");
  b.node("QuantizeLinear", {output, "ys", "yz"}, {"y"}, "q_y");
  return b;
}

// A GELU as ONNX Runtime's quantizer writes it: x / sqrt(2) -> Erf, quantized; + 1 (a quantized
// constant), quantized; x times that, quantized; times 0.5 (quantized too), quantized.
OnnxBuilder gelu_model(const std::string& product = "", float y_scale = 0.03f, int64_t k = 40) {
  OnnxBuilder b = chain_model("v", product, y_scale, k);
  b.initializer_f32("sqrt2", {}, {1.41421356f});
  quantized_constant(b, "one", 1.0f, 1.0f / 255);
  quantized_constant(b, "half", 0.5f, 0.5f / 255);
  b.node("Div", {"xd", "sqrt2"}, {"d"}, "div");
  b.node("Erf", {"d"}, {"e"}, "erf");
  requantized(b, "e", "ed", 1.0f / 127, 127);
  b.node("Add", {"ed", "one"}, {"a"}, "add");
  requantized(b, "a", "ad", 2.0f / 255, 0);
  b.node("Mul", {"xd", "ad"}, {"m"}, "mul");
  requantized(b, "m", "md", 14.0f / 255, 6);
  b.node("Mul", {"md", "half"}, {"v"}, "mul_half");
  return b;
}

TEST_F(ClProgramTest, QdqGeluRunsAsOneKernel) {
  auto graph = import_onnx_model(gelu_model().model(), {}, "cl_qdq_gelu", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  expect_kernels_a_step_apart(runtime_, *graph, 1, "GELU");
}

// After a quantized MatMul or Conv, its GELU runs in the product's epilogue: one step for all
// (K 1024: the product split over K, the GELU in the sum of the parts). (y's scale twice x's: a
// tie in the product's requantization moves y a step at most.)
TEST_F(ClProgramTest, QdqProductRunsItsGeluInItsEpilogue) {
  for (const auto& [product, k] :
       {std::pair{"MatMul", 40}, std::pair{"MatMul", 1024}, std::pair{"Conv", 40}}) {
    auto graph = import_onnx_model(gelu_model(product, 0.1f, k).model(), {}, "cl_qdq_gelu", {});
    ASSERT_TRUE(graph.is_ok()) << graph.status().message();
    expect_kernels_a_step_apart(runtime_, *graph, 1,
                                std::string("a ") + product + "'s GELU, K " + std::to_string(k));
  }
}

// x * Sigmoid(x) alone (YOLO's and EfficientNet's activation) as one kernel; a Sigmoid alone
// after a quantized MatMul in its epilogue (a chain of one op).
TEST_F(ClProgramTest, QdqSiluRunsAsOneKernel) {
  OnnxBuilder b = chain_model("v");
  b.node("Sigmoid", {"xd"}, {"s"}, "sigmoid");
  requantized(b, "s", "sd", 1.0f / 255, 0);
  b.node("Mul", {"xd", "sd"}, {"v"}, "mul");
  auto graph = import_onnx_model(b.model(), {}, "cl_qdq_silu", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  expect_kernels_a_step_apart(runtime_, *graph, 1, "SiLU");
  OnnxBuilder sigmoid = chain_model("v", "MatMul", 0.01f);
  sigmoid.node("Sigmoid", {"xd"}, {"v"}, "sigmoid");
  graph = import_onnx_model(sigmoid.model(), {}, "cl_qdq_linear_sigmoid", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  expect_kernels_a_step_apart(runtime_, *graph, 1, "a MatMul's Sigmoid");
}

// A Conv's quantized result through a chain of ops (a Sigmoid then + 1, each between its
// DequantizeLinear and QuantizeLinear) runs in the Conv's epilogue, the + 1 included (a first
// version took the Sigmoid alone and dropped the rest: y never written).
TEST_F(ClProgramTest, QdqConvRunsItsChain) {
  OnnxBuilder b = chain_model("v", "Conv", 0.1f);
  quantized_constant(b, "one", 1.0f, 1.0f / 255);
  b.node("Sigmoid", {"xd"}, {"s"}, "sigmoid");
  requantized(b, "s", "sd", 1.0f / 255, 0);
  b.node("Add", {"sd", "one"}, {"v"}, "add");
  auto graph = import_onnx_model(b.model(), {}, "cl_qdq_conv_sigmoid_add", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  expect_kernels_a_step_apart(runtime_, *graph, 1, "a Conv's Sigmoid + 1");
}

// A quantized SiLU after each kind of quantized Conv kernel (YOLO's and EfficientNet's block as
// ONNX Runtime's quantizer writes it: Conv, Q, DQ, Sigmoid, Q, DQ, Mul by the Conv's value, Q):
// in the Conv's launches, as many as the Conv alone takes. The cases run each Conv kernel that
// finishes a quantized Conv: the implicit GEMM, with K split (and conv_split_reduce) or not,
// conv_rows (few outputs, long sums), the direct kernel (depthwise) and the per-pixel one (3
// output channels).
TEST_F(ClProgramTest, QdqConvRunsASiluInItsLaunches) {
  struct Case {
    int64_t c, oc, group, hw;
  };
  for (const Case& k : {Case{16, 32, 1, 12}, Case{512, 32, 1, 12}, Case{512, 8, 1, 4},
                        Case{16, 16, 16, 12}, Case{16, 3, 1, 40}}) {
    const std::string what = "C " + std::to_string(k.c) + ", OC " + std::to_string(k.oc) +
                             ", group " + std::to_string(k.group);
    const auto model = [&](bool silu) {
      OnnxBuilder b(17);
      b.input("in", DType::kU8, {1, k.c, k.hw, k.hw});
      b.output("y", DType::kI8, {1, k.oc, k.hw, k.hw});
      const std::vector<int64_t> dims = {k.oc, k.c / k.group, 3, 3};
      std::vector<int8_t> w(static_cast<size_t>(dims[0] * dims[1] * 9));
      for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int8_t>((i * 7919 + 5) % 255 - 127);
      const float w_scale = 0.3f / std::sqrt(static_cast<float>(dims[1] * 9));
      b.initializer_f32("in_s", {}, {0.04f})
          .initializer("in_z", Tensor::from_vector(DType::kU8, {}, std::vector<uint8_t>{128}))
          .initializer("w", Tensor::from_vector(DType::kI8, dims, w))
          .initializer_f32("ws", {}, {w_scale / 127})
          .initializer_f32("xs", {}, {0.05f})
          .initializer("xz", Tensor::from_vector(DType::kU8, {}, std::vector<uint8_t>{120}))
          .initializer_f32("ys", {}, {0.03f})
          .initializer("yz", Tensor::from_vector(DType::kI8, {}, std::vector<int8_t>{-100}));
      b.node("DequantizeLinear", {"in", "in_s", "in_z"}, {"in_d"}, "dq_in");
      b.node("DequantizeLinear", {"w", "ws"}, {"wd"}, "dq_w");
      onnx::NodeProto& conv = b.node("Conv", {"in_d", "wd"}, {"p"}, "conv");
      set_attr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
      set_attr(conv, "group", k.group);
      if (!silu) {
        b.node("QuantizeLinear", {"p", "ys", "yz"}, {"y"}, "q_y");
        return b.model();
      }
      b.node("QuantizeLinear", {"p", "xs", "xz"}, {"x"}, "q_p");
      b.node("DequantizeLinear", {"x", "xs", "xz"}, {"xd"}, "dq_x");
      b.node("Sigmoid", {"xd"}, {"s"}, "sigmoid");
      requantized(b, "s", "sd", 1.0f / 255, 0);
      b.node("Mul", {"xd", "sd"}, {"v"}, "mul");
      b.node("QuantizeLinear", {"v", "ys", "yz"}, {"y"}, "q_y");
      return b.model();
    };
    onnx::ModelProto conv_alone = model(false), conv_silu = model(true);
    auto alone = import_onnx_model(conv_alone, {}, "cl_qdq_conv", {});
    ASSERT_TRUE(alone.is_ok()) << alone.status().message();
    auto plain = ClProgram::compile(*alone, runtime_, Storage::kFloat32, 300000);
    ASSERT_TRUE(plain.is_ok()) << plain.status().message();
    auto graph = import_onnx_model(conv_silu, {}, "cl_qdq_conv_silu", {});
    ASSERT_TRUE(graph.is_ok()) << graph.status().message();
    expect_kernels_a_step_apart(runtime_, *graph, (*plain)->stats().kernels, what,
                                {u8_ramp({1, k.c, k.hw, k.hw}, 37)});
  }
}

// With the Erf's quantized value also an output of the graph, the chain ends there (Div, Erf);
// + 1, the product by x and the halving run as a kernel each, reading x's bytes.
TEST_F(ClProgramTest, QdqChainEndsAtAValueReadElsewhere) {
  OnnxBuilder b = gelu_model();
  b.output("e_q", DType::kU8, {2, 3, 40});
  auto graph = import_onnx_model(b.model(), {}, "cl_qdq_gelu_split", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  const Tensor x = u8_ramp({2, 3, 40}, 37);
  const std::vector<Tensor> expected = run_on_cpu(*graph, {x});
  ASSERT_EQ(expected.size(), 2u);
  auto program = ClProgram::compile(*graph, runtime_, Storage::kFloat32, 300000);
  ASSERT_TRUE(program.is_ok()) << program.status().message();
  EXPECT_EQ((*program)->stats().kernels, 4);
  auto outputs = (*program)->run({x});
  ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
  expect_a_step_apart((*outputs)[0], expected[0], 20, "GELU's output");
  const auto got = (*outputs)[1].values<uint8_t>();
  const auto want = expected[1].values<uint8_t>();
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_LE(std::abs(got[i] - want[i]), 1) << "Erf's output at " << i;
  }
}

}  // namespace
}  // namespace hsched::opencl
