// ONNX Runtime's operators of its com.microsoft domain: the quantized ones its quantizer writes in
// the QOperator format (QLinearAdd, QLinearMul, QLinearConcat, QLinearSigmoid, QGemm...) and the
// fused ones its graph optimizer leaves in a model it saves (FusedConv, FusedMatMul, Gelu,
// SkipLayerNormalization...). Each is rewritten into the standard ONNX nodes that define it: for
// a quantized one DequantizeLinear of each 8-bit input, the float operator, QuantizeLinear of the
// result; for a fused one the ops it fuses. The model then goes through the same validation,
// fusions and kernels as one written with those ops.
#pragma once

#include <cstdint>

#include "hsched/status.h"

namespace onnx {
class GraphProto;
class ModelProto;
}  // namespace onnx

namespace hsched {

// Rewrites, in the main graph and in If branches:
// - QLinearAdd, QLinearMul, QLinearSigmoid, QLinearLeakyRelu, QLinearSoftmax, QLinearConcat,
//   QLinearAveragePool, QLinearGlobalAveragePool, QLinearReduceMean: DequantizeLinear of the
//   inputs, the float op with the node's attributes, QuantizeLinear with the output's scale and
//   zero point;
// - QGemm: Gemm of the dequantized A and B, its int32 C read at scale alpha * a_scale * b_scale,
//   quantized when y_scale is given, float otherwise;
// - MatMulIntegerToFloat and DynamicQuantizeMatMul: MatMul of the dequantized operands (A
//   quantized by DynamicQuantizeLinear first for the latter), plus the bias;
// - QuantizeLinear, DequantizeLinear and QLinearConv of that domain: the ONNX operators of the
//   same definition (QLinearConv's channels_last must be 0);
// - FusedConv (X, W, [B], [Z]) and FusedGemm: Conv (plus Z) or Gemm, then the activation (Relu,
//   Tanh, Sigmoid, LeakyRelu, HardSigmoid, Clip from opset 11; others refused);
// - FusedMatMul: MatMul times alpha; with transA or transB it stays for
//   lower_transposed_fused_matmuls (transBatchA and transBatchB are refused);
// - Gelu, BiasGelu (A + B), FastGelu (X plus an optional bias, tanh form), QuickGelu
//   (x * Sigmoid(alpha x)): their formulas, as graph/node_expansion.h Expansion::gelu writes GELU;
// - SkipLayerNormalization: LayerNormalization (opset 17 on) of input + skip (+ bias) over the
//   last axis, that sum as its fourth output where asked (the mean and inv_std_var outputs are
//   refused).
// `opset` is the model's default-domain opset (at least 10). Per-column scales
// of QGemm's B and MatMulIntegerToFloat's operands need opset 13 (per-axis DequantizeLinear) or a
// scalar initializer. Other operators of the domain are left as they are (the planner refuses
// them, naming the domain). Runs on an unvalidated model, reading names, attributes and
// initializer types only; errors are one line naming the node.
Status lower_microsoft_ops(onnx::ModelProto& model, int64_t opset);

// FusedMatMul with transA or transB (its Transpose fused in, as ONNX Runtime's optimizer writes
// attention's Q times K transposed) whose operands' ranks `graph` now declares: Transpose of the
// last two axes of each transposed operand, MatMul, times alpha. Run by shape folding after each
// round of inference; returns how many nodes it rewrote (one left untyped stays, and the planner
// refuses it naming its domain).
Result<int> lower_transposed_fused_matmuls(onnx::GraphProto& graph, int64_t opset);

}  // namespace hsched
