// QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, QLinearMatMul, MatMulInteger,
// QLinearConv and ConvInteger against hand-computed results (rounding half to even, saturation,
// zero points added after rounding, per-axis and per-channel parameters); malformed nodes of each
// are refused when the kernel is created, with one line naming the node.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cpu/op_test_util.h"

namespace hsched::cpu::test {
namespace {

using Ints = std::vector<int64_t>;

std::vector<float> floats_of(const Tensor& t) {
  auto v = t.values<float>();
  return {v.begin(), v.end()};
}

// ---------------------------------------------------------------- QuantizeLinear

TEST(CpuQuant, QuantizeRoundsHalfToEvenAndSaturates) {
  // x / 2 = 0, 1, 1.5 -> 2, 500 -> 255, -127 -> 1, -500 -> 0 (ONNX's example).
  auto y = run_op("QuantizeLinear", {},
                  {{f32({6}, {0, 2, 3, 1000, -254, -1000})}, {f32({}, {2})}, {u8({}, {128})}},
                  {{DType::kU8, {6}}});
  ASSERT_TRUE(y.is_ok()) << y.status().message();
  EXPECT_EQ(ints_of<uint8_t>((*y)[0]), (std::vector<int>{128, 129, 130, 255, 1, 0}));
  // Ties go to even both ways; i8 saturates at -128 and 127; NaN gives the lowest value.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto s = run_op("QuantizeLinear", {},
                  {{f32({8}, {1, 3, 5, -1, -3, 300, -300, nan})}, {f32({}, {2})}, {i8({}, {0})}},
                  {{DType::kI8, {8}}});
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  EXPECT_EQ(ints_of<int8_t>((*s)[0]), (std::vector<int>{0, 2, 2, 0, -2, 127, -128, -128}));
}

TEST(CpuQuant, QuantizeAddsTheZeroPointAfterRounding) {
  // round(1.5) + 1 = 3, where round(1.5 + 1) would give 2; round(2.5) - 3 = -1.
  auto y = run_op("QuantizeLinear", {}, {{f32({1}, {1.5f})}, {f32({}, {1})}, {u8({}, {1})}},
                  {{DType::kU8, {1}}});
  ASSERT_TRUE(y.is_ok()) << y.status().message();
  EXPECT_EQ(ints_of<uint8_t>((*y)[0]), (std::vector<int>{3}));
  auto s = run_op("QuantizeLinear", {}, {{f32({1}, {2.5f})}, {f32({}, {1})}, {i8({}, {-3})}},
                  {{DType::kI8, {1}}});
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  EXPECT_EQ(ints_of<int8_t>((*s)[0]), (std::vector<int>{-1}));
}

TEST(CpuQuant, QuantizePerAxis) {
  // x [2, 3, 2], axis 1: scales 1, 2, 4 and zero points 0, 10, 20 per channel.
  const Tensor x = f32({2, 3, 2}, {1, 2, 4, 6, 8, 10, -1, -2, -4, -6, -8, -11});
  const std::vector<int> expected{1, 2, 12, 13, 22, 22, 0, 0, 8, 7, 18, 17};
  for (int64_t axis : {int64_t{1}, int64_t{-2}}) {
    auto y =
        run_op("QuantizeLinear", {{"axis", axis}},
               {{x}, {f32({3}, {1, 2, 4})}, {u8({3}, {0, 10, 20})}}, {{DType::kU8, {2, 3, 2}}}, 13);
    ASSERT_TRUE(y.is_ok()) << y.status().message();
    EXPECT_EQ(ints_of<uint8_t>((*y)[0]), expected) << "axis " << axis;
  }
  // The last axis (per element of a row), and a large tensor split over threads.
  std::vector<float> big(100000);
  std::vector<int> big_expected;
  for (size_t i = 0; i < big.size(); ++i) {
    big[i] = static_cast<float>(i % 7) - 3.0f;
    big_expected.push_back(static_cast<int>(std::nearbyint(big[i] / (i % 2 ? 2.0f : 1.0f))) + 5);
  }
  auto y = run_op("QuantizeLinear", {{"axis", int64_t{-1}}},
                  {{f32({50000, 2}, big)}, {f32({2}, {1, 2})}, {i8({2}, {5, 5})}},
                  {{DType::kI8, {50000, 2}}}, 13);
  ASSERT_TRUE(y.is_ok()) << y.status().message();
  EXPECT_EQ(ints_of<int8_t>((*y)[0]), big_expected);
}

// Long runs go through the vectorized loops (16 lanes and a remainder): every element as the
// scalar definition gives it, ties, saturation and NaN at each lane position included.
TEST(CpuQuant, LongRunsMatchTheScalarDefinition) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int64_t n : {int64_t{15}, int64_t{16}, int64_t{17}, int64_t{1000}, int64_t{4099}}) {
    std::vector<float> x(static_cast<size_t>(n));
    std::vector<int> q_expected, i_expected;
    for (size_t i = 0; i < x.size(); ++i) {
      // Halves (ties), values past both ends of u8 and i8 after the zero point, and NaN.
      x[i] = i % 37 == 5 ? nan : (static_cast<float>(static_cast<int>(i % 601)) - 300.0f) * 0.75f;
      const float v = std::isnan(x[i]) ? -1e9f : std::nearbyint(x[i] / 0.5f);
      q_expected.push_back(static_cast<int>(std::clamp(v + 7.0f, 0.0f, 255.0f)));
      i_expected.push_back(static_cast<int>(std::clamp(v - 3.0f, -128.0f, 127.0f)));
    }
    auto q = run_op("QuantizeLinear", {}, {{f32({n}, x)}, {f32({}, {0.5f})}, {u8({}, {7})}},
                    {{DType::kU8, {n}}});
    ASSERT_TRUE(q.is_ok()) << q.status().message();
    EXPECT_EQ(ints_of<uint8_t>((*q)[0]), q_expected) << n;
    auto s = run_op("QuantizeLinear", {}, {{f32({n}, x)}, {f32({}, {0.5f})}, {i8({}, {-3})}},
                    {{DType::kI8, {n}}});
    ASSERT_TRUE(s.is_ok()) << s.status().message();
    EXPECT_EQ(ints_of<int8_t>((*s)[0]), i_expected) << n;
    // And back: (q - 7) * 0.25, (s + 3) * 0.25.
    auto dq = run_op("DequantizeLinear", {}, {{(*q)[0]}, {f32({}, {0.25f})}, {u8({}, {7})}},
                     {{DType::kF32, {n}}});
    auto ds = run_op("DequantizeLinear", {}, {{(*s)[0]}, {f32({}, {0.25f})}, {i8({}, {-3})}},
                     {{DType::kF32, {n}}});
    ASSERT_TRUE(dq.is_ok() && ds.is_ok());
    const std::vector<float> back_q = floats_of((*dq)[0]), back_s = floats_of((*ds)[0]);
    for (size_t i = 0; i < x.size(); ++i) {
      ASSERT_EQ(back_q[i], static_cast<float>(q_expected[i] - 7) * 0.25f) << n << " " << i;
      ASSERT_EQ(back_s[i], static_cast<float>(i_expected[i] + 3) * 0.25f) << n << " " << i;
    }
  }
}

