// Ops run as their ONNX function body (graph/function_inline.h expand_function_ops): the node
// gives way to its body at import, nested bodies included, and the result computes what the op
// defines (checked on the CPU against a direct computation).
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "graph/onnx_builder.h"
#include "graph/onnx_import.h"
#include "support/cpu_run.h"
#include "support/graph_query.h"

namespace hsched {
namespace {

using test::has_op;
using test::run_on_cpu;

constexpr int64_t kFunctionsOpset = 17;

// SoftmaxCrossEntropyLoss's body calls NegativeLogLikelihoodLoss, whose body depends on the
// input types: both are expanded, and the loss is the mean of -log softmax at the labels.
TEST(FunctionOpsTest, SoftmaxCrossEntropyLossExpandsThroughNegativeLogLikelihoodLoss) {
  OnnxBuilder b(kFunctionsOpset);
  b.input("scores", DType::kF32, {2, 3}).input("labels", DType::kI64, {2});
  b.output("loss", DType::kF32, {});
  b.node("SoftmaxCrossEntropyLoss", {"scores", "labels"}, {"loss"}, "sce");
  auto graph = import_onnx_model(b.model(), {}, "sce.onnx", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  EXPECT_FALSE(has_op(*graph, "SoftmaxCrossEntropyLoss"));
  EXPECT_FALSE(has_op(*graph, "NegativeLogLikelihoodLoss"));

  const std::vector<float> scores{1, 2, 3, -1, 0.5f, 4};
  const std::vector<int64_t> labels{2, 0};
  const auto outputs = run_on_cpu(*graph, {Tensor::from_vector(DType::kF32, {2, 3}, scores),
                                           Tensor::from_vector(DType::kI64, {2}, labels)});
  ASSERT_EQ(outputs.size(), 1u);
  double expected = 0;
  for (int r = 0; r < 2; ++r) {
    double sum = 0;
    for (int c = 0; c < 3; ++c) sum += std::exp(double{scores[static_cast<size_t>(r * 3 + c)]});
    expected -= scores[static_cast<size_t>(r * 3 + labels[static_cast<size_t>(r)])] - std::log(sum);
  }
  expected /= 2;
  EXPECT_NEAR(outputs[0].values<float>()[0], expected, 1e-5);
}

// A body with attribute references: the call's alpha is used, and where the call gives none the
// schema's default (1.0) is.
TEST(FunctionOpsTest, CeluTakesTheCallsAttributeOrTheSchemaDefault) {
  for (const bool given : {true, false}) {
    SCOPED_TRACE(given);
    OnnxBuilder b(kFunctionsOpset);
    b.input("x", DType::kF32, {4}).output("y", DType::kF32, {4});
    onnx::NodeProto& celu = b.node("Celu", {"x"}, {"y"}, "celu");
    if (given) set_attr(celu, "alpha", 2.0f);
    auto graph = import_onnx_model(b.model(), {}, "celu.onnx", {});
    ASSERT_TRUE(graph.is_ok()) << graph.status().message();
    EXPECT_FALSE(has_op(*graph, "Celu"));
    const std::vector<float> x{-3, -0.5f, 0, 2};
    const auto outputs = run_on_cpu(*graph, {Tensor::from_vector(DType::kF32, {4}, x)});
    ASSERT_EQ(outputs.size(), 1u);
    const double alpha = given ? 2.0 : 1.0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double expected = std::max(0.0, double{x[i]}) +
                              std::min(0.0, alpha * (std::exp(double{x[i]} / alpha) - 1));
      EXPECT_NEAR(outputs[0].values<float>()[i], expected, 1e-5) << i;
    }
  }
}

// Body names never clash with the model's: two calls whose outputs share a prefix.
TEST(FunctionOpsTest, TwoCallsGetDistinctNames) {
  OnnxBuilder b(kFunctionsOpset);
  b.input("x", DType::kF32, {1, 2, 2, 2}).output("z", DType::kF32, {1, 2, 2, 2});
  b.node("MeanVarianceNormalization", {"x"}, {"y"}, "mvn");
  b.node("MeanVarianceNormalization", {"y"}, {"z"}, "mvn/");
  auto graph = import_onnx_model(b.model(), {}, "mvn.onnx", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  EXPECT_FALSE(has_op(*graph, "MeanVarianceNormalization"));
  std::vector<float> x{1, 2, 3, 4, 5, 6, 7, 9};
  const auto outputs = run_on_cpu(*graph, {Tensor::from_vector(DType::kF32, {1, 2, 2, 2}, x)});
  ASSERT_EQ(outputs.size(), 1u);
  // Each channel normalized over N, H, W: mean 0, variance 1 (twice is still that).
  for (int c = 0; c < 2; ++c) {
    double mean = 0;
    double square = 0;
    for (int i = 0; i < 4; ++i) {
      const double v = outputs[0].values<float>()[static_cast<size_t>(c * 4 + i)];
      mean += v / 4;
      square += v * v / 4;
    }
    EXPECT_NEAR(mean, 0, 1e-5);
    EXPECT_NEAR(square, 1, 1e-3);
  }
}

}  // namespace
}  // namespace hsched
