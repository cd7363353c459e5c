// After read_ir: folds the affine tails write_ir splits off back into the ONNX ops they came
// from, so that the CPU backend (which fuses Conv + bias + activation into one oneDNN primitive)
// runs a read-back graph about as fast as the original:
// - Conv / ConvTranspose, then Add of a [1, C, 1...] Const: Conv with bias [C];
// - MatMul / Gemm (2D, no C), then Add of a [N], [1, N] or [M, N] Const: Gemm with C;
// - InstanceNormalization (unit scale), then Multiply and Add by [1, C, 1...] Consts: with
//   scale and bias;
// - LayerNormalization (unit scale), then Multiply and Add by Consts that vary over the
//   normalized axes only: with Scale and B.
// An intermediate value is folded only when the next node is its sole reader and it is no graph
// output. Everything else is copied as it is.
#pragma once

#include "graph/graph.h"

namespace hsched::ir::detail {

Graph fold_affine_tails(const Graph& graph);

}  // namespace hsched::ir::detail
