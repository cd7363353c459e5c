// Private to the CPU kernel library: what the elementwise kernel files share with each other and
// with other kernel files (Expand can reuse the broadcast plan, any f16 code the conversions).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/cpu/kernel.h"
#include "backends/cpu/parallel.h"

namespace hsched::cpu {

// IEEE 754 binary16 and bfloat16 bit patterns <-> binary32. Narrowing rounds to nearest even,
// overflows to infinity and keeps NaN a (quiet) NaN; widening is exact.
float half_to_float(uint16_t bits);
uint16_t float_to_half(float value);
float bf16_to_float(uint16_t bits);
uint16_t float_to_bf16(float value);

// Calls f(i) for i in [0, n): blocks of a fixed 16 iterations, then a scalar tail. GCC 12 at -O2
// uses the "very cheap" vectoriser cost model, which vectorises only loops whose trip count is a
// known multiple of the vector width and that need no runtime alias check: a plain `for (i < n)`
// loop stays scalar, the fixed block vectorises. `ivdep` promises what the kernels guarantee (the
// restrict qualifiers alone get lost when the loop is inlined): f(i) writes only output element i
// and reads no output element, so iterations are independent.
template <typename F>
inline void for_each_blocked(int64_t n, F&& f) {
  constexpr int64_t kBlock = 16;
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
#pragma GCC ivdep
    for (int64_t j = 0; j < kBlock; ++j) f(i + j);
  }
  for (; i < n; ++i) f(i);
}

// Calls f(T{}) with T the C++ type of a dtype arithmetic is defined on (f32, i64, i32, i8, u8);
// false for any other dtype (bool, f16, bf16), for which nothing is instantiated.
template <typename F>
bool dispatch_numeric(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kF32:
      f(float{});
      return true;
    case DType::kI64:
      f(int64_t{});
      return true;
    case DType::kI32:
      f(int32_t{});
      return true;
    case DType::kI8:
      f(int8_t{});
      return true;
    case DType::kU8:
      f(uint8_t{});
      return true;
    default:
      return false;
  }
}

// Two's complement negation without signed-overflow UB: -INT_MIN wraps to INT_MIN, as it does in
// ONNX Runtime and numpy.
template <typename T>
T wrapping_neg(T x) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(U{0} - static_cast<U>(x));
  } else {
    return -x;
  }
}

// numpy broadcasting of up to kMaxBroadcastInputs inputs to one output, reduced once per kernel
// to the fewest axes: size-1 output axes are dropped and adjacent axes merge when every input is
// contiguous across both (or broadcast along both). Equal shapes become one flat run; [N,C,H,W]
// op [1,C,1,1] becomes runs of H*W against one scalar each; [B,T,C] op [C] runs of C against the
// same C values. The innermost merged axis is a "run": each input either steps through it
// contiguously (inner_step 1) or repeats one element (inner_step 0).
inline constexpr size_t kMaxBroadcastInputs = 3;

struct BroadcastPlan {
  size_t inputs = 0;
  int64_t total = 0;                                      // output elements
  int64_t inner = 1;                                      // elements of one run
  std::vector<int64_t> outer_dims;                        // the other merged axes, outermost first
  std::vector<std::vector<int64_t>> outer_strides;        // per input, in elements (0: broadcast)
  std::array<int64_t, kMaxBroadcastInputs> inner_step{};  // per input: 1 or 0
};

// `in_dims` must broadcast to `out_dims` (check_broadcast says so first).
BroadcastPlan make_broadcast_plan(const std::vector<std::vector<int64_t>>& in_dims,
                                  const std::vector<int64_t>& out_dims);

using RunOffsets = std::array<int64_t, kMaxBroadcastInputs>;

// Calls run(offsets, out_begin, length) for consecutive runs of the output, in parallel chunks
// (each call within one row of plan.inner); offsets[k] is the element of input k where the run
// starts, and input k then steps by plan.inner_step[k]. Index math happens once per run only.
template <typename Run>
void for_each_broadcast_run(const BroadcastPlan& plan, Run&& run) {
  const int64_t n = plan.inner;
  parallel_range(plan.total, [&](int64_t begin, int64_t end) {
    int64_t col = begin % n;
    BroadcastCursor cursor(plan.outer_dims, plan.outer_strides, begin / n);
    for (int64_t i = begin; i < end;) {
      const int64_t length = std::min(n - col, end - i);
      RunOffsets offsets{};
      for (size_t k = 0; k < plan.inputs; ++k) {
        offsets[k] = cursor.offset(k) + col * plan.inner_step[k];
      }
      run(offsets, i, length);
      i += length;
      col = 0;
      cursor.next();
    }
  });
}

// Factory checks shared by the elementwise files; each error names the node.
// InvalidArgument unless inputs [0, required) are present, there are at most `max_inputs`, and
// output 0 is present.
Status check_arity(const KernelSpec& spec, size_t required, size_t max_inputs);
// InvalidArgument unless inputs [first, first + count) broadcast to output 0's static dims.
Status check_broadcast(const KernelSpec& spec, size_t first, size_t count);
// Unimplemented when input `index` (or output 0) does not have dtype `expected`.
Status check_input_dtype(const KernelSpec& spec, size_t index, DType expected);
Status check_output_dtype(const KernelSpec& spec, DType expected);

// Registration of the parts (elementwise_unary.cpp, elementwise_binary.cpp); the rest lives in
// elementwise_kernels.cpp, whose register_elementwise_kernels calls these.
void register_unary_kernels(KernelRegistry& registry);   // unary math, Clip
void register_binary_kernels(KernelRegistry& registry);  // binary, comparisons, Min Max Sum Mean

}  // namespace hsched::cpu
