// Softmax, LogSoftmax and the normalizations (LayerNormalization, InstanceNormalization,
// BatchNormalization in inference mode, LpNormalization): f32, parallel over independent rows
// or channels. Mean and variance are exact two-pass within L1-sized blocks and merged across
// blocks in double (reduction::row_moments), so rows of 10^5 elements (InstanceNorm over a
// 256x256 map) stay within ~1e-6 of a double reference while being read from memory once.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "backends/cpu/kernels/elementwise.h"
#include "backends/cpu/kernels/kernel.h"
#include "backends/cpu/kernels/norm_rows.h"
#include "backends/cpu/kernels/parallel.h"
#include "backends/cpu/kernels/reduction_common.h"

namespace hsched::cpu {
namespace {

using reduction::AxisLayout;
using reduction::check_input;
using reduction::check_output;
using reduction::grain_for;
using reduction::has_output;
using reduction::kColumnBlock;
using reduction::row_centered_sum_sq;
using reduction::row_sum;

constexpr float kInf = std::numeric_limits<float>::infinity();

// exp(x) for x <= 0 (Softmax's x - max), written so that -O3 vectorises the loops calling it
// (std::exp is a libm call per element): Cephes' expf polynomial, within 1e-7 relative of exp.
// The clamps are integer masks on the bits because float compares and selects are not
// if-converted under the default -ftrapping-math. Below -87.3 gives ~1e-38 instead of 0, which
// no sum with a 1 in it notices; x > 0 is taken as 0; NaN stays NaN.
inline float exp_nonpositive(float x) {
  uint32_t u = std::bit_cast<uint32_t>(x);
  const uint32_t not_nan = 0u - static_cast<uint32_t>((u & 0x7FFFFFFFu) <= 0x7F800000u);
  const uint32_t below = not_nan & (0u - static_cast<uint32_t>(u > 0xC2AE9999u));  // < -87.3
  u = (u & ~below) | (0xC2AE9999u & below);
  const uint32_t positive = not_nan & (0u - static_cast<uint32_t>(u < 0x80000000u));
  u &= ~positive;
  x = std::bit_cast<float>(u);
  // Adding 1.5 * 2^23 rounds x*log2(e) to an integer n held in the low mantissa bits of t.
  const float t = x * 1.44269504088896341f + 12582912.0f;
  const float n = t - 12582912.0f;
  float r = x - n * 0.693359375f;  // ln 2 in two parts: r = x - n ln 2 without cancellation
  r -= n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  // 2^n built from its exponent field: n in [-126, 0], so n + 127 fits the 8 bits.
  const uint32_t scale_bits = (std::bit_cast<uint32_t>(t) - 0x4B400000u + 127u) << 23;
  return p * std::bit_cast<float>(scale_bits);
}

// Floats mapped to int32 keys of the same order, for a max that vectorises (float max does not
// without -ffast-math). A positive NaN sorts above +inf, so it becomes the row's max and the
// row turns NaN, as in numpy; a negative NaN sorts below -inf and turns the row NaN through exp.
inline int32_t order_key(float x) {
  const auto i = std::bit_cast<int32_t>(x);
  return i ^ ((i >> 31) & 0x7FFFFFFF);
}
inline float from_order_key(int32_t k) {
  return std::bit_cast<float>(k ^ ((k >> 31) & 0x7FFFFFFF));
}

float row_max(const float* x, int64_t n) {
  constexpr int64_t kMaxLanes = 16;  // fixed-width blocks: what GCC's -O2 vectoriser takes
  int32_t lanes[kMaxLanes];
  std::fill(lanes, lanes + kMaxLanes, order_key(-kInf));
  int64_t i = 0;
  for (; i + kMaxLanes <= n; i += kMaxLanes) {
    for (int64_t k = 0; k < kMaxLanes; ++k) {
      const int32_t key = order_key(x[i + k]);
      lanes[k] = key > lanes[k] ? key : lanes[k];
    }
  }
  for (int64_t k = 0; i < n; ++i, ++k) {
    const int32_t key = order_key(x[i]);
    lanes[k] = key > lanes[k] ? key : lanes[k];
  }
  return from_order_key(*std::max_element(lanes, lanes + kMaxLanes));
}

// ---- Softmax / LogSoftmax ----------------------------------------------------------------------

// Softmax (LogSoftmax with `log`) of one row of n elements; y may be x.
HSCHED_VECTOR_CLONES void softmax_row(const float* x, float* y, int64_t n, bool log) {
  const float m = row_max(x, n);
  for_each_blocked(n, [&](int64_t i) { y[i] = exp_nonpositive(x[i] - m); });
  const double sum = row_sum(y, n);
  if (log) {
    const auto log_sum = static_cast<float>(std::log(sum));
    for_each_blocked(n, [&](int64_t i) { y[i] = (x[i] - m) - log_sum; });
  } else {
    const auto inv = static_cast<float>(1.0 / sum);
    for_each_blocked(n, [&](int64_t i) { y[i] *= inv; });
  }
}

// `cols` <= kColumnBlock neighbouring columns of an [n, inner] block, reduced along n.
HSCHED_VECTOR_CLONES void softmax_columns(const float* x, float* y, int64_t n, int64_t inner,
                                          int64_t cols, bool log) {
  float m[kColumnBlock];
  double sum[kColumnBlock] = {};
  float fin[kColumnBlock];
  std::fill(m, m + cols, -kInf);
  for (int64_t r = 0; r < n; ++r) {
    const float* xr = x + r * inner;
    for (int64_t j = 0; j < cols; ++j) m[j] = xr[j] > m[j] ? xr[j] : m[j];
  }
  for (int64_t r = 0; r < n; ++r) {
    const float* xr = x + r * inner;
    float* yr = y + r * inner;
    for (int64_t j = 0; j < cols; ++j) {
      yr[j] = exp_nonpositive(xr[j] - m[j]);
      sum[j] += yr[j];
    }
  }
  for (int64_t j = 0; j < cols; ++j) {
    fin[j] = static_cast<float>(log ? std::log(sum[j]) : 1.0 / sum[j]);
  }
  for (int64_t r = 0; r < n; ++r) {
    const float* xr = x + r * inner;
    float* yr = y + r * inner;
    if (log) {
      for (int64_t j = 0; j < cols; ++j) yr[j] = (xr[j] - m[j]) - fin[j];
    } else {
      for (int64_t j = 0; j < cols; ++j) yr[j] *= fin[j];
    }
  }
}

// Runs `row(x, y, n)` over the rows of [outer, n] (inner == 1) or `columns(x, y, cols)` over
// blocks of [outer, n, inner], in parallel.
template <typename RowFn, typename ColumnFn>
void for_each_lane(const AxisLayout& l, const float* x, float* y, RowFn row, ColumnFn columns) {
  if (l.inner == 1) {
    parallel_range(
        l.outer,
        [&](int64_t begin, int64_t end) {
          for (int64_t o = begin; o < end; ++o) row(x + o * l.n, y + o * l.n, l.n);
        },
        grain_for(l.n));
    return;
  }
  const int64_t blocks = (l.inner + kColumnBlock - 1) / kColumnBlock;
  parallel_range(
      l.outer * blocks,
      [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) {
          const int64_t o = t / blocks;
          const int64_t j0 = (t % blocks) * kColumnBlock;
          const int64_t offset = o * l.n * l.inner + j0;
          columns(x + offset, y + offset, std::min(kColumnBlock, l.inner - j0));
        }
      },
      grain_for(l.n * kColumnBlock));
}

// Before opset 13 the input is coerced to 2D at `axis` (default 1) and each row of
// prod(dims[axis:]) elements is normalized; from 13 only along `axis` (default -1).
template <bool kLog>
Result<std::unique_ptr<Kernel>> make_softmax(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_input(spec, 0, {DType::kF32}, "input"));
  const auto& dims = spec.in_dims(0);
  const bool coerce_2d = spec.opset < 13;
  HSCHED_ASSIGN_OR_RETURN(
      const size_t axis,
      reduction::normalize_axis(spec, spec.node.attr_int("axis", coerce_2d ? 1 : -1), dims.size()));
  const AxisLayout layout = reduction::axis_layout(dims, axis, coerce_2d);
  HSCHED_RETURN_IF_ERROR(
      check_output(spec, 0, DType::kF32, layout.outer * layout.n * layout.inner, "output"));
  return make_kernel([layout](std::span<const Tensor* const> in, std::span<Tensor* const> out) {
    const int64_t inner = layout.inner;
    const int64_t n = layout.n;
    for_each_lane(
        layout, in[0]->values<float>().data(), out[0]->values<float>().data(),
        [](const float* x, float* y, int64_t len) { softmax_row(x, y, len, kLog); },
        [n, inner](const float* x, float* y, int64_t cols) {
          softmax_columns(x, y, n, inner, cols, kLog);
        });
    return Status::ok();
  });
}

