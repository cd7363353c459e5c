// The QDQ fusion pass of the CPU program: a Conv, MatMul or Gemm between DequantizeLinear nodes
// (an 8-bit activation, constant int8 weights, an int32 bias) and a QuantizeLinear becomes one
// integer op, QLinearConv or QLinearMatMul, as ONNX Runtime and OpenVINO run the QDQ format:
// products summed exactly in int32, the bias added as int32, one requantization to the output's
// 8 bits. An Add or Mul between them runs as one pass over the 8-bit data (kQdqBinaryOp), a chain
// of elementwise ops on one 8-bit tensor as one table lookup (kQdqTableOp). An op that only
// moves elements (Reshape, Transpose, Split...) between a DequantizeLinear and QuantizeLinear of
// the same parameters runs on the 8-bit data, the pair dropped. The float tensors in between are
// never written. Internal to the CPU program.
#pragma once

#include <vector>

#include "graph/graph.h"

namespace hsched::cpu {

// The op an Add or Mul between DequantizeLinear nodes and a QuantizeLinear becomes (attribute
// `op`: "Add" or "Mul"; `swapped`: 1 when the graph's operands were (b, a)). Inputs: a (8-bit,
// the output's shape), a_scale, a_zero_point, b (8-bit with b_scale and b_zero_point, or f32
// with those two omitted; b's shape a's or a suffix of it, or one value), y_scale, y_zero_point.
// a, b and y of one 8-bit type: ONNX Runtime's QLinearAdd / QLinearMul arithmetic
// (qlinear_arith.h), as its optimizations run the group. Otherwise (b f32, or the types mixed,
// which ONNX Runtime leaves apart) what the three steps do, in one pass: y = Q(DQ(a) op DQ(b))
// with the same float operations, so the same bytes.
inline constexpr const char* kQdqBinaryOp = "hsched.QdqBinary";

// The op a chain of elementwise fp32 ops between a DequantizeLinear of x and a QuantizeLinear
// becomes when every other operand is x again or a constant of one value, Q/DQ pairs perhaps
// between the ops (a GELU, a SiLU, a scaling, an activation): 256 possible inputs, so one lookup.
// Input: x (8-bit). Attribute `table`: the 256 outputs (the QuantizeLinear's dtype) by x's byte,
// computed by the chain's own kernels.
inline constexpr const char* kQdqTableOp = "hsched.QdqTable";

// Whether `b` broadcasts onto `a` as kQdqBinaryOp takes it: one value, or a's last dims
// (leading 1s allowed).
bool qdq_broadcasts(const std::vector<int64_t>& a, const std::vector<int64_t>& b);

// A constant operand of a QDQ Add or Mul (a bias, a position embedding, a GroupNorm's gamma): the
// DequantizeLinear (through Identity nodes) of constant 8-bit data with one constant scale and
// zero point making `v`, or nullptr.
const Node* constant_byte_dequantization(const Graph& graph, ValueId v);

// `nodes` are the program's steps in order; each fused root is rewritten in place (op type,
// inputs, outputs; a transposed copy of Gemm weights added to `graph`) and the DequantizeLinear
// and QuantizeLinear steps it absorbs are marked in `absorbed`. A fused Gemm becomes a
// QLinearMatMul with its int32 bias as a ninth input, which only this pass writes. Returns the
// number of nodes rewritten.
int fuse_qdq(Graph& graph, const std::vector<Node*>& nodes, std::vector<bool>& absorbed);

}  // namespace hsched::cpu