TEST(CpuQuant, QuantizeWithoutZeroPointGivesU8AndTakesI32) {
  auto y = run_op("QuantizeLinear", {}, {{i32({3}, {-5, 7, 1000})}, {f32({}, {2})}},
                  {{DType::kU8, {3}}});
  ASSERT_TRUE(y.is_ok()) << y.status().message();
  EXPECT_EQ(ints_of<uint8_t>((*y)[0]), (std::vector<int>{0, 4, 255}));  // 3.5 -> 4
}

TEST(CpuQuant, QuantizeRefusesMalformedParameters) {
  const Tensor x = f32({1, 3, 2}, {1, 2, 3, 4, 5, 6});
  // Four scales for an axis of 3.
  expect_refused(
      run_op("QuantizeLinear", {}, {{x}, {f32({4}, {1, 1, 1, 1})}, {u8({4}, {0, 0, 0, 0})}},
             {{DType::kU8, {1, 3, 2}}}, 13),
      "QuantizeLinear", "y_scale 4 ");
  // Zero points that do not match the scales.
  expect_refused(run_op("QuantizeLinear", {}, {{x}, {f32({3}, {1, 1, 1})}, {u8({}, {0})}},
                        {{DType::kU8, {1, 3, 2}}}, 13),
                 "QuantizeLinear", "y_zero_point");
  // Per-axis before opset 13.
  expect_refused(run_op("QuantizeLinear", {}, {{x}, {f32({3}, {1, 1, 1})}, {u8({3}, {0, 0, 0})}},
                        {{DType::kU8, {1, 3, 2}}}, 10),
                 "QuantizeLinear", "must hold one value");
  // An axis out of range; an output dtype other than the zero point's.
  expect_refused(
      run_op("QuantizeLinear", {{"axis", int64_t{3}}},
             {{x}, {f32({3}, {1, 1, 1})}, {u8({3}, {0, 0, 0})}}, {{DType::kU8, {1, 3, 2}}}, 13),
      "QuantizeLinear", "axis");
  expect_refused(
      run_op("QuantizeLinear", {}, {{x}, {f32({}, {1})}, {u8({}, {0})}}, {{DType::kI8, {1, 3, 2}}}),
      "QuantizeLinear", "output is i8");
  expect_refused(
      run_op("QuantizeLinear", {}, {{x}, {f32({}, {1})}, {u8({}, {0})}}, {{DType::kU8, {3, 2}}}),
      "QuantizeLinear", "shape");
  expect_refused(
      run_op("QuantizeLinear", {}, {{x}, {i32({}, {1})}, {u8({}, {0})}}, {{DType::kU8, {1, 3, 2}}}),
      "QuantizeLinear", "y_scale is i32");
}

