// hsched.GroupNorm: the fused form of PyTorch's GroupNorm export (Reshape -> InstanceNormalization
// -> Reshape -> Mul -> Add), optionally followed by SiLU (x * Sigmoid(x)). The program's fusion
// pass (norm_fusion.cpp) builds it; models never name it (the importer refuses unknown ops).
// One pass for the statistics and one for normalize + affine + activation, in NCHW or NHWC, where
// the unfused chain made eight passes and forced NCHW between the convolutions around it. A QDQ
// model's form of the chain runs on its 8-bit data (QuantizedGroupNormKernel).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include <tbb/combinable.h>

#include "backends/cpu/kernels/elementwise.h"
#include "backends/cpu/kernels/norm_fusion.h"
#include "backends/cpu/kernels/norm_rows.h"
#include "backends/cpu/kernels/post_ops.h"
#include "backends/cpu/kernels/quant_util.h"
#include "backends/cpu/kernels/reduction_common.h"

namespace hsched::cpu {
namespace {

using reduction::check_input;
using reduction::check_output;
using reduction::grain_for;

struct Sums {
  std::vector<double> sum, sum_sq;  // per channel
  explicit Sums(int64_t channels) : sum(channels, 0.0), sum_sq(channels, 0.0) {}
};

// Per-channel sum and sum of squares of one image ([C, P] or [P, C]), in double: the group's
// variance is E[x^2] - E[x]^2 over up to 10^6 elements, where float sums would lose it. The loops
// are blocked (for_each_blocked, fixed 16-wide lanes) so that GCC's -O2 vectoriser takes them.
HSCHED_VECTOR_CLONES void accumulate_pixels(const float* x, int64_t begin, int64_t end,
                                            int64_t channels, double* sum, double* sum_sq) {
  for (int64_t p = begin; p < end; ++p) {
    const float* row = x + p * channels;
    for_each_blocked(channels, [&](int64_t c) {
      const double v = row[c];
      sum[c] += v;
      sum_sq[c] += v * v;
    });
  }
}

HSCHED_VECTOR_CLONES void accumulate_row(const float* x, int64_t n, double* sum, double* sum_sq) {
  constexpr int64_t kLanes = 16;
  double s[kLanes] = {}, q[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int64_t j = 0; j < kLanes; ++j) {
      const double v = x[i + j];
      s[j] += v;
      q[j] += v * v;
    }
  }
  for (; i < n; ++i) {
    s[0] += x[i];
    q[0] += static_cast<double>(x[i]) * x[i];
  }
  *sum = 0;
  *sum_sq = 0;
  for (int64_t j = 0; j < kLanes; ++j) {
    *sum += s[j];
    *sum_sq += q[j];
  }
}

// y = x * a + b, then y * sigmoid(y) with `silu`, over n elements whose a and b are a[i] and b[i]
// (`per_element`) or a[0] and b[0].
HSCHED_VECTOR_CLONES void affine(const float* x, float* y, int64_t n, const float* a,
                                 const float* b, bool per_element, bool silu) {
  if (per_element && silu) {
    for_each_blocked(n, [&](int64_t i) {
      const float v = x[i] * a[i] + b[i];
      y[i] = v * fast_sigmoid(v);
    });
  } else if (per_element) {
    for_each_blocked(n, [&](int64_t i) { y[i] = x[i] * a[i] + b[i]; });
  } else if (silu) {
    const float a0 = a[0], b0 = b[0];
    for_each_blocked(n, [&](int64_t i) {
      const float v = x[i] * a0 + b0;
      y[i] = v * fast_sigmoid(v);
    });
  } else {
    const float a0 = a[0], b0 = b[0];
    for_each_blocked(n, [&](int64_t i) { y[i] = x[i] * a0 + b0; });
  }
}

class GroupNormKernel final : public Kernel {
 public:
  GroupNormKernel(int64_t batch, int64_t channels, int64_t pixels, int64_t groups, float epsilon,
                  bool silu, bool channels_last)
      : batch_(batch),
        channels_(channels),
        pixels_(pixels),
        groups_(groups),
        epsilon_(epsilon),
        silu_(silu),
        channels_last_(channels_last),
        scale_(channels),
        shift_(channels) {}