// ---- LpNormalization -------------------------------------------------------------------------

// y = x / ||x||_p along `axis`; a zero norm gives zeros (as ONNX Runtime), not NaN.
Result<std::unique_ptr<Kernel>> make_lp_normalization(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_input(spec, 0, {DType::kF32}, "input"));
  const int64_t p = spec.node.attr_int("p", 2);
  if (p != 1 && p != 2) return unsupported(spec, "attribute 'p' = " + std::to_string(p));
  const auto& dims = spec.in_dims(0);
  HSCHED_ASSIGN_OR_RETURN(
      const size_t axis,
      reduction::normalize_axis(spec, spec.node.attr_int("axis", -1), dims.size()));
  const AxisLayout l = reduction::axis_layout(dims, axis);
  HSCHED_RETURN_IF_ERROR(check_output(spec, 0, DType::kF32, l.outer * l.n * l.inner, "output"));
  const auto scale_of = [](double norm) { return norm == 0 ? 0.0f : static_cast<float>(1 / norm); };
  return make_kernel([l, p, scale_of](std::span<const Tensor* const> in,
                                      std::span<Tensor* const> out) {
    const auto row = [&](const float* x, float* y, int64_t n) {
      double norm = 0;
      if (p == 2) {
        norm = std::sqrt(row_centered_sum_sq(x, n, 0.0f));
      } else {
        for (int64_t i = 0; i < n; ++i) norm += std::fabs(x[i]);
      }
      const float s = scale_of(norm);
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] * s;
    };
    const auto columns = [&](const float* x, float* y, int64_t cols) {
      double norm[kColumnBlock] = {};
      float s[kColumnBlock];
      for (int64_t r = 0; r < l.n; ++r) {
        const float* xr = x + r * l.inner;
        for (int64_t j = 0; j < cols; ++j) norm[j] += p == 2 ? xr[j] * xr[j] : std::fabs(xr[j]);
      }
      for (int64_t j = 0; j < cols; ++j) s[j] = scale_of(p == 2 ? std::sqrt(norm[j]) : norm[j]);
      for (int64_t r = 0; r < l.n; ++r) {
        for (int64_t j = 0; j < cols; ++j) y[r * l.inner + j] = x[r * l.inner + j] * s[j];
      }
    };
    for_each_lane(l, in[0]->values<float>().data(), out[0]->values<float>().data(), row, columns);
    return Status::ok();
  });
}