// ---------------------------------------------------------------- DequantizeLinear

TEST(CpuQuant, DequantizePerTensorAndPerAxis) {
  auto y =
      run_op("DequantizeLinear", {}, {{u8({4}, {0, 3, 128, 255})}, {f32({}, {2})}, {u8({}, {128})}},
             {{DType::kF32, {4}}});
  ASSERT_TRUE(y.is_ok()) << y.status().message();
  EXPECT_EQ(floats_of((*y)[0]), (std::vector<float>{-256, -250, 0, 254}));
  // i8 per axis 0 of [2, 2]: scales 0.5, 4 and zero points -128, 1.
  auto a = run_op("DequantizeLinear", {{"axis", int64_t{0}}},
                  {{i8({2, 2}, {-128, 127, 1, -128})}, {f32({2}, {0.5f, 4})}, {i8({2}, {-128, 1})}},
                  {{DType::kF32, {2, 2}}}, 13);
  ASSERT_TRUE(a.is_ok()) << a.status().message();
  EXPECT_EQ(floats_of((*a)[0]), (std::vector<float>{0, 127.5f, 0, -516}));
  // i32 without a zero point (the bias of a quantized Conv).
  auto b = run_op("DequantizeLinear", {}, {{i32({2}, {-2147483647 - 1, 6})}, {f32({}, {0.5f})}},
                  {{DType::kF32, {2}}});
  ASSERT_TRUE(b.is_ok()) << b.status().message();
  EXPECT_EQ(floats_of((*b)[0]), (std::vector<float>{-1073741824.0f, 3}));
}

TEST(CpuQuant, OneValueScalesIgnoreTheAxis) {
  // A 1-D bias with scale [1]: the default axis 1 does not exist, and need not (vit_tiny_int8).
  auto y = run_op("DequantizeLinear", {}, {{i8({2}, {3, -4})}, {f32({1}, {0.5f})}, {i8({1}, {1})}},
                  {{DType::kF32, {2}}}, 13);
  ASSERT_TRUE(y.is_ok()) << y.status().message();
  EXPECT_EQ(floats_of((*y)[0]), (std::vector<float>{1, -2.5f}));
  auto q = run_op("QuantizeLinear", {{"axis", int64_t{5}}},
                  {{f32({2}, {1, -5})}, {f32({1}, {2})}, {i8({1}, {1})}}, {{DType::kI8, {2}}}, 13);
  ASSERT_TRUE(q.is_ok()) << q.status().message();
  EXPECT_EQ(ints_of<int8_t>((*q)[0]), (std::vector<int>{1, -1}));  // 0.5 -> 0, -2.5 -> -2
}

