// OpenCL C source of the op layer's spatial program (ops_spatial.h): pools, the normalizations
// over rows, Resize and data movement. Built like the others (kernel_sources.h: kStoragePrelude
// and kUnaryFunctionSource come first; fp32 and fp16 storage), after kMatMulSource
// (kernel_sources_matmul.h) and kConvSource (kernel_sources_conv.h: the convolutions and
// group_sum, which the row kernels here use).
#pragma once

namespace hsched::opencl {

// Geometry travels in plain-int structs mirrored on the host (ops_spatial.h); 1-D ops run as 2-D
// ones with a height of 1. One work item per output element unless stated otherwise.
inline constexpr const char* kSpatialSource = R"CL(
// MaxPool / AveragePool over [rows = n * c, h, w]. end_h/end_w: the padded extent (h + bottom
// pad, w + right pad) that bounds an AveragePool window counted with count_include_pad.
typedef struct {
  int rows, h, w, oh, ow;
  int kh, kw, sh, sw, dh, dw, ph, pw;
  int end_h, end_w;
} PoolShape;

// MaxPool takes the first largest tap (a later one only when greater, as the CPU) and, with
// `indices`, writes its int64 index into x (row-major over N, C, H, W; column-major H and W with
// storage_order 1; -1 for a window with no tap).
__kernel void pool(__global const storage_t* x, __global storage_t* y, PoolShape s, int is_max,
                   int count_include_pad, __global long* indices, int with_indices,
                   int storage_order, int count) {
  const int i = get_global_id(0);
  if (i >= count) return;
  const int ox = i % s.ow, oy = (i / s.ow) % s.oh, row = i / (s.ow * s.oh);
  const int y0 = oy * s.sh - s.ph, x0 = ox * s.sw - s.pw;
  const int base = row * s.h * s.w;
  float acc = is_max ? -INFINITY : 0.0f;
  int inside = 0;
  long at = -1;
  for (int ky = 0; ky < s.kh; ++ky) {
    const int iy = y0 + ky * s.dh;
    if (iy < 0 || iy >= s.h) continue;
    for (int kx = 0; kx < s.kw; ++kx) {
      const int ix = x0 + kx * s.dw;
      if (ix < 0 || ix >= s.w) continue;
      const float v = LOAD(x, base + iy * s.w + ix);
      if (!is_max) {
        acc += v;
      } else if (inside == 0 || v > acc) {
        acc = v;
        at = (long)base + (storage_order ? (long)ix * s.h + iy : (long)iy * s.w + ix);
      }
      ++inside;
    }
  }
  if (with_indices) indices[i] = at;
  if (!is_max) {
    int divisor = inside;
    if (count_include_pad) {
      divisor = (min(y0 + s.kh, s.end_h) - y0) * (min(x0 + s.kw, s.end_w) - x0);
    }
    acc = divisor > 0 ? acc / divisor : 0.0f;
  }
  STORE(acc, y, i);
}

// One row times a matrix stored by output rows: y[n] = alpha * sum_k x[k] * w[n * k_size + k]
// (+ beta * bias[n] with has_bias), a work group of 64 per output reading its row of w coalesced
// (fp32 operands: a classifier head's Gemm, w [N, K], and its bias).
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void gemv_rows(__global const float* x, int x_offset, __global const float* w, int w_offset,
               __global float* y, int y_offset, int k_size, float alpha,
               __global const float* bias, int has_bias, float beta) {
  __local float scratch[64];
  const int n = get_group_id(0), lid = get_local_id(0);
  const int row = w_offset + n * k_size;
  float partial = 0.0f;
  for (int k = lid; k < k_size; k += 64) partial += x[x_offset + k] * w[row + k];
  const float total = group_sum(partial, scratch);
  if (lid == 0) y[y_offset + n] = alpha * total + (has_bias ? beta * bias[n] : 0.0f);
}

// matmul_tiled's product of one row (m 1, one batch) by B whose K axis is contiguous (b_row 1:
// weights [N, K] read transposed, a classifier's head), any storage: a work group of 64 per
// output j sums (a[p] - a_zero) * (b[j, p] - b_zero) reading its row of B coalesced, then
// mm_finish's epilogue (scales, bias, residual, activation, quantization) stores y[j].
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void matmul_row(__global const storage_t* a, __global const storage_t* b,
                __global const storage_t* b_scale, __global const storage_t* bias,
                __global const storage_t* res, __global storage_t* y,
                __global const QdqChain* chain, MatMulShape mm) {
  __local float scratch[64];
  const int j = get_group_id(0), lid = get_local_id(0);
  const int row = mm.b_offset + j * mm.b_col;
  float partial = 0.0f;
  for (int p = lid; p < mm.k; p += 64) {
    partial += (LOAD(a, mm.a_offset + p * mm.a_col) - mm.a_zero) * (LOAD(b, row + p) - mm.b_zero);
  }
  const float total = group_sum(partial, scratch);
  if (lid != 0) return;
  const float bias_v = mm.has_bias ? LOAD(bias, j) : 0.0f;
  STORE(mm_finish(total, j, b_scale, bias_v, mm.has_res ? LOAD(res, j) : 0.0f, mm, chain), y,
        j);
}

// What InstanceNormalization's kernels apply after normalising element i (GroupNorm as exported:
// the groups reshaped back to [N, channels, plane], then per channel times gamma and plus beta,
// then an activation, op -1 for none).
#define NORM_EPILOGUE_ARGS                                                                      \
  __global const storage_t *gamma, __global const storage_t *beta, int has_gamma, int has_beta, \
      int plane, int post_channels, int post_op, float post_alpha, float post_beta
#define NORM_EPILOGUE(V, I)                                                                     \
  norm_epilogue((V), (I), gamma, beta, has_gamma, has_beta, plane, post_channels, post_op,     \
                post_alpha, post_beta)
float norm_epilogue(float v, int i, __global const storage_t* gamma,
                    __global const storage_t* beta, int has_gamma, int has_beta, int plane,
                    int channels, int op, float alpha, float beta_) {
  if (has_gamma) {
    const int c = (i / plane) % channels;
    v = v * LOAD(gamma, c) + (has_beta ? LOAD(beta, c) : 0.0f);
  }
  return apply_unary(op, v, alpha, beta_);
}

// InstanceNormalization: one work group of 64 per (n, c) row of `size` elements; scale and bias
// hold `channels` elements. Two passes (mean, then variance).
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void instance_norm(__global const storage_t* x, __global const storage_t* scale,
                   __global const storage_t* bias, __global storage_t* y, int channels,
                   int size, float epsilon, NORM_EPILOGUE_ARGS) {
  __local float scratch[64];
  const int row = get_group_id(0), lid = get_local_id(0);
  const int base = row * size;
  float partial = 0.0f;
  for (int k = lid; k < size; k += 64) partial += LOAD(x, base + k);
  const float mean = group_sum(partial, scratch) / size;
  partial = 0.0f;
  for (int k = lid; k < size; k += 64) {
    const float d = LOAD(x, base + k) - mean;
    partial += d * d;
  }
  const float inv_std = rsqrt(group_sum(partial, scratch) / size + epsilon);
  const int c = row % channels;
  const float a = LOAD(scale, c) * inv_std, b = LOAD(bias, c) - mean * a;
  for (int k = lid; k < size; k += 64) {
    STORE(NORM_EPILOGUE(LOAD(x, base + k) * a + b, base + k), y, base + k);
  }
}

// LayerNormalization with one work group of 64 per row of `size` elements, `stride` apart: a
// row of x [outer, size, stride] is one index of the last axis (stride 1: rows of contiguous
// elements; stride H * W: the channels of one pixel of NCHW, ConvNeXt's channels-first
// LayerNorm). scale and bias (which may be absent) hold `size` elements. stats: bit 0 writes each
// row's mean to `mean`, bit 1 its 1 / sqrt(variance + epsilon) to `inv_std_dev` (the optional
// outputs).
// layer_norm_rows_q: its DequantizeLinear and QuantizeLinear fused in (QdqRow q, the prelude's).
#define LN_QDQ_PARAM , QdqRow q
#define LN_LOAD(I, QUANT) (QUANT ? QDQ_LOAD(q, x, I) : LOAD(x, I))
// QUANT_PARAM: the QdqRow argument (layer_norm_rows_q), or none and QUANT_LOCAL an unused one.
#define LN_BODY(NAME, QUANT, QUANT_PARAM, QUANT_LOCAL)                                          \
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))                                        \
void NAME(__global const storage_t* x, __global const storage_t* scale,                        \
          __global const storage_t* bias, int has_bias, __global storage_t* y, int size,       \
          int stride, float epsilon, __global storage_t* mean_out,                             \
          __global storage_t* inv_std_dev_out, int stats QUANT_PARAM) {                        \
  QUANT_LOCAL                                                                                   \
  __local float scratch[64];                                                                    \
  const int row = get_group_id(0), lid = get_local_id(0);                                       \
  const int base = (row / stride) * size * stride + row % stride;                               \
  float partial = 0.0f;                                                                         \
  for (int k = lid; k < size; k += 64) partial += LN_LOAD(base + k * stride, QUANT);               \
  const float mean = group_sum(partial, scratch) / size;                                        \
  partial = 0.0f;                                                                               \
  for (int k = lid; k < size; k += 64) {                                                        \
    const float d = LN_LOAD(base + k * stride, QUANT) - mean;                                      \
    partial += d * d;                                                                           \
  }                                                                                             \
  const float inv_std = rsqrt(group_sum(partial, scratch) / size + epsilon);                    \
  if (lid == 0 && (stats & 1)) STORE(mean, mean_out, row);                                      \
  if (lid == 0 && (stats & 2)) STORE(inv_std, inv_std_dev_out, row);                            \
  for (int k = lid; k < size; k += 64) {                                                        \
    const float b = has_bias ? LOAD(bias, k) : 0.0f;                                            \
    const float v = (LN_LOAD(base + k * stride, QUANT) - mean) * inv_std * LOAD(scale, k) + b;     \
    STORE(QUANT ? QDQ_OUT(q, v) : v, y, base + k * stride);                                     \
  }                                                                                             \
}
#define LN_NONE
#define LN_NO_ROW const QdqRow q = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
LN_BODY(layer_norm_rows, 0, LN_NONE, LN_NO_ROW)
LN_BODY(layer_norm_rows_q, 1, LN_QDQ_PARAM, LN_NONE)

