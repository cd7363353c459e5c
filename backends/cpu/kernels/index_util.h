// Internal to the indexing kernels (index, scatter, gather and tfidf kernels):
// reading index tensors, the one-line error for an index out of range, and the tuple addressing
// that GatherND and ScatterND share.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "backends/cpu/kernels/layout_util.h"

namespace hsched::cpu {

using Dims = std::vector<int64_t>;

inline int64_t product(Dims::const_iterator begin, Dims::const_iterator end) {
  return std::accumulate(begin, end, int64_t{1}, std::multiplies<>());
}

inline int64_t elem_bytes(const Value& value) {
  return static_cast<int64_t>(dtype_size(value.dtype));
}

inline bool is_index_dtype(DType t) { return t == DType::kI64 || t == DType::kI32; }

// Element k of an i32/i64 tensor's bytes (the dtype checked when the kernel was created).
inline int64_t index_at(const std::byte* data, bool is64, int64_t k) {
  if (is64) {
    int64_t v;
    std::memcpy(&v, data + k * 8, 8);
    return v;
  }
  int32_t v;
  std::memcpy(&v, data + k * 4, 4);
  return v;
}

// "node 'n' (Op): index 7 (at position 3) is out of range for axis 1 of size 4".
Status index_out_of_range(const std::string& context, int64_t value, int64_t position,
                          int64_t axis, int64_t extent);

// InvalidArgument naming the node unless input i (called `what`) is present and i32 or i64.
Status check_index_input(const KernelSpec& spec, size_t i, const char* what);

// The index tuples of GatherND and ScatterND: indices [..., last] address slices of data, whose
// first `last` axes (after `batch` leading axes shared with indices) they pick.
struct TupleLayout {
  int64_t batches = 1;        // product of the shared leading axes
  int64_t tuples = 1;         // tuples per batch
  int64_t last = 0;           // components per tuple
  int64_t slice = 1;          // elements per addressed slice
  int64_t batch_stride = 1;   // elements of data per batch
  Dims extents;               // data's extent for each component
  Dims strides;               // data's stride (elements) for each component
};

// The layout of `indices` tuples into `data`; the shapes checked by the caller (1 <= last <=
// rank - batch_dims, leading batch_dims axes equal).
TupleLayout tuple_layout(const Dims& data, const Dims& indices, int64_t batch_dims);

// Element offset into data of every tuple (batch-major), or the first index out of range.
Result<Dims> tuple_offsets(const std::string& context, const TupleLayout& t, const Tensor& indices,
                           int64_t batch_dims);

// ScatterND, ScatterElements, Scatter (scatter_kernels.cpp); register_index_kernels calls it.
void register_scatter_kernels(KernelRegistry& registry);

}  // namespace hsched::cpu
