// Helpers shared by the TBB kernels: parallel loops, dtype dispatch, broadcasting.
#pragma once

#include <cstdint>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "hsched/dtype.h"
#include "hsched/tensor.h"

namespace hsched::cpu {

// Elements below which a loop runs on the calling thread: waking TBB workers costs more than
// it saves, and idle workers stay asleep instead of competing with oneDNN's OpenMP threads.
inline constexpr int64_t kParallelGrain = 32768;

// Calls body(begin, end) over [0, n), in parallel chunks of at least `grain` when n is large.
template <typename Body>
void parallel_range(int64_t n, Body&& body, int64_t grain = kParallelGrain) {
  if (n <= grain) {
    if (n > 0) body(int64_t{0}, n);
    return;
  }
  tbb::parallel_for(tbb::blocked_range<int64_t>(0, n, grain),
                    [&](const tbb::blocked_range<int64_t>& r) { body(r.begin(), r.end()); });
}

// Calls f(T{}) with T the C++ type of `dtype` (f16/bf16 as uint16_t bit patterns, bool as
// uint8_t, f64 as double). Returns false for kUndefined.
template <typename F>
bool dispatch_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kF32: f(float{}); return true;
    case DType::kI64: f(int64_t{}); return true;
    case DType::kI32: f(int32_t{}); return true;
    case DType::kI8: f(int8_t{}); return true;
    case DType::kU8:
    case DType::kBool: f(uint8_t{}); return true;
    case DType::kF16:
    case DType::kBF16:
    case DType::kU16: f(uint16_t{}); return true;
    case DType::kF64: f(double{}); return true;
    case DType::kI16: f(int16_t{}); return true;
    case DType::kU32: f(uint32_t{}); return true;
    case DType::kU64: f(uint64_t{}); return true;
    case DType::kUndefined: return false;
  }
  return false;
}

// Strides in elements of a row-major tensor.
std::vector<int64_t> row_major_strides(const std::vector<int64_t>& dims);

// numpy broadcasting of `in_dims` to `out_dims` (rank of out >= rank of in): the strides to use
// for each output axis when reading the input (0 along broadcast axes).
std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& in_dims,
                                       const std::vector<int64_t>& out_dims);

// Walks a row-major output of `dims` from element `begin`, keeping for each of several inputs
// the offset of the element it reads (given their broadcast strides).
class BroadcastCursor {
 public:
  BroadcastCursor(const std::vector<int64_t>& dims, std::vector<std::vector<int64_t>> strides,
                  int64_t begin);
  int64_t offset(size_t input) const { return offsets_[input]; }
  void next();

 private:
  std::vector<int64_t> dims_;
  std::vector<std::vector<int64_t>> strides_;
  std::vector<int64_t> index_;
  std::vector<int64_t> offsets_;
};

}  // namespace hsched::cpu
