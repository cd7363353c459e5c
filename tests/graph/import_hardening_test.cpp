// Crafted models and files the importer once crashed or hung on, beyond the one-line cases of
// support/bad_models.cpp: model-local functions inlined (and run), bounds met in time and memory,
// tensor files past protobuf's size limit.
#include <algorithm>
#include <chrono>
#include <functional>
#include <numeric>

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "graph/onnx_builder.h"
#include "graph/onnx_import.h"
#include "graph/tensor_proto.h"
#include "support/bad_models.h"
#include "support/cpu_run.h"
#include "support/temp_dir.h"

namespace hsched {
namespace {

using test::add_function;
using test::function_call_model;
using test::make_node;

Result<Graph> import(onnx::ModelProto& model) {
  return import_onnx_model(model, {}, "crafted.onnx", {});
}

std::vector<float> run_x_on_cpu(const Graph& graph, const std::vector<float>& x) {
  const auto outputs = test::run_on_cpu(graph, {Tensor::from_vector(DType::kF32, {1, 4}, x)});
  if (outputs.size() != 1) return {};
  const auto values = outputs.front().values<float>();
  return {values.begin(), values.end()};
}

std::vector<std::string> node_names(const Graph& graph) {
  std::vector<std::string> names;
  for (const auto& node : graph.nodes()) names.push_back(node.name + ":" + node.op_type);
  std::sort(names.begin(), names.end());
  return names;
}

// f(a) = g(a) + a, g(a) = LeakyRelu(a) with alpha taken from f's attribute "slope" (given by the
// call), so the body runs: y = leaky_relu(x, 0.5) + x.
TEST(FunctionTest, CallsAreInlinedWithAttributeReferencesAndRun) {
  OnnxBuilder b = function_call_model("f");
  onnx::NodeProto& call = *b.model().mutable_graph()->mutable_node(0);
  set_attr(call, "slope", 0.5f);
  onnx::NodeProto inner = make_node("g", {"a"}, {"t"}, "inner", "local");
  auto& ref = *inner.add_attribute();
  ref.set_name("slope");
  ref.set_type(onnx::AttributeProto::FLOAT);
  ref.set_ref_attr_name("slope");
  add_function(b.model(), "f", {inner, make_node("Add", {"t", "a"}, {"b"}, "add")})
      .add_attribute("slope");
  onnx::NodeProto leaky = make_node("LeakyRelu", {"a"}, {"b"}, "leaky");
  auto& alpha = *leaky.add_attribute();
  alpha.set_name("alpha");
  alpha.set_type(onnx::AttributeProto::FLOAT);
  alpha.set_ref_attr_name("slope");
  add_function(b.model(), "g", {leaky}).add_attribute("slope");

  auto graph = import(b.model());
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  EXPECT_EQ(node_names(*graph),
            (std::vector<std::string>{"call/add:Add", "call/inner/leaky:LeakyRelu"}));
  EXPECT_EQ(run_x_on_cpu(*graph, {-2, -1, 1, 2}), (std::vector<float>{-3, -1.5f, 2, 4}));
}

// A reference the call leaves unset drops the attribute (the operator's default applies); an
// output that is an input passes through an Identity.
TEST(FunctionTest, UnsetReferenceTakesTheDefaultAndPassThroughBecomesIdentity) {
  OnnxBuilder b(17);
  b.input("x", DType::kF32, {1, 4})
      .output("y", DType::kF32, {1, 4})
      .output("z", DType::kF32, {1, 4});
  onnx::NodeProto& call = b.node("f", {"x"}, {"y", "z"}, "call");
  call.set_domain("local");
  auto& import_local = *b.model().add_opset_import();
  import_local.set_domain("local");
  import_local.set_version(1);
  onnx::NodeProto leaky = make_node("LeakyRelu", {"a"}, {"b"}, "leaky");
  auto& alpha = *leaky.add_attribute();
  alpha.set_name("alpha");
  alpha.set_type(onnx::AttributeProto::FLOAT);
  alpha.set_ref_attr_name("slope");
  auto& fn = add_function(b.model(), "f", {leaky});
  fn.add_attribute("slope");
  fn.add_output("a");  // the input, unchanged

  auto graph = import(b.model());
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  EXPECT_EQ(node_names(*graph),
            (std::vector<std::string>{"call/leaky:LeakyRelu", "call/output_1:Identity"}));
  for (const auto& node : graph->nodes()) {
    if (node.op_type == "LeakyRelu") {
      EXPECT_TRUE(node.attributes.empty());
    }
  }
}

// Recursion is refused from the function list itself, before libonnx runs, called or not.
TEST(FunctionTest, RecursionIsRefusedEvenWhenNothingCallsIt) {
  OnnxBuilder b(17);
  b.input("x", DType::kF32, {1, 4}).output("y", DType::kF32, {1, 4});
  b.node("Relu", {"x"}, {"y"}, "relu");
  add_function(b.model(), "f", {make_node("f", {"a"}, {"b"}, "", "local")});
  auto graph = import(b.model());
  ASSERT_FALSE(graph.is_ok());
  EXPECT_EQ(graph.status().message(),
            "crafted.onnx: function 'local.f' calls itself (local.f -> local.f): recursion is not "
            "supported");
}

TEST(FunctionTest, MalformedFunctionsAndCallsAreRefusedWithOneLine) {
  struct Case {
    std::string name;
    std::function<void(onnx::ModelProto&)> spoil;  // applied to function_call_model("f")
    std::string expect;
  };
  const std::vector<Case> cases{
      {"ReadsUndefinedName",
       [](onnx::ModelProto& m) {
         add_function(m, "f", {make_node("Add", {"a", "ghost"}, {"b"})});
       },
       "function 'local.f': node #0 (Add): input 'ghost' is neither an input of the function"},
      {"OutputNeverDefined",
       [](onnx::ModelProto& m) { add_function(m, "f", {make_node("Relu", {"a"}, {"c"})}); },
       "function 'local.f': output 'b' is defined by none of its nodes"},
      {"UndeclaredCallAttribute",
       [](onnx::ModelProto& m) {
         set_attr(*m.mutable_graph()->mutable_node(0), "alpha", 1.0f);
         add_function(m, "f", {make_node("Relu", {"a"}, {"b"})});
       },
       "node 'call' (f), a call of function 'local.f': the function has no attribute 'alpha'"},
      {"TooManyInputs",
       [](onnx::ModelProto& m) {
         m.mutable_graph()->mutable_node(0)->add_input("x");
         add_function(m, "f", {make_node("Relu", {"a"}, {"b"})});
       },
       "it has 2 inputs and 1 outputs; the function takes 1 and gives 1"},
      {"DefinedTwice",
       [](onnx::ModelProto& m) {
         add_function(m, "f", {make_node("Relu", {"a"}, {"b"}), make_node("Relu", {"a"}, {"b"})});
       },
       "function 'local.f': node #1 (Relu): 'b' is defined twice"},
      {"DefaultDomain",
       [](onnx::ModelProto& m) {
         add_function(m, "f", {make_node("Relu", {"a"}, {"b"})}).set_domain("");
       },
       "function '.f' is in the default ONNX domain"},
      {"OtherOpset",
       [](onnx::ModelProto& m) {
         add_function(m, "f", {make_node("Relu", {"a"}, {"b"})})
             .mutable_opset_import(0)
             ->set_version(13);
       },
       "function 'local.f': imports opset 13 of the default ONNX domain; the model imports 17"},
      {"Subgraph",
       [](onnx::ModelProto& m) {
         onnx::NodeProto node = make_node("If", {"a"}, {"b"}, "if");
         auto& attr = *node.add_attribute();
         attr.set_name("then_branch");
         attr.set_type(onnx::AttributeProto::GRAPH);
         attr.mutable_g();
         add_function(m, "f", {node});
       },
       "holds a subgraph, which hsched does not take inside a function"},
      {"InnerNodeSkipsGuards",  // the schema check applies to inlined nodes
       [](onnx::ModelProto& m) { add_function(m, "f", {make_node("Conv", {"a"}, {"b"}, "c")}); },
       "node 'call/c' (Conv) has 1 inputs"},
      {"ReferenceOutsideFunction",
       [](onnx::ModelProto& m) {
         auto& graph = *m.mutable_graph();
         graph.clear_node();
         auto& node = *graph.add_node() = make_node("LeakyRelu", {"x"}, {"y"}, "leaky");
         auto& attr = *node.add_attribute();
         attr.set_name("alpha");
         attr.set_type(onnx::AttributeProto::FLOAT);
         attr.set_ref_attr_name("slope");
       },
       "node 'leaky' (LeakyRelu): attribute 'alpha' refers to the attribute 'slope' of a function"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    OnnxBuilder b = function_call_model("f");
    c.spoil(b.model());
    const Status status = import(b.model()).status();
    ASSERT_FALSE(status.is_ok());
    EXPECT_EQ(status.message().find('\n'), std::string::npos) << status.message();
    EXPECT_NE(status.message().find(c.expect), std::string::npos) << status.message();
  }
}

// f0 -> f7, each calling the next `calls` times: calls^7 copies of f7's Relu.
onnx::ModelProto fan_out_model(int calls) {
  OnnxBuilder b = function_call_model("f0");
  for (int i = 0; i < 7; ++i) {
    const std::string callee = "f" + std::to_string(i + 1);
    std::vector<onnx::NodeProto> nodes;
    for (int k = 0; k < calls; ++k) {
      const std::string in = k == 0 ? "a" : "t" + std::to_string(k - 1);
      const std::string out = k + 1 == calls ? "b" : "t" + std::to_string(k);
      nodes.push_back(make_node(callee, {in}, {out}, "c" + std::to_string(k), "local"));
    }
    add_function(b.model(), "f" + std::to_string(i), nodes);
  }
  add_function(b.model(), "f7", {make_node("Relu", {"a"}, {"b"}, "relu")});
  return b.model();
}

TEST(FunctionTest, NestedCallsExpandFully) {
  onnx::ModelProto model = fan_out_model(2);
  auto graph = import(model);
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  EXPECT_EQ(graph->nodes().size(), 128u);
}

// 16^7 nodes from a model of a few KB: refused from the counts, before any node is built.
TEST(FunctionTest, ExpansionPastTheLimitIsRefusedBeforeBuilding) {
  onnx::ModelProto model = fan_out_model(16);
  const auto start = std::chrono::steady_clock::now();
  const Status status = import(model).status();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500));
  EXPECT_NE(status.message().find("node 'call' (f0), a call of function 'local.f0': function "
                                  "calls would add more than 262144 nodes"),
            std::string::npos)
      << status.message();
}

// The axes input of an Unsqueeze (opset 13 on) is bounded before libonnx infers shapes.
TEST(LimitsTest, UnsqueezeAxesInputLongerThanTheRankLimitIsRefused) {
  OnnxBuilder b(13);
  b.input("x", DType::kF32, {1, 4}).output("y", DType::kF32, {});
  std::vector<int64_t> axes(100000);
  std::iota(axes.begin(), axes.end(), 0);
  b.initializer_i64("axes", {static_cast<int64_t>(axes.size())}, axes);
  b.node("Unsqueeze", {"x", "axes"}, {"y"}, "unsqueeze");
  const Status status = import(b.model()).status();
  EXPECT_NE(status.message().find("node 'unsqueeze' (Unsqueeze): its output could reach rank "
                                  "100002"),
            std::string::npos)
      << status.message();
}

// Each Gather reads its own data as indices: the rank nearly doubles per node. 30 nodes (800
// bytes) took libonnx past 6 GB and 30 s before it was killed.
TEST(LimitsTest, RankDoublingGatherChainIsRefusedQuickly) {
  OnnxBuilder b(11);
  b.input("i", DType::kI64, {1, 1}).output("y", DType::kI64, {});
  std::string prev = "i";
  for (int k = 0; k < 30; ++k) {
    const std::string out = "g" + std::to_string(k);
    b.node("Gather", {prev, prev}, {out}, out);
    prev = out;
  }
  set_attr(b.node("ReduceSum", {prev}, {"y"}, "sum"), "keepdims", 0);
  const auto start = std::chrono::steady_clock::now();
  const Status status = import(b.model()).status();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(1000));
  EXPECT_NE(status.message().find("node 'g5' (Gather): its output could reach rank 65"),
            std::string::npos)
      << status.message();
}

