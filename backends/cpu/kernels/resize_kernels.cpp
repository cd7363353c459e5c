// Resize (opsets 10-19) and Upsample (7-9): nearest for any dtype, linear (N-linear) and cubic
// (resize_cubic.cpp) for f32. Follows ONNX Runtime's arithmetic (float coordinates, clamping,
// nearest rounding), so outputs match models' reference data bit for bit in nearest mode. The
// output shape is static; the per-axis scale used in coordinate transforms is the `scales` input
// when given (ONNX uses it rather than out/in), else out/in.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>

#include "backends/cpu/kernels/layout_util.h"
#include "backends/cpu/kernels/post_ops.h"
#include "backends/cpu/kernels/resize_cubic.h"
#include "graph/resize_semantics.h"

namespace hsched::cpu {
namespace {

using KernelResult = Result<std::unique_ptr<Kernel>>;

using resize::Coord;
using resize::Nearest;
using resize::nearest_index;
using resize::original_coordinate;

enum class Mode { kNearest, kLinear, kCubic };

// One output axis: the input index (nearest: i0; linear: i0, i1 and the weight of i1; cubic: the
// taps in `cubic`, i0 only where they reduce to one element) each output index reads; `outside`
// marks tf_crop_and_resize coordinates that get the extrapolation value.
struct AxisMap {
  std::vector<int64_t> i0, i1;
  std::vector<float> w1;
  resize_cubic::AxisTaps cubic;
  std::vector<uint8_t> outside;
  bool identity = true;
  bool any_outside = false;
  int64_t repeat = 0;  // nearest: k when output index o reads o / k (integer upsampling), else 0
};

class ResizeKernel final : public Kernel {
 public:
  static KernelResult create(const KernelSpec& spec) {
    HSCHED_RETURN_IF_ERROR(check_static_shapes(spec));
    auto k = std::make_unique<ResizeKernel>();
    k->context_ = node_context(spec.node);
    k->in_dims_ = spec.in_dims(0);
    k->out_dims_ = spec.out_dims(0);
    k->dtype_ = spec.inputs[0]->dtype;
    if (k->in_dims_.size() != k->out_dims_.size()) return invalid_node(spec, "output rank differs");
    for (size_t a = 0; a < k->in_dims_.size(); ++a) {
      if (k->in_dims_[a] == 0 && k->out_dims_[a] != 0)
        return invalid_node(spec, "empty input axis");
    }
    const bool legacy = spec.node.op_type == "Upsample" || spec.opset < 11;
    const std::string mode = spec.node.attr_string("mode", "nearest");
    if (mode == "linear" || mode == "bilinear" || mode == "cubic") {
      k->mode_ = mode == "cubic" ? Mode::kCubic : Mode::kLinear;
      if (k->dtype_ != DType::kF32) return unsupported(spec, mode + " mode for non-f32 data");
      if (legacy && k->mode_ == Mode::kCubic)
        return unsupported(spec, "cubic mode before opset 11");
      k->cubic_a_ = spec.node.attr_float("cubic_coeff_a", -0.75f);
      k->exclude_outside_ = spec.node.attr_int("exclude_outside", 0) != 0;
      if (!std::isfinite(k->cubic_a_)) return invalid_node(spec, "cubic_coeff_a is not finite");
    } else if (mode != "nearest") {
      return unsupported(spec, "mode '" + mode + "'");
    }
    if (legacy) {
      k->coord_ = Coord::kAsymmetric;
      k->nearest_ = Nearest::kSimple;
    } else {
      const std::string coord =
          spec.node.attr_string("coordinate_transformation_mode", "half_pixel");
      const std::string nearest = spec.node.attr_string("nearest_mode", "round_prefer_floor");
      const auto c = resize::parse_coord(coord);
      const auto n = resize::parse_nearest(nearest);
      if (!c) return unsupported(spec, "coordinate_transformation_mode '" + coord + "'");
      if (!n) return unsupported(spec, "nearest_mode '" + nearest + "'");
      k->coord_ = *c;
      k->nearest_ = *n;
      if (spec.node.attr_int("antialias", 0) != 0) return unsupported(spec, "antialias");
      if (spec.node.attr_string("keep_aspect_ratio_policy", "stretch") != "stretch") {
        return unsupported(spec, "keep_aspect_ratio_policy other than 'stretch'");
      }
      if (spec.node.has_attr("axes")) {
        k->axes_.emplace();
        for (int64_t a : spec.node.attr_ints("axes")) {
          HSCHED_ASSIGN_OR_RETURN(const int64_t axis, normalize_axis(spec, a, k->in_dims_.size()));
          k->axes_->push_back(axis);
        }
      }
    }
    if (input_channels_last(spec.node, 0)) HSCHED_RETURN_IF_ERROR(k->use_channels_last(spec));
    encode_scalar(spec.node.attr_float("extrapolation_value", 0.0f), k->dtype_, k->extrapolation_);
    k->extrapolation_f_ = spec.node.attr_float("extrapolation_value", 0.0f);
    // Where roi and scales come from; -1: not an input of this op and opset.
    k->scales_input_ = spec.node.op_type == "Upsample" && spec.opset < 9 ? -1 : legacy ? 1 : 2;
    k->roi_input_ = k->coord_ == Coord::kTfCropAndResize ? 1 : -1;  // roi matters to no other mode
    std::vector<float> scales, roi;
    if (k->scales_input_ < 0) {
      const auto it = spec.node.attributes.find("scales");
      if (it != spec.node.attributes.end()) {
        if (const auto* v = std::get_if<std::vector<float>>(&it->second)) scales = *v;
      }
    }
    for (int input : {k->scales_input_, k->roi_input_}) {
      if (input < 0 || !spec.has_input(static_cast<size_t>(input))) continue;
      const Tensor* t = spec.constant(static_cast<size_t>(input));
      if (t == nullptr) return std::unique_ptr<Kernel>(std::move(k));  // planned on each run
      HSCHED_ASSIGN_OR_RETURN(auto values,
                              read_floats(*t, k->context_ + ": input " + std::to_string(input)));
      (input == k->scales_input_ ? scales : roi) = std::move(values);
    }
    HSCHED_ASSIGN_OR_RETURN(auto plan, k->make_plan(scales, roi));
    k->plan_ = std::move(plan);
    return std::unique_ptr<Kernel>(std::move(k));
  }

