// DFT and STFT against hand-computed transforms and a direct O(n^2) sum written here: real and
// complex signals, axes other than 1, inverse, onesided, dft_length padding and cutting, windows,
// lengths given at run time; malformed nodes are refused with one line naming the node.
#include <cmath>
#include <complex>
#include <numbers>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cpu/op_test_util.h"

namespace hsched::cpu::test {
namespace {

using Ints = std::vector<int64_t>;
using Cd = std::complex<double>;

Tensor scalar(int64_t v) { return i64({}, {v}); }
OpInput omitted() { return {Tensor(), false, true}; }

// Complex values as the trailing [.., 2] of an f32 tensor (`dims` excludes that 2).
Tensor complex_f32(Ints dims, const std::vector<Cd>& values) {
  std::vector<float> flat;
  for (const Cd& v : values) {
    flat.push_back(static_cast<float>(v.real()));
    flat.push_back(static_cast<float>(v.imag()));
  }
  dims.push_back(2);
  return f32(dims, flat);
}

// Samples of an f32 tensor [..., 1 or 2] as complex numbers.
std::vector<Cd> complex_values(const Tensor& t) {
  const auto v = t.values<float>();
  const size_t c = static_cast<size_t>(t.dims().back());
  std::vector<Cd> out;
  for (size_t i = 0; i < v.size(); i += c) out.emplace_back(v[i], c == 2 ? v[i + 1] : 0.0f);
  return out;
}

// The definition: y[k] = sum_j x[j] exp(-+2 pi i jk / n) (/ n when inverse), x cut or
// zero-padded to n.
std::vector<Cd> naive_dft(const std::vector<Cd>& x, int64_t n, bool inverse = false) {
  std::vector<Cd> y(static_cast<size_t>(n));
  const double sign = inverse ? 1.0 : -1.0;
  for (int64_t k = 0; k < n; ++k) {
    for (int64_t j = 0; j < std::min<int64_t>(n, static_cast<int64_t>(x.size())); ++j) {
      const double angle =
          sign * 2.0 * std::numbers::pi * static_cast<double>(j * k) / static_cast<double>(n);
      y[static_cast<size_t>(k)] += x[static_cast<size_t>(j)] * std::polar(1.0, angle);
    }
    if (inverse) y[static_cast<size_t>(k)] /= static_cast<double>(n);
  }
  return y;
}

// naive_dft along `axis` of x [dims..., 1 or 2], keeping `bins` of the n outputs.
Tensor reference_dft(const Tensor& x, size_t axis, int64_t n, int64_t bins, bool inverse = false) {
  Ints dims(x.dims().begin(), x.dims().end() - 1);
  const std::vector<Cd> in = complex_values(x);
  int64_t outer = 1, inner = 1;
  for (size_t a = 0; a < axis; ++a) outer *= dims[a];
  for (size_t a = axis + 1; a < dims.size(); ++a) inner *= dims[a];
  const int64_t len = dims[axis];
  std::vector<Cd> out(static_cast<size_t>(outer * bins * inner));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      std::vector<Cd> signal;
      for (int64_t j = 0; j < len; ++j) signal.push_back(in[(o * len + j) * inner + i]);
      const std::vector<Cd> y = naive_dft(signal, n, inverse);
      for (int64_t k = 0; k < bins; ++k) out[(o * bins + k) * inner + i] = y[k];
    }
  }
  dims[axis] = bins;
  return complex_f32(dims, out);
}

// Frames of signal [batch, length, 1 or 2] times `window` (ones when empty), transformed.
Tensor reference_stft(const Tensor& signal, int64_t step, int64_t n,
                      const std::vector<float>& window, bool onesided) {
  const int64_t batch = signal.dims()[0], length = signal.dims()[1];
  const std::vector<Cd> in = complex_values(signal);
  const int64_t frames = (length - n) / step + 1, bins = onesided ? n / 2 + 1 : n;
  std::vector<Cd> out;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t f = 0; f < frames; ++f) {
      std::vector<Cd> frame;
      for (int64_t j = 0; j < n; ++j) {
        frame.push_back(in[b * length + f * step + j] * (window.empty() ? 1.0 : window[j]));
      }
      const std::vector<Cd> y = naive_dft(frame, n);
      out.insert(out.end(), y.begin(), y.begin() + bins);
    }
  }
  return complex_f32({batch, frames, bins}, out);
}