  Status run(std::span<const Tensor* const> in, std::span<Tensor* const> out) override {
    const float* gamma = in[1]->values<float>().data();
    const float* beta = in[2]->values<float>().data();
    const int64_t image = channels_ * pixels_;
    for (int64_t n = 0; n < batch_; ++n) {
      const float* x = in[0]->values<float>().data() + n * image;
      float* y = out[0]->values<float>().data() + n * image;
      const Sums sums = channel_sums(x);
      fold_statistics(sums, gamma, beta);
      if (channels_last_) {
        parallel_range(
            pixels_,
            [&](int64_t begin, int64_t end) {
              for (int64_t p = begin; p < end; ++p) {
                affine(x + p * channels_, y + p * channels_, channels_, scale_.data(),
                       shift_.data(), true, silu_);
              }
            },
            grain_for(channels_));
      } else {
        parallel_range(
            channels_,
            [&](int64_t begin, int64_t end) {
              for (int64_t c = begin; c < end; ++c) {
                affine(x + c * pixels_, y + c * pixels_, pixels_, &scale_[c], &shift_[c], false,
                       silu_);
              }
            },
            grain_for(pixels_));
      }
    }
    return Status::ok();
  }

 private:
  Sums channel_sums(const float* x) const {
    Sums total(channels_);
    if (!channels_last_) {
      parallel_range(
          channels_,
          [&](int64_t begin, int64_t end) {
            for (int64_t c = begin; c < end; ++c) {
              accumulate_row(x + c * pixels_, pixels_, &total.sum[c], &total.sum_sq[c]);
            }
          },
          grain_for(pixels_));
      return total;
    }
    tbb::combinable<Sums> partial([&] { return Sums(channels_); });
    parallel_range(
        pixels_,
        [&](int64_t begin, int64_t end) {
          Sums& mine = partial.local();
          accumulate_pixels(x, begin, end, channels_, mine.sum.data(), mine.sum_sq.data());
        },
        grain_for(channels_));
    partial.combine_each([&](const Sums& s) {
      for (int64_t c = 0; c < channels_; ++c) {
        total.sum[c] += s.sum[c];
        total.sum_sq[c] += s.sum_sq[c];
      }
    });
    return total;
  }

  // Per channel: y = x * scale + shift, with the group's mean and 1/stddev folded in.
  void fold_statistics(const Sums& sums, const float* gamma, const float* beta) {
    const int64_t per_group = channels_ / groups_;
    const double count = static_cast<double>(per_group * pixels_);
    for (int64_t g = 0; g < groups_; ++g) {
      double s = 0, q = 0;
      for (int64_t c = g * per_group; c < (g + 1) * per_group; ++c) {
        s += sums.sum[c];
        q += sums.sum_sq[c];
      }
      const double mean = s / count;
      const double variance = std::max(0.0, q / count - mean * mean);
      const double inv_std = 1.0 / std::sqrt(variance + static_cast<double>(epsilon_));
      for (int64_t c = g * per_group; c < (g + 1) * per_group; ++c) {
        scale_[c] = static_cast<float>(gamma[c] * inv_std);
        shift_[c] = static_cast<float>(beta[c] - mean * gamma[c] * inv_std);
      }
    }
  }

