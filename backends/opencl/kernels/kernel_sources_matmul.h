// OpenCL C source of the spatial program's tiled GEMMs (ops_matmul.cpp's matmul_tiled and its
// split-K reduction) and of TILE_FMA, which the implicit-GEMM convolution of kConvSource uses
// too: built first in that program (ops.cpp), after kStoragePrelude and kUnaryFunctionSource.
#pragma once

namespace hsched::opencl {

inline constexpr const char* kMatMulSource = R"CL(
// acc += this work item's WPT x WPT block of a_tile^T b_tile over one step of 16 in K, one vector
// load of each tile row (the item's rows and columns are contiguous). Used by the tiled GEMMs.
#define TILE_FMA(VEC, WPT)                                                                      \
  for (int kk = 0; kk < 16; ++kk) {                                                             \
    const VEC a_row_ = *(__local const VEC*)&a_tile[kk][ty * WPT];                              \
    const VEC b_row_ = *(__local const VEC*)&b_tile[kk][tx * WPT];                              \
    const float* a_ = (const float*)&a_row_;                                                    \
    const float* b_ = (const float*)&b_row_;                                                    \
    for (int i = 0; i < WPT; ++i)                                                               \
      for (int j = 0; j < WPT; ++j) acc[i][j] = fma(a_[i], b_[j], acc[i][j]);                   \
  }

// MatMul / Gemm products of small and medium size, replayable unlike CLBlast's calls:
// y[batch][m, n] = act(alpha * A[batch][m, k] B[batch][k, n] (+ bias[n]) (+ res[batch][m, n])) in
// the storage type, fp32 sums, act none with op -1. A[i][p] is at a_offset + a_batch * batch +
// i * a_row + p * a_col (B alike), so transposes, slices and a matrix shared by every batch
// (stride 0) are offsets and strides;
// y[batch][i, j] at y_batch * batch + i * y_row + j, so a transposed result is too; res's at
// res_batch * batch + i * y_row + j (res_batch 0: one residual for every batch).
// Tiles as conv_gemm's: 16 x 16 items, each MM_WPT x MM_WPT outputs; a tile's loads walk the
// operand's contiguous axis across neighbouring items. With several K splits (work groups
// batch * splits + split) each writes its partial sums to partial[split][batch][m, n] and
// matmul_split_reduce finishes.
//
// The geometry and epilogue travel as one struct argument (MatMulShape in ops_matmul.cpp): each
// scalar argument costs a launch host time on some drivers (NVIDIA's), a struct about nothing.
// 8-bit operands (a DequantizeLinear of each fused in) are read less their zero points a_zero and
// b_zero (0 otherwise), alpha holding their scales (b's per tensor); with b_scales the product
// of column j is also times b_scale[j]. With y_scale > 0 y holds QuantizeLinear's
// clamp(rint(v / y_scale) + y_zero, y_lo, y_hi) of the result. With norm (bit 0; bit 1: with
// norm_bias) A's rows are those of LayerNormalization over K: (a - mean) / sqrt(variance +
// norm_epsilon) * norm_scale[p] (+ norm_bias[p]), the statistics of each of the group's rows
// computed first, two passes over its K values (as layer_norm_rows); K is then never split.
// With norm_q.x_scale > 0 (matmul_qdq), a's integers are dequantized first and the normalized
// values quantized again (layer_norm_rows_q's QdqRow), the statistics summed as that kernel sums
// them (MM_ROW_STATS_Q).
// A late step's Add as ONNX Runtime's QLinearAdd (form 1: the product first of the graph's
// operands, 2: second; 0: in floats).
typedef struct {
  int form;
  float ra, rb, fixed;
} LateAdd;
float late_qlinear_add(LateAdd t, float product, float other, float lo, float hi) {
  const float first = t.form == 1 ? product : other, second = t.form == 1 ? other : product;
  return clamp(rint(fma(first, t.ra, fma(second, t.rb, t.fixed))), lo, hi);
}
typedef struct {
  int m, n, k, a_row, a_col, a_batch, a_offset, b_row, b_col, b_batch, b_offset;
  int y_row, y_batch, res_batch, batches, splits, k_chunk, has_bias, has_res, op;
  float alpha, act_alpha, act_beta;
  float a_zero, b_zero;
  int b_scales;
  float y_scale, y_zero, y_lo, y_hi;
  int norm;
  float norm_epsilon;
  QdqRow norm_q;
  int late_bias;
  QdqRow late;
  float late_b_scale, late_b_zero;
  LateAdd late_add;
  int late_res;
  QdqRow late_r;
  float late_r_scale, late_r_zero;
  LateAdd late_r_add;
  int chained;
} MatMulShape;

// Output (row, col)'s value from its sum: scaled, plus the bias and the residual, activated,
// quantized where the shape says.
// With late_bias, the bias comes after the quantization: those integers dequantized, plus the
// bias (itself 8-bit integers dequantized where late_b_scale > 0), quantized again (QdqRow late).
// With late_res, the residual res (8-bit integers) comes after that alike (QdqRow late_r).
// Either Add of bytes of one type is ONNX Runtime's QLinearAdd where its LateAdd says. Then,
// where mm.chained has bit 0, the chain of ops on the integers (qdq_chain_apply, chain[0]).
float mm_finish(float acc, int col, __global const storage_t* b_scale, float bias, float res,
                MatMulShape mm, __global const QdqChain* chain) {
  const float early = (mm.late_bias ? 0.0f : bias) + (mm.late_res ? 0.0f : res);
  float v;
  if (mm.y_scale > 0.0f && mm.op < 0 && (mm.late_bias || !mm.has_bias) &&
      (mm.late_res || !mm.has_res)) {
    // A product quantized as it is: ONNX Runtime's QLinearMatMul, the sum times one multiplier
    // (x_scale * w_scale) / y_scale, rounded once.
    const float scale = mm.b_scales ? mm.alpha * LOAD(b_scale, col) : mm.alpha;
    v = clamp(rint(acc * (scale / mm.y_scale)) + mm.y_zero, mm.y_lo, mm.y_hi);
  } else {
    v = mm.alpha * acc;
    if (mm.b_scales) v *= LOAD(b_scale, col);
    v = apply_unary(mm.op, v + early, mm.act_alpha, mm.act_beta);
    if (!(mm.y_scale > 0.0f)) return v;
    v = clamp(rint(v / mm.y_scale) + mm.y_zero, mm.y_lo, mm.y_hi);
  }
  if (mm.late_bias && mm.late_add.form != 0) {
    v = late_qlinear_add(mm.late_add, v, bias, mm.late.lo, mm.late.hi);
  } else if (mm.late_bias) {
    const float b = mm.late_b_scale > 0.0f ? (bias - mm.late_b_zero) * mm.late_b_scale : bias;
    v = QDQ_OUT(mm.late, (v - mm.late.x_zero) * mm.late.x_scale + b);
  }
  if (mm.late_res && mm.late_r_add.form != 0) {
    v = late_qlinear_add(mm.late_r_add, v, res, mm.late_r.lo, mm.late_r.hi);
  } else if (mm.late_res) {
    v = QDQ_OUT(mm.late_r, (v - mm.late_r.x_zero) * mm.late_r.x_scale +
                               (res - mm.late_r_zero) * mm.late_r_scale);
  }
  return (mm.chained & 1) ? qdq_chain_apply(chain, v) : v;
}
// Names the kernels' code reads for MatMulShape mm's fields.
#define MM_UNPACK                                                                               \
  const int m = mm.m, n = mm.n, k = mm.k, a_row = mm.a_row, a_col = mm.a_col;                   \
  const int a_batch = mm.a_batch, a_offset = mm.a_offset, b_row = mm.b_row, b_col = mm.b_col;   \
  const int b_batch = mm.b_batch, b_offset = mm.b_offset, y_row = mm.y_row;                     \
  const int y_batch = mm.y_batch, res_batch = mm.res_batch, batches = mm.batches;               \
  const int splits = mm.splits, k_chunk = mm.k_chunk, has_bias = mm.has_bias;                   \
  const int has_res = mm.has_res, op = mm.op;                                                   \
  const float alpha = mm.alpha, act_alpha = mm.act_alpha, act_beta = mm.act_beta;
//
// With mm.norm: row_mean and row_rstd of the group's TILE rows of A, 256 / TILE items a row
// (a_tile, at least 256 floats, holds their partial sums).
#define MM_ROW_STATS(TILE)                                                                      \
  if (mm.norm) {                                                                                \
    __local float* part_ = &a_tile[0][0];                                                       \
    const int per_ = 256 / TILE, r_ = tid / per_, l_ = tid % per_, i_ = m0 + r_;                \
    const int at_ = a_base + i_ * a_row;                                                        \
    for (int pass_ = 0; pass_ < 2; ++pass_) {                                                   \
      const float mean_ = pass_ == 0 ? 0.0f : row_mean[r_];                                     \
      float s_ = 0.0f;                                                                          \
      for (int p_ = l_; i_ < m && p_ < k; p_ += per_) {                                         \
        const float d_ = LOAD(a, at_ + p_ * a_col) - mean_;                                     \
        s_ += pass_ == 0 ? d_ : d_ * d_;                                                        \
      }                                                                                         \
      part_[tid] = s_;                                                                          \
      barrier(CLK_LOCAL_MEM_FENCE);                                                             \
      if (l_ == 0) {                                                                            \
        float t_ = 0.0f;                                                                        \
        for (int j_ = 0; j_ < per_; ++j_) t_ += part_[tid + j_];                                \
        if (pass_ == 0) row_mean[r_] = t_ / k;                                                  \
        else row_rstd[r_] = rsqrt(t_ / k + mm.norm_epsilon);                                    \
      }                                                                                         \
      barrier(CLK_LOCAL_MEM_FENCE);                                                             \
    }                                                                                           \
  }
// group_sum's total of 64 values s[0..63] (layer_norm_rows' order: its tree, level by level):
// the part of lanes l, l + 4, ... (l < 4) as the tree holds it at s[l] after its level 4, then
// those four.
float mm_tree_part(__local const float* s, int l) {
  float c[2];
  for (int h = 0; h < 2; ++h) {
    const int at = l + 4 * h;
    const float b0 = (s[at] + s[at + 32]) + (s[at + 16] + s[at + 48]);
    const float b1 = (s[at + 8] + s[at + 40]) + (s[at + 24] + s[at + 56]);
    c[h] = b0 + b1;
  }
  return c[0] + c[1];
}
// The same for matmul_qdq, as layer_norm_rows_q sums (a row's 64 lanes each summing every 64th
// value, then group_sum's tree), of A's dequantized integers (mm.norm_q): TILE / 4 rows a round,
// their lanes' sums in a_tile, the tree's four parts of each row in b_tile.
#define MM_NORM_DQ(v) (((v) - mm.norm_q.x_zero) * mm.norm_q.x_scale)
#define MM_ROW_STATS_Q(TILE)                                                                    \
  if (mm.norm) {                                                                                \
    __local float* lanes_ = &a_tile[0][0];                                                      \
    __local float* parts_ = &b_tile[0][0];                                                      \
    for (int round_ = 0; round_ < 4; ++round_) {                                                \
      for (int pass_ = 0; pass_ < 2; ++pass_) {                                                 \
        for (int e_ = tid; e_ < 16 * TILE; e_ += 256) {                                         \
          const int r_ = round_ * (TILE / 4) + e_ / 64, i_ = m0 + r_;                           \
          const int at_ = a_base + i_ * a_row;                                                  \
          float s_ = 0.0f;                                                                      \
          if (pass_ == 0) {                                                                     \
            for (int p_ = e_ % 64; i_ < m && p_ < k; p_ += 64) {                                \
              s_ += MM_NORM_DQ(LOAD(a, at_ + p_ * a_col));                                      \
            }                                                                                   \
          } else {                                                                              \
            for (int p_ = e_ % 64; i_ < m && p_ < k; p_ += 64) {                                \
              const float d_ = MM_NORM_DQ(LOAD(a, at_ + p_ * a_col)) - row_mean[r_];            \
              s_ += d_ * d_;                                                                    \
            }                                                                                   \
          }                                                                                     \
          lanes_[e_] = s_;                                                                      \
        }                                                                                       \
        barrier(CLK_LOCAL_MEM_FENCE);                                                           \
        if (tid < TILE) parts_[tid] = mm_tree_part(lanes_ + (tid / 4) * 64, tid % 4);           \
        barrier(CLK_LOCAL_MEM_FENCE);                                                           \
        if (tid < TILE / 4) {                                                                   \
          const __local float* d_ = parts_ + 4 * tid;                                           \
          const float total_ = (d_[0] + d_[2]) + (d_[1] + d_[3]);                               \
          const int r_ = round_ * (TILE / 4) + tid;                                             \
          if (pass_ == 0) row_mean[r_] = total_ / k;                                            \
          else row_rstd[r_] = rsqrt(total_ / k + mm.norm_epsilon);                              \
        }                                                                                       \
        barrier(CLK_LOCAL_MEM_FENCE);                                                           \
      }                                                                                         \
    }                                                                                           \
  }
// A's element (row am of the tile, column pa) as read: normalized with mm.norm in a kernel with
// NORM; in matmul_qdq (QUANT) its integer dequantized first and the result quantized (mm.norm_q).
#define MM_NORMED(x, am, pa)                                                                    \
  (((x) - row_mean[am]) * row_rstd[am] * LOAD(norm_scale, pa) +                                 \
   ((mm.norm & 2) ? LOAD(norm_bias, pa) : 0.0f))
#define MM_NORM_A(v, am, pa, QUANT, NORM)                                                       \
  (!(NORM) || !mm.norm ? (v)                                                                    \
   : !QUANT            ? MM_NORMED(v, am, pa)                                                    \
                        : QDQ_OUT(mm.norm_q, MM_NORMED(MM_NORM_DQ(v), am, pa)))
// An 8-bit operand's integer v as the product reads it: with bit `at` of mm.chained, the chain of
// ops that the graph runs on it before (quantized q and k scaled; chains_[at], 1 A's, 2 B's),
// looked up in the table of its 256 results the group makes first (MM_CHAIN_TABLES; the chain's
// `unused` holds x's lowest integer, 0 or -128).
#define MM_CHAINED(v, QUANT, at)                                                                \
  (QUANT && (mm.chained & (1 << (at)))                                                          \
       ? tables_[((at) - 1) * 256 + clamp((int)((v) - lowest_[(at) - 1]), 0, 255)]             \
       : (v))
#define MM_CHAIN_TABLES(QUANT)                                                                  \
  __local float tables_[QUANT ? 512 : 1];                                                       \
  float lowest_[2] = {0.0f, 0.0f};                                                              \
  if (QUANT && (mm.chained & 6)) {                                                              \
    for (int at_ = 1; at_ <= 2; ++at_) {                                                        \
      if (mm.chained & (1 << at_)) {                                                            \
        lowest_[at_ - 1] = chains_[at_].unused;                                                 \
        tables_[(at_ - 1) * 256 + tid] =                                                        \
            qdq_chain_apply(chains_ + at_, lowest_[at_ - 1] + (float)tid);                      \
      }                                                                                         \
    }                                                                                           \
    barrier(CLK_LOCAL_MEM_FENCE);                                                               \
  }
// Loads this item's share of the A and B tiles (TILE wide) of the K step at K0 into a_next and
// b_next: element l = tid + 256 r of a tile, walking the operand's contiguous axis across
// neighbouring items. NORM and TABLES: whether the kernel has MM_NORM_A's and MM_CHAINED's code.
#define MM_FETCH(K0, TILE, QUANT, NORM, TABLES)                                                 \
  for (int r = 0; r < TILE / 16; ++r) {                                                      \
    const int l = tid + 256 * r;                                                                \
    const int ak = a_col == 1 ? l % 16 : l / TILE, am = a_col == 1 ? l / 16 : l % TILE;   \
    const int bk = b_col == 1 ? l / TILE : l % 16, bj = b_col == 1 ? l % TILE : l / 16;   \
    const int i = m0 + am, pa = (K0) + ak, j = n0 + bj, pb = (K0) + bk;                         \
    a_next[r] = (i < m && pa < k_end)                                                           \
                    ? MM_CHAINED(MM_NORM_A(LOAD(a, a_base + i * a_row + pa * a_col), am, pa,    \
                                           QUANT, NORM),                                        \
                                 (QUANT) && (TABLES), 1) -                                      \
                          (QUANT ? mm.a_zero : 0.0f)                                            \
                    : 0.0f;                                                                     \
    b_next[r] = (j < n && pb < k_end)                                                           \
                    ? MM_CHAINED(LOAD(b, b_base + pb * b_row + j * b_col), (QUANT) && (TABLES), \
                                 2) -                                                           \
                          (QUANT ? mm.b_zero : 0.0f)                                            \
                    : 0.0f;                                                                     \
  }
// GROUP_PARAMS and GROUP_PICK: nothing, or (matmul_group) the B, bias and y of products 1-3 and
// their choice by the batch index, which is then the product's; or (matmul_qdq) the chain, CHAIN
// (else 0): a float product's launch carries no argument it never reads. NORM and TABLES (0 or
// 1): whether the kernel has the code of a LayerNormalization on A (mm.norm) and of operands read
// through chains (mm.chained bits 1 and 2), which a quantized product without them does not run.
#define MM_BODY(NAME, MM_TILE, MM_WPT, MM_VEC, GROUP_PARAMS, GROUP_PICK, QUANT, CHAIN, NORM,     \
                TABLES)                                                                         \
