// OpenCL C of the integer kernels (ops_integer.h): int32 and int64 data held on the device in its
// own type, whatever the storage type of the floats; bools are the storage type's 1 and 0, as in
// the other programs. Built into the elementwise program, after kElementwiseSource (whose
// BroadcastShape and SelectShape it uses). Each kernel exists for int (suffix _i32), long
// (_i64), short (_i16), ushort (_u16), uint (_u32) and ulong (_u64).
#pragma once

namespace hsched::opencl {

inline constexpr const char* kIntegerSource = R"CL(
// The input element of output element i of a broadcast, for a and b (BroadcastShape).
int2 broadcast_at(const BroadcastShape* shape, int i) {
  int rest = i, ia = 0, ib = 0;
  for (int d = 5; d >= 0; --d) {
    const int coord = rest % shape->dims[d];
    rest /= shape->dims[d];
    ia += coord * shape->a_strides[d];
    ib += coord * shape->b_strides[d];
  }
  return (int2)(ia, ib);
}

// Binary ops with the codes of BinaryOp (ops.h): + - * and Pow (by squaring; a negative
// exponent gives 1 / x^-p truncated, as the CPU) wrap (computed unsigned), Max, Min,
// BitShift left (17) and right (18) of unsigned types (by the width or more: 0); Div
// truncates toward zero and Mod takes the divisor's sign (c_fmod: the dividend's); x / -1 is
// computed as a negation (INT_MIN / -1 wraps) and x % -1 is 0; a zero divisor gives 0 and sets
// bit kDivisionByZero (1) of *error. Comparisons (7-11) write bools. Float to integer saturates
// to int64 first (NaN gives 0) and int32 keeps the low 32 bits, as the CPU's Cast does.
#define INTEGER_KERNELS(T, U, S)                                                              \
  T int_pow_##S(T a, T b) {                                                                   \
    if ((T)-1 < (T)0 && b < 0) return a == 1 ? 1 : a == (T)-1 ? (b % 2 == 0 ? 1 : a) : 0;     \
    U result = 1, base = (U)a;                                                                \
    for (U e = (U)b; e != 0; e >>= 1) {                                                       \
      if (e & 1) result = (U)(result * base);                                                 \
      base = (U)(base * base);                                                                \
    }                                                                                         \
    return (T)result;                                                                         \
  }                                                                                           \
  __kernel void pow_exponent_##S(__global const storage_t* a, __global const T* b,            \
                                 __global storage_t* y, BroadcastShape shape, int count) {    \
    const int i = get_global_id(0);                                                           \
    if (i >= count) return;                                                                   \
    const int2 at = broadcast_at(&shape, i);                                                  \
    STORE(pow(LOAD(a, at.x), (float)b[at.y]), y, i);                                          \
  }                                                                                           \
  T int_apply_##S(int op, T a, T b, int c_fmod, __global int* error) {                       \
    if (op == 0) return (T)((U)a + (U)b);                                                     \
    if (op == 1) return (T)((U)a - (U)b);                                                     \
    if (op == 2) return (T)((U)a * (U)b);                                                     \
    if (op == 5) return a > b ? a : b;                                                        \
    if (op == 6) return a < b ? a : b;                                                        \
    if (op == 4) return int_pow_##S(a, b);                                                    \
    if (op == 17) return b >= 8 * sizeof(T) ? 0 : (T)((U)a << b);                             \
    if (op == 18) return b >= 8 * sizeof(T) ? 0 : (T)((U)a >> b);                             \
    if (b == 0) {                                                                             \
      atomic_or(error, 1);                                                                    \
      return 0;                                                                               \
    }                                                                                         \
    if ((T)-1 < (T)0 && b == (T)-1) return op == 3 ? (T)((U)0 - (U)a) : 0;                   \
    if (op == 3) return a / b;                                                                \
    T r = a % b;                                                                              \
    if (!c_fmod && r != 0 && ((r < 0) != (b < 0))) r += b;                                    \
    return r;                                                                                 \
  }                                                                                           \
  __kernel void int_binary_##S(__global const T* a, __global const T* b, __global T* y,      \
                               int op, int c_fmod, BroadcastShape shape,                      \
                               __global int* error, int count) {                              \
    const int i = get_global_id(0);                                                           \
    if (i >= count) return;                                                                   \
    const int2 at = broadcast_at(&shape, i);                                                  \
    y[i] = int_apply_##S(op, a[at.x], b[at.y], c_fmod, error);                                \
  }                                                                                           \
  __kernel void int_compare_##S(__global const T* a, __global const T* b,                    \
                                __global storage_t* y, int op, BroadcastShape shape,          \
                                int count) {                                                  \
    const int i = get_global_id(0);                                                           \
    if (i >= count) return;                                                                   \
    const int2 at = broadcast_at(&shape, i);                                                  \
    const T l = a[at.x], r = b[at.y];                                                         \
    const int yes = op == 7 ? l == r : op == 8 ? l < r : op == 9 ? l <= r : op == 10 ? l > r \
                                                                             : l >= r;        \
    STORE(yes ? 1.0f : 0.0f, y, i);                                                           \
  }                                                                                           \
  __kernel void int_select_##S(__global const storage_t* cond, __global const T* a,          \
                               __global const T* b, __global T* y, SelectShape shape,         \
                               int count) {                                                   \
    const int i = get_global_id(0);                                                           \
    if (i >= count) return;                                                                   \
    int rest = i, ic = 0, ia = 0, ib = 0;                                                     \
    for (int d = 5; d >= 0; --d) {                                                            \
      const int coord = rest % shape.dims[d];                                                 \
      rest /= shape.dims[d];                                                                  \
      ic += coord * shape.cond_strides[d];                                                    \
      ia += coord * shape.a_strides[d];                                                       \
      ib += coord * shape.b_strides[d];                                                       \
    }                                                                                         \
    y[i] = LOAD(cond, ic) != 0.0f ? a[ia] : b[ib];                                            \
  }                                                                                           \
  __kernel void int_trilu_##S(__global const T* x, __global T* y, int h, int w, int k,       \
                              int upper, int count) {                                         \
    const int i = get_global_id(0);                                                           \
    if (i >= count) return;                                                                   \
    const int d = i % w - (i / w) % h;                                                        \
    y[i] = (upper ? d >= k : d <= k) ? x[i] : 0;                                              \
  }                                                                                           \
  __kernel void int_from_storage_##S(__global const storage_t* x, __global T* y, int count) { \
    const int i = get_global_id(0);                                                           \
    if (i >= count) return;                                                                   \
    y[i] = (T)(U)(ulong)convert_long_sat_rtz(LOAD(x, i));                                     \
  }                                                                                           \
  __kernel void int_to_storage_##S(__global const T* x, __global storage_t* y, int to_bool,  \
                                   int count) {                                               \
    const int i = get_global_id(0);                                                           \
    if (i >= count) return;                                                                   \
    STORE(to_bool ? (x[i] != 0 ? 1.0f : 0.0f) : (float)x[i], y, i);                          \
  }