  int64_t batch_, channels_, pixels_, groups_;
  float epsilon_;
  bool silu_, channels_last_;
  std::vector<float> scale_, shift_;  // per channel, rewritten by each run
};

// y = Q1((x - x_zero) * x_scale * a + b), the normalization's quantization, over n 8-bit
// elements: channels-last pixels whose a and b are per channel (`channels` > 0, n whole pixels),
// or one channel's (`channels` 0: a[0], b[0]). The float operations of DequantizeLinear, ONNX
// Runtime's InstanceNormalization (a product, then a sum) and QuantizeLinear, each rounded.
template <typename X, typename Y>
[[gnu::always_inline]] inline void normalize_bytes(const X* __restrict x, Y* __restrict y,
                                                   int64_t n, int64_t channels, const float* a,
                                                   const float* b, float x_scale, int32_t x_zero,
                                                   float y_scale, int32_t y_zero) {
  const auto one = [&](int64_t i, float ai, float bi) {
    const float v = static_cast<float>(int32_t{x[i]} - x_zero) * x_scale;
    const float scaled = v * ai;
    y[i] = saturate_round<Y>((scaled + bi) / y_scale, y_zero);
  };
  if (channels > 0) {
    for (int64_t p = 0; p < n; p += channels) {
      for (int64_t c = 0; c < channels; ++c) one(p + c, a[c], b[c]);
    }
  } else {
    for (int64_t i = 0; i < n; ++i) one(i, a[0], b[0]);
  }
}
#define HSCHED_NORMALIZE_BYTES(X, Y)                                                   \
  HSCHED_VECTOR_CLONES void normalize(const X* x, Y* y, int64_t n, int64_t channels,   \
                                      const float* a, const float* b, float x_scale,   \
                                      int32_t x_zero, float y_scale, int32_t y_zero) { \
    normalize_bytes(x, y, n, channels, a, b, x_scale, x_zero, y_scale, y_zero);        \
  }
HSCHED_NORMALIZE_BYTES(uint8_t, uint8_t)
HSCHED_NORMALIZE_BYTES(uint8_t, int8_t)
HSCHED_NORMALIZE_BYTES(int8_t, uint8_t)
HSCHED_NORMALIZE_BYTES(int8_t, int8_t)
#undef HSCHED_NORMALIZE_BYTES

// y[p, c] = the byte of channel c's 256-entry table at q[p, c], over channels-last pixels.
void look_up_channels(const uint8_t* __restrict q, uint8_t* __restrict y, int64_t pixels,
                      int64_t channels, const uint8_t* __restrict tables) {
  for (int64_t p = 0; p < pixels; ++p) {
    const int64_t at = p * channels;
    for (int64_t c = 0; c < channels; ++c) y[at + c] = tables[c * 256 + q[at + c]];
  }
}

// The fp32 sum of term(v[i]) over [0, n) in the order of Eigen's vectorized sum of an aligned
// array with SSE packets of 4 (ONNX Runtime's InstanceNormalization: Xi.mean(), squaredNorm()):
// two packet accumulators taking alternate packets (lane i % 8 here), added lane by lane, a last
// whole packet added to that, then (lane 0 + lane 2) + (lane 1 + lane 3), then the last values one
// by one.
template <typename Term>
[[gnu::always_inline]] inline float eigen_order_terms(const float* __restrict v, int64_t n,
                                                      Term term) {
  if (n < 4) {
    float r = n > 0 ? term(v[0]) : 0.0f;
    for (int64_t i = 1; i < n; ++i) r += term(v[i]);
    return r;
  }
  const int64_t end8 = n / 8 * 8, end4 = n / 4 * 4;
  float lanes[8];
  if (n >= 8) {
    for (int l = 0; l < 8; ++l) lanes[l] = term(v[l]);
    for (int64_t i = 8; i < end8; i += 8) {
      for (int l = 0; l < 8; ++l) lanes[l] += term(v[i + l]);
    }
    for (int l = 0; l < 4; ++l) lanes[l] += lanes[l + 4];
    if (end4 > end8) {
      for (int l = 0; l < 4; ++l) lanes[l] += term(v[end8 + l]);
    }
  } else {
    for (int l = 0; l < 4; ++l) lanes[l] = term(v[l]);
  }
  float r = (lanes[0] + lanes[2]) + (lanes[1] + lanes[3]);
  for (int64_t i = end4; i < n; ++i) r += term(v[i]);
  return r;
}

// x's 8-bit values dequantized into `values` as [C, P] (each channel's pixels in turn): from
// channels-last x a tile of kTile pixels at a time (dequantized in one run, then each channel's
// kTile floats written as one run), from channels-first x as it lies.
template <typename X>
void dequantize_channels(const X* x, int64_t channels, int64_t pixels, bool channels_last,
                         int32_t zero, float scale, float* values) {
  if (!channels_last) {
    parallel_range(channels * pixels, [&](int64_t begin, int64_t end) {
      dequantize_run(x + begin, values + begin, end - begin, scale, zero);
    });
    return;
  }
  constexpr int64_t kTile = 16;
  parallel_range((pixels + kTile - 1) / kTile,
                 [&](int64_t begin, int64_t end) {
                   std::vector<float> tile(static_cast<size_t>(kTile * channels));
                   for (int64_t t = begin; t < end; ++t) {
                     const int64_t p0 = t * kTile, n = std::min(kTile, pixels - p0);
                     dequantize_run(x + p0 * channels, tile.data(), n * channels, scale, zero);
                     for (int64_t c = 0; c < channels; ++c) {
                       float* row = values + c * pixels + p0;
                       for (int64_t j = 0; j < n; ++j)
                         row[j] = tile[static_cast<size_t>(j * channels + c)];
                     }
                   }
                 },
                 std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, kTile * channels)));
}

