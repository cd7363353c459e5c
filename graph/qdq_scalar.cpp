// qdq_constant_scalar (qdq_scalar.h).
#include "graph/qdq_scalar.h"

#include <algorithm>
#include <cmath>

namespace hsched {
namespace {

bool is_byte(DType dtype) { return dtype == DType::kU8 || dtype == DType::kI8; }

// The one value of a constant of one element (8-bit data as its integer).
std::optional<float> constant_value(const Value& value) {
  if (!value.is_constant() || value.constant->elements() != 1) return std::nullopt;
  const Tensor& t = *value.constant;
  switch (value.dtype) {
    case DType::kF32:
      return t.values<float>()[0];
    case DType::kU8:
      return static_cast<float>(t.values<uint8_t>()[0]);
    case DType::kI8:
      return static_cast<float>(t.values<int8_t>()[0]);
    default:
      return std::nullopt;
  }
}

// `node`'s constant scale (positive, finite) and zero point (of 8-bit `dtype`; 0 when omitted),
// one each.
std::optional<std::pair<float, float>> params(const Graph& graph, const Node& node, DType dtype) {
  if (node.inputs.size() < 2 || node.inputs[1] == kNoValue || !is_byte(dtype)) {
    return std::nullopt;
  }
  const Value& scale_value = graph.value(node.inputs[1]);
  const auto scale = scale_value.dtype == DType::kF32 ? constant_value(scale_value) : std::nullopt;
  if (!scale || !(*scale > 0.0f) || !std::isfinite(*scale)) return std::nullopt;
  if (node.inputs.size() < 3 || node.inputs[2] == kNoValue) return std::pair{*scale, 0.0f};
  const Value& zero_value = graph.value(node.inputs[2]);
  const auto zero = zero_value.dtype == dtype ? constant_value(zero_value) : std::nullopt;
  if (!zero) return std::nullopt;
  return std::pair{*scale, *zero};
}

// The node of the default domain making `v` when it is a `op` of one output.
const Node* made_by(const Graph& graph, ValueId v, const char* op) {
  const NodeId id = graph.value(v).producer;
  if (id == kNoNode) return nullptr;
  const Node& node = graph.node(id);
  if (node.op_type != op || !node.domain.empty() || node.outputs.size() != 1 ||
      node.inputs.empty() || node.inputs[0] == kNoValue || node.attr_int("block_size", 0) != 0) {
    return nullptr;
  }
  return &node;
}

}  // namespace

std::optional<QdqConstantByte> qdq_constant_byte(const Graph& graph, ValueId v) {
  if (v == kNoValue || graph.value(v).dtype != DType::kF32) return std::nullopt;
  const Node* dq = made_by(graph, v, "DequantizeLinear");
  if (dq == nullptr) return std::nullopt;
  const Value& stored = graph.value(dq->inputs[0]);
  const auto p = params(graph, *dq, stored.dtype);
  if (!p) return std::nullopt;
  std::optional<float> integer = constant_value(stored);
  if (!integer && !stored.is_constant()) {  // a QuantizeLinear of an f32 one
    const Node* q = made_by(graph, dq->inputs[0], "QuantizeLinear");
    const auto qp = q != nullptr ? params(graph, *q, stored.dtype) : std::nullopt;
    const Value* in = q != nullptr ? &graph.value(q->inputs[0]) : nullptr;
    const auto x = in != nullptr && in->dtype == DType::kF32 ? constant_value(*in) : std::nullopt;
    if (!qp || !x) return std::nullopt;
    const float lo = stored.dtype == DType::kU8 ? 0.0f : -128.0f;
    integer = std::clamp(std::nearbyint(*x / qp->first) + qp->second, lo, lo + 255.0f);
  }
  if (!integer) return std::nullopt;
  return QdqConstantByte{static_cast<int32_t>(*integer), p->first, static_cast<int32_t>(p->second),
                         stored.dtype};
}

std::optional<float> qdq_constant_scalar(const Graph& graph, ValueId v) {
  if (v == kNoValue) return std::nullopt;
  const Value& value = graph.value(v);
  if (value.dtype != DType::kF32) return std::nullopt;
  if (value.is_constant()) return constant_value(value);
  const auto byte = qdq_constant_byte(graph, v);
  if (!byte) return std::nullopt;
  return static_cast<float>(byte->stored - byte->zero) * byte->scale;
}

}  // namespace hsched
