// Node-level conformance of the spatial ops against the CPU backend: Conv (regular, grouped,
// depthwise, strided, padded, dilated, 1-D, batched, fused activation), ConvTranspose, MaxPool and
// AveragePool (ceil_mode, count_include_pad, auto_pad) and Resize (modes and coordinate
// transforms).
#include "backends/opencl/kernels/ops_util.h"
#include "backends/opencl/node_ops_test_util.h"

namespace hsched::opencl {
namespace {

using Ints = std::vector<int64_t>;

// Output size of a window along one axis (ONNX's formula).
int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe,
                 bool ceil_mode = false) {
  const int64_t span = in + pb + pe - ((k - 1) * d + 1);
  return (ceil_mode ? (span + s - 1) / s : span / s) + 1;
}

struct ConvCase {
  std::string name;
  Shape x;  // N, C, H, W (or N, C, W)
  int64_t oc;
  Ints kernel, strides, dilations, pads;  // pads: begins then ends
  int64_t group = 1;
  bool bias = true;
};

TEST_P(NodeOpsTest, ConvMatchesTheCpu) {
  const std::vector<ConvCase> cases = {
      {"3x3 pad 1", {1, 3, 9, 11}, 8, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
      {"7x7 stride 2 pad 3", {1, 3, 17, 16}, 5, {7, 7}, {2, 2}, {1, 1}, {3, 3, 3, 3}},
      {"1x1 pointwise", {1, 16, 7, 5}, 12, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1, false},
      {"1x1 stride 2", {1, 8, 9, 9}, 4, {1, 1}, {2, 2}, {1, 1}, {0, 0, 0, 0}},
      // 1x1 windows the implicit GEMM gathers without window arithmetic: trailing pads (zeros
      // read past the input), 1-D, and a long K split over work groups.
      {"1x1 trailing pads", {2, 5, 7, 8}, 6, {1, 1}, {2, 2}, {1, 1}, {0, 0, 1, 2}},
      {"1-D 1x1", {2, 6, 9}, 5, {1}, {2}, {1}, {0, 1}},
      {"1x1 long K", {1, 384, 7, 7}, 64, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}},
      {"dilated asymmetric pads", {1, 4, 12, 10}, 6, {3, 2}, {1, 2}, {2, 3}, {2, 0, 1, 2}},
      {"batch 3", {3, 5, 8, 6}, 7, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
      {"batch 2 pointwise", {2, 6, 4, 5}, 3, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}},
      {"3 outputs of 20 channels", {2, 20, 9, 7}, 3, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
      {"grouped", {2, 8, 7, 7}, 12, {3, 3}, {2, 1}, {1, 1}, {1, 1, 0, 0}, 4},
      {"depthwise", {1, 6, 10, 9}, 6, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 6},
      {"depthwise stride 2 dilated", {2, 4, 11, 11}, 8, {3, 3}, {2, 2}, {2, 2}, {2, 2, 2, 2}, 4},
      {"1-D", {2, 4, 20}, 6, {5}, {2}, {1}, {2, 1}},
      {"1-D depthwise", {1, 5, 13}, 5, {3}, {1}, {2}, {2, 2}, 5},
      // A squeeze-and-excitation block's Conv on one pixel: kAuto's kRows, K past 64 lanes.
      {"1x1 on one pixel", {2, 150, 1, 1}, 40, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}},
      // Implicit GEMM's choices (gemm_tiling): 16-wide tiles with K split in 2, 32-wide tiles
      // with K split in 5, 64-wide tiles with K split in 4, and 64-wide tiles alone.
      {"narrowest tiles split K", {1, 64, 14, 14}, 128, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
      {"narrow tiles split K", {1, 80, 14, 14}, 128, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
      {"wide tiles split K", {1, 64, 32, 64}, 64, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
      {"wide tiles", {1, 3, 96, 96}, 64, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
      // Winograd's 2x2 tiles (kWinograd): partial ones at odd sizes, asymmetric pads, none.
      {"3x3 odd sizes asymmetric pads", {2, 6, 7, 9}, 5, {3, 3}, {1, 1}, {1, 1}, {0, 2, 2, 1}},
      {"3x3 unpadded", {1, 4, 6, 7}, 3, {3, 3}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1, false},
  };
  for (const ConvCase& c : cases) {
    const size_t spatial = c.x.size() - 2;
    Shape w = {c.oc, c.x[1] / c.group};
    Shape y = {c.x[0], c.oc};
    for (size_t i = 0; i < spatial; ++i) {
      w.push_back(c.kernel[i]);
      y.push_back(out_size(c.x[i + 2], c.kernel[i], c.strides[i], c.dilations[i], c.pads[i],
                           c.pads[i + spatial]));
    }
    const AttributeMap attrs = {{"kernel_shape", c.kernel},
                                {"strides", c.strides},
                                {"dilations", c.dilations},
                                {"pads", c.pads},
                                {"group", c.group}};
    std::vector<TestInput> inputs = {input(c.x), weight(w, -0.5f, 0.5f)};
    if (c.bias) inputs.push_back(weight({c.oc}));
    std::vector<ConvAlgorithm> algorithms = {ConvAlgorithm::kDirect};
    // (kRows: a work group per output; the small cases only, PoCL runs them one by one.)
    int64_t outputs = 1;
    for (int64_t d : y) outputs *= d;
    if (outputs <= 4096) algorithms.push_back(ConvAlgorithm::kRows);
    if (c.group == 1) {
      algorithms.push_back(ConvAlgorithm::kImplicitGemm);
      algorithms.push_back(ConvAlgorithm::kIm2colGemm);
    }
    if (c.group == 1 && c.kernel == Ints{3, 3} && c.strides == Ints{1, 1} &&
        c.dilations == Ints{1, 1}) {
      algorithms.push_back(ConvAlgorithm::kWinograd);
    }
    for (ConvAlgorithm algorithm : algorithms) {
      AttributeMap forced = attrs;
      forced[kConvAlgorithmAttr] = static_cast<int64_t>(algorithm);
      expect_matches_cpu(
          "Conv " + c.name + " algorithm " + std::to_string(static_cast<int>(algorithm)), "Conv",
          forced, inputs, {y});
    }
  }
}

// A Conv of at most 4 output channels (a decoder's last Conv to RGB) runs the direct kernel:
// the cost model counts its outputs unpadded; from 5 channels on the implicit GEMM's tiles.
TEST(ConvExecutionTest, FewOutputChannelsRunTheDirectKernel) {
  const int64_t pixels = 256 * 256, reduction = 64 * 9;
  for (int64_t channels : {1, 3, 4}) {
    EXPECT_TRUE(conv_direct_by_channels(channels)) << channels;
    const ConvExecution run = conv_execution(channels, pixels, reduction, false);
    EXPECT_EQ(run.outputs, static_cast<double>(channels * pixels)) << channels;
    EXPECT_EQ(run.flops, 2.0 * static_cast<double>(channels * pixels * reduction)) << channels;
  }
  EXPECT_FALSE(conv_direct_by_channels(5));
  EXPECT_GT(conv_execution(5, pixels, reduction, false).outputs, static_cast<double>(5 * pixels));
}

// A 3x3 Conv of stride 1 with enough channels and 2x2 output tiles runs Winograd's F(2x2, 3x3):
// the cost model counts its 16 products, 2.25 times fewer multiply-adds than the implicit GEMM's
// (neither padded here); too few tiles or channels keep the implicit GEMM's count.
TEST(ConvExecutionTest, WinogradCountsItsProducts) {
  const int64_t channels = 64, pixels = 128 * 128, tiles = 64 * 64, reduction = channels * 9;
  EXPECT_TRUE(conv_winograd(channels, channels, tiles));
  const ConvExecution gemm = conv_execution(channels, pixels, reduction, false);
  const ConvExecution winograd = conv_execution(channels, pixels, reduction, false, tiles);
  EXPECT_DOUBLE_EQ(gemm.flops / winograd.flops, 2.25);
  EXPECT_FALSE(conv_winograd(channels, channels, 63));
  EXPECT_FALSE(conv_winograd(channels, 32, tiles));
  EXPECT_FALSE(conv_winograd(32, channels, tiles));
  EXPECT_EQ(conv_execution(channels, 14 * 14, reduction, false, 49).flops,
            conv_execution(channels, 14 * 14, reduction, false).flops);
}

// A transformer's MatMul of few tiles and a long K ([197, 768] x [768, 192]): the MatMuls' target
// of work groups splits K in 6, over 32-wide tiles (252 groups); the convolutions' would leave it
// whole (156 groups of 16-wide tiles).
TEST(GemmTilingTest, MatMulsOfFewTilesSplitKForTheirTarget) {
  using detail::gemm_tiling;
  const auto matmul =
      gemm_tiling(197, 192, 768, 1, detail::KSplit::kUnderHalf, detail::kMatMulTargetGroups);
  EXPECT_EQ(matmul.tile, 32);
  EXPECT_EQ(matmul.splits, 6);
  const auto conv_target = gemm_tiling(197, 192, 768, 1, detail::KSplit::kUnderHalf);
  EXPECT_EQ(conv_target.tile, 16);
  EXPECT_EQ(conv_target.splits, 1);
  // K = 256 would split in 2 at most: not worth its reduction launch.
  EXPECT_EQ(
      gemm_tiling(128, 256, 256, 1, detail::KSplit::kUnderHalf, detail::kMatMulTargetGroups).splits,
      1);
}

TEST_P(NodeOpsTest, ConvWithAutoPadAndWeightsAsInput) {
  for (const std::string auto_pad : {"SAME_UPPER", "SAME_LOWER", "VALID"}) {
    const int64_t h = 10, w = 9;
    const bool same = auto_pad != "VALID";
    const Shape y = {1, 4, same ? (h + 1) / 2 : (h - 4) / 2 + 1,
                     same ? (w + 1) / 2 : (w - 4) / 2 + 1};
    expect_matches_cpu("Conv auto_pad " + auto_pad, "Conv",
                       {{"auto_pad", auto_pad}, {"strides", Ints{2, 2}}},
                       {input({1, 3, h, w}), input({4, 3, 4, 4}, -0.5f, 0.5f)}, {y});
  }
}

// The Conv -> activation fusion the program does: attach_activation on the Conv node.
TEST_P(NodeOpsTest, ConvWithFusedActivation) {
  const std::vector<std::pair<std::string, Activation>> activations = {
      {"Relu", {UnaryOp::kRelu, 0, 0}},
      {"Clip", {UnaryOp::kClip, 0.0f, 6.0f}},
      {"HardSwish", {UnaryOp::kHardSwish, 0, 0}},
      {"LeakyRelu", {UnaryOp::kLeakyRelu, 0.1f, 0}}};
  for (const auto& [name, act] : activations) {
    for (int64_t group : {1, 4}) {
      const Shape x = {1, 4, 6, 6}, w = {8, 4 / group, 3, 3}, y = {1, 8, 6, 6};
      OneNodeGraph g = one_node_graph(
          "Conv", {{"pads", Ints{1, 1, 1, 1}}, {"group", group}},
          {input(x, -2, 2), weight(w, -1, 1), weight({8})}, {y}, 17,
          [this](float v) { return round(v); }, 9);
      // The reference: Conv then the activation as a second node, run by the CPU backend.
      const Node& conv = g.graph.node(g.node);
      Graph chained;
      chained.opset = 17;
      const ValueId cx = chained.add_value("x", DType::kF32, x);
      chained.add_input(cx);
      const ValueId cw = chained.add_constant("w", *g.graph.value(conv.inputs[1]).constant);
      const ValueId cb = chained.add_constant("b", *g.graph.value(conv.inputs[2]).constant);
      const ValueId mid = chained.add_value("mid", DType::kF32, y);
      const ValueId out = chained.add_value("out", DType::kF32, y);
      Node first = conv;
      first.inputs = {cx, cw, cb};
      first.outputs = {mid};
      chained.add_node(first);
      Node a;
      a.name = "act";
      a.op_type = name;
      a.inputs = {mid};
      if (name == "Clip") {
        for (float bound : {0.0f, 6.0f}) {
          a.inputs.push_back(chained.add_constant(
              "bound" + std::to_string(a.inputs.size()),
              Tensor::from_vector(DType::kF32, {}, std::vector<float>{bound})));
        }
      }
      if (name == "LeakyRelu") a.attributes["alpha"] = 0.1f;
      a.outputs = {out};
      chained.add_node(a);
      chained.add_output(out);
      const std::optional<Activation> fusable = fusable_activation(chained, chained.node(1));
      ASSERT_TRUE(fusable.has_value()) << name;
      EXPECT_EQ(fusable->op, act.op);
      auto cpu = cpu::CpuProgram::compile(chained, {});
      ASSERT_TRUE(cpu.is_ok()) << cpu.status().message();
      auto want = (*cpu)->run(g.feeds);
      ASSERT_TRUE(want.is_ok()) << want.status().message();

      Node fused = g.graph.node(g.node);
      attach_activation(fused, *fusable);
      cl::Buffer xb = upload(g.feeds[0]), wb = upload(*g.graph.value(fused.inputs[1]).constant),
                 bb = upload(*g.graph.value(fused.inputs[2]).constant);
      cl::Buffer yb = upload(Tensor::from_vector(DType::kF32, y, std::vector<float>(288, NAN)));
      NodeOperands operands;
      operands.inputs = {{&xb, x, nullptr}, {&wb, w, nullptr}, {&bb, {8}, nullptr}};
      operands.outputs = {&yb};
      operands.output_shapes = {y};
      auto event = enqueue_node(ops(), queue_, fused, operands, {});
      ASSERT_TRUE(event.is_ok()) << event.status().message();
      ASSERT_EQ(event->wait(), CL_SUCCESS);
      const std::vector<float> got = download(yb, 288);
      const auto expected = (*want)[0].values<float>();
      const float tol = half() ? 5e-2f : 1e-4f, rel = half() ? 5e-2f : 1e-3f;
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_LE(std::fabs(got[i] - expected[i]), tol + rel * std::fabs(expected[i]))
            << name << " group " << group << " [" << i << "]";
      }
    }
  }
}

TEST_P(NodeOpsTest, ConvTransposeMatchesTheCpu) {
  struct Case {
    std::string name;
    Shape x;
    int64_t oc;
    Ints kernel, strides, dilations, pads, output_padding;
    int64_t group;
  };
  const std::vector<Case> cases = {
      {"stride 2", {1, 4, 5, 6}, 3, {3, 3}, {2, 2}, {1, 1}, {0, 0, 0, 0}, {0, 0}, 1},
      // output_padding within the end pads (beyond them: the scatter reference below).
      {"padded output_padding", {2, 6, 4, 4}, 4, {4, 3}, {2, 3}, {1, 1}, {1, 1, 1, 2}, {1, 2}, 2},
      {"dilated", {1, 2, 5, 5}, 2, {3, 3}, {1, 1}, {2, 2}, {1, 1, 1, 1}, {0, 0}, 1},
      {"depthwise", {1, 4, 6, 5}, 4, {2, 2}, {2, 2}, {1, 1}, {0, 0, 0, 0}, {0, 0}, 4},
      {"1-D", {1, 3, 7}, 5, {4}, {2}, {1}, {1, 1}, {1}, 1},
  };
  for (const Case& c : cases) {
    const size_t spatial = c.x.size() - 2;
    Shape w = {c.x[1], c.oc / c.group};
    Shape y = {c.x[0], c.oc};
    for (size_t i = 0; i < spatial; ++i) {
      w.push_back(c.kernel[i]);
      y.push_back((c.x[i + 2] - 1) * c.strides[i] + (c.kernel[i] - 1) * c.dilations[i] + 1 -
                  c.pads[i] - c.pads[i + spatial] + c.output_padding[i]);
    }
    const AttributeMap attrs = {{"kernel_shape", c.kernel},           {"strides", c.strides},
                                {"dilations", c.dilations},           {"pads", c.pads},
                                {"output_padding", c.output_padding}, {"group", c.group}};
    expect_matches_cpu("ConvTranspose " + c.name, "ConvTranspose", attrs,
                       {input(c.x), weight(w, -0.5f, 0.5f), weight({c.oc})}, {y});
  }
}

// ConvTranspose with output_padding beyond the end pads, checked against ONNX's definition as a
// scatter: each input element adds w * x to the outputs its taps reach.
TEST_P(NodeOpsTest, ConvTransposeOutputPaddingBeyondThePads) {
  const int64_t c = 4, oc = 6, group = 2, h = 3, w = 4, kh = 3, kw = 2, sh = 2, sw = 3;
  const int64_t ph = 1, pw = 0, pad_end_h = 0, pad_end_w = 1, oph = 1, opw = 2, dh = 1, dw = 2;
  const int64_t oh = (h - 1) * sh + (kh - 1) * dh + 1 - ph - pad_end_h + oph;
  const int64_t ow = (w - 1) * sw + (kw - 1) * dw + 1 - pw - pad_end_w + opw;
  const Shape y_shape = {1, oc, oh, ow};
  OneNodeGraph g = one_node_graph(
      "ConvTranspose",
      {{"strides", Ints{sh, sw}},
       {"dilations", Ints{dh, dw}},
       {"pads", Ints{ph, pw, pad_end_h, pad_end_w}},
       {"output_padding", Ints{oph, opw}},
       {"group", group}},
      {input({1, c, h, w}), weight({c, oc / group, kh, kw}), weight({oc})}, {y_shape}, 17,
      [this](float v) { return round(v); }, 3);
  const Node& node = g.graph.node(g.node);
  ASSERT_FALSE(check_node(g.graph, node).has_value());
  const auto x = g.feeds[0].values<float>();
  const auto wt = g.graph.value(node.inputs[1]).constant->values<float>();
  const auto bias = g.graph.value(node.inputs[2]).constant->values<float>();
  std::vector<float> want(static_cast<size_t>(oc * oh * ow));
  for (int64_t o = 0; o < oc; ++o) {
    for (int64_t i = 0; i < oh * ow; ++i) want[o * oh * ow + i] = bias[o];
  }
  const int64_t cin = c / group, cout = oc / group;
  for (int64_t ci = 0; ci < c; ++ci) {
    for (int64_t iy = 0; iy < h; ++iy) {
      for (int64_t ix = 0; ix < w; ++ix) {
        for (int64_t o = 0; o < cout; ++o) {
          for (int64_t ky = 0; ky < kh; ++ky) {
            for (int64_t kx = 0; kx < kw; ++kx) {
              const int64_t y = iy * sh + ky * dh - ph, xo = ix * sw + kx * dw - pw;
              if (y < 0 || y >= oh || xo < 0 || xo >= ow) continue;
              const int64_t out_c = (ci / cin) * cout + o;
              want[(out_c * oh + y) * ow + xo] +=
                  x[(ci * h + iy) * w + ix] * wt[((ci * cout + o) * kh + ky) * kw + kx];
            }
          }
        }
      }
    }
  }
  cl::Buffer xb = upload(g.feeds[0]), wb = upload(*g.graph.value(node.inputs[1]).constant);
  cl::Buffer bb = upload(*g.graph.value(node.inputs[2]).constant);
  cl::Buffer yb =
      upload(Tensor::from_vector(DType::kF32, y_shape, std::vector<float>(want.size())));
  NodeOperands operands;
  operands.inputs = {
      {&xb, {1, c, h, w}, nullptr}, {&wb, {c, oc / group, kh, kw}, nullptr}, {&bb, {oc}, nullptr}};
  operands.outputs = {&yb};
  operands.output_shapes = {y_shape};
  auto event = enqueue_node(ops(), queue_, node, operands, {});
  ASSERT_TRUE(event.is_ok()) << event.status().message();
  ASSERT_EQ(event->wait(), CL_SUCCESS);
  const std::vector<float> got = download(yb, static_cast<int64_t>(want.size()));
  const float tol = half() ? 5e-2f : 1e-4f, rel = half() ? 5e-2f : 1e-3f;
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_LE(std::fabs(got[i] - want[i]), tol + rel * std::fabs(want[i])) << i;
  }
}

TEST_P(NodeOpsTest, PoolsMatchTheCpu) {
  struct Case {
    std::string op, name;
    Shape x;
    Ints kernel, strides, pads;
    bool ceil_mode = false;
    int64_t count_include_pad = 0;
    Ints dilations = {};
  };
  const std::vector<Case> cases = {
      {"MaxPool", "3x3 stride 2 pad 1", {1, 4, 12, 12}, {3, 3}, {2, 2}, {1, 1, 1, 1}},
      {"MaxPool", "ceil_mode", {2, 3, 10, 9}, {3, 3}, {2, 2}, {0, 0, 0, 0}, true},
      {"MaxPool", "dilated", {1, 2, 11, 10}, {2, 3}, {1, 2}, {1, 0, 1, 1}, false, 0, {2, 2}},
      {"MaxPool", "1-D", {2, 3, 15}, {4}, {3}, {1, 2}},
      {"AveragePool", "exclude pad", {1, 4, 9, 8}, {3, 3}, {2, 2}, {1, 1, 1, 1}},
      {"AveragePool", "include pad", {1, 4, 9, 8}, {3, 3}, {2, 2}, {1, 1, 1, 1}, false, 1},
      {"AveragePool", "ceil_mode exclude pad", {1, 3, 10, 10}, {3, 3}, {2, 2}, {0, 0, 0, 0}, true},
      {"AveragePool", "2x2 stride 2", {2, 5, 8, 6}, {2, 2}, {2, 2}, {0, 0, 0, 0}},
  };
  for (const Case& c : cases) {
    const size_t spatial = c.x.size() - 2;
    Shape y = {c.x[0], c.x[1]};
    for (size_t i = 0; i < spatial; ++i) {
      y.push_back(out_size(c.x[i + 2], c.kernel[i], c.strides[i],
                           c.dilations.empty() ? 1 : c.dilations[i], c.pads[i], c.pads[i + spatial],
                           c.ceil_mode));
    }
    AttributeMap attrs = {{"kernel_shape", c.kernel},
                          {"strides", c.strides},
                          {"pads", c.pads},
                          {"ceil_mode", int64_t{c.ceil_mode}}};
    if (c.op == "AveragePool") attrs["count_include_pad"] = c.count_include_pad;
    if (!c.dilations.empty()) attrs["dilations"] = c.dilations;
    expect_matches_cpu(c.op + " " + c.name, c.op, attrs, {input(c.x)}, {y});
  }
  expect_matches_cpu("MaxPool SAME_UPPER", "MaxPool",
                     {{"kernel_shape", Ints{3, 3}},
                      {"strides", Ints{2, 2}},
                      {"auto_pad", std::string("SAME_UPPER")}},
                     {input({1, 2, 9, 8})}, {{1, 2, 5, 4}});
}

// ceil_mode with count_include_pad: a window reaching past the end pad divides by its extent
// clipped to the padded input, as ONNX Runtime and PyTorch do. (The CPU backend divides by the
// whole kernel there: oneDNN sees the ceil_mode overhang as padding; hence no CPU comparison.)
TEST_P(NodeOpsTest, AveragePoolCeilModeCountsPadsAsOnnxRuntime) {
  OneNodeGraph g = one_node_graph(
      "AveragePool",
      {{"kernel_shape", Ints{3, 3}},
       {"strides", Ints{2, 2}},
       {"pads", Ints{1, 1, 1, 1}},
       {"ceil_mode", int64_t{1}},
       {"count_include_pad", int64_t{1}}},
      {input({1, 1, 4, 4})}, {{1, 1, 3, 3}}, 17, [](float) { return 1.0f; }, 1);
  ASSERT_FALSE(check_node(g.graph, g.graph.node(g.node)).has_value());
  cl::Buffer x = upload(g.feeds[0]);
  cl::Buffer y = upload(Tensor::from_vector(DType::kF32, {9}, std::vector<float>(9, NAN)));
  NodeOperands operands;
  operands.inputs = {{&x, {1, 1, 4, 4}, nullptr}};
  operands.outputs = {&y};
  operands.output_shapes = {{1, 1, 3, 3}};
  auto event = enqueue_node(ops(), queue_, g.graph.node(g.node), operands, {});
  ASSERT_TRUE(event.is_ok()) << event.status().message();
  ASSERT_EQ(event->wait(), CL_SUCCESS);
  const std::vector<float> got = download(y, 9);
  // Rows/cols -1..1 (3 wide, 2 inside), 1..3 (3, 3), 3..5 (clipped to 3..4: 2 wide, 1 inside).
  const std::vector<float> want = {4 / 9.0f, 6 / 9.0f, 2 / 6.0f, 6 / 9.0f, 9 / 9.0f,
                                   3 / 6.0f, 2 / 6.0f, 3 / 6.0f, 1 / 4.0f};
  for (size_t i = 0; i < 9; ++i) EXPECT_NEAR(got[i], want[i], half() ? 2e-3f : 1e-6f) << i;
}

TEST_P(NodeOpsTest, ResizeMatchesTheCpu) {
  struct Case {
    std::string name, mode, coord, nearest;
    Shape x, y;
    bool by_scales;
  };
  const std::vector<Case> cases = {
      {"nearest x2 asymmetric floor",
       "nearest",
       "asymmetric",
       "floor",
       {1, 3, 4, 5},
       {1, 3, 8, 10},
       true},
      {"nearest round_prefer_floor",
       "nearest",
       "half_pixel",
       "round_prefer_floor",
       {1, 2, 5, 7},
       {1, 2, 8, 3},
       false},
      {"nearest round_prefer_ceil",
       "nearest",
       "half_pixel",
       "round_prefer_ceil",
       {2, 2, 6, 4},
       {2, 2, 9, 10},
       false},
      {"nearest ceil align_corners",
       "nearest",
       "align_corners",
       "ceil",
       {1, 1, 5, 6},
       {1, 1, 7, 4},
       false},
      {"nearest pytorch_half_pixel",
       "nearest",
       "pytorch_half_pixel",
       "round_prefer_floor",
       {1, 2, 3, 3},
       {1, 2, 7, 1},
       false},
      {"linear half_pixel", "linear", "half_pixel", "", {1, 3, 4, 5}, {1, 3, 8, 10}, true},
      {"linear align_corners", "linear", "align_corners", "", {2, 2, 5, 4}, {2, 2, 9, 7}, false},
      {"linear asymmetric down", "linear", "asymmetric", "", {1, 2, 9, 8}, {1, 2, 4, 3}, false},
      {"linear pytorch_half_pixel",
       "linear",
       "pytorch_half_pixel",
       "",
       {1, 2, 4, 4},
       {1, 2, 1, 7},
       false},
  };
  for (const Case& c : cases) {
    AttributeMap attrs = {{"mode", c.mode}, {"coordinate_transformation_mode", c.coord}};
    if (!c.nearest.empty()) attrs["nearest_mode"] = c.nearest;
    std::vector<TestInput> inputs = {input(c.x), omitted()};
    if (c.by_scales) {
      std::vector<float> scales;
      for (size_t i = 0; i < c.x.size(); ++i) {
        scales.push_back(static_cast<float>(c.y[i]) / static_cast<float>(c.x[i]));
      }
      inputs.push_back(host_floats({4}, scales));
    } else {
      inputs.push_back(omitted());
      inputs.push_back(host_ints({4}, c.y));
    }
    expect_matches_cpu("Resize " + c.name, "Resize", attrs, inputs, {c.y}, 13);
  }
  // Cubic: two passes (the shrinking axis first), one pass, exclude_outside with a = -0.5, and
  // three axes (an N-D resize of the CPU's separable kind).
  const auto cubic = [&](const std::string& name, AttributeMap attrs, Shape x, Shape y) {
    attrs["mode"] = std::string("cubic");
    expect_matches_cpu(
        "Resize cubic " + name, "Resize", attrs,
        {input(x), omitted(), omitted(), host_ints({static_cast<int64_t>(y.size())}, y)}, {y}, 13);
  };
  cubic("up and down", {}, {1, 2, 6, 5}, {1, 2, 4, 9});
  cubic("one axis, align_corners",
        {{"coordinate_transformation_mode", std::string("align_corners")}}, {1, 1, 5, 4},
        {1, 1, 5, 7});
  cubic("exclude_outside, a -0.5", {{"exclude_outside", int64_t{1}}, {"cubic_coeff_a", -0.5f}},
        {2, 3, 4, 4}, {2, 3, 7, 3});
  cubic("three axes", {}, {1, 3, 4, 5}, {1, 5, 2, 8});
  // Upsample (opset 9: scales as an input): asymmetric coordinates, nearest flooring.
  expect_matches_cpu("Upsample nearest", "Upsample", {{"mode", std::string("nearest")}},
                     {input({1, 2, 3, 4}), host_floats({4}, {1, 1, 2, 1.5f})}, {{1, 2, 6, 6}}, 9);
  expect_matches_cpu("Upsample linear", "Upsample", {{"mode", std::string("linear")}},
                     {input({1, 2, 3, 4}), host_floats({4}, {1, 1, 2, 2})}, {{1, 2, 6, 8}}, 9);
}

TEST_P(NodeOpsTest, GridSampleMatchesTheCpu) {
  for (const char* mode : {"bilinear", "nearest", "bicubic"}) {
    for (const char* padding : {"zeros", "border", "reflection"}) {
      for (int64_t align : {0, 1}) {
        expect_matches_cpu(
            std::string("GridSample ") + mode + " " + padding + (align ? " align_corners" : ""),
            "GridSample",
            {{"mode", std::string(mode)},
             {"padding_mode", std::string(padding)},
             {"align_corners", align}},
            {input({2, 3, 4, 5}), input({2, 3, 6, 2}, -1.4f, 1.4f)}, {{2, 3, 3, 6}}, 16);
      }
    }
  }
}

TEST_P(NodeOpsTest, DftAndStftMatchTheCpu) {
  expect_matches_cpu("DFT real", "DFT", {}, {input({2, 8, 1})}, {{2, 8, 2}});
  expect_matches_cpu("DFT complex inverse, axis 2", "DFT",
                     {{"inverse", int64_t{1}}, {"axis", int64_t{2}}}, {input({3, 2, 6, 2})},
                     {{3, 2, 6, 2}});
  expect_matches_cpu("DFT onesided, zero-padded", "DFT", {{"onesided", int64_t{1}}},
                     {input({2, 7, 3, 1}), host_ints({}, {10})}, {{2, 6, 3, 2}});
  expect_matches_cpu("DFT cut", "DFT", {}, {input({1, 9, 2}), host_ints({}, {4})}, {{1, 4, 2}});
  expect_matches_cpu("STFT windowed, onesided", "STFT", {},
                     {input({2, 20, 1}), host_ints({}, {3}), weight({8}), host_ints({}, {8})},
                     {{2, 5, 5, 2}});
  expect_matches_cpu("STFT complex, frame length from the signal", "STFT",
                     {{"onesided", int64_t{0}}}, {input({1, 6, 2}), host_ints({}, {2})},
                     {{1, 1, 6, 2}});
}

TEST(NodeOpsCheck, SpatialRejectionsNameTheAttribute) {
  auto expect_reason = [](const std::optional<Refusal>& got, ReasonCode reason,
                          const std::string& detail) {
    ASSERT_TRUE(got.has_value()) << detail;
    EXPECT_EQ(got->reason, reason) << got->detail;
    EXPECT_NE(got->detail.find(detail), std::string::npos) << got->detail;
  };
  expect_reason(
      check_one("Resize", {{"mode", std::string("bicubic")}},
                {input({1, 1, 2, 2}), omitted(), host_floats({4}, {1, 1, 2, 2})}, {{1, 1, 4, 4}}),
      ReasonCode::kAttributeUnsupported, "mode=bicubic");
  expect_reason(
      check_one("Resize", {{"coordinate_transformation_mode", std::string("tf_crop_and_resize")}},
                {input({1, 1, 2, 2}), omitted(), host_floats({4}, {1, 1, 2, 2})}, {{1, 1, 4, 4}}),
      ReasonCode::kAttributeUnsupported, "tf_crop_and_resize");
  expect_reason(check_one("Resize", {{"mode", std::string("linear")}},
                          {input({2, 2, 2}), omitted(), host_floats({3}, {2, 1, 2})}, {{4, 2, 4}}),
                ReasonCode::kShapeUnsupported, "last two axes");
  // Scales that are an input of the graph are read on the host per run.
  EXPECT_FALSE(
      check_one("Resize", {}, {input({1, 1, 2, 2}), omitted(), input({4})}, {{1, 1, 4, 4}}));
  expect_reason(check_one("MaxPool", {{"kernel_shape", Ints{2, 2}}, {"storage_order", int64_t{2}}},
                          {input({1, 1, 4, 4})}, {{1, 1, 3, 3}}),
                ReasonCode::kAttributeUnsupported, "storage_order=2");
  // Indices are int64 (program_host_inputs_test.cpp runs them); f32 ones are refused.
  expect_reason(check_one("MaxPool", {{"kernel_shape", Ints{2, 2}}}, {input({1, 1, 4, 4})},
                          {{1, 1, 3, 3}, {1, 1, 3, 3}}),
                ReasonCode::kDtypeUnsupported, "output 1 dtype f32");
  // output_shape sizes the output; the pads follow as the CPU resolves them.
  EXPECT_FALSE(check_one("ConvTranspose", {{"output_shape", Ints{8, 8}}},
                         {input({1, 1, 4, 4}), weight({1, 1, 2, 2})}, {{1, 1, 8, 8}}));
  expect_reason(
      check_one("Conv", {}, {input({1, 1, 4, 4, 4}), weight({1, 1, 2, 2, 2})}, {{1, 1, 3, 3, 3}}),
      ReasonCode::kShapeUnsupported, "spatial rank 3");
  expect_reason(check_one("Conv", {{"auto_pad", std::string("BOGUS")}},
                          {input({1, 1, 4, 4}), weight({1, 1, 2, 2})}, {{1, 1, 3, 3}}),
                ReasonCode::kAttributeUnsupported, "auto_pad=BOGUS");
}

}  // namespace
}  // namespace hsched::opencl