// The QDQ GroupNorm chain (norm_fusion.h) on the 8-bit data: each group's statistics and each
// element's normalization as ONNX Runtime's InstanceNormalization kernel computes them on the
// dequantized values (fold_statistics), quantized, then mapped through its channel's row of the
// table (the stages after the normalization's quantization).
class QuantizedGroupNormKernel final : public Kernel {
 public:
  QuantizedGroupNormKernel(DType x_type, DType y_type, int64_t batch, int64_t channels,
                           int64_t pixels, int64_t groups, float epsilon, bool channels_last)
      : x_type_(x_type),
        y_type_(y_type),
        batch_(batch),
        channels_(channels),
        pixels_(pixels),
        groups_(groups),
        epsilon_(epsilon),
        channels_last_(channels_last),
        a_(channels),
        b_(channels) {}

  Status run(std::span<const Tensor* const> in, std::span<Tensor* const> out) override {
    dispatch_quantized(x_type_, [&](auto x_tag) {
      dispatch_quantized(y_type_,
                         [&](auto y_tag) { run_typed<decltype(x_tag), decltype(y_tag)>(in, out); });
    });
    return Status::ok();
  }

 private:
  template <typename X, typename Y>
  void run_typed(std::span<const Tensor* const> in, std::span<Tensor* const> out) {
    const float* scale = in[1]->values<float>().data();
    const float* bias = in[2]->values<float>().data();
    const float x_scale = read_scales(*in[3])[0], y_scale = read_scales(*in[5])[0];
    const int32_t x_zero = read_zero_points(optional_input(in, 4), 1)[0];
    const int32_t y_zero = read_zero_points(optional_input(in, 6), 1)[0];
    const auto* table = reinterpret_cast<const uint8_t*>(in[7]->values<Y>().data());
    const int64_t image = channels_ * pixels_;
    for (int64_t n = 0; n < batch_; ++n) {
      const X* x = in[0]->values<X>().data() + n * image;
      Y* y = out[0]->values<Y>().data() + n * image;
      fold_statistics(x, x_zero, x_scale, scale, bias);
      // Normalized and quantized into `q`, then through the table into y.
      const auto finish = [&](int64_t at, int64_t count, int64_t c, bool per_element,
                              std::vector<Y>& q) {
        q.resize(static_cast<size_t>(count));
        normalize(x + at, q.data(), count, per_element ? channels_ : 0, &a_[c], &b_[c], x_scale,
                  x_zero, y_scale, y_zero);
        const auto* bytes = reinterpret_cast<const uint8_t*>(q.data());
        auto* into = reinterpret_cast<uint8_t*>(y + at);
        if (per_element) {
          look_up_channels(bytes, into, count / channels_, channels_, table);
        } else {
          look_up(bytes, into, count, table + c * 256);
        }
      };
      if (channels_last_) {
        parallel_range(
            pixels_,
            [&](int64_t begin, int64_t end) {
              std::vector<Y> q;
              finish(begin * channels_, (end - begin) * channels_, 0, true, q);
            },
            grain_for(channels_));
      } else {
        parallel_range(
            channels_,
            [&](int64_t begin, int64_t end) {
              std::vector<Y> q;
              for (int64_t c = begin; c < end; ++c) finish(c * pixels_, pixels_, c, false, q);
            },
            grain_for(pixels_));
      }
    }
  }

