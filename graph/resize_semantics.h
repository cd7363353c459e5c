// ONNX Resize's index arithmetic, shared by every backend that resizes (the CPU kernels and the
// OpenCL backend's host-side tables), so that they agree with each other and with ONNX Runtime:
// output coordinate -> input coordinate per coordinate_transformation_mode, and the nearest
// input index per nearest_mode. Float arithmetic as ONNX Runtime does it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

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

}  // namespace hsched::resize
