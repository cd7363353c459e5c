// Internal to the reduction family (reduction_kernels.cpp, normalization_kernels.cpp): axis
// handling, input checks and the row/column loops they share. Not part of the kernel interface.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "backends/cpu/kernels/kernel.h"
#include "backends/cpu/kernels/parallel.h"
#include "backends/cpu/kernels/vector_clones.h"

namespace hsched::cpu::reduction {

// Independent accumulators per contiguous row: a float sum has a loop-carried dependency that
// -O3 may not reorder, so spreading it over lanes is what lets it vectorise (and it adds
// precision, each lane summing 1/kLanes of the row).
inline constexpr int kLanes = 16;
// Columns handled together when the reduced axis is strided ([outer, n, inner] with inner > 1):
// the inner loop then walks `kColumnBlock` contiguous floats per reduced index.
inline constexpr int64_t kColumnBlock = 64;
// Rows longer than this are summed in float blocks of this size, blocks added in double.
inline constexpr int64_t kSumBlock = 1024;

// parallel_range's grain is in items (rows, column blocks); this gives ~kParallelGrain elements
// of work per chunk, so short rows are batched and long rows still spread over the workers.
inline int64_t grain_for(int64_t work_per_item) {
  return std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, work_per_item));
}

inline int64_t product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end && i < dims.size(); ++i) p *= dims[i];
  return p;
}

// An ONNX axis in [-rank, rank-1] made non-negative; InvalidArgument naming the attribute.
inline Result<size_t> normalize_axis(const KernelSpec& spec, int64_t axis, size_t rank,
                                     const char* name = "axis") {
  const auto r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r) {
    return invalid_argument(node_context(spec.node) + ": attribute '" + name +
                            "' = " + std::to_string(axis) + " is out of range for rank " +
                            std::to_string(rank));
  }
  return static_cast<size_t>(axis < 0 ? axis + r : axis);
}

// A tensor seen as [outer, n, inner] around one axis (or around a flattened tail when
// `flatten_tail`: Softmax before opset 13 coerces the input to 2D at `axis`).
struct AxisLayout {
  int64_t outer = 1;
  int64_t n = 1;
  int64_t inner = 1;
};

inline AxisLayout axis_layout(const std::vector<int64_t>& dims, size_t axis,
                              bool flatten_tail = false) {
  if (flatten_tail) return {product(dims, 0, axis), product(dims, axis, dims.size()), 1};
  return {product(dims, 0, axis), dims[axis], product(dims, axis + 1, dims.size())};
}

// Checks that input `i` is present, has a static shape and one of `dtypes`.
inline Status check_input(const KernelSpec& spec, size_t i, std::initializer_list<DType> dtypes,
                          const char* what) {
  if (!spec.has_input(i)) {
    return invalid_argument(node_context(spec.node) + ": missing input " + std::to_string(i) +
                            " (" + what + ")");
  }
  const Value& v = *spec.inputs[i];
  if (!v.shape.is_static()) {
    return unsupported(
        spec, std::string("input '") + what + "' has a dynamic shape " + v.shape.to_string());
  }
  if (std::find(dtypes.begin(), dtypes.end(), v.dtype) == dtypes.end()) {
    return unsupported(spec, std::string("input '") + what + "' of dtype " +
                                 std::string(dtype_name(v.dtype)) + " is not supported");
  }
  return Status::ok();
}

// Checks that output `i` exists with `dtype` and `elements` elements (kernels write exactly that
// many, so a mismatch with the shape evaluator must stop here, not corrupt memory).
inline Status check_output(const KernelSpec& spec, size_t i, DType dtype, int64_t elements,
                           const char* what) {
  if (i >= spec.outputs.size() || spec.outputs[i] == nullptr) {
    return invalid_argument(node_context(spec.node) + ": missing output '" + what + "'");
  }
  const Value& v = *spec.outputs[i];
  if (v.dtype != dtype) {
    return invalid_argument(node_context(spec.node) + ": output '" + what + "' has dtype " +
                            std::string(dtype_name(v.dtype)) + ", expected " +
                            std::string(dtype_name(dtype)));
  }
  if (!v.shape.is_static() || v.shape.elements() != elements) {
    return invalid_argument(node_context(spec.node) + ": output '" + what + "' has shape " +
                            v.shape.to_string() + ", expected " + std::to_string(elements) +
                            " elements");
  }
  return Status::ok();
}

