// Helpers shared by the kernels: parallel loops, dtype dispatch, broadcasting.
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>


#include "hsched/dtype.h"
#include "hsched/tensor.h"

namespace hsched::cpu {

// Elements below which a loop runs on the calling thread: waking the team costs more than it
// saves.
inline constexpr int64_t kParallelGrain = 32768;

namespace detail {
// Runs call(body, begin, end) over [0, n) in chunks of at least `grain` on the calling thread's
// OpenMP team (parallel.cpp), or on the calling thread alone inside a parallel region.
void run_chunks(int64_t n, int64_t grain, void (*call)(void*, int64_t, int64_t), void* body);
}  // namespace detail

// Calls body(begin, end) over [0, n), in parallel chunks of at least `grain` when n is large.
// The chunks run on libgomp's team, the threads oneDNN's primitives run on: Debian's oneDNN is
// built on OpenMP, and a second pool (oneTBB's workers) on the same cores competed with the team's
// threads spinning between primitives (docs/cpu-backend.md#threads).
template <typename Body>
void parallel_range(int64_t n, Body&& body, int64_t grain = kParallelGrain) {
  if (n <= grain) {
    if (n > 0) body(int64_t{0}, n);
    return;
  }
  using B = std::remove_reference_t<Body>;
  detail::run_chunks(
      n, grain,
      [](void* b, int64_t begin, int64_t end) { (*static_cast<B*>(b))(begin, end); },
      const_cast<void*>(static_cast<const void*>(&body)));
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