  Status run(std::span<const Tensor* const> in, std::span<Tensor* const> out) override {
    if (plan_) return resize(*plan_, *in[0], *out[0]);
    std::vector<float> scales, roi;
    for (int input : {scales_input_, roi_input_}) {
      const auto i = static_cast<size_t>(input);
      if (input < 0 || i >= in.size() || in[i] == nullptr) continue;
      HSCHED_ASSIGN_OR_RETURN(auto values,
                              read_floats(*in[i], context_ + ": input " + std::to_string(input)));
      (input == scales_input_ ? scales : roi) = std::move(values);
    }
    HSCHED_ASSIGN_OR_RETURN(const auto plan, make_plan(scales, roi));
    return resize(plan, *in[0], *out[0]);
  }

 private:
  // The program keeps this 4-D activation channels-last (NHWC) on both sides: resize the
  // physical [N, H, W, C] array instead, the scales and roi (given for logical N, C, H, W or for
  // `axes`) mapped onto the physical axes.
  Status use_channels_last(const KernelSpec& spec) {
    if (in_dims_.size() != 4 || !output_channels_last(spec.node, 0)) {
      return invalid_node(spec, "channels-last needs 4-D input and output in the same layout");
    }
    in_dims_ = channels_last_dims(in_dims_);
    out_dims_ = channels_last_dims(out_dims_);
    std::vector<int64_t> axes = axes_.value_or(std::vector<int64_t>{0, 1, 2, 3});
    for (int64_t& a : axes) a = channels_last_axis(a);
    axes_ = std::move(axes);
    return Status::ok();
  }

