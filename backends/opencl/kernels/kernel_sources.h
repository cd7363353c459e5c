// OpenCL C sources of the op layer (backends/opencl/kernels/ops.h), embedded so there is nothing to
// install; the spatial program is in kernel_sources_spatial.h. Each program is built twice per
// device: as is (fp32 storage) and with -DSTORAGE_HALF (fp16 storage through
// vload_half/vstore_half; arithmetic stays fp32, so no cl_khr_fp16 needed).
// Op codes in the switch statements are the values of UnaryOp / BinaryOp in ops.h.
// Index arithmetic is int: the host refuses tensors of 2^31 elements or more.
#pragma once

namespace hsched::opencl {

// Storage macros shared by all programs.
inline constexpr const char* kStoragePrelude = R"CL(
#ifdef STORAGE_HALF
typedef half storage_t;
#define LOAD(p, i) vload_half((i), (p))
#define STORE(v, p, i) vstore_half((v), (i), (p))
#else
typedef float storage_t;
#define LOAD(p, i) ((p)[i])
#define STORE(v, p, i) ((p)[i] = (v))
#endif
// A one-input kernel's DequantizeLinear and QuantizeLinear fused in (unary_q, layer_norm_rows_q,
// softmax_rows_q; ops.h QdqRow): x holds 8-bit integers read as (x - x_zero) * x_scale, y those
// of clamp(rint(v / y_scale) + y_zero, lo, hi); a scale of 0: that side as stored.
typedef struct {
  float x_scale, x_zero, y_scale, y_zero, lo, hi;
} QdqRow;
#define QDQ_LOAD(q, p, i) \
  ((q).x_scale > 0.0f ? (LOAD(p, i) - (q).x_zero) * (q).x_scale : LOAD(p, i))
#define QDQ_OUT(q, v) \
  ((q).y_scale > 0.0f ? clamp(rint((v) / (q).y_scale) + (q).y_zero, (q).lo, (q).hi) : (v))
// A chain of elementwise ops on one 8-bit tensor (qdq_chain_apply; ops.h QdqChain).
#define QDQ_CHAIN_OPS 12
typedef struct {
  float x_scale, x_zero, y_scale, y_zero, lo, hi, count, unused;
  float ops[QDQ_CHAIN_OPS][8];  // {kind, op, a, b, c, p0, p1, p2}
} QdqChain;
)CL";

