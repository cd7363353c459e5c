// Every shared model, run by the CPU backend in fp32, matches its ONNX Runtime reference outputs
// (per element |a-b| <= 1e-4 + 1e-3*|b|). Skipped, not passed, when the models are absent.
#include <gtest/gtest.h>

#include <filesystem>

#include "backends/cpu/program.h"
#include "graph/onnx_import.h"
#include "op_test_util.h"
#include "support/model_data.h"
#include "support/temp_dir.h"

namespace hsched::cpu {
namespace {

namespace fs = std::filesystem;

class SharedModelTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SharedModelTest, MatchesReferenceOutputs) {
  const fs::path dir = ::hsched::test::models_dir() / GetParam();
  if (!fs::exists(dir / "model.onnx")) GTEST_SKIP() << "no model at " << dir;
  auto graph = import_onnx_file(dir / "model.onnx", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  auto program = CpuProgram::compile(*graph, CpuOptions{});
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
          << GetParam() << " output " << i << " run " << run;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, SharedModelTest,
                         ::testing::Values("resnet18", "mobilenet_v2", "mobilenet_v3_small",
                                           "squeezenet1_1", "convnext_atto", "vit_tiny",
                                           "bert_mini", "vae_decoder_small"));

}  // namespace
}  // namespace hsched::cpu