  // Per-axis scale and roi (expanding `axes` when given), then the index tables.
  Result<std::vector<AxisMap>> make_plan(const std::vector<float>& scales_in,
                                         const std::vector<float>& roi_in) const {
    const size_t rank = in_dims_.size();
    std::vector<int64_t> axes(rank);
    std::iota(axes.begin(), axes.end(), 0);
    if (axes_) axes = *axes_;
    std::vector<float> scale(rank), roi_start(rank, 0.0f), roi_end(rank, 1.0f);
    for (size_t a = 0; a < rank; ++a) {
      scale[a] = in_dims_[a] == 0
                     ? 1.0f
                     : static_cast<float>(out_dims_[a]) / static_cast<float>(in_dims_[a]);
    }
    if (!scales_in.empty()) {
      if (scales_in.size() != axes.size()) {
        return invalid_argument(context_ + ": scales has " + std::to_string(scales_in.size()) +
                                " values for " + std::to_string(axes.size()) + " axes");
      }
      for (size_t i = 0; i < axes.size(); ++i) {
        if (!(scales_in[i] > 0)) return invalid_argument(context_ + ": scales must be positive");
        scale[static_cast<size_t>(axes[i])] = scales_in[i];
      }
    }
    if (coord_ == Coord::kTfCropAndResize) {
      if (roi_in.size() != 2 * axes.size()) {
        return invalid_argument(context_ + ": tf_crop_and_resize needs roi of " +
                                std::to_string(2 * axes.size()) + " values");
      }
      for (size_t i = 0; i < axes.size(); ++i) {
        roi_start[static_cast<size_t>(axes[i])] = roi_in[i];
        roi_end[static_cast<size_t>(axes[i])] = roi_in[i + axes.size()];
      }
    }
    std::vector<AxisMap> maps(rank);
    for (size_t a = 0; a < rank; ++a) {
      const int64_t in = in_dims_[a];
      const int64_t out = out_dims_[a];
      AxisMap& m = maps[a];
      for (int64_t o = 0; o < out; ++o) {
        float x = original_coordinate(coord_, static_cast<float>(o), scale[a], in, out,
                                      roi_start[a], roi_end[a]);
        // A NaN (from a NaN or infinite roi or scale) would survive the clamps below and become
        // an arbitrary index.
        if (std::isnan(x)) {
          return invalid_argument(context_ + ": scales or roi give no input coordinate for axis " +
                                  std::to_string(a));
        }
        const bool outside =
            coord_ == Coord::kTfCropAndResize && (x < 0 || x > static_cast<float>(in - 1));
        int64_t i0, i1;
        float w1 = 0;
        if (mode_ == Mode::kCubic) {
          i0 = i1 = m.cubic.add(x, in, cubic_a_, exclude_outside_).value_or(-1);
        } else if (mode_ == Mode::kLinear) {
          x = std::clamp(x, 0.0f, static_cast<float>(in - 1));
          i0 = std::min(static_cast<int64_t>(x), in - 1);
          i1 = std::min(i0 + 1, in - 1);
          w1 = i1 == i0 ? 0.0f : x - static_cast<float>(i0);
        } else {
          i0 = std::clamp<int64_t>(nearest_index(nearest_, x, scale[a] < 1), 0, in - 1);
          i1 = i0;
        }
        m.i0.push_back(i0);
        m.i1.push_back(i1);
        m.w1.push_back(w1);
        m.outside.push_back(outside);
        m.any_outside = m.any_outside || outside;
        m.identity = m.identity && in == out && i0 == o && w1 == 0 && !outside;
      }
      if (mode_ == Mode::kNearest && in > 0 && out % in == 0 && !m.any_outside) {
        const int64_t k = out / in;
        m.repeat = k;
        for (int64_t o = 0; o < out && m.repeat != 0; ++o) {
          if (m.i0[static_cast<size_t>(o)] != o / k) m.repeat = 0;
        }
      }
    }
    return maps;
  }

  Status resize(const std::vector<AxisMap>& maps, const Tensor& in, Tensor& out) const {
    if (out.elements() == 0) return Status::ok();
    const bool identity =
        std::all_of(maps.begin(), maps.end(), [](const AxisMap& m) { return m.identity; });
    if (identity) {
      parallel_copy(out.raw(), in.raw(), out.byte_size());
      return Status::ok();
    }
    if (mode_ == Mode::kNearest) {
      const bool none_outside =
          std::none_of(maps.begin(), maps.end(), [](const AxisMap& m) { return m.any_outside; });
      if (maps.size() >= 2 && maps.back().identity && none_outside) {
        resize_nearest_blocks(maps, in.raw(), out.raw());
      } else {
        resize_nearest(maps, in.raw(), out.raw());
      }
      return Status::ok();
    }
    const size_t rank = maps.size();
    if (mode_ == Mode::kCubic) {
      std::vector<const resize_cubic::AxisTaps*> taps(rank, nullptr);
      for (size_t a = 0; a < rank; ++a) {
        if (!maps[a].identity) taps[a] = &maps[a].cubic;
      }
      float* dst = out.values<float>().data();
      resize_cubic::resize_separable(taps, in_dims_, out_dims_, in.values<float>().data(), dst);
      fill_outside(maps, dst);
      return Status::ok();
    }
    bool fused = true;  // only the last two axes interpolate: one pass, no temporaries
    for (size_t a = 0; a + 2 < rank; ++a) fused = fused && maps[a].identity;
    if (fused) {
      resize_bilinear(maps, in.values<float>().data(), out.values<float>().data());
    } else {
      resize_separable(maps, in, out);
    }
    return Status::ok();
  }