// apply_unary, apply_binary and qdq_chain_apply, shared by the elementwise program and the
// spatial one (fused activations, a product's epilogue). Any other unary op code (the host
// passes -1 for "no activation") is the identity.
inline constexpr const char* kUnaryFunctionSource = R"CL(
float apply_unary(int op, float x, float alpha, float beta) {
  switch (op) {
    case 0: return fmax(x, 0.0f);                               // Relu
    case 1: return x >= 0.0f ? x : alpha * x;                   // LeakyRelu
    case 2: return 1.0f / (1.0f + exp(-x));                     // Sigmoid
    // Tanh: beyond 9.1 the correctly rounded result is +-1; some drivers' tanh (PoCL's, within
    // OpenCL's 5 ulp) return 1 ulp short of it, which 1 + tanh(x) then turns into a large error.
    case 3: return fabs(x) >= 9.1f ? copysign(1.0f, x) : tanh(x);  // Tanh
    case 4: return erf(x);                                      // Erf
    case 5: return 0.5f * x * (1.0f + erf(x * M_SQRT1_2_F));    // Gelu (erf form)
    case 6: return exp(x);                                      // Exp
    case 7: return log(x);                                      // Log
    case 8: return sqrt(x);                                     // Sqrt
    case 9: return -x;                                          // Neg
    case 10: return fabs(x);                                    // Abs
    case 11: return fmin(fmax(x, alpha), beta);                 // Clip [alpha, beta]
    case 12: return fmin(fmax(alpha * x + beta, 0.0f), 1.0f);   // HardSigmoid
    case 13: return x * fmin(fmax(x / 6.0f + 0.5f, 0.0f), 1.0f);  // HardSwish
    case 14: return 1.0f / x;                                   // Reciprocal
    // Gelu (tanh form): 0.5 x (1 + tanh(y)) as x / (1 + exp(-2y)), which does not cancel where
    // tanh(y) is near -1 (an attention mask's -1e4 gives exactly 0, not 1 ulp of tanh times x).
    case 15: return x / (1.0f + exp(-1.5957691216f * (x + 0.044715f * x * x * x)));
    case 16: return isnan(x) ? 1.0f : 0.0f;                     // IsNaN (a bool as 1 or 0)
    case 17: return x == 0.0f ? 1.0f : 0.0f;                    // Not
    case 18: return x != 0.0f ? 1.0f : 0.0f;                    // Cast to bool
    case 19: return sin(x);                                     // Sin
    case 20: return cos(x);                                     // Cos
    case 21: return tan(x);                                     // Tan
    case 22: return asin(x);                                    // Asin
    case 23: return acos(x);                                    // Acos
    case 24: return atan(x);                                    // Atan
    case 25: return sinh(x);                                    // Sinh
    case 26: return cosh(x);                                    // Cosh
    case 27: return asinh(x);                                   // Asinh
    case 28: return acosh(x);                                   // Acosh
    case 29: return atanh(x);                                   // Atanh
    case 30: return floor(x);                                   // Floor
    case 31: return ceil(x);                                    // Ceil
    case 32: return rint(x);                                    // Round
    case 33: return (float)((0.0f < x) - (x < 0.0f));           // Sign
    // Softplus, as log(1 + exp(x)) without overflowing exp for large x
    case 34: return x > 0.0f ? x + log1p(exp(-x)) : log1p(exp(x));
    case 35: return x / (1.0f + fabs(x));                       // Softsign
    case 36: return x < 0.0f ? alpha * expm1(x) : x;            // Elu
    // Selu (alpha, gamma as beta)
    case 37: return x <= 0.0f ? beta * (alpha * exp(x) - alpha) : beta * x;
    case 38: return x > alpha ? x : 0.0f;                       // ThresholdedRelu
    // Shrink (lambd as alpha, bias as beta)
    case 39: return x < -alpha ? x + beta : (x > alpha ? x - beta : 0.0f);
    // IsInf (detect_negative as alpha, detect_positive as beta; a bool as 1 or 0)
    case 40: return isinf(x) && (x > 0.0f ? beta != 0.0f : alpha != 0.0f) ? 1.0f : 0.0f;
    case 41: return alpha * x;                                  // Scale
    case 42: return x / (1.0f + exp(-x));                       // SiLU
    case 43: return isnan(x) ? alpha : x;                       // NaN to alpha (a NaN guard)
    default: return x;                                          // Identity
  }
}

float apply_binary(int op, float a, float b) {
  switch (op) {
    case 0: return a + b;      // Add
    case 1: return a - b;      // Sub
    case 2: return a * b;      // Mul
    case 3: return a / b;      // Div
    case 4: return pow(a, b);  // Pow
    case 5: return fmax(a, b); // Max
    case 6: return fmin(a, b); // Min
    // Comparisons and logic give bools as 1 or 0; logic reads any nonzero as true.
    case 7: return a == b ? 1.0f : 0.0f;                  // Equal
    case 8: return a < b ? 1.0f : 0.0f;                   // Less
    case 9: return a <= b ? 1.0f : 0.0f;                  // LessOrEqual
    case 10: return a > b ? 1.0f : 0.0f;                  // Greater
    case 11: return a >= b ? 1.0f : 0.0f;                 // GreaterOrEqual
    case 12: return (a != 0.0f && b != 0.0f) ? 1.0f : 0.0f;  // And
    case 13: return (a != 0.0f || b != 0.0f) ? 1.0f : 0.0f;  // Or
    case 14: return ((a != 0.0f) != (b != 0.0f)) ? 1.0f : 0.0f;  // Xor
    case 15: return a >= 0.0f ? a : b * a;                          // PRelu
    default: return fmod(a, b);                                     // Mod, fmod = 1
  }
}

