// ONNX Runtime's QLinearSoftmax table (its contrib kernel, which its graph optimizations run a
// DequantizeLinear -> Softmax -> QuantizeLinear group of one 8-bit type as): the CPU's and a CPU
// OpenCL device's quantized Softmax compute with it, so that their bytes are ONNX Runtime's.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace hsched {

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
