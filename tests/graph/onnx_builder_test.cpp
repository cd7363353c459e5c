// OnnxBuilder: the ModelProto it writes, and that the importer accepts it.
#include "graph/onnx_builder.h"

#include <algorithm>
#include <cstring>

#include <gtest/gtest.h>

#include "graph/onnx_import.h"

namespace hsched {
namespace {

std::vector<float> raw_f32(const onnx::TensorProto& tensor) {
  std::vector<float> values(tensor.raw_data().size() / sizeof(float));
  std::memcpy(values.data(), tensor.raw_data().data(), tensor.raw_data().size());
  return values;  // the test hosts are little-endian, as raw_data is
}

TEST(OnnxBuilderTest, WritesModelHeaderAndSymbolicDims) {
  OnnxBuilder b(13, "g");
  b.input("x", DType::kF32, {kDynamicDim, 3, kDynamicDim});
  b.output("y", DType::kI64, {kDynamicDim});
  const onnx::ModelProto& m = b.model();
  EXPECT_EQ(m.ir_version(), 8);
  ASSERT_EQ(m.opset_import_size(), 1);
  EXPECT_EQ(m.opset_import(0).domain(), "");
  EXPECT_EQ(m.opset_import(0).version(), 13);
  EXPECT_EQ(m.graph().name(), "g");
  const auto& x = m.graph().input(0).type().tensor_type();
  EXPECT_EQ(x.elem_type(), onnx::TensorProto::FLOAT);
  EXPECT_EQ(x.shape().dim(0).dim_param(), "N0");
  EXPECT_EQ(x.shape().dim(1).dim_value(), 3);
  EXPECT_EQ(x.shape().dim(2).dim_param(), "N1");
  const auto& y = m.graph().output(0).type().tensor_type();
  EXPECT_EQ(y.elem_type(), onnx::TensorProto::INT64);
  EXPECT_EQ(y.shape().dim(0).dim_param(), "N2");
}

TEST(OnnxBuilderTest, InitializersAreRawLittleEndian) {
  OnnxBuilder b(17);
  b.initializer_f32("w", {2}, {1.5f, -2.0f});
  b.initializer_i64("s", {3}, {1, -1, int64_t{1} << 40});
  const auto& w = b.model().graph().initializer(0);
  EXPECT_EQ(w.data_type(), onnx::TensorProto::FLOAT);
  EXPECT_EQ(raw_f32(w), (std::vector<float>{1.5f, -2.0f}));
  const auto& s = b.model().graph().initializer(1);
  ASSERT_EQ(s.raw_data().size(), 24u);
  int64_t last = 0;
  std::memcpy(&last, s.raw_data().data() + 16, 8);
  EXPECT_EQ(last, int64_t{1} << 40);
  EXPECT_THROW(b.initializer_f32("bad", {3}, {1.0f}), std::invalid_argument);
}

TEST(OnnxBuilderTest, RandomInitializerIsSeededAndBounded) {
  OnnxBuilder a(17);
  OnnxBuilder b(17);
  a.initializer_random("w", {4, 64}, 0.5f, 7);
  b.initializer_random("w", {4, 64}, 0.5f, 7);
  b.initializer_random("v", {4, 64}, 0.5f, 8);
  const auto first = raw_f32(a.model().graph().initializer(0));
  EXPECT_EQ(first, raw_f32(b.model().graph().initializer(0)));
  EXPECT_NE(first, raw_f32(b.model().graph().initializer(1)));
  ASSERT_EQ(first.size(), 256u);
  float lo = 1, hi = -1;
  for (float v : first) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  EXPECT_GE(lo, -0.5f);
  EXPECT_LE(hi, 0.5f);
  EXPECT_LT(lo, -0.4f);  // 256 draws cover most of the range
  EXPECT_GT(hi, 0.4f);
}

TEST(OnnxBuilderTest, ImportsWithAttributes) {
  OnnxBuilder b(17);
  b.input("x", DType::kF32, {1, 2, 8, 8});
  b.output("y", DType::kF32, {1, 2, 4, 4});
  onnx::NodeProto& pool = b.node("MaxPool", {"x"}, {"y"}, "pool");
  set_attr(pool, "kernel_shape", std::vector<int64_t>{2, 2});
  set_attr(pool, "strides", std::vector<int64_t>{2, 2});
  auto graph = import_onnx_model(b.model(), {}, "built", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  ASSERT_EQ(graph->nodes().size(), 1u);
  EXPECT_EQ(graph->node(0).name, "pool");
  EXPECT_EQ(graph->node(0).attr_ints("kernel_shape"), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(graph->value(graph->outputs()[0]).shape, (Shape{1, 2, 4, 4}));
}

}  // namespace
}  // namespace hsched
