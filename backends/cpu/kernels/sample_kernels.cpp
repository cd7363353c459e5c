// Sampling at computed positions, f32: GridSample (opset 16: 4-D input, a grid of normalized
// (x, y) points; bilinear, nearest or bicubic; zeros, border or reflection padding) and RoiAlign
// (opsets 10 and 16: average or max of bilinear samples over each bin of each region).
// GridSample follows PyTorch's grid_sample, which ONNX's test data come from; RoiAlign follows
// ONNX Runtime (whose max mode takes the largest weighted corner of each sample). Each factory
// checks every shape and attribute it reads against the node's static shapes; data-dependent
// positions (grid values, regions, batch indices) are bounds-checked as they are used, so no
// value of the data reads outside the input.
#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "backends/cpu/kernels/kernel.h"
#include "backends/cpu/kernels/parallel.h"
#include "backends/cpu/kernels/reduction_common.h"

namespace hsched::cpu {
namespace {

using Inputs = std::span<const Tensor* const>;
using Outputs = std::span<Tensor* const>;
using KernelResult = Result<std::unique_ptr<Kernel>>;

// Output 0 present, f32 and exactly `dims`.
Status check_output_dims(const KernelSpec& spec, const std::vector<int64_t>& dims) {
  HSCHED_RETURN_IF_ERROR(
      reduction::check_output(spec, 0, DType::kF32, reduction::product(dims, 0, dims.size()), "Y"));
  if (spec.out_dims(0) != dims) {
    return invalid_node(
        spec, "output has shape " + dims_text(spec.out_dims(0)) + ", expected " + dims_text(dims));
  }
  return Status::ok();
}

// The cubic convolution weights of the 4 taps floor(x)-1 .. floor(x)+2 at fraction t of x,
// with a = -0.75 (PyTorch's bicubic).
std::array<float, 4> cubic_weights(float t) {
  constexpr float a = -0.75f;
  const auto near = [](float d) { return ((a + 2) * d - (a + 3)) * d * d + 1; };  // |d| <= 1
  const auto far = [](float d) {
    return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
  };  // 1 < |d| < 2
  return {far(t + 1), near(t), near(1 - t), far(2 - t)};
}

// ---- GridSample ---------------------------------------------------------------------------------

enum class SampleMode { kBilinear, kNearest, kBicubic };
enum class Padding { kZeros, kBorder, kReflection };

// One axis of the input (`size` elements) as GridSample sees it.
struct GridAxis {
  int64_t size = 1;
  bool align_corners = false;
  Padding padding = Padding::kZeros;

  // Normalized [-1, 1] -> input coordinates: the extreme values are the centres of the corner
  // pixels with align_corners, else their outer edges.
  float unnormalize(float v) const {
    const auto n = static_cast<float>(size);
    return align_corners ? (v + 1) / 2 * (n - 1) : ((v + 1) * n - 1) / 2;
  }

  // Mirrors x into [low, high] (reflection padding about the corner centres or the outer edges).
  static float reflect(float x, float twice_low, float twice_high) {
    if (twice_low == twice_high) return 0;
    const float low = twice_low / 2;
    const float span = (twice_high - twice_low) / 2;
    x = std::fabs(x - low);
    const float extra = std::fmod(x, span);
    const float flips = std::floor(x / span);
    return std::fmod(flips, 2.0f) == 0 ? extra + low : span - extra + low;
  }

  // Border and reflection padding move a coordinate into the axis; zeros leaves it.
  float pad(float x) const {
    const float last = static_cast<float>(size - 1);
    if (padding == Padding::kZeros) return x;
    if (padding == Padding::kReflection) {
      x = align_corners ? reflect(x, 0, 2 * last) : reflect(x, -1, 2 * last + 1);
    }
    return std::isnan(x) ? x : std::clamp(x, 0.0f, last);
  }

