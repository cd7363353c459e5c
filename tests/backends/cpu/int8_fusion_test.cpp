// A QDQ model's fusions in the CPU program against the same graph run unfused in NCHW (or with
// and without channels-last layouts): Conv, MatMul and Gemm between Q/DQ pairs as integer ops,
// 8-bit values kept channels-last between them; elementwise chains as one table lookup; binary
// ops on the bytes; ConvNeXt's channel LayerNorm, PyTorch's GroupNorm and a transformer's
// LayerNormalization and Softmax each one kernel on the 8-bit data; the QOperator format.
#include <algorithm>
#include <cmath>
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
// one kernel: the LayerNorm with the unfused steps' bytes, the Softmax with ONNX Runtime's
// QLinearSoftmax arithmetic (a table of exponentials; tests/differential/qlinear_exact.py checks
// its bytes against ONNX Runtime's), within a step of the unfused steps.
TEST(FusionTest, Int8LayerNormAndSoftmaxAreOneKernelOnTheBytes) {
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
    const double step = norm ? 0.0 : 1.0 / 255 + 1e-6;
    const auto fused = expect_matches_unfused(*graph, {x}, CpuOptions{2, true, true}, step);
    ASSERT_NE(fused, nullptr);
    EXPECT_EQ(fused->stats().kernels, 3) << norm;  // Q, the op on the bytes, DQ
    auto got = fused->run({x});
    ASSERT_TRUE(got.is_ok()) << got.status().message();
    const auto a = got->at(0).values<float>();
    EXPECT_GE(std::set<float>(a.begin(), a.end()).size(), 30u) << norm;
  }
}

// A QDQ LayerNormalization whose scale is dequantized at run time after x is (nodes in that
// valid order, as a partition that dequantizes what it receives has them) is not fused into x's
// DequantizeLinear's place: the fused kernel ran there and read the scale's buffer before
// anything wrote it (garbage, varying from run to run).
TEST(FusionTest, Int8LayerNormReadsAScaleComputedAfterItsInput) {
  Graph g;
  g.opset = 17;
  const Shape rows({2, 5, 16});
  const ValueId x = g.add_value("x", DType::kU8, rows);
  const ValueId w = g.add_value("w", DType::kU8, Shape({16}));
  g.add_input(x);
  g.add_input(w);
  const auto scalar = [&](const std::string& name, DType dtype, float value) {
    Tensor t = Tensor::uninitialized(dtype, {});
    if (dtype == DType::kF32) t.values<float>()[0] = value;
    if (dtype == DType::kU8) t.values<uint8_t>()[0] = static_cast<uint8_t>(value);
    return g.add_constant(name, t);
  };
  const ValueId s = scalar("s", DType::kF32, 0.05f), zp = scalar("zp", DType::kU8, 128);
  const ValueId ws = scalar("ws", DType::kF32, 0.01f), wzp = scalar("wzp", DType::kU8, 0);
  const ValueId ns = scalar("ns", DType::kF32, 0.03f);
  const ValueId bias = g.add_constant("bias", test::random_f32({16}, 5, -1.0f, 1.0f));
  const ValueId xd = g.add_value("x_d", DType::kF32, rows);
  const ValueId wd = g.add_value("w_d", DType::kF32, Shape({16}));
  const ValueId n = g.add_value("n", DType::kF32, rows);
  const ValueId y = g.add_value("y", DType::kU8, rows);
  g.add_node(Node{"dq_x", "DequantizeLinear", "", {x, s, zp}, {xd}, {}});
  g.add_node(Node{"dq_w", "DequantizeLinear", "", {w, ws, wzp}, {wd}, {}});
  Node norm{"norm", "LayerNormalization", "", {xd, wd, bias}, {n}, {}};
  norm.attributes["axis"] = int64_t{-1};
  g.add_node(std::move(norm));
  g.add_node(Node{"q", "QuantizeLinear", "", {n, ns, zp}, {y}, {}});
  g.add_output(y);
  Tensor xs = Tensor::uninitialized(DType::kU8, {2, 5, 16});
  Tensor ws_data = Tensor::uninitialized(DType::kU8, {16});
  uint32_t seed = 7;
  for (Tensor* t : {&xs, &ws_data}) {
    for (uint8_t& v : t->values<uint8_t>()) {
      seed = seed * 1664525u + 1013904223u;
      v = static_cast<uint8_t>(seed >> 24);
    }
  }
  EXPECT_NE(expect_matches_unfused(g, {xs, ws_data}, CpuOptions{2, true, true}, 0.0), nullptr);
}