// ---- LayerNormalization, InstanceNormalization ------------------------------------------------

struct RowStats {
  float mean;
  float inv_std;
};

RowStats row_stats(const float* x, int64_t n, float epsilon) {
  if (n == 0) return {std::nanf(""), std::nanf("")};  // the mean of nothing, as numpy has it
  const reduction::Moments m = reduction::row_moments(x, n);
  const double var = m.m2 / static_cast<double>(n);
  // float sqrt and divide (correctly rounded, and shorter latency than double: short rows wait
  // on this chain)
  return {static_cast<float>(m.mean), 1.0f / std::sqrt(static_cast<float>(var) + epsilon)};
}

// LayerNormalization's Scale and B are unidirectionally broadcast to the normalized dims
// (dims[axis:]). Checks that; a parameter of the full size is used in place, others are
// expanded once per run (a row's worth of floats).
Status check_layer_norm_param(const KernelSpec& spec, size_t i, const std::vector<int64_t>& norm,
                              const char* what) {
  if (!spec.has_input(i)) return Status::ok();
  HSCHED_RETURN_IF_ERROR(check_input(spec, i, {DType::kF32}, what));
  const auto& dims = spec.in_dims(i);
  bool ok = true;
  for (size_t k = 0; k < dims.size() && ok; ++k) {  // aligned from the right
    const size_t from_end = dims.size() - 1 - k;
    if (from_end >= norm.size()) {
      ok = dims[k] == 1;
    } else {
      const int64_t target = norm[norm.size() - 1 - from_end];
      ok = dims[k] == target || dims[k] == 1;
    }
  }
  if (ok) return Status::ok();
  return invalid_argument(node_context(spec.node) + ": input '" + what + "' of shape " +
                          spec.inputs[i]->shape.to_string() +
                          " does not broadcast to the normalized shape " + Shape(norm).to_string());
}

