// Private to the CPU kernel library: what the elementwise kernel files share with each other and
// with other kernel files (Expand can reuse the broadcast plan, any f16 code the conversions).
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/cpu/kernels/kernel.h"
#include "backends/cpu/kernels/parallel.h"
#include "core/float16.h"  // half_to_float, float_to_half, bf16_to_float, float_to_bf16

namespace hsched::cpu {

// The elementwise fp32 ops of one data input (Clip's bounds are scalars) that run whatever the
// layout and, between a DequantizeLinear and a QuantizeLinear, as one table lookup.
bool is_elementwise_unary(const std::string& op);

// Calls f(i) for i in [0, n): blocks of a fixed 16 iterations, then a scalar tail. GCC 12 at -O2
// uses the "very cheap" vectoriser cost model, which vectorises only loops whose trip count is a
// known multiple of the vector width and that need no runtime alias check: a plain `for (i < n)`
// loop stays scalar, the fixed block vectorises. `ivdep` promises what the kernels guarantee (the
// restrict qualifiers alone get lost when the loop is inlined): f(i) writes only output element i
// and reads no output element, so iterations are independent.
// Always inlined, so that inside a HSCHED_VECTOR_CLONES function the loop is compiled for that
// clone's target (AVX-512...), not left as a baseline-ISA call.
template <typename F>
[[gnu::always_inline]] inline void for_each_blocked(int64_t n, F&& f) {
  constexpr int64_t kBlock = 16;
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
#if !defined(__clang__)  // gcc's vectoriser; clang (the sanitizer builds) checks aliasing itself
#pragma GCC ivdep
#endif
    for (int64_t j = 0; j < kBlock; ++j) f(i + j);
  }
  for (; i < n; ++i) f(i);
}

// --- Vectorisable float math ---------------------------------------------------------------------
// libm's expf/erff/tanhf are scalar calls (GCC only uses glibc's vector versions under
// -ffast-math), which made Erf (GELU), Sigmoid (SiLU) and Tanh cost 5-10x a memory-bound op.
// These use only arithmetic, compares and bit casts, so loops over them vectorise at -O2.
// Accuracy, measured against double libm over dense sweeps: exp <= 1.1 ulp, expm1, sigmoid,
// tanh and erf <= 2.6 ulp (libm's float versions: <= 1 ulp, tanhf 2.1). NaN stays NaN, +-inf
// and overflow give libm's results; denormal results of exp keep fewer bits than libm's.

// cond ? a : b without a branch. A plain ternary against a constant lets GCC's jump threading
// specialise the code after it (x == -104 folds everything that follows into a constant), and the
// resulting control flow stops the vectoriser; bit operations leave nothing to thread.
inline float pick(bool cond, float a, float b) {
  const uint32_t mask = 0u - static_cast<uint32_t>(cond);
  return std::bit_cast<float>((std::bit_cast<uint32_t>(a) & mask) |
                              (std::bit_cast<uint32_t>(b) & ~mask));
}
// min(max(x, lo), hi), NaN passing through.
inline float clamp_float(float x, float lo, float hi) {
  x = pick(x < lo, lo, x);
  return pick(x > hi, hi, x);
}
inline float abs_float(float x) {
  return std::bit_cast<float>(std::bit_cast<uint32_t>(x) & 0x7fffffffu);
}
// |magnitude| with the sign bit of `sign` (magnitude must be non-negative).
inline float with_sign_of(float magnitude, float sign) {
  return std::bit_cast<float>(std::bit_cast<uint32_t>(magnitude) |
                              (std::bit_cast<uint32_t>(sign) & 0x80000000u));
}