Tensor random_complex(Ints dims, uint32_t seed) {
  dims.push_back(2);
  return random_f32(dims, seed);
}

// ---------------------------------------------------------------- DFT

TEST(CpuSpectral, DftOfAnImpulseIsAllOnes) {
  auto y = run_op("DFT", {}, {{f32({1, 4, 1}, {1, 0, 0, 0})}}, {{DType::kF32, {1, 4, 2}}});
  ASSERT_TRUE(y.is_ok()) << y.status().message();
  EXPECT_TRUE(all_close((*y)[0], f32({1, 4, 2}, {1, 0, 1, 0, 1, 0, 1, 0})));
}

TEST(CpuSpectral, DftOfACosineAndOfAComplexExponential) {
  // cos(2 pi j / 8): n / 2 at bins 1 and 7 (radix-2 path).
  std::vector<float> cosine;
  for (int j = 0; j < 8; ++j)
    cosine.push_back(static_cast<float>(std::cos(std::numbers::pi * j / 4)));
  auto y = run_op("DFT", {}, {{f32({1, 8, 1}, cosine)}}, {{DType::kF32, {1, 8, 2}}});
  ASSERT_TRUE(y.is_ok()) << y.status().message();
  std::vector<float> expected(16, 0.0f);
  expected[2] = expected[14] = 4.0f;
  EXPECT_TRUE(all_close((*y)[0], f32({1, 8, 2}, expected)));
  // exp(2 pi i 2j / 6), complex, length 6 (direct path): 6 at bin 2 only.
  std::vector<Cd> wave;
  for (int j = 0; j < 6; ++j) wave.push_back(std::polar(1.0, 2.0 * std::numbers::pi * 2 * j / 6));
  auto z = run_op("DFT", {}, {{complex_f32({1, 6}, wave)}}, {{DType::kF32, {1, 6, 2}}});
  ASSERT_TRUE(z.is_ok()) << z.status().message();
  EXPECT_TRUE(all_close((*z)[0], complex_f32({1, 6}, {0, 0, 6, 0, 0, 0})));
}

TEST(CpuSpectral, DftMatchesTheDefinitionForRandomSignals) {
  for (int64_t len : {5, 8, 12}) {
    const Tensor real = random_f32({2, len, 1}, 10);
    auto y = run_op("DFT", {}, {{real}}, {{DType::kF32, {2, len, 2}}});
    ASSERT_TRUE(y.is_ok()) << y.status().message();
    EXPECT_TRUE(all_close((*y)[0], reference_dft(real, 1, len, len))) << len;
    const Tensor cplx = random_complex({3, len}, 11);
    auto z = run_op("DFT", {}, {{cplx}}, {{DType::kF32, {3, len, 2}}});
    ASSERT_TRUE(z.is_ok()) << z.status().message();
    EXPECT_TRUE(all_close((*z)[0], reference_dft(cplx, 1, len, len))) << len;
  }
}

TEST(CpuSpectral, DftAlongOtherAxes) {
  const Tensor x = random_complex({2, 3, 5}, 12);  // [2, 3, 5, 2]
  auto a2 = run_op("DFT", {{"axis", int64_t{2}}}, {{x}}, {{DType::kF32, {2, 3, 5, 2}}});
  ASSERT_TRUE(a2.is_ok()) << a2.status().message();
  EXPECT_TRUE(all_close((*a2)[0], reference_dft(x, 2, 5, 5)));
  auto a0 = run_op("DFT", {{"axis", int64_t{0}}}, {{x}}, {{DType::kF32, {2, 3, 5, 2}}});
  ASSERT_TRUE(a0.is_ok()) << a0.status().message();
  EXPECT_TRUE(all_close((*a0)[0], reference_dft(x, 0, 2, 2)));
  // -3 counts from the back: axis 1.
  auto neg = run_op("DFT", {{"axis", int64_t{-3}}}, {{x}}, {{DType::kF32, {2, 3, 5, 2}}});
  ASSERT_TRUE(neg.is_ok()) << neg.status().message();
  EXPECT_TRUE(all_close((*neg)[0], reference_dft(x, 1, 3, 3)));
}

