#include "backends/cpu/kernels/parallel.h"

#include <algorithm>

#include <omp.h>

namespace hsched::cpu {

void detail::run_chunks(int64_t n, int64_t grain, void (*call)(void*, int64_t, int64_t),
                        void* body) {
  const int64_t threads = omp_get_max_threads();
  // Up to four chunks a thread, taken in turn: a thread that is late to the region (woken from
  // its sleep, or sharing its core) takes fewer.
  const int64_t chunks = std::min(threads * 4, (n + grain - 1) / grain);
  if (chunks <= 1 || threads <= 1 || omp_in_parallel()) {
    call(body, 0, n);
    return;
  }
  const int team = static_cast<int>(std::min(threads, chunks));
#pragma omp parallel for schedule(dynamic, 1) num_threads(team)
  for (int64_t c = 0; c < chunks; ++c) call(body, n * c / chunks, n * (c + 1) / chunks);
}

std::vector<int64_t> row_major_strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& in_dims,
                                       const std::vector<int64_t>& out_dims) {
  std::vector<int64_t> strides(out_dims.size(), 0);
  const size_t offset = out_dims.size() - in_dims.size();
  const auto in_strides = row_major_strides(in_dims);
  for (size_t i = 0; i < in_dims.size(); ++i) {
    strides[offset + i] = in_dims[i] == 1 ? 0 : in_strides[i];
  }
  return strides;
}

BroadcastCursor::BroadcastCursor(const std::vector<int64_t>& dims,
                                 std::vector<std::vector<int64_t>> strides, int64_t begin)
    : dims_(dims), strides_(std::move(strides)), index_(dims.size(), 0),
      offsets_(strides_.size(), 0) {
  for (size_t a = dims_.size(); a-- > 0;) {
    index_[a] = dims_[a] == 0 ? 0 : begin % dims_[a];
    begin = dims_[a] == 0 ? 0 : begin / dims_[a];
  }
  for (size_t k = 0; k < strides_.size(); ++k) {
    for (size_t a = 0; a < dims_.size(); ++a) offsets_[k] += index_[a] * strides_[k][a];
  }
}

void BroadcastCursor::next() {
  for (size_t a = dims_.size(); a-- > 0;) {
    if (++index_[a] < dims_[a]) {
      for (size_t k = 0; k < strides_.size(); ++k) offsets_[k] += strides_[k][a];
      return;
    }
    for (size_t k = 0; k < strides_.size(); ++k) offsets_[k] -= (dims_[a] - 1) * strides_[k][a];
    index_[a] = 0;
  }
}

}  // namespace hsched::cpu