// exp(x) = 2^n * (1 + q), n = round(x / ln 2), q = expm1(r) for r = x - n ln 2 in [-ln2/2, ln2/2].
// 2^n is applied as two factors so that n in [-150, 128] (denormal results, overflow to inf)
// needs no special case.
struct ExpParts {
  float q;
  float scale1;
  float scale2;
};
inline ExpParts exp_parts(float x) {
  x = clamp_float(x, -104.0f, 89.0f);  // beyond: 0 and inf anyway; keeps n in range
  // Adding 1.5 * 2^23 rounds x / ln 2 to an integer held in the low mantissa bits.
  const float shifted = x * 1.44269504088896341f + 12582912.0f;
  const float n = shifted - 12582912.0f;
  const auto n_int = static_cast<int32_t>(std::bit_cast<uint32_t>(shifted) - 0x4b400000u);
  // Cody-Waite: ln 2 = 0.693359375 (exact in 9 bits, so n * it is exact) - 2.12194440e-4.
  const float r = (x - n * 0.693359375f) - n * -2.12194440e-4f;
  // Taylor series to r^7: the rest is below 6e-9 relative for |r| <= 0.347.
  const float q =
      r +
      r * r *
          (0.5f + r * (1.0f / 6 +
                       r * (1.0f / 24 + r * (1.0f / 120 + r * (1.0f / 720 + r * (1.0f / 5040))))));
  const int32_t n1 = n_int >> 1;
  const int32_t n2 = n_int - n1;
  return {q, std::bit_cast<float>(static_cast<uint32_t>(n1 + 127) << 23),
          std::bit_cast<float>(static_cast<uint32_t>(n2 + 127) << 23)};
}

inline float fast_exp(float x) {
  const ExpParts p = exp_parts(x);
  return (1.0f + p.q) * p.scale1 * p.scale2;
}

// exp(x) - 1, accurate near 0 (q carries it) where exp(x) - 1 would cancel.
inline float fast_expm1(float x) {
  const ExpParts p = exp_parts(x);
  const float scale = p.scale1 * p.scale2;  // inf for n = 128: that case takes exp's form
  return pick(x > 80.0f, (1.0f + p.q) * p.scale1 * p.scale2, scale * p.q + (scale - 1.0f));
}

inline float fast_sigmoid(float x) { return 1.0f / (1.0f + fast_exp(-x)); }

// tanh|x| = e / (e + 2) with e = expm1(2|x|); tanh(9) is 1.0f already.
inline float fast_tanh(float x) {
  const float e = fast_expm1(2.0f * clamp_float(abs_float(x), 0.0f, 9.0f));
  return with_sign_of(e / (e + 2.0f), x);
}

// |x| < 0.5: Taylor series of erf to z^13. Above: erf = 1 - exp(h(z) - z^2) with h(z) =
// log(erfc(z)) + z^2 fitted on [0.5, 3.92] (a degree-7 polynomial in z mapped to [-1, 1],
// weighted minimax, error < 3e-9 in erf); erf(3.92) is 1.0f already.
inline float fast_erf(float x) {
  const float z = clamp_float(abs_float(x), 0.0f, 3.92f);
  const float z2 = z * z;
  const float series =
      z *
      (1.12837917f +
       z2 * (-0.376126389f +
             z2 * (0.112837917f +
                   z2 * (-0.0268661706f +
                         z2 * (0.00522397762f + z2 * (-0.000854832702f + z2 * 0.000120553329f))))));
  const float s = z * 0.584795322f - 1.29239766f;
  const float h =
      -1.44953938f +
      s * (-0.663822387f +
           s * (0.195145321f +
                s * (-0.0686613031f +
                     s * (0.0258564408f +
                          s * (-0.00609378737f + s * (0.00470705714f + s * -0.000241963715f))))));
  const float tail = 1.0f - fast_exp(h - z2);
  return with_sign_of(pick(z < 0.5f, series, tail), x);
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

// dispatch_numeric plus the dtypes fewer ops take (f64, i16, u16, u32, u64): kernels that list
// them call this one, so that the others instantiate no code for them.
template <typename F>
bool dispatch_numeric_wide(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kF64:
      f(double{});
      return true;
    case DType::kI16:
      f(int16_t{});
      return true;
    case DType::kU16:
      f(uint16_t{});
      return true;
    case DType::kU32:
      f(uint32_t{});
      return true;
    case DType::kU64:
      f(uint64_t{});
      return true;
    default:
      return dispatch_numeric(dtype, std::forward<F>(f));
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
// InvalidArgument unless output 0 has input 0's dims (ops that read as many elements as they write).
Status check_same_dims(const KernelSpec& spec);
// Unimplemented when input `index` (or output 0) does not have dtype `expected`.
Status check_input_dtype(const KernelSpec& spec, size_t index, DType expected);
Status check_output_dtype(const KernelSpec& spec, DType expected);

// Registration of the parts (elementwise_unary.cpp, elementwise_binary.cpp); the rest lives in
// elementwise_kernels.cpp, whose register_elementwise_kernels calls these.
void register_unary_kernels(KernelRegistry& registry);   // unary math, Clip
void register_binary_kernels(KernelRegistry& registry);  // binary, comparisons, Min Max Sum Mean

}  // namespace hsched::cpu
