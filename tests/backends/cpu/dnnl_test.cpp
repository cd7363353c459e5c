// Conv, ConvTranspose, Gemm, MatMul and pools on oneDNN against plain reference loops, with
// fused post-ops and both activation layouts; Conv, Gemm and MatMul in bf16 and in int8.
#include <gtest/gtest.h>

#include "backends/cpu/kernels/elementwise.h"
#include "backends/cpu/kernels/post_ops.h"
#include "op_test_util.h"

namespace hsched::cpu {
namespace {

using test::f32;
using test::random_f32;

// Direct 2-D convolution, NCHW, with groups, strides, pads and dilations.
Tensor reference_conv(const Tensor& x, const Tensor& w, const Tensor* b, int64_t group,
                      std::vector<int64_t> stride, std::vector<int64_t> pad,
                      std::vector<int64_t> dil, std::vector<int64_t> out_dims) {
  Tensor y(DType::kF32, out_dims);
  const auto& xd = x.dims();
  const auto& wd = w.dims();
  const int64_t n = xd[0], c = xd[1], h = xd[2], wi = xd[3];
  const int64_t oc = wd[0], icg = wd[1], kh = wd[2], kw = wd[3];
  const int64_t oh = out_dims[2], ow = out_dims[3];
  const int64_t ocg = oc / group;
  auto xv = x.values<float>();
  auto wv = w.values<float>();
  auto yv = y.values<float>();
  (void)c;
  for (int64_t in = 0; in < n; ++in)
    for (int64_t o = 0; o < oc; ++o)
      for (int64_t yy = 0; yy < oh; ++yy)
        for (int64_t xx = 0; xx < ow; ++xx) {
          double acc = b ? b->values<float>()[static_cast<size_t>(o)] : 0.0;
          const int64_t g = o / ocg;
          for (int64_t i = 0; i < icg; ++i)
            for (int64_t ky = 0; ky < kh; ++ky)
              for (int64_t kx = 0; kx < kw; ++kx) {
                const int64_t sy = yy * stride[0] - pad[0] + ky * dil[0];
                const int64_t sx = xx * stride[1] - pad[1] + kx * dil[1];
                if (sy < 0 || sy >= h || sx < 0 || sx >= wi) continue;
                const int64_t ci = g * icg + i;
                acc += static_cast<double>(xv[static_cast<size_t>(((in * xd[1] + ci) * h + sy) * wi + sx)]) *
                       wv[static_cast<size_t>(((o * icg + i) * kh + ky) * kw + kx)];
              }
          yv[static_cast<size_t>(((in * oc + o) * oh + yy) * ow + xx)] = static_cast<float>(acc);
        }
  return y;
}

struct ConvCase {
  int64_t c, oc, group, k, stride, pad, dil, size;
};

class ConvTest : public ::testing::TestWithParam<ConvCase> {};

TEST_P(ConvTest, MatchesReference) {
  const ConvCase p = GetParam();
  const Tensor x = random_f32({1, p.c, p.size, p.size + 1}, 1);
  const Tensor w = random_f32({p.oc, p.c / p.group, p.k, p.k}, 2);
  const Tensor b = random_f32({p.oc}, 3);
  const int64_t ext = (p.k - 1) * p.dil + 1;
  const int64_t oh = (p.size + 2 * p.pad - ext) / p.stride + 1;
  const int64_t ow = (p.size + 1 + 2 * p.pad - ext) / p.stride + 1;
  const std::vector<int64_t> out{1, p.oc, oh, ow};
  AttributeMap attrs{{"group", p.group},
                     {"strides", std::vector<int64_t>{p.stride, p.stride}},
                     {"pads", std::vector<int64_t>{p.pad, p.pad, p.pad, p.pad}},
                     {"dilations", std::vector<int64_t>{p.dil, p.dil}},
                     {"kernel_shape", std::vector<int64_t>{p.k, p.k}}};
  auto y = test::run_op("Conv", attrs, {{x}, {w, true}, {b, true}}, {{DType::kF32, out}});
  ASSERT_TRUE(y.is_ok()) << y.status().message();
  const Tensor ref = reference_conv(x, w, &b, p.group, {p.stride, p.stride}, {p.pad, p.pad},
                                    {p.dil, p.dil}, out);
  EXPECT_TRUE(test::all_close(y->at(0), ref, 1e-4, 1e-4));
}

INSTANTIATE_TEST_SUITE_P(Shapes, ConvTest,
                         ::testing::Values(ConvCase{3, 8, 1, 3, 1, 1, 1, 9},
                                           ConvCase{8, 8, 8, 3, 2, 1, 1, 10},   // depthwise
                                           ConvCase{8, 12, 4, 3, 1, 2, 2, 7},   // grouped, dilated
                                           ConvCase{16, 5, 1, 1, 1, 0, 1, 5},   // pointwise
                                           ConvCase{4, 6, 1, 7, 3, 3, 1, 13}));

TEST(DnnlTest, ConvWithFusedReluAndResidualInBothLayouts) {
  const Tensor x = random_f32({1, 4, 6, 6}, 4);
  const Tensor w = random_f32({4, 4, 3, 3}, 5);
  const Tensor r = random_f32({1, 4, 6, 6}, 6);
  const std::vector<int64_t> out{1, 4, 6, 6};
  Tensor ref = reference_conv(x, w, nullptr, 1, {1, 1}, {1, 1}, {1, 1}, out);
  auto rv = ref.values<float>();
  for (size_t i = 0; i < rv.size(); ++i) rv[i] = std::max(0.0f, rv[i] + r.values<float>()[i]);
  Node node;
  set_post_ops(node, {PostOp{PostOp::Kind::kAdd, 0, 0, 2}, PostOp{PostOp::Kind::kRelu}});
  AttributeMap attrs = node.attributes;
  attrs["pads"] = std::vector<int64_t>{1, 1, 1, 1};
  // Inputs are X, W and the residual (index 2, no bias): post-ops name their input by index.
  auto y = test::run_op("Conv", attrs, {{x}, {w, true}, {r}}, {{DType::kF32, out}});
  ASSERT_TRUE(y.is_ok()) << y.status().message();
  EXPECT_TRUE(test::all_close(y->at(0), ref, 1e-4, 1e-4));
}

TEST(DnnlTest, GemmTransposesAlphaBetaAndBias) {
  const Tensor a = random_f32({5, 3}, 7);  // transA: A is K x M = 5 x 3
  const Tensor b = random_f32({4, 5}, 8);  // transB: B is N x K
  const Tensor c = random_f32({3, 4}, 9);
  AttributeMap attrs{{"transA", int64_t{1}}, {"transB", int64_t{1}}, {"alpha", 0.5f}, {"beta", 2.0f}};
  auto y = test::run_op("Gemm", attrs, {{a}, {b, true}, {c, true}}, {{DType::kF32, {3, 4}}});
  ASSERT_TRUE(y.is_ok()) << y.status().message();
  Tensor ref(DType::kF32, {3, 4});
  for (int m = 0; m < 3; ++m)
    for (int n = 0; n < 4; ++n) {
      double acc = 0;
      for (int k = 0; k < 5; ++k) acc += a.values<float>()[k * 3 + m] * b.values<float>()[n * 5 + k];
      ref.values<float>()[m * 4 + n] = static_cast<float>(0.5 * acc + 2.0 * c.values<float>()[m * 4 + n]);
    }
  EXPECT_TRUE(test::all_close(y->at(0), ref, 1e-5, 1e-4));
  // A [1, N] bias row: oneDNN's bias path.
  const Tensor a2 = random_f32({2, 5}, 10);
  const Tensor bias = random_f32({4}, 11);
  auto y2 = test::run_op("Gemm", {{"transB", int64_t{1}}}, {{a2}, {b, true}, {bias, true}},
                         {{DType::kF32, {2, 4}}});
  ASSERT_TRUE(y2.is_ok()) << y2.status().message();
  for (int m = 0; m < 2; ++m)
    for (int n = 0; n < 4; ++n) {
      double acc = bias.values<float>()[n];
      for (int k = 0; k < 5; ++k) acc += a2.values<float>()[m * 5 + k] * b.values<float>()[n * 5 + k];
      EXPECT_NEAR(y2->at(0).values<float>()[m * 4 + n], acc, 1e-4);
    }
}

TEST(DnnlTest, MatMulBroadcastsBatchAndHandlesVectors) {
  const Tensor a = random_f32({2, 1, 3, 4}, 12);
  const Tensor b = random_f32({3, 4, 5}, 13);
  auto y = test::run_op("MatMul", {}, {{a}, {b}}, {{DType::kF32, {2, 3, 3, 5}}});
  ASSERT_TRUE(y.is_ok()) << y.status().message();
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int m = 0; m < 3; ++m)
        for (int n = 0; n < 5; ++n) {
          double acc = 0;
          for (int k = 0; k < 4; ++k) {
            acc += a.values<float>()[(i * 3 + m) * 4 + k] * b.values<float>()[(j * 4 + k) * 5 + n];
          }
          EXPECT_NEAR(y->at(0).values<float>()[((i * 3 + j) * 3 + m) * 5 + n], acc, 1e-4);
        }
  const Tensor v = random_f32({4}, 14);
  const Tensor m2 = random_f32({4, 5}, 15);
  auto yv = test::run_op("MatMul", {}, {{v}, {m2, true}}, {{DType::kF32, {5}}});
  ASSERT_TRUE(yv.is_ok()) << yv.status().message();
  for (int n = 0; n < 5; ++n) {
    double acc = 0;
    for (int k = 0; k < 4; ++k) acc += v.values<float>()[k] * m2.values<float>()[k * 5 + n];
    EXPECT_NEAR(yv->at(0).values<float>()[n], acc, 1e-5);
  }
}

TEST(DnnlTest, MaxPoolCeilModeAndAveragePoolPadding) {
  const Tensor x = random_f32({1, 2, 7, 7}, 16);
  AttributeMap attrs{{"kernel_shape", std::vector<int64_t>{3, 3}},
                     {"strides", std::vector<int64_t>{2, 2}},
                     {"ceil_mode", int64_t{1}}};
  auto y = test::run_op("MaxPool", attrs, {{x}}, {{DType::kF32, {1, 2, 3, 3}}});
  ASSERT_TRUE(y.is_ok()) << y.status().message();
  auto xv = x.values<float>();
  for (int c = 0; c < 2; ++c)
    for (int oy = 0; oy < 3; ++oy)
      for (int ox = 0; ox < 3; ++ox) {
        float best = -1e30f;
        for (int ky = 0; ky < 3; ++ky)
          for (int kx = 0; kx < 3; ++kx) {
            const int sy = oy * 2 + ky, sx = ox * 2 + kx;
            if (sy < 7 && sx < 7) best = std::max(best, xv[(c * 7 + sy) * 7 + sx]);
          }
        EXPECT_EQ(y->at(0).values<float>()[(c * 3 + oy) * 3 + ox], best);
      }
  AttributeMap avg{{"kernel_shape", std::vector<int64_t>{3, 3}},
                   {"pads", std::vector<int64_t>{1, 1, 1, 1}}};
  auto ya = test::run_op("AveragePool", avg, {{x}}, {{DType::kF32, {1, 2, 7, 7}}});
  ASSERT_TRUE(ya.is_ok()) << ya.status().message();
  // Corner: 4 valid elements, padding excluded (count_include_pad = 0).
  const float corner = (xv[0] + xv[1] + xv[7] + xv[8]) / 4.0f;
  EXPECT_NEAR(ya->at(0).values<float>()[0], corner, 1e-6);
}

// count_include_pad with ceil_mode: ONNX Runtime and PyTorch divide by the window clipped to the
// padded input (declared pads), not by the whole kernel, where ceil_mode makes a window reach past
// the trailing pad. x 1x1x6x6, kernel 3, stride 2, pads 1: output 4x4 with ceil_mode (3x3 without).
TEST(DnnlTest, AveragePoolCeilModeCountIncludePadDividesByTheClippedWindow) {
  const Tensor x = random_f32({1, 1, 6, 6}, 19);
  AttributeMap attrs{{"kernel_shape", std::vector<int64_t>{3, 3}},
                     {"strides", std::vector<int64_t>{2, 2}},
                     {"pads", std::vector<int64_t>{1, 1, 1, 1}},
                     {"ceil_mode", int64_t{1}},
                     {"count_include_pad", int64_t{1}}};
  auto y = test::run_op("AveragePool", attrs, {{x}}, {{DType::kF32, {1, 1, 4, 4}}});
  ASSERT_TRUE(y.is_ok()) << y.status().message();
  const auto xv = x.values<float>();
  // Along each axis the padded input is [-1, 7): windows start at -1, 1, 3, 5; the last one
  // covers [5, 8), clipped to [5, 7): one input row and one pad row, so it divides by 2, not 3.
  const int extent[4] = {3, 3, 3, 2};
  for (int oy = 0; oy < 4; ++oy) {
    for (int ox = 0; ox < 4; ++ox) {
      double sum = 0;
      for (int ky = 0; ky < 3; ++ky) {
        for (int kx = 0; kx < 3; ++kx) {
          const int sy = oy * 2 - 1 + ky, sx = ox * 2 - 1 + kx;
          if (sy >= 0 && sy < 6 && sx >= 0 && sx < 6) sum += xv[sy * 6 + sx];
        }
      }
      EXPECT_NEAR(y->at(0).values<float>()[oy * 4 + ox], sum / (extent[oy] * extent[ox]), 1e-6)
          << "output " << oy << "," << ox;
    }
  }
}

TEST(DnnlTest, ConvTransposeMatchesScatterReference) {
  const Tensor x = random_f32({1, 3, 4, 4}, 17);
  const Tensor w = random_f32({3, 2, 3, 3}, 18);  // [IC, OC, k, k]
  AttributeMap attrs{{"strides", std::vector<int64_t>{2, 2}},
                     {"pads", std::vector<int64_t>{1, 1, 1, 1}},
                     {"output_padding", std::vector<int64_t>{1, 1}}};
  auto y = test::run_op("ConvTranspose", attrs, {{x}, {w, true}}, {{DType::kF32, {1, 2, 8, 8}}});
  ASSERT_TRUE(y.is_ok()) << y.status().message();
  std::vector<double> ref(2 * 8 * 8, 0.0);
  for (int ic = 0; ic < 3; ++ic)
    for (int iy = 0; iy < 4; ++iy)
      for (int ix = 0; ix < 4; ++ix)
        for (int oc = 0; oc < 2; ++oc)
          for (int ky = 0; ky < 3; ++ky)
            for (int kx = 0; kx < 3; ++kx) {
              const int oy = iy * 2 - 1 + ky, ox = ix * 2 - 1 + kx;
              if (oy < 0 || oy >= 8 || ox < 0 || ox >= 8) continue;
              ref[static_cast<size_t>((oc * 8 + oy) * 8 + ox)] +=
                  x.values<float>()[(ic * 4 + iy) * 4 + ix] * w.values<float>()[((ic * 2 + oc) * 3 + ky) * 3 + kx];
            }
  for (size_t i = 0; i < ref.size(); ++i) EXPECT_NEAR(y->at(0).values<float>()[i], ref[i], 1e-4);
}

// ONNX ConvTranspose as a scatter, NCHW: every input element adds x * w to the outputs its taps
// reach; outputs no tap reaches hold the bias. w is [IC, OC/group, kh, kw].
Tensor reference_conv_transpose(const Tensor& x, const Tensor& w, const Tensor& b, int64_t group,
                                std::vector<int64_t> stride, std::vector<int64_t> pad_begin,
                                std::vector<int64_t> dil, std::vector<int64_t> out_dims) {
  const auto& xd = x.dims();
  const auto& wd = w.dims();
  const int64_t icg = xd[1] / group, ocg = wd[1], kh = wd[2], kw = wd[3];
  const int64_t oc = out_dims[1], oh = out_dims[2], ow = out_dims[3];
  std::vector<double> acc(static_cast<size_t>(xd[0] * oc * oh * ow));
  for (int64_t n = 0; n < xd[0]; ++n)
    for (int64_t o = 0; o < oc; ++o)
      for (int64_t i = 0; i < oh * ow; ++i)
        acc[static_cast<size_t>((n * oc + o) * oh * ow + i)] = b.values<float>()[static_cast<size_t>(o)];
  for (int64_t n = 0; n < xd[0]; ++n)
    for (int64_t ci = 0; ci < xd[1]; ++ci)
      for (int64_t iy = 0; iy < xd[2]; ++iy)
        for (int64_t ix = 0; ix < xd[3]; ++ix)
          for (int64_t o = 0; o < ocg; ++o)
            for (int64_t ky = 0; ky < kh; ++ky)
              for (int64_t kx = 0; kx < kw; ++kx) {
                const int64_t oy = iy * stride[0] - pad_begin[0] + ky * dil[0];
                const int64_t ox = ix * stride[1] - pad_begin[1] + kx * dil[1];
                if (oy < 0 || oy >= oh || ox < 0 || ox >= ow) continue;
                const int64_t out_c = (ci / icg) * ocg + o;
                acc[static_cast<size_t>(((n * oc + out_c) * oh + oy) * ow + ox)] +=
                    static_cast<double>(x.values<float>()[static_cast<size_t>(((n * xd[1] + ci) * xd[2] + iy) * xd[3] + ix)]) *
                    w.values<float>()[static_cast<size_t>(((ci * ocg + o) * kh + ky) * kw + kx)];
              }
  Tensor y(DType::kF32, out_dims);
  for (size_t i = 0; i < acc.size(); ++i) y.values<float>()[i] = static_cast<float>(acc[i]);
  return y;
}

struct ConvTransposeCase {
  int64_t n, c, oc, group, h, w, kh, kw, sh, sw, dh, dw;
  std::vector<int64_t> pads, output_padding;  // pads: begin h, begin w, end h, end w
  bool relu;
};

class ConvTransposeTest : public ::testing::TestWithParam<ConvTransposeCase> {};

// output_padding larger than the end pad (ONNX allows up to stride - 1, or dilation - 1): the
// trailing outputs no tap reaches hold the bias (then the fused post-ops), as in ONNX Runtime.
TEST_P(ConvTransposeTest, OutputPaddingBeyondTheEndPadMatchesScatterReference) {
  const ConvTransposeCase p = GetParam();
  const Tensor x = random_f32({p.n, p.c, p.h, p.w}, 21);
  const Tensor w = random_f32({p.c, p.oc / p.group, p.kh, p.kw}, 22);
  const Tensor b = random_f32({p.oc}, 23);
  const int64_t oh = (p.h - 1) * p.sh + (p.kh - 1) * p.dh + 1 - p.pads[0] - p.pads[2] +
                     p.output_padding[0];
  const int64_t ow = (p.w - 1) * p.sw + (p.kw - 1) * p.dw + 1 - p.pads[1] - p.pads[3] +
                     p.output_padding[1];
  const std::vector<int64_t> out{p.n, p.oc, oh, ow};
  Node node;
  if (p.relu) set_post_ops(node, {PostOp{PostOp::Kind::kRelu}});
  AttributeMap attrs = node.attributes;
  attrs["group"] = p.group;
  attrs["strides"] = std::vector<int64_t>{p.sh, p.sw};
  attrs["dilations"] = std::vector<int64_t>{p.dh, p.dw};
  attrs["pads"] = p.pads;
  attrs["output_padding"] = p.output_padding;
  auto y = test::run_op("ConvTranspose", attrs, {{x}, {w, true}, {b, true}}, {{DType::kF32, out}});
  ASSERT_TRUE(y.is_ok()) << y.status().message();
  Tensor ref = reference_conv_transpose(x, w, b, p.group, {p.sh, p.sw}, {p.pads[0], p.pads[1]},
                                        {p.dh, p.dw}, out);
  if (p.relu) {
    for (float& v : ref.values<float>()) v = std::max(0.0f, v);
  }
  EXPECT_TRUE(test::all_close(y->at(0), ref, 1e-4, 1e-4));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ConvTransposeTest,
    ::testing::Values(
        // The OpenCL suite's case: grouped, dilated, output_padding past both end pads.
        ConvTransposeCase{1, 4, 6, 2, 3, 4, 3, 2, 2, 3, 1, 2, {1, 0, 0, 1}, {1, 2}, false},
        // No pads at all (the common upsampling ConvTranspose), batch 2, with a fused Relu.
        ConvTransposeCase{2, 3, 5, 1, 4, 5, 3, 3, 2, 2, 1, 1, {0, 0, 0, 0}, {1, 1}, true},
        // Channels wide enough for oneDNN's JIT kernels rather than the reference ones.
        ConvTransposeCase{1, 32, 16, 1, 5, 5, 4, 4, 3, 3, 1, 1, {1, 1, 0, 1}, {2, 2}, false},
        // Depthwise, output_padding below the stride only along one axis.
        ConvTransposeCase{1, 8, 8, 8, 4, 3, 2, 2, 2, 2, 1, 1, {0, 0, 0, 0}, {1, 0}, false}));

// lhs [rows, k] x rhs ([k, n], or [n, k] when `transposed`), in double.
std::vector<double> product(const Tensor& lhs, const Tensor& rhs, bool transposed, int k, int n) {
  const auto l = lhs.values<float>();
  const auto r = rhs.values<float>();
  const int rows = static_cast<int>(l.size()) / k;
  std::vector<double> y(static_cast<size_t>(rows * n), 0.0);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < n; ++j)
      for (int q = 0; q < k; ++q) {
        y[static_cast<size_t>(i * n + j)] +=
            static_cast<double>(l[static_cast<size_t>(i * k + q)]) *
            r[static_cast<size_t>(transposed ? j * k + q : q * n + j)];
      }
  return y;
}