// A chain of elementwise ops on one 8-bit value (QdqChain, the prelude's, read from a buffer;
// kQdqChainAttr, node_ops.h), `stored` its integer: dequantized, then each op in turn on the
// running value v, x or the op's constant c (operands 0, 1, 2): kind 0 an activation
// (apply_unary, alpha p0, beta p1), 1 a binary op (apply_binary), 2 a QuantizeLinear then
// DequantizeLinear of scale c and zero point p0 into [p1, p2]; the last QuantizeLinear's integer.
// The graph's float operations, so its values.
float qdq_chain_operand(float which, float v, float x, float c) {
  return which == 0.0f ? v : which == 1.0f ? x : c;
}
float qdq_chain_apply(__global const QdqChain* c, float stored) {
  const float x = (stored - c->x_zero) * c->x_scale;
  float v = x;
  for (int i = 0; i < (int)c->count; ++i) {
    __global const float* o = c->ops[i];
    const float a = qdq_chain_operand(o[2], v, x, o[4]);
    if (o[0] == 0.0f) {
      v = apply_unary((int)o[1], a, o[5], o[6]);
    } else if (o[0] == 1.0f) {
      v = apply_binary((int)o[1], a, qdq_chain_operand(o[3], v, x, o[4]));
    } else {
      v = (clamp(rint(a / o[4]) + o[5], o[6], o[7]) - o[5]) * o[4];
    }
  }
  return clamp(rint(v / c->y_scale) + c->y_zero, c->lo, c->hi);
}
)CL";

inline constexpr const char* kElementwiseSource = R"CL(

__kernel void unary(__global const storage_t* x, __global storage_t* y, int op, float alpha,
                    float beta, int count) {
  const int i = get_global_id(0);
  if (i >= count) return;
  STORE(apply_unary(op, LOAD(x, i), alpha, beta), y, i);
}

// unary between its DequantizeLinear and QuantizeLinear, both fused in (QdqRow, the prelude's).
__kernel void unary_q(__global const storage_t* x, __global storage_t* y, int op, float alpha,
                      float beta, int count, QdqRow q) {
  const int i = get_global_id(0);
  if (i >= count) return;
  STORE(QDQ_OUT(q, apply_unary(op, QDQ_LOAD(q, x, i), alpha, beta)), y, i);
}

// QuantizeLinear (quantize != 0): y = clamp(rint(x / scale) + zero, lo, hi), rint rounding half
// to even as ONNX does; DequantizeLinear: y = (x - zero) * scale. scale and zero hold `channels`
// values (1: per tensor), each for a run of `inner` elements; has_zero 0: no zero point (the
// host passes scale for it). Quantized data is held as its integer values.
__kernel void quantize_linear(__global const storage_t* x, __global const storage_t* scale,
                              __global const storage_t* zero, __global storage_t* y, int quantize,
                              int has_zero, float lo, float hi, int channels, int inner,
                              int count) {
  const int i = get_global_id(0);
  if (i >= count) return;
  const int c = (i / inner) % channels;
  const float s = LOAD(scale, c);
  const float z = has_zero ? LOAD(zero, c) : 0.0f;
  const float v = LOAD(x, i);
  STORE(quantize ? clamp(rint(v / s) + z, lo, hi) : (v - z) * s, y, i);
}

// BatchNormalization (inference): y = (x - mean) / sqrt(var + epsilon) * scale + bias, the
// parameters one per channel, channel (i / inner) % channels.
__kernel void batch_norm(__global const storage_t* x, __global const storage_t* scale,
                         __global const storage_t* bias, __global const storage_t* mean,
                         __global const storage_t* var, __global storage_t* y, float epsilon,
                         int channels, int inner, int count) {
  const int i = get_global_id(0);
  if (i >= count) return;
  const int c = (i / inner) % channels;
  const float k = LOAD(scale, c) / sqrt(LOAD(var, c) + epsilon);
  STORE((LOAD(x, i) - LOAD(mean, c)) * k + LOAD(bias, c), y, i);
}

// Output dims right-aligned to rank 6 (leading 1s); an input's stride is 0 along a broadcast dim.
typedef struct {
  int dims[6];
  int a_strides[6];
  int b_strides[6];
} BroadcastShape;

// y = op(a, b_scale * b) with numpy broadcasting (b_scale is 1 for the ONNX ops; Gemm's beta).
__kernel void binary(__global const storage_t* a, __global const storage_t* b,
                     __global storage_t* y, int op, float b_scale, BroadcastShape shape,
                     int count) {
  const int i = get_global_id(0);
  if (i >= count) return;
  int rest = i, ia = 0, ib = 0;
  for (int d = 5; d >= 0; --d) {
    const int coord = rest % shape.dims[d];
    rest /= shape.dims[d];
    ia += coord * shape.a_strides[d];
    ib += coord * shape.b_strides[d];
  }
  STORE(apply_binary(op, LOAD(a, ia), b_scale * LOAD(b, ib)), y, i);
}