// InstanceNormalization of long rows, in three kernels so that every row is spread over many
// work groups. 1: each group of 64 takes a chunk of `chunk` elements of one row and writes its
// mean and its sum of squared deviations (two passes over the chunk, which stays in cache).
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void instance_norm_chunks(__global const storage_t* x, __global float2* stats, int size,
                          int chunk, int chunks) {
  __local float scratch[64];
  const int group = get_group_id(0), lid = get_local_id(0);
  const int row = group / chunks, begin = (group % chunks) * chunk;
  const int end = min(size, begin + chunk), base = row * size;
  float partial = 0.0f;
  for (int k = begin + lid; k < end; k += 64) partial += LOAD(x, base + k);
  const float mean = group_sum(partial, scratch) / (end - begin);
  partial = 0.0f;
  for (int k = begin + lid; k < end; k += 64) {
    const float d = LOAD(x, base + k) - mean;
    partial += d * d;
  }
  const float m2 = group_sum(partial, scratch);
  if (lid == 0) stats[group] = (float2)(mean, m2);
}

// 2: a work group of 64 per row merges its chunks' statistics (Chan et al.'s pairwise update:
// each item the chunks lid, lid + 64, ..., then a tree over the items) into the row's affine
// map y = x * a + b, written to affine[row].
void chan_merge(float* mean, float* m2, int* n, float mean_b, float m2_b, int n_b) {
  const int total = *n + n_b;
  if (n_b == 0) return;
  const float delta = mean_b - *mean;
  *mean += delta * n_b / total;
  *m2 += m2_b + delta * delta * ((float)*n * n_b / total);
  *n = total;
}
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void instance_norm_merge(__global const float2* stats, __global float2* affine,
                         __global const storage_t* scale, __global const storage_t* bias,
                         int rows, int channels, int size, int chunk, int chunks, float epsilon) {
  __local float l_mean[64], l_m2[64];
  __local int l_n[64];
  const int row = get_group_id(0), lid = get_local_id(0);
  float mean = 0.0f, m2 = 0.0f;
  int n = 0;
  for (int i = lid; i < chunks && row < rows; i += 64) {
    const float2 s = stats[row * chunks + i];
    chan_merge(&mean, &m2, &n, s.x, s.y, min(chunk, size - i * chunk));
  }
  l_mean[lid] = mean;
  l_m2[lid] = m2;
  l_n[lid] = n;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int width = 32; width > 0; width /= 2) {
    if (lid < width) {
      chan_merge(&mean, &m2, &n, l_mean[lid + width], l_m2[lid + width], l_n[lid + width]);
      l_mean[lid] = mean;
      l_m2[lid] = m2;
      l_n[lid] = n;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid != 0 || row >= rows) return;
  const float inv_std = rsqrt(m2 / size + epsilon);
  const int c = row % channels;
  const float a = LOAD(scale, c) * inv_std;
  affine[row] = (float2)(a, LOAD(bias, c) - mean * a);
}