  // The innermost axis is not resized (channels-last activations: the channels): each output
  // element of the next axis is a block of that many contiguous bytes, copied whole. Rows over
  // that next axis; a row reading the same input row as the one before it is a memcpy of it.
  void resize_nearest_blocks(const std::vector<AxisMap>& maps, const std::byte* in,
                             std::byte* out) const {
    const size_t rank = maps.size();
    const size_t w_axis = rank - 2;
    const auto block = static_cast<int64_t>(dtype_size(dtype_)) * out_dims_[rank - 1];
    const auto strides = row_major_strides(in_dims_);
    const int64_t row_len = out_dims_[w_axis];
    const int64_t row_bytes = row_len * block;
    const int64_t rows =
        std::accumulate(out_dims_.begin(), out_dims_.begin() + w_axis, int64_t{1},
                        std::multiplies<>());
    const auto& cols = maps[w_axis].i0;
    const auto elem = static_cast<int64_t>(dtype_size(dtype_));
    parallel_range(
        rows,
        [&](int64_t begin, int64_t end) {
          int64_t previous = -1;
          for (int64_t r = begin; r < end; ++r) {
            std::byte* dst = out + r * row_bytes;
            int64_t offset = 0;
            int64_t rest = r;
            for (size_t a = w_axis; a-- > 0;) {
              const auto o = static_cast<size_t>(rest % out_dims_[a]);
              rest /= out_dims_[a];
              offset += maps[a].i0[o] * strides[a];
            }
            if (offset == previous) {
              std::memcpy(dst, dst - row_bytes, static_cast<size_t>(row_bytes));
              continue;
            }
            previous = offset;
            const std::byte* src = in + offset * elem;
            for (int64_t i = 0; i < row_len; ++i) {
              std::memcpy(dst + i * block, src + cols[static_cast<size_t>(i)] * block,
                          static_cast<size_t>(block));
            }
          }
        },
        std::max<int64_t>(1, kParallelGrain * 4 / std::max<int64_t>(1, row_bytes)));
  }