// y = cond != 0 ? a : b, the three broadcast to y's shape (Where; cond is a bool held as 1 or 0).
typedef struct {
  int dims[6];
  int cond_strides[6];
  int a_strides[6];
  int b_strides[6];
} SelectShape;

__kernel void where_select(__global const storage_t* cond, __global const storage_t* a,
                     __global const storage_t* b, __global storage_t* y, SelectShape shape,
                     int count) {
  const int i = get_global_id(0);
  if (i >= count) return;
  int rest = i, ic = 0, ia = 0, ib = 0;
  for (int d = 5; d >= 0; --d) {
    const int coord = rest % shape.dims[d];
    rest /= shape.dims[d];
    ic += coord * shape.cond_strides[d];
    ia += coord * shape.a_strides[d];
    ib += coord * shape.b_strides[d];
  }
  STORE(LOAD(cond, ic) != 0.0f ? LOAD(a, ia) : LOAD(b, ib), y, i);
}

// Storage <-> fp32, around CLBlast's fp32 GEMM (copies with fp32 storage).
__kernel void storage_to_float(__global const storage_t* x, __global float* y, int count) {
  const int i = get_global_id(0);
  if (i < count) y[i] = LOAD(x, i);
}
__kernel void float_to_storage(__global const float* x, __global storage_t* y, int count) {
  const int i = get_global_id(0);
  if (i < count) STORE(x[i], y, i);
}
)CL";

// Two shapes of reduction, fp32 accumulation throughout. Short rows (and Softmax along an inner
// axis): one work item per reduced row. Contiguous rows of 32 or more (ops.cpp picks): one work
// group of 64 per row, so that adjacent work items read adjacent elements (coalesced) and a few
// hundred rows still fill the GPU; partial results meet in a local-memory tree.
inline constexpr const char* kReduceSource = R"CL(
// The max (take_max) or sum of `value` over the work group of 64; every item gets the result.
// `scratch` holds 64 floats; it is free again when this returns.
float group_reduce(float value, int take_max, __local float* scratch) {
  const int lid = get_local_id(0);
  scratch[lid] = value;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int half_size = 32; half_size > 0; half_size >>= 1) {
    if (lid < half_size) {
      const float other = scratch[lid + half_size];
      scratch[lid] = take_max ? fmax(scratch[lid], other) : scratch[lid] + other;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float total = scratch[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return total;
}

// Softmax of x viewed as [rows, size] along its rows, a group of 64 per row. Three passes over
// the row (max, sum of exp, write); exp is recomputed rather than stored so that fp16 storage
// rounds once.
// kind 1: LogSoftmax, x - max - log(sum of exp). With replace_nan, a NaN result is stored as
// nan_value (an exported Where(IsNaN(softmax), c, softmax) fused in). softmax_rows_q: its
// DequantizeLinear and QuantizeLinear fused in (QdqRow q). QUANT_PARAM: that argument, or none
// and QUANT_LOCAL an unused one.
#define SM_LOAD(I, QUANT) (QUANT ? QDQ_LOAD(q, x, I) : LOAD(x, I))
#define SM_BODY(NAME, QUANT, QUANT_PARAM, QUANT_LOCAL)                                          \
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))                                        \
void NAME(__global const storage_t* x, __global storage_t* y, int size, int kind,              \
          int replace_nan, float nan_value QUANT_PARAM) {                                       \
  QUANT_LOCAL                                                                                   \
  __local float scratch[64];                                                                    \
  const int base = get_group_id(0) * size, lid = get_local_id(0);                               \
  float partial = -INFINITY;                                                                    \
  for (int k = lid; k < size; k += 64) partial = fmax(partial, SM_LOAD(base + k, QUANT));       \
  const float peak = group_reduce(partial, 1, scratch);                                         \
  partial = 0.0f;                                                                               \
  for (int k = lid; k < size; k += 64) partial += exp(SM_LOAD(base + k, QUANT) - peak);         \
  const float sum = group_reduce(partial, 0, scratch);                                          \
  const float shift = peak + log(sum), inv = 1.0f / sum;                                        \
  for (int k = lid; k < size; k += 64) {                                                        \
    const float value = SM_LOAD(base + k, QUANT);                                               \
    const float v = kind == 1 ? value - shift : exp(value - peak) * inv;                        \
    STORE(replace_nan && isnan(v) ? nan_value : QUANT ? QDQ_OUT(q, v) : v, y, base + k);        \
  }                                                                                             \
}
#define SM_QDQ_PARAM , QdqRow q
#define SM_NONE
#define SM_NO_ROW const QdqRow q = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
SM_BODY(softmax_rows, 0, SM_NONE, SM_NO_ROW)
SM_BODY(softmax_rows_q, 1, SM_QDQ_PARAM, SM_NONE)

