// ONNX Slice's index arithmetic, shared by every backend that slices (the CPU kernels' strided
// views and the OpenCL backend's strided copy), so that they clamp alike.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "hsched/status.h"

namespace hsched {

// One input axis of a Slice: its first index read, the step between indices, how many.
struct SliceAxis {
  int64_t begin = 0;
  int64_t step = 1;
  int64_t count = 0;
};

// The Slice of a tensor of `dims` by starts and ends (axes default to 0, 1, ...; steps to 1):
// one SliceAxis per axis of dims, an axis not sliced whole (0, 1, its dim). Starts and ends
// clamp as ONNX says: to [0, dim] for positive steps and [-1, dim - 1] for negative ones
// (INT64_MAX ends and INT64_MIN starts are common in exported models). InvalidArgument, the
// detail only, when the lengths differ, an axis is out of range or repeated, or a step is 0.
Result<std::vector<SliceAxis>> slice_axes(const std::vector<int64_t>& dims,
                                          const std::vector<int64_t>& starts,
                                          const std::vector<int64_t>& ends,
                                          std::optional<std::vector<int64_t>> axes,
                                          std::optional<std::vector<int64_t>> steps);

}  // namespace hsched
