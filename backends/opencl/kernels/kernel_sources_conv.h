// OpenCL C source of the spatial program's convolutions (ops_spatial.h, ops_conv.cpp): Conv as an
// implicit GEMM, im2col + GEMM epilogue, direct and per-output-row kernels, their quantized
// variants, and ConvTranspose. Built after kMatMulSource (kernel_sources_matmul.h: TILE_FMA,
// which conv_gemm uses) and before kSpatialSource (kernel_sources_spatial.h).
#pragma once

namespace hsched::opencl {

// Geometry travels in plain-int structs mirrored on the host (ops_conv.cpp); 1-D ops run as 2-D
// ones with a height of 1. One work item per output element unless stated otherwise.
inline constexpr const char* kConvSource = R"CL(
// Conv/ConvTranspose geometry. Conv: c/h/w the input, oc/oh/ow the output. ConvTranspose: the
// same (input c, h, w; output oc, oh, ow); pads are the leading (top/left) ones. A Conv's output
// channel c is stored as channel y_c0 + c * y_step of a tensor of y_channels channels (a Concat's
// output written in place, y_step > 1 where a channel shuffle interleaves its inputs; oc, 0 and
// 1 otherwise). With has_in_scale a Conv reads x[b, c] times in_scale[b *
// in_scale_batch + c] (a Mul by per-channel factors fused in: squeeze-and-excitation).
// With quantized, x and w hold 8-bit integers (a DequantizeLinear of x per tensor and one of
// constant weights fused in): the Conv sums (x - x_zero) * w, exact in fp32 while the sum stays
// below 2^24, then multiplies by x_scale and the weights' scale (1 or oc values of w_scale). With
// quantize_y it stores QuantizeLinear's clamp(rint(v / y_scale) + y_zero, y_lo, y_hi) of its
// result (a QuantizeLinear fused in); with post_op >= 0 as well, that integer q is dequantized,
// activated and quantized again as QdqRow post says (a DequantizeLinear -> activation ->
// QuantizeLinear); with chained, the integer is then run through the kernel's chain of ops (a
// SiLU's Sigmoid and product with a requantization between: qdq_chain_apply). One activation
// travels in the struct, a chain in a buffer: a buffer argument costs NVIDIA's enqueue more.
typedef struct {
  int n, c, h, w;
  int oc, oh, ow;
  int kh, kw, sh, sw, dh, dw, ph, pw;
  int group;
  int y_channels, y_c0;
  int has_in_scale, in_scale_batch;
  int x_channels, x_c0;
  int y_step;
  int quantized, x_zero, w_scale_count;
  float x_scale;
  int qlinear;
  int quantize_y, y_zero, y_lo, y_hi;
  float y_scale;
  int post_op;
  float post_alpha, post_beta;
  QdqRow post;
  int chained;
} ConvShape;

// A copy of rows, as a Concat copies an input into its output: element i of [outer, inner] read
// from x's rows of x_inner elements at x_offset (a Slice read in place; inner and 0 for x as it
// is) into y's rows of y_inner elements at `offset`, each row's planes of `plane` elements y_step
// apart (a channel shuffle's interleaving; inner and 0 for a row stored whole).
typedef struct {
  int x_inner, x_offset, inner, y_inner, offset, plane, y_step, count;
} RowCopy;

// (QdqRow q: a DequantizeLinear and QuantizeLinear fused in, a QDQ Concat's requantization.)
void copy_row_element(__global const storage_t* x, __global storage_t* y, RowCopy r, QdqRow q,
                      int i) {
  const int rest = i % r.inner;
  STORE(QDQ_OUT(q, QDQ_LOAD(q, x, (i / r.inner) * r.x_inner + r.x_offset + rest)), y,
        (i / r.inner) * r.y_inner + r.offset + rest / r.plane * r.y_step + rest % r.plane);
}

// The whole of copy `r` spread over the launch's work items (none when r.count is 0): a Concat's
// copy of an input carried by the Conv that writes the rest of its output, in the launch that
// Conv needs anyway. Every item takes part before anything else, so no early return skips it.
void carry_rows(__global const storage_t* x, __global storage_t* y, RowCopy r) {
  const int items = get_global_size(0) * get_global_size(1) * get_global_size(2);
  const int id = (get_global_id(2) * get_global_size(1) + get_global_id(1)) * get_global_size(0) +
                 get_global_id(0);
  const QdqRow none = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  for (int i = id; i < r.count; i += items) copy_row_element(x, y, r, none, i);
}

// A Conv's input element at (b, c, iy, ix) (channel x_c0 + c of x_channels stored: a Slice over
// the channels read in place), times its channel's factor where it has them.
float conv_input(__global const storage_t* x, __global const storage_t* in_scale, ConvShape s,
                 int b, int c, int iy, int ix, float zero) {
  const float v = LOAD(x, ((b * s.x_channels + s.x_c0 + c) * s.h + iy) * s.w + ix) - zero;
  return s.has_in_scale ? v * LOAD(in_scale, b * s.in_scale_batch + c) : v;
}
// The zero point conv_input subtracts (0 unless quantized).
float conv_zero(ConvShape s) { return s.quantized ? (float)s.x_zero : 0.0f; }

// A Conv's output element from `acc`, its sum over the window at output channel m: scaled where
// quantized, plus the bias and the residual, the activation, quantized where quantize_y, then
// requantized through post_op and `chain` where the shape says (a kernel without a chain passes
// a literal 0, and its code none of it).
float conv_finish(float acc, int m, __global const storage_t* w_scale, float bias, float res,
                  ConvShape s, int op, float alpha, float beta, __global const QdqChain* chain) {
  float q;
  const float scale = s.quantized ? s.x_scale * LOAD(w_scale, s.w_scale_count == 1 ? 0 : m) : 1.0f;
  if (s.qlinear) {
    // ONNX Runtime's QLinearConv (a Relu as its range's clamp): the bias's integers (its
    // dequantized value over the scale, exact below 2^20) added to the sum, times one multiplier.
    const float sum = acc + rint(bias / scale);
    q = clamp(rint(sum * (scale / s.y_scale)) + (float)s.y_zero, (float)s.y_lo, (float)s.y_hi);
  } else {
    const float v = apply_unary(op, acc * scale + bias + res, alpha, beta);
    if (!s.quantize_y) return v;
    q = clamp(rint(v / s.y_scale) + (float)s.y_zero, (float)s.y_lo, (float)s.y_hi);
  }
  if (s.post_op >= 0) {
    q = QDQ_OUT(s.post, apply_unary(s.post_op, (q - s.post.x_zero) * s.post.x_scale,
                                    s.post_alpha, s.post_beta));
  }
  return chain != 0 && s.chained ? qdq_chain_apply(chain, q) : q;
}

// Where a Conv stores its output element i (NCHW over its own oc channels).
int conv_stored(ConvShape s, int i) {
  const int plane = s.oh * s.ow, b = i / (s.oc * plane), rest = i % (s.oc * plane);
  return (b * s.y_channels + s.y_c0 + rest / plane * s.y_step) * plane + rest % plane;
}

// col[k, b * P + p] (fp32, for the GEMM) with k = (c * kh + ky) * kw + kx, P = oh * ow, b the
// batch index: zero where the window reads padding.
__kernel void im2col(__global const storage_t* x, __global const storage_t* in_scale,
                     __global float* col, ConvShape s, int count) {
  const int i = get_global_id(0);
  if (i >= count) return;
  const int plane = s.oh * s.ow;
  const int cols = s.n * plane;
  const int k = i / cols, q = i % cols;
  const int b = q / plane, p = q % plane;
  const int oy = p / s.ow, ox = p % s.ow;
  const int c = k / (s.kh * s.kw), r = k % (s.kh * s.kw);
  const int iy = oy * s.sh - s.ph + (r / s.kw) * s.dh;
  const int ix = ox * s.sw - s.pw + (r % s.kw) * s.dw;
  float v = 0.0f;
  if (iy >= 0 && iy < s.h && ix >= 0 && ix < s.w) {
    v = conv_input(x, in_scale, s, b, c, iy, ix, conv_zero(s));
  }
  col[i] = v;
}

// y[b, c, p] = act(t[c, b * plane + p] + bias[c] + res[b, c, p]): the GEMM's [oc, n * plane]
// result into NCHW (stored as conv_stored says), with a fused residual Add where has_res. With
// n == 1 and y of oc channels the layouts agree, so t may be y itself (fp32 storage): each item
// reads only the element it writes.
__kernel void conv_epilogue(__global const float* t, __global storage_t* y,
                            __global const storage_t* w_scale,
                            __global const storage_t* bias, int has_bias,
                            __global const storage_t* res, int has_res, ConvShape s, int op,
                            float alpha, float beta, int count, __global const QdqChain* chain) {
  const int i = get_global_id(0);
  if (i >= count) return;
  const int plane = s.oh * s.ow;
  const int b = i / (s.oc * plane), rest = i % (s.oc * plane);
  const int c = rest / plane, p = rest % plane;
  const float v = conv_finish(t[(c * s.n + b) * plane + p], c, w_scale,
                              has_bias ? LOAD(bias, c) : 0.0f, has_res ? LOAD(res, i) : 0.0f, s,
                              op, alpha, beta, chain);
  STORE(v, y, conv_stored(s, i));
}

// Implicit-GEMM convolution (group 1): t[OC, n * P] = W[OC, K] x col[K, n * P] with col never
// stored: the B tile is gathered from x as im2col would lay it out. A 16x16 work group computes a
// CG_TILE x CG_TILE tile, each item a CG_WPT x CG_WPT block (rows ty * CG_WPT + i, columns
// tx * CG_WPT + j, read from local memory as one CG_VEC each),
// over K steps of 16 staged in local memory. Work-group dimension 2 splits K: with one split the
// epilogue (bias, residual Add, activation, NCHW scatter) is fused; with several each writes its
// partial sums to partial[split, OC, n * P] and conv_split_reduce finishes. `carry` is a copy the
// launch makes besides (carry_rows; count 0: none).
// CG_1X1 (a 1x1 kernel without leading pads): B[k, col] is x's channel k at the column's one
// input pixel, an address stepping by a channel plane, with none of the window's index arithmetic.
// Loads this item's share of the weight tile and the gathered im2col tile (TILE wide) of the K
// step at K0 into a_next and b_next.
#define CG_FETCH(K0, TILE, CG_1X1, QUANT)                                                       \
  for (int r = 0; r < TILE / 16; ++r) {                                                         \
    const int l = tid + 256 * r, am = m0 + l / 16, ak = (K0) + l % 16;                          \
    a_next[r] = (am < s.oc && ak < k_end) ? LOAD(w, am * k_total + ak) : 0.0f;                  \
    const int k = (K0) + b_row0 + r * (256 / TILE);                                             \
    float v = 0.0f;                                                                             \
    if (CG_1X1) {                                                                               \
      if (col_ok && k < k_end) {                                                                \
        v = LOAD(x, x_at + k * x_plane) - (QUANT ? (float)s.x_zero : 0.0f);                     \
        if (s.has_in_scale) v *= LOAD(in_scale, bb * s.in_scale_batch + k);                     \
      }                                                                                         \
    } else if (col_ok && k < k_end) {                                                           \
      const int c = k / khw, rest = k % khw;                                                    \
      const int iy = iy0 + (rest / s.kw) * s.dh, ix = ix0 + (rest % s.kw) * s.dw;               \
      if (iy >= 0 && iy < s.h && ix >= 0 && ix < s.w)                                           \
        v = conv_input(x, in_scale, s, bb, c, iy, ix, QUANT ? (float)s.x_zero : 0.0f);          \
    }                                                                                           \
    b_next[r] = v;                                                                              \
  }
// PAIR_PARAMS and PAIR_PICK: nothing, or (conv_gemm_pair) a second Conv of the same input into
// the same output (a fire module's two expand Convs writing their Concat): its weights, bias and
// geometry, picked by work-group dimension 2, which then splits nothing. CHAIN_PARAM and CHAIN:
// nothing and 0, or (conv_gemm_qc) the chain argument and its name: only a Conv with a chain
// (ConvShape chained) carries its code and argument (on the H200 both cost every other quantized
// Conv's launches time, docs/benchmarks.md).
#define CG_SINGLE_PARAMS
#define CG_SINGLE_PICK                                                                          \
  const ConvShape s = s_0;                                                                      \
  __global const storage_t* w = w_0;                                                            \
  __global const storage_t* bias = bias_0;                                                      \
  const int has_bias = has_bias_0, split = get_group_id(2), splits = get_num_groups(2);
#define CG_PAIR_PARAMS                                                                          \
  , __global const storage_t* w_1, __global const storage_t* bias_1, int has_bias_1, ConvShape s_1
#define CG_PAIR_PICK                                                                            \
  const int second = get_group_id(2);                                                           \
  const ConvShape s = second ? s_1 : s_0;                                                       \
  __global const storage_t* w = second ? w_1 : w_0;                                             \
  __global const storage_t* bias = second ? bias_1 : bias_0;                                    \
  const int has_bias = second ? has_bias_1 : has_bias_0, split = 0, splits = 1;
#define CG_CHAIN_PARAM , __global const QdqChain* chain
#define CG_BODY(NAME, CG_TILE, CG_WPT, CG_VEC, CG_1X1, QUANT, PAIR_PARAMS, PAIR_PICK, CHAIN_PARAM, \
                CHAIN)                                                                          \