  // Whether integer position i (a float, maybe huge or NaN) is an element of the axis.
  bool contains(float i) const { return i >= 0 && i < static_cast<float>(size); }
};

struct GridSampleParams {
  SampleMode mode = SampleMode::kBilinear;
  int64_t n = 0, c = 0;
  GridAxis y, x;  // the input's H and W
  int64_t h_out = 0, w_out = 0;
};

// One input element a sample reads, and its weight; taps outside the input have weight 0.
struct Tap {
  int64_t offset = 0;  // in the channel plane
  float weight = 0;
};

// The taps of the sample at grid point (gx, gy): 1, 4 or 16 of them.
int sample_taps(const GridSampleParams& p, float gx, float gy, Tap* taps) {
  const float fx = p.x.unnormalize(gx), fy = p.y.unnormalize(gy);
  auto tap = [&](float ix, float iy, float weight) {
    const bool inside = p.x.contains(ix) && p.y.contains(iy);
    return inside ? Tap{static_cast<int64_t>(iy) * p.x.size + static_cast<int64_t>(ix), weight}
                  : Tap{};
  };
  if (p.mode == SampleMode::kNearest) {
    taps[0] = tap(std::nearbyint(p.x.pad(fx)), std::nearbyint(p.y.pad(fy)), 1.0f);
    return 1;
  }
  if (p.mode == SampleMode::kBilinear) {
    const float ix = p.x.pad(fx), iy = p.y.pad(fy);
    const float x0 = std::floor(ix), y0 = std::floor(iy);
    const float tx = ix - x0, ty = iy - y0;
    taps[0] = tap(x0, y0, (1 - tx) * (1 - ty));
    taps[1] = tap(x0 + 1, y0, tx * (1 - ty));
    taps[2] = tap(x0, y0 + 1, (1 - tx) * ty);
    taps[3] = tap(x0 + 1, y0 + 1, tx * ty);
    return 4;
  }
  // Bicubic pads each of the 16 taps' positions rather than the sample's.
  const float x0 = std::floor(fx), y0 = std::floor(fy);
  const auto wx = cubic_weights(fx - x0), wy = cubic_weights(fy - y0);
  for (int j = 0; j < 4; ++j) {
    for (int i = 0; i < 4; ++i) {
      taps[4 * j + i] = tap(p.x.pad(x0 - 1 + static_cast<float>(i)),
                            p.y.pad(y0 - 1 + static_cast<float>(j)), wx[i] * wy[j]);
    }
  }
  return 16;
}

Status grid_sample(const GridSampleParams& p, const float* x, const float* grid, float* y) {
  const int64_t plane_in = p.y.size * p.x.size;
  const int64_t plane_out = p.h_out * p.w_out;
  parallel_range(
      p.n * p.h_out,
      [&](int64_t begin, int64_t end) {
        std::vector<Tap> taps(static_cast<size_t>(16 * p.w_out));
        for (int64_t r = begin; r < end; ++r) {
          const int64_t b = r / p.h_out, row = r % p.h_out;
          const float* g = grid + r * p.w_out * 2;
          int count = 0;
          for (int64_t w = 0; w < p.w_out; ++w) {
            count = sample_taps(p, g[2 * w], g[2 * w + 1], taps.data() + 16 * w);
          }
          for (int64_t ch = 0; ch < p.c; ++ch) {
            const float* src = x + (b * p.c + ch) * plane_in;
            float* dst = y + (b * p.c + ch) * plane_out + row * p.w_out;
            for (int64_t w = 0; w < p.w_out; ++w) {
              const Tap* t = taps.data() + 16 * w;
              float v = 0;
              for (int k = 0; k < count; ++k) v += t[k].weight * src[t[k].offset];
              dst[w] = v;
            }
          }
        }
      },
      std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, p.w_out * p.c * 4)));
  return Status::ok();
}

