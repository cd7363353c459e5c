// The forms write_ir gives what Intel's stack would otherwise reject or alter: LeakyRelu's PRelu
// slope of rank 1, ceil-mode pools as rounding_type="ceil", Gelu's tanh form written out in
// elementary layers (the NPU compiler computes Gelu-7 as erf), tensor names escaped as OpenVINO
// escapes them, and the arguments' names the compiler reports.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ir_test_util.h"

namespace hsched::ir::test {
namespace {

using Attrs = AttributeMap;
using I = std::vector<int64_t>;

std::string xml_of(const Graph& graph, Precision precision = Precision::kFp32) {
  auto model = write_ir(graph, precision);
  EXPECT_TRUE(model.is_ok()) << model.status().message();
  return model.is_ok() ? model->xml : std::string();
}

// The <layer> element named `name`, as text.
std::string layer_xml(const std::string& xml, const std::string& name) {
  const size_t at = xml.find("name=\"" + name + "\"");
  if (at == std::string::npos) return {};
  const size_t begin = xml.rfind("<layer", at);
  return xml.substr(begin, xml.find("</layer>", at) - begin);
}

TEST(IrStrictTest, LeakyReluSlopeIsRankOne) {
  GraphBuilder b;
  auto x = b.input("x", {2, 8});
  b.output(b.node("LeakyRelu", {x}, {2, 8}, Attrs{{"alpha", 0.2f}}, "leaky"));
  const std::string slope = layer_xml(xml_of(b.graph()), "leaky/slope");
  ASSERT_FALSE(slope.empty());
  EXPECT_NE(slope.find("<dim>1</dim>"), std::string::npos) << slope;
  EXPECT_TRUE(round_trips(b.graph(), random_inputs(b.graph(), 3), Precision::kFp32));
}

TEST(IrStrictTest, CeilModePoolsAreWrittenWithCeilRounding) {
  // k=2, s=3 on 7: windows at 0, 3, 6; the last reaches past the input, which floor rounding on
  // the declared pads cannot express (the extended pad would be as large as the kernel).
  GraphBuilder b;
  auto x = b.input("x", {1, 2, 7, 7});
  const Attrs ceil{{"kernel_shape", I{2, 2}}, {"strides", I{3, 3}}, {"ceil_mode", int64_t{1}}};
  b.output(b.node("MaxPool", {x}, {1, 2, 3, 3}, ceil, "max"));
  b.output(b.node("AveragePool", {x}, {1, 2, 3, 3}, ceil, "avg"));
  const std::string xml = xml_of(b.graph());
  for (const char* name : {"max", "avg"}) {
    const std::string layer = layer_xml(xml, name);
    EXPECT_NE(layer.find("rounding_type=\"ceil\""), std::string::npos) << layer;
    EXPECT_NE(layer.find("pads_end=\"0,0\""), std::string::npos) << layer;
  }
  const auto inputs = random_inputs(b.graph(), 5);
  EXPECT_TRUE(round_trips(b.graph(), inputs, Precision::kFp32));
  EXPECT_TRUE(round_trips(b.graph(), inputs, Precision::kFp16));
}

TEST(IrStrictTest, CeilModeWhereOnnxDropsTheLastWindowIsRefused) {
  // Width 6, k=2, s=3: ceil rounding gives 3 windows, the third starting at 6 (past the input),
  // which ONNX drops and OpenVINO keeps; height 7 needs the third.
  GraphBuilder b;
  auto x = b.input("x", {1, 1, 7, 6});
  b.node("MaxPool", {x}, {1, 1, 3, 2},
         Attrs{{"kernel_shape", I{2, 2}}, {"strides", I{3, 3}}, {"ceil_mode", int64_t{1}}}, "p");
  const Status status = ir_supports(b.graph(), b.graph().node(0));
  ASSERT_FALSE(status.is_ok());
  EXPECT_NE(status.message().find("last window starts in the end padding"), std::string::npos)
      << status.message();
}

TEST(IrStrictTest, GeluTanhIsWrittenOutNotAsGelu) {
  GraphBuilder b;
  auto x = b.input("x", {2, 16});
  b.output(b.node("Gelu", {x}, {2, 16}, Attrs{{"approximate", std::string("tanh")}}, "g"));
  const std::string xml = xml_of(b.graph());
  EXPECT_EQ(xml.find("type=\"Gelu\""), std::string::npos);
  EXPECT_NE(xml.find("type=\"Tanh\""), std::string::npos);
  const auto inputs = random_inputs(b.graph(), 9, -4.0f, 4.0f);
  EXPECT_TRUE(round_trips(b.graph(), inputs, Precision::kFp32));
  EXPECT_TRUE(round_trips(b.graph(), inputs, Precision::kFp16));
}

TEST(IrStrictTest, NamesWithCommasAndBackslashesReadBackUnchanged) {
  GraphBuilder b;
  auto x = b.input("in,put\\0", {1, 4});
  b.output(b.node("Relu", {x}, {1, 4}, {}, "r\\elu,1"));
  auto model = write_ir(b.graph(), Precision::kFp32);
  ASSERT_TRUE(model.is_ok());
  // OpenVINO escapes ',' only.
  EXPECT_NE(model->xml.find("names=\"in\\,put\\0\""), std::string::npos) << model->xml;
  auto read = read_ir(model->xml, model->weights);
  ASSERT_TRUE(read.is_ok()) << read.status().message();
  EXPECT_EQ(read->value(read->inputs()[0]).name, "in,put\\0");
  EXPECT_EQ(read->value(read->outputs()[0]).name, "r\\elu,1_out");
}

TEST(IrStrictTest, ArgumentNamesAreParametersAndTheLayersFeedingResults) {
  GraphBuilder b;
  auto x = b.input("x", {1, 4});
  auto r = b.node("Relu", {x}, {1, 4}, {}, "relu");
  b.output(b.node("Sigmoid", {r}, {1, 4}, {}, "sig"));
  b.output(r);
  for (const Precision precision : {Precision::kFp32, Precision::kFp16}) {
    auto model = write_ir(b.graph(), precision);
    ASSERT_TRUE(model.is_ok());
    EXPECT_EQ(model->input_names, std::vector<std::string>{"x"});
    const bool fp16 = precision == Precision::kFp16;
    EXPECT_EQ(model->output_names, (std::vector<std::string>{fp16 ? "sig_out/to_f32" : "sig",
                                                             fp16 ? "relu_out/to_f32" : "relu"}));
    std::vector<std::string> producers;
    auto read = read_ir(model->xml, model->weights, &producers);
    ASSERT_TRUE(read.is_ok()) << read.status().message();
    EXPECT_EQ(producers, model->output_names);
  }
}

}  // namespace
}  // namespace hsched::ir::test
