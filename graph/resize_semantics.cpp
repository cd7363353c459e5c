#include "graph/resize_semantics.h"

#include <cmath>

namespace hsched::resize {

std::optional<Coord> parse_coord(const std::string& name) {
  if (name == "half_pixel") return Coord::kHalfPixel;
  if (name == "half_pixel_symmetric") return Coord::kHalfPixelSymmetric;
  if (name == "pytorch_half_pixel") return Coord::kPytorchHalfPixel;
  if (name == "align_corners") return Coord::kAlignCorners;
  if (name == "asymmetric") return Coord::kAsymmetric;
  if (name == "tf_half_pixel_for_nn") return Coord::kTfHalfPixelForNn;
  if (name == "tf_crop_and_resize") return Coord::kTfCropAndResize;
  return std::nullopt;
}

std::optional<Nearest> parse_nearest(const std::string& name) {
  if (name == "round_prefer_floor") return Nearest::kRoundPreferFloor;
  if (name == "round_prefer_ceil") return Nearest::kRoundPreferCeil;
  if (name == "floor") return Nearest::kFloor;
  if (name == "ceil") return Nearest::kCeil;
  return std::nullopt;
}

double original_coordinate(Coord mode, double x, double scale, int64_t in, int64_t out,
                           double roi_start, double roi_end) {
  const auto in_f = static_cast<double>(in);
  const auto out_f = static_cast<double>(out);
  switch (mode) {
    case Coord::kHalfPixel:
      return (x + 0.5) / scale - 0.5;
    case Coord::kHalfPixelSymmetric: {
      const double adjustment = out_f / (scale * in_f);
      const double offset = in_f / 2 * (1 - adjustment);
      return offset + (x + 0.5) / scale - 0.5;
    }
    case Coord::kPytorchHalfPixel:
      return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
    case Coord::kAlignCorners:
      return out == 1 ? 0.0 : x * (in_f - 1) / (out_f - 1);
    case Coord::kAsymmetric:
      return x / scale;
    case Coord::kTfHalfPixelForNn:
      return (x + 0.5) / scale;
    case Coord::kTfCropAndResize:
      return out > 1 ? roi_start * (in_f - 1) + x * (roi_end - roi_start) * (in_f - 1) / (out_f - 1)
                     : 0.5 * (roi_start + roi_end) * (in_f - 1);
  }
  return x;
}

int64_t nearest_index(Nearest mode, float x, bool downsampling) {
  const bool tie = x - std::floor(x) == 0.5f;
  switch (mode) {
    case Nearest::kRoundPreferFloor:
      return static_cast<int64_t>(tie ? std::floor(x) : std::round(x));
    case Nearest::kRoundPreferCeil:
      return static_cast<int64_t>(tie ? std::ceil(x) : std::round(x));
    case Nearest::kFloor:
      return static_cast<int64_t>(std::floor(x));
    case Nearest::kCeil:
      return static_cast<int64_t>(std::ceil(x));
    case Nearest::kSimple:
      return downsampling ? static_cast<int64_t>(std::ceil(x)) : static_cast<int64_t>(x);
  }
  return 0;
}

}  // namespace hsched::resize
