// Resize's host-side plan: ONNX coordinate transforms and nearest rounding turned into per-axis
// index tables (ResizeTables, ops_spatial.h) that the `resize` kernel reads. The arithmetic is
// the CPU backend's (float coordinates as ONNX Runtime computes them, clamped to the input), so
// both backends pick the same input elements.
#pragma once

#include <string>
#include <vector>

#include "backends/opencl/kernels/ops_spatial.h"
#include "graph/resize_semantics.h"

namespace hsched::opencl {

struct ResizeMode {
  bool linear = false;                                           // else nearest
  resize::Coord coord = resize::Coord::kHalfPixel;               // not kTfCropAndResize
  resize::Nearest nearest = resize::Nearest::kRoundPreferFloor;  // not kSimple
  // One per axis of the input (the `scales` input, expanded over `axes`); empty: out / in.
  std::vector<float> scales;
};

// Tables for resizing `in` to `out` (equal ranks <= 6, no empty input axis with a non-empty
// output one). InvalidArgument when the shapes do not fit, a scale is not positive, or linear
// mode would interpolate along an axis other than the last two (the kernel's limit).
Result<ResizeTables> resize_plan(const ResizeMode& mode, const Shape& in, const Shape& out);

}  // namespace hsched::opencl
