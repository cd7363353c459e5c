// Normalizations exported as chains of ops, found by the program and run as one kernel each.
// The fused nodes use internal op types that models never name (the importer refuses unknown
// ops). Internal to the CPU program.
#pragma once

#include <optional>
#include <vector>

#include "backends/cpu/kernels/kernel.h"

namespace hsched::cpu {

// GroupNorm (group_norm.cpp): inputs x [N, C, spatial...], gamma [C], beta [C]; attributes
// num_groups, epsilon, silu (0/1); channels-last or not, the same on both sides. The QDQ form
// (x u8 or i8): inputs x, InstanceNormalization's scale and bias [G], x's scale and zero point,
// the normalization's quantization (scale, zero point), and a [C, 256] table of y's 8-bit type
// from that quantization's values to y's (the Mul and Add stages after it, each requantized).
inline constexpr const char* kGroupNormOp = "hsched.GroupNorm";
// LayerNormalization over the channel axis of [N, C, H, W] (normalization_kernels.cpp): inputs
// x, scale [C], optional bias [C]; attribute epsilon; either layout, the same on both sides. An
// 8-bit x (u8, i8) has its scale and zero point as inputs 3 and 4, the 8-bit y its own as 5 and 6.
inline constexpr const char* kChannelLayerNormOp = "hsched.ChannelLayerNorm";

// LayerNormalization over the last axis of 8-bit x between its DequantizeLinear and
// QuantizeLinear (a transformer's in a QDQ model; normalization_kernels.cpp): inputs x (u8, i8),
// scale [D], optional bias [D], x's scale and zero point, y's scale and zero point; attribute
// epsilon; y 8-bit.
inline constexpr const char* kQdqLayerNormOp = "hsched.QdqLayerNorm";
// Softmax over the last axis of 8-bit x between its DequantizeLinear and QuantizeLinear (an
// attention's in a QDQ model), with ONNX Runtime's QLinearSoftmax arithmetic (qlinear_arith.h):
// inputs x (u8, i8), x's scale and zero point, y's; y of x's type.
inline constexpr const char* kQdqSoftmaxOp = "hsched.QdqSoftmax";

void register_group_norm_kernel(KernelRegistry& registry);
// kChannelLayerNormOp, kQdqLayerNormOp and kQdqSoftmaxOp (fused_norm_kernels.cpp).
void register_fused_norm_kernels(KernelRegistry& registry);

// Both passes rewrite the first node of each chain among `nodes` (program order) into the fused
// node and mark the chain's other nodes in `absorbed`; an intermediate read by anything else, or
// a graph output, stops a match. They return the number of nodes absorbed.
//
// Reshape([N, G, ...]) -> InstanceNormalization(constant scale, bias) -> Reshape(back) ->
// [Mul(per-channel constant)] -> [Add(per-channel constant)] -> [x * Sigmoid(x)] (PyTorch's
// GroupNorm): folded gamma and beta are added to `graph` as constants. In a QDQ model, after
// fuse_qdq has put the reshapes on the 8-bit data: Reshape -> DequantizeLinear ->
// InstanceNormalization -> QuantizeLinear -> Reshape, then [DequantizeLinear -> Mul ->
// QuantizeLinear] and [DequantizeLinear -> Add -> QuantizeLinear], each (de)quantization of one
// constant scale and zero point: one kernel on the 8-bit data, its table added as a constant.
int fuse_group_norms(Graph& graph, const std::vector<Node*>& nodes, std::vector<bool>& absorbed);
// Transpose(0, 2, 3, 1) -> LayerNormalization(last axis) -> Transpose(0, 3, 1, 2) (ConvNeXt's
// channels-first LayerNorm): no transposes at all once the activations are channels-last. In a
// QDQ model, after fuse_qdq has put the transposes on the 8-bit data: Transpose ->
// DequantizeLinear -> LayerNormalization -> QuantizeLinear -> Transpose, the (de)quantizations of
// one constant scale and zero point each, as one kernel on the 8-bit data.
int fuse_channel_layer_norms(Graph& graph, const std::vector<Node*>& nodes,
                             std::vector<bool>& absorbed);
// DequantizeLinear -> LayerNormalization(last axis, scale and bias of its size) or Softmax (last
// axis) -> QuantizeLinear, each (de)quantization of one constant scale and zero
// point (a Softmax's of one 8-bit type): one kQdqLayerNormOp or kQdqSoftmaxOp (run after
// fuse_channel_layer_norms, which takes ConvNeXt's).
int fuse_quantized_row_ops(Graph& graph, const std::vector<Node*>& nodes,
                           std::vector<bool>& absorbed);

// The values of a constant f32 tensor that broadcasts per channel against [N, C, spatial...] of
// rank `rank` (a scalar, or C values on axis 1 with every other axis 1), expanded to C values.
std::optional<std::vector<float>> per_channel_constant(const Value& v, int64_t channels,
                                                       size_t rank);

}  // namespace hsched::cpu