KernelResult make_grid_sample(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(reduction::check_input(spec, 0, {DType::kF32}, "X"));
  HSCHED_RETURN_IF_ERROR(reduction::check_input(spec, 1, {DType::kF32}, "grid"));
  const auto& xd = spec.in_dims(0);
  const auto& gd = spec.in_dims(1);
  if (xd.size() != 4)
    return unsupported(spec,
                       "input X of rank " + std::to_string(xd.size()) + " (only 4-D [N, C, H, W])");
  if (gd.size() != 4 || gd[0] != xd[0] || gd[3] != 2) {
    return invalid_node(spec, "grid has shape " + dims_text(gd) + ", expected [" +
                                  std::to_string(xd[0]) + ", H_out, W_out, 2]");
  }
  GridSampleParams p;
  p.n = xd[0];
  p.c = xd[1];
  p.h_out = gd[1];
  p.w_out = gd[2];
  HSCHED_RETURN_IF_ERROR(check_output_dims(spec, {p.n, p.c, p.h_out, p.w_out}));
  const std::string mode = spec.node.attr_string("mode", "bilinear");
  if (mode == "bilinear" || mode == "linear") {
    p.mode = SampleMode::kBilinear;
  } else if (mode == "nearest") {
    p.mode = SampleMode::kNearest;
  } else if (mode == "bicubic" || mode == "cubic") {
    p.mode = SampleMode::kBicubic;
  } else {
    return invalid_node(spec, "mode '" + mode + "' is not bilinear, nearest or bicubic");
  }
  const std::string padding = spec.node.attr_string("padding_mode", "zeros");
  Padding pad;
  if (padding == "zeros") {
    pad = Padding::kZeros;
  } else if (padding == "border") {
    pad = Padding::kBorder;
  } else if (padding == "reflection") {
    pad = Padding::kReflection;
  } else {
    return invalid_node(spec, "padding_mode '" + padding + "' is not zeros, border or reflection");
  }
  const bool align = spec.node.attr_int("align_corners", 0) != 0;
  p.y = {xd[2], align, pad};
  p.x = {xd[3], align, pad};
  if ((xd[2] == 0 || xd[3] == 0) && p.n * p.c * p.h_out * p.w_out != 0) {
    return invalid_node(spec, "samples an empty input plane " + dims_text(xd));
  }
  return make_kernel([p](Inputs in, Outputs out) {
    return grid_sample(p, in[0]->values<float>().data(), in[1]->values<float>().data(),
                       out[0]->values<float>().data());
  });
}

// ---- RoiAlign -----------------------------------------------------------------------------------

struct RoiAlignParams {
  std::string context;
  bool max_mode = false;
  bool half_pixel = true;  // opset 16's default; opset 10 shifts by nothing ("output_half_pixel")
  int64_t n = 0, c = 0, h = 0, w = 0;
  int64_t rois = 0, out_h = 1, out_w = 1;
  int64_t sampling_ratio = 0;  // samples per bin side; 0: ceil(roi side / bins)
  float spatial_scale = 1.0f;
};

// Samples per bin (and per bin side) above which a region is refused: an adaptive grid over a
// region of 1e9 pixels would otherwise run for hours.
constexpr double kMaxSamplesPerBin = double(int64_t{1} << 24);
constexpr double kMaxSamplesPerSide = double(int64_t{1} << 20);

// Where one sample coordinate falls along an axis, as ONNX Runtime's RoiAlign computes it: the
// two neighbouring indices and their weights; `valid` false for a coordinate more than one pixel
// outside the axis (the sample then counts as 0). Bilinear weights are products of these.
struct AxisSample {
  int64_t low = 0, high = 0;
  float w_low = 0, w_high = 0;
  bool valid = false;
};

AxisSample axis_sample(double v, int64_t size) {
  AxisSample s;
  if (v < -1.0 || v > static_cast<double>(size)) return s;
  s.valid = true;
  v = std::max(v, 0.0);
  s.low = static_cast<int64_t>(v);
  s.high = s.low + 1;
  if (s.low >= size - 1) {
    s.low = s.high = size - 1;
    v = static_cast<double>(s.low);
  }
  const double l = v - static_cast<double>(s.low);
  s.w_low = static_cast<float>(1 - l);
  s.w_high = static_cast<float>(l);
  return s;
}

// One region's samples, separable: `ys` holds grid_h samples for each of the out_h bin rows,
// `xs` grid_w for each of the out_w bin columns.
struct RegionSamples {
  std::vector<AxisSample> ys, xs;
  int64_t grid_h = 0, grid_w = 0;
};