  // Per channel y = x * a + b as ONNX Runtime's InstanceNormalization computes it on a group
  // (Reshape [N, G, -1] lays its channels out one after the other): mean = Eigen's sum / count,
  // the squared deviations from that mean summed the same way, a = scale / sqrt(that / count +
  // epsilon), b = bias - mean * a, each in fp32.
  template <typename X>
  void fold_statistics(const X* x, int32_t x_zero, float x_scale, const float* scale,
                       const float* bias) {
    const int64_t per_group = channels_ / groups_, count = per_group * pixels_;
    values_.resize(static_cast<size_t>(channels_ * pixels_));
    dequantize_channels(x, channels_, pixels_, channels_last_, x_zero, x_scale, values_.data());
    parallel_range(
        groups_,
        [&](int64_t begin, int64_t end) {
          for (int64_t g = begin; g < end; ++g) {
            const float* values = values_.data() + g * count;
            const float mean = eigen_order_sum(values, count) / static_cast<float>(count);
            const float squares = eigen_order_squares(values, count, mean);
            const float inv_std = 1.0f / std::sqrt(squares / static_cast<float>(count) + epsilon_);
            const float a = inv_std * scale[g];
            const float product = mean * a;
            for (int64_t c = g * per_group; c < (g + 1) * per_group; ++c) {
              a_[c] = a;
              b_[c] = bias[g] - product;
            }
          }
        },
        std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, count)));
  }

  DType x_type_, y_type_;
  int64_t batch_, channels_, pixels_, groups_;
  float epsilon_;
  bool channels_last_;
  std::vector<float> a_, b_;  // per channel, rewritten by each run
  std::vector<float> values_;  // x dequantized as [C, P], rewritten by each run
};

// Inputs 1 and 2, f32 of `count` values each (`what`: their names, for the error).
Status check_affine(const KernelSpec& spec, int64_t count, std::array<const char*, 2> names,
                    const char* what) {
  for (size_t i : {size_t{1}, size_t{2}}) {
    HSCHED_RETURN_IF_ERROR(check_input(spec, i, {DType::kF32}, names[i - 1]));
    if (spec.inputs[i]->shape.elements() != count) {
      return invalid_argument(node_context(spec.node) + ": " + what);
    }
  }
  return Status::ok();
}

// Whether the kernel reads and writes channels-last (the same on both sides, 4-D only then).
Result<bool> channels_last_of(const KernelSpec& spec, size_t rank) {
  const bool channels_last = input_channels_last(spec.node, 0);
  if (channels_last != output_channels_last(spec.node, 0) || (channels_last && rank != 4)) {
    return invalid_argument(node_context(spec.node) + ": input and output layouts differ");
  }
  return channels_last;
}

