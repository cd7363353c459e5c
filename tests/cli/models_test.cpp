// `hsched info` on the shared reference models (HSCHED_MODELS_DIR); skipped when absent.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_runner.h"

namespace hsched {
namespace {

std::filesystem::path model_path(const std::string& name) {
  return std::filesystem::path(HSCHED_MODELS_DIR) / name / "model.onnx";
}

TEST(CliModelsTest, Resnet18Info) {
  const auto path = model_path("resnet18");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no model at " << path;
  const auto run = cli_test::run_cli({"info", path.string(), "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto json = nlohmann::json::parse(run.out);
  // torchvision's ResNet-18 at 224x224: 1.81 G multiply-adds = 3.63 GFLOP (+ bias and pointwise).
  EXPECT_NEAR(json["gflop"].get<double>(), 3.63, 0.1);
  EXPECT_EQ(json["non_static_tensors"], 0);
  EXPECT_EQ(json["inputs"][0]["shape"], nlohmann::json({1, 3, 224, 224}));
  EXPECT_EQ(json["outputs"][0]["shape"], nlohmann::json({1, 1000}));
  // 11.7 M parameters.
  EXPECT_NEAR(json["params"].get<double>(), 11.69e6, 0.05e6);
}

}  // namespace
}  // namespace hsched