inline bool has_output(const KernelSpec& spec, size_t i) {
  return i < spec.outputs.size() && spec.outputs[i] != nullptr;
}

// Adds the lanes pairwise: a dependency chain of 4 adds instead of 16 (short rows, such as
// LayerNorm over 40 channels, are dominated by this), rounding no worse than a sequential sum.
inline float sum_lanes(float (&lanes)[kLanes]) {
  for (int width = kLanes / 2; width > 0; width /= 2) {
    for (int k = 0; k < width; ++k) lanes[k] += lanes[k + width];
  }
  return lanes[0];
}

// Sum of x[0, n) in double: float lanes within blocks of kSumBlock (vectorised), blocks in double,
// which keeps rows of 10^5+ elements well inside 1e-6 relative error.
inline double row_sum(const float* x, int64_t n) {
  double total = 0;
  for (int64_t b = 0; b < n; b += kSumBlock) {
    const int64_t len = std::min(kSumBlock, n - b);
    const float* p = x + b;
    float lanes[kLanes] = {};
    int64_t i = 0;
    for (; i + kLanes <= len; i += kLanes) {
      for (int k = 0; k < kLanes; ++k) lanes[k] += p[i + k];
    }
    for (int k = 0; i < len; ++i, ++k) lanes[k] += p[i];  // the tail, spread over the lanes
    total += sum_lanes(lanes);
  }
  return total;
}

// Sum of (x - c)^2 over x[0, n), as row_sum: the second pass of a two-pass variance, which does
// not cancel the way E[x^2] - E[x]^2 does when |mean| >> stddev.
inline double row_centered_sum_sq(const float* x, int64_t n, float c) {
  double total = 0;
  for (int64_t b = 0; b < n; b += kSumBlock) {
    const int64_t len = std::min(kSumBlock, n - b);
    const float* p = x + b;
    float lanes[kLanes] = {};
    int64_t i = 0;
    for (; i + kLanes <= len; i += kLanes) {
      for (int k = 0; k < kLanes; ++k) {
        const float d = p[i + k] - c;
        lanes[k] += d * d;
      }
    }
    for (int k = 0; i < len; ++i, ++k) lanes[k] += (p[i] - c) * (p[i] - c);
    total += sum_lanes(lanes);
  }
  return total;
}

// Mean and M2 (sum of squared deviations) of x[0, n), n > 0, reading x from memory once: each
// block of kSumBlock elements (in L1) gets an exact two-pass mean and M2 in float lanes, and the
// blocks are merged in double with Chan's formula. Unlike E[x^2] - E[x]^2 this does not cancel
// when |mean| >> stddev, and unlike a two-pass over the row it does not read a long row (an
// InstanceNorm channel of a 256x256 map) twice from memory.
struct Moments {
  double mean = 0;
  double m2 = 0;
};

inline Moments row_moments(const float* x, int64_t n) {
  Moments total;
  int64_t seen = 0;
  for (int64_t b = 0; b < n; b += kSumBlock) {
    const int64_t len = std::min(kSumBlock, n - b);
    const double block_mean = row_sum(x + b, len) / static_cast<double>(len);
    const double block_m2 = row_centered_sum_sq(x + b, len, static_cast<float>(block_mean));
    // row_centered_sum_sq is about the float-rounded mean; the correction is exact algebra.
    const double shift = block_mean - static_cast<float>(block_mean);
    const double m2 = std::max(0.0, block_m2 - static_cast<double>(len) * shift * shift);
    if (seen == 0) {  // the first block (the only one of most rows) needs no merge
      total = {block_mean, m2};
      seen = len;
      continue;
    }
    const double delta = block_mean - total.mean;
    const int64_t merged = seen + len;
    total.mean += delta * static_cast<double>(len) / static_cast<double>(merged);
    total.m2 += m2 + delta * delta * static_cast<double>(seen) * static_cast<double>(len) /
                         static_cast<double>(merged);
    seen = merged;
  }
  return total;
}

}  // namespace hsched::cpu::reduction

namespace hsched::cpu {
// Softmax, LogSoftmax, LayerNormalization, InstanceNormalization, BatchNormalization,
// LpNormalization (normalization_kernels.cpp); called by register_reduction_kernels.
void register_normalization_kernels(KernelRegistry& registry);
}  // namespace hsched::cpu
