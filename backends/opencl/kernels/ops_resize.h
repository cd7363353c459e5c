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
  bool linear = false;  // else nearest (or cubic)
  bool cubic = false;   // with cubic_a, exclude_outside
  float cubic_a = -0.75f;
  bool exclude_outside = false;
  resize::Coord coord = resize::Coord::kHalfPixel;               // not kTfCropAndResize
  resize::Nearest nearest = resize::Nearest::kRoundPreferFloor;  // not kSimple
  // One per axis of the input (the `scales` input, expanded over `axes`); empty: out / in.
  std::vector<float> scales;
};

// Tables for resizing `in` to `out` (equal ranks <= 6, no empty input axis with a non-empty
// output one). InvalidArgument when the shapes do not fit, a scale is not positive, or linear
// mode would interpolate along an axis other than the last two (the kernel's limit).
Result<ResizeTables> resize_plan(const ResizeMode& mode, const Shape& in, const Shape& out);

// Cubic mode (the CPU's separable passes): one pass per axis that changes, shrinking axes first
// as the CPU orders them, each with its taps (graph/resize_semantics.h). InvalidArgument as
// resize_plan.
struct CubicPass {
  size_t axis = 0;
  resize::CubicTaps taps;
};
Result<std::vector<CubicPass>> resize_cubic_plan(const ResizeMode& mode, const Shape& in,
                                                 const Shape& out);

// Runs the passes (`resize_cubic_axis`: w0 s0 + w1 s1 + w2 s2 + w3 s3 in that order, as the
// CPU), the ones before the last into per-queue scratch buffers.
Result<cl::Event> enqueue_resize_cubic(const OpKernels& ops, cl::CommandQueue& queue,
                                       const cl::Buffer& x, const Shape& x_shape,
                                       const std::vector<CubicPass>& passes, cl::Buffer& y,
                                       const Shape& y_shape, const Events& wait = {});

}  // namespace hsched::opencl
