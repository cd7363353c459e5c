// ONNX Resize's index arithmetic, shared by every backend that resizes (the CPU kernels and the
// OpenCL backend's host-side tables), so that they agree with each other and with ONNX Runtime:
// output coordinate -> input coordinate per coordinate_transformation_mode, and the nearest
// input index per nearest_mode. Float arithmetic as ONNX Runtime does it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hsched::resize {

enum class Coord {
  kHalfPixel,
  kHalfPixelSymmetric,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn,
  kTfCropAndResize,
};
// kSimple is ONNX Runtime's rule for Upsample and Resize-10: floor when upsampling, ceil when
// downsampling (ONNX's resize-10 test data agree).
enum class Nearest { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil, kSimple };

// The attribute value's enum (coordinate_transformation_mode, nearest_mode); nullopt when the
// value is not one ONNX defines.
std::optional<Coord> parse_coord(const std::string& name);
std::optional<Nearest> parse_nearest(const std::string& name);

// x in output coordinates -> x in input coordinates along an axis of `in` -> `out` elements with
// `scale` (out / in unless given); roi_start/roi_end only for kTfCropAndResize.
float original_coordinate(Coord mode, float x, float scale, int64_t in, int64_t out,
                          float roi_start = 0.0f, float roi_end = 1.0f);

// The nearest input index of input coordinate x (not clamped); `downsampling` only for kSimple.
int64_t nearest_index(Nearest mode, float x, bool downsampling);

// Cubic mode's taps along one axis: output index o reads the input indices index[4o, 4o+4) with
// the weights weight[4o, 4o+4). The 4 taps are floor(x)-1 .. floor(x)+2 around the input
// coordinate x, clamped to [0, in): ONNX pads the input with its edge values. With
// exclude_outside the taps beyond the edges get weight 0 and the others are scaled to sum to 1
// (all weights 0 when every tap is outside, where ONNX's reference divides 0 by 0). Weights are
// Keys' cubic convolution with coefficient a (cubic_coeff_a), computed in double.
struct CubicTaps {
  std::vector<int64_t> index;
  std::vector<float> weight;

  // Appends the taps of input coordinate x on an axis of `in` > 0 elements. Returns the input
  // index when the taps reduce to that one element (x is an integer inside the axis), so that
  // the caller can tell an axis that is not resized.
  std::optional<int64_t> add(float x, int64_t in, float a, bool exclude_outside);
};

}  // namespace hsched::resize
