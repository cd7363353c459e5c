// The program's QDQ fusions (node_ops.h): Convs and MatMuls reading 8-bit operands through
// DequantizeLinear nodes and storing the integers of the QuantizeLinear of their result; binary
// ops and moves between DequantizeLinear and QuantizeLinear nodes (the chains of elementwise ops
// on one 8-bit tensor: node_fusion_qdq_chain.cpp). Graph analysis only; enqueue_node runs what
// they produce.
#include "backends/opencl/kernels/node_fusion_quant.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <set>
#include <string>

#include "backends/opencl/kernels/node_ops.h"
#include "backends/opencl/kernels/node_ops_util.h"
#include "backends/opencl/kernels/ops_quant.h"
#include "graph/qdq_scalar.h"

namespace hsched::opencl {

namespace qdq_detail {

const Node* made_by(const Graph& graph, ValueId v, const char* op, NodeId* id) {
  if (v == kNoValue) return nullptr;
  const NodeId producer = graph.value(v).producer;
  if (producer == kNoNode) return nullptr;
  const Node& node = graph.node(producer);
  if (node.op_type != op || !node.domain.empty() || node.outputs.size() != 1) return nullptr;
  *id = producer;
  return &node;
}

std::optional<ConstantParams> constant_params(const Graph& graph, const Node& node, DType dtype,
                                              int64_t count, bool zero_only) {
  if (!is_byte(dtype) || node.inputs.size() < 2 || node.inputs[1] == kNoValue ||
      node.attr_int("block_size", 0) != 0) {
    return std::nullopt;
  }
  const Value& scale = graph.value(node.inputs[1]);
  if (!scale.is_constant() || scale.dtype != DType::kF32 || scale.constant->elements() != count ||
      (count != 1 && scale.shape.rank() != 1)) {
    return std::nullopt;
  }
  ConstantParams params;
  for (float s : scale.constant->values<float>()) {
    if (!(s > 0.0f) || !std::isfinite(s)) return std::nullopt;
    params.scales.push_back(s);
  }
  if (node.inputs.size() < 3 || node.inputs[2] == kNoValue) return params;
  const Value& zero = graph.value(node.inputs[2]);
  if (!zero.is_constant() || zero.dtype != dtype || zero.constant->elements() != count) {
    return std::nullopt;
  }
  for (int64_t i = 0; i < count; ++i) {
    const auto at = static_cast<size_t>(i);
    const int64_t z = dtype == DType::kU8 ? int64_t{zero.constant->values<uint8_t>()[at]}
                                          : int64_t{zero.constant->values<int8_t>()[at]};
    if (zero_only && z != 0) return std::nullopt;
    if (i == 0) params.zero = z;
  }
  return params;
}

}  // namespace qdq_detail

using qdq_detail::constant_params;
using qdq_detail::is_byte;
using qdq_detail::kQdqActivations;
using qdq_detail::made_by;

namespace {

// Whether conv's bias is absent or the QDQ format's: int32 constants dequantized with zero point
// 0 and scale x_scale * w_scale (per tensor or per output channel), each below 2^20 so that the
// kernel recovers it from the dequantized value, even where division is within 2.5 ulp
// (QuantizedConvOperands::integer_bias).
bool integer_bias(const Graph& graph, const Node& conv, float x_scale,
                  const std::vector<float>& w_scales) {
  if (conv.inputs.size() < 3 || conv.inputs[2] == kNoValue) return true;
  NodeId id = kNoNode;
  const Node* dq = made_by(graph, conv.inputs[2], "DequantizeLinear", &id);
  if (dq == nullptr || dq->inputs.size() < 2 || dq->inputs[0] == kNoValue) return false;
  const Value& b = graph.value(dq->inputs[0]);
  if (!b.is_constant() || b.dtype != DType::kI32 || b.shape.rank() != 1) return false;
  const int64_t channels = b.shape.dims[0];
  if (dq->inputs[1] == kNoValue) return false;
  const Value& scale = graph.value(dq->inputs[1]);
  if (!scale.is_constant() || scale.dtype != DType::kF32 ||
      (scale.constant->elements() != 1 && scale.constant->elements() != channels)) {
    return false;
  }
  if (dq->inputs.size() > 2 && dq->inputs[2] != kNoValue) {
    const Value& zero = graph.value(dq->inputs[2]);
    if (!zero.is_constant() || zero.dtype != DType::kI32) return false;
    const auto zeros = zero.constant->values<int32_t>();
    if (std::any_of(zeros.begin(), zeros.end(), [](int32_t z) { return z != 0; })) return false;
  }
  const std::vector<float> b_scales(scale.constant->values<float>().begin(),
                                    scale.constant->values<float>().end());
  const auto values = b.constant->values<int32_t>();
  for (int64_t c = 0; c < channels; ++c) {
    const auto at = [c](const std::vector<float>& v) { return v[v.size() == 1 ? 0 : c]; };
    if (at(b_scales) != x_scale * at(w_scales) ||
        std::abs(int64_t{values[static_cast<size_t>(c)]}) >= (int64_t{1} << 20)) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::optional<QuantizedConvOperands> fusable_quantized_conv(const Graph& graph, const Node& conv) {
  if (conv.op_type != "Conv" || !conv.domain.empty() || conv.inputs.size() < 2 ||
      conv.outputs.size() != 1) {
    return std::nullopt;
  }
  QuantizedConvOperands q;
  const Node* x_dq = made_by(graph, conv.inputs[0], "DequantizeLinear", &q.x_dequantize);
  const Node* w_dq = made_by(graph, conv.inputs[1], "DequantizeLinear", &q.w_dequantize);
  if (x_dq == nullptr || w_dq == nullptr || x_dq->inputs.empty() || w_dq->inputs.empty() ||
      x_dq->inputs[0] == kNoValue || w_dq->inputs[0] == kNoValue ||
      graph.value(conv.inputs[0]).dtype != DType::kF32 ||
      graph.value(conv.inputs[1]).dtype != DType::kF32) {
    return std::nullopt;
  }
  const Value& x = graph.value(x_dq->inputs[0]);
  const auto x_params = constant_params(graph, *x_dq, x.dtype, 1, false);
  if (!x_params) return std::nullopt;
  // Weights [OC, C / group, ...]: 8-bit constants, zero points 0, a scale per tensor or per output
  // channel (axis 0).
  const Value& w = graph.value(w_dq->inputs[0]);
  if (!w.is_constant() || !w.shape.is_static() || w.shape.rank() < 3 ||
      w.shape.dims != graph.value(conv.inputs[1]).shape.dims) {
    return std::nullopt;
  }
  const Value& w_scale = graph.value(w_dq->inputs[1]);
  int64_t axis = w_dq->attr_int("axis", 1);
  if (axis < 0) axis += static_cast<int64_t>(w.shape.rank());
  q.weight_scales = w_scale.shape.is_static() ? w_scale.shape.elements() : 0;
  if (q.weight_scales != 1 && (axis != 0 || q.weight_scales != w.shape.dims[0])) {
    return std::nullopt;
  }
  const auto w_params = constant_params(graph, *w_dq, w.dtype, q.weight_scales, true);
  if (!w_params) return std::nullopt;
  q.x = x_dq->inputs[0];
  q.x_scale = x_params->scales[0];
  q.x_zero = x_params->zero;
  q.w = w_dq->inputs[0];
  q.w_scale = w_dq->inputs[1];
  q.integer_bias = integer_bias(graph, conv, q.x_scale, w_params->scales);
  return q;
}

std::optional<QuantizedOutput> fusable_output_quantization(const Graph& graph,
                                                           const Node& quantize) {
  if (quantize.op_type != "QuantizeLinear" || !quantize.domain.empty() || quantize.inputs.empty() ||
      quantize.outputs.size() != 1 || quantize.outputs[0] == kNoValue ||
      graph.value(quantize.inputs[0]).dtype != DType::kF32) {
    return std::nullopt;
  }
  const DType dtype = graph.value(quantize.outputs[0]).dtype;
  const auto params = constant_params(graph, quantize, dtype, 1, false);
  if (!params) return std::nullopt;
  const int64_t lo = dtype == DType::kU8 ? 0 : -128;
  return QuantizedOutput{params->scales[0], params->zero, lo, lo + 255};
}

std::optional<QuantizedMove> fusable_quantized_move(const Graph& graph, NodeId id) {
  static const std::set<std::string> kMoves = {"Reshape",   "Flatten",  "Squeeze",
                                               "Unsqueeze", "Identity", "Transpose",
                                               "Split",     "Gather",   "MaxPool"};
  const Node& node = graph.node(id);
  if (!kMoves.count(node.op_type) || !node.domain.empty() || node.inputs.empty() ||
      node.outputs.empty() || (node.op_type == "MaxPool" && node.outputs.size() != 1)) {
    return std::nullopt;
  }
  QuantizedMove move{node, kNoNode, {}};
  const Node* dq = made_by(graph, node.inputs[0], "DequantizeLinear", &move.dequantize);
  if (dq == nullptr || dq->inputs.empty() || dq->inputs[0] == kNoValue) return std::nullopt;
  const DType dtype = graph.value(dq->inputs[0]).dtype;
  const auto params = constant_params(graph, *dq, dtype, 1, false);
  if (!params) return std::nullopt;
  move.op.inputs[0] = dq->inputs[0];
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    NodeId q_id = kNoNode;
    const Node* q = node.outputs[i] == kNoValue
                        ? nullptr
                        : node_detail::only_reader(graph, node.outputs[i], &q_id);
    const auto quantize = q ? fusable_output_quantization(graph, *q) : std::nullopt;
    if (!quantize || q->inputs[0] != node.outputs[i] || graph.value(q->outputs[0]).dtype != dtype ||
        quantize->scale != params->scales[0] || quantize->zero != params->zero) {
      return std::nullopt;
    }
    move.op.outputs[i] = q->outputs[0];
    move.quantizations.push_back(q_id);
  }
  return move;
}

namespace {

// `node` (output 0 f32) with the DequantizeLinear of each of its first `inputs` inputs made from
// non-constant 8-bit x per tensor by constants (an Add's or Mul's constant x too), and the
// QuantizeLinear alone reading output 0:
// the node's copy reading those x and writing the QuantizeLinear's output, attribute `attr`
// {scale, zero} per input then {y_scale, y_zero, lo, hi} (scale 0 where not quantized), or
// nullopt with neither.
std::optional<QdqFusion> fuse_qdq_around(const Graph& graph, NodeId id, size_t inputs,
                                         const char* attr) {
  const Node& node = graph.node(id);
  if (node.inputs.size() < inputs || node.outputs.empty() || node.outputs[0] == kNoValue ||
      graph.value(node.outputs[0]).dtype != DType::kF32) {
    return std::nullopt;
  }
  QdqFusion fusion{node, {}, {}};
  std::vector<float> params(2 * inputs + 4, 0.0f);
  params.back() = 255.0f;
  for (size_t i = 0; i < inputs; ++i) {
    NodeId dq_id = kNoNode;
    const Node* dq = made_by(graph, node.inputs[i], "DequantizeLinear", &dq_id);
    if (dq == nullptr || dq->inputs.empty() || dq->inputs[0] == kNoValue ||
        graph.value(node.inputs[i]).dtype != DType::kF32) {
      continue;
    }
    const Value& x = graph.value(dq->inputs[0]);
    // A constant's dequantization runs once, at compile; but an Add or Mul reads a constant's
    // bytes (a bias, a position embedding), as ONNX Runtime's QLinearAdd and QLinearMul do.
    const bool bytes_operand =
        attr == kQdqBinaryAttr && (node.op_type == "Add" || node.op_type == "Mul");
    const auto p = x.is_constant() && !bytes_operand
                       ? std::nullopt
                       : constant_params(graph, *dq, x.dtype, 1, false);
    if (!p) continue;
    fusion.op.inputs[i] = dq->inputs[0];
    if (!x.is_constant()) fusion.dequantizations.push_back(dq_id);
    params[2 * i] = p->scales[0];
    params[2 * i + 1] = static_cast<float>(p->zero);
  }
  NodeId q_id = kNoNode;
  const Node* q = node_detail::only_reader(graph, node.outputs[0], &q_id);
  const auto quantize = q ? fusable_output_quantization(graph, *q) : std::nullopt;
  if (quantize && q->inputs[0] == node.outputs[0]) {
    fusion.op.outputs[0] = q->outputs[0];
    fusion.quantization = q_id;
    const size_t y = 2 * inputs;
    params[y] = quantize->scale;
    params[y + 1] = static_cast<float>(quantize->zero);
    params[y + 2] = static_cast<float>(quantize->lo);
    params[y + 3] = static_cast<float>(quantize->hi);
  }
  if (fusion.dequantizations.empty() && !fusion.quantization) return std::nullopt;
  fusion.op.attributes[attr] = std::move(params);
  return fusion;
}

// Whether enqueue_softmax_node runs Softmax or LogSoftmax `node` by rows (softmax_by_rows):
// along the last axis from opset 13, over the input flattened to 2-D at its axis before.
bool runs_by_rows(const Graph& graph, const Node& node) {
  if (node.inputs.size() != 1 || node.inputs[0] == kNoValue) return false;
  const hsched::Shape& shape = graph.value(node.inputs[0]).shape;
  if (!shape.is_static() || shape.rank() == 0) return false;
  const auto rank = static_cast<int64_t>(shape.rank());
  const bool flattened = graph.opset != 0 && graph.opset < 13;
  int64_t axis = node.attr_int("axis", flattened ? 1 : -1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return false;
  int64_t axis_size = 1, inner = 1;
  for (int64_t d = axis; d < rank; ++d) {
    (d == axis || flattened ? axis_size : inner) *= shape.dims[static_cast<size_t>(d)];
  }
  const SoftmaxKind kind =
      node.op_type == "LogSoftmax" ? SoftmaxKind::kLogSoftmax : SoftmaxKind::kSoftmax;
  return softmax_by_rows(axis_size, inner, kind);
}

// A Softmax over the last axis from 8-bit x to y of its type runs, as the CPU does, ONNX
// Runtime's QLinearSoftmax arithmetic (backends/cpu/kernels/qlinear_arith.h), which scales by
// floor(1 / y_scale): the row kernel takes that as its y_scale, its exponentials and sums the
// device's own, so that a value may come out a step from the CPU's; where the kernels sum in
// order (OpKernels::ordered_sums), and on rows too short for a work group each,
// kQLinearSoftmaxAttr, y's own scale, has QLinearSoftmax's table and order run instead
// (enqueue_qlinear_softmax), the CPU's bytes. Whether it took the Softmax as that.
bool qlinear_softmax_scale(const Graph& graph, QdqFusion& fusion) {
  const Node& op = fusion.op;
  const hsched::Shape& shape = graph.value(op.inputs[0]).shape;
  const auto rank = static_cast<int64_t>(shape.rank());
  int64_t axis = op.attr_int("axis", graph.opset != 0 && graph.opset < 13 ? 1 : -1);
  if (axis < 0) axis += rank;
  if (fusion.dequantizations.size() != 1 || !fusion.quantization || axis != rank - 1 ||
      graph.value(op.inputs[0]).dtype != graph.value(op.outputs[0]).dtype) {
    return false;
  }
  auto& params = std::get<std::vector<float>>(fusion.op.attributes.at(kQdqRowAttr));
  fusion.op.attributes[kQLinearSoftmaxAttr] = params[2];
  params[2] = 1.0f / std::floor(1.0f / params[2]);
  return true;
}

}  // namespace

std::optional<QdqFusion> fusable_qdq_elementwise(const Graph& graph, NodeId id) {
  const Node& node = graph.node(id);
  if (!node.domain.empty()) return std::nullopt;
  const std::string& op = node.op_type;
  if ((op == "Add" || op == "Sub" || op == "Mul" || op == "Div") && node.inputs.size() == 2 &&
      node.outputs.size() == 1 && node.inputs[0] != kNoValue && node.inputs[1] != kNoValue) {
    return fuse_qdq_around(graph, id, 2, kQdqBinaryAttr);
  }
  if (op == "LayerNormalization" && !node.inputs.empty() && node.inputs[0] != kNoValue) {
    return fuse_qdq_around(graph, id, 1, kQdqRowAttr);
  }
  if (op == "Softmax" || op == "LogSoftmax") {
    // By rows, or as QLinearSoftmax (one work item a row) whatever the row's length.
    auto fusion = fuse_qdq_around(graph, id, 1, kQdqRowAttr);
    const bool qlinear = fusion && op == "Softmax" && qlinear_softmax_scale(graph, *fusion);
    if (!qlinear && !runs_by_rows(graph, node)) return std::nullopt;
    return fusion;
  }
  if (op == "GlobalAveragePool" && node.inputs.size() == 1 && node.inputs[0] != kNoValue) {
    return fuse_qdq_around(graph, id, 1, kQdqRowAttr);
  }
  if (op == "Concat" && node.outputs.size() == 1 && !node.inputs.empty() &&
      std::find(node.inputs.begin(), node.inputs.end(), kNoValue) == node.inputs.end()) {
    // Only with every input dequantized and the output quantized: any other Concat keeps the
    // program's own Concat fusions (inputs written or read in place, a shuffle).
    auto fusion = fuse_qdq_around(graph, id, node.inputs.size(), kQdqConcatAttr);
    if (!fusion || fusion->dequantizations.size() != node.inputs.size() || !fusion->quantization) {
      return std::nullopt;
    }
    return fusion;
  }
  if (kQdqActivations.count(op) && node.inputs.size() == 1 && node.inputs[0] != kNoValue) {
    return fuse_qdq_around(graph, id, 1, kQdqUnaryAttr);
  }
  return std::nullopt;
}

std::optional<Node> gemm_as_matmul(const Graph& graph, const Node& gemm) {
  if (gemm.op_type != "Gemm" || !gemm.domain.empty() || gemm.inputs.size() < 2 ||
      gemm.inputs.size() > 3 || gemm.outputs.size() != 1 || gemm.inputs[0] == kNoValue ||
      gemm.inputs[1] == kNoValue || gemm.attr_int("transA", 0) != 0) {
    return std::nullopt;
  }
  const hsched::Shape& a = graph.value(gemm.inputs[0]).shape;
  const hsched::Shape& b = graph.value(gemm.inputs[1]).shape;
  if (!a.is_static() || !b.is_static() || a.rank() != 2 || b.rank() != 2) return std::nullopt;
  const bool trans_b = gemm.attr_int("transB", 0) != 0;
  const int64_t k = b.dims[trans_b ? 1 : 0], n = b.dims[trans_b ? 0 : 1];
  if (a.dims[1] != k) return std::nullopt;
  Node matmul{gemm.name, "MatMul", "", {gemm.inputs[0], gemm.inputs[1]}, gemm.outputs, {}};
  if (gemm.inputs.size() == 3 && gemm.inputs[2] != kNoValue) {
    const Value& c = graph.value(gemm.inputs[2]);
    if (gemm.attr_float("beta", 1.0f) != 1.0f || c.dtype != DType::kF32 || !c.shape.is_static() ||
        c.shape.elements() != n || c.shape.rank() > 2 ||
        (c.shape.rank() == 2 && c.shape.dims[0] != 1)) {
      return std::nullopt;
    }
    matmul.inputs.push_back(gemm.inputs[2]);
  }
  matmul.attributes[kMatMulAlphaAttr] = gemm.attr_float("alpha", 1.0f);
  if (trans_b) {
    matmul.attributes[kMatMulViewAttrs[1]] = encode_view(StridedView{{k, n}, {1, k}, 0});
  }
  return matmul;
}

namespace {

// The node that alone reads the DequantizeLinear that alone reads `q` (its id in `id`), if any.
const Node* read_dequantized(const Graph& graph, ValueId q, NodeId* id) {
  NodeId dq_id = kNoNode;
  const Node* dq = node_detail::only_reader(graph, q, &dq_id);
  if (dq == nullptr || dq->op_type != "DequantizeLinear" || dq->outputs.size() != 1) {
    return nullptr;
  }
  return node_detail::only_reader(graph, dq->outputs[0], id);
}

}  // namespace

std::optional<RequantizedStep> fusable_requantized_activation(const Graph& graph, ValueId q) {
  NodeId id = kNoNode;
  const Node* node = read_dequantized(graph, q, &id);
  const auto activation = node ? fusable_activation(graph, *node) : std::nullopt;
  const auto fusion = activation ? fusable_qdq_elementwise(graph, id) : std::nullopt;
  if (!fusion || fusion->op.inputs[0] != q || !fusion->quantization) return std::nullopt;
  const auto& qdq = std::get<std::vector<float>>(fusion->op.attributes.at(kQdqUnaryAttr));
  RequantizedStep r{
      .node = id,
      .quantization = *fusion->quantization,
      .output = fusion->op.outputs[0],
      .params = {static_cast<float>(activation->op), activation->alpha, activation->beta}};
  r.params.insert(r.params.end(), qdq.begin(), qdq.end());
  return r;
}

namespace {

// The Add of fusable_requantized_bias and fusable_requantized_residual: its other input as
// `bias`, the result's shape static and the Add's.
std::optional<RequantizedStep> requantized_add(const Graph& graph, ValueId q) {
  NodeId id = kNoNode;
  const Node* add = read_dequantized(graph, q, &id);
  const auto fusion =
      add != nullptr && add->op_type == "Add" ? fusable_qdq_elementwise(graph, id) : std::nullopt;
  if (!fusion || !fusion->quantization || fusion->op.inputs.size() != 2) return std::nullopt;
  const auto& p = std::get<std::vector<float>>(fusion->op.attributes.at(kQdqBinaryAttr));
  const size_t at = fusion->op.inputs[0] == q ? 0 : 1;  // the product's side
  const ValueId other = fusion->op.inputs[1 - at];
  const hsched::Shape& y = graph.value(q).shape;
  if (fusion->op.inputs[at] != q || other == q || !y.is_static() || y.rank() < 2 ||
      graph.value(fusion->op.outputs[0]).shape.dims != y.dims ||
      !graph.value(other).shape.is_static()) {
    return std::nullopt;
  }
  // Both operands and the sum 8-bit of one type: ONNX Runtime runs the Add as its QLinearAdd.
  const DType type = graph.value(q).dtype;
  const bool one_type = graph.value(other).dtype == type &&
                        graph.value(fusion->op.outputs[0]).dtype == type && p[2 * (1 - at)] > 0.0f;
  return RequantizedStep{
      .node = id,
      .quantization = *fusion->quantization,
      .output = fusion->op.outputs[0],
      .bias = other,
      .params = {p[2 * at], p[2 * at + 1], p[4], p[5], p[6], p[7], p[2 * (1 - at)],
                 p[2 * (1 - at) + 1], static_cast<float>(at), one_type ? 1.0f : 0.0f}};
}

}  // namespace

std::optional<RequantizedStep> fusable_requantized_bias(const Graph& graph, ValueId q) {
  auto r = requantized_add(graph, q);
  if (!r) return std::nullopt;
  // The row: N values, f32 or 8-bit dequantized (the planner has them made before the product).
  const hsched::Shape& row = graph.value(r->bias).shape;
  const hsched::Shape& y = graph.value(q).shape;
  if (row.rank() > y.rank() || row.elements() != y.dims.back() ||
      row.dims.back() != y.dims.back()) {
    return std::nullopt;
  }
  return r;
}

std::optional<RequantizedStep> fusable_requantized_residual(const Graph& graph, ValueId q) {
  auto r = requantized_add(graph, q);
  if (!r || !(r->params[6] > 0.0f)) return std::nullopt;
  // Of y's shape, or one [M, N] for every batch (an attention mask).
  const std::vector<int64_t>& res = graph.value(r->bias).shape.dims;
  const std::vector<int64_t>& y = graph.value(q).shape.dims;
  const size_t rank = res.size();
  const bool shared = rank >= 2 && rank <= y.size() && res[rank - 1] == y.back() &&
                      res[rank - 2] == y[y.size() - 2] &&
                      std::all_of(res.begin(), res.end() - 2, [](int64_t d) { return d == 1; });
  if (res != y && !shared) return std::nullopt;
  r->residual = std::exchange(r->bias, kNoValue);
  return r;
}

std::optional<QuantizedMatMulOperands> fusable_quantized_matmul(const Graph& graph,
                                                                const Node& product) {
  const std::optional<Node> gemm =
      product.op_type == "Gemm" ? gemm_as_matmul(graph, product) : std::nullopt;
  const Node& matmul = gemm ? *gemm : product;
  if (matmul.op_type != "MatMul" || !matmul.domain.empty() ||
      (!gemm && matmul.inputs.size() != 2) || matmul.outputs.size() != 1 ||
      matmul.inputs[0] == kNoValue || matmul.inputs[1] == kNoValue) {
    return std::nullopt;
  }
  // A transposed Gemm's B is [N, K]: its columns are its rows.
  const bool b_transposed = gemm && gemm->has_attr(kMatMulViewAttrs[1]);
  const Value& a_f = graph.value(matmul.inputs[0]);
  const Value& b_f = graph.value(matmul.inputs[1]);
  if (a_f.dtype != DType::kF32 || b_f.dtype != DType::kF32 || !a_f.shape.is_static() ||
      !b_f.shape.is_static()) {
    return std::nullopt;
  }
  std::vector<int64_t> b_dims = b_f.shape.dims;
  if (b_transposed) std::swap(b_dims[0], b_dims[1]);
  if (!tiled_matmul(a_f.shape.dims, b_dims)) return std::nullopt;
  QuantizedMatMulOperands q;
  const Node* a_dq = made_by(graph, matmul.inputs[0], "DequantizeLinear", &q.a_dequantize);
  const Node* b_dq = made_by(graph, matmul.inputs[1], "DequantizeLinear", &q.b_dequantize);
  if (a_dq == nullptr || b_dq == nullptr || a_dq->inputs.empty() || b_dq->inputs.empty() ||
      a_dq->inputs[0] == kNoValue || b_dq->inputs[0] == kNoValue) {
    return std::nullopt;
  }
  const Value& a = graph.value(a_dq->inputs[0]);
  const Value& b = graph.value(b_dq->inputs[0]);
  const auto a_params = constant_params(graph, *a_dq, a.dtype, 1, false);
  if (!a_params) return std::nullopt;
  auto b_params = constant_params(graph, *b_dq, b.dtype, 1, false);
  if (!b_params && b.is_constant() && b.shape.rank() == 2) {  // per column
    const size_t column_axis = b_transposed ? 0 : 1;
    const int64_t n = b.shape.dims[column_axis];
    int64_t axis = b_dq->attr_int("axis", 1);
    if (axis < 0) axis += 2;
    if (axis == static_cast<int64_t>(column_axis)) {
      b_params = constant_params(graph, *b_dq, b.dtype, n, true);
    }
    if (b_params && n > 1) q.b_scales = b_dq->inputs[1];
  }
  if (!b_params) return std::nullopt;
  q.a = a_dq->inputs[0];
  q.b = b_dq->inputs[0];
  const bool per_column = q.b_scales != kNoValue;
  q.params = {a_params->scales[0], static_cast<float>(a_params->zero),
              per_column ? 1.0f : b_params->scales[0], static_cast<float>(b_params->zero)};
  return q;
}

void attach_quantized_matmul(Node& matmul, const QuantizedMatMulOperands& q) {
  matmul.inputs[0] = q.a;
  matmul.inputs[1] = q.b;
  if (q.b_scales != kNoValue) {
    matmul.inputs.resize(std::max(matmul.inputs.size(), kWeightScaleInput + 1), kNoValue);
    matmul.inputs[kWeightScaleInput] = q.b_scales;
  }
  matmul.attributes[kMatMulQuantizedAttr] = q.params;
}

void attach_quantized_conv(Node& conv, const QuantizedConvOperands& q) {
  conv.inputs[0] = q.x;
  conv.inputs[1] = q.w;
  conv.inputs.resize(std::max(conv.inputs.size(), kWeightScaleInput + 1), kNoValue);
  conv.inputs[kWeightScaleInput] = q.w_scale;
  conv.attributes[kConvInputZeroAttr] = q.x_zero;
  conv.attributes[kConvInputScaleAttr] = q.x_scale;
  if (q.integer_bias) conv.attributes[kConvIntegerBiasAttr] = int64_t{1};
}

void attach_output_quantization(Node& product, const QuantizedOutput& q) {
  product.attributes[kQuantizeOutputAttr] = std::vector<int64_t>{q.zero, q.lo, q.hi};
  product.attributes[kQuantizeOutputScaleAttr] = q.scale;
}

}  // namespace hsched::opencl
