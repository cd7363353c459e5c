// The op layer's MatMul plan, shared by ops_matmul.cpp and ops_attention.cpp: where one
// matmul_tiled launch finds its operands, result and residual. Internal to the OpenCL backend.
#pragma once

#include <optional>

#include "backends/opencl/kernels/ops.h"

namespace hsched::opencl::detail {

// One matmul_tiled launch (and a matmul_split_reduce where K is split): `batch` products
// y[m, n] = act(alpha A B (+ bias[n]) (+ residual[m, n])); A[i][p] of batch b at element
// a_offset + b * a_batch + i * a_row + p * a_col (B alike). Every index fits an int (the callers
// check).
struct TiledCall {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  int64_t a_row = 0, a_col = 1, a_batch = 0, a_offset = 0;
  int64_t b_row = 0, b_col = 1, b_batch = 0, b_offset = 0;
  // Where y[b][i, j] (and the residual's) is: b * y_batch + i * y_row + j; 0s for dense.
  int64_t y_row = 0, y_batch = 0;
  MatMulFusion fusion{};
};

// The launch enqueue_matmul makes for these operands (the buffers' shapes) and `fusion`: nullopt
// where it makes none (CLBlast's products, empty ones, shapes it refuses).
std::optional<TiledCall> tiled_call(const Shape& a_shape, const Shape& b_shape,
                                    const MatMulFusion& fusion);

}  // namespace hsched::opencl::detail
