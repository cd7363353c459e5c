// ONNX import: generated models at opsets 9, 11, 13 and 17, --input-shape, shape folding,
// node ordering and external data.
#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "graph/onnx_builder.h"
#include "graph/onnx_import.h"
#include "support/bad_models.h"
#include "support/temp_dir.h"

namespace hsched {
namespace {

// x[N,3,8,8] -> Conv -> Relu -> Reshape to [N,-1] through Shape/Gather/Unsqueeze/Concat ->
// Slice -> Clip -> y. Unsqueeze, Slice and Clip take attributes or inputs depending on opset.
onnx::ModelProto opset_model(int64_t opset) {
  OnnxBuilder b(opset);
  b.input("x", DType::kF32, {kDynamicDim, 3, 8, 8}).output("y", DType::kF32, {kDynamicDim, 128});
  b.initializer_random("w", {4, 3, 3, 3}, 0.5f, 1).initializer_random("b", {4}, 0.1f, 2);
  b.initializer_i64("zero", {}, {0}).initializer_i64("minus_one", {1}, {-1});
  set_attr(b.node("Conv", {"x", "w", "b"}, {"c"}, "conv"), "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("Relu", {"c"}, {"r"}, "relu");
  b.node("Shape", {"r"}, {"s"}, "shape");
  b.node("Gather", {"s", "zero"}, {"n"}, "gather");
  if (opset < 13) {
    set_attr(b.node("Unsqueeze", {"n"}, {"n1"}, "unsqueeze"), "axes", std::vector<int64_t>{0});
  } else {
    b.initializer_i64("axes0", {1}, {0});
    b.node("Unsqueeze", {"n", "axes0"}, {"n1"}, "unsqueeze");
  }
  set_attr(b.node("Concat", {"n1", "minus_one"}, {"target"}, "concat"), "axis", 0);
  b.node("Reshape", {"r", "target"}, {"flat"}, "reshape");
  if (opset < 10) {
    auto& slice = b.node("Slice", {"flat"}, {"sl"}, "slice");
    set_attr(slice, "starts", std::vector<int64_t>{0});
    set_attr(slice, "ends", std::vector<int64_t>{128});
    set_attr(slice, "axes", std::vector<int64_t>{1});
  } else {
    b.initializer_i64("starts", {1}, {0}).initializer_i64("ends", {1}, {128});
    b.initializer_i64("axis1", {1}, {1});
    b.node("Slice", {"flat", "starts", "ends", "axis1"}, {"sl"}, "slice");
  }
  if (opset < 11) {
    auto& clip = b.node("Clip", {"sl"}, {"y"}, "clip");
    set_attr(clip, "min", 0.0f);
    set_attr(clip, "max", 6.0f);
  } else {
    b.initializer_f32("lo", {}, {0.0f}).initializer_f32("hi", {}, {6.0f});
    b.node("Clip", {"sl", "lo", "hi"}, {"y"}, "clip");
  }
  return b.model();
}

int count_non_static(const Graph& graph) {
  return static_cast<int>(std::count_if(graph.values().begin(), graph.values().end(), [](const Value& v) {
    return !v.is_constant() && (!v.shape.is_static() || v.dtype == DType::kUndefined);
  }));
}

std::vector<std::string> op_types(const Graph& graph) {
  std::vector<std::string> ops;
  for (const auto& node : graph.nodes()) ops.push_back(node.op_type);
  return ops;
}

class OpsetTest : public ::testing::TestWithParam<int64_t> {};

TEST_P(OpsetTest, InputShapeMakesEveryTensorStaticAndFoldsTheShapeChain) {
  auto model = opset_model(GetParam());
  ImportOptions options;
  ASSERT_TRUE(add_input_shape_flag("x=2,3,8,8", options).is_ok());
  auto graph = import_onnx_model(model, options, "opset_model", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  // Opsets below kMinOpset are upgraded to it at import.
  EXPECT_EQ(graph->opset, std::max(GetParam(), kMinOpset));
  EXPECT_EQ(count_non_static(*graph), 0);
  EXPECT_EQ(op_types(*graph),
            (std::vector<std::string>{"Conv", "Relu", "Reshape", "Slice", "Clip"}));
  const Value& y = graph->value(graph->outputs().at(0));
  EXPECT_EQ(y.shape, Shape({2, 128}));
  EXPECT_EQ(y.dtype, DType::kF32);
  // The folded Reshape target is a constant [2, -1].
  const Node& reshape = graph->node(2);
  const Value& target = graph->value(reshape.inputs.at(1));
  ASSERT_TRUE(target.is_constant());
  const auto values = target.constant->values<int64_t>();
  EXPECT_EQ(std::vector<int64_t>(values.begin(), values.end()), (std::vector<int64_t>{2, -1}));
}

TEST_P(OpsetTest, WithoutInputShapeTheBatchStaysDynamic) {
  auto model = opset_model(GetParam());
  auto graph = import_onnx_model(model, {}, "opset_model", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  EXPECT_GT(count_non_static(*graph), 0);
  EXPECT_FALSE(graph->value(graph->outputs().at(0)).shape.is_static());
}

INSTANTIATE_TEST_SUITE_P(Opsets, OpsetTest, ::testing::Values(7, 8, 9, 11, 13, 17));

// F.pad(x, (0, pad_w, 0, pad_h)) with its amounts computed from x's shape (Swin's and
// EfficientNet-TF's "same" padding) as torch.onnx's TorchScript exporter writes it: the pairs
// concatenated with zeros for the other axes, reshaped to [-1, 2], reversed, transposed, flattened.
// A static input makes the pads a constant and the Pad's output static.
TEST(ImportTest, TorchPadAmountsFromTheShapeFold) {
  OnnxBuilder b(17);
  b.input("x", DType::kF32, {1, 3, 7, 6}).output("y", DType::kF32, {1, 3, 8, 8});
  b.initializer_i64("i2", {}, {2}).initializer_i64("i3", {}, {3});
  b.initializer_i64("four", {}, {4}).initializer_i64("zero", {1}, {0});
  b.initializer_i64("axes0", {1}, {0}).initializer_i64("extension", {1}, {4});
  b.initializer_i64("pairs", {2}, {-1, 2}).initializer_i64("flat", {1}, {-1});
  b.initializer_i64("start", {1}, {-1}).initializer_i64("end", {1}, {INT64_MIN});
  b.initializer_i64("step", {1}, {-1});
  b.node("Shape", {"x"}, {"shape"});
  for (const char* axis : {"2", "3"}) {  // (4 - d % 4) % 4
    const std::string d = std::string("d") + axis;
    b.node("Gather", {"shape", std::string("i") + axis}, {d});
    b.node("Mod", {d, "four"}, {d + "m"});
    b.node("Sub", {"four", d + "m"}, {d + "s"});
    b.node("Mod", {d + "s", "four"}, {d + "p"});
    b.node("Unsqueeze", {d + "p", "axes0"}, {d + "u"});
  }
  set_attr(b.node("Concat", {"zero", "d3u", "zero", "d2u"}, {"pad"}), "axis", 0);
  onnx::AttributeProto* zero_i64 =
      b.node("ConstantOfShape", {"extension"}, {"rest"}).add_attribute();
  zero_i64->set_name("value");
  zero_i64->set_type(onnx::AttributeProto::TENSOR);
  zero_i64->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  zero_i64->mutable_t()->add_dims(1);
  zero_i64->mutable_t()->add_int64_data(0);
  set_attr(b.node("Concat", {"pad", "rest"}, {"all"}), "axis", 0);
  b.node("Reshape", {"all", "pairs"}, {"by_axis"});
  b.node("Slice", {"by_axis", "start", "end", "axes0", "step"}, {"reversed"});
  set_attr(b.node("Transpose", {"reversed"}, {"ends_last"}), "perm", std::vector<int64_t>{1, 0});
  b.node("Reshape", {"ends_last", "flat"}, {"pads"});
  b.node("Pad", {"x", "pads"}, {"y"});
  auto graph = import_onnx_model(b.model(), {}, "torch_pad", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  EXPECT_EQ(op_types(*graph), (std::vector<std::string>{"Pad"}));
  EXPECT_EQ(graph->value(graph->outputs().at(0)).shape, Shape({1, 3, 8, 8}));
}

// Einsum's output dims from its inputs' (libonnx 1.12 infers only the rank): explicit outputs
// with spaces and capital letters as torch.onnx writes MaxViT's attention, an implicit output,
// an ellipsis broadcast.
TEST(ImportTest, EinsumOutputsGetStaticShapes) {
  const std::vector<
      std::tuple<std::string, std::vector<int64_t>, std::vector<int64_t>, std::vector<int64_t>>>
      cases = {
          {"B G H I D, B G H J D -> B G H I J", {1, 4, 2, 7, 8}, {1, 4, 2, 5, 8}, {1, 4, 2, 7, 5}},
          {"ij,jk", {3, 4}, {4, 6}, {3, 6}},
          {"...ij,...jk->...ik", {2, 1, 3, 4}, {2, 5, 4, 6}, {2, 5, 3, 6}}};
  for (const auto& [equation, a, c, want] : cases) {
    OnnxBuilder b(17);
    b.input("a", DType::kF32, a).input("c", DType::kF32, c);
    b.output("y", DType::kF32, std::vector<int64_t>(want.size(), kDynamicDim));
    set_attr(b.node("Einsum", {"a", "c"}, {"y"}, "einsum"), "equation", equation);
    auto graph = import_onnx_model(b.model(), {}, "einsum", {});
    ASSERT_TRUE(graph.is_ok()) << equation << ": " << graph.status().message();
    EXPECT_EQ(graph->value(graph->outputs().at(0)).shape.to_string(), Shape(want).to_string())
        << equation;
  }
}

TEST(ImportTest, OldOpsetWithExternalDataIsRefused) {
  onnx::ModelProto model = opset_model(8);
  onnx::TensorProto& w = *model.mutable_graph()->mutable_initializer(0);
  w.clear_raw_data();
  w.clear_float_data();
  w.set_data_location(onnx::TensorProto::EXTERNAL);
  onnx::StringStringEntryProto& location = *w.add_external_data();
  location.set_key("location");
  location.set_value("w.bin");
  auto graph = import_onnx_model(model, {}, "old.onnx", {});
  ASSERT_FALSE(graph.is_ok());
  EXPECT_NE(graph.status().message().find("old.onnx: opset 8 with external data is not supported"),
            std::string::npos)
      << graph.status().message();
}

// libonnx's version converter dereferences names the graph does not define; hsched validates
// an old-opset model before upgrading it.
TEST(ImportTest, OldOpsetIsValidatedBeforeTheUpgrade) {
  OnnxBuilder b(6);
  b.input("x", DType::kF32, {1, 4}).output("y", DType::kF32, {1, 4});
  auto graph = import_onnx_model(b.model(), {}, "old.onnx", {});
  ASSERT_FALSE(graph.is_ok());
  EXPECT_EQ(graph.status().message(), "old.onnx: graph output 'y' is produced by nothing");
}

// libonnx's Gemm 6 -> 7 adapter reads dims 0 and 1 of A and B unchecked: a scalar A was a null
// dereference (found by run_fuzzer). A Gemm of 2-D operands still upgrades.
TEST(ImportTest, OldGemmOfOtherThanMatricesIsRefusedBeforeTheUpgrade) {
  for (const std::vector<int64_t>& a_dims : {std::vector<int64_t>{}, std::vector<int64_t>{4}}) {
    OnnxBuilder b(6);
    b.input("a", DType::kF32, a_dims).input("b", DType::kF32, {4, 3}).input("c", DType::kF32, {3});
    b.output("y", DType::kF32, {1, 3});
    b.node("Gemm", {"a", "b", "c"}, {"y"}, "gemm");
    auto graph = import_onnx_model(b.model(), {}, "old.onnx", {});
    ASSERT_FALSE(graph.is_ok());
    EXPECT_EQ(graph.status().message(), "old.onnx: node 'gemm' (Gemm): input 'a' has rank " +
                                            std::to_string(a_dims.size()) +
                                            "; Gemm takes 2-D matrices");
  }
  OnnxBuilder b(6);
  b.input("a", DType::kF32, {1, 4}).input("b", DType::kF32, {4, 3}).input("c", DType::kF32, {3});
  b.output("y", DType::kF32, {1, 3});
  b.node("Gemm", {"a", "b", "c"}, {"y"}, "gemm");
  auto graph = import_onnx_model(b.model(), {}, "old.onnx", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  EXPECT_EQ(graph->opset, kMinOpset);
}

TEST(ImportTest, NodesOutOfOrderAreSorted) {
  OnnxBuilder b(17);
  b.input("x", DType::kF32, {1, 4}).output("z", DType::kF32, {1, 4});
  b.node("Relu", {"y"}, {"z"}, "second");
  b.node("Neg", {"x"}, {"y"}, "first");
  auto graph = import_onnx_model(b.model(), {}, "unsorted", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  EXPECT_EQ(graph->nodes().at(0).name, "first");
  EXPECT_EQ(graph->nodes().at(1).name, "second");
  auto order = graph->topological_order();
  ASSERT_TRUE(order.is_ok());
  EXPECT_EQ(*order, (std::vector<NodeId>{0, 1}));
}

TEST(ImportTest, ConstantNodesBecomeInitializers) {
  OnnxBuilder b(17);
  b.input("x", DType::kF32, {2, 3}).output("y", DType::kF32, {2, 3});
  set_attr(b.node("Constant", {}, {"k"}, "k"), "value_float", 2.0f);
  b.node("Mul", {"x", "k"}, {"y"}, "mul");
  auto graph = import_onnx_model(b.model(), {}, "const", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  ASSERT_EQ(graph->nodes().size(), 1u);
  const Value& k = graph->value(graph->nodes()[0].inputs[1]);
  ASSERT_TRUE(k.is_constant());
  EXPECT_EQ(k.constant->values<float>()[0], 2.0f);
}

// DOUBLE, UINT64 and INT16 tensors import, their initializers read from the typed fields ONNX
// keeps them in (double_data, uint64_data, int32_data) rather than raw_data.
TEST(ImportTest, DoubleAndWideIntegerTensorsImport) {
  OnnxBuilder b(17);
  b.input("x", DType::kF64, {3}).output("y", DType::kF64, {3}).output("z", DType::kF32, {3});
  b.output("m", DType::kU64, {2}).output("n", DType::kI16, {2});
  b.input("u", DType::kU64, {2}).input("s", DType::kI16, {2});
  auto& graph_proto = *b.model().mutable_graph();
  onnx::TensorProto* c = graph_proto.add_initializer();
  c->set_name("c");
  c->set_data_type(onnx::TensorProto::DOUBLE);
  c->add_dims(3);
  for (double v : {0.5, -1e300, 1.0 + 0x1p-40}) c->add_double_data(v);
  onnx::TensorProto* k = graph_proto.add_initializer();
  k->set_name("k");
  k->set_data_type(onnx::TensorProto::UINT64);
  k->add_dims(2);
  for (uint64_t v : {uint64_t{18446744073709551615u}, uint64_t{7}}) k->add_uint64_data(v);
  onnx::TensorProto* h = graph_proto.add_initializer();
  h->set_name("h");
  h->set_data_type(onnx::TensorProto::INT16);
  h->add_dims(2);
  for (int32_t v : {-32768, 12}) h->add_int32_data(v);
  b.node("Max", {"x", "c"}, {"y"}, "max");
  set_attr(b.node("Cast", {"y"}, {"z"}, "cast"), "to", int64_t{onnx::TensorProto::FLOAT});
  b.node("Min", {"u", "k"}, {"m"}, "min");
  b.node("Min", {"s", "h"}, {"n"}, "min16");
  auto graph = import_onnx_model(b.model(), {}, "f64", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  EXPECT_EQ(graph->value(graph->inputs().at(0)).dtype, DType::kF64);
  EXPECT_EQ(graph->value(graph->outputs().at(0)).dtype, DType::kF64);
  EXPECT_EQ(graph->value(graph->outputs().at(1)).dtype, DType::kF32);
  EXPECT_EQ(graph->value(graph->outputs().at(2)).dtype, DType::kU64);
  EXPECT_EQ(graph->value(graph->outputs().at(3)).dtype, DType::kI16);
  std::map<std::string, const Value*> constants;
  for (const Value& v : graph->values()) {
    if (v.is_constant()) constants[v.name] = &v;
  }
  ASSERT_EQ(constants.count("c"), 1u);
  const auto cv = constants["c"]->constant->values<double>();
  EXPECT_EQ(std::vector<double>(cv.begin(), cv.end()),
            (std::vector<double>{0.5, -1e300, 1.0 + 0x1p-40}));
  ASSERT_EQ(constants.count("k"), 1u);
  EXPECT_EQ(constants["k"]->constant->dtype(), DType::kU64);
  EXPECT_EQ(constants["k"]->constant->values<uint64_t>()[0], uint64_t{18446744073709551615u});
  ASSERT_EQ(constants.count("h"), 1u);
  EXPECT_EQ(constants["h"]->constant->values<int16_t>()[0], -32768);
  // A payload that disagrees with the shape is still a named error for the new fields.
  c->add_double_data(2.0);
  auto bad = import_onnx_model(b.model(), {}, "f64", {});
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("'c'"), std::string::npos) << bad.status().message();
}

TEST(ImportTest, InputShapeMustAgreeWithFixedDims) {
  auto model = opset_model(17);
  ImportOptions options;
  ASSERT_TRUE(add_input_shape_flag("x=2,4,8,8", options).is_ok());
  const Status status = import_onnx_model(model, options, "m.onnx", {}).status();
  EXPECT_NE(status.message().find("--input-shape x: dim 1 is fixed to 3"), std::string::npos)
      << status.message();
}

// A graph input or output may declare its type without a shape (`make_tensor_value_info(name,
// type, None)`), which libonnx 1.12's checker alone refuses: an output's shape is inferred; an
// input's comes from --input-shape, or the refusal names the input and the flag.
TEST(ImportTest, GraphValuesDeclaredWithoutShape) {
  OnnxBuilder b(17);
  b.input("x", DType::kF32, {2, 3});
  b.output("y", DType::kF32, {2, 3});
  b.node("Relu", {"x"}, {"y"}, "relu");
  b.model().mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  onnx::ModelProto shapeless_input = b.model();
  auto graph = import_onnx_model(b.model(), {}, "m.onnx", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  EXPECT_EQ(graph->value(graph->outputs().at(0)).shape.to_string(), Shape({2, 3}).to_string());

  shapeless_input.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()
      ->clear_shape();
  onnx::ModelProto copy = shapeless_input;
  const Status status = import_onnx_model(copy, {}, "m.onnx", {}).status();
  EXPECT_NE(status.message().find("m.onnx: input 'x' declares no shape: give its dims with "
                                  "--input-shape x="),
            std::string::npos)
      << status.message();
  ImportOptions options;
  ASSERT_TRUE(add_input_shape_flag("x=2,3", options).is_ok());
  graph = import_onnx_model(shapeless_input, options, "m.onnx", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  EXPECT_EQ(graph->value(graph->outputs().at(0)).shape.to_string(), Shape({2, 3}).to_string());
}

TEST(ImportTest, InputShapeFlagGivenTwiceIsRefused) {
  ImportOptions options;
  ASSERT_TRUE(add_input_shape_flag("x=1,2", options).is_ok());
  const Status status = add_input_shape_flag("x=1,3", options);
  EXPECT_NE(status.message().find("given twice"), std::string::npos) << status.message();
}

// Weights in a file beside the model, at an aligned and at an unaligned offset.
class ExternalDataTest : public ::testing::TestWithParam<int64_t> {};

TEST_P(ExternalDataTest, WeightsAreReadFromTheFileBesideTheModel) {
  test::TempDir dir;
  const int64_t offset = GetParam();
  const std::vector<float> weights{1.5f, -2.0f, 3.25f, 4.0f};
  std::string blob(static_cast<size_t>(offset), '\0');
  blob.append(reinterpret_cast<const char*>(weights.data()), weights.size() * sizeof(float));
  test::write_file(dir / "weights.bin", blob);

  test::write_file(dir / "model.onnx",
                   test::external_weight_model("weights.bin", offset).SerializeAsString());

  auto graph = import_onnx_file(dir / "model.onnx", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  const Value& value = graph->value(*graph->find_value("w"));
  ASSERT_TRUE(value.is_constant());
  const auto data = value.constant->values<float>();
  EXPECT_EQ(std::vector<float>(data.begin(), data.end()), weights);
}

INSTANTIATE_TEST_SUITE_P(Offsets, ExternalDataTest, ::testing::Values(0, 16, 2));

// An LSTM that omits Y ("") gets a named Y with the inferred shape: the CPU backend needs a
// node's first output (it refused such nodes before), and Y_h stays the graph's output.
// An LSTM that omits Y keeps it omitted (the CPU program runs it so: rnn_test.cpp); its Y_h is
// shape-inferred as usual.
TEST(ImportTest, OmittedRecurrentOutputStaysOmitted) {
  OnnxBuilder b(14);
  b.input("x", DType::kF32, {3, 2, 4}).output("y_h", DType::kF32, {1, 2, 5});
  b.initializer_random("w", {1, 20, 4}, 0.5f, 1).initializer_random("r", {1, 20, 5}, 0.5f, 2);
  set_attr(b.node("LSTM", {"x", "w", "r"}, {"", "y_h"}, "lstm"), "hidden_size", 5);
  auto graph = import_onnx_model(b.model(), {}, "lstm.onnx", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  const Node& lstm = graph->node(0);
  ASSERT_EQ(lstm.op_type, "LSTM");
  ASSERT_EQ(lstm.outputs.size(), 2u);
  EXPECT_EQ(lstm.outputs[0], kNoValue);
  const Value& y_h = graph->value(lstm.outputs[1]);
  EXPECT_EQ(y_h.name, "y_h");
  EXPECT_EQ(y_h.shape.dims, (std::vector<int64_t>{1, 2, 5}));
}

}  // namespace
}  // namespace hsched