TEST(CpuSpectral, DftFromOpset20TakesTheAxisAsAnInput) {
  const Tensor x = random_complex({2, 3, 4}, 13);
  auto y =
      run_op("DFT", {}, {{x}, omitted(), {scalar(1), true}}, {{DType::kF32, {2, 3, 4, 2}}}, 20);
  ASSERT_TRUE(y.is_ok()) << y.status().message();
  EXPECT_TRUE(all_close((*y)[0], reference_dft(x, 1, 3, 3)));
  auto last = run_op("DFT", {}, {{x}}, {{DType::kF32, {2, 3, 4, 2}}}, 20);  // default -2
  ASSERT_TRUE(last.is_ok()) << last.status().message();
  EXPECT_TRUE(all_close((*last)[0], reference_dft(x, 2, 4, 4)));
}

TEST(CpuSpectral, InverseDftUndoesTheForwardOne) {
  auto impulse = run_op("DFT", {{"inverse", int64_t{1}}}, {{complex_f32({1, 4}, {1, 1, 1, 1})}},
                        {{DType::kF32, {1, 4, 2}}});
  ASSERT_TRUE(impulse.is_ok()) << impulse.status().message();
  EXPECT_TRUE(all_close((*impulse)[0], complex_f32({1, 4}, {1, 0, 0, 0})));
  for (int64_t len : {6, 16}) {
    const Tensor x = random_complex({2, len}, 14);
    auto y = run_op("DFT", {}, {{x}}, {{DType::kF32, {2, len, 2}}});
    ASSERT_TRUE(y.is_ok()) << y.status().message();
    auto back = run_op("DFT", {{"inverse", int64_t{1}}}, {{(*y)[0]}}, {{DType::kF32, {2, len, 2}}});
    ASSERT_TRUE(back.is_ok()) << back.status().message();
    EXPECT_TRUE(all_close((*back)[0], x)) << len;
  }
}

TEST(CpuSpectral, OnesidedDftKeepsTheFirstHalfOfTheBins) {
  for (int64_t len : {7, 8}) {
    const Tensor x = random_f32({2, len, 1}, 15);
    const int64_t bins = len / 2 + 1;
    auto y = run_op("DFT", {{"onesided", int64_t{1}}}, {{x}}, {{DType::kF32, {2, bins, 2}}});
    ASSERT_TRUE(y.is_ok()) << y.status().message();
    EXPECT_TRUE(all_close((*y)[0], reference_dft(x, 1, len, bins))) << len;
  }
}

TEST(CpuSpectral, DftLengthZeroPadsOrCutsTheSignal) {
  const Tensor x = f32({1, 3, 1}, {1, 2, 3});
  // Cut to [1, 2]: [3, -1].
  auto cut = run_op("DFT", {}, {{x}, {scalar(2), true}}, {{DType::kF32, {1, 2, 2}}});
  ASSERT_TRUE(cut.is_ok()) << cut.status().message();
  EXPECT_TRUE(all_close((*cut)[0], f32({1, 2, 2}, {3, 0, -1, 0})));
  // Padded to [1, 2, 3, 0]: [6, -2-2i, 2, -2+2i]; an i32 length works too.
  auto pad = run_op("DFT", {}, {{x}, {i32({}, {4}), true}}, {{DType::kF32, {1, 4, 2}}});
  ASSERT_TRUE(pad.is_ok()) << pad.status().message();
  EXPECT_TRUE(all_close((*pad)[0], f32({1, 4, 2}, {6, 0, -2, -2, 2, 0, -2, 2})));
  // Padded to 7 (direct path), onesided: 4 bins.
  auto seven = run_op("DFT", {{"onesided", int64_t{1}}}, {{x}, {scalar(7), true}},
                      {{DType::kF32, {1, 4, 2}}});
  ASSERT_TRUE(seven.is_ok()) << seven.status().message();
  EXPECT_TRUE(all_close((*seven)[0], reference_dft(x, 1, 7, 4)));
}