const float* layer_norm_param(const Tensor* t, const std::vector<int64_t>& norm, int64_t n,
                              std::vector<float>& expanded) {
  if (t == nullptr || t->elements() == n) return t ? t->values<float>().data() : nullptr;
  std::vector<int64_t> dims = t->dims();
  while (dims.size() > norm.size()) dims.erase(dims.begin());  // leading 1s, checked above
  BroadcastCursor cursor(norm, {broadcast_strides(dims, norm)}, 0);
  expanded.resize(static_cast<size_t>(n));
  const float* src = t->values<float>().data();
  for (int64_t i = 0; i < n; ++i, cursor.next()) expanded[i] = src[cursor.offset(0)];
  return expanded.data();
}

// Rows [begin, end) of n elements; scale, bias, mean_out and inv_out may each be null.
}  // namespace

HSCHED_VECTOR_CLONES void layer_norm_rows(const float* x, float* y, int64_t begin, int64_t end,
                                          int64_t n, const float* scale, const float* bias,
                                          float epsilon, float* mean_out, float* inv_out) {
  for (int64_t r = begin; r < end; ++r) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    const RowStats st = row_stats(xr, n, epsilon);
    if (mean_out) mean_out[r] = st.mean;
    if (inv_out) inv_out[r] = st.inv_std;
    // Separate loops per parameter combination keep each one a plain vector loop.
    if (scale && bias) {
      for_each_blocked(n, [&](int64_t i) {
        yr[i] = (xr[i] - st.mean) * st.inv_std * scale[i] + bias[i];
      });
    } else if (scale) {
      for_each_blocked(n, [&](int64_t i) { yr[i] = (xr[i] - st.mean) * st.inv_std * scale[i]; });
    } else if (bias) {
      for_each_blocked(n, [&](int64_t i) { yr[i] = (xr[i] - st.mean) * st.inv_std + bias[i]; });
    } else {
      for_each_blocked(n, [&](int64_t i) { yr[i] = (xr[i] - st.mean) * st.inv_std; });
    }
  }
}