// The largest |got - (want + add[column])| over 20 columns (`add` may be null).
double within(const Tensor& got, const std::vector<double>& want, const float* add) {
  double worst = 0;
  const auto g = got.values<float>();
  for (size_t i = 0; i < want.size(); ++i) {
    const double expected = want[i] + (add ? add[i % 20] : 0.0f);
    worst = std::max(worst, std::abs(g[i] - expected));
  }
  return worst;
}

// `t` with every value rounded to bf16 (to nearest, ties to even) and widened back.
Tensor rounded_to_bf16(const Tensor& t) {
  Tensor r = t.clone();
  for (float& v : r.values<float>()) v = bf16_to_float(float_to_bf16(v));
  return r;
}

AttributeMap bf16_attrs(AttributeMap attrs) {
  Node node;
  mark_bf16(node);
  attrs.insert(node.attributes.begin(), node.attributes.end());
  return attrs;
}

// A node marked bf16 computes on bf16-rounded activations and weights with fp32 sums: it matches
// the reference on rounded inputs to fp32 accuracy, and not the reference on the inputs as given.
TEST(DnnlBf16Test, ConvGemmAndMatMulComputeOnBf16RoundedInputs) {
  const Tensor x = random_f32({1, 16, 9, 10}, 21);
  const Tensor w = random_f32({24, 16, 3, 3}, 22);
  const Tensor b = random_f32({24}, 23);
  const std::vector<int64_t> out{1, 24, 9, 10};
  AttributeMap conv_attrs{{"pads", std::vector<int64_t>{1, 1, 1, 1}}};
  auto conv = test::run_op("Conv", bf16_attrs(conv_attrs), {{x}, {w, true}, {b, true}},
                           {{DType::kF32, out}});
  ASSERT_TRUE(conv.is_ok()) << conv.status().message();
  const Tensor exact = reference_conv(x, w, &b, 1, {1, 1}, {1, 1}, {1, 1}, out);
  const Tensor rounded =
      reference_conv(rounded_to_bf16(x), rounded_to_bf16(w), &b, 1, {1, 1}, {1, 1}, {1, 1}, out);
  EXPECT_TRUE(test::all_close(conv->at(0), rounded, 1e-4, 1e-4));
  EXPECT_FALSE(test::all_close(conv->at(0), exact, 1e-4, 1e-4));

  // MatMul with a run-time B, Gemm with constant transposed weights and a bias row.
  const Tensor a = random_f32({2, 7, 48}, 24);
  const Tensor m = random_f32({48, 20}, 25);
  const Tensor bias = random_f32({20}, 26);
  const Tensor mt = random_f32({20, 48}, 27);
  auto matmul = test::run_op("MatMul", bf16_attrs({}), {{a}, {m}}, {{DType::kF32, {2, 7, 20}}});
  auto gemm = test::run_op("Gemm", bf16_attrs({{"transB", int64_t{1}}}),
                           {{test::f32({14, 48}, std::vector<float>(a.values<float>().begin(),
                                                                    a.values<float>().end()))},
                            {mt, true},
                            {bias, true}},
                           {{DType::kF32, {14, 20}}});
  ASSERT_TRUE(matmul.is_ok()) << matmul.status().message();
  ASSERT_TRUE(gemm.is_ok()) << gemm.status().message();
  const Tensor ar = rounded_to_bf16(a);
  EXPECT_LT(within(matmul->at(0), product(ar, rounded_to_bf16(m), false, 48, 20), nullptr), 1e-4);
  EXPECT_GT(within(matmul->at(0), product(a, m, false, 48, 20), nullptr), 1e-3);
  const float* bias_values = bias.values<float>().data();
  EXPECT_LT(within(gemm->at(0), product(ar, rounded_to_bf16(mt), true, 48, 20), bias_values), 1e-4);
  EXPECT_GT(within(gemm->at(0), product(a, mt, true, 48, 20), bias_values), 1e-3);
}

