// ONNX Runtime's arithmetic for the QOperator ops its graph optimizations make of QDQ groups
// (QLinearAdd, QLinearMul, QLinearSoftmax, run by its MLAS and contrib kernels): the CPU program
// runs a DequantizeLinear -> Add / Mul / Softmax -> QuantizeLinear group of one 8-bit type with
// these operations, so that its bytes are ONNX Runtime's (the reference a QDQ model is checked
// against) rather than those of the float ops run apart, which differ by a step now and then and
// a transformer carries such steps on. Internal to the quantization kernels.
#pragma once

#include <cstdint>

#include "core/qlinear.h"

namespace hsched::cpu {

// One 8-bit tensor's quantization: y = (q - zero_point) * scale.
struct QuantScale {
  float scale = 1.0f;
  int32_t zero_point = 0;
};

// QLinearAdd or QLinearMul of a and b into y at elements [begin, end) of a, b's index running
// over `period` values and repeating (b of a's shape, a suffix of it, or one value), the graph's
// operand order being (b, a) when `swapped` (QLinearAdd's rounding depends on it). Q is uint8_t
// or int8_t, a, b and y alike. MLAS takes the graph's first operand as the one value when both
// are one value: a caller passes that one as b, `swapped`.
struct QLinearBinary {
  bool add = true;
  bool swapped = false;
  QuantScale a, b, y;
};
void qlinear_binary(const QLinearBinary& op, const uint8_t* a, const uint8_t* b, uint8_t* y,
                    int64_t begin, int64_t end, int64_t period);
void qlinear_binary(const QLinearBinary& op, const int8_t* a, const int8_t* b, int8_t* y,
                    int64_t begin, int64_t end, int64_t period);

// QLinearSoftmax over rows [begin, end) of `size` values: each value's exponential relative to
// its row's largest from a table of 256 (core/qlinear.h, for x's scale and the row
// length), summed in order in fp32, times floor(1 / y's scale), divided by the sum and rounded;
// y's zero point added and saturated. Where ONNX Runtime's product overflows fp32 (1 / y_scale
// past about 148 times the row length), the quotient is taken first.
void qlinear_softmax_rows(const QLinearSoftmaxTable& table, const uint8_t* x, uint8_t* y,
                          int64_t begin, int64_t end, int64_t size, int32_t y_zero_point);
void qlinear_softmax_rows(const QLinearSoftmaxTable& table, const int8_t* x, int8_t* y,
                          int64_t begin, int64_t end, int64_t size, int32_t y_zero_point);

}  // namespace hsched::cpu
