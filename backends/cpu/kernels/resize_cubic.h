// Resize's cubic mode (f32), internal to resize_kernels.cpp: the 4 taps each output index of an
// axis reads, with ONNX's cubic convolution weights, and the separable N-D pass over such taps.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace hsched::cpu::resize_cubic {

// The taps of one axis: output index o reads the input indices index[4o, 4o+4) with the weights
// weight[4o, 4o+4). The 4 taps are floor(x)-1 .. floor(x)+2 around the input coordinate x,
// clamped to [0, in): ONNX pads the input with its edge values. With exclude_outside the taps
// beyond the edges get weight 0 and the others are scaled to sum to 1 (all weights 0 when every
// tap is outside, where ONNX's reference divides 0 by 0).
struct AxisTaps {
  std::vector<int64_t> index;
  std::vector<float> weight;

  // Appends the taps of input coordinate x on an axis of `in` > 0 elements; `a` is
  // cubic_coeff_a. Returns the input index when the taps reduce to that one element (x is an
  // integer inside the axis), so that the caller can tell an axis that is not resized.
  std::optional<int64_t> add(float x, int64_t in, float a, bool exclude_outside);
};

// Resizes `in` of `in_dims` to `out` of `out_dims` (row-major f32, no element empty), one axis
// at a time over the axes whose `taps` entry is not null (the others have in == out and are not
// touched). Parallel over rows when large.
void resize_separable(const std::vector<const AxisTaps*>& taps, const std::vector<int64_t>& in_dims,
                      const std::vector<int64_t>& out_dims, const float* in, float* out);

}  // namespace hsched::cpu::resize_cubic
