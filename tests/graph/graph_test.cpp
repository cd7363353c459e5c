// Graph IR: producers/consumers, topological order, cycles, shapes and dtypes; subgraphs.
#include "graph/graph.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "graph/resize_semantics.h"
#include "graph/subgraph.h"

namespace hsched {
namespace {

TEST(GraphTest, ProducersConsumersAndOrder) {
  Graph g;
  const ValueId x = g.add_value("x", DType::kF32, Shape({2}));
  const ValueId y = g.add_value("y", DType::kF32, Shape({2}));
  const ValueId z = g.add_value("z", DType::kF32, Shape({2}));
  g.add_input(x);
  // Added out of order: z = Relu(y) before y = Neg(x).
  g.add_node(Node{"relu", "Relu", "", {y}, {z}, {}});
  g.add_node(Node{"neg", "Neg", "", {x}, {y}, {}});
  EXPECT_EQ(g.value(y).producer, 1);
  EXPECT_EQ(g.value(y).consumers, (std::vector<NodeId>{0}));
  auto order = g.topological_order();
  ASSERT_TRUE(order.is_ok());
  EXPECT_EQ(*order, (std::vector<NodeId>{1, 0}));
}

TEST(GraphTest, CycleIsNamed) {
  Graph g;
  const ValueId a = g.add_value("a", DType::kF32, Shape({1}));
  const ValueId b = g.add_value("b", DType::kF32, Shape({1}));
  g.add_node(Node{"first", "Relu", "", {b}, {a}, {}});
  g.add_node(Node{"second", "Relu", "", {a}, {b}, {}});
  auto order = g.topological_order();
  ASSERT_FALSE(order.is_ok());
  EXPECT_NE(order.status().message().find("cycle through node 'first' (Relu)"), std::string::npos);
}

TEST(GraphTest, SelfLoopIsACycle) {
  Graph g;
  const ValueId a = g.add_value("a", DType::kF32, Shape({1}));
  g.add_node(Node{"", "Relu", "", {a}, {a}, {}});
  auto order = g.topological_order();
  ASSERT_FALSE(order.is_ok());
  EXPECT_NE(order.status().message().find("'#0'"), std::string::npos);
}

// Half-precision sample inputs fill every element with a value of [-1, 1) (decoded here by the
// bits' definitions), not bytes of 0 and 1 in the first half of the buffer.
TEST(SeededTensorTest, HalfTypesHoldValuesAcrossTheWholeTensor) {
  const auto decode = [](DType dtype, uint16_t bits) {
    uint32_t word = static_cast<uint32_t>(bits) << 16;  // bf16: the float's high half
    if (dtype == DType::kF16) {
      const uint32_t exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
      word = (static_cast<uint32_t>(bits & 0x8000) << 16) |
             (exponent == 0 ? 0 : ((exponent - 15 + 127) << 23) | (mantissa << 13));
    }
    float f = 0;
    std::memcpy(&f, &word, sizeof(f));
    return f;
  };
  for (DType dtype : {DType::kF16, DType::kBF16}) {
    const Tensor t = seeded_tensor(dtype, {4, 64}, 7);
    const auto bits = t.values<uint16_t>();
    int nonzero_in_second_half = 0;
    for (size_t i = 0; i < bits.size(); ++i) {
      const float v = decode(dtype, bits[i]);
      EXPECT_GE(v, -1.0f);
      EXPECT_LT(v, 1.0f);
      EXPECT_EQ(v * 128.0f, std::round(v * 128.0f));  // on the grid
      if (i >= bits.size() / 2 && v != 0.0f) ++nonzero_in_second_half;
    }
    EXPECT_GT(nonzero_in_second_half, 100) << dtype_name(dtype);
    const Tensor again = seeded_tensor(dtype, {4, 64}, 7);
    EXPECT_EQ(std::memcmp(t.raw(), again.raw(), t.byte_size()), 0);
  }
}

TEST(ShapeTest, CheckedElementsBoundsEverySize) {
  EXPECT_EQ(*checked_elements({2, 3, 4}), 24);
  EXPECT_EQ(*checked_elements({}), 1);
  EXPECT_EQ(*checked_elements({5, 0}), 0);
  EXPECT_FALSE(checked_elements({-1}).is_ok());
  EXPECT_FALSE(checked_elements({kMaxDim + 1}).is_ok());
  EXPECT_FALSE(checked_elements({int64_t{1} << 40, int64_t{1} << 40}).is_ok());
  EXPECT_FALSE(checked_elements(std::vector<int64_t>(17, 1)).is_ok());
  // An empty tensor's other dims are bounded too: kernels multiply them for strides (found by
  // the run fuzzer: a Mul of two empty tensors overflowed computing broadcast strides).
  EXPECT_FALSE(checked_elements({0, int64_t{1} << 39, int64_t{1} << 33}).is_ok());
  EXPECT_EQ(*checked_elements({0, int64_t{1} << 20, int64_t{1} << 13}), 0);
}

// An empty shape is empty whatever its other dims, without multiplying them (found by the
// run fuzzer: the product overflowed, undefined behaviour, in the shape evaluator's broadcast).
TEST(ShapeTest, AZeroDimMakesItEmptyWithoutOverflow) {
  EXPECT_EQ(Shape({int64_t{1} << 40, int64_t{1} << 40, 0}).elements(), 0);
  EXPECT_EQ(Shape({0, int64_t{1} << 62, 4}).elements(), 0);
  EXPECT_EQ(Shape({2, 3, 4}).elements(), 24);
}

// dq = DequantizeLinear(constant) -> id = Identity(dq) -> sum = Add(x, id): extracting the Add
// alone receives id as an input; with copying allowed it computes dq and id itself (no input but
// x, and only sum as output); where copying dq is not allowed, Identity cannot be copied either.
TEST(SubgraphTest, CopiesConstantComputationsWhereAllowed) {
  Graph g;
  const ValueId x = g.add_value("x", DType::kF32, Shape({2}));
  g.add_input(x);
  const ValueId q = g.add_constant("q", Tensor(DType::kI8, {2}));
  const ValueId scale = g.add_constant("scale", Tensor(DType::kF32, {}));
  const ValueId dq = g.add_value("dq", DType::kF32, Shape({2}));
  const ValueId id = g.add_value("id", DType::kF32, Shape({2}));
  const ValueId sum = g.add_value("sum", DType::kF32, Shape({2}));
  g.add_node(Node{"dequantize", "DequantizeLinear", "", {q, scale}, {dq}, {}});
  g.add_node(Node{"identity", "Identity", "", {dq}, {id}, {}});
  g.add_node(Node{"add", "Add", "", {x, id}, {sum}, {}});
  g.add_output(sum);

  const Subgraph alone = extract_subgraph(g, {2});
  EXPECT_EQ(alone.inputs, (std::vector<ValueId>{x, id}));
  EXPECT_EQ(alone.graph.nodes().size(), 1u);
  const Subgraph copied = extract_subgraph(g, {2}, [](NodeId) { return true; });
  EXPECT_EQ(copied.inputs, (std::vector<ValueId>{x}));
  EXPECT_EQ(copied.outputs, (std::vector<ValueId>{sum}));
  ASSERT_EQ(copied.graph.nodes().size(), 3u);
  EXPECT_EQ(copied.graph.nodes()[0].op_type, "DequantizeLinear");
  EXPECT_TRUE(copied.graph.topological_order().is_ok());
  const Subgraph partly = extract_subgraph(g, {2}, [](NodeId n) { return n != 0; });
  EXPECT_EQ(partly.inputs, (std::vector<ValueId>{x, id}));
}

// x -> q = QuantizeLinear(x) -> dq = DequantizeLinear(q) -> y = Relu(dq), cut as {Q, DQ} and
// {Relu}: where the Relu's part dequantizes q itself, it reads the 8-bit q (the first part's
// output) and dq crosses nowhere; where it does not, dq crosses as before.
TEST(SubgraphTest, DequantizesWhereReadWhereAllowed) {
  Graph g;
  const ValueId x = g.add_value("x", DType::kF32, Shape({4}));
  g.add_input(x);
  const ValueId scale = g.add_constant("scale", Tensor(DType::kF32, {}));
  const ValueId zero = g.add_constant("zero", Tensor(DType::kU8, {}));
  const ValueId q = g.add_value("q", DType::kU8, Shape({4}));
  const ValueId dq = g.add_value("dq", DType::kF32, Shape({4}));
  const ValueId y = g.add_value("y", DType::kF32, Shape({4}));
  g.add_node(Node{"quantize", "QuantizeLinear", "", {x, scale, zero}, {q}, {}});
  g.add_node(Node{"dequantize", "DequantizeLinear", "", {q, scale, zero}, {dq}, {}});
  g.add_node(Node{"relu", "Relu", "", {dq}, {y}, {}});
  g.add_output(y);

  for (const bool allowed : {true, false}) {
    const DequantizesHere here = [&](NodeId, NodeId) { return allowed; };
    const Subgraph first = extract_subgraph(g, {0, 1}, {}, here);
    const Subgraph second = extract_subgraph(g, {2}, {}, here);
    EXPECT_EQ(first.outputs, (std::vector<ValueId>{allowed ? q : dq})) << allowed;
    EXPECT_EQ(second.inputs, (std::vector<ValueId>{allowed ? q : dq})) << allowed;
    ASSERT_EQ(second.graph.nodes().size(), allowed ? 2u : 1u);
    EXPECT_EQ(second.graph.nodes()[0].op_type, allowed ? "DequantizeLinear" : "Relu");
    EXPECT_TRUE(second.graph.topological_order().is_ok());
  }
  // A part of the DequantizeLinear alone, every reader dequantizing for itself: no outputs.
  const Subgraph alone = extract_subgraph(g, {1}, {}, [](NodeId, NodeId) { return true; });
  EXPECT_TRUE(alone.outputs.empty());
}

TEST(ShapeTest, ParseDims) {
  EXPECT_EQ(*parse_dims("1,3,224,224"), (std::vector<int64_t>{1, 3, 224, 224}));
  EXPECT_FALSE(parse_dims("1,,3").is_ok());
  EXPECT_FALSE(parse_dims("1,x").is_ok());
  EXPECT_FALSE(parse_dims("99999999999999999999").is_ok());
  EXPECT_EQ(Shape({1, kDynamicDim}).to_string(), "1x?");
}

TEST(DTypeTest, OnnxRoundTrip) {
  for (DType d :
       {DType::kF32, DType::kF16, DType::kBF16, DType::kI8, DType::kU8, DType::kI32, DType::kI64,
        DType::kBool, DType::kF64, DType::kI16, DType::kU16, DType::kU32, DType::kU64}) {
    EXPECT_EQ(dtype_from_onnx(dtype_to_onnx(d)), d);
    EXPECT_EQ(dtype_from_name(dtype_name(d)), d);
  }
  // TensorProto.DataType numbers, sizes and names of the wider types.
  EXPECT_EQ(dtype_from_onnx(11), DType::kF64);
  EXPECT_EQ(dtype_from_onnx(5), DType::kI16);
  EXPECT_EQ(dtype_from_onnx(4), DType::kU16);
  EXPECT_EQ(dtype_from_onnx(12), DType::kU32);
  EXPECT_EQ(dtype_from_onnx(13), DType::kU64);
  EXPECT_EQ(dtype_size(DType::kF64), 8u);
  EXPECT_EQ(dtype_size(DType::kI16), 2u);
  EXPECT_EQ(dtype_size(DType::kU32), 4u);
  EXPECT_EQ(dtype_name(DType::kU64), "u64");
  EXPECT_TRUE(is_floating(DType::kF64));
  EXPECT_FALSE(is_floating(DType::kU16));
  EXPECT_FALSE(dtype_from_onnx(8).has_value());  // STRING
  EXPECT_EQ(onnx_dtype_name(11), "DOUBLE");
}

// Resize's nearest index as ONNX Runtime computes it: float coordinates, and a coordinate within
// a few float steps of a half is a tie (cases found by the differential tester).
TEST(ResizeSemantics, NearestIndexMatchesOnnxRuntimeAtNearTies) {
  using resize::Coord;
  using resize::Nearest;
  const auto index = [](Coord coord, Nearest nearest, int64_t in, int64_t out, int64_t x) {
    const float scale = static_cast<float>(out) / static_cast<float>(in);
    const float original =
        resize::original_coordinate(coord, static_cast<float>(x), scale, in, out);
    return resize::nearest_index(nearest, original, scale < 1);
  };
  // 1 / (2/7) is 3.4999998 in float: a tie, which round_prefer_ceil takes up.
  EXPECT_EQ(index(Coord::kAsymmetric, Nearest::kRoundPreferCeil, 7, 2, 1), 4);
  EXPECT_EQ(index(Coord::kAsymmetric, Nearest::kRoundPreferFloor, 7, 2, 1), 3);
  // 6.5 / (13/11) is 5.5000002: a tie, which round_prefer_floor takes down.
  EXPECT_EQ(index(Coord::kTfHalfPixelForNn, Nearest::kRoundPreferFloor, 11, 13, 6), 5);
  // 3.5 / (7/13) - 0.5 is 5.9999995 in float (6.0000000000000004 in double): floor gives 5.
  EXPECT_EQ(index(Coord::kPytorchHalfPixel, Nearest::kFloor, 13, 7, 3), 5);
  // Away from a half, rounding is plain.
  EXPECT_EQ(index(Coord::kAsymmetric, Nearest::kRoundPreferCeil, 10, 12, 4), 3);  // 3.3333333
}

}  // namespace
}  // namespace hsched
