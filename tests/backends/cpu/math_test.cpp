// PRelu, LRN, Hardmax, TopK, Det, BitShift, integer Pow, f16 Min/Max/Mod, Gemm with a run-time
// C and beta != 1, and the plain MaxPool (u8, Indices) against hand-computed results; malformed
// nodes of each are refused when the kernel is created, with one line naming the node.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "backends/cpu/kernels/elementwise.h"
#include "backends/cpu/op_test_util.h"

namespace hsched::cpu::test {
namespace {

using Ints = std::vector<int64_t>;

Tensor f16(Ints dims, const std::vector<float>& values) {
  std::vector<uint16_t> bits;
  for (float v : values) bits.push_back(float_to_half(v));
  return of(DType::kF16, dims, bits);
}

template <typename T>
std::vector<T> values_of(const Tensor& t) {
  auto v = t.values<T>();
  return {v.begin(), v.end()};
}
std::vector<float> f16_values(const Tensor& t) {
  std::vector<float> out;
  for (uint16_t b : t.values<uint16_t>()) out.push_back(half_to_float(b));
  return out;
}

// ---------------------------------------------------------------- PRelu

TEST(CpuMath, PReluBroadcastsTheSlopeToX) {
  auto y = run_op("PRelu", {}, {{f32({2, 3}, {-1, 2, -3, 4, -5, 0})}, {f32({3}, {0.5f, 2, -1})}},
                  {{DType::kF32, {2, 3}}});
  ASSERT_TRUE(y.is_ok()) << y.status().message();
  EXPECT_TRUE(all_close((*y)[0], f32({2, 3}, {-0.5f, 2, 3, 4, -10, 0})));
  auto yi = run_op("PRelu", {}, {{i64({3}, {-4, 5, -6})}, {i64({1}, {3})}}, {{DType::kI64, {3}}});
  ASSERT_TRUE(yi.is_ok()) << yi.status().message();
  EXPECT_EQ(values_of<int64_t>((*yi)[0]), (Ints{-12, 5, -18}));
}

TEST(CpuMath, PReluRefusesASlopeThatDoesNotBroadcastToX) {
  expect_refused(run_op("PRelu", {}, {{f32({2, 3}, {1, 2, 3, 4, 5, 6})}, {f32({2}, {1, 2})}},
                        {{DType::kF32, {2, 3}}}),
                 "PRelu", "broadcast");
  // A slope larger than X broadcasts both ways, which PRelu does not allow.
  expect_refused(run_op("PRelu", {}, {{f32({3}, {1, 2, 3})}, {random_f32({2, 3}, 1)}},
                        {{DType::kF32, {2, 3}}}),
                 "PRelu", "");
}

// ---------------------------------------------------------------- LRN

TEST(CpuMath, LrnSumsSquaresOverTheChannelWindow) {
  // alpha / size = 1, beta = 1, bias = 1: y = x / (1 + sum of squares in the window).
  const Tensor x = f32({1, 3, 1, 1}, {1, 2, 3});
  auto odd = run_op("LRN", {{"size", int64_t{3}}, {"alpha", 3.0f}, {"beta", 1.0f}, {"bias", 1.0f}},
                    {{x}}, {{DType::kF32, {1, 3, 1, 1}}});
  ASSERT_TRUE(odd.is_ok()) << odd.status().message();
  // windows [0, 1], [0, 2], [1, 2]
  EXPECT_TRUE(all_close((*odd)[0], f32({1, 3, 1, 1}, {1.0f / 6, 2.0f / 15, 3.0f / 14})));
  // An even size reaches one channel further up than down: [0, 1], [1, 2], [2, 2].
  auto even = run_op("LRN", {{"size", int64_t{2}}, {"alpha", 2.0f}, {"beta", 1.0f}, {"bias", 1.0f}},
                     {{x}}, {{DType::kF32, {1, 3, 1, 1}}});
  ASSERT_TRUE(even.is_ok()) << even.status().message();
  EXPECT_TRUE(all_close((*even)[0], f32({1, 3, 1, 1}, {1.0f / 6, 2.0f / 14, 3.0f / 10})));
  // Defaults alpha 1e-4, beta 0.75, bias 1, over two spatial points.
  auto defaults = run_op("LRN", {{"size", int64_t{1}}}, {{f32({1, 1, 2}, {10, -20})}},
                         {{DType::kF32, {1, 1, 2}}});
  ASSERT_TRUE(defaults.is_ok()) << defaults.status().message();
  EXPECT_TRUE(all_close((*defaults)[0],
                        f32({1, 1, 2}, {static_cast<float>(10 / std::pow(1.01, 0.75)),
                                        static_cast<float>(-20 / std::pow(1.04, 0.75))})));
}

TEST(CpuMath, LrnRefusesAMissingOrNonPositiveSize) {
  const Tensor x = random_f32({1, 3, 2, 2}, 2);
  expect_refused(run_op("LRN", {}, {{x}}, {{DType::kF32, {1, 3, 2, 2}}}), "LRN", "'size'");
  expect_refused(run_op("LRN", {{"size", int64_t{0}}}, {{x}}, {{DType::kF32, {1, 3, 2, 2}}}),
                 "LRN", "'size'");
  expect_refused(run_op("LRN", {{"size", int64_t{3}}}, {{x}}, {{DType::kF32, {1, 3, 2}}}), "LRN",
                 "shape");
}

// ---------------------------------------------------------------- Hardmax

TEST(CpuMath, HardmaxMarksTheFirstMaximumAlongTheAxis) {
  const Tensor x = f32({2, 3}, {1, 3, 3, 0, -1, -2});
  auto last = run_op("Hardmax", {}, {{x}}, {{DType::kF32, {2, 3}}}, 13);
  ASSERT_TRUE(last.is_ok()) << last.status().message();
  EXPECT_TRUE(all_close((*last)[0], f32({2, 3}, {0, 1, 0, 1, 0, 0})));
  auto axis0 = run_op("Hardmax", {{"axis", int64_t{0}}}, {{x}}, {{DType::kF32, {2, 3}}}, 13);
  ASSERT_TRUE(axis0.is_ok()) << axis0.status().message();
  EXPECT_TRUE(all_close((*axis0)[0], f32({2, 3}, {1, 1, 1, 0, 0, 0})));
}

TEST(CpuMath, HardmaxBeforeOpset13TakesTheWholeTailAsOneRow) {
  const Tensor x = f32({2, 2, 2}, {1, 5, 7, 2, /**/ 9, 0, 0, 9});
  auto y = run_op("Hardmax", {{"axis", int64_t{1}}}, {{x}}, {{DType::kF32, {2, 2, 2}}}, 11);
  ASSERT_TRUE(y.is_ok()) << y.status().message();
  EXPECT_TRUE(all_close((*y)[0], f32({2, 2, 2}, {0, 0, 1, 0, 1, 0, 0, 0})));
  // Opset 11's default axis is 1, not -1.
  auto d = run_op("Hardmax", {}, {{x}}, {{DType::kF32, {2, 2, 2}}}, 11);
  ASSERT_TRUE(d.is_ok()) << d.status().message();
  EXPECT_TRUE(all_close((*d)[0], (*y)[0]));
}

TEST(CpuMath, HardmaxRefusesAnAxisOutOfRange) {
  expect_refused(run_op("Hardmax", {{"axis", int64_t{2}}}, {{random_f32({2, 3}, 3)}},
                        {{DType::kF32, {2, 3}}}, 13),
                 "Hardmax", "'axis'");
  expect_refused(run_op("Hardmax", {}, {{random_f32({2, 3}, 3)}}, {{DType::kF32, {3, 2}}}, 13),
                 "Hardmax", "shape");
}

// ---------------------------------------------------------------- TopK

TEST(CpuMath, TopKOrdersValuesAndBreaksTiesByTheLowerIndex) {
  const Tensor x = f32({2, 4}, {1, 4, 4, 2, /**/ 0, -1, 5, 0});
  auto y = run_op("TopK", {}, {{x}, {i64({1}, {3}), true}},
                  {{DType::kF32, {2, 3}}, {DType::kI64, {2, 3}}}, 11);
  ASSERT_TRUE(y.is_ok()) << y.status().message();
  EXPECT_TRUE(all_close((*y)[0], f32({2, 3}, {4, 4, 2, 5, 0, 0})));
  EXPECT_EQ(values_of<int64_t>((*y)[1]), (Ints{1, 2, 3, 2, 0, 3}));
  auto smallest = run_op("TopK", {{"largest", int64_t{0}}, {"axis", int64_t{0}}},
                         {{x}, {i64({1}, {1}), true}},
                         {{DType::kF32, {1, 4}}, {DType::kI64, {1, 4}}}, 11);
  ASSERT_TRUE(smallest.is_ok()) << smallest.status().message();
  EXPECT_TRUE(all_close((*smallest)[0], f32({1, 4}, {0, -1, 4, 0})));
  EXPECT_EQ(values_of<int64_t>((*smallest)[1]), (Ints{1, 1, 0, 1}));
}

TEST(CpuMath, TopKOfIntegersAndBeforeOpset10) {
  auto y = run_op("TopK", {{"k", int64_t{2}}}, {{i64({5}, {3, -7, 9, 3, 1})}},
                  {{DType::kI64, {2}}, {DType::kI64, {2}}}, 1);
  ASSERT_TRUE(y.is_ok()) << y.status().message();
  EXPECT_EQ(values_of<int64_t>((*y)[0]), (Ints{9, 3}));
  EXPECT_EQ(values_of<int64_t>((*y)[1]), (Ints{2, 0}));
}

// K as a graph input (as ONNX's node tests give it): the outputs' static shape says K, and the
// value that arrives must agree.
TEST(CpuMath, TopKTakesARunTimeKFromTheOutputShape) {
  const Tensor x = f32({1, 3}, {2, 8, 5});
  auto y = run_op("TopK", {}, {{x}, {i64({1}, {2})}}, {{DType::kF32, {1, 2}}, {DType::kI64, {1, 2}}},
                  11);
  ASSERT_TRUE(y.is_ok()) << y.status().message();
  EXPECT_TRUE(all_close((*y)[0], f32({1, 2}, {8, 5})));
  auto wrong = run_op("TopK", {}, {{x}, {i64({1}, {3})}},
                      {{DType::kF32, {1, 2}}, {DType::kI64, {1, 2}}}, 11);
  ASSERT_FALSE(wrong.is_ok());
  EXPECT_NE(wrong.status().message().find("differs"), std::string::npos)
      << wrong.status().message();
}

TEST(CpuMath, TopKRefusesAKOutsideTheAxisOrMismatchedOutputs) {
  const Tensor x = random_f32({2, 3}, 4);
  const std::vector<OpOutput> outputs = {{DType::kF32, {2, 4}}, {DType::kI64, {2, 4}}};
  expect_refused(run_op("TopK", {}, {{x}, {i64({1}, {4}), true}}, outputs, 11), "TopK", "K = 4");
  expect_refused(run_op("TopK", {}, {{x}, {i64({1}, {-1}), true}},
                        {{DType::kF32, {2, 3}}, {DType::kI64, {2, 3}}}, 11),
                 "TopK", "K = -1");
  expect_refused(run_op("TopK", {}, {{x}, {i64({1}, {2}), true}},
                        {{DType::kF32, {2, 2}}, {DType::kI32, {2, 2}}}, 11),
                 "TopK", "Indices");
  expect_refused(run_op("TopK", {}, {{x}, {i64({1}, {2}), true}},
                        {{DType::kF32, {2, 3}}, {DType::kI64, {2, 2}}}, 11),
                 "TopK", "Values");
  expect_refused(run_op("TopK", {}, {{x}, {i64({2}, {1, 2}), true}},
                        {{DType::kF32, {2, 1}}, {DType::kI64, {2, 1}}}, 11),
                 "TopK", "one element");
  expect_refused(run_op("TopK", {{"axis", int64_t{2}}}, {{x}, {i64({1}, {1}), true}},
                        {{DType::kF32, {2, 1}}, {DType::kI64, {2, 1}}}, 11),
                 "TopK", "'axis'");
}

// ---------------------------------------------------------------- Det

TEST(CpuMath, DetOfOneAndOfABatchOfMatrices) {
  auto one = run_op("Det", {}, {{f32({2, 2}, {1, 2, 3, 4})}}, {{DType::kF32, {}}}, 11);
  ASSERT_TRUE(one.is_ok()) << one.status().message();
  EXPECT_TRUE(all_close((*one)[0], f32({}, {-2})));
  // diag(2, 3, 4); a row swap (needs a pivot: the first column starts with 0); a singular one.
  auto batch = run_op("Det", {},
                      {{f32({3, 3, 3}, {2, 0, 0, 0, 3, 0, 0, 0, 4,  //
                                        0, 1, 0, 1, 0, 0, 0, 0, 1,  //
                                        1, 2, 3, 2, 4, 6, 0, 1, 1})}},
                      {{DType::kF32, {3}}}, 11);
  ASSERT_TRUE(batch.is_ok()) << batch.status().message();
  EXPECT_TRUE(all_close((*batch)[0], f32({3}, {24, -1, 0})));
}

TEST(CpuMath, DetRefusesNonSquareInputsAndAWrongOutputShape) {
  expect_refused(run_op("Det", {}, {{random_f32({2, 3}, 5)}}, {{DType::kF32, {}}}, 11), "Det",
                 "square");
  expect_refused(run_op("Det", {}, {{random_f32({4}, 5)}}, {{DType::kF32, {}}}, 11), "Det",
                 "square");
  expect_refused(run_op("Det", {}, {{random_f32({2, 2, 2}, 5)}}, {{DType::kF32, {3}}}, 11), "Det",
                 "shape");
}

// ---------------------------------------------------------------- BitShift

TEST(CpuMath, BitShiftOfU8BothWays) {
  const Tensor x = u8({4}, {16, 4, 1, 255});
  const Tensor n = u8({4}, {1, 2, 3, 8});
  auto left = run_op("BitShift", {{"direction", std::string("LEFT")}}, {{x}, {n}},
                     {{DType::kU8, {4}}}, 11);
  ASSERT_TRUE(left.is_ok()) << left.status().message();
  EXPECT_EQ(values_of<uint8_t>((*left)[0]), (std::vector<uint8_t>{32, 16, 8, 0}));
  auto right = run_op("BitShift", {{"direction", std::string("RIGHT")}}, {{x}, {u8({1}, {2})}},
                      {{DType::kU8, {4}}}, 11);
  ASSERT_TRUE(right.is_ok()) << right.status().message();
  EXPECT_EQ(values_of<uint8_t>((*right)[0]), (std::vector<uint8_t>{4, 1, 0, 63}));
}

TEST(CpuMath, BitShiftRefusesABadDirectionOrDtype) {
  const Tensor x = u8({2}, {1, 2});
  expect_refused(run_op("BitShift", {}, {{x}, {x}}, {{DType::kU8, {2}}}, 11), "BitShift",
                 "'direction'");
  expect_refused(run_op("BitShift", {{"direction", std::string("UP")}}, {{x}, {x}},
                        {{DType::kU8, {2}}}, 11),
                 "BitShift", "'direction'");
  const Tensor w = i32({2}, {1, 2});
  expect_refused(run_op("BitShift", {{"direction", std::string("LEFT")}}, {{w}, {w}},
                        {{DType::kI32, {2}}}, 11),
                 "BitShift", "dtype");
}

// ---------------------------------------------------------------- Pow with an integer base

TEST(CpuMath, PowOfIntegerBases) {
  auto ii = run_op("Pow", {}, {{i32({4}, {2, 3, -2, 5})}, {i32({4}, {3, 2, 3, 0})}},
                   {{DType::kI32, {4}}}, 15);
  ASSERT_TRUE(ii.is_ok()) << ii.status().message();
  EXPECT_EQ(values_of<int32_t>((*ii)[0]), (std::vector<int32_t>{8, 9, -8, 1}));
  // Negative powers truncate 1 / x^-p: 0 unless |x| = 1.
  auto neg = run_op("Pow", {}, {{i64({4}, {2, 1, -1, -1})}, {i64({4}, {-1, -5, -3, -2})}},
                    {{DType::kI64, {4}}}, 15);
  ASSERT_TRUE(neg.is_ok()) << neg.status().message();
  EXPECT_EQ(values_of<int64_t>((*neg)[0]), (Ints{0, 1, -1, 1}));
  // 3^39 needs all 64 bits' precision: exact, where a double pow would round.
  auto big = run_op("Pow", {}, {{i64({1}, {3})}, {i32({1}, {39})}}, {{DType::kI64, {1}}}, 15);
  ASSERT_TRUE(big.is_ok()) << big.status().message();
  EXPECT_EQ(values_of<int64_t>((*big)[0]), (Ints{4052555153018976267}));
  auto fexp = run_op("Pow", {}, {{i64({3}, {4, 2, 10})}, {f32({3}, {0.5f, 3, 30})}},
                     {{DType::kI64, {3}}}, 15);
  ASSERT_TRUE(fexp.is_ok()) << fexp.status().message();
  EXPECT_EQ(values_of<int64_t>((*fexp)[0]),
            (Ints{2, 8, std::numeric_limits<int64_t>::max()}));  // 1e30 saturates
}

TEST(CpuMath, PowRefusesAnOutputOfAnotherDtype) {
  expect_refused(run_op("Pow", {}, {{i32({2}, {1, 2})}, {i32({2}, {1, 2})}}, {{DType::kF32, {2}}},
                        15),
                 "Pow", "");
}

// ---------------------------------------------------------------- f16 Min, Max, Mod

TEST(CpuMath, MinMaxAndModOfF16) {
  const Tensor a = f16({3}, {1.5f, -2, 3});
  const Tensor b = f16({3}, {2, -3, 0.25f});
  auto max = run_op("Max", {}, {{a}, {b}}, {{DType::kF16, {3}}}, 13);
  ASSERT_TRUE(max.is_ok()) << max.status().message();
  EXPECT_EQ(f16_values((*max)[0]), (std::vector<float>{2, -2, 3}));
  auto min = run_op("Min", {}, {{a}, {b}, {f16({1}, {0})}}, {{DType::kF16, {3}}}, 13);
  ASSERT_TRUE(min.is_ok()) << min.status().message();
  EXPECT_EQ(f16_values((*min)[0]), (std::vector<float>{0, -3, 0}));
  auto mod = run_op("Mod", {{"fmod", int64_t{1}}}, {{f16({3}, {5.5f, -5.5f, 7})}, {f16({1}, {2})}},
                    {{DType::kF16, {3}}}, 13);
  ASSERT_TRUE(mod.is_ok()) << mod.status().message();
  EXPECT_EQ(f16_values((*mod)[0]), (std::vector<float>{1.5f, -1.5f, 1}));
  expect_refused(run_op("Mod", {}, {{a}, {b}}, {{DType::kF16, {3}}}, 13), "Mod", "fmod=1");
}

// ---------------------------------------------------------------- Gemm, beta != 1, C at run time

TEST(CpuMath, GemmScalesARunTimeCByBeta) {
  const Tensor a = f32({2, 2}, {1, 2, 3, 4});
  const Tensor b = f32({2, 2}, {1, 0, 0, 1});
  const Tensor c = f32({1, 2}, {10, 20});
  // 0.5 * A + 2 * C (with B a weight or a run-time input), and with alpha = beta.
  for (bool constant_b : {false, true}) {
    auto y = run_op("Gemm", {{"alpha", 0.5f}, {"beta", 2.0f}}, {{a}, {b, constant_b}, {c}},
                    {{DType::kF32, {2, 2}}});
    ASSERT_TRUE(y.is_ok()) << y.status().message();
    EXPECT_TRUE(all_close((*y)[0], f32({2, 2}, {20.5f, 41, 21.5f, 42}))) << constant_b;
  }
  auto same = run_op("Gemm", {{"alpha", 3.0f}, {"beta", 3.0f}, {"transA", int64_t{1}}},
                     {{a}, {b}, {c}}, {{DType::kF32, {2, 2}}});
  ASSERT_TRUE(same.is_ok()) << same.status().message();
  EXPECT_TRUE(all_close((*same)[0], f32({2, 2}, {33, 69, 36, 72})));
}

// alpha / beta used to be the output scale: inf for a tiny beta (or a huge alpha), then NaN.
TEST(CpuMath, GemmWithARunTimeCAndAnExtremeAlphaOverBetaStaysFinite) {
  const Tensor a = f32({2, 2}, {0.5f, 0, 0, 0.25f});
  const Tensor b = f32({2, 2}, {1, 0, 0, 1});
  const Tensor c = f32({1, 2}, {1, 2});
  auto tiny = run_op("Gemm", {{"alpha", 1.0f}, {"beta", 1e-39f}}, {{a}, {b}, {c}},
                     {{DType::kF32, {2, 2}}});
  ASSERT_TRUE(tiny.is_ok()) << tiny.status().message();
  EXPECT_TRUE(all_close((*tiny)[0], f32({2, 2}, {0.5f, 0, 0, 0.25f})));
  auto huge = run_op("Gemm", {{"alpha", 2e38f}, {"beta", 0.5f}}, {{a}, {b}, {c}},
                     {{DType::kF32, {2, 2}}});
  ASSERT_TRUE(huge.is_ok()) << huge.status().message();
  EXPECT_TRUE(all_close((*huge)[0], f32({2, 2}, {1e38f, 1, 0.5f, 5e37f})));
}

// ---------------------------------------------------------------- MaxPool, plain loop

TEST(CpuMath, MaxPoolOfU8) {
  const Tensor x = u8({1, 1, 3, 3}, {1, 9, 2, 4, 5, 6, 7, 8, 250});
  auto y = run_op("MaxPool", {{"kernel_shape", Ints{2, 2}}}, {{x}}, {{DType::kU8, {1, 1, 2, 2}}});
  ASSERT_TRUE(y.is_ok()) << y.status().message();
  EXPECT_EQ(values_of<uint8_t>((*y)[0]), (std::vector<uint8_t>{9, 9, 8, 250}));
}

TEST(CpuMath, MaxPoolIndicesInBothStorageOrders) {
  // Two channels of 3 x 3; kernel 2, stride 1, one pad at the end of each axis.
  std::vector<float> v;
  for (int i = 0; i < 18; ++i) v.push_back(static_cast<float>((i * 7) % 18));
  const Tensor x = f32({1, 2, 3, 3}, v);
  // channel 0: 0 7 14 / 3 10 17 / 6 13 2; channel 1: 9 16 5 / 12 1 8 / 15 4 11
  const AttributeMap attrs = {{"kernel_shape", Ints{2, 2}}, {"pads", Ints{0, 0, 1, 1}}};
  const std::vector<OpOutput> outputs = {{DType::kF32, {1, 2, 3, 3}}, {DType::kI64, {1, 2, 3, 3}}};
  auto rows = run_op("MaxPool", attrs, {{x}}, outputs, 12);
  ASSERT_TRUE(rows.is_ok()) << rows.status().message();
  EXPECT_TRUE(all_close((*rows)[0], f32({1, 2, 3, 3}, {10, 17, 17, 13, 17, 17, 13, 13, 2,  //
                                                       16, 16, 8, 15, 11, 11, 15, 11, 11})));
  EXPECT_EQ(values_of<int64_t>((*rows)[1]), (Ints{4, 5, 5, 7, 5, 5, 7, 7, 8,  //
                                                  10, 10, 14, 15, 17, 17, 15, 17, 17}));
  AttributeMap columns = attrs;
  columns["storage_order"] = int64_t{1};
  auto cols = run_op("MaxPool", columns, {{x}}, outputs, 12);
  ASSERT_TRUE(cols.is_ok()) << cols.status().message();
  // (h, w) numbered w * 3 + h within each 9-element plane.
  EXPECT_EQ(values_of<int64_t>((*cols)[1]), (Ints{4, 7, 7, 5, 7, 7, 5, 5, 8,  //
                                                  12, 12, 16, 11, 17, 17, 11, 17, 17}));
}

TEST(CpuMath, MaxPoolRefusesBadIndicesOrStorageOrder) {
  const Tensor x = random_f32({1, 1, 4, 4}, 6);
  const AttributeMap attrs = {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}};
  expect_refused(run_op("MaxPool", attrs, {{x}},
                        {{DType::kF32, {1, 1, 2, 2}}, {DType::kI32, {1, 1, 2, 2}}}, 12),
                 "MaxPool", "Indices");
  expect_refused(run_op("MaxPool", attrs, {{x}},
                        {{DType::kF32, {1, 1, 2, 2}}, {DType::kI64, {1, 1, 3, 2}}}, 12),
                 "MaxPool", "Indices");
  AttributeMap bad_order = attrs;
  bad_order["storage_order"] = int64_t{2};
  expect_refused(run_op("MaxPool", bad_order, {{x}},
                        {{DType::kF32, {1, 1, 2, 2}}, {DType::kI64, {1, 1, 2, 2}}}, 12),
                 "MaxPool", "storage_order");
  // An output size the attributes do not give.
  expect_refused(run_op("MaxPool", attrs, {{u8({1, 1, 4, 4}, std::vector<uint8_t>(16, 1))}},
                        {{DType::kU8, {1, 1, 1, 1}}}, 12),
                 "MaxPool", "output size");
  expect_refused(run_op("MaxPool", attrs, {{u8({1, 1, 4, 4}, std::vector<uint8_t>(16, 1))}},
                        {{DType::kU8, {1, 2, 2, 2}}}, 12),
                 "MaxPool", "does not match");
}

// A crafted window far larger than the input: only the taps inside the input are visited (the
// old loop walked all 2^62 taps of the first model and overflowed the tap count of the second).
TEST(CpuMath, MaxPoolVisitsOnlyTheTapsInsideTheInput) {
  constexpr int64_t k31 = int64_t{1} << 31;
  const Tensor x = u8({1, 1, 1, 1}, {7});
  const AttributeMap huge = {{"kernel_shape", Ints{k31, k31}}, {"pads", Ints{k31 - 1, k31 - 1, 0, 0}}};
  auto y = run_op("MaxPool", huge, {{x}}, {{DType::kU8, {1, 1, 1, 1}}, {DType::kI64, {1, 1, 1, 1}}},
                  12);
  ASSERT_TRUE(y.is_ok()) << y.status().message();
  EXPECT_EQ(values_of<uint8_t>((*y)[0]), (std::vector<uint8_t>{7}));
  EXPECT_EQ(values_of<int64_t>((*y)[1]), (Ints{0}));
  constexpr int64_t k22 = int64_t{1} << 22;
  const AttributeMap three = {{"kernel_shape", Ints{k22, k22, k22}},
                              {"pads", Ints{k22 - 1, k22 - 1, k22 - 1, 0, 0, 0}}};
  auto y3 = run_op("MaxPool", three, {{u8({1, 1, 1, 1, 1}, {9})}}, {{DType::kU8, {1, 1, 1, 1, 1}}});
  ASSERT_TRUE(y3.is_ok()) << y3.status().message();
  EXPECT_EQ(values_of<uint8_t>((*y3)[0]), (std::vector<uint8_t>{9}));
}

// Dilation, stride and pads against a plain reference that tries every tap.
TEST(CpuMath, MaxPoolWithDilationStrideAndPadsMatchesAReference) {
  const Ints in = {5, 6}, kernel = {3, 2}, stride = {2, 1}, dilation = {2, 3}, pad = {2, 1, 1, 2};
  std::vector<float> v;
  for (int i = 0; i < 30; ++i) v.push_back(static_cast<float>((i * 11) % 30) - 10.0f);
  Ints out(2);
  for (size_t a = 0; a < 2; ++a) {
    out[a] = (in[a] + pad[a] + pad[a + 2] - ((kernel[a] - 1) * dilation[a] + 1)) / stride[a] + 1;
  }
  std::vector<float> want;
  for (int64_t oh = 0; oh < out[0]; ++oh) {
    for (int64_t ow = 0; ow < out[1]; ++ow) {
      float best = -std::numeric_limits<float>::max();
      for (int64_t kh = 0; kh < kernel[0]; ++kh) {
        for (int64_t kw = 0; kw < kernel[1]; ++kw) {
          const int64_t h = oh * stride[0] - pad[0] + kh * dilation[0];
          const int64_t w = ow * stride[1] - pad[1] + kw * dilation[1];
          if (h >= 0 && h < in[0] && w >= 0 && w < in[1]) {
            best = std::max(best, v[static_cast<size_t>(h * in[1] + w)]);
          }
        }
      }
      want.push_back(best);
    }
  }
  const AttributeMap attrs = {{"kernel_shape", kernel}, {"strides", stride},
                              {"dilations", dilation}, {"pads", pad}};
  auto y = run_op("MaxPool", attrs, {{f32({1, 1, 5, 6}, v)}},
                  {{DType::kF32, {1, 1, out[0], out[1]}}, {DType::kI64, {1, 1, out[0], out[1]}}},
                  12);
  ASSERT_TRUE(y.is_ok()) << y.status().message();
  EXPECT_TRUE(all_close((*y)[0], f32({1, 1, out[0], out[1]}, want)));
}

// Kernel, stride, dilation and pads above kMaxDim, or a window whose extent overflows int64,
// are refused naming the attribute (Conv and the pools share these checks).
TEST(CpuMath, PoolsAndConvRefuseHugeWindowAttributes) {
  constexpr int64_t k32 = int64_t{1} << 32;
  const Tensor x = u8({1, 1, 1, 1}, {1});
  const std::vector<OpOutput> y = {{DType::kU8, {1, 1, 1, 1}}};
  expect_refused(run_op("MaxPool", {{"kernel_shape", Ints{k32, 1}}, {"dilations", Ints{k32, 1}}},
                        {{x}}, y, 12),
                 "MaxPool", "kernel_shape");
  expect_refused(run_op("MaxPool", {{"kernel_shape", Ints{1, 1}}, {"strides", Ints{kMaxDim + 1, 1}}},
                        {{x}}, y, 12),
                 "MaxPool", "strides");
  expect_refused(run_op("MaxPool", {{"kernel_shape", Ints{1, 1}}, {"pads", Ints{0, 0, -1, 0}}},
                        {{x}}, y, 12),
                 "MaxPool", "pads");
  const Tensor xf = f32({1, 1, 1, 1}, {1});
  expect_refused(run_op("MaxPool", {{"kernel_shape", Ints{k32, 1}}, {"dilations", Ints{k32, 1}}},
                        {{xf}}, {{DType::kF32, {1, 1, 1, 1}}}),
                 "MaxPool", "kernel_shape");
  expect_refused(run_op("Conv", {{"dilations", Ints{kMaxDim + 1, 1}}},
                        {{xf}, {f32({1, 1, 1, 1}, {1}), true}}, {{DType::kF32, {1, 1, 1, 1}}}),
                 "Conv", "dilations");
}

// CumSum, checked against running sums written out by hand (ONNX's examples).
TEST(CumSumTest, ExclusiveReverseAxesAndWideDtypes) {
  auto cumsum = [](const Tensor& x, int64_t axis, int64_t exclusive, int64_t reverse) {
    auto out = run_op("CumSum", {{"exclusive", exclusive}, {"reverse", reverse}},
                      {{x}, {i64({}, {axis}), true}}, {{x.dtype(), x.dims()}}, 14);
    EXPECT_TRUE(out.is_ok()) << out.status().message();
    return out.is_ok() ? (*out)[0] : Tensor(x.dtype(), x.dims());
  };
  const Tensor x = of<double>(DType::kF64, {5}, {1, 2, 3, 4, 5});
  auto as_vector = [](const Tensor& t) {
    return std::vector<double>(t.values<double>().begin(), t.values<double>().end());
  };
  EXPECT_EQ(as_vector(cumsum(x, 0, 0, 0)), (std::vector<double>{1, 3, 6, 10, 15}));
  EXPECT_EQ(as_vector(cumsum(x, 0, 1, 0)), (std::vector<double>{0, 1, 3, 6, 10}));
  EXPECT_EQ(as_vector(cumsum(x, 0, 0, 1)), (std::vector<double>{15, 14, 12, 9, 5}));
  EXPECT_EQ(as_vector(cumsum(x, 0, 1, 1)), (std::vector<double>{14, 12, 9, 5, 0}));
  const Tensor m = of<double>(DType::kF64, {2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(as_vector(cumsum(m, 0, 0, 0)), (std::vector<double>{1, 2, 3, 5, 7, 9}));
  EXPECT_EQ(as_vector(cumsum(m, -1, 0, 0)), (std::vector<double>{1, 3, 6, 4, 9, 15}));
  // f64 adds in double: 1 + 2^-40 + 2^-40 is exact there, rounds to 1 in float.
  const double tiny = std::ldexp(1.0, -40);
  EXPECT_EQ(cumsum(of<double>(DType::kF64, {3}, {1, tiny, tiny}), 0, 0, 0).values<double>()[2],
            1 + 2 * tiny);
  // Integers wrap instead of overflowing.
  const Tensor big = of<int32_t>(DType::kI32, {2}, {2147483647, 1});
  EXPECT_EQ(cumsum(big, 0, 0, 0).values<int32_t>()[1], -2147483647 - 1);
  const Tensor u = of<uint64_t>(DType::kU64, {2}, {18446744073709551615u, 2});
  EXPECT_EQ(cumsum(u, 0, 0, 0).values<uint64_t>()[1], 1u);
  // An axis fed at run time (as ONNX's tests do) is read then, and checked.
  auto run_axis = run_op("CumSum", {}, {{m}, {i64({}, {1})}}, {{DType::kF64, {2, 3}}}, 14);
  ASSERT_TRUE(run_axis.is_ok()) << run_axis.status().message();
  EXPECT_EQ(as_vector((*run_axis)[0]), (std::vector<double>{1, 3, 6, 4, 9, 15}));
  EXPECT_FALSE(run_op("CumSum", {}, {{m}, {i64({}, {2})}}, {{DType::kF64, {2, 3}}}, 14).is_ok());
}

}  // namespace
}  // namespace hsched::cpu::test
