// hsched.GroupNorm: the fused form of PyTorch's GroupNorm export (Reshape -> InstanceNormalization
// -> Reshape -> Mul -> Add), optionally followed by SiLU (x * Sigmoid(x)). The program's fusion
// pass (norm_fusion.cpp) builds it; models never name it (the importer refuses unknown ops).
// One pass for the statistics and one for normalize + affine + activation, in NCHW or NHWC, where
// the unfused chain made eight passes and forced NCHW between the convolutions around it.
#include <cmath>
#include <vector>

#include <tbb/combinable.h>

#include "backends/cpu/kernels/elementwise.h"
#include "backends/cpu/kernels/norm_fusion.h"
#include "backends/cpu/kernels/post_ops.h"
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

// Input [N, C, spatial...]; gamma and beta [C]; attributes num_groups, epsilon, silu.
Result<std::unique_ptr<Kernel>> make_group_norm(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_input(spec, 0, {DType::kF32}, "input"));
  const auto& dims = spec.in_dims(0);
  const int64_t groups = spec.node.attr_int("num_groups", 0);
  if (dims.size() < 3 || groups < 1 || dims[1] % groups != 0) {
    return invalid_argument(node_context(spec.node) + ": needs [N, C, spatial...] with C (" +
                            (dims.size() > 1 ? std::to_string(dims[1]) : "?") +
                            ") a multiple of num_groups (" + std::to_string(groups) + ")");
  }
  const int64_t channels = dims[1];
  for (size_t i : {size_t{1}, size_t{2}}) {
    HSCHED_RETURN_IF_ERROR(check_input(spec, i, {DType::kF32}, i == 1 ? "gamma" : "beta"));
    if (spec.inputs[i]->shape.elements() != channels) {
      return invalid_argument(node_context(spec.node) +
                              ": gamma and beta need one value per channel");
    }
  }
  const int64_t pixels = reduction::product(dims, 2, dims.size());
  HSCHED_RETURN_IF_ERROR(check_output(spec, 0, DType::kF32, dims[0] * channels * pixels, "output"));
  const bool channels_last = input_channels_last(spec.node, 0);
  if (channels_last != output_channels_last(spec.node, 0) || (channels_last && dims.size() != 4)) {
    return invalid_argument(node_context(spec.node) + ": input and output layouts differ");
  }
  return std::unique_ptr<Kernel>(std::make_unique<GroupNormKernel>(
      dims[0], channels, pixels, groups, spec.node.attr_float("epsilon", 1e-5f),
      spec.node.attr_int("silu", 0) != 0, channels_last));
}

}  // namespace

void register_group_norm_kernel(KernelRegistry& registry) {
  registry.add(kGroupNormOp, make_group_norm);
}

}  // namespace hsched::cpu