TEST(CpuQuant, DequantizeRefusesMalformedParameters) {
  expect_refused(run_op("DequantizeLinear", {}, {{u8({2}, {1, 2})}, {f32({}, {1})}, {i8({}, {0})}},
                        {{DType::kF32, {2}}}),
                 "DequantizeLinear", "x_zero_point is i8");
  expect_refused(
      run_op("DequantizeLinear", {}, {{f32({2}, {1, 2})}, {f32({}, {1})}}, {{DType::kF32, {2}}}),
      "DequantizeLinear", "x is f32");
  expect_refused(
      run_op("DequantizeLinear", {}, {{u8({2}, {1, 2})}, {f32({}, {1})}}, {{DType::kU8, {2}}}),
      "DequantizeLinear", "f32");
  expect_refused(run_op("DequantizeLinear", {}, {{u8({2, 2}, {1, 2, 3, 4})}, {f32({1, 2}, {1, 1})}},
                        {{DType::kF32, {2, 2}}}, 13),
                 "DequantizeLinear", "x_scale 1x2 ");
}

// ---------------------------------------------------------------- DynamicQuantizeLinear

struct Dynamic {
  std::vector<int> y;
  float scale;
  int zero_point;
};

Dynamic dynamic_quantize(const Tensor& x) {
  auto r = run_op("DynamicQuantizeLinear", {}, {{x}},
                  {{DType::kU8, x.dims()}, {DType::kF32, {}}, {DType::kU8, {}}});
  EXPECT_TRUE(r.is_ok()) << r.status().message();
  if (!r.is_ok()) return {};
  return {ints_of<uint8_t>((*r)[0]), (*r)[1].values<float>()[0], (*r)[2].values<uint8_t>()[0]};
}

TEST(CpuQuant, DynamicQuantizeTakesTheRangeWithZero) {
  // ONNX's example: range [-3, 2], scale 5 / 255, zero point 153.
  Dynamic d = dynamic_quantize(f32({6}, {0, 2, -3, -2.5f, 1.34f, 0.5f}));
  EXPECT_FLOAT_EQ(d.scale, 5.0f / 255.0f);
  EXPECT_EQ(d.zero_point, 153);
  EXPECT_EQ(d.y, (std::vector<int>{153, 255, 0, 26, 221, 179}));
  // All positive: the minimum is taken as 0. All negative: the maximum as 0.
  d = dynamic_quantize(f32({2}, {255, 51}));
  EXPECT_EQ(d.scale, 1.0f);
  EXPECT_EQ(d.zero_point, 0);
  EXPECT_EQ(d.y, (std::vector<int>{255, 51}));
  d = dynamic_quantize(f32({2}, {-255, -51}));
  EXPECT_EQ(d.scale, 1.0f);
  EXPECT_EQ(d.zero_point, 255);
  EXPECT_EQ(d.y, (std::vector<int>{0, 204}));
  // All zero: scale 0, zero point 0, y 0.
  d = dynamic_quantize(f32({3}, {0, 0, 0}));
  EXPECT_EQ(d.scale, 0.0f);
  EXPECT_EQ(d.zero_point, 0);
  EXPECT_EQ(d.y, (std::vector<int>{0, 0, 0}));
}

TEST(CpuQuant, DynamicQuantizeRefusesWrongOutputs) {
  expect_refused(run_op("DynamicQuantizeLinear", {}, {{f32({2}, {1, 2})}},
                        {{DType::kU8, {2}}, {DType::kU8, {}}, {DType::kU8, {}}}),
                 "DynamicQuantizeLinear", "output 1");
  expect_refused(run_op("DynamicQuantizeLinear", {}, {{f32({2}, {1, 2})}},
                        {{DType::kU8, {3}}, {DType::kF32, {}}, {DType::kU8, {}}}),
                 "DynamicQuantizeLinear", "output 0");
}

