// Resize's host-side plan: ONNX coordinate transforms and nearest rounding turned into per-axis
// index tables (ResizeTables, ops_spatial.h) that the `resize` kernel reads. The arithmetic is
// the CPU backend's (float coordinates as ONNX Runtime computes them, clamped to the input), so
// both backends pick the same input elements.
#pragma once

#include <string>
#include <vector>

#include "backends/opencl/ops_spatial.h"

namespace hsched::opencl {

enum class ResizeCoord {
  kHalfPixel,
  kHalfPixelSymmetric,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn,
};
enum class ResizeNearest { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };

struct ResizeMode {
  bool linear = false;  // else nearest
  ResizeCoord coord = ResizeCoord::kHalfPixel;
  ResizeNearest nearest = ResizeNearest::kRoundPreferFloor;
  // One per axis of the input (the `scales` input, expanded over `axes`); empty: out / in.
  std::vector<float> scales;
};

// The ONNX attribute value's enum; false when the value is not one of these.
bool parse_resize_coord(const std::string& name, ResizeCoord* coord);
bool parse_resize_nearest(const std::string& name, ResizeNearest* nearest);

// Tables for resizing `in` to `out` (equal ranks <= 6, no empty input axis with a non-empty
// output one). InvalidArgument when the shapes do not fit, a scale is not positive, or linear
// mode would interpolate along an axis other than the last two (the kernel's limit).
Result<ResizeTables> resize_plan(const ResizeMode& mode, const Shape& in, const Shape& out);

}  // namespace hsched::opencl
