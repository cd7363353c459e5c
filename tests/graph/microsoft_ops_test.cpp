// ONNX Runtime's quantized and fused operators of its com.microsoft domain
// (graph/microsoft_ops.h): each imports as the standard nodes that define it, and the CPU computes
// what its definition says (checked against a direct computation: dequantize, the float op,
// quantize; the fused ops' formulas); what cannot be expressed is refused with one line naming the
// node. tests/differential/ms_quantized_ops.py checks them against ONNX Runtime's own kernels.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "graph/onnx_builder.h"
#include "graph/onnx_import.h"
#include "support/cpu_run.h"
#include "support/graph_query.h"

namespace hsched {
namespace {

using test::has_op;
using test::run_on_cpu;

constexpr int64_t kOpset = 17;

onnx::NodeProto& ms_node(OnnxBuilder& b, const std::string& op,
                         const std::vector<std::string>& inputs,
                         const std::vector<std::string>& outputs) {
  onnx::NodeProto& node = b.node(op, inputs, outputs, "q_" + op);
  node.set_domain("com.microsoft");
  return node;
}

OnnxBuilder ms_builder(int64_t opset = kOpset) {
  OnnxBuilder b(opset);
  auto* import = b.model().add_opset_import();
  import->set_domain("com.microsoft");
  import->set_version(1);
  return b;
}

// A scalar scale and a scalar 8-bit zero point named `prefix`_scale and `prefix`_zp.
void quant_params(OnnxBuilder& b, const std::string& prefix, float scale, int zero_point,
                  DType dtype = DType::kU8) {
  b.initializer_f32(prefix + "_scale", {}, {scale});
  if (dtype == DType::kU8) {
    b.initializer(
        prefix + "_zp",
        Tensor::from_vector(dtype, {}, std::vector<uint8_t>{static_cast<uint8_t>(zero_point)}));
  } else {
    b.initializer(
        prefix + "_zp",
        Tensor::from_vector(dtype, {}, std::vector<int8_t>{static_cast<int8_t>(zero_point)}));
  }
}

Tensor u8(std::vector<int64_t> dims, const std::vector<uint8_t>& values) {
  return Tensor::from_vector(DType::kU8, std::move(dims), values);
}

float dequantize(int v, float scale, int zero_point) {
  return static_cast<float>(v - zero_point) * scale;
}

int quantize(float v, float scale, int zero_point, int lo = 0, int hi = 255) {
  return std::clamp(static_cast<int>(std::nearbyint(v / scale)) + zero_point, lo, hi);
}

std::vector<int> ints(const Tensor& t) {
  std::vector<int> out;
  if (t.dtype() == DType::kU8) {
    for (uint8_t v : t.values<uint8_t>()) out.push_back(v);
  } else {
    for (int8_t v : t.values<int8_t>()) out.push_back(v);
  }
  return out;
}

Result<Graph> import_ms(OnnxBuilder& b) { return import_onnx_model(b.model(), {}, "q.onnx", {}); }

void expect_refused(OnnxBuilder& b, const std::string& words) {
  auto graph = import_ms(b);
  ASSERT_FALSE(graph.is_ok());
  const std::string& message = graph.status().message();
  EXPECT_NE(message.find(words), std::string::npos) << message;
  EXPECT_NE(message.find("q.onnx"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST(MsQuantizedOpsTest, QLinearAddAndMulComputeTheirDefinition) {
  const std::vector<uint8_t> a = {0, 17, 99, 128, 200, 255};
  const std::vector<uint8_t> c = {255, 3, 140, 128, 61, 9};
  for (const std::string op : {"Add", "Mul"}) {
    OnnxBuilder b = ms_builder();
    b.input("a", DType::kU8, {2, 3}).input("b", DType::kU8, {2, 3}).output("y", DType::kU8, {2, 3});
    quant_params(b, "a", 0.05f, 128);
    quant_params(b, "b", 0.03f, 100);
    quant_params(b, "y", op == "Add" ? 0.07f : 0.02f, 120);
    ms_node(b, "QLinear" + op, {"a", "a_scale", "a_zp", "b", "b_scale", "b_zp", "y_scale", "y_zp"},
            {"y"});
    auto graph = import_ms(b);
    ASSERT_TRUE(graph.is_ok()) << graph.status().message();
    EXPECT_FALSE(has_op(*graph, "QLinear" + op));
    const auto out = run_on_cpu(*graph, {u8({2, 3}, a), u8({2, 3}, c)});
    ASSERT_EQ(out.size(), 1u);
    std::vector<int> want;
    for (size_t i = 0; i < a.size(); ++i) {
      const float x = dequantize(a[i], 0.05f, 128), z = dequantize(c[i], 0.03f, 100);
      want.push_back(quantize(op == "Add" ? x + z : x * z, op == "Add" ? 0.07f : 0.02f, 120));
    }
    EXPECT_EQ(ints(out[0]), want) << op;
  }
}

// Ops of one 8-bit input, each against dequantize -> the float op -> quantize computed here.
TEST(MsQuantizedOpsTest, UnaryOpsComputeTheirDefinition) {
  const std::vector<uint8_t> x = {3, 40, 90, 128, 150, 170, 220, 251};
  const auto deq = [&](size_t i) { return dequantize(x[i], 0.04f, 128); };
  struct Case {
    std::string op;
    std::vector<int64_t> out_dims;
    std::vector<float> want;  // before quantization
  };
  std::vector<Case> cases;
  {
    Case sigmoid{"QLinearSigmoid", {2, 4}, {}}, leaky{"QLinearLeakyRelu", {2, 4}, {}};
    for (size_t i = 0; i < x.size(); ++i) {
      sigmoid.want.push_back(1.0f / (1.0f + std::exp(-deq(i))));
      leaky.want.push_back(deq(i) < 0 ? 0.2f * deq(i) : deq(i));
    }
    cases.push_back(sigmoid);
    cases.push_back(leaky);
  }
  Case softmax{"QLinearSoftmax", {2, 4}, {}};
  for (size_t row = 0; row < 2; ++row) {
    float sum = 0;
    for (size_t j = 0; j < 4; ++j) sum += std::exp(deq(row * 4 + j));
    for (size_t j = 0; j < 4; ++j) softmax.want.push_back(std::exp(deq(row * 4 + j)) / sum);
  }
  cases.push_back(softmax);
  Case mean{"QLinearReduceMean", {2, 1}, {}};
  for (size_t row = 0; row < 2; ++row) {
    mean.want.push_back((deq(row * 4) + deq(row * 4 + 1) + deq(row * 4 + 2) + deq(row * 4 + 3)) /
                        4.0f);
  }
  cases.push_back(mean);
  for (const Case& c : cases) {
    OnnxBuilder b = ms_builder();
    b.input("x", DType::kU8, {2, 4}).output("y", DType::kU8, c.out_dims);
    quant_params(b, "x", 0.04f, 128);
    quant_params(b, "y", 0.01f, 100);
    auto& node = ms_node(b, c.op, {"x", "x_scale", "x_zp", "y_scale", "y_zp"}, {"y"});
    if (c.op == "QLinearLeakyRelu") set_attr(node, "alpha", 0.2f);
    if (c.op == "QLinearSoftmax") set_attr(node, "opset", int64_t{13});
    if (c.op == "QLinearReduceMean") set_attr(node, "axes", std::vector<int64_t>{1});
    auto graph = import_ms(b);
    ASSERT_TRUE(graph.is_ok()) << c.op << ": " << graph.status().message();
    const auto out = run_on_cpu(*graph, {u8({2, 4}, x)});
    ASSERT_EQ(out.size(), 1u) << c.op;
    const std::vector<int> got = ints(out[0]);
    ASSERT_EQ(got.size(), c.want.size()) << c.op;
    for (size_t i = 0; i < got.size(); ++i) {
      // The float op's last bit may differ from this loop's (exp): one step at most.
      EXPECT_LE(std::abs(got[i] - quantize(c.want[i], 0.01f, 100)), 1) << c.op << " at " << i;
    }
  }
}

TEST(MsQuantizedOpsTest, QLinearConcatAndPoolsComputeTheirDefinition) {
  // Concat of two inputs of different scales along the channels, then a global average pool.
  OnnxBuilder b = ms_builder();
  b.input("a", DType::kU8, {1, 1, 2, 2}).input("c", DType::kU8, {1, 1, 2, 2});
  b.output("y", DType::kU8, {1, 2, 2, 2}).output("p", DType::kU8, {1, 2, 1, 1});
  quant_params(b, "a", 0.1f, 10);
  quant_params(b, "c", 0.05f, 200);
  quant_params(b, "y", 0.08f, 128);
  quant_params(b, "p", 0.02f, 128);
  set_attr(ms_node(b, "QLinearConcat",
                   {"y_scale", "y_zp", "a", "a_scale", "a_zp", "c", "c_scale", "c_zp"}, {"y"}),
           "axis", int64_t{1});
  ms_node(b, "QLinearGlobalAveragePool", {"y", "y_scale", "y_zp", "p_scale", "p_zp"}, {"p"});
  auto graph = import_ms(b);
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  const std::vector<uint8_t> a = {0, 10, 30, 255}, c = {255, 200, 100, 0};
  const auto out = run_on_cpu(*graph, {u8({1, 1, 2, 2}, a), u8({1, 1, 2, 2}, c)});
  ASSERT_EQ(out.size(), 2u);
  std::vector<int> want;
  for (uint8_t v : a) want.push_back(quantize(dequantize(v, 0.1f, 10), 0.08f, 128));
  for (uint8_t v : c) want.push_back(quantize(dequantize(v, 0.05f, 200), 0.08f, 128));
  EXPECT_EQ(ints(out[0]), want);
  for (int channel = 0; channel < 2; ++channel) {
    float sum = 0;
    for (int i = 0; i < 4; ++i)
      sum += dequantize(want[static_cast<size_t>(channel * 4 + i)], 0.08f, 128);
    EXPECT_LE(std::abs(ints(out[1])[static_cast<size_t>(channel)] - quantize(sum / 4, 0.02f, 128)),
              1);
  }
}

// QGemm: u8 A, i8 B transposed with per-column scales, an int32 C at alpha * a_scale * b_scale,
// alpha 0.5; float output without y_scale, quantized with it.
TEST(MsQuantizedOpsTest, QGemmComputesItsDefinition) {
  const std::vector<uint8_t> a = {10, 200, 128, 77, 0, 255};  // [2, 3]
  const std::vector<int8_t> w = {-5, 100, 7, 127, -128, 3};   // [N=2, K=3]
  const std::vector<float> w_scales = {0.01f, 0.02f};
  const std::vector<int32_t> bias = {1000, -700};
  const float a_scale = 0.03f, alpha = 0.5f;
  std::vector<float> want;
  for (int m = 0; m < 2; ++m) {
    for (int n = 0; n < 2; ++n) {
      float sum = 0;
      for (int k = 0; k < 3; ++k) {
        sum += dequantize(a[static_cast<size_t>(m * 3 + k)], a_scale, 128) *
               static_cast<float>(w[static_cast<size_t>(n * 3 + k)]) *
               w_scales[static_cast<size_t>(n)];
      }
      want.push_back(alpha * sum + static_cast<float>(bias[static_cast<size_t>(n)]) * alpha *
                                       a_scale * w_scales[static_cast<size_t>(n)]);
    }
  }
  for (const bool quantized : {false, true}) {
    OnnxBuilder b = ms_builder();
    b.input("a", DType::kU8, {2, 3}).output("y", quantized ? DType::kU8 : DType::kF32, {2, 2});
    quant_params(b, "a", a_scale, 128);
    b.initializer("w", Tensor::from_vector(DType::kI8, {2, 3}, w));
    b.initializer_f32("w_scale", {2}, w_scales);
    b.initializer("w_zp", Tensor::from_vector(DType::kI8, {2}, std::vector<int8_t>{0, 0}));
    b.initializer("bias", Tensor::from_vector(DType::kI32, {2}, bias));
    std::vector<std::string> inputs = {"a", "a_scale", "a_zp", "w", "w_scale", "w_zp", "bias"};
    if (quantized) {
      quant_params(b, "y", 0.05f, 128);
      inputs.insert(inputs.end(), {"y_scale", "y_zp"});
    }
    auto& node = ms_node(b, "QGemm", inputs, {"y"});
    set_attr(node, "transB", int64_t{1});
    set_attr(node, "alpha", alpha);
    auto graph = import_ms(b);
    ASSERT_TRUE(graph.is_ok()) << graph.status().message();
    const auto out = run_on_cpu(*graph, {u8({2, 3}, a)});
    ASSERT_EQ(out.size(), 1u);
    for (size_t i = 0; i < want.size(); ++i) {
      if (quantized) {
        EXPECT_LE(std::abs(ints(out[0])[i] - quantize(want[i], 0.05f, 128)), 1) << i;
      } else {
        EXPECT_NEAR(out[0].values<float>()[i], want[i], 1e-5f * (1 + std::abs(want[i]))) << i;
      }
    }
  }
}

// MatMulIntegerToFloat and DynamicQuantizeMatMul against the float product of the dequantized
// operands (DynamicQuantizeMatMul quantizes A to uint8 first: within half a step of A per term).
TEST(MsQuantizedOpsTest, IntegerMatMulsToFloatComputeTheirDefinition) {
  const std::vector<float> a_float = {0.5f, -1.25f, 2.0f, 0.0f, 3.5f, -0.75f};  // [2, 3]
  const std::vector<int8_t> w = {1, -2, 3, 4, -5, 6};                           // [3, 2]
  const std::vector<float> w_scales = {0.1f, 0.2f};
  const std::vector<float> bias = {0.25f, -0.5f};
  std::vector<float> want;
  for (int m = 0; m < 2; ++m) {
    for (int n = 0; n < 2; ++n) {
      float sum = bias[static_cast<size_t>(n)];
      for (int k = 0; k < 3; ++k) {
        sum += a_float[static_cast<size_t>(m * 3 + k)] *
               static_cast<float>(w[static_cast<size_t>(k * 2 + n)]) *
               w_scales[static_cast<size_t>(n)];
      }
      want.push_back(sum);
    }
  }
  for (const std::string op : {"DynamicQuantizeMatMul", "MatMulIntegerToFloat"}) {
    OnnxBuilder b = ms_builder();
    b.output("y", DType::kF32, {2, 2});
    b.initializer("w", Tensor::from_vector(DType::kI8, {3, 2}, w));
    b.initializer_f32("w_scale", {2}, w_scales);
    b.initializer_f32("bias", {2}, bias);
    Tensor input;
    float tolerance = 1e-5f;
    if (op == "DynamicQuantizeMatMul") {
      b.input("a", DType::kF32, {2, 3});
      ms_node(b, op, {"a", "w", "w_scale", "", "bias"}, {"y"});
      input = Tensor::from_vector(DType::kF32, {2, 3}, a_float);
      tolerance = 0.5f * (3.5f + 1.25f) / 255.0f * (3 * 6 * 0.2f);  // half a step of A per term
    } else {
      // A quantized exactly: the values are multiples of 0.25 around zero point 100.
      b.input("a", DType::kU8, {2, 3});
      quant_params(b, "a", 0.25f, 100);
      ms_node(b, op, {"a", "w", "a_scale", "w_scale", "a_zp", "", "bias"}, {"y"});
      std::vector<uint8_t> a;
      for (float v : a_float) a.push_back(static_cast<uint8_t>(quantize(v, 0.25f, 100)));
      input = u8({2, 3}, a);
    }
    auto graph = import_ms(b);
    ASSERT_TRUE(graph.is_ok()) << op << ": " << graph.status().message();
    const auto out = run_on_cpu(*graph, {input});
    ASSERT_EQ(out.size(), 1u) << op;
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_NEAR(out[0].values<float>()[i], want[i], tolerance) << op << " at " << i;
    }
  }
}

// Without an output zero point the output keeps its operands' type: int8 here, where
// QuantizeLinear alone would make uint8.
TEST(MsQuantizedOpsTest, Int8OutputWithoutZeroPointStaysInt8) {
  OnnxBuilder b = ms_builder();
  b.input("a", DType::kI8, {4}).input("c", DType::kI8, {4}).output("y", DType::kI8, {4});
  quant_params(b, "a", 0.1f, -3, DType::kI8);
  quant_params(b, "c", 0.1f, 5, DType::kI8);
  b.initializer_f32("y_scale", {}, {0.2f});
  ms_node(b, "QLinearMul", {"a", "a_scale", "a_zp", "c", "c_scale", "c_zp", "y_scale"}, {"y"});
  auto graph = import_ms(b);
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  const std::vector<int8_t> a = {-128, -3, 50, 127}, c = {127, 5, -60, -128};
  const auto out = run_on_cpu(
      *graph, {Tensor::from_vector(DType::kI8, {4}, a), Tensor::from_vector(DType::kI8, {4}, c)});
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].dtype(), DType::kI8);
  std::vector<int> want;
  for (size_t i = 0; i < a.size(); ++i) {
    want.push_back(
        quantize(dequantize(a[i], 0.1f, -3) * dequantize(c[i], 0.1f, 5), 0.2f, 0, -128, 127));
  }
  EXPECT_EQ(ints(out[0]), want);
}

// The domain's QuantizeLinear, DequantizeLinear and QLinearConv are the ONNX operators.
TEST(MsQuantizedOpsTest, DomainCopiesOfOnnxOperatorsImportAsThem) {
  OnnxBuilder b = ms_builder();
  b.input("x", DType::kF32, {1, 1, 2, 2}).output("y", DType::kF32, {1, 1, 2, 2});
  quant_params(b, "x", 0.1f, 128);
  quant_params(b, "y", 0.2f, 128);
  b.initializer("w", Tensor::from_vector(DType::kI8, {1, 1, 1, 1}, std::vector<int8_t>{2}));
  b.initializer_f32("w_scale", {}, {0.5f});
  b.initializer("w_zp", Tensor::from_vector(DType::kI8, {}, std::vector<int8_t>{0}));
  ms_node(b, "QuantizeLinear", {"x", "x_scale", "x_zp"}, {"xq"});
  set_attr(ms_node(b, "QLinearConv",
                   {"xq", "x_scale", "x_zp", "w", "w_scale", "w_zp", "y_scale", "y_zp"}, {"yq"}),
           "channels_last", int64_t{0});
  ms_node(b, "DequantizeLinear", {"yq", "y_scale", "y_zp"}, {"y"});
  auto graph = import_ms(b);
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  for (const Node& node : graph->nodes()) EXPECT_TRUE(node.domain.empty()) << node.op_type;
  const auto out = run_on_cpu(
      *graph, {Tensor::from_vector(DType::kF32, {1, 1, 2, 2}, std::vector<float>{1, -2, 0.3f, 4})});
  ASSERT_EQ(out.size(), 1u);
  // y = x * (2 * 0.5), through steps of 0.1 then 0.2: 0.3 is 1.5 steps of y, rounded to even.
  EXPECT_EQ(std::vector<float>(out[0].values<float>().begin(), out[0].values<float>().end()),
            (std::vector<float>{1.0f, -2.0f, 0.4f, 4.0f}));
}

std::vector<float> floats(const Tensor& t) {
  const auto v = t.values<float>();
  return {v.begin(), v.end()};
}

// 0.5 times a [2, 3] matrix (row-major) by [[1, 2], [3, 4], [5, 6]]: the FusedMatMul cases' want.
std::vector<float> half_product(const std::vector<float>& a) {
  const float w[3][2] = {{1, 2}, {3, 4}, {5, 6}};
  std::vector<float> want;
  for (size_t r = 0; r < 2; ++r) {
    for (size_t c = 0; c < 2; ++c) {
      float sum = 0;
      for (size_t k = 0; k < 3; ++k) sum += a[r * 3 + k] * w[k][c];
      want.push_back(0.5f * sum);
    }
  }
  return want;
}

// FusedConv: Conv plus Z, then Relu; FusedMatMul: alpha times the product; Gelu and QuickGelu:
// their formulas; SkipLayerNormalization: LayerNormalization of input + skip + bias, the sum as
// its fourth output. All as ONNX Runtime's optimizer saves them (its `extended` level).
TEST(MsFusedOpsTest, FusionsComputeTheirDefinition) {
  const std::vector<float> x = {-2.0f, -0.5f, 0.0f, 0.25f, 1.0f, 3.0f};
  {
    OnnxBuilder b = ms_builder();
    b.input("x", DType::kF32, {1, 1, 2, 3}).input("z", DType::kF32, {1, 1, 2, 3});
    b.output("y", DType::kF32, {1, 1, 2, 3});
    b.initializer_f32("w", {1, 1, 1, 1}, {2.0f}).initializer_f32("b", {1}, {-1.0f});
    auto& conv = ms_node(b, "FusedConv", {"x", "w", "b", "z"}, {"y"});
    set_attr(conv, "activation", std::string("Relu"));
    set_attr(conv, "kernel_shape", std::vector<int64_t>{1, 1});
    auto graph = import_ms(b);
    ASSERT_TRUE(graph.is_ok()) << graph.status().message();
    EXPECT_FALSE(has_op(*graph, "FusedConv"));
    const Tensor in = Tensor::from_vector(DType::kF32, {1, 1, 2, 3}, x);
    const auto out = run_on_cpu(*graph, {in, in});
    ASSERT_EQ(out.size(), 1u);
    std::vector<float> want;
    for (float v : x) want.push_back(std::max(0.0f, 2.0f * v - 1.0f + v));
    EXPECT_EQ(floats(out[0]), want);
  }
  {
    OnnxBuilder b = ms_builder();
    b.input("a", DType::kF32, {2, 3}).output("y", DType::kF32, {2, 2});
    b.initializer_f32("w", {3, 2}, {1, 2, 3, 4, 5, 6});
    set_attr(ms_node(b, "FusedMatMul", {"a", "w"}, {"y"}), "alpha", 0.5f);
    auto graph = import_ms(b);
    ASSERT_TRUE(graph.is_ok()) << graph.status().message();
    const auto out = run_on_cpu(*graph, {Tensor::from_vector(DType::kF32, {2, 3}, x)});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(floats(out[0]), half_product(x));
  }
  {  // transA and transB (attention's Q times K transposed), rewritten once the ranks are known
    OnnxBuilder b = ms_builder();
    b.input("a", DType::kF32, {3, 2}).output("y", DType::kF32, {2, 2});
    b.initializer_f32("w", {2, 3}, {1, 3, 5, 2, 4, 6});
    b.node("Relu", {"a"}, {"r"}, "relu");  // (r's rank known only after inference)
    auto& node = ms_node(b, "FusedMatMul", {"r", "w"}, {"y"});
    set_attr(node, "transA", int64_t{1});
    set_attr(node, "transB", int64_t{1});
    set_attr(node, "alpha", 0.5f);
    auto graph = import_ms(b);
    ASSERT_TRUE(graph.is_ok()) << graph.status().message();
    EXPECT_FALSE(has_op(*graph, "FusedMatMul"));
    const std::vector<float> a_t = {-2.0f, 0.25f, -0.5f, 1.0f, 0.0f, 3.0f};  // x transposed
    const auto out = run_on_cpu(*graph, {Tensor::from_vector(DType::kF32, {3, 2}, a_t)});
    ASSERT_EQ(out.size(), 1u);
    std::vector<float> relu_x;
    for (float v : x) relu_x.push_back(std::max(0.0f, v));
    EXPECT_EQ(floats(out[0]), half_product(relu_x));
  }
  for (const std::string op : {"Gelu", "QuickGelu"}) {
    OnnxBuilder b = ms_builder();
    b.input("x", DType::kF32, {6}).output("y", DType::kF32, {6});
    set_attr(ms_node(b, op, {"x"}, {"y"}), "alpha", 1.702f);  // (Gelu has none; ignored)
    auto graph = import_ms(b);
    ASSERT_TRUE(graph.is_ok()) << graph.status().message();
    const auto out = run_on_cpu(*graph, {Tensor::from_vector(DType::kF32, {6}, x)});
    ASSERT_EQ(out.size(), 1u);
    for (size_t i = 0; i < x.size(); ++i) {
      const double v = x[i];
      const double want = op == "Gelu" ? 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)))
                                       : v / (1 + std::exp(-1.702 * v));
      EXPECT_NEAR(out[0].values<float>()[i], want, 1e-6) << op << " of " << v;
    }
  }
  {
    OnnxBuilder b = ms_builder();
    b.input("x", DType::kF32, {2, 3}).input("skip", DType::kF32, {2, 3});
    b.output("y", DType::kF32, {2, 3}).output("sum", DType::kF32, {2, 3});
    b.initializer_f32("gamma", {3}, {1, 2, 3}).initializer_f32("beta", {3}, {0, 1, 0});
    b.initializer_f32("bias", {3}, {0.5f, 0, -0.5f});
    set_attr(ms_node(b, "SkipLayerNormalization", {"x", "skip", "gamma", "beta", "bias"},
                     {"y", "", "", "sum"}),
             "epsilon", 1e-5f);
    auto graph = import_ms(b);
    ASSERT_TRUE(graph.is_ok()) << graph.status().message();
    const Tensor in = Tensor::from_vector(DType::kF32, {2, 3}, x);
    const auto out = run_on_cpu(*graph, {in, in});
    ASSERT_EQ(out.size(), 2u);
    const float bias[] = {0.5f, 0, -0.5f}, gamma[] = {1, 2, 3}, beta[] = {0, 1, 0};
    for (size_t row = 0; row < 2; ++row) {
      double s[3], mean = 0, var = 0;
      for (size_t c = 0; c < 3; ++c) mean += s[c] = 2.0 * x[row * 3 + c] + bias[c];
      mean /= 3;
      for (double v : s) var += (v - mean) * (v - mean) / 3;
      for (size_t c = 0; c < 3; ++c) {
        EXPECT_FLOAT_EQ(out[1].values<float>()[row * 3 + c], static_cast<float>(s[c]));
        EXPECT_NEAR(out[0].values<float>()[row * 3 + c],
                    (s[c] - mean) / std::sqrt(var + 1e-5) * gamma[c] + beta[c], 1e-5);
      }
    }
  }
}

