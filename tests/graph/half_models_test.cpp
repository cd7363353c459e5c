// Models stored in float16 or bfloat16 (graph/half_models.h): imported as float32 computations
// between a half interface, explicit Casts to half still rounding, and run on the CPU, whose
// kernels are float32. Checked against the same model written in float32.
#include "graph/half_models.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/float16.h"
#include "graph/onnx_builder.h"
#include "graph/onnx_import.h"
#include "support/cpu_run.h"

namespace hsched {
namespace {

using test::run_on_cpu;

constexpr int64_t kOpset = 17;

Tensor half_tensor(std::vector<int64_t> dims, const std::vector<float>& values,
                   DType dtype = DType::kF16) {
  std::vector<uint16_t> bits;
  for (float v : values) bits.push_back(dtype == DType::kF16 ? float_to_half(v) : float_to_bf16(v));
  return Tensor::from_vector(dtype, std::move(dims), bits);
}

std::vector<float> floats_of(const Tensor& t) {
  std::vector<float> out;
  if (t.dtype() == DType::kF32) return {t.values<float>().begin(), t.values<float>().end()};
  for (uint16_t bits : t.values<uint16_t>()) {
    out.push_back(t.dtype() == DType::kF16 ? half_to_float(bits) : bf16_to_float(bits));
  }
  return out;
}

// Seeded values on a grid every type here holds exactly.
std::vector<float> grid_values(size_t count, int seed) {
  std::vector<float> values;
  for (size_t i = 0; i < count; ++i) {
    values.push_back(static_cast<float>((static_cast<int>(i) * 37 + seed * 11) % 31 - 15) / 16.0f);
  }
  return values;
}

Graph imported(OnnxBuilder& b) {
  auto graph = import_onnx_model(b.model(), {}, "model.onnx", {});
  EXPECT_TRUE(graph.is_ok()) << graph.status().message();
  return graph.is_ok() ? std::move(graph).value() : Graph{};
}

// x -> Conv (weights, bias) -> Relu -> Gemm-like MatMul -> y, stored in `dtype` or float32.
OnnxBuilder conv_net(DType dtype) {
  OnnxBuilder b(kOpset);
  b.input("x", dtype, {1, 2, 5, 5});
  auto constant = [&](const std::string& name, std::vector<int64_t> dims, int seed) {
    size_t count = 1;
    for (int64_t d : dims) count *= static_cast<size_t>(d);
    if (dtype == DType::kF32) {
      b.initializer_f32(name, dims, grid_values(count, seed));
    } else {
      b.initializer(name, half_tensor(dims, grid_values(count, seed), dtype));
    }
  };
  constant("w", {3, 2, 3, 3}, 1);
  constant("bias", {3}, 2);
  constant("m", {3, 4}, 3);
  b.node("Conv", {"x", "w", "bias"}, {"c"}, "conv");
  b.node("Relu", {"c"}, {"r"}, "relu");
  b.node("MatMul", {"r", "m"}, {"y"}, "matmul");
  b.output("y", dtype, {1, 3, 3, 4});
  return b;
}

// Runs conv_net stored in `dtype` and in float32 on the same input: the half model's output must
// be the float32 output rounded once to `dtype` (exact: both compute the same float32 sums).
void expect_float32_rounded_once(const Graph& graph, DType dtype, int seed) {
  OnnxBuilder float_builder = conv_net(DType::kF32);
  const Graph reference = imported(float_builder);
  const std::vector<float> x = grid_values(50, seed);
  const auto got = run_on_cpu(graph, {half_tensor({1, 2, 5, 5}, x, dtype)});
  const auto want = run_on_cpu(reference, {Tensor::from_vector(DType::kF32, {1, 2, 5, 5}, x)});
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(want.size(), 1u);
  ASSERT_EQ(got[0].dtype(), dtype);
  const std::vector<float> values = floats_of(got[0]);
  std::vector<float> expected = floats_of(want[0]);
  for (float& v : expected) {
    v = dtype == DType::kF16 ? half_to_float(float_to_half(v)) : bf16_to_float(float_to_bf16(v));
  }
  EXPECT_EQ(values, expected);
}

TEST(HalfModelsTest, Float16ModelRunsInFloat32BetweenItsHalfInterface) {
  OnnxBuilder half_builder = conv_net(DType::kF16);
  const Graph graph = imported(half_builder);
  ASSERT_FALSE(computes_in_half(graph));
  ASSERT_EQ(graph.inputs().size(), 1u);
  EXPECT_EQ(graph.value(graph.inputs()[0]).name, "x");
  EXPECT_EQ(graph.value(graph.inputs()[0]).dtype, DType::kF16);
  ASSERT_EQ(graph.outputs().size(), 1u);
  EXPECT_EQ(graph.value(graph.outputs()[0]).name, "y");
  EXPECT_EQ(graph.value(graph.outputs()[0]).dtype, DType::kF16);
  EXPECT_EQ(graph.value(*graph.find_value("w")).dtype, DType::kF32);
  EXPECT_EQ(graph.value(*graph.find_value("c")).dtype, DType::kF32);
  // The model's own nodes, plus one Cast at the input and one at the output.
  ASSERT_EQ(graph.nodes().size(), 5u);
  EXPECT_EQ(graph.nodes().front().op_type, "Cast");
  EXPECT_EQ(graph.nodes()[1].name, "conv");
  EXPECT_EQ(graph.nodes().back().op_type, "Cast");
  expect_float32_rounded_once(graph, DType::kF16, 4);
}

TEST(HalfModelsTest, BFloat16ModelRunsInFloat32) {
  OnnxBuilder half_builder = conv_net(DType::kBF16);
  const Graph graph = imported(half_builder);
  ASSERT_FALSE(computes_in_half(graph));
  expect_float32_rounded_once(graph, DType::kBF16, 5);
}

// A mixed-precision graph: float32 input, Cast and CastLike to float16 round as the model says.
TEST(HalfModelsTest, CastsToHalfStillRound) {
  OnnxBuilder b(kOpset);
  b.input("x", DType::kF32, {2});
  b.initializer("one", half_tensor({}, {1.0f}));
  b.initializer("scale", half_tensor({}, {4096.0f}));
  set_attr(b.node("Cast", {"x"}, {"x16"}, "to_half"), "to", int64_t{10});  // FLOAT16
  b.node("CastLike", {"x", "one"}, {"x16_like"}, "like_half");
  b.node("Sub", {"x16", "one"}, {"d"}, "sub");
  b.node("Mul", {"d", "scale"}, {"y"}, "mul");
  b.node("Sub", {"x16_like", "one"}, {"d2"}, "sub2");
  b.node("Mul", {"d2", "scale"}, {"y2"}, "mul2");
  b.output("y", DType::kF16, {2});
  b.output("y2", DType::kF16, {2});
  b.output("x16", DType::kF16, {2});
  const Graph graph = imported(b);
  ASSERT_FALSE(computes_in_half(graph));
  // 1 + 2^-12 is not a float16: it rounds to 1, so (x16 - 1) * 4096 is 0, not 1; 1 + 2^-9 is.
  const float x0 = 1.0f + 0x1p-12f;
  const float x1 = 1.0f + 0x1p-9f;
  const auto got =
      run_on_cpu(graph, {Tensor::from_vector(DType::kF32, {2}, std::vector<float>{x0, x1})});
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(floats_of(got[0]), (std::vector<float>{0.0f, 8.0f}));
  EXPECT_EQ(floats_of(got[1]), (std::vector<float>{0.0f, 8.0f}));
  EXPECT_EQ(got[2].dtype(), DType::kF16);
  EXPECT_EQ(floats_of(got[2]), (std::vector<float>{1.0f, x1}));
}

TEST(HalfModelsTest, HalfAttributesInputsAndConstantsAsOutputs) {
  OnnxBuilder b(kOpset);
  b.input("x", DType::kF16, {2, 2});
  b.initializer_i64("shape", {2}, {2, 2});
  b.initializer("c", half_tensor({2}, {0.5f, -2.0f}));
  onnx::NodeProto& fill = b.node("ConstantOfShape", {"shape"}, {"filled"}, "fill");
  auto* attr = fill.add_attribute();
  attr->set_name("value");
  attr->set_type(onnx::AttributeProto::TENSOR);
  attr->mutable_t()->set_data_type(10);  // FLOAT16
  attr->mutable_t()->add_dims(1);
  attr->mutable_t()->add_int32_data(float_to_half(1.5f));
  set_attr(b.node("EyeLike", {"x"}, {"eye"}, "eye"), "dtype", int64_t{10});
  b.node("Add", {"x", "filled"}, {"s"}, "add");
  b.node("Add", {"s", "eye"}, {"s2"}, "add_eye");
  b.node("Add", {"s2", "c"}, {"y"}, "add_c");
  b.output("y", DType::kF16, {2, 2});
  b.output("x", DType::kF16, {2, 2});
  b.output("c", DType::kF16, {2});
  const Graph graph = imported(b);
  ASSERT_FALSE(computes_in_half(graph));
  ASSERT_EQ(graph.outputs().size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(graph.value(graph.outputs()[i]).name, (std::vector<std::string>{"y", "x", "c"}[i]));
    EXPECT_EQ(graph.value(graph.outputs()[i]).dtype, DType::kF16);
  }
  const auto got = run_on_cpu(graph, {half_tensor({2, 2}, {1.0f, 2.0f, 3.0f, 4.0f})});
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(floats_of(got[0]), (std::vector<float>{4.0f, 1.5f, 5.0f, 4.5f}));
  EXPECT_EQ(floats_of(got[1]), (std::vector<float>{1.0f, 2.0f, 3.0f, 4.0f}));
  EXPECT_EQ(floats_of(got[2]), (std::vector<float>{0.5f, -2.0f}));
}

// Constant chains of half values fold as float32 ones do (the Identity of each bias that
// torch.onnx writes, a Cast of a float32 constant to float16): the Conv reads constants, which a
// device that takes only constant weights (the NPU's IR) needs.
TEST(HalfModelsTest, ConstantChainsOfHalfValuesFold) {
  OnnxBuilder b(kOpset);
  b.input("x", DType::kF16, {1, 2, 5, 5});
  b.initializer("w", half_tensor({3, 2, 3, 3}, grid_values(54, 1)));
  b.initializer("bias", half_tensor({3}, {0.5f, -1.0f, 0.25f}));
  b.initializer_f32("scale", {1}, {1.0f + 0x1p-12f});
  b.node("Identity", {"bias"}, {"bias_copy"}, "bias_identity");
  set_attr(b.node("Cast", {"scale"}, {"scale16"}, "scale_to_half"), "to", int64_t{10});
  b.node("Conv", {"x", "w", "bias_copy"}, {"c"}, "conv");
  b.node("Mul", {"c", "scale16"}, {"y"}, "mul");
  b.output("y", DType::kF16, {1, 3, 3, 3});
  const Graph graph = imported(b);
  for (const Node& node : graph.nodes()) {
    EXPECT_NE(node.op_type, "Identity");
    if (node.op_type == "Conv") {
      ASSERT_EQ(node.inputs.size(), 3u);
      EXPECT_TRUE(graph.value(node.inputs[2]).is_constant());
    }
    if (node.op_type == "Mul") {
      const Value& scale = graph.value(node.inputs[1]);
      ASSERT_TRUE(scale.is_constant());
      EXPECT_EQ(scale.dtype, DType::kF32);
      EXPECT_EQ(scale.constant->values<float>()[0], 1.0f);  // rounded to float16 when folded
    }
  }
}

// Casts alone (ONNX's Cast node tests) are left as the model wrote them.
TEST(HalfModelsTest, GraphOfCastsAloneIsUnchanged) {
  OnnxBuilder b(kOpset);
  b.input("x", DType::kF16, {3});
  set_attr(b.node("Cast", {"x"}, {"y"}, "cast"), "to", int64_t{1});
  b.output("y", DType::kF32, {3});
  const Graph graph = imported(b);
  ASSERT_EQ(graph.nodes().size(), 1u);
  EXPECT_EQ(graph.value(graph.inputs()[0]).dtype, DType::kF16);
}

}  // namespace
}  // namespace hsched
