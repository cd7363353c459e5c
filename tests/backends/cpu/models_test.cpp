// Every shared model, run by the CPU backend in fp32, matches its ONNX Runtime reference outputs
// (per element |a-b| <= 1e-4 + 1e-3*|b|); their INT8 versions match ORT's int8 outputs within a
// few quantization steps. Skipped, not passed, when the models are absent.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "backends/cpu/program.h"
#include "graph/onnx_builder.h"
#include "graph/onnx_import.h"
#include "op_test_util.h"
#include "support/model_data.h"
#include "support/temp_dir.h"

namespace hsched::cpu {
namespace {

namespace fs = std::filesystem;

class SharedModelTest : public ::testing::TestWithParam<std::string> {};

void expect_reference_outputs(const Graph& graph, const fs::path& dir, const std::string& name) {
  auto program = CpuProgram::compile(graph, CpuOptions{});
  ASSERT_TRUE(program.is_ok()) << program.status().message();
  const auto inputs = ::hsched::test::read_tensors(dir / "test_data_set_0", "input_");
  const auto expected = ::hsched::test::read_tensors(dir / "test_data_set_0", "output_");
  ASSERT_FALSE(expected.empty());
  // Twice: the second run reuses every buffer and must not depend on the first one's leftovers.
  for (int run = 0; run < 2; ++run) {
    auto outputs = (*program)->run(inputs);
    ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
    ASSERT_EQ(outputs->size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      EXPECT_TRUE(test::all_close((*outputs)[i], expected[i], 1e-4, 1e-3))
          << name << " output " << i << " run " << run;
    }
  }
}

TEST_P(SharedModelTest, MatchesReferenceOutputs) {
  const fs::path dir = ::hsched::test::models_dir() / GetParam();
  if (!fs::exists(dir / "model.onnx")) GTEST_SKIP() << "no model at " << dir;
  auto graph = import_onnx_file(dir / "model.onnx", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  expect_reference_outputs(*graph, dir, GetParam());
}

std::vector<int64_t> int64_values(const onnx::TensorProto& t) {
  if (!t.int64_data().empty()) return {t.int64_data().begin(), t.int64_data().end()};
  std::vector<int64_t> values(t.raw_data().size() / sizeof(int64_t));
  std::memcpy(values.data(), t.raw_data().data(), values.size() * sizeof(int64_t));
  return values;
}

// The sizes a Split reads from an initializer or a Constant node (empty when neither).
std::vector<int64_t> split_sizes(const onnx::GraphProto& graph, const std::string& name) {
  for (const auto& init : graph.initializer()) {
    if (init.name() == name) return int64_values(init);
  }
  for (const auto& node : graph.node()) {
    if (node.op_type() == "Constant" && node.output(0) == name) {
      return int64_values(node.attribute(0).t());
    }
  }
  return {};
}

// The opset-17 model written as an opset-18 exporter writes it: the default-domain import is 18,
// a Split of equal constant sizes has num_outputs instead, Reduce* take their axes as an input.
// Returns how many nodes changed form.
int rewrite_as_opset18(onnx::ModelProto& model) {
  int rewritten = 0;
  static const std::set<std::string> reduce_ops = {
      "ReduceL1",   "ReduceL2",  "ReduceLogSum", "ReduceLogSumExp", "ReduceMax",
      "ReduceMean", "ReduceMin", "ReduceProd",   "ReduceSumSquare"};
  for (auto& import : *model.mutable_opset_import()) {
    if (import.domain().empty()) import.set_version(18);
  }
  onnx::GraphProto& graph = *model.mutable_graph();
  for (auto& node : *graph.mutable_node()) {
    if (node.op_type() == "Split" && node.input_size() == 2) {
      const std::vector<int64_t> sizes = split_sizes(graph, node.input(1));
      if (sizes.size() == static_cast<size_t>(node.output_size()) &&
          std::count(sizes.begin(), sizes.end(), sizes[0]) == node.output_size()) {
        node.mutable_input()->RemoveLast();
        set_attr(node, "num_outputs", int64_t{node.output_size()});
        ++rewritten;
      }
    }
    if (reduce_ops.count(node.op_type()) == 0) continue;
    auto* attrs = node.mutable_attribute();
    for (int i = 0; i < attrs->size(); ++i) {
      if (attrs->Get(i).name() != "axes") continue;
      onnx::TensorProto* axes = graph.add_initializer();
      axes->set_name(node.output(0) + "_axes");
      axes->set_data_type(onnx::TensorProto::INT64);
      axes->add_dims(attrs->Get(i).ints_size());
      for (int64_t a : attrs->Get(i).ints()) axes->add_int64_data(a);
      node.add_input(axes->name());
      attrs->DeleteSubrange(i, 1);
      ++rewritten;
      break;
    }
  }
  return rewritten;
}

// Two exports (torchvision's MobileNetV3, timm's ViT with its Splits) read as opset 18 give the
// same outputs as at 17.
class Opset18ModelTest : public ::testing::TestWithParam<std::string> {};

TEST_P(Opset18ModelTest, MatchesReferenceOutputs) {
  const fs::path dir = ::hsched::test::models_dir() / GetParam();
  if (!fs::exists(dir / "model.onnx")) GTEST_SKIP() << "no model at " << dir;
  onnx::ModelProto model;
  std::ifstream file(dir / "model.onnx", std::ios::binary);
  ASSERT_TRUE(model.ParseFromIstream(&file));
  const int rewritten = rewrite_as_opset18(model);
  if (GetParam() == "vit_tiny") {
    EXPECT_EQ(rewritten, 12) << "its Splits";
  }
  auto graph = import_onnx_model(model, {}, GetParam(), dir);
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  EXPECT_EQ(graph->opset, 17);
  expect_reference_outputs(*graph, dir, GetParam() + " at opset 18");
}

// Every case the differential tester kept (tests/differential/cases/: a minimized graph, its
// inputs and ONNX Runtime's outputs) runs on the CPU and matches, once its bug is fixed.
TEST(DifferentialCaseTest, EveryKeptCaseMatchesOnnxRuntime) {
  int cases = 0;
  for (const auto& entry : fs::directory_iterator(HSCHED_DIFFERENTIAL_CASES_DIR)) {
    const fs::path dir = entry.path();
    if (!fs::exists(dir / "model.onnx")) continue;
    auto graph = import_onnx_file(dir / "model.onnx", {});
    ASSERT_TRUE(graph.is_ok()) << dir << ": " << graph.status().message();
    expect_reference_outputs(*graph, dir, dir.filename().string());
    ++cases;
  }
  EXPECT_GE(cases, 1);
}

INSTANTIATE_TEST_SUITE_P(Models, Opset18ModelTest,
                         ::testing::Values("mobilenet_v3_small", "vit_tiny"));

// torchvision's ResNet-18 written at opset 8 (its MaxPool without ceil_mode and dilations, which
// opset 8 lacks; both are at their defaults): upgraded to opset 9 by ONNX's version converter at
// import, same outputs (ONNX Runtime gives the references for this opset-8 file too).
TEST(OldOpsetModelTest, ResNet18AtOpset8MatchesReferenceOutputs) {
  const fs::path dir = ::hsched::test::models_dir() / "resnet18";
  if (!fs::exists(dir / "model.onnx")) GTEST_SKIP() << "no model at " << dir;
  onnx::ModelProto model;
  std::ifstream file(dir / "model.onnx", std::ios::binary);
  ASSERT_TRUE(model.ParseFromIstream(&file));
  for (auto& import : *model.mutable_opset_import()) {
    if (import.domain().empty()) import.set_version(8);
  }
  for (auto& node : *model.mutable_graph()->mutable_node()) {
    if (node.op_type() != "MaxPool") continue;
    auto* attrs = node.mutable_attribute();
    for (int i = attrs->size(); i-- > 0;) {
      if (attrs->Get(i).name() == "ceil_mode" || attrs->Get(i).name() == "dilations") {
        attrs->DeleteSubrange(i, 1);
      }
    }
  }
  auto graph = import_onnx_model(model, {}, "resnet18 at opset 8", dir);
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  EXPECT_EQ(graph->opset, 9);
  expect_reference_outputs(*graph, dir, "resnet18 at opset 8");
}

INSTANTIATE_TEST_SUITE_P(Models, SharedModelTest,
                         ::testing::Values("resnet18", "mobilenet_v2", "mobilenet_v3_small",
                                           "squeezenet1_1", "convnext_atto", "vit_tiny",
                                           "bert_mini", "vae_decoder_small"));

// The shared models quantized by ONNX Runtime's quantize_static (QDQ: uint8 activations,
// per-channel int8 weights) against ONNX Runtime's own int8 outputs (its optimizations on: the
// QDQ groups run as its QOperator ops), the difference counted in steps of the output's
// quantization (the scale of the DequantizeLinear giving it). The CPU runs those groups with
// ONNX Runtime's arithmetic (qlinear_arith.h, the requantization of QLinearMatMul and
// QLinearConv); what remains apart is float ops between Q/DQ pairs computed another way (a
// normalization's sums), whose rare rounding differences a deep model carries on. These bounds are
// the measured differences, so that a regression fails.
struct Int8Case {
  std::string name;
  double max_steps;
};

class Int8ModelTest : public ::testing::TestWithParam<Int8Case> {};

TEST_P(Int8ModelTest, MatchesOnnxRuntimeInt8Outputs) {
  const Int8Case& c = GetParam();
  const fs::path dir = ::hsched::test::int8_models_dir() / (c.name + "_int8");
  if (!fs::exists(dir / "model.onnx")) GTEST_SKIP() << "no model at " << dir;
  auto graph = import_onnx_file(dir / "model.onnx", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  auto program = CpuProgram::compile(*graph, CpuOptions{});
  ASSERT_TRUE(program.is_ok()) << program.status().message();
  const auto inputs = ::hsched::test::read_tensors(dir / "test_data_set_0", "input_");
  const auto expected = ::hsched::test::read_tensors(dir / "test_data_set_0", "output_");
  auto outputs = (*program)->run(inputs);
  ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
  const auto agreement = ::hsched::test::int8_agreement(*graph, (*outputs)[0], expected[0]);
  EXPECT_LE(agreement.steps, c.max_steps + 1e-3) << c.name;
  EXPECT_GE(agreement.cosine, 0.98) << c.name;
  EXPECT_TRUE(agreement.same_top_class) << c.name;
}

INSTANTIATE_TEST_SUITE_P(
    Models, Int8ModelTest,
    ::testing::Values(Int8Case{"resnet18", 1}, Int8Case{"squeezenet1_1", 1},
                      Int8Case{"mobilenet_v2", 1}, Int8Case{"mobilenet_v3_small", 3},
                      Int8Case{"convnext_atto", 0}, Int8Case{"vit_tiny", 0},
                      Int8Case{"bert_mini", 0}, Int8Case{"vae_decoder_small", 0}),
    [](const ::testing::TestParamInfo<Int8Case>& info) { return info.param.name; });

}  // namespace
}  // namespace hsched::cpu