INTEGER_KERNELS(int, uint, i32)
INTEGER_KERNELS(long, ulong, i64)
INTEGER_KERNELS(short, ushort, i16)
INTEGER_KERNELS(ushort, ushort, u16)
INTEGER_KERNELS(uint, uint, u32)
INTEGER_KERNELS(ulong, ulong, u64)

// DequantizeLinear of int32 data (a QDQ model's biases): y = (x - zero) * scale, the difference
// exact in 64 bits, the CPU's; scale and zero as quantize_linear's (has_zero 0: no zero point).
__kernel void dequantize_i32(__global const int* x, __global const storage_t* scale,
                             __global const int* zero, __global storage_t* y, int has_zero,
                             int channels, int inner, int count) {
  const int i = get_global_id(0);
  if (i >= count) return;
  const int c = (i / inner) % channels;
  const long z = has_zero ? (long)zero[c] : 0;
  STORE((float)((long)x[i] - z) * LOAD(scale, c), y, i);
}

// Integer arithmetic on 8-bit data (held as exact floats in the storage type): the int result
// of BinaryOp `op` (Add, Sub, Mul, Div, Mod, BitShift 17/18) wrapped into u8 or i8, as the
// CPU's integer kernels wrap; a zero divisor gives 0 and sets bit 1 of *error.
__kernel void byte_binary(__global const storage_t* a, __global const storage_t* b,
                          __global storage_t* y, int op, int is_signed, int c_fmod,
                          BroadcastShape shape, __global int* error, int count) {
  const int i = get_global_id(0);
  if (i >= count) return;
  const int2 at = broadcast_at(&shape, i);
  const int l = (int)LOAD(a, at.x), r = (int)LOAD(b, at.y);
  int v = 0;
  if (op == 0) {
    v = l + r;
  } else if (op == 1) {
    v = l - r;
  } else if (op == 2) {
    v = l * r;
  } else if (op == 17 || op == 18) {
    v = r >= 8 ? 0 : op == 17 ? l << r : l >> r;
  } else if (r == 0) {
    atomic_or(error, 1);
  } else if (r == -1) {
    v = op == 3 ? -l : 0;
  } else if (op == 3) {
    v = l / r;
  } else {
    v = l % r;
    if (!c_fmod && v != 0 && ((v < 0) != (r < 0))) v += r;
  }
  v &= 0xFF;
  STORE((float)(is_signed && v >= 128 ? v - 256 : v), y, i);
}

// Cast to 8 bits from data in the storage type: truncated, saturated to int64 (NaN 0), its low
// 8 bits (signed for i8), as the CPU's Cast.
__kernel void cast_to_byte(__global const storage_t* x, __global storage_t* y, int is_signed,
                           int count) {
  const int i = get_global_id(0);
  if (i >= count) return;
  const int v = (int)(convert_long_sat_rtz(LOAD(x, i)) & 0xFF);
  STORE((float)(is_signed && v >= 128 ? v - 256 : v), y, i);
}

// float16 data held as raw halves (any storage type): conversions (rounding to nearest even),
// and Max, Min (as the CPU: a < b ? b : a) and Mod (fmod, exact) computed in float.
__kernel void half_to_storage(__global const half* x, __global storage_t* y, int count) {
  const int i = get_global_id(0);
  if (i < count) STORE(vload_half(i, x), y, i);
}
__kernel void storage_to_half(__global const storage_t* x, __global half* y, int count) {
  const int i = get_global_id(0);
  if (i < count) vstore_half_rte(LOAD(x, i), i, y);
}
__kernel void half_binary(__global const half* a, __global const half* b, __global half* y,
                          int op, BroadcastShape shape, int count) {
  const int i = get_global_id(0);
  if (i >= count) return;
  const int2 at = broadcast_at(&shape, i);
  const float l = vload_half(at.x, a), r = vload_half(at.y, b);
  vstore_half_rte(op == 5 ? (l < r ? r : l) : op == 6 ? (r < l ? r : l) : fmod(l, r), i, y);
}

// int32 <-> int64: widening exact, narrowing keeps the low 32 bits.
__kernel void int_widen(__global const int* x, __global long* y, int count) {
  const int i = get_global_id(0);
  if (i < count) y[i] = x[i];
}
__kernel void int_narrow(__global const long* x, __global int* y, int count) {
  const int i = get_global_id(0);
  if (i < count) y[i] = (int)(uint)(ulong)x[i];
}
)CL";

}  // namespace hsched::opencl
