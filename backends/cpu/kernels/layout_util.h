// Internal to the data-movement kernels (layout_kernels.cpp and its siblings): shared helpers and
// the strided-copy engine that Transpose, Slice, Split, Expand, Tile and DepthToSpace all reduce
// to. Data movement never looks at values, only at element sizes, so every dtype works.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "backends/cpu/kernels/kernel.h"
#include "backends/cpu/kernels/parallel.h"

namespace hsched::cpu {

// Bytes below which a copy runs on the calling thread (kParallelGrain elements of f32).
inline constexpr int64_t kCopyGrainBytes = kParallelGrain * 4;

// Registration of the families split out of layout_kernels.cpp; register_layout_kernels calls them.
void register_gather_kernels(KernelRegistry& registry);  // Gather, GatherElements
void register_pad_kernels(KernelRegistry& registry);     // Pad
void register_resize_kernels(KernelRegistry& registry);  // Resize, Upsample

// Unimplemented unless every input and output the node has is present with a static shape and a
// known dtype, and input 0 (when `same_dtype`) has the element size of output 0.
Status check_static_shapes(const KernelSpec& spec, bool same_dtype = true);

// Axis in [-rank, rank) to [0, rank); InvalidArgument naming the node otherwise.
Result<int64_t> normalize_axis(const KernelSpec& spec, int64_t axis, size_t rank);

// An i32/i64 tensor's values as int64; InvalidArgument for other dtypes.
Result<std::vector<int64_t>> read_ints(const Tensor& tensor, const std::string& what);
// An f32 tensor's values; Unimplemented for other dtypes.
Result<std::vector<float>> read_floats(const Tensor& tensor, const std::string& what);

// Writes `value` converted to `dtype` into `out` (dtype_size(dtype) bytes): pad and extrapolation
// values come as float attributes whatever the tensor's dtype.
void encode_scalar(double value, DType dtype, std::byte* out);

// Fills `count` elements of `elem` bytes at `dst` with the element at `pattern`.
void fill_elements(std::byte* dst, const std::byte* pattern, size_t elem, int64_t count);

// memcpy split over the worker threads when large.
void parallel_copy(std::byte* dst, const std::byte* src, size_t bytes);

// Calls f(U{}) with U the unsigned integer type of `bytes` bytes; false for other sizes. Lets
// data-movement loops copy elements by size, never by dtype.
template <typename F>
bool dispatch_element_size(size_t bytes, F&& f) {
  switch (bytes) {
    case 1:
      f(uint8_t{});
      return true;
    case 2:
      f(uint16_t{});
      return true;
    case 4:
      f(uint32_t{});
      return true;
    case 8:
      f(uint64_t{});
      return true;
    default:
      return false;
  }
}

// A gather of the input into a dense row-major output: output element with index (i0, i1, ...)
// is the `elem` bytes at input byte offset `offset + sum(i_k * strides[k])`. Strides may be zero
// (broadcast) or negative (Slice with negative steps).
struct StridedView {
  std::vector<int64_t> dims;
  std::vector<int64_t> strides;  // bytes, one per output axis
  int64_t offset = 0;            // bytes
  int64_t elem = 0;              // bytes per element

  // Drops unit axes, merges axes that are contiguous in the input and folds a trailing axis that
  // the input stores densely into a larger element, so that the copy loops run over the fewest,
  // longest rows. Call once when the kernel is created.
  StridedView simplified() const;
  int64_t elements() const;
};

// Copies `view` (simplified or not) from `in` (the input tensor's first byte) to dense `out`.
// Uses a cache-tiled transpose when one output axis walks the input densely but the innermost
// does not; otherwise copies row by row. Parallel over rows or tiles when large.
void copy_strided(const StridedView& view, const std::byte* in, std::byte* out);

// The view of a Transpose of a dense tensor of `in_dims` by `perm` (output axis k = input axis
// perm[k]).
StridedView transpose_view(const std::vector<int64_t>& in_dims, const std::vector<int64_t>& perm,
                           int64_t elem);

}  // namespace hsched::cpu