Status region_samples(const RoiAlignParams& p, const float* roi, RegionSamples& s) {
  for (int k = 0; k < 4; ++k) {
    if (!std::isfinite(roi[k])) {
      return invalid_argument(p.context + ": a region has a non-finite coordinate");
    }
  }
  const double offset = p.half_pixel ? 0.5 : 0.0;
  const double scale = p.spatial_scale;
  const double x0 = roi[0] * scale - offset, y0 = roi[1] * scale - offset;
  double roi_w = roi[2] * scale - offset - x0, roi_h = roi[3] * scale - offset - y0;
  if (!p.half_pixel) {  // the legacy mode forces regions of at least one pixel
    roi_w = std::max(roi_w, 1.0);
    roi_h = std::max(roi_h, 1.0);
  }
  const auto out_h = static_cast<double>(p.out_h), out_w = static_cast<double>(p.out_w);
  const double grid_h = p.sampling_ratio > 0 ? static_cast<double>(p.sampling_ratio)
                                             : std::max(0.0, std::ceil(roi_h / out_h));
  const double grid_w = p.sampling_ratio > 0 ? static_cast<double>(p.sampling_ratio)
                                             : std::max(0.0, std::ceil(roi_w / out_w));
  if (!(grid_h <= kMaxSamplesPerSide && grid_w <= kMaxSamplesPerSide &&
        grid_h * grid_w <= kMaxSamplesPerBin)) {
    return invalid_argument(p.context + ": a region needs " + std::to_string(grid_h) + " x " +
                            std::to_string(grid_w) + " samples per bin, more than allowed");
  }
  s.grid_h = static_cast<int64_t>(grid_h);
  s.grid_w = static_cast<int64_t>(grid_w);
  auto fill = [](std::vector<AxisSample>& out, double start, double length, int64_t bins,
                 int64_t grid, int64_t size) {
    const double bin = length / static_cast<double>(bins);
    out.clear();
    for (int64_t b = 0; b < bins; ++b) {
      for (int64_t i = 0; i < grid; ++i) {
        const double v = start + static_cast<double>(b) * bin +
                         (static_cast<double>(i) + 0.5) * bin / static_cast<double>(grid);
        out.push_back(axis_sample(v, size));
      }
    }
  };
  fill(s.ys, y0, roi_h, p.out_h, s.grid_h, p.h);
  fill(s.xs, x0, roi_w, p.out_w, s.grid_w, p.w);
  return Status::ok();
}

// Bin (ph, pw) of one channel plane: the average of its samples, or (max mode) the largest of
// each sample's four weighted corners, the largest over the samples.
float roi_bin(const RoiAlignParams& p, const RegionSamples& s, const float* src, int64_t ph,
              int64_t pw) {
  float value = 0;
  bool first = true;
  for (int64_t iy = 0; iy < s.grid_h; ++iy) {
    const AxisSample& y = s.ys[static_cast<size_t>(ph * s.grid_h + iy)];
    for (int64_t ix = 0; ix < s.grid_w; ++ix) {
      const AxisSample& x = s.xs[static_cast<size_t>(pw * s.grid_w + ix)];
      float corners[4] = {0, 0, 0, 0};
      if (y.valid && x.valid) {
        const float* lo = src + y.low * p.w;
        const float* hi = src + y.high * p.w;
        corners[0] = y.w_low * x.w_low * lo[x.low];
        corners[1] = y.w_low * x.w_high * lo[x.high];
        corners[2] = y.w_high * x.w_low * hi[x.low];
        corners[3] = y.w_high * x.w_high * hi[x.high];
      }
      if (p.max_mode) {
        const float v =
            std::max(std::max(corners[0], corners[1]), std::max(corners[2], corners[3]));
        value = first ? v : std::max(value, v);
        first = false;
      } else {
        value += corners[0] + corners[1] + corners[2] + corners[3];
      }
    }
  }
  const int64_t count = s.grid_h * s.grid_w;
  return p.max_mode || count == 0 ? value : value / static_cast<float>(count);
}