namespace {

// Outputs: Y, and optionally Mean and InvStdDev of shape dims[:axis] + [1...] (float: every
// stash_type is computed at least that precisely).
Result<std::unique_ptr<Kernel>> make_layer_norm(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_input(spec, 0, {DType::kF32}, "X"));
  const auto& dims = spec.in_dims(0);
  HSCHED_ASSIGN_OR_RETURN(
      const size_t axis,
      reduction::normalize_axis(spec, spec.node.attr_int("axis", -1), dims.size()));
  const std::vector<int64_t> norm(dims.begin() + static_cast<ptrdiff_t>(axis), dims.end());
  HSCHED_RETURN_IF_ERROR(check_layer_norm_param(spec, 1, norm, "Scale"));
  HSCHED_RETURN_IF_ERROR(check_layer_norm_param(spec, 2, norm, "B"));
  const int64_t rows = reduction::product(dims, 0, axis);
  const int64_t n = reduction::product(norm, 0, norm.size());
  HSCHED_RETURN_IF_ERROR(check_output(spec, 0, DType::kF32, rows * n, "Y"));
  if (has_output(spec, 1)) HSCHED_RETURN_IF_ERROR(check_output(spec, 1, DType::kF32, rows, "Mean"));
  if (has_output(spec, 2)) {
    HSCHED_RETURN_IF_ERROR(check_output(spec, 2, DType::kF32, rows, "InvStdDev"));
  }
  const float epsilon = spec.node.attr_float("epsilon", 1e-5f);
  return make_kernel(
      [rows, n, norm, epsilon](std::span<const Tensor* const> in, std::span<Tensor* const> out) {
        std::vector<float> scale_buf, bias_buf;
        const float* scale = layer_norm_param(in.size() > 1 ? in[1] : nullptr, norm, n, scale_buf);
        const float* bias = layer_norm_param(in.size() > 2 ? in[2] : nullptr, norm, n, bias_buf);
        const float* x = in[0]->values<float>().data();
        float* y = out[0]->values<float>().data();
        float* mean_out = out.size() > 1 && out[1] ? out[1]->values<float>().data() : nullptr;
        float* inv_out = out.size() > 2 && out[2] ? out[2]->values<float>().data() : nullptr;
        parallel_range(
            rows,
            [&](int64_t begin, int64_t end) {
              layer_norm_rows(x, y, begin, end, n, scale, bias, epsilon, mean_out, inv_out);
            },
            grain_for(n));
        return Status::ok();
      });
}

}  // namespace

// Checks a per-channel parameter: f32 with exactly `channels` elements.
Status check_channel_param(const KernelSpec& spec, size_t i, int64_t channels, const char* what) {
  HSCHED_RETURN_IF_ERROR(check_input(spec, i, {DType::kF32}, what));
  if (spec.inputs[i]->shape.elements() == channels) return Status::ok();
  return invalid_argument(node_context(spec.node) + ": input '" + what + "' has shape " +
                          spec.inputs[i]->shape.to_string() + ", expected " +
                          std::to_string(channels) + " elements (one per channel)");
}

namespace {

// Rows [begin, end) of n elements, row r being channel r % channels.
// As ONNX Runtime computes it: the mean and the squared deviations summed in Eigen's order, then
// y = x * a + b with a = scale / sqrt(squares / n + epsilon) and b = bias - mean * a, each
// rounded (a GroupNorm written as InstanceNormalization has the fused GroupNorm's bytes).
HSCHED_VECTOR_CLONES void instance_norm_rows(const float* x, float* y, int64_t begin, int64_t end,
                                             int64_t n, int64_t channels, const float* scale,
                                             const float* bias, float epsilon) {
  for (int64_t r = begin; r < end; ++r) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    const float count = static_cast<float>(n);
    const float mean = eigen_order_sum(xr, n) / count;
    const float inv_std = 1.0f / std::sqrt(eigen_order_squares(xr, n, mean) / count + epsilon);
    const float a = inv_std * scale[r % channels];
    const float b = bias[r % channels] - mean * a;
    for_each_blocked(n, [&](int64_t i) { yr[i] = xr[i] * a + b; });
  }
}

