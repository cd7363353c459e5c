// ONNX Runtime's QOperator arithmetic (qlinear_arith.h) against ONNX Runtime 1.30's own results,
// recorded from its CPU provider (graph optimizations extended) on the values where they differ
// from the graph as written (DequantizeLinear, the float op, QuantizeLinear): near-ties that its
// operation order rounds the other way. tests/differential/qlinear_exact.py compares every byte
// pair and many rows against ONNX Runtime itself.
#include "backends/cpu/kernels/qlinear_arith.h"

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

namespace hsched::cpu {
namespace {

template <typename Q>
Q binary_of(const QLinearBinary& op, Q a, Q b) {
  Q y{};
  qlinear_binary(op, &a, &b, &y, 0, 1, 1);
  return y;
}

TEST(QLinearArithTest, AddRoundsAsOnnxRuntime) {
  // As written: 109; QLinearAdd's fused multiply-adds give 110.
  const QLinearBinary add{true,
                          false,
                          {0.05075744539499283f, 148},
                          {0.07198267430067062f, 198},
                          {0.04929882660508156f, 213}};
  EXPECT_EQ(binary_of<uint8_t>(add, 229, 70), 110);
  // Its fixed part contracted into a fused multiply-add too: 125 and 200 without.
  const QLinearBinary fixed{true,
                            false,
                            {0.0422714427113533f, 25},
                            {0.014477790333330631f, 223},
                            {0.026882071048021317f, 88}};
  EXPECT_EQ(binary_of<uint8_t>(fixed, 67, 170), 126);
  EXPECT_EQ(binary_of<uint8_t>(fixed, 151, 64), 201);
  // The graph's operands (b, a): -75 as written.
  const QLinearBinary swapped{true,
                              true,
                              {0.06561531126499176f, -66},
                              {0.05118833854794502f, -41},
                              {0.03452833369374275f, 106}};
  EXPECT_EQ(binary_of<int8_t>(swapped, -103, -116), -76);
}

TEST(QLinearArithTest, SoftmaxScalesByTheFloorOfTheInverseScale) {
  // y_scale 1/255 in fp32: 1 / y_scale is 254.99998, its floor 254. As written: 221, 34.
  const auto table = qlinear_softmax_table(0.014588025f, 0.003921569f, 2);
  const std::vector<uint8_t> x{131, 2};
  std::vector<uint8_t> y(2);
  qlinear_softmax_rows(table, x.data(), y.data(), 0, 1, 2, 0);
  EXPECT_EQ(y, (std::vector<uint8_t>{220, 34}));
}

TEST(QLinearArithTest, SoftmaxTiesRoundAsOnnxRuntime) {
  // Four equal values of six: 0.25 x 254 is a tie whose side the table's fp32 log decides.
  const auto table = qlinear_softmax_table(39.754574f, 0.003921569f, 6);
  const std::vector<int8_t> x{127, 127, 127, 127, -125, -125};
  std::vector<int8_t> y(6);
  qlinear_softmax_rows(table, x.data(), y.data(), 0, 1, 6, -128);
  EXPECT_EQ(y, (std::vector<int8_t>{-64, -64, -64, -64, -128, -128}));
}

TEST(QLinearArithTest, SoftmaxPastFp32KeepsTheQuotient) {
  // floor(1 / y_scale) = 1507 on rows of 7: the table's largest entry times it passes fp32's
  // largest value (ONNX Runtime's kernel then writes 0); each row of equal values is 1/7.
  const auto table = qlinear_softmax_table(0.00120189f, 0.00066332f, 7);
  EXPECT_TRUE(table.overflows);
  const std::vector<uint8_t> x(7, 200);
  std::vector<uint8_t> y(7);
  qlinear_softmax_rows(table, x.data(), y.data(), 0, 1, 7, 0);
  EXPECT_EQ(y, std::vector<uint8_t>(7, 215));  // 1507 / 7 = 215.3
}

}  // namespace
}  // namespace hsched::cpu