__kernel __attribute__((reqd_work_group_size(16, 16, 1)))                                       \
void NAME(__global const storage_t* a, __global const storage_t* b,                            \
          __global const storage_t* b_scale, __global const storage_t* bias,                    \
          __global const storage_t* res, __global storage_t* y,                                 \
          __global float* partial, __global const storage_t* norm_scale,                       \
          __global const storage_t* norm_bias, MatMulShape mm GROUP_PARAMS) {                   \
  MM_UNPACK                                                                                     \
  __global const QdqChain* const chains_ = CHAIN;                                               \
  __local float a_tile[16][MM_TILE] __attribute__((aligned(16)));                              \
  __local float b_tile[16][MM_TILE] __attribute__((aligned(16)));                              \
  __local float row_mean[MM_TILE], row_rstd[MM_TILE];                                           \
  const int tx = get_local_id(0), ty = get_local_id(1), tid = ty * 16 + tx;                     \
  const int n0 = get_group_id(0) * MM_TILE, m0 = get_group_id(1) * MM_TILE;                     \
  const int batch = get_group_id(2) / splits, split = get_group_id(2) % splits;                 \
  GROUP_PICK                                                                                    \
  const int a_base = a_offset + batch * a_batch, b_base = b_offset + batch * b_batch;           \
  const int y_base = batch * y_batch;                                                           \
  const int k_begin = split * k_chunk, k_end = min(k, k_begin + k_chunk);                       \
  if (NORM && QUANT) {                                                                          \
    MM_ROW_STATS_Q(MM_TILE)                                                                     \
  } else if (NORM) {                                                                            \
    MM_ROW_STATS(MM_TILE)                                                                       \
  }                                                                                             \
  MM_CHAIN_TABLES((QUANT) && (TABLES))                                                          \
  float acc[MM_WPT][MM_WPT];                                                                    \
  for (int i = 0; i < MM_WPT; ++i)                                                              \
    for (int j = 0; j < MM_WPT; ++j) acc[i][j] = 0.0f;                                          \
  /* Each item stages MM_TILE / 16 elements of each tile per step; the next step's are loaded */ \
  /* into registers before this step's products, so their latency hides behind them. */         \
  float a_next[MM_TILE / 16], b_next[MM_TILE / 16];                                             \
  MM_FETCH(k_begin, MM_TILE, QUANT, NORM, TABLES)                                               \
  for (int k0 = k_begin; k0 < k_end; k0 += 16) {                                                \
    for (int r = 0; r < MM_TILE / 16; ++r) {                                                    \
      const int l = tid + 256 * r;                                                              \
      a_tile[a_col == 1 ? l % 16 : l / MM_TILE][a_col == 1 ? l / 16 : l % MM_TILE] = a_next[r]; \
      b_tile[b_col == 1 ? l / MM_TILE : l % 16][b_col == 1 ? l % MM_TILE : l / 16] = b_next[r]; \
    }                                                                                           \
    barrier(CLK_LOCAL_MEM_FENCE);                                                               \
    if (k0 + 16 < k_end) MM_FETCH(k0 + 16, MM_TILE, QUANT, NORM, TABLES)                        \
    TILE_FMA(MM_VEC, MM_WPT)                                                                    \
    barrier(CLK_LOCAL_MEM_FENCE);                                                               \
  }                                                                                             \
  for (int i = 0; i < MM_WPT; ++i) {                                                            \
    const int row = m0 + ty * MM_WPT + i;                                                       \
    if (row >= m) continue;                                                                     \
    for (int j = 0; j < MM_WPT; ++j) {                                                          \
      const int col = n0 + tx * MM_WPT + j;                                                     \
      if (col >= n) continue;                                                                   \
      if (splits == 1) {                                                                        \
        const int at = y_base + row * y_row + col;                                              \
        const float r = has_res ? LOAD(res, batch * res_batch + row * y_row + col) : 0.0f;      \
        const float bias_v = has_bias ? LOAD(bias, col) : 0.0f;                                 \
        STORE(QUANT ? mm_finish(acc[i][j], col, b_scale, bias_v, r, mm, CHAIN)                  \
                    : apply_unary(op, alpha * acc[i][j] + bias_v + r, act_alpha, act_beta),     \
              y, at);                                                                           \
      } else {                                                                                  \
        partial[((split * batches + batch) * m + row) * n + col] = acc[i][j];                   \
      }                                                                                         \
    }                                                                                           \
  }                                                                                             \
}
// The three tile widths of NAME; WITH is MM_PLAIN, MM_CHAIN or MM_GROUP, whose _PARAMS and
// _PICK are its GROUP_PARAMS and GROUP_PICK (pasted, so that their commas stay in one argument).
#define MM_TILES(NAME, WITH, QUANT, CHAIN, NORM, TABLES)                                        \
  MM_BODY(NAME##_64, 64, 4, float4, WITH##_PARAMS, WITH##_PICK, QUANT, CHAIN, NORM, TABLES)      \
  MM_BODY(NAME##_32, 32, 2, float2, WITH##_PARAMS, WITH##_PICK, QUANT, CHAIN, NORM, TABLES)      \
  MM_BODY(NAME##_16, 16, 1, float, WITH##_PARAMS, WITH##_PICK, QUANT, CHAIN, NORM, TABLES)
#define MM_PLAIN_PARAMS
#define MM_PLAIN_PICK
MM_TILES(matmul_tiled, MM_PLAIN, 0, 0, 0, 0)
MM_TILES(matmul_tiled_n, MM_PLAIN, 0, 0, 1, 0)  // with a LayerNormalization on A (mm.norm)
// The same for 8-bit operands or a quantized result (MatMulShape's zero points, b_scales and
// y_scale): operands less their zero points, mm_finish's epilogue; with a LayerNormalization on A
// (matmul_qdq_n_*), operands read through chains (_t_) or both (_nt_).
#define MM_CHAIN_PARAMS , __global const QdqChain* chain
#define MM_CHAIN_PICK
MM_TILES(matmul_qdq, MM_CHAIN, 1, chain, 0, 0)
MM_TILES(matmul_qdq_n, MM_CHAIN, 1, chain, 1, 0)
MM_TILES(matmul_qdq_t, MM_CHAIN, 1, chain, 0, 1)
MM_TILES(matmul_qdq_nt, MM_CHAIN, 1, chain, 1, 1)

// Up to four products of one A (a_batch 0) in one launch, batch p the product p: b, bias and y
// are product 0's, b1..b3 (bias1.., y1..) the others' (repeats where fewer). One K split only,
// A as read (no normalization).
#define MM_GROUP_PARAMS                                                                          \
  , __global const storage_t* b1, __global const storage_t* b2, __global const storage_t* b3,   \
      __global const storage_t* bias1, __global const storage_t* bias2,                         \
      __global const storage_t* bias3, __global storage_t* y1, __global storage_t* y2,          \
      __global storage_t* y3
#define MM_GROUP_PICK                                                                           \
  if (batch == 1) {                                                                             \
    b = b1; bias = bias1; y = y1;                                                               \
  } else if (batch == 2) {                                                                      \
    b = b2; bias = bias2; y = y2;                                                               \
  } else if (batch == 3) {                                                                      \
    b = b3; bias = bias3; y = y3;                                                               \
  }
MM_TILES(matmul_group, MM_GROUP, 0, 0, 0, 0)

// Sums matmul_tiled's split-K partials [splits][batches][m, n] (count elements each) into y with
// matmul_tiled's epilogue and output strides.
__kernel void matmul_split_reduce(__global const float* partial,
                                  __global const storage_t* b_scale, __global const storage_t* bias,
                                  __global const storage_t* res, __global storage_t* y,
                                  __global const QdqChain* chain, MatMulShape mm, int count) {
  MM_UNPACK
  const int i = get_global_id(0);
  if (i >= count) return;
  float sum = 0.0f;
  for (int s = 0; s < splits; ++s) sum += partial[s * count + i];
  const int in_batch = (i / n % m) * y_row + i % n, at = (i / (m * n)) * y_batch + in_batch;
  const float r = has_res ? LOAD(res, (i / (m * n)) * res_batch + in_batch) : 0.0f;
  STORE(mm_finish(sum, i % n, b_scale, has_bias ? LOAD(bias, i % n) : 0.0f, r, mm, chain), y,
        at);
}

// Attention in one launch: y[batch][i, c] = out_alpha * sum_j w[i, j] V[batch][j, c], w the
// softmax over j of alpha * (Q[batch][i, :] . K[batch][:, j]) (+ mask[i, j]); with replace_nan a
// NaN weight (a fully masked row) is nan_value (the exported guard). Operands are read through
// offsets and strides as matmul_tiled's (K as the first product's B, [D, N]); the mask at
// batch * mask_batch + i * n + j; y at batch * y_batch + i * y_row + c. A group of ATT_GROUP
// items takes ATT_ROWS query rows of one batch (work group (row block, batch)): their Q rows and
// their N weights stay in local memory (N <= ATT_MAX_KEYS, D <= ATT_MAX_DEPTH), so the scores
// and weights never reach global memory. Scores: an item a key. Softmax: ATT_LANES items a row,
// tree reductions. Result: ATT_SPLIT sets of ATT_LANES items, each set summing its share of the
// keys for ATT_LANES columns, the shares added in local memory. fp32 throughout; each weight is
// exp(s - max) / sum as softmax_rows computes it.
typedef struct {
  int m, n, d, dv;
  int q_row, q_col, q_batch, q_offset, k_row, k_col, k_batch, k_offset;
  int v_row, v_col, v_batch, v_offset, y_row, y_batch, mask_batch, has_mask, replace_nan;
  float alpha, out_alpha, nan_value;
} AttentionShape;
#define ATT_ROWS 4
#define ATT_LANES 64
#define ATT_SPLIT 4
#define ATT_GROUP (ATT_LANES * ATT_SPLIT)
#define ATT_MAX_KEYS 128
#define ATT_MAX_DEPTH 128
// The tree reduction (max, or sum with SUM) of `value` over the ATT_LANES items of row r (lane t).
#define ATT_ROW_REDUCE(value, SUM)                                                             \
  scratch[r][t] = value;                                                                        \
  barrier(CLK_LOCAL_MEM_FENCE);                                                                 \
  for (int s_ = ATT_LANES / 2; s_ > 0; s_ >>= 1) {                                              \
    if (t < s_) {                                                                               \
      scratch[r][t] = SUM ? scratch[r][t] + scratch[r][t + s_]                                  \
                          : fmax(scratch[r][t], scratch[r][t + s_]);                            \
    }                                                                                           \
    barrier(CLK_LOCAL_MEM_FENCE);                                                               \
  }
__kernel __attribute__((reqd_work_group_size(ATT_GROUP, 1, 1)))
void attention_rows(__global const storage_t* q, __global const storage_t* k,
                    __global const storage_t* v, __global const storage_t* mask,
                    __global storage_t* y, AttentionShape at) {
  __local float q_rows[ATT_ROWS][ATT_MAX_DEPTH];
  __local float w[ATT_ROWS][ATT_MAX_KEYS];
  __local float scratch[ATT_ROWS][ATT_LANES];
  __local float shares[ATT_SPLIT][ATT_ROWS][ATT_LANES];
  const int lid = get_local_id(0), row0 = get_group_id(0) * ATT_ROWS, batch = get_group_id(1);
  const int n = at.n, d = at.d;
  for (int l = lid; l < ATT_ROWS * d; l += ATT_GROUP) {
    const int r = l / d, c = l % d, i = row0 + r;
    q_rows[r][c] = i < at.m
        ? LOAD(q, at.q_offset + batch * at.q_batch + i * at.q_row + c * at.q_col) : 0.0f;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int j = lid; j < n; j += ATT_GROUP) {
    float acc[ATT_ROWS];
    for (int r = 0; r < ATT_ROWS; ++r) acc[r] = 0.0f;
    const int kb = at.k_offset + batch * at.k_batch + j * at.k_col;
    for (int c = 0; c < d; ++c) {
      const float kv = LOAD(k, kb + c * at.k_row);
      for (int r = 0; r < ATT_ROWS; ++r) acc[r] = fma(q_rows[r][c], kv, acc[r]);
    }
    for (int r = 0; r < ATT_ROWS; ++r) {
      const int i = min(row0 + r, at.m - 1);
      w[r][j] = at.alpha * acc[r] +
                (at.has_mask ? LOAD(mask, batch * at.mask_batch + i * n + j) : 0.0f);
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  {
    const int r = lid / ATT_LANES, t = lid % ATT_LANES;
    float partial = -INFINITY;
    for (int j = t; j < n; j += ATT_LANES) partial = fmax(partial, w[r][j]);
    ATT_ROW_REDUCE(partial, 0)
    const float peak = scratch[r][0];
    barrier(CLK_LOCAL_MEM_FENCE);
    partial = 0.0f;
    for (int j = t; j < n; j += ATT_LANES) partial += exp(w[r][j] - peak);
    ATT_ROW_REDUCE(partial, 1)
    const float inv = 1.0f / scratch[r][0];
    for (int j = t; j < n; j += ATT_LANES) {
      const float weight = exp(w[r][j] - peak) * inv;
      w[r][j] = at.replace_nan && isnan(weight) ? at.nan_value : weight;
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  const int set = lid / ATT_LANES, lane = lid % ATT_LANES;
  const int per_set = (n + ATT_SPLIT - 1) / ATT_SPLIT;
  const int j0 = set * per_set, j1 = min(n, j0 + per_set);
  for (int c0 = 0; c0 < at.dv; c0 += ATT_LANES) {
    const int c = c0 + lane;
    float acc[ATT_ROWS];
    for (int r = 0; r < ATT_ROWS; ++r) acc[r] = 0.0f;
    if (c < at.dv) {
      const int vb = at.v_offset + batch * at.v_batch + c * at.v_col;
      for (int j = j0; j < j1; ++j) {
        const float vv = LOAD(v, vb + j * at.v_row);
        for (int r = 0; r < ATT_ROWS; ++r) acc[r] = fma(w[r][j], vv, acc[r]);
      }
    }
    for (int r = 0; r < ATT_ROWS; ++r) shares[set][r][lane] = acc[r];
    barrier(CLK_LOCAL_MEM_FENCE);
    // Set s adds up the shares of row s (ATT_SPLIT == ATT_ROWS) and stores it.
    const int r = set;
    float sum = 0.0f;
    for (int u = 0; u < ATT_SPLIT; ++u) sum += shares[u][r][lane];
    if (c < at.dv && row0 + r < at.m) {
      STORE(at.out_alpha * sum, y, batch * at.y_batch + (row0 + r) * at.y_row + c);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}
)CL";

}  // namespace hsched::opencl