__kernel __attribute__((reqd_work_group_size(16, 16, 1)))                                       \
void NAME(__global const storage_t* x, __global const storage_t* in_scale,                     \
          __global const storage_t* w_0, __global const storage_t* w_scale,                     \
          __global const storage_t* bias_0, int has_bias_0, __global const storage_t* res,      \
          int has_res, __global storage_t* y, __global float* partial, ConvShape s_0,           \
          int k_chunk, int op, float alpha, float beta, __global const storage_t* carried,      \
          RowCopy carry CHAIN_PARAM PAIR_PARAMS) {                                              \
  carry_rows(carried, y, carry);                                                                \
  PAIR_PICK                                                                                     \
  __local float a_tile[16][CG_TILE] __attribute__((aligned(16)));                              \
  __local float b_tile[16][CG_TILE] __attribute__((aligned(16)));                              \
  const int tx = get_local_id(0), ty = get_local_id(1), tid = ty * 16 + tx;                     \
  const int n0 = get_group_id(0) * CG_TILE, m0 = get_group_id(1) * CG_TILE;                     \
  if (m0 >= s.oc) return; /* (a pair's Conv of fewer channels: the whole group) */              \
  const int khw = s.kh * s.kw, k_total = s.c * khw;                                             \
  const int plane = s.oh * s.ow, cols = s.n * plane;                                            \
  const int k_begin = split * k_chunk, k_end = min(k_total, k_begin + k_chunk);                 \
  /* This item's B column (fixed over K): its batch, window origin and validity. */             \
  const int b_col = tid % CG_TILE, b_row0 = tid / CG_TILE;                                      \
  const int col = n0 + b_col;                                                                   \
  const int bb = col < cols ? col / plane : 0, pp = col < cols ? col % plane : 0;               \
  const int iy0 = (pp / s.ow) * s.sh - s.ph, ix0 = (pp % s.ow) * s.sw - s.pw;                   \
  /* 1x1: a trailing pad's pixels read nothing; x_at is channel 0's element. */                 \
  const int col_ok = col < cols && (!CG_1X1 || (iy0 < s.h && ix0 < s.w));                       \
  const int x_plane = s.h * s.w;                                                                \
  const int x_at = (bb * s.x_channels + s.x_c0) * x_plane + iy0 * s.w + ix0;                    \
  float acc[CG_WPT][CG_WPT];                                                                    \
  for (int i = 0; i < CG_WPT; ++i)                                                              \
    for (int j = 0; j < CG_WPT; ++j) acc[i][j] = 0.0f;                                          \
  /* As matmul_tiled: the next K step's share of each tile in registers during this one's. */   \
  float a_next[CG_TILE / 16], b_next[CG_TILE / 16];                                             \
  CG_FETCH(k_begin, CG_TILE, CG_1X1, QUANT)                                                     \
  for (int k0 = k_begin; k0 < k_end; k0 += 16) {                                                \
    for (int r = 0; r < CG_TILE / 16; ++r) {                                                    \
      const int l = tid + 256 * r;                                                              \
      a_tile[l % 16][l / 16] = a_next[r];                                                       \
      b_tile[b_row0 + r * (256 / CG_TILE)][b_col] = b_next[r];                                  \
    }                                                                                           \
    barrier(CLK_LOCAL_MEM_FENCE);                                                               \
    if (k0 + 16 < k_end) CG_FETCH(k0 + 16, CG_TILE, CG_1X1, QUANT)                              \
    TILE_FMA(CG_VEC, CG_WPT)                                                                    \
    barrier(CLK_LOCAL_MEM_FENCE);                                                               \
  }                                                                                             \
  for (int i = 0; i < CG_WPT; ++i) {                                                            \
    const int m = m0 + ty * CG_WPT + i;                                                         \
    if (m >= s.oc) continue;                                                                    \
    const float bias_m = (splits == 1 && has_bias) ? LOAD(bias, m) : 0.0f;                      \
    for (int j = 0; j < CG_WPT; ++j) {                                                          \
      const int n = n0 + tx * CG_WPT + j;                                                       \
      if (n >= cols) continue;                                                                  \
      if (splits == 1) {                                                                        \
        const int out = ((n / plane) * s.oc + m) * plane + n % plane;                           \
        const float v = acc[i][j] + bias_m + (has_res ? LOAD(res, out) : 0.0f);               \
        STORE(QUANT ? conv_finish(acc[i][j], m, w_scale, bias_m,                                \
                                  has_res ? LOAD(res, out) : 0.0f, s, op, alpha, beta, CHAIN)   \
                    : apply_unary(op, v, alpha, beta),                                          \
              y, conv_stored(s, out));                                                          \
      } else {                                                                                  \
        partial[(split * s.oc + m) * cols + n] = acc[i][j];                                     \
      }                                                                                         \
    }                                                                                           \
  }                                                                                             \
}
// One Conv, the three tile widths (NAME_64 ... NAME_16, then SUFFIX): float (QUANT 0), quantized
// (QUANT 1) with or without a chain (CHAINED).
#define CG_TILES(NAME, SUFFIX, CG_1X1, QUANT, CHAINED)                                          \
  CG_BODY(NAME##_64##SUFFIX, 64, 4, float4, CG_1X1, QUANT, CG_SINGLE_PARAMS, CG_SINGLE_PICK,    \
          CHAINED##_PARAM, CHAINED##_NAME)                                                      \
  CG_BODY(NAME##_32##SUFFIX, 32, 2, float2, CG_1X1, QUANT, CG_SINGLE_PARAMS, CG_SINGLE_PICK,    \
          CHAINED##_PARAM, CHAINED##_NAME)                                                      \
  CG_BODY(NAME##_16##SUFFIX, 16, 1, float, CG_1X1, QUANT, CG_SINGLE_PARAMS, CG_SINGLE_PICK,     \
          CHAINED##_PARAM, CHAINED##_NAME)
#define CG_NO_CHAIN_PARAM
#define CG_NO_CHAIN_NAME 0
#define CG_CHAIN_NAME chain
CG_TILES(conv_gemm, , 0, 0, CG_NO_CHAIN)
CG_TILES(conv_gemm, _1x1, 1, 0, CG_NO_CHAIN)
// The same for a quantized Conv or one whose output is quantized (ConvShape's quantized and
// quantize_y): 8-bit inputs less their zero point, conv_finish's epilogue; conv_gemm_qc_* with
// the chain after it (ConvShape chained).
CG_TILES(conv_gemm_q, , 0, 1, CG_NO_CHAIN)
CG_TILES(conv_gemm_q, _1x1, 1, 1, CG_NO_CHAIN)
CG_TILES(conv_gemm_qc, , 0, 1, CG_CHAIN)
CG_TILES(conv_gemm_qc, _1x1, 1, 1, CG_CHAIN)
// Two Convs in one launch (PAIR_PICK), each through the general gather.
CG_BODY(conv_gemm_pair_64, 64, 4, float4, 0, 0, CG_PAIR_PARAMS, CG_PAIR_PICK, , 0)
CG_BODY(conv_gemm_pair_32, 32, 2, float2, 0, 0, CG_PAIR_PARAMS, CG_PAIR_PICK, , 0)
CG_BODY(conv_gemm_pair_16, 16, 1, float, 0, 0, CG_PAIR_PARAMS, CG_PAIR_PICK, , 0)

// Sums conv_gemm's split-K partials [splits, channels, n * plane] into NCHW y with bias, residual
// and activation.
__kernel void conv_split_reduce(__global const float* partial, __global storage_t* y,
                                __global const storage_t* w_scale,
                                __global const storage_t* bias, int has_bias,
                                __global const storage_t* res, int has_res, int splits,
                                ConvShape s, int op, float alpha, float beta, int count,
                                __global const QdqChain* chain) {
  const int n = s.n, channels = s.oc, plane = s.oh * s.ow;
  const int i = get_global_id(0);
  if (i >= count) return;
  const int b = i / (channels * plane), rest = i % (channels * plane);
  const int c = rest / plane, p = rest % plane;
  const int stride = channels * n * plane;
  int at = (c * n + b) * plane + p;
  float v = 0.0f;
  for (int k = 0; k < splits; ++k, at += stride) v += partial[at];
  v = conv_finish(v, c, w_scale, has_bias ? LOAD(bias, c) : 0.0f, has_res ? LOAD(res, i) : 0.0f,
                  s, op, alpha, beta, chain);
  STORE(v, y, conv_stored(s, i));
}

// Winograd F(2x2, 3x3) for a 3x3 Conv of stride and dilation 1 and group 1 (ops_conv.cpp): the
// input's 4x4 tiles (from (2 ty - ph, 2 tx - pw), th x tw tiles a plane, tile p = (b * th + ty)
// * tw + tx) transformed, B' d B, into v[xi, c, p] (xi = 4 r + q); 16 products m[xi] = u[xi] x
// v[xi] by the weights' transform u = G g G' [16, OC, C] (made on the host); each output tile
// A' m A, finished as conv_gemm finishes an output. v, u and m are in the storage type. One work
// item per (channel, tile).
__kernel void winograd_input(__global const storage_t* x, __global const storage_t* in_scale,
                             __global storage_t* v, ConvShape s, int th, int tw, int count) {
  const int i = get_global_id(0);
  if (i >= count) return;
  const int tiles = s.n * th * tw, c = i / tiles, p = i % tiles;
  const int b = p / (th * tw), t = p % (th * tw);
  const int y0 = (t / tw) * 2 - s.ph, x0 = (t % tw) * 2 - s.pw;
  float d[4][4];
  for (int r = 0; r < 4; ++r) {
    for (int q = 0; q < 4; ++q) {
      const int iy = y0 + r, ix = x0 + q;
      d[r][q] = iy >= 0 && iy < s.h && ix >= 0 && ix < s.w
                    ? conv_input(x, in_scale, s, b, c, iy, ix, 0.0f)
                    : 0.0f;
    }
  }
  float e[4][4];  // B' d
  for (int q = 0; q < 4; ++q) {
    e[0][q] = d[0][q] - d[2][q];
    e[1][q] = d[1][q] + d[2][q];
    e[2][q] = d[2][q] - d[1][q];
    e[3][q] = d[1][q] - d[3][q];
  }
  const int stride = s.c * tiles, at = c * tiles + p;
  for (int r = 0; r < 4; ++r) {  // (B' d) B
    STORE(e[r][0] - e[r][2], v, at + (4 * r) * stride);
    STORE(e[r][1] + e[r][2], v, at + (4 * r + 1) * stride);
    STORE(e[r][2] - e[r][1], v, at + (4 * r + 2) * stride);
    STORE(e[r][1] - e[r][3], v, at + (4 * r + 3) * stride);
  }
}

// The products m[xi, k, p] back to outputs: one work item per (output channel, tile).
__kernel void winograd_output(__global const storage_t* m, __global storage_t* y,
                              __global const storage_t* bias, int has_bias,
                              __global const storage_t* res, int has_res, ConvShape s, int th,
                              int tw, int op, float alpha, float beta, int count) {
  const int i = get_global_id(0);
  if (i >= count) return;
  const int tiles = s.n * th * tw, k = i / tiles, p = i % tiles;
  const int b = p / (th * tw), t = p % (th * tw);
  const int oy0 = (t / tw) * 2, ox0 = (t % tw) * 2;
  const int stride = s.oc * tiles, at = k * tiles + p;
  float e[2][4];  // A' m
  for (int q = 0; q < 4; ++q) {
    const float m0 = LOAD(m, at + q * stride), m1 = LOAD(m, at + (4 + q) * stride);
    const float m2 = LOAD(m, at + (8 + q) * stride), m3 = LOAD(m, at + (12 + q) * stride);
    e[0][q] = m0 + m1 + m2;
    e[1][q] = m1 - m2 - m3;
  }
  const float bias_k = has_bias ? LOAD(bias, k) : 0.0f;
  for (int r = 0; r < 2; ++r) {  // (A' m) A
    const int oy = oy0 + r;
    if (oy >= s.oh) break;
    for (int q = 0; q < 2; ++q) {
      const int ox = ox0 + q;
      if (ox >= s.ow) break;
      const float acc = q == 0 ? e[r][0] + e[r][1] + e[r][2] : e[r][1] - e[r][2] - e[r][3];
      const int out = ((b * s.oc + k) * s.oh + oy) * s.ow + ox;
      const float v = acc + bias_k + (has_res ? LOAD(res, out) : 0.0f);
      STORE(apply_unary(op, v, alpha, beta), y, conv_stored(s, out));
    }
  }
}

// Direct convolution (grouped and depthwise; any group): w is [oc, c / group, kh, kw]; bias,
// residual Add and activation fused as in conv_gemm; the chain as conv_gemm's CHAINED says.
#define CD_BODY(NAME, QUANT, CHAINED)                                                           \
__kernel void NAME(__global const storage_t* x, __global const storage_t* in_scale,            \
                   __global const storage_t* w, __global const storage_t* w_scale,             \
                   __global const storage_t* bias, int has_bias,                                \
                   __global const storage_t* res, int has_res, __global storage_t* y,           \
                   ConvShape s, int op, float alpha, float beta,                                \
                   int count CHAINED##_PARAM) {                                                 \
  const int i = get_global_id(0);                                                               \
  if (i >= count) return;                                                                       \
  const int ox = i % s.ow, oy = (i / s.ow) % s.oh, oc = (i / (s.ow * s.oh)) % s.oc;             \
  const int b = i / (s.ow * s.oh * s.oc);                                                       \
  const int cin = s.c / s.group, g = oc / (s.oc / s.group);                                     \
  const float zero = QUANT ? conv_zero(s) : 0.0f;                                               \
  float sum = QUANT || !has_bias ? 0.0f : LOAD(bias, oc);                                       \
  for (int ci = 0; ci < cin; ++ci) {                                                            \
    const int wbase = (oc * cin + ci) * s.kh;                                                   \
    for (int ky = 0; ky < s.kh; ++ky) {                                                         \
      const int iy = oy * s.sh - s.ph + ky * s.dh;                                              \
      if (iy < 0 || iy >= s.h) continue;                                                        \
      for (int kx = 0; kx < s.kw; ++kx) {                                                       \
        const int ix = ox * s.sw - s.pw + kx * s.dw;                                            \
        if (ix < 0 || ix >= s.w) continue;                                                      \
        sum += conv_input(x, in_scale, s, b, g * cin + ci, iy, ix, zero) *                      \
               LOAD(w, (wbase + ky) * s.kw + kx);                                               \
      }                                                                                         \
    }                                                                                           \
  }                                                                                             \
  const float r = has_res ? LOAD(res, i) : 0.0f;                                                \
  STORE(QUANT ? conv_finish(sum, oc, w_scale, has_bias ? LOAD(bias, oc) : 0.0f, r, s, op,       \
                            alpha, beta, CHAINED##_NAME)                                        \
              : apply_unary(op, sum + r, alpha, beta),                                          \
        y, conv_stored(s, i));                                                                  \
}
CD_BODY(conv_direct, 0, CG_NO_CHAIN)
CD_BODY(conv_direct_q, 1, CG_NO_CHAIN)  // quantized or quantize_y, as conv_gemm_q_*
CD_BODY(conv_direct_qc, 1, CG_CHAIN)    // and a chain, as conv_gemm_qc_*

// Direct convolution of group 1 and at most 4 output channels (a decoder's last Conv to RGB):
// work groups of 256 items, 32 output positions (count = N x OH x OW) by 8 slices of the input
// channels (slice k sums channels k, k + 8, ...; each input element read once); slice 0 adds the
// others' sums from local memory and finishes every channel as conv_finish says (8-bit operands
// too: the partial sums of integers stay exact).
#define PIXEL_LANES 32
#define PIXEL_SLICES 8
__kernel __attribute__((reqd_work_group_size(PIXEL_LANES * PIXEL_SLICES, 1, 1))) void
conv_direct_pixel(__global const storage_t* x, __global const storage_t* in_scale,
                  __global const storage_t* w, __global const storage_t* w_scale,
                  __global const storage_t* bias, int has_bias, __global const storage_t* res,
                  int has_res, __global storage_t* y, ConvShape s, int op, float alpha,
                  float beta, int count, __global const QdqChain* chain) {
  __local float part[PIXEL_SLICES - 1][4][PIXEL_LANES];
  const int lane = get_local_id(0) % PIXEL_LANES, slice = get_local_id(0) / PIXEL_LANES;
  const int i = get_group_id(0) * PIXEL_LANES + lane;
  const int plane = s.oh * s.ow, p = i % plane, b = i / plane;
  const int ox = p % s.ow, oy = p / s.ow, per_channel = s.c * s.kh * s.kw;
  const float zero = conv_zero(s);
  float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int ci = slice; ci < s.c && i < count; ci += PIXEL_SLICES) {
    for (int ky = 0; ky < s.kh; ++ky) {
      const int iy = oy * s.sh - s.ph + ky * s.dh;
      if (iy < 0 || iy >= s.h) continue;
      for (int kx = 0; kx < s.kw; ++kx) {
        const int ix = ox * s.sw - s.pw + kx * s.dw;
        if (ix < 0 || ix >= s.w) continue;
        const float v = conv_input(x, in_scale, s, b, ci, iy, ix, zero);
        const int k = (ci * s.kh + ky) * s.kw + kx;
#pragma unroll
        for (int m = 0; m < 4; ++m) {
          if (m < s.oc) acc[m] += v * LOAD(w, m * per_channel + k);
        }
      }
    }
  }
  if (slice > 0) {
#pragma unroll
    for (int m = 0; m < 4; ++m) part[slice - 1][m][lane] = acc[m];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (slice > 0 || i >= count) return;
  for (int k = 0; k < PIXEL_SLICES - 1; ++k) {
#pragma unroll
    for (int m = 0; m < 4; ++m) acc[m] += part[k][m][lane];
  }
#pragma unroll
  for (int m = 0; m < 4; ++m) {
    if (m >= s.oc) break;
    const int out = (b * s.oc + m) * plane + p;
    const float r = has_res ? LOAD(res, out) : 0.0f;
    STORE(conv_finish(acc[m], m, w_scale, has_bias ? LOAD(bias, m) : 0.0f, r, s, op, alpha, beta,
                      chain),
          y, conv_stored(s, out));
  }
}

// ConvTranspose as a gather: output (oy, ox) takes input (iy, ix) through tap (ky, kx) when
// oy + ph - ky * dh == iy * sh. w is [c, oc / group, kh, kw].
__kernel void conv_transpose(__global const storage_t* x, __global const storage_t* w,
                             __global const storage_t* bias, int has_bias, __global storage_t* y,
                             ConvShape s, int count) {
  const int i = get_global_id(0);
  if (i >= count) return;
  const int ox = i % s.ow, oy = (i / s.ow) % s.oh, oc = (i / (s.ow * s.oh)) % s.oc;
  const int b = i / (s.ow * s.oh * s.oc);
  const int cin = s.c / s.group, cout = s.oc / s.group;
  const int g = oc / cout, ocg = oc % cout;
  float sum = has_bias ? LOAD(bias, oc) : 0.0f;
  for (int ky = 0; ky < s.kh; ++ky) {
    const int ny = oy + s.ph - ky * s.dh;
    if (ny < 0 || ny % s.sh != 0 || ny / s.sh >= s.h) continue;
    const int iy = ny / s.sh;
    for (int kx = 0; kx < s.kw; ++kx) {
      const int nx = ox + s.pw - kx * s.dw;
      if (nx < 0 || nx % s.sw != 0 || nx / s.sw >= s.w) continue;
      const int ix = nx / s.sw;
      for (int ci = 0; ci < cin; ++ci) {
        const int c = g * cin + ci;
        sum += LOAD(x, ((b * s.c + c) * s.h + iy) * s.w + ix) *
               LOAD(w, (((c * cout + ocg) * s.kh) + ky) * s.kw + kx);
      }
    }
  }
  STORE(sum, y, i);
}

// The sum of `value` over a work group of 64 (a local-memory tree reduction).
float group_sum(float value, __local float* scratch) {
  const int lid = get_local_id(0);
  scratch[lid] = value;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int half_size = 32; half_size > 0; half_size >>= 1) {
    if (lid < half_size) scratch[lid] += scratch[lid + half_size];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float total = scratch[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return total;
}

// A convolution of few outputs (a squeeze-and-excitation block's Convs on one pixel): a work
// group of 64 per output element, reducing over its receptive field (input channels x taps)
// with coalesced weight reads; any group; bias, residual and activation as conv_direct's.
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void conv_rows(__global const storage_t* x, __global const storage_t* in_scale,
               __global const storage_t* w, __global const storage_t* w_scale,
               __global const storage_t* bias, int has_bias,
               __global const storage_t* res, int has_res, __global storage_t* y, ConvShape s,
               int op, float alpha, float beta, __global const QdqChain* chain) {
  __local float scratch[64];
  const int i = get_group_id(0), lid = get_local_id(0);
  const int ox = i % s.ow, oy = (i / s.ow) % s.oh, oc = (i / (s.ow * s.oh)) % s.oc;
  const int b = i / (s.ow * s.oh * s.oc);
  const int cin = s.c / s.group, g = oc / (s.oc / s.group);
  const float zero = conv_zero(s);
  const int taps = s.kh * s.kw, size = cin * taps;
  float partial = 0.0f;
  for (int r = lid; r < size; r += 64) {
    const int ci = r / taps, ky = (r % taps) / s.kw, kx = r % s.kw;
    const int iy = oy * s.sh - s.ph + ky * s.dh, ix = ox * s.sw - s.pw + kx * s.dw;
    if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w) continue;
    partial += conv_input(x, in_scale, s, b, g * cin + ci, iy, ix, zero) * LOAD(w, oc * size + r);
  }
  const float sum = group_sum(partial, scratch);
  if (lid != 0) return;
  STORE(conv_finish(sum, oc, w_scale, has_bias ? LOAD(bias, oc) : 0.0f,
                    has_res ? LOAD(res, i) : 0.0f, s, op, alpha, beta, chain),
        y, conv_stored(s, i));
}


// A squeeze-and-excitation block's two 1x1 Convs on the pooled means m [N, C], in one launch:
// y[b, o] = act2(b2[o] + sum_h w2[o, h] act1(b1[h] + sum_c w1[h, c] m[b, c])) for o < c_out. A work
// group of 256 items per (64 outputs, batch) computes the whole hidden layer in local memory
// (SE_MAX_C means, SE_MAX_MID hidden values), 8 items an output (w1's rows read in runs of 8),
// then its 64 outputs, 4 items each. fp32 sums.
typedef struct {
  int c, mid, c_out, has_b1, has_b2, op1, op2;
  float alpha1, beta1, alpha2, beta2;
} SeShape;
#define SE_MAX_C 4096
#define SE_MAX_MID 1024
// Output `row` (< rows) of a layer w [rows, len] x v (len values in local memory) plus its bias,
// `lanes` items of the group an output (item lid its lane lid % lanes), in part's slot of the
// output's first lane (others: garbage). Every item of the group calls it.
float se_layer(__global const storage_t* w, __global const storage_t* bias, int has_bias,
               int row, int rows, int len, __local const float* v, int lanes,
               __local float* part) {
  const int lid = get_local_id(0), lane = lid % lanes;
  float acc = 0.0f;
  if (row < rows) {
    for (int c = lane; c < len; c += lanes) acc = fma(LOAD(w, row * len + c), v[c], acc);
  }
  part[lid] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  float sum = has_bias && row < rows ? LOAD(bias, row) : 0.0f;
  if (lane == 0) {
    for (int u = 0; u < lanes; ++u) sum += part[lid + u];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  return sum;
}
__kernel __attribute__((reqd_work_group_size(256, 1, 1)))
void se_gate(__global const storage_t* m, __global const storage_t* w1,
             __global const storage_t* b1, __global const storage_t* w2,
             __global const storage_t* b2, __global storage_t* y, SeShape s) {
  __local float means[SE_MAX_C];
  __local float hidden[SE_MAX_MID];
  __local float part[256];
  const int lid = get_local_id(0), o0 = get_group_id(0) * 64, batch = get_group_id(1);
  for (int c = lid; c < s.c; c += 256) means[c] = LOAD(m, batch * s.c + c);
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int h0 = 0; h0 < s.mid; h0 += 32) {
    const int h = h0 + lid / 8;
    const float v = se_layer(w1, b1, s.has_b1, h, s.mid, s.c, means, 8, part);
    if (lid % 8 == 0 && h < s.mid) hidden[h] = apply_unary(s.op1, v, s.alpha1, s.beta1);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  const int o = o0 + lid / 4;
  const float v = se_layer(w2, b2, s.has_b2, o, s.c_out, s.mid, hidden, 4, part);
  if (lid % 4 == 0 && o < s.c_out) {
    STORE(apply_unary(s.op2, v, s.alpha2, s.beta2), y, batch * s.c_out + o);
  }
}
)CL";

}  // namespace hsched::opencl