// dft_length as a graph input: the output's static shape holds it, and the value that arrives
// must agree.
TEST(CpuSpectral, DftTakesARunTimeLengthThatMatchesTheOutput) {
  const Tensor x = random_f32({2, 5, 1}, 16);
  auto y = run_op("DFT", {}, {{x}, {scalar(8)}}, {{DType::kF32, {2, 8, 2}}});
  ASSERT_TRUE(y.is_ok()) << y.status().message();
  EXPECT_TRUE(all_close((*y)[0], reference_dft(x, 1, 8, 8)));
  expect_refused(run_op("DFT", {}, {{x}, {scalar(6)}}, {{DType::kF32, {2, 8, 2}}}), "DFT",
                 "expected 2x6x2");
}

TEST(CpuSpectral, DftOfDoubles) {
  const std::vector<double> x = {1, 2, 3, 4, 5};
  auto y = run_op("DFT", {}, {{of(DType::kF64, {1, 5, 1}, x)}}, {{DType::kF64, {1, 5, 2}}});
  ASSERT_TRUE(y.is_ok()) << y.status().message();
  std::vector<Cd> signal(x.begin(), x.end());
  const std::vector<Cd> expected = naive_dft(signal, 5);
  const auto got = (*y)[0].values<double>();
  for (size_t k = 0; k < 5; ++k) {
    EXPECT_NEAR(got[2 * k], expected[k].real(), 1e-12) << k;
    EXPECT_NEAR(got[2 * k + 1], expected[k].imag(), 1e-12) << k;
  }
}

TEST(CpuSpectral, DftRefusesMalformedNodes) {
  const Tensor x = random_f32({2, 4, 1}, 17);
  const OpOutput out{DType::kF32, {2, 4, 2}};
  expect_refused(run_op("DFT", {{"axis", int64_t{2}}}, {{x}}, {out}), "DFT", "axis 2 is outside");
  expect_refused(run_op("DFT", {{"axis", int64_t{-1}}}, {{x}}, {out}), "DFT", "axis -1");
  expect_refused(run_op("DFT", {}, {{random_f32({2, 4, 3}, 1)}}, {out}), "DFT", "last dim");
  expect_refused(run_op("DFT", {}, {{x}}, {{DType::kF32, {2, 4, 1}}}), "DFT", "expected 2x4x2");
  expect_refused(run_op("DFT", {}, {{x}}, {{DType::kF64, {2, 4, 2}}}), "DFT", "dtype");
  expect_refused(run_op("DFT", {{"onesided", int64_t{1}}}, {{x}}, {out}), "DFT", "expected 2x3x2");
  expect_refused(run_op("DFT", {{"onesided", int64_t{1}}}, {{random_complex({2, 4}, 1)}}, {out}),
                 "DFT", "real input");
  expect_refused(run_op("DFT", {{"onesided", int64_t{1}}, {"inverse", int64_t{1}}}, {{x}},
                        {{DType::kF32, {2, 3, 2}}}),
                 "DFT", "inverse");
  expect_refused(run_op("DFT", {}, {{x}, {scalar(0), true}}, {out}), "DFT", "dft_length = 0");
  expect_refused(run_op("DFT", {}, {{x}, {i64({2}, {4, 4}), true}}, {out}), "DFT", "one value");
  expect_refused(run_op("DFT", {}, {{x}, {f32({}, {4}), true}}, {out}), "DFT", "dft_length");
  expect_refused(run_op("DFT", {}, {{x}, {scalar(int64_t{1} << 21), true}},
                        {{DType::kF32, {2, int64_t{1} << 21, 2}}}),
                 "DFT", "above");
  // Opset 20's axis input must be a constant.
  expect_refused(run_op("DFT", {}, {{x}, omitted(), {scalar(1)}}, {out}, 20), "DFT", "constant");
}

// ---------------------------------------------------------------- STFT

TEST(CpuSpectral, StftWithoutAWindowTransformsEachFrame) {
  const Tensor signal = random_f32({2, 10, 1}, 20);
  // frames (10 - 4) / 3 + 1 = 3, onesided by default: 3 bins.
  auto y = run_op("STFT", {}, {{signal}, {scalar(3), true}, omitted(), {scalar(4), true}},
                  {{DType::kF32, {2, 3, 3, 2}}});
  ASSERT_TRUE(y.is_ok()) << y.status().message();
  EXPECT_TRUE(all_close((*y)[0], reference_stft(signal, 3, 4, {}, true)));
  // No frame_length and no window: one frame of the whole signal.
  auto whole = run_op("STFT", {{"onesided", int64_t{0}}}, {{signal}, {scalar(1), true}},
                      {{DType::kF32, {2, 1, 10, 2}}});
  ASSERT_TRUE(whole.is_ok()) << whole.status().message();
  EXPECT_TRUE(all_close((*whole)[0], reference_stft(signal, 1, 10, {}, false)));
}