// The QDQ form (norm_fusion.h): x 8-bit, InstanceNormalization's scale and bias [G], x's scale
// and zero point, the normalization's quantization, the [C, 256] table of y's type.
Result<std::unique_ptr<Kernel>> make_quantized_group_norm(const KernelSpec& spec,
                                                          const std::vector<int64_t>& dims,
                                                          int64_t groups) {
  const int64_t channels = dims[1];
  const std::array<const char*, 2> names{"scale", "bias"};
  HSCHED_RETURN_IF_ERROR(
      check_affine(spec, groups, names, "scale and bias need one value per group"));
  const DType x_type = spec.inputs[0]->dtype;
  HSCHED_RETURN_IF_ERROR(check_input(spec, 7, {DType::kU8, DType::kI8}, "table"));
  const DType y_type = spec.inputs[7]->dtype;
  if (spec.inputs[7]->shape.elements() != channels * 256) {
    return invalid_argument(node_context(spec.node) + ": the table needs 256 values a channel");
  }
  HSCHED_RETURN_IF_ERROR(check_quant_param(spec, 3, 4, x_type, "x", -1, true).status());
  HSCHED_RETURN_IF_ERROR(check_quant_param(spec, 5, 6, y_type, "y", -1, true).status());
  const int64_t pixels = reduction::product(dims, 2, dims.size());
  HSCHED_RETURN_IF_ERROR(check_output(spec, 0, y_type, dims[0] * channels * pixels, "output"));
  HSCHED_ASSIGN_OR_RETURN(const bool channels_last, channels_last_of(spec, dims.size()));
  return std::unique_ptr<Kernel>(std::make_unique<QuantizedGroupNormKernel>(
      x_type, y_type, dims[0], channels, pixels, groups, spec.node.attr_float("epsilon", 1e-5f),
      channels_last));
}

// Input [N, C, spatial...]; gamma and beta [C]; attributes num_groups, epsilon, silu.
Result<std::unique_ptr<Kernel>> make_group_norm(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_input(spec, 0, {DType::kF32, DType::kU8, DType::kI8}, "input"));
  const auto& dims = spec.in_dims(0);
  const int64_t groups = spec.node.attr_int("num_groups", 0);
  if (dims.size() < 3 || groups < 1 || dims[1] % groups != 0) {
    return invalid_argument(node_context(spec.node) + ": needs [N, C, spatial...] with C (" +
                            (dims.size() > 1 ? std::to_string(dims[1]) : "?") +
                            ") a multiple of num_groups (" + std::to_string(groups) + ")");
  }
  if (spec.inputs[0]->dtype != DType::kF32) return make_quantized_group_norm(spec, dims, groups);
  const int64_t channels = dims[1];
  const std::array<const char*, 2> names{"gamma", "beta"};
  HSCHED_RETURN_IF_ERROR(
      check_affine(spec, channels, names, "gamma and beta need one value per channel"));
  const int64_t pixels = reduction::product(dims, 2, dims.size());
  HSCHED_RETURN_IF_ERROR(check_output(spec, 0, DType::kF32, dims[0] * channels * pixels, "output"));
  HSCHED_ASSIGN_OR_RETURN(const bool channels_last, channels_last_of(spec, dims.size()));
  return std::unique_ptr<Kernel>(std::make_unique<GroupNormKernel>(
      dims[0], channels, pixels, groups, spec.node.attr_float("epsilon", 1e-5f),
      spec.node.attr_int("silu", 0) != 0, channels_last));
}

}  // namespace

HSCHED_VECTOR_CLONES float eigen_order_sum(const float* v, int64_t n) {
  return eigen_order_terms(v, n, [](float x) { return x; });
}
HSCHED_VECTOR_CLONES float eigen_order_squares(const float* v, int64_t n, float mean) {
  return eigen_order_terms(v, n, [mean](float x) {
    const float d = x - mean;
    return d * d;
  });
}

void register_group_norm_kernel(KernelRegistry& registry) {
  registry.add(kGroupNormOp, make_group_norm);
}

}  // namespace hsched::cpu