// ---------------------------------------------------------------- QLinearMatMul, MatMulInteger

std::vector<OpInput> qlinear_matmul_inputs(Tensor a, Tensor b, Tensor b_scale, Tensor b_zp) {
  // a - 1, a_scale 0.5; y_scale 1, y_zero_point 10.
  return {{std::move(a)},       {f32({}, {0.5f})}, {u8({}, {1})},  {std::move(b)},
          {std::move(b_scale)}, {std::move(b_zp)}, {f32({}, {1})}, {u8({}, {10})}};
}

TEST(CpuQuant, QLinearMatMulRequantizesPerTensorAndPerColumn) {
  // (a - 1) = [2, 4], [1, 1]; B = [[1, 2], [3, -4]]: acc [14, -12], [4, -2].
  const Tensor a = u8({2, 2}, {3, 5, 2, 2});
  const Tensor b = i8({2, 2}, {1, 2, 3, -4});
  auto y = run_op("QLinearMatMul", {}, qlinear_matmul_inputs(a, b, f32({}, {1}), i8({}, {0})),
                  {{DType::kU8, {2, 2}}}, 10);
  ASSERT_TRUE(y.is_ok()) << y.status().message();
  // acc * 0.5 = 7, -6, 2, -1; + 10.
  EXPECT_EQ(ints_of<uint8_t>((*y)[0]), (std::vector<int>{17, 4, 12, 9}));
  // Per column: multipliers 0.5 and 0.125: -1.5 -> -2, -0.25 -> 0.
  auto c = run_op("QLinearMatMul", {},
                  qlinear_matmul_inputs(a, b, f32({2}, {1, 0.25f}), i8({2}, {0, 0})),
                  {{DType::kU8, {2, 2}}}, 10);
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  EXPECT_EQ(ints_of<uint8_t>((*c)[0]), (std::vector<int>{17, 8, 12, 10}));
  // The same per column in ONNX's N-D form, [1, N], as ONNX Runtime requires it.
  auto n_d = run_op("QLinearMatMul", {},
                    qlinear_matmul_inputs(a, b, f32({1, 2}, {1, 0.25f}), i8({1, 2}, {0, 0})),
                    {{DType::kU8, {2, 2}}}, 10);
  ASSERT_TRUE(n_d.is_ok()) << n_d.status().message();
  EXPECT_EQ(ints_of<uint8_t>((*n_d)[0]), (std::vector<int>{17, 8, 12, 10}));
}

TEST(CpuQuant, QLinearMatMulBroadcastsBatches) {
  // A [2, 1, 2] against B [2, 2]: each batch its own row; acc 5 * 0.5 = 2.5 -> 2 (half to even).
  auto y = run_op("QLinearMatMul", {},
                  qlinear_matmul_inputs(u8({2, 1, 2}, {2, 3, 6, 1}), i8({2, 2}, {1, 0, 2, 1}),
                                        f32({}, {1}), i8({}, {0})),
                  {{DType::kU8, {2, 1, 2}}}, 10);
  ASSERT_TRUE(y.is_ok()) << y.status().message();
  // (a - 1) = [1, 2] -> acc [5, 2]; [5, 0] -> acc [5, 0].
  EXPECT_EQ(ints_of<uint8_t>((*y)[0]), (std::vector<int>{12, 11, 12, 10}));
}