// Input [N, C, spatial...]: each (n, c) row is normalized on its own, then scaled per channel.
Result<std::unique_ptr<Kernel>> make_instance_norm(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_input(spec, 0, {DType::kF32}, "input"));
  const auto& dims = spec.in_dims(0);
  if (dims.size() < 3) {
    return invalid_argument(node_context(spec.node) + ": input rank " +
                            std::to_string(dims.size()) + " is below 3 (N, C, spatial...)");
  }
  const int64_t channels = dims[1];
  HSCHED_RETURN_IF_ERROR(check_channel_param(spec, 1, channels, "scale"));
  HSCHED_RETURN_IF_ERROR(check_channel_param(spec, 2, channels, "B"));
  const int64_t rows = dims[0] * channels;
  const int64_t n = reduction::product(dims, 2, dims.size());
  HSCHED_RETURN_IF_ERROR(check_output(spec, 0, DType::kF32, rows * n, "output"));
  const float epsilon = spec.node.attr_float("epsilon", 1e-5f);
  return make_kernel([rows, n, channels, epsilon](std::span<const Tensor* const> in,
                                                  std::span<Tensor* const> out) {
    const float* x = in[0]->values<float>().data();
    const float* scale = in[1]->values<float>().data();
    const float* bias = in[2]->values<float>().data();
    float* y = out[0]->values<float>().data();
    parallel_range(
        rows,
        [&](int64_t begin, int64_t end) {
          instance_norm_rows(x, y, begin, end, n, channels, scale, bias, epsilon);
        },
        grain_for(n));
    return Status::ok();
  });
}

// ---- BatchNormalization (inference) -----------------------------------------------------------

// y = x * a[c] + b[c] over rows [begin, end) of n elements, row r being channel r % channels.
HSCHED_VECTOR_CLONES void affine_rows(const float* x, float* y, int64_t begin, int64_t end,
                                      int64_t n, int64_t channels, const float* a, const float* b) {
  for (int64_t r = begin; r < end; ++r) {
    const float ar = a[r % channels];
    const float br = b[r % channels];
    for_each_blocked(n, [&](int64_t i) { y[r * n + i] = x[r * n + i] * ar + br; });
  }
}

// Per channel of `rows` rows of n (row r of channel r % channels): the mean and the population
// variance, in double.
void channel_statistics(const float* x, int64_t rows, int64_t n, int64_t channels,
                        std::vector<double>& mean, std::vector<double>& var) {
  mean.assign(static_cast<size_t>(channels), 0.0);
  var.assign(static_cast<size_t>(channels), 0.0);
  const double count = static_cast<double>(rows / channels) * static_cast<double>(n);
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += x[r * n + i];
    mean[static_cast<size_t>(r % channels)] += sum;
  }
  for (double& m : mean) m /= count;
  for (int64_t r = 0; r < rows; ++r) {
    const double m = mean[static_cast<size_t>(r % channels)];
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += (x[r * n + i] - m) * (x[r * n + i] - m);
    var[static_cast<size_t>(r % channels)] += sum;
  }
  for (double& v : var) v /= count;
}

