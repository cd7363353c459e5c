// The constants of ONNX Runtime's QOperator arithmetic that both backends compute with (its graph
// optimizations run a DequantizeLinear -> op -> QuantizeLinear group of one 8-bit type as
// QLinearAdd or QLinearSoftmax), so that their bytes are ONNX Runtime's: QLinearAdd's terms (the
// CPU's fused Add and OpenCL's `qlinear_binary` and late Adds) and QLinearSoftmax's table (the
// CPU's and a CPU OpenCL device's quantized Softmax).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace hsched {

// QLinearAdd of the graph's operands (first, second) as MLAS computes it on their raw integers:
// y = saturate(rint(fma(first, ra, fma(second, rb, fixed)))), ra = first_scale / y_scale, rb
// alike, fixed = y_zero - (ra * first_zero + rb * second_zero) contracted as MLAS's compiler
// contracts it.
struct QLinearAddTerms {
  float ra = 0, rb = 0, fixed = 0;
};

inline QLinearAddTerms qlinear_add_terms(float first_scale, float first_zero, float second_scale,
                                         float second_zero, float y_scale, float y_zero) {
  QLinearAddTerms t;
  t.ra = first_scale / y_scale;
  t.rb = second_scale / y_scale;
  t.fixed = y_zero - std::fma(t.ra, first_zero, t.rb * second_zero);
  return t;
}

// A row's exponentials relative to its largest value: exp[i] = exp((i - 255 + shift) * x_scale)
// for i in [0, 255], computed in double, the shift keeping a sum of `size` entries below fp32's
// largest value with 5 nats spare (its log taken in fp32, as ONNX Runtime's log() of a float
// resolves: the entries, and so a tie between equal values of a row, depend on it). y_factor =
// floor(1 / y_scale); `overflows` where the last entry times it passes fp32's largest value
// (then the quotient is taken first).
struct QLinearSoftmaxTable {
  float exp[256] = {};
  float y_factor = 0.0f;
  bool overflows = false;
};

inline QLinearSoftmaxTable qlinear_softmax_table(float x_scale, float y_scale, int64_t size) {
  QLinearSoftmaxTable table;
  const float headroom = std::numeric_limits<float>::max() / static_cast<float>(size);
  const double shift = std::max(0.0, static_cast<double>(std::log(headroom)) - 5.0) / x_scale;
  for (int i = 0; i < 256; ++i) {
    table.exp[i] = static_cast<float>(std::exp((i - 255 + shift) * static_cast<double>(x_scale)));
  }
  table.y_factor = std::floor(1.0f / y_scale);
  table.overflows = !(table.exp[255] * table.y_factor <= std::numeric_limits<float>::max());
  return table;
}

}  // namespace hsched