  // Rows over the innermost axis; each output row gathers from one input row, and a row reading
  // the same input row as the one before it (upsampling) is a memcpy of that output row.
  void resize_nearest(const std::vector<AxisMap>& maps, const std::byte* in, std::byte* out) const {
    const auto elem = static_cast<int64_t>(dtype_size(dtype_));
    const size_t rank = maps.size();
    if (rank == 0) {
      std::memcpy(out, in, static_cast<size_t>(elem));
      return;
    }
    const size_t last = rank - 1;
    const auto strides = row_major_strides(in_dims_);
    const int64_t row_len = out_dims_[last];
    const int64_t row_bytes = row_len * elem;
    const int64_t rows =
        std::accumulate(out_dims_.begin(), out_dims_.end() - 1, int64_t{1}, std::multiplies<>());
    const AxisMap& x = maps[last];
    std::vector<int64_t> x_bytes(x.i0.size());  // input byte offset of each output column
    for (size_t i = 0; i < x_bytes.size(); ++i) x_bytes[i] = x.i0[i] * elem;
    auto body = [&](auto u, int64_t begin, int64_t end) {
      using U = decltype(u);
      // Locals: stores through `out` could alias vectors' data pointers and force reloads.
      const int64_t* const cols = x_bytes.data();
      const uint8_t* const cols_outside = x.outside.data();
      const bool any_outside = x.any_outside;
      const int64_t repeat = x.repeat;
      const std::byte* const fill = extrapolation_;
      int64_t previous = -1;  // input row offset of the previous output row in this chunk
      for (int64_t r = begin; r < end; ++r) {
        std::byte* dst = out + r * row_bytes;
        int64_t offset = 0;
        bool outside = false;
        int64_t rest = r;
        for (size_t a = last; a-- > 0;) {
          const auto o = static_cast<size_t>(rest % out_dims_[a]);
          rest /= out_dims_[a];
          offset += maps[a].i0[o] * strides[a];
          outside = outside || maps[a].outside[o];
        }
        if (outside) {
          fill_elements(dst, fill, sizeof(U), row_len);
          previous = -1;
          continue;
        }
        if (offset == previous) {
          std::memcpy(dst, dst - row_bytes, static_cast<size_t>(row_bytes));
          continue;
        }
        previous = offset;
        const std::byte* src = in + offset * elem;
        if (repeat == 2) {  // the common x2 upsampling: each input element written twice
          for (int64_t i = 0; i < row_len / 2; ++i) {
            U value;
            std::memcpy(&value, src + i * static_cast<int64_t>(sizeof(U)), sizeof(U));
            const U pair[2] = {value, value};
            std::memcpy(dst + i * static_cast<int64_t>(2 * sizeof(U)), pair, sizeof(pair));
          }
          continue;
        }
        if (repeat > 0) {
          for (int64_t i = 0; i < row_len / repeat; ++i) {
            fill_elements(dst + i * repeat * static_cast<int64_t>(sizeof(U)),
                          src + i * static_cast<int64_t>(sizeof(U)), sizeof(U), repeat);
          }
          continue;
        }
        for (int64_t i = 0; i < row_len; ++i) {
          const std::byte* from = src + cols[i];
          if (any_outside && cols_outside[i]) from = fill;
          U value;
          std::memcpy(&value, from, sizeof(U));
          std::memcpy(dst + i * static_cast<int64_t>(sizeof(U)), &value, sizeof(U));
        }
      }
    };
    parallel_range(
        rows,
        [&](int64_t begin, int64_t end) {
          dispatch_element_size(static_cast<size_t>(elem), [&](auto u) { body(u, begin, end); });
        },
        std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(row_len, 1)));
  }

  // Interpolates the last two axes (the last one alone for rank 1) in one pass over planes.
  void resize_bilinear(const std::vector<AxisMap>& maps, const float* in, float* out) const {
    const size_t rank = maps.size();
    static const AxisMap kUnit = [] {
      AxisMap m;
      m.i0 = m.i1 = {0};
      m.w1 = {0.0f};
      m.outside = {0};
      return m;
    }();
    const AxisMap& y = rank >= 2 ? maps[rank - 2] : kUnit;
    const AxisMap& x = maps[rank - 1];
    const int64_t h_in = rank >= 2 ? in_dims_[rank - 2] : 1;
    const int64_t w_in = in_dims_[rank - 1];
    const int64_t h_out = rank >= 2 ? out_dims_[rank - 2] : 1;
    const int64_t w_out = out_dims_[rank - 1];
    const int64_t planes =
        std::accumulate(out_dims_.begin(), out_dims_.end(), int64_t{1}, std::multiplies<>()) /
        (h_out * w_out);
    const float fill = extrapolation_f_;
    parallel_range(
        planes * h_out,
        [&](int64_t begin, int64_t end) {
          // Locals: stores through `out` could alias the tables and force reloads.
          const int64_t* const x0s = x.i0.data();
          const int64_t* const x1s = x.i1.data();
          const float* const wx1s = x.w1.data();
          const uint8_t* const x_outside = x.any_outside ? x.outside.data() : nullptr;
          const int64_t width = w_out;
          for (int64_t r = begin; r < end; ++r) {
            const int64_t p = r / h_out;
            const auto oy = static_cast<size_t>(r % h_out);
            const float* row0 = in + (p * h_in + y.i0[oy]) * w_in;
            const float* row1 = in + (p * h_in + y.i1[oy]) * w_in;
            const float wy1 = y.w1[oy];
            const float wy0 = 1.0f - wy1;
            float* dst = out + r * width;
            if (y.outside[oy]) {
              std::fill(dst, dst + width, fill);
              continue;
            }
            for (int64_t ox = 0; ox < width; ++ox) {
              const int64_t x0 = x0s[ox], x1 = x1s[ox];
              const float wx1 = wx1s[ox];
              const float wx0 = 1.0f - wx1;
              dst[ox] =
                  wy0 * (wx0 * row0[x0] + wx1 * row0[x1]) + wy1 * (wx0 * row1[x0] + wx1 * row1[x1]);
            }
            if (x_outside != nullptr) {
              for (int64_t ox = 0; ox < width; ++ox) {
                if (x_outside[ox]) dst[ox] = fill;
              }
            }
          }
        },
        std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(w_out, 1)));
  }