// Attention in a QDQ model: Q -> DQ of two activations -> MatMul -> Q -> DQ, that DequantizeLinear
// read by a Softmax and by a float Add (ONNX Runtime gives each reader its own) -> Softmax -> Q ->
// DQ. The MatMul is one integer product of the bytes (QLinearMatMul), the Softmax one kernel on
// them, the shared DequantizeLinear kept for the Add; within a step of the unfused steps.
TEST(FusionTest, Int8AttentionRunsOnTheBytes) {
  OnnxBuilder b(17);
  b.input("q", DType::kF32, {2, 4, 8}).input("k", DType::kF32, {2, 8, 4});
  b.output("p", DType::kF32, {2, 4, 4}).output("scores", DType::kF32, {2, 4, 4});
  add_quantization_parameters(b);
  b.initializer_f32("s_p", {}, {1.0f / 255});
  b.initializer("zp_0", Tensor(DType::kU8, {}));
  Tensor bias = Tensor::uninitialized(DType::kU8, {4});
  for (int i = 0; i < 4; ++i)
    bias.values<uint8_t>()[static_cast<size_t>(i)] = static_cast<uint8_t>(90 + 25 * i);
  b.initializer("bias", bias);
  b.node("DequantizeLinear", {"bias", "s", "zp"}, {"bias_d"});
  requantize(b, "q", "s", "zp");
  requantize(b, "k", "s", "zp");
  b.node("MatMul", {"q_d", "k_d"}, {"raw"});
  requantize(b, "raw", "s", "zp");
  b.node("Add", {"raw_d", "bias_d"}, {"scores"});
  set_attr(b.node("Softmax", {"raw_d"}, {"sm"}), "axis", int64_t{-1});
  b.node("QuantizeLinear", {"sm", "s_p", "zp_0"}, {"sm_q"});
  b.node("DequantizeLinear", {"sm_q", "s_p", "zp_0"}, {"p"});
  auto graph = import_onnx_model(b.model(), {}, "int8_attention", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  const std::vector<Tensor> inputs{test::random_f32({2, 4, 8}, 3, -3.0f, 3.0f),
                                   test::random_f32({2, 8, 4}, 4, -3.0f, 3.0f)};
  const auto fused =
      expect_matches_unfused(*graph, inputs, CpuOptions{2, true, true}, 1.0 / 255 + 1e-6);
  ASSERT_NE(fused, nullptr);
  // Q of q and of k, the QLinearMatMul, its DequantizeLinear (for the Add, kept as float: the
  // graph output), the Add, the Softmax on the bytes, the output's DequantizeLinear.
  EXPECT_EQ(fused->stats().kernels, 7);
}

// PyTorch's GroupNorm as ONNX Runtime's quantizer writes it: QDQ Conv -> Q -> DQ -> Reshape
// [1, G, -1] -> Q -> DQ -> InstanceNormalization -> Q -> DQ -> Reshape back -> Q -> DQ ->
// Mul(gamma) -> Q -> DQ -> Add(beta) -> Q -> DQ -> QDQ Conv. The reshapes run on the 8-bit data
// (fuse_qdq), then the chain is one GroupNorm kernel on the 8-bit values, channels-last between
// the convolutions, within a step of the unfused steps in NCHW (its statistics are ONNX Runtime's
// InstanceNormalization's, the unfused kernel's its own sums) and equal to them at nearly every
// value.
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

}  // namespace
}  // namespace hsched::cpu
