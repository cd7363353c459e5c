// After read_ir: folds the affine tails and quantizations write_ir splits off back into the ONNX
// ops they came from, so that the CPU backend (which fuses Conv + bias + activation into one
// oneDNN primitive, and a QDQ group into one integer kernel) runs a read-back graph about as fast
// as the original, a QDQ graph with the original's integer arithmetic:
// - an Identity or Reshape of a Const: that constant; Reshapes back to the dims the first of
//   them read: that value (a grouped Conv's weights);
// - read_fake_quantize's QuantizeLinear onto u8 levels, DequantizeLinear onto the integer grid
//   and Convert to u8 / i8: one QuantizeLinear;
// - Convert of 8-bit data to f32, Subtract of a zero point Const, Multiply by a scale Const:
//   DequantizeLinear (per tensor or along one axis);
// - Conv / ConvTranspose, then Add of a [1, C, 1...] Const: Conv with bias [C];
// - MatMul / Gemm (2D, no C), then Add of a [N], [1, N] or [M, N] Const: Gemm with C;
// - such a bias of a Conv or Gemm of two dequantized values that is int32 values of scale
//   activation scale x weight scale: a DequantizeLinear of those int32 values (as QDQ writes it);
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