  // General N-linear: one linear pass per interpolated axis (linear interpolation is separable),
  // then the extrapolation value where any axis fell outside the roi.
  void resize_separable(const std::vector<AxisMap>& maps, const Tensor& in, Tensor& out) const {
    const size_t rank = maps.size();
    std::vector<int64_t> dims = in_dims_;
    std::vector<float> current(in.values<float>().begin(), in.values<float>().end());
    for (size_t a = 0; a < rank; ++a) {
      if (maps[a].identity) continue;
      const int64_t outer = std::accumulate(dims.begin(), dims.begin() + static_cast<int64_t>(a),
                                            int64_t{1}, std::multiplies<>());
      const int64_t inner = std::accumulate(dims.begin() + static_cast<int64_t>(a) + 1, dims.end(),
                                            int64_t{1}, std::multiplies<>());
      const int64_t n_in = dims[a], n_out = out_dims_[a];
      std::vector<float> next(static_cast<size_t>(outer * n_out * inner));
      const AxisMap& m = maps[a];
      parallel_range(
          outer * n_out,
          [&](int64_t begin, int64_t end) {
            for (int64_t r = begin; r < end; ++r) {
              const int64_t o = r / n_out;
              const auto j = static_cast<size_t>(r % n_out);
              const float* s0 = current.data() + (o * n_in + m.i0[j]) * inner;
              const float* s1 = current.data() + (o * n_in + m.i1[j]) * inner;
              float* d = next.data() + r * inner;
              const float w1 = m.w1[j], w0 = 1.0f - w1;
              for (int64_t i = 0; i < inner; ++i) d[i] = w0 * s0[i] + w1 * s1[i];
            }
          },
          std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(inner, 1)));
      current = std::move(next);
      dims[a] = n_out;
    }
    float* dst = out.values<float>().data();
    std::copy(current.begin(), current.end(), dst);
    fill_outside(maps, dst);
  }

  // The extrapolation value where any axis's coordinate fell outside the roi.
  void fill_outside(const std::vector<AxisMap>& maps, float* dst) const {
    const size_t rank = maps.size();
    if (std::none_of(maps.begin(), maps.end(), [](const AxisMap& m) { return m.any_outside; })) {
      return;
    }
    std::vector<int64_t> index(rank, 0);
    const int64_t n =
        std::accumulate(out_dims_.begin(), out_dims_.end(), int64_t{1}, std::multiplies<>());
    for (int64_t e = 0; e < n; ++e) {
      bool outside = false;
      for (size_t a = 0; a < rank; ++a)
        outside = outside || maps[a].outside[static_cast<size_t>(index[a])];
      if (outside) dst[e] = extrapolation_f_;
      for (size_t a = rank; a-- > 0;) {
        if (++index[a] < out_dims_[a]) break;
        index[a] = 0;
      }
    }
  }

  std::string context_;
  std::vector<int64_t> in_dims_, out_dims_;
  DType dtype_ = DType::kUndefined;
  Mode mode_ = Mode::kNearest;
  float cubic_a_ = -0.75f;
  bool exclude_outside_ = false;
  Coord coord_ = Coord::kHalfPixel;
  Nearest nearest_ = Nearest::kRoundPreferFloor;
  std::optional<std::vector<int64_t>> axes_;  // opset 18: the axes scales and roi refer to
  std::byte extrapolation_[8] = {};           // one element of extrapolation_value
  float extrapolation_f_ = 0.0f;
  int scales_input_ = -1;
  int roi_input_ = -1;
  std::optional<std::vector<AxisMap>> plan_;
};

}  // namespace

void register_resize_kernels(KernelRegistry& registry) {
  registry.add("Resize", ResizeKernel::create);
  registry.add("Upsample", ResizeKernel::create);
}

}  // namespace hsched::cpu