TEST(CpuQuant, MatMulIntegerSubtractsZeroPoints) {
  // ONNX's example.
  const Tensor a = u8({4, 3}, {11, 7, 3, 10, 6, 2, 9, 5, 1, 8, 4, 0});
  const Tensor b = u8({3, 2}, {1, 4, 2, 5, 3, 6});
  auto y = run_op("MatMulInteger", {}, {{a}, {b}, {u8({}, {12})}, {u8({}, {0})}},
                  {{DType::kI32, {4, 2}}}, 10);
  ASSERT_TRUE(y.is_ok()) << y.status().message();
  EXPECT_EQ(ints_of<int32_t>((*y)[0]),
            (std::vector<int>{-38, -83, -44, -98, -50, -113, -56, -128}));
  // Per row of A and per column of B; zero points omitted.
  auto r =
      run_op("MatMulInteger", {},
             {{i8({2, 1}, {5, 5})}, {i8({1, 2}, {3, 3})}, {i8({2}, {1, 5})}, {i8({2}, {0, 1})}},
             {{DType::kI32, {2, 2}}}, 10);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(ints_of<int32_t>((*r)[0]), (std::vector<int>{12, 8, 0, 0}));
  // The same in ONNX's N-D forms: [M, 1] and [1, N].
  auto n_d = run_op(
      "MatMulInteger", {},
      {{i8({2, 1}, {5, 5})}, {i8({1, 2}, {3, 3})}, {i8({2, 1}, {1, 5})}, {i8({1, 2}, {0, 1})}},
      {{DType::kI32, {2, 2}}}, 10);
  ASSERT_TRUE(n_d.is_ok()) << n_d.status().message();
  EXPECT_EQ(ints_of<int32_t>((*n_d)[0]), (std::vector<int>{12, 8, 0, 0}));
  auto o = run_op("MatMulInteger", {}, {{u8({1, 2}, {255, 255})}, {i8({2, 1}, {-128, -128})}},
                  {{DType::kI32, {1, 1}}}, 10);
  ASSERT_TRUE(o.is_ok()) << o.status().message();
  EXPECT_EQ(ints_of<int32_t>((*o)[0]), (std::vector<int>{-65280}));
}

TEST(CpuQuant, QuantizedMatMulsRefuseMalformedNodes) {
  const Tensor a = u8({2, 3}, {1, 2, 3, 4, 5, 6});
  expect_refused(
      run_op("MatMulInteger", {}, {{a}, {u8({2, 2}, {1, 2, 3, 4})}}, {{DType::kI32, {2, 2}}}, 10),
      "MatMulInteger", "disagree on K");
  expect_refused(run_op("MatMulInteger", {}, {{a}, {u8({3, 2}, {1, 2, 3, 4, 5, 6})}},
                        {{DType::kI32, {2, 3}}}, 10),
                 "MatMulInteger", "output");
  expect_refused(run_op("MatMulInteger", {}, {{f32({2, 3}, {1, 2, 3, 4, 5, 6})}, {a}},
                        {{DType::kI32, {2, 3}}}, 10),
                 "MatMulInteger", "input 0 is f32");
  expect_refused(
      run_op("MatMulInteger", {}, {{a}, {u8({3, 2}, {1, 2, 3, 4, 5, 6})}, {u8({3}, {1, 2, 3})}},
             {{DType::kI32, {2, 2}}}, 10),
      "MatMulInteger", "a_zero_point");
  // Per row of A is [M, 1] in the N-D form, per column of B [1, N]: not the other way round.
  expect_refused(
      run_op("MatMulInteger", {}, {{a}, {u8({3, 2}, {1, 2, 3, 4, 5, 6})}, {u8({1, 2}, {1, 2})}},
             {{DType::kI32, {2, 2}}}, 10),
      "MatMulInteger", "a_zero_point");
  expect_refused(run_op("QLinearMatMul", {},
                        qlinear_matmul_inputs(a, i8({3, 2}, {1, 2, 3, 4, 5, 6}),
                                              f32({2, 1}, {1, 1}), i8({2, 1}, {0, 0})),
                        {{DType::kU8, {2, 2}}}, 10),
                 "QLinearMatMul", "b_scale 2x1");
  expect_refused(run_op("QLinearMatMul", {},
                        qlinear_matmul_inputs(a, i8({3, 2}, {1, 2, 3, 4, 5, 6}),
                                              f32({3}, {1, 1, 1}), i8({3}, {0, 0, 0})),
                        {{DType::kU8, {2, 2}}}, 10),
                 "QLinearMatMul", "b_scale 3 ");
  expect_refused(
      run_op("QLinearMatMul", {},
             qlinear_matmul_inputs(a, i8({3, 2}, {1, 2, 3, 4, 5, 6}), f32({}, {1}), u8({}, {0})),
             {{DType::kU8, {2, 2}}}, 10),
      "QLinearMatMul", "b_zero_point is u8");
  expect_refused(
      run_op("QLinearMatMul", {},
             qlinear_matmul_inputs(a, i8({3, 2}, {1, 2, 3, 4, 5, 6}), f32({}, {1}), i8({}, {0})),
             {{DType::kI8, {2, 2}}}, 10),
      "QLinearMatMul", "output is i8");
}