TEST(MsFusedOpsTest, WhatCannotBeExpressedIsRefusedNamingTheNode) {
  {
    OnnxBuilder b = ms_builder();
    b.input("a", DType::kF32, {2, 3}).output("y", DType::kF32, {2, 2});
    b.initializer_f32("w", {2, 3}, {1, 2, 3, 4, 5, 6});
    set_attr(ms_node(b, "FusedMatMul", {"a", "w"}, {"y"}), "transBatchB", int64_t{1});
    expect_refused(b, "'q_FusedMatMul' (FusedMatMul): attribute transBatchB = 1");
  }
  {
    OnnxBuilder b = ms_builder();
    b.input("x", DType::kF32, {1, 1, 2, 2}).output("y", DType::kF32, {1, 1, 2, 2});
    b.initializer_f32("w", {1, 1, 1, 1}, {2.0f});
    auto& conv = ms_node(b, "FusedConv", {"x", "w"}, {"y"});
    set_attr(conv, "activation", std::string("Selu"));
    expect_refused(b, "(FusedConv): activation 'Selu' is not supported");
  }
  {
    OnnxBuilder b = ms_builder();
    b.input("x", DType::kF32, {2, 3}).output("y", DType::kF32, {2, 3});
    b.output("mean", DType::kF32, {2, 1});
    b.initializer_f32("gamma", {3}, {1, 2, 3});
    ms_node(b, "SkipLayerNormalization", {"x", "x", "gamma"}, {"y", "mean"});
    expect_refused(b, "its mean and inv_std_var outputs are not supported");
  }
}

