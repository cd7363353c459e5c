// Resize's cubic mode (f32), internal to resize_kernels.cpp: the 4 taps each output index of an
// axis reads, with ONNX's cubic convolution weights, and the separable N-D pass over such taps.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "graph/resize_semantics.h"

namespace hsched::cpu::resize_cubic {

// The taps of one axis (shared with the OpenCL backend: graph/resize_semantics.h).
using AxisTaps = resize::CubicTaps;

// Resizes `in` of `in_dims` to `out` of `out_dims` (row-major f32, no element empty), one axis
// at a time over the axes whose `taps` entry is not null (the others have in == out and are not
// touched). Parallel over rows when large.
void resize_separable(const std::vector<const AxisTaps*>& taps, const std::vector<int64_t>& in_dims,
                      const std::vector<int64_t>& out_dims, const float* in, float* out);

}  // namespace hsched::cpu::resize_cubic