// ---------------------------------------------------------------- ConvInteger, QLinearConv

TEST(CpuQuant, ConvIntegerPadsWithTheZeroPoint) {
  // ONNX's examples: x - 1 = 1..9, a 2x2 kernel of ones.
  const Tensor x = u8({1, 1, 3, 3}, {2, 3, 4, 5, 6, 7, 8, 9, 10});
  const Tensor w = u8({1, 1, 2, 2}, {1, 1, 1, 1});
  auto y = run_op("ConvInteger", {}, {{x}, {w}, {u8({}, {1})}}, {{DType::kI32, {1, 1, 2, 2}}}, 10);
  ASSERT_TRUE(y.is_ok()) << y.status().message();
  EXPECT_EQ(ints_of<int32_t>((*y)[0]), (std::vector<int>{12, 16, 24, 28}));
  auto p = run_op("ConvInteger", {{"pads", Ints{1, 1, 1, 1}}}, {{x}, {w}, {u8({}, {1})}},
                  {{DType::kI32, {1, 1, 4, 4}}}, 10);
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  EXPECT_EQ(ints_of<int32_t>((*p)[0]),
            (std::vector<int>{1, 3, 5, 3, 5, 12, 16, 9, 11, 24, 28, 15, 7, 15, 17, 9}));
}