// y = (x - mean) / sqrt(var + epsilon) * scale + B per channel of [N, C, ...], folded into one
// multiply-add per element. With training_mode 1 (weight standardization as NFNet and BiT write
// it: F.batch_norm with training=True) mean and var are x's own per channel, and the running
// statistics, where asked for, are input_mean * momentum + mean * (1 - momentum) and likewise.
Result<std::unique_ptr<Kernel>> make_batch_norm(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_input(spec, 0, {DType::kF32}, "X"));
  const bool training = spec.node.attr_int("training_mode", 0) != 0;
  if (spec.node.attr_int("spatial", 1) != 1) {
    return unsupported(spec, "attribute 'spatial' = 0 (per-activation statistics)");
  }
  for (size_t i = 1; i < spec.outputs.size() && !training; ++i) {
    if (has_output(spec, i)) {
      return unsupported(spec, "output " + std::to_string(i) +
                                   " (training statistics) is not supported in inference");
    }
  }
  const auto& dims = spec.in_dims(0);
  if (dims.size() < 2) {
    return invalid_argument(node_context(spec.node) + ": input rank " +
                            std::to_string(dims.size()) + " is below 2 (N, C, ...)");
  }
  const int64_t channels = dims[1];
  const char* names[] = {"scale", "B", "input_mean", "input_var"};
  for (size_t i = 1; i <= 4; ++i) {
    HSCHED_RETURN_IF_ERROR(check_channel_param(spec, i, channels, names[i - 1]));
  }
  const int64_t rows = dims[0] * channels;
  const int64_t n = reduction::product(dims, 2, dims.size());
  HSCHED_RETURN_IF_ERROR(check_output(spec, 0, DType::kF32, rows * n, "Y"));
  const bool running[] = {training && has_output(spec, 1), training && has_output(spec, 2)};
  for (size_t i = 1; i <= 2; ++i) {
    if (running[i - 1]) {
      HSCHED_RETURN_IF_ERROR(
          check_output(spec, i, DType::kF32, channels, i == 1 ? "running_mean" : "running_var"));
    }
  }
  if (training && rows * n == 0) {
    return invalid_argument(node_context(spec.node) + ": training_mode with an empty input");
  }
  const float epsilon = spec.node.attr_float("epsilon", 1e-5f);
  const float momentum = spec.node.attr_float("momentum", 0.9f);
  return make_kernel([rows, n, channels, epsilon, momentum, training, running](
                         std::span<const Tensor* const> in, std::span<Tensor* const> out) {
    std::vector<float> a(static_cast<size_t>(channels)), b(static_cast<size_t>(channels));
    const float* scale = in[1]->values<float>().data();
    const float* bias = in[2]->values<float>().data();
    const float* x = in[0]->values<float>().data();
    std::vector<double> mean(in[3]->values<float>().begin(), in[3]->values<float>().end());
    std::vector<double> var(in[4]->values<float>().begin(), in[4]->values<float>().end());
    if (training) {
      std::vector<double> batch_mean, batch_var;
      channel_statistics(x, rows, n, channels, batch_mean, batch_var);
      for (size_t i = 1; i <= 2; ++i) {
        if (!running[i - 1]) continue;
        const std::vector<double>& given = i == 1 ? mean : var;
        const std::vector<double>& batch = i == 1 ? batch_mean : batch_var;
        float* r = out[i]->values<float>().data();
        for (size_t c = 0; c < given.size(); ++c) {
          r[c] = static_cast<float>(given[c] * momentum + batch[c] * (1.0 - momentum));
        }
      }
      mean = std::move(batch_mean);
      var = std::move(batch_var);
    }
    for (size_t c = 0; c < static_cast<size_t>(channels); ++c) {
      const double k = scale[c] / std::sqrt(var[c] + epsilon);
      a[c] = static_cast<float>(k);
      b[c] = static_cast<float>(bias[c] - mean[c] * k);
    }
    float* y = out[0]->values<float>().data();
    parallel_range(
        rows,
        [&](int64_t begin, int64_t end) {
          affine_rows(x, y, begin, end, n, channels, a.data(), b.data());
        },
        grain_for(n));
    return Status::ok();
  });
}

}  // namespace

void register_normalization_kernels(KernelRegistry& registry) {
  registry.add("Softmax", make_softmax<false>);
  registry.add("LogSoftmax", make_softmax<true>);
  registry.add("LpNormalization", make_lp_normalization);
  registry.add("LayerNormalization", make_layer_norm);
  registry.add("InstanceNormalization", make_instance_norm);
  registry.add("BatchNormalization", make_batch_norm);
}

}  // namespace hsched::cpu
