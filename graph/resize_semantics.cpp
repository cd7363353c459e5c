#include "graph/resize_semantics.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace hsched::resize {
namespace {

// The cubic convolution kernel of Keys (1981) at distance d >= 0 from the sample, with
// coefficient a (ONNX's cubic_coeff_a: -0.75 as in PyTorch, -0.5 as in TensorFlow).
double cubic_weight(double d, double a) {
  if (d <= 1) return ((a + 2) * d - (a + 3)) * d * d + 1;
  if (d < 2) return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
  return 0;
}

}  // namespace

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

float original_coordinate(Coord mode, float x, float scale, int64_t in, int64_t out,
                          float roi_start, float roi_end) {
  const auto in_f = static_cast<float>(in);
  const auto out_f = static_cast<float>(out);
  switch (mode) {
    case Coord::kHalfPixel:
      return (x + 0.5f) / scale - 0.5f;
    case Coord::kHalfPixelSymmetric: {
      const float adjustment = out_f / (scale * in_f);
      const float offset = in_f / 2 * (1 - adjustment);
      return offset + (x + 0.5f) / scale - 0.5f;
    }
    case Coord::kPytorchHalfPixel:
      return out > 1 ? (x + 0.5f) / scale - 0.5f : 0.0f;
    case Coord::kAlignCorners:
      return out == 1 ? 0.0f : x * (in_f - 1) / (out_f - 1);
    case Coord::kAsymmetric:
      return x / scale;
    case Coord::kTfHalfPixelForNn:
      return (x + 0.5f) / scale;
    case Coord::kTfCropAndResize:
      return out > 1 ? roi_start * (in_f - 1) + x * (roi_end - roi_start) * (in_f - 1) / (out_f - 1)
                     : 0.5f * (roi_start + roi_end) * (in_f - 1);
  }
  return x;
}

int64_t nearest_index(Nearest mode, float x, bool downsampling) {
  // A coordinate within a few float steps of a half is a tie: ONNX Runtime takes 7 -> 2
  // asymmetric's 1 / (2/7) = 3.4999998 as 3.5 (round_prefer_ceil gives 4) and 11 -> 13
  // tf_half_pixel_for_nn's 6.5 / (13/11) = 5.5000002 as 5.5 (round_prefer_floor gives 5).
  // 4 steps of |x| fit ONNX Runtime on every nearest_mode and coordinate mode for sizes 1 to 15.
  const float tolerance = 4 * std::numeric_limits<float>::epsilon() * std::max(1.0f, std::fabs(x));
  const bool tie = std::fabs(x - std::floor(x) - 0.5f) <= tolerance;
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

std::optional<int64_t> CubicTaps::add(float x, int64_t in, float a, bool exclude_outside) {
  // Beyond [-3, in + 2] every tap is clamped to the same edge element (or excluded); clamping x
  // there first keeps floor(x) inside int64 for any scale.
  const double xc = std::clamp(static_cast<double>(x), -3.0, static_cast<double>(in) + 2.0);
  const double base = std::floor(xc);
  const double r = xc - base;  // in [0, 1)
  const auto first = static_cast<int64_t>(base) - 1;
  double w[4] = {cubic_weight(1 + r, a), cubic_weight(r, a), cubic_weight(1 - r, a),
                 cubic_weight(2 - r, a)};
  if (exclude_outside) {
    double sum = 0;
    for (int t = 0; t < 4; ++t) {
      const int64_t i = first + t;
      if (i < 0 || i >= in) w[t] = 0;
      sum += w[t];
    }
    for (double& v : w) v = sum == 0 ? 0 : v / sum;
  }
  for (int t = 0; t < 4; ++t) {
    index.push_back(std::clamp<int64_t>(first + t, 0, in - 1));
    weight.push_back(static_cast<float>(w[t]));
  }
  if (r == 0 && first + 1 >= 0 && first + 1 < in && w[1] == 1 && w[0] == 0 && w[2] == 0 &&
      w[3] == 0) {
    return first + 1;
  }
  return std::nullopt;
}

}  // namespace hsched::resize