TEST(MsQuantizedOpsTest, WhatCannotBeExpressedIsRefusedNamingTheNode) {
  {
    OnnxBuilder b = ms_builder();
    b.input("x", DType::kU8, {1, 2, 2, 2}).output("y", DType::kU8, {1, 1, 1, 2});
    quant_params(b, "x", 0.1f, 0);
    set_attr(
        ms_node(b, "QLinearGlobalAveragePool", {"x", "x_scale", "x_zp", "x_scale", "x_zp"}, {"y"}),
        "channels_last", int64_t{1});
    expect_refused(b, "'q_QLinearGlobalAveragePool' (QLinearGlobalAveragePool): channels_last 1");
  }
  {
    OnnxBuilder b = ms_builder();
    b.input("x", DType::kU8, {4}).output("y", DType::kU8, {4});
    quant_params(b, "x", 0.1f, 0);
    ms_node(b, "QLinearAdd", {"x", "x_scale", "x_zp"}, {"y"});
    expect_refused(b, "(QLinearAdd): input 3 is missing");
  }
  {
    OnnxBuilder b = ms_builder();
    b.input("x", DType::kU8, {2, 3}).output("y", DType::kU8, {2, 3});
    quant_params(b, "x", 0.1f, 0);
    auto& node = ms_node(b, "QLinearSoftmax", {"x", "x_scale", "x_zp", "x_scale", "x_zp"}, {"y"});
    set_attr(node, "opset", int64_t{11});
    set_attr(node, "axis", int64_t{0});
    expect_refused(b, "Softmax of opset 11 on axis 0 in a model of opset 17");
  }
  {
    // An unnamed node's new nodes are named after its op and index: an error in them says which.
    OnnxBuilder b = ms_builder();
    b.input("x", DType::kU8, {4}).output("y", DType::kU8, {4});
    quant_params(b, "x", 0.1f, 0);
    b.node("QLinearSigmoid", {"x", "undefined", "x_zp", "x_scale", "x_zp"}, {"y"})
        .set_domain("com.microsoft");
    expect_refused(b,
                   "'QLinearSigmoid#0/DequantizeLinear_x' (DequantizeLinear): input 'undefined'");
  }
  {
    // Per-column scales before opset 13, where DequantizeLinear has no axis.
    OnnxBuilder b = ms_builder(12);
    b.input("a", DType::kU8, {1, 2}).output("y", DType::kF32, {1, 2});
    quant_params(b, "a", 0.1f, 0);
    b.initializer("w", Tensor::from_vector(DType::kI8, {2, 2}, std::vector<int8_t>{1, 2, 3, 4}));
    b.initializer_f32("w_scale", {2}, {0.1f, 0.2f});
    b.initializer("w_zp", Tensor::from_vector(DType::kI8, {2}, std::vector<int8_t>{0, 0}));
    ms_node(b, "QGemm", {"a", "a_scale", "a_zp", "w", "w_scale", "w_zp"}, {"y"});
    expect_refused(b, "per-axis scale 'w_scale' needs opset 13 or above");
  }
}

}  // namespace
}  // namespace hsched