AttributeMap int8_attrs(AttributeMap attrs) {
  Node node;
  mark_int8(node);
  attrs.insert(node.attributes.begin(), node.attributes.end());
  return attrs;
}

// `x` through ONNX's DynamicQuantizeLinear and back: uint8 over [min(0, min x), max(0, max x)].
Tensor dynamic_dequantized(const Tensor& x) {
  Tensor r = x.clone();
  float lo = 0, hi = 0;
  for (float v : x.values<float>()) lo = std::min(lo, v), hi = std::max(hi, v);
  const float scale = (hi - lo) / 255.0f;
  const float zero_point = std::nearbyint(std::clamp(-lo / scale, 0.0f, 255.0f));
  for (float& v : r.values<float>()) {
    const float q = std::clamp(std::nearbyint(v * (1.0f / scale)) + zero_point, 0.0f, 255.0f);
    v = (q - zero_point) * scale;
  }
  return r;
}

// Weights through symmetric int8 with a scale per output channel and back: the output channel
// of element i is (i / inner) % channels.
Tensor weights_dequantized(const Tensor& w, int64_t channels, int64_t inner) {
  Tensor r = w.clone();
  auto v = r.values<float>();
  std::vector<float> largest(static_cast<size_t>(channels), 0.0f);
  const auto channel = [&](size_t i) {
    return static_cast<size_t>((static_cast<int64_t>(i) / inner) % channels);
  };
  for (size_t i = 0; i < v.size(); ++i)
    largest[channel(i)] = std::max(largest[channel(i)], std::abs(v[i]));
  for (size_t i = 0; i < v.size(); ++i) {
    const float scale = largest[channel(i)] / 127.0f;
    v[i] = std::nearbyint(v[i] / scale) * scale;
  }
  return r;
}