TEST(CpuSpectral, StftWeighsFramesByARunTimeWindow) {
  const std::vector<float> window = {0.25f, 0.75f, 1.0f, 0.5f};
  // A complex signal needs onesided = 0: frames (9 - 4) / 2 + 1 = 3 of 4 bins.
  const Tensor signal = random_complex({2, 9}, 21);
  auto y = run_op("STFT", {{"onesided", int64_t{0}}},
                  {{signal}, {scalar(2), true}, {f32({4}, window)}}, {{DType::kF32, {2, 3, 4, 2}}});
  ASSERT_TRUE(y.is_ok()) << y.status().message();
  EXPECT_TRUE(all_close((*y)[0], reference_stft(signal, 2, 4, window, false)));
  // A real signal, window and an equal frame_length, onesided.
  const Tensor real = random_f32({1, 12, 1}, 22);
  auto z = run_op("STFT", {}, {{real}, {i32({}, {3}), true}, {f32({4}, window)}, {scalar(4), true}},
                  {{DType::kF32, {1, 3, 3, 2}}});
  ASSERT_TRUE(z.is_ok()) << z.status().message();
  EXPECT_TRUE(all_close((*z)[0], reference_stft(real, 3, 4, window, true)));
}

// As in ONNX's node tests: frame_step and frame_length as graph inputs, checked at run time
// against the output's static shape.
TEST(CpuSpectral, StftTakesRunTimeLengthsThatMatchTheOutput) {
  const Tensor signal = random_f32({1, 16, 1}, 23);
  auto y = run_op("STFT", {}, {{signal}, {scalar(4)}, omitted(), {scalar(8)}},
                  {{DType::kF32, {1, 3, 5, 2}}});
  ASSERT_TRUE(y.is_ok()) << y.status().message();
  EXPECT_TRUE(all_close((*y)[0], reference_stft(signal, 4, 8, {}, true)));
  // frame_step 2 gives 5 frames, not 3.
  expect_refused(run_op("STFT", {}, {{signal}, {scalar(2)}, omitted(), {scalar(8)}},
                        {{DType::kF32, {1, 3, 5, 2}}}),
                 "STFT", "expected 1x5x5x2");
}

TEST(CpuSpectral, StftRefusesMalformedNodes) {
  const Tensor signal = random_f32({1, 10, 1}, 24);
  const OpInput step{scalar(2), true};
  const OpInput no_window = omitted();
  expect_refused(run_op("STFT", {}, {{signal}, step, {f32({3}, {1, 1, 1})}, {scalar(4), true}},
                        {{DType::kF32, {1, 4, 3, 2}}}),
                 "STFT", "window's length 3");
  expect_refused(run_op("STFT", {}, {{signal}, step, no_window, {scalar(11), true}},
                        {{DType::kF32, {1, 1, 6, 2}}}),
                 "STFT", "frame_length = 11");
  expect_refused(run_op("STFT", {}, {{signal}, {scalar(0), true}, no_window, {scalar(4), true}},
                        {{DType::kF32, {1, 4, 3, 2}}}),
                 "STFT", "frame_step = 0");
  expect_refused(run_op("STFT", {}, {{signal}, step, no_window, {scalar(4), true}},
                        {{DType::kF32, {1, 4, 4, 2}}}),
                 "STFT", "expected 1x4x3x2");
  expect_refused(
      run_op("STFT", {}, {{random_complex({1, 10}, 1)}, step, no_window, {scalar(4), true}},
             {{DType::kF32, {1, 4, 3, 2}}}),
      "STFT", "real signal");
  expect_refused(
      run_op("STFT", {}, {{random_f32({10, 1}, 1)}, step}, {{DType::kF32, {1, 4, 3, 2}}}), "STFT",
      "signal_length");
  expect_refused(
      run_op("STFT", {}, {{signal}, step, {random_f32({2, 2}, 1)}}, {{DType::kF32, {1, 4, 3, 2}}}),
      "STFT", "1-D");
}

}  // namespace
}  // namespace hsched::cpu::test
