// QDQ graphs through the OpenVINO IR: QuantizeLinear as FakeQuantize + Convert, DequantizeLinear
// as Convert + Subtract + Multiply over int8 weights (an i32 bias folded to an f32 Const; scales,
// zero points and ranges f32 in an fp16 IR too), read back as the QuantizeLinear /
// DequantizeLinear groups they came from, computing what the original computes on the CPU byte
// for byte. ir_supports refuses what fp16 cannot carry.
#include <gtest/gtest.h>

#include "ir_test_util.h"

namespace hsched::ir::test {
namespace {

using cpu::test::i32;
using cpu::test::i8;
using cpu::test::u8;

constexpr float kOutputStep = 0.05f;

// x -> Q(u8) -> DQ -> Conv (per-channel int8 weights, i32 bias, grouped when `group` > 1) ->
// Relu -> Q(u8) -> DQ: the shape of an ONNX Runtime QDQ model's convolution.
Graph qdq_conv(int64_t group) {
  GraphBuilder b;
  const int64_t c = 8;
  auto x = b.input("x", {1, c, 6, 6});
  auto x_scale = b.scalar("x_scale", 2.0f / 255);
  auto x_zero = b.constant("x_zero", u8({}, {128}));
  auto xq = b.node("QuantizeLinear", {x, x_scale, x_zero}, {1, c, 6, 6}, {}, "", DType::kU8);
  auto xd = b.node("DequantizeLinear", {xq, x_scale, x_zero}, {1, c, 6, 6});
  std::vector<int8_t> w(static_cast<size_t>(c * (c / group) * 9));
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = static_cast<int8_t>(static_cast<int>(i * 37 % 255) - 127);
  std::vector<float> w_scale(c), b_scale(c);
  std::vector<int32_t> bias(c);
  for (int64_t o = 0; o < c; ++o) {
    w_scale[o] = 0.002f * static_cast<float>(o + 1);
    b_scale[o] = (2.0f / 255) * w_scale[o];           // x_scale * w_scale, as QDQ writes it
    bias[o] = static_cast<int32_t>(o * 3001 - 9000);  // past fp16's exact integers
  }
  auto wq = b.constant("w_q", i8({c, c / group, 3, 3}, w));
  auto wd = b.node("DequantizeLinear",
                   {wq, b.constant("w_scale", Tensor::from_vector(DType::kF32, {c}, w_scale))},
                   {c, c / group, 3, 3}, AttributeMap{{"axis", int64_t{0}}});
  auto bq = b.constant("b_q", i32({c}, bias));
  auto bd = b.node("DequantizeLinear",
                   {bq, b.constant("b_scale", Tensor::from_vector(DType::kF32, {c}, b_scale))}, {c},
                   AttributeMap{{"axis", int64_t{0}}});
  auto y = b.node("Conv", {xd, wd, bd}, {1, c, 6, 6},
                  AttributeMap{{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"group", group}});
  auto r = b.node("Relu", {y}, {1, c, 6, 6});
  auto y_scale = b.scalar("y_scale", kOutputStep);
  auto y_zero = b.constant("y_zero", u8({}, {0}));
  auto yq = b.node("QuantizeLinear", {r, y_scale, y_zero}, {1, c, 6, 6}, {}, "", DType::kU8);
  b.output(b.node("DequantizeLinear", {yq, y_scale, y_zero}, {1, c, 6, 6}));
  return std::move(b.graph());
}

TEST(IrInt8Test, QdqConvolutionsRoundTripWithinAStep) {
  for (int64_t group : {int64_t{1}, int64_t{2}}) {
    const Graph graph = qdq_conv(group);
    for (const Node& node : graph.nodes()) {
      for (Precision p : {Precision::kFp32, Precision::kFp16}) {
        EXPECT_TRUE(ir_supports(graph, node, p).is_ok()) << node.name;
      }
    }
    const auto inputs = random_inputs(graph, 5);
    auto expected = run_on_cpu(graph, inputs);
    ASSERT_TRUE(expected.is_ok()) << expected.status().message();
    for (Precision precision : {Precision::kFp32, Precision::kFp16}) {
      const std::string label =
          "group " + std::to_string(group) + (precision == Precision::kFp16 ? " fp16" : " fp32");
      auto model = write_ir(graph, precision);
      ASSERT_TRUE(model.is_ok()) << model.status().message();
      // int8 weights stay int8 for the compiler; quantization is a FakeQuantize; no i32 left.
      EXPECT_NE(model->xml.find("type=\"FakeQuantize\""), std::string::npos) << label;
      EXPECT_NE(model->xml.find("element_type=\"i8\""), std::string::npos) << label;
      EXPECT_EQ(model->xml.find("\"i32\""), std::string::npos) << label;
      if (precision == Precision::kFp16) {
        EXPECT_NE(model->xml.find("element_type=\"f32\""), std::string::npos) << label;
      }
      auto read = read_ir(model->xml, model->weights);
      ASSERT_TRUE(read.is_ok()) << read.status().message();
      // The Conv reads the activation, the int8 weights and the int32 bias dequantized, as the
      // original does, with the original's scales.
      int quantize = 0;
      for (const Node& node : read->nodes()) {
        quantize += node.op_type == "QuantizeLinear";
        if (node.op_type != "Conv") continue;
        ASSERT_EQ(node.inputs.size(), 3u) << label;
        const DType data[] = {DType::kU8, DType::kI8, DType::kI32};
        for (size_t i = 0; i < 3; ++i) {
          const Value& in = read->value(node.inputs[i]);
          ASSERT_NE(in.producer, kNoNode) << label << " input " << i;
          const Node& dq = read->node(in.producer);
          EXPECT_EQ(dq.op_type, "DequantizeLinear") << label << " input " << i;
          EXPECT_EQ(read->value(dq.inputs[0]).dtype, data[i]) << label << " input " << i;
        }
        const Value& x_scale =
            read->value(read->node(read->value(node.inputs[0]).producer).inputs[1]);
        EXPECT_EQ(x_scale.constant->values<float>()[0], 2.0f / 255) << label;
      }
      EXPECT_EQ(quantize, 2) << label;
      auto actual = run_on_cpu(*read, inputs);
      ASSERT_TRUE(actual.is_ok()) << actual.status().message();
      const auto a = (*actual)[0].values<float>();
      const auto e = (*expected)[0].values<float>();
      ASSERT_EQ(a.size(), e.size());
      for (size_t i = 0; i < a.size(); ++i) {
        ASSERT_EQ(a[i], e[i]) << label << " value " << i << ", " << (a[i] - e[i]) / kOutputStep
                              << " steps";
      }
    }
  }
}

// InstanceNormalization (a QDQ GroupNorm's core) whose scale is a QuantizeLinear ->
// DequantizeLinear of a float constant and whose bias is a DequantizeLinear of int8 data: the
// quantizations join its IR, and the read-back graph computes what the original does.
TEST(IrInt8Test, InstanceNormalizationTakesDequantizedParameters) {
  GraphBuilder b;
  auto x = b.input("x", {1, 4, 6, 6});
  auto s_scale = b.scalar("s_scale", 2.0f / 255);
  auto s_zero = b.constant("s_zero", u8({}, {0}));
  auto sq = b.node("QuantizeLinear", {b.weights("s", {4}, 11, 0.5f, 1.5f), s_scale, s_zero}, {4},
                   {}, "", DType::kU8);
  auto scale = b.node("DequantizeLinear", {sq, s_scale, s_zero}, {4});
  auto bias =
      b.node("DequantizeLinear",
             {b.constant("b_q", i8({4}, {-100, -3, 40, 127})), b.scalar("b_scale", 0.01f)}, {4});
  b.output(b.node("InstanceNormalization", {x, scale, bias}, {1, 4, 6, 6}));
  for (Precision p : {Precision::kFp32, Precision::kFp16}) {
    for (const Node& node : b.graph().nodes()) {
      EXPECT_TRUE(ir_supports(b.graph(), node, p).is_ok()) << node.name;
    }
  }
  EXPECT_TRUE(round_trips(b.graph(), random_inputs(b.graph(), 12), Precision::kFp32));
}

TEST(IrInt8Test, Fp16RefusesScalesItCannotCarry) {
  GraphBuilder b;
  auto x = b.input("x", {4});
  auto tiny = b.scalar("tiny", 1e-9f);
  auto zero = b.constant("zero", u8({}, {0}));
  auto q = b.node("QuantizeLinear", {x, tiny, zero}, {4}, {}, "", DType::kU8);
  b.output(b.node("DequantizeLinear", {q, tiny, zero}, {4}));
  for (const Node& node : b.graph().nodes()) {
    EXPECT_TRUE(ir_supports(b.graph(), node, Precision::kFp32).is_ok()) << node.name;
    const auto refusal = ir_refusal(b.graph(), node, Precision::kFp16);
    ASSERT_TRUE(refusal.has_value()) << node.name;
    EXPECT_EQ(refusal->reason, ReasonCode::kPrecisionNotAllowed);
    EXPECT_NE(refusal->detail.find("outside fp16's normal range"), std::string::npos)
        << refusal->detail;
  }
}

// A convolution whose weights come from a DequantizeLinear the IR cannot express is refused with
// that reason (the dequantization would join its IR).
TEST(IrInt8Test, ConvolutionNamesItsWeightsRefusedDequantization) {
  GraphBuilder b;
  auto x = b.input("x", {1, 2, 4, 4});
  auto wq = b.constant("w_q", i8({2, 2, 1, 1}, {1, 2, 3, 4}));
  auto wd = b.node("DequantizeLinear", {wq, b.scalar("w_scale", 1e-9f)}, {2, 2, 1, 1});
  b.output(b.node("Conv", {x, wd}, {1, 2, 4, 4}, {}, "conv"));
  const Node& conv = b.graph().node(1);
  EXPECT_TRUE(ir_supports(b.graph(), conv, Precision::kFp32).is_ok());
  const Status status = ir_supports(b.graph(), conv, Precision::kFp16);
  ASSERT_FALSE(status.is_ok());
  EXPECT_NE(status.message().find("dequantized by a node the IR cannot express"), std::string::npos)
      << status.message();
}

}  // namespace
}  // namespace hsched::ir::test
