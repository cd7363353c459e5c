// Program-level fusions against the same graph run unfused in NCHW: the GroupNorm chain
// (Reshape, InstanceNormalization, Reshape, Mul, Add, SiLU) as one kernel, kept channels-last
// between convolutions and through a nearest Resize; a residual Add as a `sum` post-op;
// ConvNeXt's Transpose -> LayerNormalization -> Transpose as one channels-last kernel (in fp32,
// and on the 8-bit data between a QDQ model's Q/DQ pairs, as a transformer's LayerNormalization,
// Softmax and a GroupNorm there) and its per-channel layer scale folded into the Conv's weights; a
// channel Concat, a squeeze-and-excite block (GlobalAveragePool, broadcast Mul) kept
// channels-last; view ops run as aliases; attention's scaled q and transposed, scaled k read by
// the MatMul directly.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cpu/program.h"
#include "graph/onnx_builder.h"
#include "graph/onnx_import.h"
#include "op_test_util.h"

namespace hsched::cpu {
namespace {

constexpr int64_t kChannels = 8, kGroups = 4, kSize = 6;

// Compiles `graph` unfused in NCHW and with `options`, runs both on `inputs` and expects the
// same first output. Returns the optimised program (null on failure) for checks of its stats.
std::unique_ptr<CpuProgram> expect_matches_unfused(const Graph& graph,
                                                   const std::vector<Tensor>& inputs,
                                                   CpuOptions options = {2, true, true},
                                                   double tolerance = 1e-4) {
  auto plain = CpuProgram::compile(graph, CpuOptions{2, false, false});
  auto fused = CpuProgram::compile(graph, options);
  EXPECT_TRUE(plain.is_ok()) << plain.status().message();
  EXPECT_TRUE(fused.is_ok()) << fused.status().message();
  if (!plain.is_ok() || !fused.is_ok()) return nullptr;
  auto want = (*plain)->run(inputs);
  auto got = (*fused)->run(inputs);
  EXPECT_TRUE(want.is_ok()) << want.status().message();
  EXPECT_TRUE(got.is_ok()) << got.status().message();
  if (want.is_ok() && got.is_ok()) {
    EXPECT_TRUE(test::all_close(got->at(0), want->at(0), tolerance, tolerance));
  }
  return std::move(fused).value();
}

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

// [kChannels, kChannels, 3, 3] int8 weights over the whole range, from a seed.
Tensor seeded_int8_weights(uint32_t seed) {
  Tensor w = Tensor::uninitialized(DType::kI8, {kChannels, kChannels, 3, 3});
  for (int8_t& v : w.values<int8_t>()) {
    seed = seed * 1664525u + 1013904223u;
    v = static_cast<int8_t>(seed >> 24);
  }
  return w;
}

// The quantization parameters of the int8 chains below: weight scales "w_scale" (per output
// channel) and zero points "w_zp" (0), one activation scale "s" and u8 zero point "zp".
void add_quantization_parameters(OnnxBuilder& b) {
  b.initializer_f32("w_scale", {kChannels}, std::vector<float>(kChannels, 0.004f));
  b.initializer("w_zp", Tensor(DType::kI8, {kChannels}));
  b.initializer_f32("s", {}, {0.05f});
  Tensor zp = Tensor::uninitialized(DType::kU8, {});
  zp.values<uint8_t>()[0] = 128;
  b.initializer("zp", zp);
}

// A builder of an 8-bit chain's model: input x and output y of [1, kChannels, kSize, kSize], the
// quantization parameters, and int8 weights w1 and w2 from the given seeds, dequantized per output
// channel into w1_f and w2_f.
OnnxBuilder int8_chain_builder(uint32_t w1_seed, uint32_t w2_seed) {
  OnnxBuilder b(17);
  const std::vector<int64_t> act{1, kChannels, kSize, kSize};
  b.input("x", DType::kF32, act);
  b.output("y", DType::kF32, act);
  b.initializer("w1", seeded_int8_weights(w1_seed));
  b.initializer("w2", seeded_int8_weights(w2_seed));
  add_quantization_parameters(b);
  for (const char* w : {"w1", "w2"}) {
    set_attr(b.node("DequantizeLinear", {w, "w_scale", "w_zp"}, {std::string(w) + "_f"}), "axis",
             0);
  }
  return b;
}

// v -> QuantizeLinear -> DequantizeLinear, as quantizers write each activation: v + "_q" and
// v + "_d", with `scale` and `zero_point`.
void requantize(OnnxBuilder& b, const std::string& v, const std::string& scale,
                const std::string& zero_point) {
  b.node("QuantizeLinear", {v, scale, zero_point}, {v + "_q"});
  b.node("DequantizeLinear", {v + "_q", scale, zero_point}, {v + "_d"});
}

// Runs `graph` with and without channels-last layouts on `inputs`: the same output floats;
// returns how many values the channels-last program keeps NHWC (-1 on failure).
int64_t expect_layouts_match(const Graph& graph, const std::vector<Tensor>& inputs) {
  auto nchw = CpuProgram::compile(graph, CpuOptions{2, true, false});
  auto nhwc = CpuProgram::compile(graph, CpuOptions{2, true, true});
  EXPECT_TRUE(nchw.is_ok()) << nchw.status().message();
  EXPECT_TRUE(nhwc.is_ok()) << nhwc.status().message();
  if (!nchw.is_ok() || !nhwc.is_ok()) return -1;
  auto want = (*nchw)->run(inputs);
  auto got = (*nhwc)->run(inputs);
  EXPECT_TRUE(want.is_ok()) << want.status().message();
  EXPECT_TRUE(got.is_ok()) << got.status().message();
  if (!want.is_ok() || !got.is_ok()) return -1;
  const auto a = got->at(0).values<float>(), e = want->at(0).values<float>();
  EXPECT_TRUE(std::equal(a.begin(), a.end(), e.begin(), e.end()));
  // Not all the zero point: the chain computed something.
  EXPECT_GT(std::count_if(a.begin(), a.end(), [](float v) { return v != 0.0f; }), 10);
  return (*nhwc)->stats().channels_last_values;
}

// A QDQ chain as quantizers write it: Q -> DQ -> Conv -> Q -> DQ -> Conv -> Q, both DQ'd into an
// Add -> Q -> DQ -> Conv -> Q -> DQ. The fusion makes three QLinearConv steps and one
// kQdqBinaryOp; the 8-bit values between them stay channels-last (the first Q reads a graph input
// and the last DQ writes a graph output, so their 8-bit sides stay NCHW), with the same bytes as
// NCHW throughout.
TEST(FusionTest, Int8ChainChannelsLastMatchesNchw) {
  OnnxBuilder b = int8_chain_builder(1, 2);
  const std::vector<int64_t> act{1, kChannels, kSize, kSize};
  b.node("QuantizeLinear", {"x", "s", "zp"}, {"q0"});
  b.node("DequantizeLinear", {"q0", "s", "zp"}, {"d0"});
  set_attr(b.node("Conv", {"d0", "w1_f"}, {"c1"}), "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("QuantizeLinear", {"c1", "s", "zp"}, {"q1"});
  b.node("DequantizeLinear", {"q1", "s", "zp"}, {"d1"});
  set_attr(b.node("Conv", {"d1", "w2_f"}, {"c2"}), "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("QuantizeLinear", {"c2", "s", "zp"}, {"q2"});
  b.node("DequantizeLinear", {"q2", "s", "zp"}, {"d2"});
  b.node("Add", {"d1", "d2"}, {"sum"});
  b.node("QuantizeLinear", {"sum", "s", "zp"}, {"q3"});
  b.node("DequantizeLinear", {"q3", "s", "zp"}, {"d3"});
  set_attr(b.node("Conv", {"d3", "w1_f"}, {"c3"}), "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("QuantizeLinear", {"c3", "s", "zp"}, {"q4"});
  b.node("DequantizeLinear", {"q4", "s", "zp"}, {"y"});
  auto graph = import_onnx_model(b.model(), {}, "int8_chain", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  const Tensor x = test::random_f32(act, 16, -4.0f, 4.0f);
  EXPECT_EQ(expect_layouts_match(*graph, {x}), 3);  // q1, q2 and q3
  auto program = CpuProgram::compile(*graph, CpuOptions{2, true, true});
  ASSERT_TRUE(program.is_ok()) << program.status().message();
  EXPECT_EQ((*program)->stats().kernels, 6);  // Q, 3 QLinearConv, the Add, DQ
}

// ConvNeXt's channel LayerNorm as ONNX Runtime's quantizer writes it: QDQ Conv -> Q -> DQ ->
// Transpose -> Q -> DQ -> LayerNormalization -> Q -> DQ -> Transpose -> Q -> DQ -> QDQ Conv. The
// transposes run on the 8-bit data (fuse_qdq), then the chain is one channel LayerNorm kernel on
// the 8-bit values, channels-last between the convolutions (no transposes, no reorders), with
// the bytes of the unfused steps in NCHW.
TEST(FusionTest, Int8ChannelLayerNormIsOneKernelWithTheUnfusedBytes) {
  OnnxBuilder b = int8_chain_builder(3, 4);
  const std::vector<int64_t> act{1, kChannels, kSize, kSize};
  b.initializer_random("ln_scale", {kChannels}, 1.0f, 2)
      .initializer_random("ln_bias", {kChannels}, 1.0f, 3);
  b.initializer_f32("s_norm", {}, {0.021f});
  Tensor zp_norm = Tensor::uninitialized(DType::kU8, {});
  zp_norm.values<uint8_t>()[0] = 120;
  b.initializer("zp_norm", zp_norm);
  requantize(b, "x", "s", "zp");
  set_attr(b.node("Conv", {"x_d", "w1_f"}, {"c1"}), "pads", std::vector<int64_t>{1, 1, 1, 1});
  requantize(b, "c1", "s", "zp");
  set_attr(b.node("Transpose", {"c1_d"}, {"t"}), "perm", std::vector<int64_t>{0, 2, 3, 1});
  requantize(b, "t", "s", "zp");
  set_attr(b.node("LayerNormalization", {"t_d", "ln_scale", "ln_bias"}, {"n"}), "axis", -1);
  requantize(b, "n", "s_norm", "zp_norm");
  set_attr(b.node("Transpose", {"n_d"}, {"u"}), "perm", std::vector<int64_t>{0, 3, 1, 2});
  requantize(b, "u", "s_norm", "zp_norm");
  set_attr(b.node("Conv", {"u_d", "w2_f"}, {"c2"}), "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("QuantizeLinear", {"c2", "s", "zp"}, {"c2_q"});
  b.node("DequantizeLinear", {"c2_q", "s", "zp"}, {"y"});
  auto graph = import_onnx_model(b.model(), {}, "int8_channel_norm", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  const Tensor x = test::random_f32(act, 17, -4.0f, 4.0f);
  const auto fused = expect_matches_unfused(*graph, {x}, CpuOptions{2, true, true}, 0.0);
  ASSERT_NE(fused, nullptr);
  EXPECT_EQ(fused->stats().kernels, 5);  // Q, QLinearConv, the channel LayerNorm, QLinearConv, DQ
  EXPECT_EQ(fused->stats().channels_last_values, 2);  // the 8-bit values around the LayerNorm
  auto got = fused->run({x});
  ASSERT_TRUE(got.is_ok()) << got.status().message();
  const auto a = got->at(0).values<float>();
  EXPECT_GE(std::set<float>(a.begin(), a.end()).size(), 20u);
  // Without the layout pass it reads and writes NCHW, strided channels: the same bytes.
  EXPECT_NE(expect_matches_unfused(*graph, {x}, CpuOptions{2, true, false}, 0.0), nullptr);
}

// A transformer's LayerNormalization and attention's Softmax in a QDQ model: Q -> DQ ->
// LayerNormalization (last axis) or Softmax (axis -1) -> Q -> DQ. Each runs on the 8-bit data as
// one kernel with the unfused steps' bytes.
TEST(FusionTest, Int8LayerNormAndSoftmaxAreOneKernelWithTheUnfusedBytes) {
  for (const bool norm : {true, false}) {
    OnnxBuilder b(17);
    const std::vector<int64_t> rows{2, 5, 16};
    b.input("x", DType::kF32, rows);
    b.output("y", DType::kF32, rows);
    add_quantization_parameters(b);
    b.initializer_random("ln_scale", {16}, 1.0f, 8).initializer_random("ln_bias", {16}, 1.0f, 9);
    b.initializer_f32("s_norm", {}, {norm ? 0.017f : 1.0f / 255});
    b.initializer("zp_0", Tensor(DType::kU8, {}));
    requantize(b, "x", "s", "zp");
    if (norm) {
      set_attr(b.node("LayerNormalization", {"x_d", "ln_scale", "ln_bias"}, {"n"}), "axis", -1);
    } else {
      set_attr(b.node("Softmax", {"x_d"}, {"n"}), "axis", -1);
    }
    b.node("QuantizeLinear", {"n", "s_norm", norm ? "zp" : "zp_0"}, {"n_q"});
    b.node("DequantizeLinear", {"n_q", "s_norm", norm ? "zp" : "zp_0"}, {"y"});
    auto graph = import_onnx_model(b.model(), {}, "int8_rows", {});
    ASSERT_TRUE(graph.is_ok()) << graph.status().message();
    const Tensor x = test::random_f32(rows, 19, -4.0f, 4.0f);
    const auto fused = expect_matches_unfused(*graph, {x}, CpuOptions{2, true, true}, 0.0);
    ASSERT_NE(fused, nullptr);
    EXPECT_EQ(fused->stats().kernels, 3) << norm;  // Q, the op on the bytes, DQ
    auto got = fused->run({x});
    ASSERT_TRUE(got.is_ok()) << got.status().message();
    const auto a = got->at(0).values<float>();
    EXPECT_GE(std::set<float>(a.begin(), a.end()).size(), 30u) << norm;
  }
}

// PyTorch's GroupNorm as ONNX Runtime's quantizer writes it: QDQ Conv -> Q -> DQ -> Reshape
// [1, G, -1] -> Q -> DQ -> InstanceNormalization -> Q -> DQ -> Reshape back -> Q -> DQ ->
// Mul(gamma) -> Q -> DQ -> Add(beta) -> Q -> DQ -> QDQ Conv. The reshapes run on the 8-bit data
// (fuse_qdq), then the chain is one GroupNorm kernel on the 8-bit values, channels-last between
// the convolutions, within a step of the unfused steps in NCHW (its statistics are exact integer
// sums, the unfused kernel's float sums) and equal to them at nearly every value.
TEST(FusionTest, Int8GroupNormIsOneKernelWithinAStepOfTheUnfusedSteps) {
  OnnxBuilder b = int8_chain_builder(5, 6);
  const std::vector<int64_t> act{1, kChannels, kSize, kSize};
  b.initializer_i64("grouped", {3}, {1, kGroups, -1});
  b.initializer_i64("act_shape", {4}, act);
  b.initializer_random("in_scale", {kGroups}, 1.0f, 4)
      .initializer_random("in_bias", {kGroups}, 1.0f, 5);
  b.initializer_random("gamma", {kChannels, 1, 1}, 1.0f, 6);
  b.initializer_random("beta", {kChannels, 1, 1}, 1.0f, 7);
  b.initializer_f32("s_norm", {}, {0.023f}).initializer_f32("s_mul", {}, {0.019f});
  requantize(b, "x", "s", "zp");
  set_attr(b.node("Conv", {"x_d", "w1_f"}, {"c1"}), "pads", std::vector<int64_t>{1, 1, 1, 1});
  requantize(b, "c1", "s", "zp");
  b.node("Reshape", {"c1_d", "grouped"}, {"g"});
  requantize(b, "g", "s", "zp");
  b.node("InstanceNormalization", {"g_d", "in_scale", "in_bias"}, {"n"});
  requantize(b, "n", "s_norm", "zp");
  b.node("Reshape", {"n_d", "act_shape"}, {"u"});
  requantize(b, "u", "s_norm", "zp");
  b.node("Mul", {"u_d", "gamma"}, {"m"});
  requantize(b, "m", "s_mul", "zp");
  b.node("Add", {"m_d", "beta"}, {"a"});
  requantize(b, "a", "s", "zp");
  set_attr(b.node("Conv", {"a_d", "w2_f"}, {"c2"}), "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("QuantizeLinear", {"c2", "s", "zp"}, {"c2_q"});
  b.node("DequantizeLinear", {"c2_q", "s", "zp"}, {"y"});
  auto graph = import_onnx_model(b.model(), {}, "int8_group_norm", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  const Tensor x = test::random_f32(act, 18, -4.0f, 4.0f);
  auto unfused = CpuProgram::compile(*graph, CpuOptions{2, false, false});
  ASSERT_TRUE(unfused.is_ok()) << unfused.status().message();
  auto want = (*unfused)->run({x});
  ASSERT_TRUE(want.is_ok()) << want.status().message();
  const auto e = want->at(0).values<float>();
  for (const bool channels_last : {true, false}) {
    auto fused = CpuProgram::compile(*graph, CpuOptions{2, true, channels_last});
    ASSERT_TRUE(fused.is_ok()) << fused.status().message();
    EXPECT_EQ((*fused)->stats().kernels, 5);  // Q, QLinearConv, the GroupNorm, QLinearConv, DQ
    EXPECT_EQ((*fused)->stats().channels_last_values, channels_last ? 2 : 0);
    auto got = (*fused)->run({x});
    ASSERT_TRUE(got.is_ok()) << got.status().message();
    const auto a = got->at(0).values<float>();
    ASSERT_EQ(a.size(), e.size());
    size_t same = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_LE(std::abs(a[i] - e[i]), 0.05f * 1.0001f) << i;  // one step of "s"
      same += a[i] == e[i];
    }
    EXPECT_GE(same, a.size() * 95 / 100) << channels_last;
    EXPECT_GE(std::set<float>(a.begin(), a.end()).size(), 20u);
  }
}

// GELU's factor between Q/DQ pairs as quantizers write it, DQ -> Div -> Erf -> Add(DQ'd 1) ->
// Mul(0.5) -> Q: one kQdqTableOp step whose bytes are the unfused steps' for each of the 256
// inputs.
TEST(FusionTest, Int8ElementwiseChainIsOneTableLookupWithTheUnfusedBytes) {
  OnnxBuilder b(17);
  const std::vector<int64_t> act{1, 4, 8, 8};  // 256 values: every byte once
  b.input("x", DType::kF32, act);
  b.output("y", DType::kF32, act);
  add_quantization_parameters(b);
  b.initializer_f32("sqrt2", {}, {1.4142135f});
  b.initializer_f32("half", {1}, {0.5f});
  b.initializer_f32("one", {}, {1.0f});
  b.initializer_f32("s_out", {}, {0.031f});
  Tensor zp_out = Tensor::uninitialized(DType::kU8, {});
  zp_out.values<uint8_t>()[0] = 7;
  b.initializer("zp_out", zp_out);
  b.node("QuantizeLinear", {"x", "s", "zp"}, {"q0"});
  b.node("DequantizeLinear", {"q0", "s", "zp"}, {"d0"});
  b.node("QuantizeLinear", {"one", "s", "zp"}, {"one_q"});
  b.node("DequantizeLinear", {"one_q", "s", "zp"}, {"one_d"});
  b.node("Div", {"d0", "sqrt2"}, {"scaled"});
  b.node("Erf", {"scaled"}, {"erf"});
  b.node("Add", {"erf", "one_d"}, {"plus"});
  b.node("Mul", {"half", "plus"}, {"gelu"});  // the constant first: its position is kept
  b.node("QuantizeLinear", {"gelu", "s_out", "zp_out"}, {"q1"});
  b.node("DequantizeLinear", {"q1", "s_out", "zp_out"}, {"y"});
  auto graph = import_onnx_model(b.model(), {}, "int8_gelu", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  Tensor x = Tensor::uninitialized(DType::kF32, act);
  for (size_t i = 0; i < 256; ++i) x.values<float>()[i] = (static_cast<float>(i) - 128.0f) * 0.05f;
  auto fused = CpuProgram::compile(*graph, CpuOptions{2, true, true});
  auto unfused = CpuProgram::compile(*graph, CpuOptions{2, false, false});
  ASSERT_TRUE(fused.is_ok()) << fused.status().message();
  ASSERT_TRUE(unfused.is_ok()) << unfused.status().message();
  EXPECT_EQ((*fused)->stats().kernels, 3);  // Q, the table, DQ
  auto got = (*fused)->run({x});
  auto want = (*unfused)->run({x});
  ASSERT_TRUE(got.is_ok()) << got.status().message();
  ASSERT_TRUE(want.is_ok()) << want.status().message();
  const auto a = got->at(0).values<float>(), e = want->at(0).values<float>();
  EXPECT_TRUE(std::equal(a.begin(), a.end(), e.begin(), e.end()));
  // The factor spans [0, 1]: about 1 / 0.031 distinct steps.
  EXPECT_GE(std::set<float>(a.begin(), a.end()).size(), 30u);
}

// A GELU as ONNX Runtime's quantizer writes it, each op between its own Q/DQ pair and x read twice
// (DQ -> Div -> Erf -> Q -> DQ -> Add(1) -> Q -> DQ -> Mul by x -> Q -> DQ -> Mul(0.5) -> Q), and a
// SiLU likewise (Sigmoid -> Q -> DQ -> Mul by x -> Q): each one kQdqTableOp step whose bytes are
// the unfused steps' for each of the 256 inputs.
TEST(FusionTest, Int8GeluAndSiluBetweenQdqPairsAreOneTableLookup) {
  for (const bool gelu : {true, false}) {
    OnnxBuilder b(17);
    const std::vector<int64_t> act{1, 4, 8, 8};  // 256 values: every byte once
    b.input("x", DType::kF32, act);
    b.output("y", DType::kF32, act);
    add_quantization_parameters(b);
    b.initializer_f32("sqrt2", {}, {1.4142135f}).initializer_f32("one", {}, {1.0f});
    b.initializer_f32("half", {}, {0.5f}).initializer_f32("s_unit", {}, {1.0f / 255});
    b.initializer_f32("s_out", {}, {0.031f}).initializer("zp_0", Tensor(DType::kU8, {}));
    b.node("QuantizeLinear", {"x", "s", "zp"}, {"q0"});
    b.node("DequantizeLinear", {"q0", "s", "zp"}, {"d0"});
    if (gelu) {
      requantize(b, "one", "s_unit", "zp_0");
      requantize(b, "half", "s_unit", "zp_0");
      b.node("Div", {"d0", "sqrt2"}, {"scaled"});
      b.node("Erf", {"scaled"}, {"erf"});
      requantize(b, "erf", "s", "zp_0");
      b.node("Add", {"erf_d", "one_d"}, {"plus"});
      requantize(b, "plus", "s_unit", "zp_0");
      b.node("Mul", {"d0", "plus_d"}, {"times_x"});
      requantize(b, "times_x", "s", "zp_0");
      b.node("Mul", {"times_x_d", "half_d"}, {"out"});
    } else {
      b.node("Sigmoid", {"d0"}, {"sigmoid"});
      requantize(b, "sigmoid", "s_unit", "zp_0");
      b.node("Mul", {"sigmoid_d", "d0"}, {"out"});
    }
    b.node("QuantizeLinear", {"out", "s_out", "zp_0"}, {"q1"});
    b.node("DequantizeLinear", {"q1", "s_out", "zp_0"}, {"y"});
    auto graph = import_onnx_model(b.model(), {}, "int8_chain", {});
    ASSERT_TRUE(graph.is_ok()) << graph.status().message();
    Tensor x = Tensor::uninitialized(DType::kF32, act);
    for (size_t i = 0; i < 256; ++i) {
      x.values<float>()[i] = (static_cast<float>(i) - 128.0f) * 0.05f;
    }
    const auto fused = expect_matches_unfused(*graph, {x}, CpuOptions{2, true, true}, 0.0);
    ASSERT_NE(fused, nullptr);
    EXPECT_EQ(fused->stats().kernels, 3) << gelu;  // Q, the table, DQ
    auto got = fused->run({x});
    ASSERT_TRUE(got.is_ok()) << got.status().message();
    const auto a = got->at(0).values<float>();
    EXPECT_GE(std::set<float>(a.begin(), a.end()).size(), 100u) << gelu;
  }
}

// The QOperator format (QLinearConv nodes in the model, as ONNX Runtime's quantize_static writes
// with QuantFormat.QOperator): Q -> QLinearConv -> QLinearConv -> DQ, the 8-bit value between the
// convolutions channels-last; the second convolution's weights are given at run time, so its
// reference loop reads the channels-last value through its transposed copy.
TEST(FusionTest, QOperatorChainChannelsLastMatchesNchw) {
  OnnxBuilder b(17);
  const std::vector<int64_t> act{1, kChannels, kSize, kSize};
  b.input("x", DType::kF32, act).input("w2", DType::kI8, {kChannels, kChannels, 3, 3});
  b.output("y", DType::kF32, act);
  b.initializer("w1", seeded_int8_weights(3));
  add_quantization_parameters(b);
  b.node("QuantizeLinear", {"x", "s", "zp"}, {"q0"});
  set_attr(b.node("QLinearConv", {"q0", "s", "zp", "w1", "w_scale", "w_zp", "s", "zp"}, {"q1"}),
           "pads", std::vector<int64_t>{1, 1, 1, 1});
  set_attr(b.node("QLinearConv", {"q1", "s", "zp", "w2", "w_scale", "w_zp", "s", "zp"}, {"q2"}),
           "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("DequantizeLinear", {"q2", "s", "zp"}, {"y"});
  auto graph = import_onnx_model(b.model(), {}, "qoperator", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  // Two inputs: x, and w2 as the run gives it.
  const Tensor x = test::random_f32(act, 18, -4.0f, 4.0f);
  EXPECT_EQ(expect_layouts_match(*graph, {x, seeded_int8_weights(4)}), 1);  // q1
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