// 32 axes per Unsqueeze, 1000 of them (100 KB): 25 s and 1.1 GB in libonnx before.
TEST(LimitsTest, UnsqueezeChainIsRefusedQuickly) {
  OnnxBuilder b(11);
  b.input("x", DType::kF32, {1}).output("y", DType::kF32, {});
  std::vector<int64_t> axes(32);
  std::iota(axes.begin(), axes.end(), 0);
  std::string prev = "x";
  for (int k = 0; k < 1000; ++k) {
    const std::string out = "u" + std::to_string(k);
    set_attr(b.node("Unsqueeze", {prev}, {out}, out), "axes", axes);
    prev = out;
  }
  set_attr(b.node("ReduceSum", {prev}, {"y"}, "sum"), "keepdims", 0);
  const auto start = std::chrono::steady_clock::now();
  const Status status = import(b.model()).status();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(1000));
  EXPECT_NE(status.message().find("node 'u1' (Unsqueeze): its output could reach rank 65"),
            std::string::npos)
      << status.message();
}

// A million axes once took seconds and most of a GB in libonnx's shape inference.
TEST(LimitsTest, UnsqueezeWithAMillionAxesIsRefusedQuickly) {
  OnnxBuilder b(11);
  b.input("x", DType::kF32, {1, 4}).output("y", DType::kF32, {});
  std::vector<int64_t> axes(1000000);
  std::iota(axes.begin(), axes.end(), 0);
  set_attr(b.node("Unsqueeze", {"x"}, {"y"}, "unsqueeze"), "axes", axes);
  const std::string bytes = b.serialize();
  const auto start = std::chrono::steady_clock::now();
  const Status status = import_onnx_bytes(bytes, {}, "axes.onnx", {}).status();
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_NE(status.message().find("attribute 'axes' has 1000000 values"), std::string::npos)
      << status.message();
  EXPECT_LT(elapsed, std::chrono::milliseconds(1000));
}

// The size used to be cast to int: a 4 GiB + n byte file was parsed as its first n bytes.
TEST(LimitsTest, TensorFileOverTwoGiBIsRefusedNotTruncated) {
  test::TempDir dir;
  const auto path = dir / "input_0.pb";
  ASSERT_TRUE(
      write_tensor_file(Tensor::from_vector(DType::kF32, {1, 4}, std::vector<float>{1, 2, 3, 4}),
                        "x", path)
          .is_ok());
  ASSERT_TRUE(read_tensor_file(path).is_ok());
  const auto size = std::filesystem::file_size(path);
  std::filesystem::resize_file(path, (uintmax_t{1} << 32) + size);  // sparse: no disk used
  const Status status = read_tensor_file(path).status();
  ASSERT_FALSE(status.is_ok());
  EXPECT_NE(status.message().find("more than protobuf's limit of 2 GiB - 1"), std::string::npos)
      << status.message();
}

}  // namespace
}  // namespace hsched