// y[row] = mean of x's row (x viewed as [rows, size]), a group of 64 per row; a DequantizeLinear
// and QuantizeLinear fused in where QdqRow q says.
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void row_mean_rows(__global const storage_t* x, __global storage_t* y, int size, QdqRow q) {
  __local float scratch[64];
  const int row = get_group_id(0), lid = get_local_id(0);
  float partial = 0.0f;
  for (int k = lid; k < size; k += 64) partial += QDQ_LOAD(q, x, row * size + k);
  const float mean = group_reduce(partial, 0, scratch) / size;
  if (lid == 0) STORE(QDQ_OUT(q, mean), y, row);
}

// x viewed as [outer, axis_size, inner]; one work item per (outer, inner). kind 0: Softmax,
// 1: LogSoftmax, 2: Hardmax (1 at the first largest element, 0 elsewhere). replace_nan and
// nan_value as softmax_rows'.
__kernel void softmax(__global const storage_t* x, __global storage_t* y, int outer,
                      int axis_size, int inner, int kind, int replace_nan, float nan_value) {
  const int gid = get_global_id(0);
  if (gid >= outer * inner) return;
  const int base = (gid / inner) * axis_size * inner + gid % inner;
  if (kind == 2) {
    int first = 0;
    float best = LOAD(x, base);
    for (int k = 1; k < axis_size; ++k) {
      const float v = LOAD(x, base + k * inner);
      if (v > best) {
        best = v;
        first = k;
      }
    }
    for (int k = 0; k < axis_size; ++k) STORE(k == first ? 1.0f : 0.0f, y, base + k * inner);
    return;
  }
  float peak = -INFINITY;
  for (int k = 0; k < axis_size; ++k) peak = fmax(peak, LOAD(x, base + k * inner));
  float sum = 0.0f;
  for (int k = 0; k < axis_size; ++k) sum += exp(LOAD(x, base + k * inner) - peak);
  if (kind == 1) {
    const float shift = peak + log(sum);
    for (int k = 0; k < axis_size; ++k) {
      const float v = LOAD(x, base + k * inner) - shift;
      STORE(replace_nan && isnan(v) ? nan_value : v, y, base + k * inner);
    }
    return;
  }
  const float inv = 1.0f / sum;
  for (int k = 0; k < axis_size; ++k) {
    const float v = exp(LOAD(x, base + k * inner) - peak) * inv;
    STORE(replace_nan && isnan(v) ? nan_value : v, y, base + k * inner);
  }
}

// x viewed as [rows, size]; scale and bias have `size` elements (bias may be absent).
__kernel void layer_norm(__global const storage_t* x, __global const storage_t* scale,
                         __global const storage_t* bias, int has_bias, __global storage_t* y,
                         int rows, int size, float epsilon) {
  const int row = get_global_id(0);
  if (row >= rows) return;
  const int base = row * size;
  float mean = 0.0f;
  for (int k = 0; k < size; ++k) mean += LOAD(x, base + k);
  mean /= size;
  float var = 0.0f;
  for (int k = 0; k < size; ++k) {
    const float d = LOAD(x, base + k) - mean;
    var += d * d;
  }
  const float inv_std = rsqrt(var / size + epsilon);
  for (int k = 0; k < size; ++k) {
    const float b = has_bias ? LOAD(bias, k) : 0.0f;
    STORE((LOAD(x, base + k) - mean) * inv_std * LOAD(scale, k) + b, y, base + k);
  }
}

// x viewed as [rows, size] (rows = N*C, size = spatial); y[row] = mean of the row (QdqRow q as
// row_mean_rows').
__kernel void row_mean(__global const storage_t* x, __global storage_t* y, int rows, int size,
                       QdqRow q) {
  const int row = get_global_id(0);
  if (row >= rows) return;
  float sum = 0.0f;
  for (int k = 0; k < size; ++k) sum += QDQ_LOAD(q, x, row * size + k);
  STORE(QDQ_OUT(q, sum / size), y, row);
}
)CL";

}  // namespace hsched::opencl
