// read_ir on malformed input: truncated XML or weights, huge or negative dims, bad offsets and
// sizes, broken edges, cycles, inconsistent shapes and random corruption all end in a one-line
// InvalidArgument naming the layer, never a crash (the level_zero label also runs under ASan).
#include <algorithm>
#include <cstring>
#include <random>

#include <gtest/gtest.h>

#include "ir_test_util.h"

namespace hsched::ir::test {
namespace {

// A model with most layer kinds: Conv(+bias), Relu, MaxPool, ReduceMean, Reshape, MatMul (Gemm).
IrModel small_model(Precision precision) {
  GraphBuilder b;
  auto x = b.input("x", {1, 3, 8, 8});
  auto c = b.node("Conv", {x, b.weights("w", {4, 3, 3, 3}, 1), b.weights("b", {4}, 2)},
                  {1, 4, 8, 8}, AttributeMap{{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, "conv");
  auto r = b.node("Relu", {c}, {1, 4, 8, 8}, {}, "relu");
  auto p = b.node("MaxPool", {r}, {1, 4, 4, 4},
                  AttributeMap{{"kernel_shape", std::vector<int64_t>{2, 2}},
                               {"strides", std::vector<int64_t>{2, 2}}},
                  "pool");
  auto g = b.node("GlobalAveragePool", {p}, {1, 4, 1, 1}, {}, "gap");
  auto f = b.node("Flatten", {g}, {1, 4}, {}, "flatten");
  auto y = b.node("Gemm", {f, b.weights("fc", {3, 4}, 3), b.weights("fcb", {3}, 4)}, {1, 3},
                  AttributeMap{{"transB", int64_t{1}}}, "fc");
  b.output(y);
  auto model = write_ir(b.graph(), precision);
  EXPECT_TRUE(model.is_ok()) << model.status().message();
  return std::move(model).value();
}

std::string replace_first(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

void expect_invalid(const Result<Graph>& result, const std::string& fragment) {
  ASSERT_FALSE(result.is_ok()) << "accepted; expected an error with '" << fragment << "'";
  EXPECT_EQ(result.status().code(), ErrorCode::kInvalidArgument) << result.status().message();
  EXPECT_NE(result.status().message().find(fragment), std::string::npos)
      << result.status().message();
  EXPECT_EQ(result.status().message().find('\n'), std::string::npos);
}

// Parameter -> Relu -> Result written by hand, with the Relu's output dims and the edges given.
std::string relu_net(const std::string& relu_out_dims, const std::string& edges) {
  return R"(<?xml version="1.0"?>
<net name="hand" version="11"><layers>
<layer id="0" name="x" type="Parameter" version="opset1"><data shape="2,3" element_type="f32"/>
<output><port id="0" precision="FP32"><dim>2</dim><dim>3</dim></port></output></layer>
<layer id="1" name="relu" type="Relu" version="opset1">
<input><port id="0" precision="FP32"><dim>2</dim><dim>3</dim></port></input>
<output><port id="1" precision="FP32">)" +
         relu_out_dims + R"(</port></output></layer>
<layer id="2" name="out" type="Result" version="opset1">
<input><port id="0" precision="FP32">)" +
         relu_out_dims + R"(</port></input></layer>
</layers><edges>)" +
         edges + "</edges></net>";
}
const char* kReluEdges = R"(<edge from-layer="0" from-port="0" to-layer="1" to-port="0"/>
<edge from-layer="1" from-port="1" to-layer="2" to-port="0"/>)";

TEST(IrMalformedTest, HandWrittenNetReads) {
  auto graph = read_ir(relu_net("<dim>2</dim><dim>3</dim>", kReluEdges), {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  EXPECT_EQ(graph->nodes().size(), 1u);
  EXPECT_EQ(graph->nodes()[0].op_type, "Relu");
}

TEST(IrMalformedTest, TruncatedXmlIsRefused) {
  const IrModel model = small_model(Precision::kFp16);
  const size_t step = model.xml.size() / 300 + 1;
  for (size_t n = 0; n < model.xml.size() - 10; n += step) {
    auto result = read_ir(std::string_view(model.xml).substr(0, n), model.weights);
    ASSERT_FALSE(result.is_ok()) << "prefix of " << n << " bytes accepted";
    EXPECT_EQ(result.status().code(), ErrorCode::kInvalidArgument);
  }
}

TEST(IrMalformedTest, TruncatedWeightsAreRefused) {
  const IrModel model = small_model(Precision::kFp32);
  for (size_t n : {size_t{0}, model.weights.size() / 2, model.weights.size() - 1}) {
    expect_invalid(read_ir(model.xml, std::span(model.weights.data(), n)), "(Const)");
  }
}

TEST(IrMalformedTest, HugeNegativeAndTooManyDimsAreRefused) {
  const IrModel model = small_model(Precision::kFp32);
  const std::string dim = "<dim>3</dim>";
  expect_invalid(
      read_ir(replace_first(model.xml, dim, "<dim>99999999999999999999</dim>"), model.weights),
      "not a static size");
  expect_invalid(read_ir(replace_first(model.xml, dim, "<dim>-1</dim>"), model.weights),
                 "not a static size");
  expect_invalid(read_ir(replace_first(model.xml, dim, "<dim>1099511627776</dim>"), model.weights),
                 "larger than 4 GiB");
  std::string many;
  for (int i = 0; i < 17; ++i) many += "<dim>1</dim>";
  expect_invalid(read_ir(replace_first(model.xml, dim, many), model.weights), "more than 16 dims");
  expect_invalid(
      read_ir(replace_first(model.xml, "shape=\"1,3,8,8\"", "shape=\"1,3,8,9\""), model.weights),
      "declared");
}

TEST(IrMalformedTest, BadOffsetsAndSizesAreRefused) {
  const IrModel model = small_model(Precision::kFp32);
  const std::string offset = "offset=\"0\"";
  expect_invalid(read_ir(replace_first(model.xml, offset, "offset=\"-8\""), model.weights),
                 "offset");
  expect_invalid(
      read_ir(replace_first(model.xml, offset, "offset=\"18446744073709551615\""), model.weights),
      "offset");
  expect_invalid(read_ir(replace_first(model.xml, offset,
                                       "offset=\"" + std::to_string(model.weights.size()) + "\""),
                         model.weights),
                 "size");
  expect_invalid(read_ir(replace_first(model.xml, "size=\"432\"", "size=\"428\""), model.weights),
                 "does not match shape");
  expect_invalid(read_ir(replace_first(model.xml, "element_type=\"f32\" shape=\"4,3,3,3\"",
                                       "element_type=\"f64\" shape=\"4,3,3,3\""),
                         model.weights),
                 "element_type");
}

TEST(IrMalformedTest, BrokenEdgesAndCyclesAreRefused) {
  const std::string dims = "<dim>2</dim><dim>3</dim>";
  expect_invalid(
      read_ir(relu_net(dims, R"(<edge from-layer="0" from-port="0" to-layer="1" to-port="0"/>)"),
              {}),
      "has no edge");
  expect_invalid(
      read_ir(
          relu_net(dims, std::string(kReluEdges) +
                             R"(<edge from-layer="0" from-port="0" to-layer="1" to-port="0"/>)"),
          {}),
      "two edges");
  expect_invalid(
      read_ir(relu_net(dims, R"(<edge from-layer="7" from-port="0" to-layer="1" to-port="0"/>)"),
              {}),
      "no such layer");
  expect_invalid(
      read_ir(relu_net(dims, R"(<edge from-layer="0" from-port="5" to-layer="1" to-port="0"/>
<edge from-layer="1" from-port="1" to-layer="2" to-port="0"/>)"),
              {}),
      "not there");
  // relu feeds itself and the Result.
  std::string cyclic =
      relu_net(dims, R"(<edge from-layer="1" from-port="1" to-layer="1" to-port="0"/>
<edge from-layer="1" from-port="1" to-layer="2" to-port="0"/>)");
  expect_invalid(read_ir(cyclic, {}), "cycle");
}

TEST(IrMalformedTest, InconsistentShapesTypesAndUnknownLayersAreRefused) {
  // Relu declares 3x2 for a 2x3 input (the edge to the Result agrees with the declaration).
  expect_invalid(read_ir(relu_net("<dim>3</dim><dim>2</dim>", kReluEdges), {}),
                 "IR layer 'relu' (Relu): output 0 is declared 3x2 but the inputs give 2x3");
  // An edge between ports of different dims.
  std::string mismatch = replace_first(relu_net("<dim>2</dim><dim>3</dim>", kReluEdges),
                                       "<input><port id=\"0\" precision=\"FP32\"><dim>2</dim>",
                                       "<input><port id=\"0\" precision=\"FP32\"><dim>4</dim>");
  expect_invalid(read_ir(mismatch, {}), "differs from the output");
  std::string unknown = replace_first(relu_net("<dim>2</dim><dim>3</dim>", kReluEdges),
                                      "type=\"Relu\"", "type=\"Bogus\"");
  expect_invalid(read_ir(unknown, {}), "IR layer 'relu' (Bogus): layer type not supported");
  std::string version =
      replace_first(relu_net("<dim>2</dim><dim>3</dim>", kReluEdges),
                    "type=\"Relu\" version=\"opset1\"", "type=\"Relu\" version=\"opset99\"");
  expect_invalid(read_ir(version, {}), "version 'opset99'");
  expect_invalid(read_ir("<net version=\"9\"/>", {}), "net version");
  expect_invalid(read_ir("not xml at all <", {}), "XML parse error");
  expect_invalid(read_ir("", {}), "IR");
}

// A VariadicSplit's lengths must give every output and add up to the axis (one -1 takes the
// rest); the weights are edited where write_ir put the lengths.
TEST(IrMalformedTest, SplitLengthsThatMissTheAxisAreRefused) {
  GraphBuilder b;
  auto x = b.input("x", {2, 9});
  Graph& g = b.graph();
  std::vector<ValueId> parts;
  for (int64_t length : {2, 3, 4}) {
    parts.push_back(g.add_value("part" + std::to_string(length), DType::kF32, Shape({2, length})));
  }
  g.add_node(
      Node{"split", "Split", "", {x, b.ints("lengths", {2, 3, 4})}, parts, {{"axis", int64_t{1}}}});
  for (ValueId v : parts) b.output(v);
  auto model = write_ir(b.graph(), Precision::kFp32);
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  const std::vector<int64_t> written = {2, 3, 4};
  const auto* begin = reinterpret_cast<const uint8_t*>(written.data());
  const auto at = std::search(model->weights.begin(), model->weights.end(), begin,
                              begin + sizeof(int64_t) * written.size());
  ASSERT_NE(at, model->weights.end());
  const auto with_lengths = [&](std::vector<int64_t> lengths) {
    std::vector<uint8_t> weights = model->weights;
    std::memcpy(weights.data() + (at - model->weights.begin()), lengths.data(),
                sizeof(int64_t) * lengths.size());
    return read_ir(model->xml, weights);
  };
  EXPECT_TRUE(with_lengths({2, -1, 4}).is_ok());
  expect_invalid(with_lengths({2, 3, 5}), "split_lengths do not add up to the axis");
  expect_invalid(with_lengths({-1, -1, 4}), "split_lengths out of range");
  expect_invalid(with_lengths({2, 3, -4}), "split_lengths out of range");
  expect_invalid(with_lengths({6, -1, 4}), "split_lengths pass the axis");
}

// Random corruption: whatever read_ir accepts must also compile and run on the CPU without
// crashing (errors are fine); everything else is a clean InvalidArgument.
TEST(IrMalformedTest, RandomCorruptionNeverCrashes) {
  const IrModel model = small_model(Precision::kFp16);
  std::mt19937 rng(1234);
  const std::string alphabet = "0123456789-,\"<>/= abcdefxyzIRF";
  int accepted = 0;
  for (int iteration = 0; iteration < 400; ++iteration) {
    std::string xml = model.xml;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t at = rng() % xml.size();
      xml[at] = alphabet[rng() % alphabet.size()];
    }
    auto graph = read_ir(xml, model.weights);
    if (!graph.is_ok()) {
      EXPECT_EQ(graph.status().code(), ErrorCode::kInvalidArgument) << graph.status().message();
      continue;
    }
    ++accepted;
    std::vector<Tensor> inputs;
    for (ValueId id : graph->inputs()) {
      inputs.emplace_back(graph->value(id).dtype, graph->value(id).shape.dims);
    }
    (void)run_on_cpu(*graph, inputs);
  }
  // Most edits land in names, indentation or values that stay valid.
  EXPECT_GT(accepted, 0);
}

}  // namespace
}  // namespace hsched::ir::test