// The statistics of each row in ONNX Runtime's order (its InstanceNormalization: Eigen's sums of
// an aligned array with SSE packets of 4 and two packet accumulators), into the row's affine
// map: 8 items a row, item l summing values l, l + 8, ... in turn, then lanes l and l + 4 added,
// a last whole packet added to lanes 0-3, (lane 0 + lane 2) + (lane 1 + lane 3), then the last
// values one by one; the mean that sum / size, the squared deviations from it summed alike, a =
// scale / sqrt(their sum / size + epsilon), b = bias - mean * a.
float ordered_term(float v, float mean, int squares) {
  const float d = v - mean;
  return squares ? d * d : v;
}
float ordered_sum(__global const storage_t* x, int base, int size, float mean, int squares,
                  int lid, __local float* lanes) {
  const int end8 = size / 8 * 8, end4 = size / 4 * 4;
  float s = 0.0f;
  if (size >= 8) {
    s = ordered_term(LOAD(x, base + lid), mean, squares);
    for (int i = 8 + lid; i < end8; i += 8) s += ordered_term(LOAD(x, base + i), mean, squares);
  } else if (size >= 4 && lid < 4) {
    s = ordered_term(LOAD(x, base + lid), mean, squares);
  }
  lanes[lid] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
  float r = 0.0f;
  if (lid == 0) {
    float l[4];
    for (int j = 0; j < 4; ++j) {
      l[j] = lanes[j];
      if (size >= 8) l[j] += lanes[j + 4];
      if (size >= 8 && end4 > end8) l[j] += ordered_term(LOAD(x, base + end8 + j), mean, squares);
    }
    int from = end4;
    if (size < 4) {
      r = size > 0 ? ordered_term(LOAD(x, base), mean, squares) : 0.0f;
      from = 1;
    } else {
      r = (l[0] + l[2]) + (l[1] + l[3]);
    }
    for (int i = from; i < size; ++i) r += ordered_term(LOAD(x, base + i), mean, squares);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  return r;
}
__kernel __attribute__((reqd_work_group_size(8, 1, 1)))
void instance_norm_ordered(__global const storage_t* x, __global float2* affine,
                           __global const storage_t* scale, __global const storage_t* bias,
                           int channels, int size, float epsilon) {
#pragma OPENCL FP_CONTRACT OFF
  __local float lanes[8];
  __local float shared_mean;
  const int row = get_group_id(0), lid = get_local_id(0), base = row * size;
  const float sum = ordered_sum(x, base, size, 0.0f, 0, lid, lanes);
  if (lid == 0) shared_mean = sum / (float)size;
  barrier(CLK_LOCAL_MEM_FENCE);
  const float mean = shared_mean;
  const float squares = ordered_sum(x, base, size, mean, 1, lid, lanes);
  if (lid != 0) return;
  const float inv_std = 1.0f / sqrt(squares / (float)size + epsilon);
  const int c = row % channels;
  const float a = inv_std * LOAD(scale, c);
  affine[row] = (float2)(a, LOAD(bias, c) - mean * a);
}

// 3: elementwise, with the row's affine map (x * a rounded before b is added, as ONNX Runtime).
__kernel void instance_norm_apply(__global const storage_t* x, __global const float2* affine,
                                  __global storage_t* y, int size, int count,
                                  NORM_EPILOGUE_ARGS) {
#pragma OPENCL FP_CONTRACT OFF
  const int i = get_global_id(0);
  if (i >= count) return;
  const float2 ab = affine[i / size];
  STORE(NORM_EPILOGUE(LOAD(x, i) * ab.x + ab.y, i), y, i);
}

// Resize over rank 6 (leading 1s): per output axis d, tables at offset[d] give the input index
// i0 (nearest, and linear's lower neighbour), i1 and the weight w1 of i1. Only the last two axes
// interpolate; the others read i0.
typedef struct {
  int dims[6];
  int strides[6];  // the input's
  int offset[6];   // into the tables
} ResizeShape;

__kernel void resize(__global const storage_t* x, __global storage_t* y,
                     __global const int* i0, __global const int* i1, __global const float* w1,
                     ResizeShape s, int count) {
  const int i = get_global_id(0);
  if (i >= count) return;
  int rest = i, base = 0, o4 = 0, o5 = 0;
  for (int d = 5; d >= 0; --d) {
    const int coord = rest % s.dims[d];
    rest /= s.dims[d];
    if (d == 5) o5 = s.offset[5] + coord;
    else if (d == 4) o4 = s.offset[4] + coord;
    else base += i0[s.offset[d] + coord] * s.strides[d];
  }
  const int r0 = base + i0[o4] * s.strides[4], r1 = base + i1[o4] * s.strides[4];
  const int c0 = i0[o5] * s.strides[5], c1 = i1[o5] * s.strides[5];
  const float wy = w1[o4], wx = w1[o5];
  float top = LOAD(x, r0 + c0), bottom = 0.0f;
  if (wx != 0.0f) top += wx * (LOAD(x, r0 + c1) - top);
  if (wy != 0.0f) {
    bottom = LOAD(x, r1 + c0);
    if (wx != 0.0f) bottom += wx * (LOAD(x, r1 + c1) - bottom);
    top += wy * (bottom - top);
  }
  STORE(top, y, i);
}

// Transpose: output dims right-aligned to rank 6; strides[d] is the input stride of the axis
// that output axis d reads.
typedef struct {
  int dims[6];
  int strides[6];
} TransposeShape;

// Also Slice: `offset` is the first element read (strides may be negative).
__kernel void transpose(__global const storage_t* x, __global storage_t* y, TransposeShape s,
                        int offset, int count) {
  const int i = get_global_id(0);
  if (i >= count) return;
  int rest = i, from = offset;
  for (int d = 5; d >= 0; --d) {
    from += (rest % s.dims[d]) * s.strides[d];
    rest /= s.dims[d];
  }
  STORE(LOAD(x, from), y, i);
}

// Reduce* over any axes: `kept` holds the output's axes (the kept ones, in order) and `reduced`
// the reduced ones, each right-aligned to rank 6 with its input strides. One work item per
// output element walks its `reduced_count` elements; fp32 accumulation. op: 0 sum, 1 mean, 2 max,
// 3 min, 4 prod, 5 L1, 6 L2, 7 sum of squares, 8 log of the sum, 9 log of the sum of exp (after
// subtracting the largest, so exp never overflows).
int strided_offset(const TransposeShape* s, int index) {
  int offset = 0;
  for (int d = 5; d >= 0; --d) {
    offset += (index % s->dims[d]) * s->strides[d];
    index /= s->dims[d];
  }
  return offset;
}

__kernel void reduce_axes(__global const storage_t* x, __global storage_t* y, TransposeShape kept,
                          TransposeShape reduced, int reduced_count, int op, int count) {
  const int i = get_global_id(0);
  if (i >= count) return;
  const int base = strided_offset(&kept, i);
  float peak = 0.0f;
  if (op == 9) {
    peak = -INFINITY;
    for (int k = 0; k < reduced_count; ++k) {
      peak = fmax(peak, LOAD(x, base + strided_offset(&reduced, k)));
    }
    if (isinf(peak)) peak = 0.0f;
  }
  float acc = op == 2 ? -INFINITY : op == 3 ? INFINITY : op == 4 ? 1.0f : 0.0f;
  for (int k = 0; k < reduced_count; ++k) {
    const float v = LOAD(x, base + strided_offset(&reduced, k));
    if (op == 2) {
      acc = v > acc ? v : acc;
    } else if (op == 3) {
      acc = v < acc ? v : acc;
    } else if (op == 4) {
      acc *= v;
    } else if (op == 5) {
      acc += fabs(v);
    } else if (op == 6 || op == 7) {
      acc += v * v;
    } else if (op == 9) {
      acc += exp(v - peak);
    } else {
      acc += v;
    }
  }
  if (op == 1) acc /= reduced_count;
  if (op == 6) acc = sqrt(acc);
  if (op == 8) acc = log(acc);
  if (op == 9) acc = peak + log(acc);
  STORE(acc, y, i);
}

// One Split output: y viewed as [outer, inner] from x's rows of x_inner elements at `offset`.
__kernel void slice_rows(__global const storage_t* x, __global storage_t* y, int inner,
                         int x_inner, int offset, int count) {
  const int i = get_global_id(0);
  if (i >= count) return;
  STORE(LOAD(x, (i / inner) * x_inner + offset + i % inner), y, i);
}

// Gather along an axis: y [outer, q, inner] takes x [outer, a, inner] at rows indices[q].
__kernel void gather_rows(__global const storage_t* x, __global storage_t* y,
                          __global const int* indices, int q, int inner, int a, int count) {
  const int i = get_global_id(0);
  if (i >= count) return;
  const int o = i / (q * inner), rest = i % (q * inner);
  STORE(LOAD(x, (o * a + indices[rest / inner]) * inner + rest % inner), y, i);
}

// One Concat input copied into its output (RowCopy: kConvSource), requantized where q says.
__kernel void copy_rows(__global const storage_t* x, __global storage_t* y, RowCopy r, QdqRow q) {
  const int i = get_global_id(0);
  if (i < r.count) copy_row_element(x, y, r, q, i);
}

// One axis of cubic Resize: src [outer, n_in, inner] -> dst [outer, n_out, inner]; output index j
// reads the taps index[4j, 4j+4) with weight[4j, 4j+4): w0 s0 + w1 s1 + w2 s2 + w3 s3 in that
// order and uncontracted, as the CPU computes it.
#pragma OPENCL FP_CONTRACT OFF
__kernel void resize_cubic_axis(__global const storage_t* src, __global storage_t* dst,
                                __global const int* index, __global const float* weight,
                                int n_in, int n_out, int inner, int count) {
  const int i = get_global_id(0);
  if (i >= count) return;
  const int in = i % inner, r = i / inner;
  const int base = (r / n_out) * n_in, j = 4 * (r % n_out);
  float acc = weight[j] * LOAD(src, (base + index[j]) * inner + in);
  acc = acc + weight[j + 1] * LOAD(src, (base + index[j + 1]) * inner + in);
  acc = acc + weight[j + 2] * LOAD(src, (base + index[j + 2]) * inner + in);
  acc = acc + weight[j + 3] * LOAD(src, (base + index[j + 3]) * inner + in);
  STORE(acc, dst, i);
}

)CL";

}  // namespace hsched::opencl