Status roi_align(const RoiAlignParams& p, const float* x, const float* rois, const int64_t* batch,
                 float* y) {
  for (int64_t r = 0; r < p.rois; ++r) {
    if (batch[r] < 0 || batch[r] >= p.n) {
      return invalid_argument(p.context + ": batch_indices[" + std::to_string(r) +
                              "] = " + std::to_string(batch[r]) + " is outside [0, " +
                              std::to_string(p.n) + ")");
    }
  }
  const int64_t bins = p.out_h * p.out_w;
  const int64_t plane = p.h * p.w;
  // Regions one after another (each has its own samples), channels in parallel.
  RegionSamples samples;
  for (int64_t r = 0; r < p.rois; ++r) {
    HSCHED_RETURN_IF_ERROR(region_samples(p, rois + 4 * r, samples));
    const float* image = x + batch[r] * p.c * plane;
    float* out = y + r * p.c * bins;
    const int64_t work = bins * std::max<int64_t>(1, samples.grid_h * samples.grid_w) * 8;
    parallel_range(
        p.c,
        [&](int64_t begin, int64_t end) {
          for (int64_t ch = begin; ch < end; ++ch) {
            for (int64_t bin = 0; bin < bins; ++bin) {
              out[ch * bins + bin] =
                  roi_bin(p, samples, image + ch * plane, bin / p.out_w, bin % p.out_w);
            }
          }
        },
        std::max<int64_t>(1, kParallelGrain / work));
  }
  return Status::ok();
}

KernelResult make_roi_align(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(reduction::check_input(spec, 0, {DType::kF32}, "X"));
  HSCHED_RETURN_IF_ERROR(reduction::check_input(spec, 1, {DType::kF32}, "rois"));
  HSCHED_RETURN_IF_ERROR(reduction::check_input(spec, 2, {DType::kI64}, "batch_indices"));
  const auto& xd = spec.in_dims(0);
  const auto& rd = spec.in_dims(1);
  const auto& bd = spec.in_dims(2);
  if (xd.size() != 4) return invalid_node(spec, "input X has shape " + dims_text(xd) + ", not 4-D");
  if (rd.size() != 2 || rd[1] != 4) {
    return invalid_node(spec, "rois has shape " + dims_text(rd) + ", expected [num_rois, 4]");
  }
  if (bd.size() != 1 || bd[0] != rd[0]) {
    return invalid_node(spec, "batch_indices has shape " + dims_text(bd) + ", expected [" +
                                  std::to_string(rd[0]) + "]");
  }
  RoiAlignParams p;
  p.context = node_context(spec.node);
  p.n = xd[0];
  p.c = xd[1];
  p.h = xd[2];
  p.w = xd[3];
  p.rois = rd[0];
  p.out_h = spec.node.attr_int("output_height", 1);
  p.out_w = spec.node.attr_int("output_width", 1);
  p.sampling_ratio = spec.node.attr_int("sampling_ratio", 0);
  p.spatial_scale = spec.node.attr_float("spatial_scale", 1.0f);
  if (p.out_h <= 0 || p.out_w <= 0) {
    return invalid_node(spec, "output_height and output_width must be positive");
  }
  if (p.sampling_ratio < 0 || p.sampling_ratio > 4096) {
    return invalid_node(
        spec, "sampling_ratio " + std::to_string(p.sampling_ratio) + " is outside [0, 4096]");
  }
  if (!std::isfinite(p.spatial_scale)) return invalid_node(spec, "spatial_scale is not finite");
  const std::string mode = spec.node.attr_string("mode", "avg");
  if (mode != "avg" && mode != "max")
    return invalid_node(spec, "mode '" + mode + "' is not avg or max");
  p.max_mode = mode == "max";
  const std::string coord = spec.node.attr_string(
      "coordinate_transformation_mode", spec.opset < 16 ? "output_half_pixel" : "half_pixel");
  if (coord != "half_pixel" && coord != "output_half_pixel") {
    return invalid_node(spec, "coordinate_transformation_mode '" + coord +
                                  "' is not half_pixel or output_half_pixel");
  }
  p.half_pixel = coord == "half_pixel";
  HSCHED_RETURN_IF_ERROR(check_output_dims(spec, {p.rois, p.c, p.out_h, p.out_w}));
  if (p.rois > 0 && p.c > 0 && p.h * p.w == 0) {
    return invalid_node(spec, "samples an empty input plane " + dims_text(xd));
  }
  return make_kernel([p](Inputs in, Outputs out) {
    return roi_align(p, in[0]->values<float>().data(), in[1]->values<float>().data(),
                     in[2]->values<int64_t>().data(), out[0]->values<float>().data());
  });
}

}  // namespace

void register_sample_kernels(KernelRegistry& registry) {
  registry.add("GridSample", make_grid_sample);
  registry.add("RoiAlign", make_roi_align);
}

}  // namespace hsched::cpu