// A node marked int8 computes dynamic quantization: its output is the fp32 result on the
// quantized-and-dequantized activation and weights (fp32 accuracy: the int32 sums are exact, the
// bias added after the scales), and differs from the fp32 result on the values as given. Covers
// a Conv with a bias and a fused Relu over an input that is not all positive, a MatMul whose
// batch folds into the rows, and a Gemm with transposed weights and a bias row.
TEST(DnnlInt8Test, ConvGemmAndMatMulComputeDynamicQuantization) {
  Tensor x = random_f32({1, 16, 9, 10}, 31);
  for (float& v : x.values<float>()) v = 2.0f * v + 0.5f;  // asymmetric: the zero point is not 128
  const Tensor w = random_f32({24, 16, 3, 3}, 32);
  const Tensor b = random_f32({24}, 33);
  const std::vector<int64_t> out{1, 24, 9, 10};
  Node relu;
  set_post_ops(relu, {PostOp{PostOp::Kind::kRelu}});
  AttributeMap conv_attrs = relu.attributes;
  conv_attrs["pads"] = std::vector<int64_t>{1, 1, 1, 1};
  auto conv = test::run_op("Conv", int8_attrs(conv_attrs), {{x}, {w, true}, {b, true}},
                           {{DType::kF32, out}});
  ASSERT_TRUE(conv.is_ok()) << conv.status().message();
  const auto relu_of = [](Tensor t) {
    for (float& v : t.values<float>()) v = std::max(0.0f, v);
    return t;
  };
  const Tensor exact = relu_of(reference_conv(x, w, &b, 1, {1, 1}, {1, 1}, {1, 1}, out));
  const Tensor quantized =
      relu_of(reference_conv(dynamic_dequantized(x), weights_dequantized(w, 24, 16 * 9), &b, 1,
                             {1, 1}, {1, 1}, {1, 1}, out));
  EXPECT_TRUE(test::all_close(conv->at(0), quantized, 1e-4, 1e-4));
  EXPECT_FALSE(test::all_close(conv->at(0), exact, 1e-3, 1e-3));
  EXPECT_TRUE(test::all_close(conv->at(0), exact, 0.1, 0.02));  // and int8-close to fp32

  const Tensor a = random_f32({2, 7, 48}, 34);
  const Tensor m = random_f32({48, 20}, 35);
  const Tensor bias = random_f32({20}, 36);
  const Tensor mt = random_f32({20, 48}, 37);
  auto matmul =
      test::run_op("MatMul", int8_attrs({}), {{a}, {m, true}}, {{DType::kF32, {2, 7, 20}}});
  const Tensor a2 =
      test::f32({14, 48}, std::vector<float>(a.values<float>().begin(), a.values<float>().end()));
  auto gemm = test::run_op("Gemm", int8_attrs({{"transB", int64_t{1}}}),
                           {{a2}, {mt, true}, {bias, true}}, {{DType::kF32, {14, 20}}});
  ASSERT_TRUE(matmul.is_ok()) << matmul.status().message();
  ASSERT_TRUE(gemm.is_ok()) << gemm.status().message();
  const Tensor aq = dynamic_dequantized(a);
  EXPECT_LT(
      within(matmul->at(0), product(aq, weights_dequantized(m, 20, 1), false, 48, 20), nullptr),
      1e-4);
  EXPECT_GT(within(matmul->at(0), product(a, m, false, 48, 20), nullptr), 1e-3);
  const float* bias_values = bias.values<float>().data();
  EXPECT_LT(
      within(gemm->at(0), product(aq, weights_dequantized(mt, 20, 48), true, 48, 20), bias_values),
      1e-4);
  EXPECT_GT(within(gemm->at(0), product(a, mt, true, 48, 20), bias_values), 1e-3);
}

// int8 needs constant weights: a MatMul with a run-time B is refused when its kernel is made.
TEST(DnnlInt8Test, RunTimeWeightsAreRefused) {
  auto y =
      test::run_op("MatMul", int8_attrs({}), {{random_f32({4, 8}, 1)}, {random_f32({8, 3}, 2)}},
                   {{DType::kF32, {4, 3}}});
  ASSERT_FALSE(y.is_ok());
  EXPECT_NE(y.status().message().find("constant 2-D weights"), std::string::npos)
      << y.status().message();
}

}  // namespace
}  // namespace hsched::cpu
