#include "backends/cpu/kernels/resize_cubic.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "backends/cpu/kernels/parallel.h"

namespace hsched::cpu::resize_cubic {
namespace {

int64_t product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  return std::accumulate(dims.begin() + static_cast<std::ptrdiff_t>(begin),
                         dims.begin() + static_cast<std::ptrdiff_t>(end), int64_t{1},
                         std::multiplies<>());
}

// One axis: src is [outer, n_in, inner], dst [outer, n_out, inner].
void resize_axis(const AxisTaps& taps, int64_t outer, int64_t n_in, int64_t n_out, int64_t inner,
                 const float* src, float* dst) {
  parallel_range(
      outer * n_out,
      [&](int64_t begin, int64_t end) {
        const int64_t* const index = taps.index.data();
        const float* const weight = taps.weight.data();
        for (int64_t r = begin; r < end; ++r) {
          const int64_t o = r / n_out;
          const int64_t j = r % n_out;
          const float* s[4];
          float w[4];
          for (int t = 0; t < 4; ++t) {
            s[t] = src + (o * n_in + index[4 * j + t]) * inner;
            w[t] = weight[4 * j + t];
          }
          float* d = dst + r * inner;
          for (int64_t i = 0; i < inner; ++i) {
            d[i] = w[0] * s[0][i] + w[1] * s[1][i] + w[2] * s[2][i] + w[3] * s[3][i];
          }
        }
      },
      std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(4 * inner, 1)));
}

}  // namespace

void resize_separable(const std::vector<const AxisTaps*>& taps, const std::vector<int64_t>& in_dims,
                      const std::vector<int64_t>& out_dims, const float* in, float* out) {
  std::vector<size_t> axes;
  for (size_t a = 0; a < taps.size(); ++a) {
    if (taps[a] != nullptr) axes.push_back(a);
  }
  if (axes.empty()) {
    std::memcpy(out, in, static_cast<size_t>(product(in_dims, 0, in_dims.size())) * sizeof(float));
    return;
  }
  // Shrinking axes first: every later pass then works on fewer elements.
  std::stable_sort(axes.begin(), axes.end(), [&](size_t p, size_t q) {
    return out_dims[p] * in_dims[q] < out_dims[q] * in_dims[p];
  });
  std::vector<int64_t> dims = in_dims;
  std::vector<float> buffers[2];
  const float* src = in;
  for (size_t k = 0; k < axes.size(); ++k) {
    const size_t a = axes[k];
    const int64_t outer = product(dims, 0, a);
    const int64_t inner = product(dims, a + 1, dims.size());
    float* dst = out;
    if (k + 1 < axes.size()) {
      buffers[k % 2].resize(static_cast<size_t>(outer * out_dims[a] * inner));
      dst = buffers[k % 2].data();
    }
    resize_axis(*taps[a], outer, dims[a], out_dims[a], inner, src, dst);
    src = dst;
    dims[a] = out_dims[a];
  }
}

}  // namespace hsched::cpu::resize_cubic
