// The row loops and a check of normalization_kernels.cpp that the fused normalizations
// (fused_norm_kernels.cpp) use too, and the Eigen-order sums of group_norm.cpp that
// InstanceNormalization uses. Internal to the CPU kernels.
#pragma once

#include <cstdint>

#include "backends/cpu/kernels/kernel.h"

namespace hsched::cpu {

// LayerNormalization of rows [begin, end) of n elements; scale, bias, mean_out and inv_out may
// each be null; y may be x.
void layer_norm_rows(const float* x, float* y, int64_t begin, int64_t end, int64_t n,
                     const float* scale, const float* bias, float epsilon, float* mean_out,
                     float* inv_out);

// The fp32 sum of v[0, n), and of its squared deviations from `mean` ((v - mean) * (v - mean),
// each rounded), in the order of Eigen's vectorized sums: ONNX Runtime's InstanceNormalization
// (Xi.mean(), squaredNorm()). group_norm.cpp.
float eigen_order_sum(const float* v, int64_t n);
float eigen_order_squares(const float* v, int64_t n, float mean);

// Checks a per-channel parameter, input i: f32 with exactly `channels` elements.
Status check_channel_param(const KernelSpec& spec, size_t i, int64_t channels, const char* what);

}  // namespace hsched::cpu
