// Program-level fusions against the same graph run unfused in NCHW: the GroupNorm chain
// (Reshape, InstanceNormalization, Reshape, Mul, Add, SiLU) as one kernel, kept channels-last
// between convolutions and through a nearest Resize; a residual Add as a `sum` post-op;
// ConvNeXt's Transpose -> LayerNormalization -> Transpose as one channels-last kernel and its
// per-channel layer scale folded into the Conv's weights; a channel Concat, a squeeze-and-excite
// block (GlobalAveragePool, broadcast Mul) kept channels-last; view ops run as aliases;
// attention's scaled q and transposed, scaled k read by the MatMul directly. A QDQ model's
// fusions: int8_fusion_test.cpp.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cpu/program.h"
#include "fusion_test_util.h"
#include "graph/onnx_builder.h"
#include "graph/onnx_import.h"
#include "op_test_util.h"

namespace hsched::cpu {
namespace {

using test::expect_matches_unfused;
using test::kChannels;
using test::kGroups;
using test::kSize;

// x -> Conv -> [GroupNorm -> SiLU] -> Conv (+ residual) -> Resize x2 -> [GroupNorm] -> Conv.
Graph group_norm_model() {
  OnnxBuilder b(17);
  const std::vector<int64_t> act{1, kChannels, kSize, kSize};
  const std::vector<int64_t> big{1, kChannels, 2 * kSize, 2 * kSize};
  b.input("x", DType::kF32, {1, 3, kSize, kSize});
  b.output("y", DType::kF32, {1, 2, 2 * kSize, 2 * kSize});
  b.initializer_random("w0", {kChannels, 3, 3, 3}, 0.5f, 1);
  b.initializer_random("w1", {kChannels, kChannels, 3, 3}, 0.3f, 2);
  b.initializer_random("w2", {2, kChannels, 3, 3}, 0.3f, 3);
  b.initializer_i64("grouped", {3}, {1, kGroups, -1});
  b.initializer_i64("act_shape", {4}, act);
  b.initializer_i64("big_shape", {4}, big);
  b.initializer_random("in_scale", {kGroups}, 1.0f, 4);
  b.initializer_random("in_bias", {kGroups}, 1.0f, 5);
  b.initializer_random("gamma", {kChannels, 1, 1}, 1.0f, 6);
  b.initializer_random("beta", {kChannels, 1, 1}, 1.0f, 7);
  b.initializer_f32("scales", {4}, {1, 1, 2, 2});
  set_attr(b.node("Conv", {"x", "w0"}, {"c0"}), "pads", std::vector<int64_t>{1, 1, 1, 1});
  // GroupNorm with affine and SiLU.
  b.node("Reshape", {"c0", "grouped"}, {"g0"});
  b.node("InstanceNormalization", {"g0", "in_scale", "in_bias"}, {"n0"});
  b.node("Reshape", {"n0", "act_shape"}, {"u0"});
  b.node("Mul", {"u0", "gamma"}, {"m0"});
  b.node("Add", {"m0", "beta"}, {"a0"});
  b.node("Sigmoid", {"a0"}, {"s0"});
  b.node("Mul", {"a0", "s0"}, {"h0"});
  set_attr(b.node("Conv", {"h0", "w1"}, {"c1"}), "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("Add", {"c0", "c1"}, {"r1"});  // residual: a `sum` post-op of the second Conv
  auto& resize = b.node("Resize", {"r1", "", "scales"}, {"up"});
  set_attr(resize, "mode", std::string("nearest"));
  // GroupNorm without affine or activation.
  b.node("Reshape", {"up", "grouped"}, {"g1"});
  b.node("InstanceNormalization", {"g1", "in_scale", "in_bias"}, {"n1"});
  b.node("Reshape", {"n1", "big_shape"}, {"u1"});
  set_attr(b.node("Conv", {"u1", "w2"}, {"y"}), "pads", std::vector<int64_t>{1, 1, 1, 1});
  auto graph = import_onnx_model(b.model(), {}, "group_norm_model", {});
  EXPECT_TRUE(graph.is_ok()) << graph.status().message();
  return std::move(graph).value();
}

TEST(FusionTest, GroupNormChainChannelsLastMatchesUnfused) {
  const Graph graph = group_norm_model();
  const Tensor x = test::random_f32({1, 3, kSize, kSize}, 11, -2.0f, 2.0f);
  const auto fused = expect_matches_unfused(graph, {x});
  ASSERT_NE(fused, nullptr);
  // Both GroupNorm chains fold into one kernel each (6 + 2 nodes), the residual Add into a Conv.
  EXPECT_EQ(fused->stats().fused_nodes, 9);
  EXPECT_EQ(fused->stats().kernels, 6);  // 3 Conv, 2 GroupNorm, Resize
  // Every activation between the first and the last Conv stays NHWC.
  EXPECT_EQ(fused->stats().channels_last_values, 5);
}

// x -> depthwise Conv -> Transpose -> LayerNormalization -> Transpose -> 1x1 Conv (+bias) ->
// Mul(layer scale) -> Add(x): a ConvNeXt block.
Graph convnext_block_model() {
  OnnxBuilder b(17);
  const std::vector<int64_t> act{1, kChannels, kSize, kSize};
  b.input("x", DType::kF32, act);
  b.output("y", DType::kF32, act);
  b.initializer_random("dw", {kChannels, 1, 3, 3}, 0.5f, 1);
  b.initializer_random("ln_scale", {kChannels}, 1.0f, 2);
  b.initializer_random("ln_bias", {kChannels}, 1.0f, 3);
  b.initializer_random("pw", {kChannels, kChannels, 1, 1}, 0.5f, 4);
  b.initializer_random("pw_bias", {kChannels}, 0.5f, 5);
  b.initializer_random("layer_scale", {kChannels, 1, 1}, 1.0f, 6);
  auto& dw = b.node("Conv", {"x", "dw"}, {"d"});
  set_attr(dw, "pads", std::vector<int64_t>{1, 1, 1, 1});
  set_attr(dw, "group", kChannels);
  set_attr(b.node("Transpose", {"d"}, {"t"}), "perm", std::vector<int64_t>{0, 2, 3, 1});
  set_attr(b.node("LayerNormalization", {"t", "ln_scale", "ln_bias"}, {"n"}), "axis", -1);
  set_attr(b.node("Transpose", {"n"}, {"u"}), "perm", std::vector<int64_t>{0, 3, 1, 2});
  b.node("Conv", {"u", "pw", "pw_bias"}, {"p"});
  b.node("Mul", {"p", "layer_scale"}, {"s"});
  b.node("Add", {"s", "x"}, {"y"});
  auto graph = import_onnx_model(b.model(), {}, "convnext_block", {});
  EXPECT_TRUE(graph.is_ok()) << graph.status().message();
  return std::move(graph).value();
}

TEST(FusionTest, ChannelLayerNormAndLayerScaleMatchUnfused) {
  const Graph graph = convnext_block_model();
  const Tensor x = test::random_f32({1, kChannels, kSize, kSize}, 12, -2.0f, 2.0f);
  const auto fused = expect_matches_unfused(graph, {x});
  ASSERT_NE(fused, nullptr);
  // Left: the depthwise Conv, the channel LayerNorm and the 1x1 Conv with scaled weights and the
  // residual (x is NCHW, a graph input: a binary post-op, not a sum).
  EXPECT_EQ(fused->stats().kernels, 3);
  EXPECT_EQ(fused->stats().channels_last_values, 2);
}

// The layer scale folded into the Conv's weights when its Mul's output is the program's output
// (a partition boundary right after it): the Conv writes that output itself. It used to keep
// writing its own output, and the absorbed Mul's was never written.
TEST(FusionTest, LayerScaleFoldedIntoTheConvWritesTheProgramOutput) {
  OnnxBuilder b(17);
  const std::vector<int64_t> act{1, kChannels, kSize, kSize};
  b.input("x", DType::kF32, act);
  b.output("s", DType::kF32, act);
  b.initializer_random("pw", {kChannels, kChannels, 1, 1}, 0.5f, 4);
  b.initializer_random("pw_bias", {kChannels}, 0.5f, 5);
  b.initializer_random("layer_scale", {kChannels, 1, 1}, 1.0f, 6);
  b.node("Conv", {"x", "pw", "pw_bias"}, {"p"});
  b.node("Mul", {"p", "layer_scale"}, {"s"});
  auto graph = import_onnx_model(b.model(), {}, "layer_scale_output", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  const Tensor x = test::random_f32(act, 13, -2.0f, 2.0f);
  const auto fused = expect_matches_unfused(*graph, {x});
  ASSERT_NE(fused, nullptr);
  EXPECT_EQ(fused->stats().kernels, 1);  // the Conv with scaled weights
}

TEST(FusionTest, ChannelLayerNormChannelsFirstMatchesUnfused) {
  // Without the layout pass the fused LayerNorm reads and writes NCHW (strided channels).
  const Graph graph = convnext_block_model();
  const Tensor x = test::random_f32({1, kChannels, kSize, kSize}, 13, -2.0f, 2.0f);
  const auto fused = expect_matches_unfused(graph, {x}, CpuOptions{2, true, false});
  ASSERT_NE(fused, nullptr);
  EXPECT_EQ(fused->stats().kernels, 3);
  EXPECT_EQ(fused->stats().channels_last_values, 0);
}

// SqueezeNet's fire module: squeeze Conv -> two expand Convs -> Concat(axis 1) -> Conv.
TEST(FusionTest, ChannelConcatChannelsLastMatchesUnfused) {
  OnnxBuilder b(17);
  b.input("x", DType::kF32, {1, 3, kSize, kSize});
  b.output("y", DType::kF32, {1, 2, kSize, kSize});
  b.initializer_random("sq", {4, 3, 1, 1}, 0.5f, 1);
  b.initializer_random("e1", {5, 4, 1, 1}, 0.5f, 2);
  b.initializer_random("e3", {6, 4, 3, 3}, 0.5f, 3);
  b.initializer_random("out", {2, 11, 1, 1}, 0.5f, 4);
  b.node("Conv", {"x", "sq"}, {"s"});
  b.node("Relu", {"s"}, {"sr"});
  b.node("Conv", {"sr", "e1"}, {"a"});
  set_attr(b.node("Conv", {"sr", "e3"}, {"c"}), "pads", std::vector<int64_t>{1, 1, 1, 1});
  set_attr(b.node("Concat", {"a", "c"}, {"cat"}), "axis", 1);
  b.node("Conv", {"cat", "out"}, {"y"});
  auto graph = import_onnx_model(b.model(), {}, "fire", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  const Tensor x = test::random_f32({1, 3, kSize, kSize}, 14, -2.0f, 2.0f);
  const auto fused = expect_matches_unfused(*graph, {x});
  ASSERT_NE(fused, nullptr);
  EXPECT_EQ(fused->stats().channels_last_values, 4);  // sr, a, c, cat
}

// MobileNetV3's squeeze-and-excite: x -> GlobalAveragePool -> Conv -> Relu -> Conv ->
// HardSigmoid -> Mul(x, scale) -> Conv; then Add(y, y2) of two NHWC values.
TEST(FusionTest, SqueezeExciteChannelsLastMatchesUnfused) {
  OnnxBuilder b(17);
  b.input("x", DType::kF32, {1, 3, kSize, kSize});
  b.output("y", DType::kF32, {1, 4, kSize, kSize});
  b.initializer_random("w0", {kChannels, 3, 3, 3}, 0.5f, 1);
  b.initializer_random("se1", {2, kChannels, 1, 1}, 0.5f, 2);
  b.initializer_random("se2", {kChannels, 2, 1, 1}, 0.5f, 3);
  b.initializer_random("w1", {4, kChannels, 1, 1}, 0.5f, 4);
  b.initializer_random("w2", {4, kChannels, 1, 1}, 0.5f, 5);
  set_attr(b.node("Conv", {"x", "w0"}, {"c"}), "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("GlobalAveragePool", {"c"}, {"pooled"});
  b.node("Conv", {"pooled", "se1"}, {"s1"});
  b.node("Relu", {"s1"}, {"s1r"});
  b.node("Conv", {"s1r", "se2"}, {"s2"});
  b.node("HardSigmoid", {"s2"}, {"scale"});
  b.node("Mul", {"c", "scale"}, {"excited"});
  b.node("Conv", {"excited", "w1"}, {"p1"});
  b.node("Conv", {"excited", "w2"}, {"p2"});
  b.node("Sub", {"p1", "p2"}, {"y"});
  auto graph = import_onnx_model(b.model(), {}, "se", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  const Tensor x = test::random_f32({1, 3, kSize, kSize}, 15, -2.0f, 2.0f);
  const auto fused = expect_matches_unfused(*graph, {x});
  ASSERT_NE(fused, nullptr);
  // c, pooled, s1r and scale (Relu and HardSigmoid fused into their Convs), excited; y is a
  // graph output, so Sub's operands p1 and p2 (whose bytes the layout changes) stay NCHW.
  EXPECT_EQ(fused->stats().channels_last_values, 5);
}

// An elementwise op no fusion takes (a GELU's Erf) between two convolutions keeps them
// channels-last: it runs on either layout.
TEST(FusionTest, UnaryOpBetweenConvsStaysChannelsLast) {
  OnnxBuilder b(17);
  b.input("x", DType::kF32, {1, 3, kSize, kSize});
  b.output("y", DType::kF32, {1, 2, kSize, kSize});
  b.initializer_random("w0", {kChannels, 3, 3, 3}, 0.5f, 1);
  b.initializer_random("w1", {2, kChannels, 3, 3}, 0.5f, 2);
  set_attr(b.node("Conv", {"x", "w0"}, {"c"}), "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("Erf", {"c"}, {"e"});
  set_attr(b.node("Conv", {"e", "w1"}, {"y"}), "pads", std::vector<int64_t>{1, 1, 1, 1});
  auto graph = import_onnx_model(b.model(), {}, "erf", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  const Tensor x = test::random_f32({1, 3, kSize, kSize}, 17, -2.0f, 2.0f);
  const auto fused = expect_matches_unfused(*graph, {x});
  ASSERT_NE(fused, nullptr);
  EXPECT_EQ(fused->stats().kernels, 3);
  EXPECT_EQ(fused->stats().channels_last_values, 2);  // c and e
}

// Reshape, leading-axis Split and Squeeze share their input's bytes; a view of a graph input or
// producing a graph output is still copied.
TEST(FusionTest, ViewOpsAliasTheirInput) {
  OnnxBuilder b(17);
  b.input("x", DType::kF32, {2, 3, 4});
  b.output("y", DType::kF32, {1, 12});
  b.output("flat", DType::kF32, {24});
  b.initializer_i64("shape", {3}, {1, 2, 12});
  b.initializer_i64("axis1", {1}, {1});
  b.initializer_i64("flat_shape", {1}, {24});
  b.node("Relu", {"x"}, {"r"});
  b.node("Reshape", {"r", "shape"}, {"rows"});                   // alias of r
  set_attr(b.node("Split", {"rows"}, {"s0", "s1"}), "axis", 1);  // aliases at 0 and 48 bytes
  b.node("Squeeze", {"s0", "axis1"}, {"q0"});
  b.node("Squeeze", {"s1", "axis1"}, {"q1"});
  b.node("Add", {"q0", "q1"}, {"y"});
  b.node("Reshape", {"x", "flat_shape"}, {"flat"});  // graph input and output: copied
  auto graph = import_onnx_model(b.model(), {}, "views", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  auto program = CpuProgram::compile(*graph, CpuOptions{});
  ASSERT_TRUE(program.is_ok()) << program.status().message();
  EXPECT_EQ((*program)->stats().aliased_views, 4);
  EXPECT_EQ((*program)->stats().kernels, 3);  // Relu, Add, the copying Reshape
  const Tensor x = test::random_f32({2, 3, 4}, 16, -1.0f, 1.0f);
  auto got = (*program)->run({x});
  ASSERT_TRUE(got.is_ok()) << got.status().message();
  const auto xv = x.values<float>();
  std::vector<float> want(12);
  for (size_t j = 0; j < 12; ++j) want[j] = std::max(xv[j], 0.0f) + std::max(xv[12 + j], 0.0f);
  EXPECT_TRUE(test::all_close(got->at(0), test::f32({1, 12}, want), 1e-6, 1e-6));
  EXPECT_TRUE(test::all_close(got->at(1), x.reshaped({24}), 0, 0));
}

TEST(FusionTest, ProfileTimesEveryStep) {
  const Graph graph = convnext_block_model();
  CpuOptions options;
  options.profile = true;
  auto program = CpuProgram::compile(graph, options);
  ASSERT_TRUE(program.is_ok()) << program.status().message();
  const Tensor x = test::random_f32({1, kChannels, kSize, kSize}, 19);
  ASSERT_TRUE((*program)->run({x}).is_ok());
  const auto steps = (*program)->profile();
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[0].op, "Conv");
  EXPECT_EQ(steps[1].op, "hsched.ChannelLayerNorm");
  for (const auto& step : steps) EXPECT_GT(step.mean_ms, 0.0) << step.node;
}

TEST(FusionTest, AttentionScalesAndTransposeFoldIntoMatMul) {
  OnnxBuilder b(17);
  b.input("q", DType::kF32, {1, 2, 5, 4});
  b.input("k", DType::kF32, {1, 2, 5, 4});
  b.output("y", DType::kF32, {1, 2, 5, 5});
  b.initializer_f32("s", {}, {0.7f});
  set_attr(b.node("Transpose", {"k"}, {"kt"}), "perm", std::vector<int64_t>{0, 1, 3, 2});
  b.node("Mul", {"q", "s"}, {"qs"});
  b.node("Mul", {"kt", "s"}, {"ks"});
  b.node("MatMul", {"qs", "ks"}, {"y"});
  auto graph = import_onnx_model(b.model(), {}, "attention", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  const Tensor q = test::random_f32({1, 2, 5, 4}, 17);
  const Tensor k = test::random_f32({1, 2, 5, 4}, 18);
  const auto fused = expect_matches_unfused(*graph, {q, k}, CpuOptions{2, true, true}, 1e-5);
  ASSERT_NE(fused, nullptr);
  EXPECT_EQ(fused->stats().kernels, 1);
}

// oneDNN 2.6's brgemm matmul misapplies a second eltwise_linear in one chain: a HardSigmoid
// (linear then clip) after a Gemm whose alpha is one already, or after a MatMul with a scaled
// input, must still give clip(0.2 (alpha A B + beta C) + 0.5, 0, 1).
TEST(FusionTest, HardSigmoidAfterAScaledGemmOrMatMulMatchesAReference) {
  const Tensor a = test::random_f32({3, 4}, 21, -2.0f, 2.0f);
  const Tensor bt = test::random_f32({4, 5}, 22, -1.0f, 1.0f);
  const Tensor c = test::random_f32({1, 5}, 23, -1.0f, 1.0f);
  const auto values = [](const Tensor& t) {
    const auto v = t.values<float>();
    return std::vector<float>(v.begin(), v.end());
  };
  const auto reference = [&](float alpha, float beta, float scale) {
    std::vector<float> y;
    for (int64_t i = 0; i < 3; ++i) {
      for (int64_t j = 0; j < 5; ++j) {
        float sum = 0;
        for (int64_t k = 0; k < 4; ++k) {
          sum += a.values<float>()[static_cast<size_t>(i * 4 + k)] *
                 bt.values<float>()[static_cast<size_t>(k * 5 + j)];
        }
        const float v = alpha * scale * sum + beta * c.values<float>()[static_cast<size_t>(j)];
        y.push_back(std::clamp(0.2f * v + 0.5f, 0.0f, 1.0f));
      }
    }
    return Tensor::from_vector(DType::kF32, {3, 5}, y);
  };
  struct Case {
    const char* op;
    float alpha, beta;
    bool constant_c;
  };
  for (const Case& k : {Case{"Gemm", 2.0f, 1.0f, true}, Case{"Gemm", 2.0f, 1.0f, false},
                        Case{"Gemm", 2.0f, 0.5f, false}, Case{"MatMul", 1.0f, 0.0f, false}}) {
    const bool gemm = std::string(k.op) == "Gemm";
    OnnxBuilder b(17);
    b.input("a", DType::kF32, {3, 4});
    if (gemm && !k.constant_c) b.input("c", DType::kF32, {1, 5});
    if (gemm && k.constant_c) b.initializer_f32("c", {1, 5}, values(c));
    b.output("y", DType::kF32, {3, 5});
    b.initializer_f32("b", {4, 5}, values(bt));
    if (gemm) {
      auto& node = b.node("Gemm", {"a", "b", "c"}, {"g"});
      set_attr(node, "alpha", k.alpha);
      set_attr(node, "beta", k.beta);
    } else {
      b.initializer_f32("s", {}, {3.0f});
      b.node("Mul", {"a", "s"}, {"as"});
      b.node("MatMul", {"as", "b"}, {"g"});
    }
    b.node("HardSigmoid", {"g"}, {"y"});
    auto graph = import_onnx_model(b.model(), {}, "scaled_hard_sigmoid", {});
    ASSERT_TRUE(graph.is_ok()) << graph.status().message();
    auto program = CpuProgram::compile(*graph, CpuOptions{2, true, true});
    ASSERT_TRUE(program.is_ok()) << program.status().message();
    std::vector<Tensor> inputs = {a};
    if (gemm && !k.constant_c) inputs.push_back(c);
    auto y = (*program)->run(inputs);
    ASSERT_TRUE(y.is_ok()) << y.status().message();
    const Tensor want = reference(k.alpha, gemm ? k.beta : 0.0f, gemm ? 1.0f : 3.0f);
    EXPECT_TRUE(test::all_close(y->at(0), want, 1e-5, 1e-5))
        << k.op << " alpha " << k.alpha << " beta " << k.beta << " constant C " << k.constant_c;
  }
}

}  // namespace
}  // namespace hsched::cpu
