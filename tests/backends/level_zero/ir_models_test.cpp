// Every shared model through the OpenVINO IR: a model whose nodes ir_supports all accepts round
// trips whole and, read back, matches the reference outputs (fp32: 1e-4 + 1e-3|b|; fp16 weights:
// 5e-2 + 5e-2|b|); otherwise each maximal run of supported nodes (in topological order) round
// trips as a subgraph on seeded inputs. Skipped, not passed, when the models are absent.
#include <filesystem>

#include <gtest/gtest.h>

#include "graph/onnx_import.h"
#include "graph/subgraph.h"
#include "ir_test_util.h"
#include "support/model_data.h"
#include "support/temp_dir.h"

namespace hsched::ir::test {
namespace {

namespace fs = std::filesystem;

class IrModelTest : public ::testing::TestWithParam<std::string> {};

TEST_P(IrModelTest, SupportedPartsRoundTrip) {
  const fs::path dir = ::hsched::test::models_dir() / GetParam();
  if (!fs::exists(dir / "model.onnx")) GTEST_SKIP() << "no model at " << dir;
  auto graph = import_onnx_file(dir / "model.onnx", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  auto order = graph->topological_order();
  ASSERT_TRUE(order.is_ok());

  std::vector<std::vector<NodeId>> runs(1);
  size_t supported = 0;
  for (NodeId id : *order) {
    if (ir_supports(*graph, graph->node(id)).is_ok()) {
      runs.back().push_back(id);
      ++supported;
    } else if (!runs.back().empty()) {
      runs.emplace_back();
    }
  }
  if (runs.back().empty()) runs.pop_back();
  ASSERT_GT(supported, 0u) << GetParam() << ": no node the IR can express";
  RecordProperty("supported_nodes", static_cast<int>(supported));
  RecordProperty("nodes", static_cast<int>(order->size()));
  RecordProperty("runs", static_cast<int>(runs.size()));

  if (supported == order->size()) {
    const auto inputs = ::hsched::test::read_tensors(dir / "test_data_set_0", "input_");
    const auto expected = ::hsched::test::read_tensors(dir / "test_data_set_0", "output_");
    for (Precision precision : {Precision::kFp32, Precision::kFp16}) {
      auto model = write_ir(*graph, precision);
      ASSERT_TRUE(model.is_ok()) << model.status().message();
      auto read = read_ir(model->xml, model->weights);
      ASSERT_TRUE(read.is_ok()) << read.status().message();
      auto outputs = run_on_cpu(*read, inputs);
      ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
      ASSERT_EQ(outputs->size(), expected.size());
      const Tolerance tol = precision == Precision::kFp16 ? kFp16Tolerance : kFp32Tolerance;
      for (size_t i = 0; i < expected.size(); ++i) {
        EXPECT_TRUE(cpu::test::all_close((*outputs)[i], expected[i], tol.atol, tol.rtol))
            << GetParam() << " output " << i << (precision == Precision::kFp16 ? " fp16" : " fp32");
      }
    }
    return;
  }
  size_t checked = 0;
  for (const auto& run : runs) {
    Subgraph part = extract_subgraph(*graph, run);
    if (part.graph.outputs().empty()) continue;
    part.graph.opset = graph->opset;
    const auto inputs = random_inputs(part.graph, 11, 0.1f, 1.0f);
    for (Precision precision : {Precision::kFp32, Precision::kFp16}) {
      EXPECT_TRUE(round_trips(part.graph, inputs, precision))
          << GetParam() << ": run of " << run.size() << " nodes from '"
          << node_label(*graph, run.front()) << "'";
    }
    ++checked;
  }
  EXPECT_GT(checked, 0u);
}

INSTANTIATE_TEST_SUITE_P(Models, IrModelTest,
                         ::testing::Values("resnet18", "mobilenet_v2", "mobilenet_v3_small",
                                           "squeezenet1_1", "convnext_atto", "vit_tiny",
                                           "bert_mini", "vae_decoder_small"));

}  // namespace
}  // namespace hsched::ir::test
