// OpenCL C of the integer products (ops_quant.h): MatMulInteger, ConvInteger, QLinearMatMul and
// QLinearConv over 8-bit data held as its integer values in the storage type, each product of
// (x - zero point) terms summed in 32 bits (wrapping, as int32 accumulation does), then written
// as int32 or requantized as the CPU does it. Built into the elementwise program.
#pragma once

namespace hsched::opencl {

inline constexpr const char* kQuantSource = R"CL(
#pragma OPENCL FP_CONTRACT OFF
// A zero point or scale of `count` values (0: none, 1: per tensor, else per index `at`).
float quant_param(__global const storage_t* p, int count, int at, float none) {
  return count == 0 ? none : LOAD(p, count == 1 ? 0 : at);
}

// saturate(round_half_even(v) + zero_point) into [lo, hi]: v clamped first, then rounded, the
// zero point added as an integer (the CPU's saturate_round).
float requantize(float v, int zero_point, int lo, int hi) {
  const float low = (float)(lo - zero_point), high = (float)(hi - zero_point);
  v = v >= low ? v : low;
  v = v <= high ? v : high;
  return (float)((int)rint(v) + zero_point);
}

// DynamicQuantizeLinear, as the CPU: lo = min(0, min x), hi = max(0, max x) (one work group of
// 64 items), scale = (hi - lo) / 255, zero point = saturate(round(-lo / scale)) (0 where scale is
// 0); then y = saturate(round(x / scale) + zero point), 0 where scale is 0 or NaN.
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void dynamic_quant_params(__global const storage_t* x, __global storage_t* scale,
                          __global storage_t* zero, int count) {
  __local float lows[64], highs[64];
  const int lid = get_local_id(0);
  float lo = 0.0f, hi = 0.0f;
  for (int i = lid; i < count; i += 64) {
    const float v = LOAD(x, i);
    lo = v < lo ? v : lo;
    hi = hi < v ? v : hi;
  }
  lows[lid] = lo;
  highs[lid] = hi;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int step = 32; step > 0; step /= 2) {
    if (lid < step) {
      lows[lid] = lows[lid + step] < lows[lid] ? lows[lid + step] : lows[lid];
      highs[lid] = highs[lid] < highs[lid + step] ? highs[lid + step] : highs[lid];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid != 0) return;
  const float s = (highs[0] - lows[0]) / 255.0f;
  STORE(s, scale, 0);
  STORE(s == 0.0f ? 0.0f : requantize(-lows[0] / s, 0, 0, 255), zero, 0);
}
__kernel void dynamic_quantize(__global const storage_t* x, __global const storage_t* scale,
                               __global const storage_t* zero, __global storage_t* y,
                               int count) {
  const int i = get_global_id(0);
  if (i >= count) return;
  const float s = LOAD(scale, 0);
  STORE(s == 0.0f || isnan(s) ? 0.0f : requantize(LOAD(x, i) / s, (int)LOAD(zero, 0), 0, 255),
        y, i);
}

// binary's y = op(a, b) with a DequantizeLinear of either input and a QuantizeLinear of the
// output fused in: an input with a scale > 0 holds 8-bit integers, read as (x - zero) * scale;
// with y_scale > 0 y holds clamp(rint(v / y_scale) + y_zero, lo, hi). The graph's float
// operations, so its values.
typedef struct {
  float a_scale, a_zero, b_scale, b_zero, y_scale, y_zero, lo, hi;
} QdqBinary;

__kernel void qdq_binary(__global const storage_t* a, __global const storage_t* b,
                         __global storage_t* y, int op, BroadcastShape shape, QdqBinary q,
                         int count) {
  const int i = get_global_id(0);
  if (i >= count) return;
  const int2 at = broadcast_at(&shape, i);  // (kernel_sources_integer.h)
  float va = LOAD(a, at.x), vb = LOAD(b, at.y);
  if (q.a_scale > 0.0f) va = (va - q.a_zero) * q.a_scale;
  if (q.b_scale > 0.0f) vb = (vb - q.b_zero) * q.b_scale;
  const float v = apply_binary(op, va, vb);
  STORE(q.y_scale > 0.0f ? clamp(rint(v / q.y_scale) + q.y_zero, q.lo, q.hi) : v, y, i);
}

// ONNX Runtime's QLinearAdd and QLinearMul (backends/cpu/kernels/qlinear_arith.h) on a and b of
// one 8-bit type, the graph's operand order: form 0 Add, fma(a, ra, fma(b, rb, fixed)); 1 Add of
// one value b, fma(a, ra, fixed + b * rb); 2 Add of one value a, fma(b, rb, fixed + a * ra);
// 3 Mul, (a - za) * (b - zb) * multiplier + fixed; rounded to nearest even and saturated. fixed
// holds y's zero point (for the Add, less the operands' zero points' share). No contraction: each
// product and sum rounds as MLAS's.
typedef struct {
  float ra, rb, fixed, multiplier, za, zb, lo, hi;
  int form;
} QLinearBinary;

__kernel void qlinear_binary(__global const storage_t* a, __global const storage_t* b,
                             __global storage_t* y, BroadcastShape shape, QLinearBinary q,
                             int count) {
#pragma OPENCL FP_CONTRACT OFF
  const int i = get_global_id(0);
  if (i >= count) return;
  const int2 at = broadcast_at(&shape, i);
  const float va = LOAD(a, at.x), vb = LOAD(b, at.y);
  float v;
  if (q.form == 0) {
    v = fma(va, q.ra, fma(vb, q.rb, q.fixed));
  } else if (q.form == 1) {
    const float term = vb * q.rb;
    v = fma(va, q.ra, q.fixed + term);
  } else if (q.form == 2) {
    const float term = va * q.ra;
    v = fma(vb, q.rb, q.fixed + term);
  } else {
    const float product = (va - q.za) * (vb - q.zb);
    const float scaled = product * q.multiplier;
    v = scaled + q.fixed;
  }
  STORE(clamp(rint(v), q.lo, q.hi), y, i);
}

// ONNX Runtime's QLinearSoftmax over rows of `size` 8-bit integers, one work item a row (its
// sums in order): each value's exponential relative to the row's largest from `table`
// (core/qlinear.h), their fp32 sum in index order, y = saturate(rint(e * y_factor / sum)
// + y_zero), the quotient first where `overflows`.
__kernel void qlinear_softmax_rows(__global const storage_t* x, __global storage_t* y,
                                   __global const float* table, int rows, int size,
                                   float y_factor, int overflows, float y_zero, float lo,
                                   float hi) {
#pragma OPENCL FP_CONTRACT OFF
  const int row = get_global_id(0);
  if (row >= rows) return;
  const int base = row * size;
  float peak = LOAD(x, base);
  for (int i = 1; i < size; ++i) peak = fmax(peak, LOAD(x, base + i));
  const int shift = 255 - (int)peak;
  float sum = 0.0f;
  for (int i = 0; i < size; ++i) sum += table[(int)LOAD(x, base + i) + shift];
  for (int i = 0; i < size; ++i) {
    const float e = table[(int)LOAD(x, base + i) + shift];
    const float scaled = e * y_factor;
    const float v = overflows ? e / sum * y_factor : scaled / sum;
    STORE(clamp(rint(v) + y_zero, lo, hi), y, base + i);
  }
}

// y = qdq_chain_apply of each 8-bit x.
__kernel void qdq_chain(__global const storage_t* x, __global storage_t* y,
                        __global const QdqChain* chain, int count) {
  const int i = get_global_id(0);
  if (i >= count) return;
  STORE(qdq_chain_apply(chain, LOAD(x, i)), y, i);
}

// Output element i of [batch, m, n]: a [batch?, m, k] by b [batch?, k, n] (batch strides 0 where
// shared). mode 0 writes int32 to y_int; 1 requantizes into y (scales a: 1 or m, b: 1 or n).
__kernel void quant_matmul(__global const storage_t* a, __global const storage_t* b,
                           __global const storage_t* za, int za_count,
                           __global const storage_t* zb, int zb_count,
                           __global const storage_t* sa, int sa_count,
                           __global const storage_t* sb, int sb_count,
                           __global const storage_t* sy, __global const storage_t* zy,
                           int zy_count, int lo, int hi, int mode, __global int* y_int,
                           __global storage_t* y, int m, int k, int n, int a_batch, int b_batch,
                           int count) {
  const int i = get_global_id(0);
  if (i >= count) return;
  const int batch = i / (m * n), r = (i / n) % m, c = i % n;
  const int zav = (int)quant_param(za, za_count, r, 0.0f);
  const int zbv = (int)quant_param(zb, zb_count, c, 0.0f);
  const int a_at = batch * a_batch + r * k, b_at = batch * b_batch + c;
  uint acc = 0;
  for (int j = 0; j < k; ++j) {
    acc += (uint)(((int)LOAD(a, a_at + j) - zav) * ((int)LOAD(b, b_at + j * n) - zbv));
  }
  if (mode == 0) {
    y_int[i] = (int)acc;
    return;
  }
  const float multiplier =
      quant_param(sa, sa_count, r, 1.0f) * quant_param(sb, sb_count, c, 1.0f) / LOAD(sy, 0);
  STORE(requantize((float)(int)acc * multiplier, (int)quant_param(zy, zy_count, 0, 0.0f), lo, hi),
        y, i);
}

// Output element i of [n, oc, oh, ow] (1-D: oh = 1): x [n, c, h, w] by w [oc, c / group, kh, kw]
// with strides, dilations and begin pads; padded positions add nothing (x there is its zero
// point). The zero point of w and its scale: 1 or oc. bias (int32 [oc], bias_count 0 or oc) is
// added to the sum before requantizing.
typedef struct {
  int c, h, w, oc, oh, ow, kh, kw, stride_h, stride_w, dil_h, dil_w, pad_t, pad_l, group;
} QuantConvShape;

__kernel void quant_conv(__global const storage_t* x, __global const storage_t* wt,
                         __global const storage_t* zx, int zx_count,
                         __global const storage_t* zw, int zw_count,
                         __global const storage_t* sx, __global const storage_t* sw,
                         int sw_count, __global const storage_t* sy,
                         __global const storage_t* zy, int zy_count,
                         __global const int* bias, int bias_count, int lo, int hi, int mode,
                         __global int* y_int, __global storage_t* y, QuantConvShape s,
                         int count) {
  const int i = get_global_id(0);
  if (i >= count) return;
  const int ox = i % s.ow, oy = (i / s.ow) % s.oh, o = (i / (s.ow * s.oh)) % s.oc;
  const int nb = i / (s.ow * s.oh * s.oc);
  const int per_group = s.c / s.group, g = o / (s.oc / s.group);
  const int zxv = (int)quant_param(zx, zx_count, 0, 0.0f);
  const int zwv = (int)quant_param(zw, zw_count, o, 0.0f);
  uint acc = bias_count == 0 ? 0u : (uint)bias[o];
  for (int ci = 0; ci < per_group; ++ci) {
    const int channel = g * per_group + ci;
    for (int ky = 0; ky < s.kh; ++ky) {
      const int iy = oy * s.stride_h - s.pad_t + ky * s.dil_h;
      if (iy < 0 || iy >= s.h) continue;
      for (int kx = 0; kx < s.kw; ++kx) {
        const int ix = ox * s.stride_w - s.pad_l + kx * s.dil_w;
        if (ix < 0 || ix >= s.w) continue;
        const int xv = (int)LOAD(x, ((nb * s.c + channel) * s.h + iy) * s.w + ix) - zxv;
        const int wv = (int)LOAD(wt, ((o * per_group + ci) * s.kh + ky) * s.kw + kx) - zwv;
        acc += (uint)(xv * wv);
      }
    }
  }
  if (mode == 0) {
    y_int[i] = (int)acc;
    return;
  }
  const float multiplier = LOAD(sx, 0) * quant_param(sw, sw_count, o, 1.0f) / LOAD(sy, 0);
  STORE(requantize((float)(int)acc * multiplier, (int)quant_param(zy, zy_count, 0, 0.0f), lo, hi),
        y, i);
}
)CL";

}  // namespace hsched::opencl
