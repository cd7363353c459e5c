// OpenVINO IR writer/reader (backends/level_zero/ir): every op family of the NPU profile round
// trips write_ir -> read_ir and computes the same on the CPU backend (fp32 within 1e-4 + 1e-3|b|,
// fp16 weights within 5e-2 + 5e-2|b|); the XML has the IR v11 shape; ir_supports names reasons.
#include <cfloat>
#include <functional>

#include <gtest/gtest.h>

#include "ir_test_util.h"

namespace hsched::ir::test {
namespace {

using Build = std::function<void(GraphBuilder&)>;

struct Case {
  std::string name;
  Build build;
  float lo = -1.0f;  // input range
  float hi = 1.0f;
};

class IrRoundTripTest : public ::testing::TestWithParam<Case> {};

TEST_P(IrRoundTripTest, Fp32AndFp16MatchTheOriginalOnTheCpu) {
  GraphBuilder b;
  GetParam().build(b);
  const auto inputs = random_inputs(b.graph(), 7, GetParam().lo, GetParam().hi);
  for (const Node& node : b.graph().nodes()) {
    const Status supported = ir_supports(b.graph(), node);
    ASSERT_TRUE(supported.is_ok()) << supported.message();
  }
  EXPECT_TRUE(round_trips(b.graph(), inputs, Precision::kFp32));
  EXPECT_TRUE(round_trips(b.graph(), inputs, Precision::kFp16));
}

using Attrs = AttributeMap;
using I = std::vector<int64_t>;

std::vector<Case> cases() {
  return {
      {"ConvBiasPadsStridesDilations",
       [](GraphBuilder& b) {
         auto x = b.input("x", {1, 3, 11, 9});
         auto y = b.node(
             "Conv", {x, b.weights("w", {8, 3, 3, 3}, 1), b.weights("b", {8}, 2)}, {1, 8, 5, 4},
             Attrs{{"strides", I{2, 2}}, {"pads", I{1, 2, 0, 1}}, {"dilations", I{1, 2}}});
         b.output(y);
       }},
      {"ConvSameUpperNoBias",
       [](GraphBuilder& b) {
         auto x = b.input("x", {2, 4, 7, 7});
         auto y = b.node("Conv", {x, b.weights("w", {6, 4, 3, 3}, 3)}, {2, 6, 4, 4},
                         Attrs{{"strides", I{2, 2}}, {"auto_pad", std::string("SAME_UPPER")}});
         b.output(y);
       }},
      {"DepthwiseAndGroupedConv",
       [](GraphBuilder& b) {
         auto x = b.input("x", {1, 8, 10, 10});
         auto d = b.node("Conv", {x, b.weights("dw", {8, 1, 3, 3}, 4), b.weights("db", {8}, 5)},
                         {1, 8, 10, 10}, Attrs{{"group", int64_t{8}}, {"pads", I{1, 1, 1, 1}}});
         auto g = b.node("Conv", {d, b.weights("gw", {4, 4, 1, 1}, 6)}, {1, 4, 10, 10},
                         Attrs{{"group", int64_t{2}}});
         b.output(g);
       }},
      {"Conv1D",
       [](GraphBuilder& b) {
         auto x = b.input("x", {1, 2, 16});
         b.output(
             b.node("Conv", {x, b.weights("w", {3, 2, 5}, 7), b.weights("b", {3}, 8)}, {1, 3, 12}));
       }},
      {"ConvTransposeStridedPadded",
       [](GraphBuilder& b) {
         auto x = b.input("x", {1, 4, 5, 5});
         auto y = b.node(
             "ConvTranspose", {x, b.weights("w", {4, 3, 3, 3}, 9), b.weights("b", {3}, 10)},
             {1, 3, 10, 10},
             Attrs{{"strides", I{2, 2}}, {"pads", I{1, 1, 1, 1}}, {"output_padding", I{1, 1}}});
         b.output(y);
       }},
      {"ConvTransposeGrouped",
       [](GraphBuilder& b) {
         auto x = b.input("x", {1, 4, 6, 6});
         b.output(b.node("ConvTranspose", {x, b.weights("w", {4, 2, 2, 2}, 11)}, {1, 4, 12, 12},
                         Attrs{{"strides", I{2, 2}}, {"group", int64_t{2}}}));
       }},
      {"GemmTransBAlphaBeta",
       [](GraphBuilder& b) {
         auto x = b.input("x", {3, 8});
         b.output(b.node("Gemm", {x, b.weights("w", {5, 8}, 12), b.weights("c", {5}, 13)}, {3, 5},
                         Attrs{{"transB", int64_t{1}}, {"alpha", 0.5f}, {"beta", 2.0f}}));
       }},
      {"GemmTransAActivationC",
       [](GraphBuilder& b) {
         auto x = b.input("x", {8, 3});
         auto c = b.input("c", {3, 5});
         b.output(b.node("Gemm", {x, b.weights("w", {8, 5}, 14), c}, {3, 5},
                         Attrs{{"transA", int64_t{1}}}));
       }},
      {"MatMulBatchedAndBroadcast",
       [](GraphBuilder& b) {
         auto x = b.input("x", {2, 4, 6});
         auto y = b.input("y", {2, 6, 3});
         auto m = b.node("MatMul", {x, y}, {2, 4, 3});
         b.output(b.node("MatMul", {m, b.weights("w", {3, 7}, 15)}, {2, 4, 7}));
       }},
      {"MaxPoolCeilModeAndPads",
       [](GraphBuilder& b) {
         auto x = b.input("x", {1, 3, 14, 14});
         auto p = b.node(
             "MaxPool", {x}, {1, 3, 7, 7},
             Attrs{{"kernel_shape", I{3, 3}}, {"strides", I{2, 2}}, {"ceil_mode", int64_t{1}}});
         b.output(b.node("MaxPool", {p}, {1, 3, 7, 7},
                         Attrs{{"kernel_shape", I{3, 3}}, {"pads", I{1, 1, 1, 1}}}));
       }},
      {"AveragePoolIncludeAndExcludePad",
       [](GraphBuilder& b) {
         auto x = b.input("x", {1, 2, 8, 8});
         auto p = b.node("AveragePool", {x}, {1, 2, 4, 4},
                         Attrs{{"kernel_shape", I{3, 3}},
                               {"strides", I{2, 2}},
                               {"pads", I{1, 1, 1, 1}},
                               {"count_include_pad", int64_t{1}}});
         b.output(b.node("AveragePool", {p}, {1, 2, 4, 4},
                         Attrs{{"kernel_shape", I{3, 3}}, {"pads", I{1, 1, 1, 1}}}));
       }},
      {"GlobalPools",
       [](GraphBuilder& b) {
         auto x = b.input("x", {2, 5, 6, 7});
         b.output(b.node("GlobalAveragePool", {x}, {2, 5, 1, 1}));
         b.output(b.node("GlobalMaxPool", {x}, {2, 5, 1, 1}));
       }},
      {"BatchNormalization",
       [](GraphBuilder& b) {
         auto x = b.input("x", {2, 4, 3, 3});
         b.output(b.node("BatchNormalization",
                         {x, b.weights("s", {4}, 16), b.weights("bb", {4}, 17),
                          b.weights("m", {4}, 18), b.weights("v", {4}, 19, 0.5f, 1.5f)},
                         {2, 4, 3, 3}, Attrs{{"epsilon", 1e-3f}}));
       }},
      {"InstanceNormalization",
       [](GraphBuilder& b) {
         auto x = b.input("x", {2, 4, 5, 6});
         b.output(b.node("InstanceNormalization",
                         {x, b.weights("s", {4}, 20), b.weights("bb", {4}, 21)}, {2, 4, 5, 6},
                         Attrs{{"epsilon", 1e-5f}}));
       }},
      {"LayerNormalizationLastAxisAndTwoAxes",
       [](GraphBuilder& b) {
         auto x = b.input("x", {2, 5, 8});
         auto l = b.node("LayerNormalization",
                         {x, b.weights("s", {8}, 22), b.weights("bb", {8}, 23)}, {2, 5, 8});
         b.output(b.node("LayerNormalization", {l, b.weights("s2", {5, 8}, 24)}, {2, 5, 8},
                         Attrs{{"axis", int64_t{1}}, {"epsilon", 1e-3f}}));
       }},
      {"Softmax",
       [](GraphBuilder& b) {
         auto x = b.input("x", {2, 3, 10});
         auto s = b.node("Softmax", {x}, {2, 3, 10});
         b.output(b.node("Softmax", {s}, {2, 3, 10}, Attrs{{"axis", int64_t{1}}}));
       }},
      {"BinaryBroadcast",
       [](GraphBuilder& b) {
         auto x = b.input("x", {2, 3, 4});
         auto y = b.input("y", {3, 1});
         auto a = b.node("Add", {x, y}, {2, 3, 4});
         auto s = b.node("Sub", {a, b.weights("c", {4}, 25)}, {2, 3, 4});
         auto m = b.node("Mul", {s, y}, {2, 3, 4});
         auto d = b.node("Div", {m, b.weights("den", {1, 3, 4}, 26, 1.0f, 2.0f)}, {2, 3, 4});
         b.output(d);
       }},
      {"Pow",
       [](GraphBuilder& b) {
         auto x = b.input("x", {3, 4});
         b.output(b.node("Pow", {x, b.scalar("e", 2.0f)}, {3, 4}));
         b.output(b.node("Pow", {x, b.weights("e2", {4}, 27, 0.5f, 1.5f)}, {3, 4}));
       },
       0.1f, 2.0f},
      {"UnaryActivations",
       [](GraphBuilder& b) {
         auto x = b.input("x", {2, 16});
         for (const char* op : {"Exp", "Erf", "Relu", "Sigmoid", "HardSwish", "Tanh", "Gelu"}) {
           b.output(b.node(op, {x}, {2, 16}));
         }
         b.output(b.node("Sqrt", {b.node("Exp", {x}, {2, 16})}, {2, 16}));
         b.output(b.node("Gelu", {x}, {2, 16}, Attrs{{"approximate", std::string("tanh")}}));
         b.output(b.node("LeakyRelu", {x}, {2, 16}, Attrs{{"alpha", 0.2f}}));
         b.output(b.node("Elu", {x}, {2, 16}, Attrs{{"alpha", 0.7f}}));
         b.output(b.node("HardSigmoid", {x}, {2, 16}, Attrs{{"alpha", 0.3f}, {"beta", 0.4f}}));
       },
       -3.0f, 3.0f},
      {"Clip",
       [](GraphBuilder& b) {
         auto x = b.input("x", {4, 4});
         b.output(b.node("Clip", {x, b.scalar("lo", 0.0f), b.scalar("hi", 6.0f)}, {4, 4}));
         b.output(b.node("Clip", {x, kNoValue, b.scalar("hi2", 1.0f)}, {4, 4}));
         b.output(b.node("Clip", {x, b.scalar("lo3", -1.0f)}, {4, 4}));
       },
       -8.0f, 8.0f},
      {"ShapeOps",
       [](GraphBuilder& b) {
         auto x = b.input("x", {2, 3, 4, 1});
         auto r = b.node("Reshape", {x, b.ints("shape", {0, -1})}, {2, 12});
         auto f = b.node("Flatten", {x}, {6, 4}, Attrs{{"axis", int64_t{2}}});
         auto s = b.node("Squeeze", {x, b.ints("axes", {-1})}, {2, 3, 4});
         auto s_all = b.node("Squeeze", {x}, {2, 3, 4});
         auto u = b.node("Unsqueeze", {s, b.ints("uaxes", {0, 3})}, {1, 2, 3, 1, 4});
         auto t = b.node("Transpose", {s_all}, {4, 3, 2});
         auto t2 = b.node("Transpose", {s}, {3, 2, 4}, Attrs{{"perm", I{1, 0, 2}}});
         auto c = b.node("Concat", {t2, t2, b.weights("k", {3, 2, 1}, 28)}, {3, 2, 9},
                         Attrs{{"axis", int64_t{-1}}});
         for (ValueId v : {r, f, u, t, c}) b.output(v);
       }},
      {"Split",  // VariadicSplit: lengths given, and equal parts without them
       [](GraphBuilder& b) {
         auto x = b.input("x", {2, 9, 4});
         Graph& g = b.graph();
         std::vector<ValueId> parts, halves;
         for (int64_t length : {2, 3, 4}) {
           parts.push_back(
               g.add_value("part" + std::to_string(length), DType::kF32, Shape({2, length, 4})));
         }
         for (int k = 0; k < 2; ++k) {
           halves.push_back(g.add_value("half" + std::to_string(k), DType::kF32, Shape({1, 9, 4})));
         }
         g.add_node(Node{"split",
                         "Split",
                         "",
                         {x, b.ints("lengths", {2, 3, 4})},
                         parts,
                         {{"axis", int64_t{-2}}}});
         g.add_node(Node{"halves", "Split", "", {x}, halves, {}});
         for (ValueId v : parts) b.output(v);
         for (ValueId v : halves) b.output(v);
       }},
  };
}

INSTANTIATE_TEST_SUITE_P(OpFamilies, IrRoundTripTest, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param.name; });

TEST(IrWriteTest, Fp16ModelHasF16WeightsAndF32ParametersWithConverts) {
  GraphBuilder b;
  auto x = b.input("x", {1, 3, 4, 4});
  b.output(b.node("Conv", {x, b.weights("w", {2, 3, 1, 1}, 1), b.weights("b", {2}, 2)},
                  {1, 2, 4, 4}, {}, "conv"));
  auto model = write_ir(b.graph(), Precision::kFp16);
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  const std::string& xml = model->xml;
  EXPECT_NE(xml.find("<net name=\"test\" version=\"11\">"), std::string::npos) << xml;
  EXPECT_NE(xml.find("type=\"Parameter\" version=\"opset1\""), std::string::npos);
  EXPECT_NE(xml.find("<data shape=\"1,3,4,4\" element_type=\"f32\""), std::string::npos);
  EXPECT_NE(xml.find("<data destination_type=\"f16\""), std::string::npos);
  EXPECT_NE(xml.find("<data destination_type=\"f32\""), std::string::npos);
  EXPECT_NE(xml.find("<data element_type=\"f16\" shape=\"2,3,1,1\" offset=\"0\" size=\"12\""),
            std::string::npos);
  EXPECT_NE(xml.find("name=\"conv\" type=\"Convolution\" version=\"opset1\""), std::string::npos);
  EXPECT_NE(xml.find("auto_pad=\"explicit\""), std::string::npos);
  EXPECT_NE(xml.find("shape=\"1,2,1,1\""), std::string::npos);  // bias broadcast for the Add
  EXPECT_NE(xml.find("type=\"Result\""), std::string::npos);
  EXPECT_NE(xml.find("<edge from-layer="), std::string::npos);
  // 6 f16 weights + 2 f16 bias values.
  EXPECT_EQ(model->weights.size(), 16u);
  // fp32 keeps f32 everywhere and has no Convert.
  auto fp32 = write_ir(b.graph(), Precision::kFp32);
  ASSERT_TRUE(fp32.is_ok());
  EXPECT_EQ(fp32->xml.find("Convert"), std::string::npos);
  EXPECT_EQ(fp32->weights.size(), 32u);
}

std::vector<std::string> op_types(const Graph& graph) {
  std::vector<std::string> ops;
  for (const Node& node : graph.nodes()) ops.push_back(node.op_type);
  return ops;
}

// read_ir folds the bias and affine layers write_ir splits off back into Conv, Gemm and the
// normalizations (so the CPU fuses as for the original), but not where the split value is read
// elsewhere.
TEST(IrReadTest, FoldsSplitBiasesAndAffinesBack) {
  GraphBuilder b;
  auto x = b.input("x", {1, 4, 6, 6});
  auto c = b.node("Conv", {x, b.weights("w", {4, 4, 3, 3}, 1), b.weights("b", {4}, 2)},
                  {1, 4, 6, 6}, Attrs{{"pads", I{1, 1, 1, 1}}});
  auto n = b.node("InstanceNormalization", {c, b.weights("s", {4}, 3), b.weights("bb", {4}, 4)},
                  {1, 4, 6, 6});
  auto f = b.node("Flatten", {n}, {1, 144});
  auto l = b.node("LayerNormalization", {f, b.weights("ls", {144}, 5), b.weights("lb", {144}, 6)},
                  {1, 144});
  b.output(b.node("Gemm", {l, b.weights("fc", {3, 144}, 7), b.weights("fcb", {3}, 8)}, {1, 3},
                  Attrs{{"transB", int64_t{1}}}));
  for (Precision precision : {Precision::kFp32, Precision::kFp16}) {
    auto model = write_ir(b.graph(), precision);
    ASSERT_TRUE(model.is_ok()) << model.status().message();
    auto read = read_ir(model->xml, model->weights);
    ASSERT_TRUE(read.is_ok()) << read.status().message();
    std::vector<std::string> expected = {"Conv", "InstanceNormalization", "Reshape",
                                         "LayerNormalization", "Gemm"};
    if (precision == Precision::kFp16) {
      expected.insert(expected.begin(), "Identity");
      expected.push_back("Identity");
    }
    EXPECT_EQ(op_types(*read), expected);
    EXPECT_EQ(read->value(read->outputs()[0]).name, b.graph().value(b.graph().outputs()[0]).name);
  }
  EXPECT_TRUE(round_trips(b.graph(), random_inputs(b.graph(), 3), Precision::kFp32));

  // The convolution's own output is a graph output: its bias Add stays apart.
  GraphBuilder g;
  auto y = g.input("y", {1, 2, 4, 4});
  auto conv = g.node("Conv", {y, g.weights("w", {2, 2, 1, 1}, 9)}, {1, 2, 4, 4});
  g.output(conv);
  g.output(g.node("Add", {conv, g.weights("k", {1, 2, 1, 1}, 10)}, {1, 2, 4, 4}));
  auto model = write_ir(g.graph(), Precision::kFp32);
  ASSERT_TRUE(model.is_ok());
  auto read = read_ir(model->xml, model->weights);
  ASSERT_TRUE(read.is_ok()) << read.status().message();
  EXPECT_EQ(op_types(*read), (std::vector<std::string>{"Conv", "Add"}));
  EXPECT_TRUE(round_trips(g.graph(), random_inputs(g.graph(), 5), Precision::kFp32));
}

TEST(IrWriteTest, RefusesOtherPrecisionsAndUnsupportedNodes) {
  GraphBuilder b;
  auto x = b.input("x", {2, 2});
  b.output(b.node("Relu", {x}, {2, 2}));
  EXPECT_EQ(write_ir(b.graph(), Precision::kInt8).status().code(), ErrorCode::kInvalidArgument);
  GraphBuilder g;
  auto y = g.input("y", {2, 2});
  g.output(g.node("Abs", {y}, {2, 2}, {}, "abs"));
  auto model = write_ir(g.graph(), Precision::kFp32);
  ASSERT_FALSE(model.is_ok());
  EXPECT_NE(model.status().message().find("'abs' (Abs)"), std::string::npos)
      << model.status().message();
}

TEST(IrSupportsTest, NamesTheReason) {
  GraphBuilder b;
  auto x = b.input("x", {1, 3, 8, 8});
  auto w_in = b.input("w_in", {4, 3, 3, 3});
  auto ids = b.input("ids", {4}, DType::kI64);
  auto dyn = b.input("dyn", {-1, 3});
  b.node("Conv", {x, w_in}, {1, 4, 6, 6}, {}, "conv_dynamic_weights");
  b.node("Gather", {x, ids}, {1, 3, 8, 8}, {}, "gather");
  b.node("Relu", {dyn}, {-1, 3}, {}, "relu_dynamic");
  b.node("MaxPool", {x}, {1, 3, 6, 6}, Attrs{{"kernel_shape", I{3, 3}}, {"dilations", I{2, 2}}},
         "pool_dilated");
  b.node("Clip", {x, b.input("lo", {})}, {1, 3, 8, 8}, {}, "clip_dynamic_min");
  b.node("Gelu", {x}, {1, 3, 8, 8}, Attrs{{"approximate", std::string("fast")}}, "gelu_fast");
  Node cast;
  cast.name = "add_ints";
  cast.op_type = "Add";
  cast.inputs = {ids, ids};
  cast.outputs = {b.graph().add_value("ints_out", DType::kI64, Shape({4}))};
  b.graph().add_node(cast);
  const std::map<std::string, std::string> expected = {
      {"conv_dynamic_weights", "weights (input 1) is not a constant"},
      {"gather", "no OpenVINO IR mapping"},
      {"relu_dynamic", "no static shape"},
      {"pool_dilated", "dilations other than 1"},
      {"clip_dynamic_min", "min or max is not a constant"},
      {"gelu_fast", "approximate='fast'"},
      {"add_ints", "element type i64"},
  };
  for (const Node& node : b.graph().nodes()) {
    const Status status = ir_supports(b.graph(), node);
    ASSERT_FALSE(status.is_ok()) << node.name;
    EXPECT_EQ(status.code(), ErrorCode::kUnimplemented);
    EXPECT_NE(status.message().find("'" + node.name + "'"), std::string::npos) << status.message();
    EXPECT_NE(status.message().find(expected.at(node.name)), std::string::npos) << status.message();
  }
}

// f64, i16 and the wider unsigned types stay on the CPU: the NPU refuses each such node, an input
// or only an output of it, with the element type named.
TEST(IrSupportsTest, RefusesTheWiderDtypesPerNode) {
  for (DType dtype : {DType::kF64, DType::kI16, DType::kU16, DType::kU32, DType::kU64}) {
    const std::string name(dtype_name(dtype));
    GraphBuilder b;
    auto x = b.input("x", {2, 3}, dtype);
    auto f = b.input("f", {2, 3});
    for (const std::string op : {"Add", "Relu"}) {  // an input, or only the output, of `dtype`
      Node node;
      node.name = op + "_" + name;
      node.op_type = op;
      node.inputs = op == "Add" ? std::vector<ValueId>{x, x} : std::vector<ValueId>{f};
      node.outputs = {b.graph().add_value(node.name + "_out", dtype, Shape({2, 3}))};
      b.graph().add_node(node);
    }
    for (const Node& node : b.graph().nodes()) {
      const Status status = ir_supports(b.graph(), node);
      ASSERT_FALSE(status.is_ok()) << node.name;
      EXPECT_EQ(status.code(), ErrorCode::kUnimplemented);
      EXPECT_NE(status.message().find("element type " + name), std::string::npos)
          << status.message();
    }
  }
}

TEST(NgraphLiteTest, PacksAndUnpacksLittleEndian) {
  IrModel model{"<net/>", {1, 2, 3}, {}, {}, {}};
  const auto payload = pack_ngraph_lite(model, 5, 7);
  ASSERT_EQ(payload.size(), 2 + 2 + 4 + 8 + 6 + 8 + 3u);
  EXPECT_EQ(payload[0], 5);
  EXPECT_EQ(payload[2], 7);
  EXPECT_EQ(payload[4], 2);
  EXPECT_EQ(payload[8], 6);
  auto back = unpack_ngraph_lite(payload);
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_EQ(back->xml, model.xml);
  EXPECT_EQ(back->weights, model.weights);
}

TEST(NgraphLiteTest, RefusesMalformedPayloads) {
  const auto payload = pack_ngraph_lite(IrModel{"<net/>", {1, 2, 3}, {}, {}, {}}, 1, 0);
  // Every truncation.
  for (size_t n = 0; n < payload.size(); ++n) {
    auto r = unpack_ngraph_lite(std::span(payload.data(), n));
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument) << n;
  }
  auto bad_count = payload;
  bad_count[4] = 3;
  EXPECT_NE(unpack_ngraph_lite(bad_count).status().message().find("3 buffers"), std::string::npos);
  auto huge = payload;
  for (size_t i = 8; i < 16; ++i) huge[i] = 0xFF;  // xml size 2^64 - 1
  EXPECT_EQ(unpack_ngraph_lite(huge).status().code(), ErrorCode::kInvalidArgument);
  auto trailing = payload;
  trailing.push_back(0);
  EXPECT_NE(unpack_ngraph_lite(trailing).status().message().find("trailing"), std::string::npos);
}

}  // namespace
}  // namespace hsched::ir::test