TEST(CpuQuant, ConvIntegerGroupsDilationsAndPerChannelZeroPoints) {
  // Two groups of one channel; kernel 1x2 dilated by 2; w - zp = [1, 0] and [1, 2].
  const Tensor x = i8({1, 2, 1, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  const Tensor w = i8({2, 1, 1, 2}, {2, 1, 0, 1});
  auto y = run_op("ConvInteger", {{"group", int64_t{2}}, {"dilations", Ints{1, 2}}},
                  {{x}, {w}, {OpInput{Tensor(), false, true}}, {i8({2}, {1, -1})}},
                  {{DType::kI32, {1, 2, 1, 2}}}, 10);
  ASSERT_TRUE(y.is_ok()) << y.status().message();
  EXPECT_EQ(ints_of<int32_t>((*y)[0]), (std::vector<int>{1, 2, 19, 22}));
  // 1-D, stride 2, SAME_UPPER: x [1, 1, 5], kernel 3 -> 3 outputs, pads 1 and 1.
  auto s = run_op("ConvInteger", {{"strides", Ints{2}}, {"auto_pad", std::string("SAME_UPPER")}},
                  {{u8({1, 1, 5}, {1, 2, 3, 4, 5})}, {u8({1, 1, 3}, {1, 1, 1})}},
                  {{DType::kI32, {1, 1, 3}}}, 10);
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  EXPECT_EQ(ints_of<int32_t>((*s)[0]), (std::vector<int>{3, 9, 9}));
}

std::vector<OpInput> qlinear_conv_inputs(Tensor w_scale, Tensor bias) {
  // x - 10 = [0, 10, 20, 30] (x_scale 0.5); w [2, 1, 1, 1] = 2, -3; y_scale 2, y_zero_point 100.
  std::vector<OpInput> inputs{{u8({1, 1, 2, 2}, {10, 20, 30, 40})},
                              {f32({}, {0.5f})},
                              {u8({}, {10})},
                              {i8({2, 1, 1, 1}, {2, -3})},
                              {std::move(w_scale)},
                              {i8({2}, {0, 0})},
                              {f32({}, {2})},
                              {u8({}, {100})},
                              {std::move(bias)}};
  return inputs;
}

TEST(CpuQuant, QLinearConvAddsTheBiasAndRequantizesPerChannel) {
  // Channel 0: (2 * [0, 10, 20, 30] + 1) * 0.25 = 0.25, 5.25, 10.25, 15.25.
  // Channel 1: (-3 * [0, 10, 20, 30] - 5) * 0.125 = -0.625, -4.375, -8.125, -11.875.
  auto y = run_op("QLinearConv", {}, qlinear_conv_inputs(f32({2}, {1, 0.5f}), i32({2}, {1, -5})),
                  {{DType::kU8, {1, 2, 2, 2}}}, 10);
  ASSERT_TRUE(y.is_ok()) << y.status().message();
  EXPECT_EQ(ints_of<uint8_t>((*y)[0]), (std::vector<int>{100, 105, 110, 115, 99, 96, 92, 88}));
  // No bias, one weight scale: channel 0 = [0, 5, 10, 15], channel 1 = [0, -7.5, -15, -22.5].
  auto inputs = qlinear_conv_inputs(f32({}, {1}), {});
  inputs.pop_back();  // B omitted
  auto n = run_op("QLinearConv", {}, inputs, {{DType::kU8, {1, 2, 2, 2}}}, 10);
  ASSERT_TRUE(n.is_ok()) << n.status().message();
  EXPECT_EQ(ints_of<uint8_t>((*n)[0]), (std::vector<int>{100, 105, 110, 115, 100, 92, 85, 78}));
}

TEST(CpuQuant, QuantizedConvsRefuseMalformedNodes) {
  const Tensor x = u8({1, 2, 3, 3}, std::vector<uint8_t>(18, 1));
  // Weights for 3 input channels; group 3 of 2 channels.
  expect_refused(run_op("ConvInteger", {}, {{x}, {u8({1, 3, 1, 1}, {1, 1, 1})}},
                        {{DType::kI32, {1, 1, 3, 3}}}, 10),
                 "ConvInteger", "do not match input channels 2");
  expect_refused(run_op("ConvInteger", {{"group", int64_t{3}}}, {{x}, {u8({1, 2, 1, 1}, {1, 1})}},
                        {{DType::kI32, {1, 1, 3, 3}}}, 10),
                 "ConvInteger", "group 3");
  // An output size the attributes do not give; a w_zero_point per channel of the wrong count.
  expect_refused(run_op("ConvInteger", {}, {{x}, {u8({1, 2, 2, 2}, std::vector<uint8_t>(8, 1))}},
                        {{DType::kI32, {1, 1, 3, 3}}}, 10),
                 "ConvInteger", "output size");
  expect_refused(
      run_op("ConvInteger", {}, {{x}, {u8({1, 2, 1, 1}, {1, 1})}, {u8({}, {0})}, {u8({2}, {0, 0})}},
             {{DType::kI32, {1, 1, 3, 3}}}, 10),
      "ConvInteger", "w_zero_point");
  expect_refused(run_op("ConvInteger", {{"kernel_shape", Ints{2, 2}}},
                        {{x}, {u8({1, 2, 1, 1}, {1, 1})}}, {{DType::kI32, {1, 1, 3, 3}}}, 10),
                 "ConvInteger", "kernel_shape");
  // QLinearConv: a bias of the wrong shape, three weight scales for two channels.
  expect_refused(
      run_op("QLinearConv", {}, qlinear_conv_inputs(f32({2}, {1, 1}), i32({3}, {0, 0, 0})),
             {{DType::kU8, {1, 2, 2, 2}}}, 10),
      "QLinearConv", "B is i32 3,");
  expect_refused(
      run_op("QLinearConv", {}, qlinear_conv_inputs(f32({3}, {1, 1, 1}), i32({2}, {0, 0})),
             {{DType::kU8, {1, 2, 2, 2}}}, 10),
      "QLinearConv", "w_scale 3 ");
  expect_refused(run_op("QLinearConv", {}, qlinear_conv_inputs(f32({2}, {1, 1}), i32({2}, {0, 0})),
                        {{DType::kI32, {1, 2, 2, 2}}}, 10),
                 "QLinearConv", "output is i32");
}

}  // namespace
}  // namespace hsched::cpu::test
