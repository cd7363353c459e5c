// check_node's rules for the op families with their own kernels files: gathers and scatters by
// indices on the device, generators and LRN, and the integer products (node_ops.h). Shared with
// node_ops.cpp through node_ops_util.h.
#include <set>

#include "backends/opencl/kernels/node_ops_util.h"
#include "backends/opencl/kernels/ops_index.h"
#include "backends/opencl/kernels/ops_integer.h"

namespace hsched::opencl::node_detail {

Refusal reject(ReasonCode reason, std::string detail) { return {reason, std::move(detail)}; }

const Shape& dims_of(const Graph& graph, ValueId id) { return graph.value(id).shape.dims; }

bool has_input(const Node& node, size_t i) {
  return i < node.inputs.size() && node.inputs[i] != kNoValue;
}

// GatherElements, ScatterElements (and Scatter), GatherND, ScatterND and TopK: int64 indices
// (on the device; TopK's k on the host), shapes as the op says, ranks <= 6. nullopt for other
// ops; a nullopt inside for accepted.
std::optional<std::optional<Refusal>> check_gather_scatter(const Graph& graph, const Node& node) {
  const std::string& op = node.op_type;
  const bool elements = op == "GatherElements" || op == "ScatterElements" || op == "Scatter";
  const bool nd = op == "GatherND" || op == "ScatterND";
  if (!elements && !nd && op != "TopK") return std::nullopt;
  const Shape& x = dims_of(graph, node.inputs[0]);
  const Shape& y = dims_of(graph, node.outputs[0]);
  const auto refuse = [&](ReasonCode reason, const std::string& why) {
    return std::optional<std::optional<Refusal>>(reject(reason, op + " " + why));
  };
  const auto rank = static_cast<int64_t>(x.size());
  const int64_t axis = node.attr_int("axis", op == "TopK" ? -1 : 0);
  if ((elements || op == "TopK") && (axis < -rank || axis >= rank)) {
    return refuse(ReasonCode::kAttributeUnsupported, "attribute axis=" + std::to_string(axis));
  }
  const bool merged =
      elements && has_input(node, 1) && elements_fit(x, dims_of(graph, node.inputs[1]), axis);
  if ((x.size() > 6 || y.size() > 6) && !merged) {
    return refuse(ReasonCode::kShapeUnsupported, "of rank > 6");
  }
  if (op == "TopK") {
    if (integer_dtype(graph.value(node.inputs[0]).dtype)) {
      return refuse(ReasonCode::kDtypeUnsupported, "of integers");
    }
    if (!has_input(node, 1) || node.outputs.size() != 2) {
      return refuse(ReasonCode::kShapeUnsupported, "without k as an input or both outputs");
    }
    return std::optional<Refusal>{};  // k is checked against the outputs when enqueued
  }
  const size_t needed = op == "GatherElements" || op == "GatherND" ? 2 : 3;
  if (node.inputs.size() != needed || !has_input(node, 1) ||
      graph.value(node.inputs[1]).dtype != DType::kI64) {
    return refuse(ReasonCode::kDtypeUnsupported, "needs int64 indices");
  }
  const Shape& idx = dims_of(graph, node.inputs[1]);
  const std::string reduction = node.attr_string("reduction", "none");
  if (needed == 3) {
    if (reduction != "none" && reduction != "add" && reduction != "mul" && reduction != "max" &&
        reduction != "min") {
      return refuse(ReasonCode::kAttributeUnsupported, "attribute reduction=" + reduction);
    }
    if (reduction != "none" && graph.value(node.inputs[0]).dtype == DType::kBool) {
      return refuse(ReasonCode::kDtypeUnsupported, "reduction of bools");
    }
    if (!has_input(node, 2) ||
        graph.value(node.inputs[2]).dtype != graph.value(node.inputs[0]).dtype) {
      return refuse(ReasonCode::kDtypeUnsupported, "updates of another dtype than the data");
    }
  }
  bool fits = true;
  if (elements) {
    fits = idx.size() == x.size() &&
           (needed == 2 ? y == idx : y == x && dims_of(graph, node.inputs[2]) == idx);
  } else {
    const int64_t b = node.attr_int("batch_dims", 0);
    const int64_t k = idx.empty() ? -1 : idx.back();
    fits = !idx.empty() && b >= 0 && b < static_cast<int64_t>(idx.size()) && k >= 1 &&
           b + k <= rank && (op == "GatherND" || b == 0);
    Shape expected(idx.begin(), idx.empty() ? idx.end() : idx.end() - 1);
    for (int64_t d = 0; fits && d < b; ++d)
      fits = idx[static_cast<size_t>(d)] == x[static_cast<size_t>(d)];
    if (fits && op == "GatherND") {
      expected.insert(expected.end(), x.begin() + b + k, x.end());
      fits = y == expected;
    } else if (fits) {
      expected.insert(expected.end(), x.begin() + k, x.end());
      fits = y == x && dims_of(graph, node.inputs[2]) == expected;
    }
  }
  if (!fits) return refuse(ReasonCode::kShapeUnsupported, "of shapes that do not fit");
  return std::optional<Refusal>{};
}

// ConstantOfShape, Range, EyeLike, OneHot, ReverseSequence and LRN (their values are checked
// against the output's shape when enqueued). nullopt for other ops; a nullopt inside for
// accepted.
std::optional<std::optional<Refusal>> check_generator(const Graph& graph, const Node& node) {
  const std::string& op = node.op_type;
  static const std::set<std::string> kOps = {"ConstantOfShape", "Range",           "EyeLike",
                                             "OneHot",          "ReverseSequence", "LRN"};
  if (!kOps.count(op)) return std::nullopt;
  const auto refuse = [&](ReasonCode reason, const std::string& why) {
    return std::optional<std::optional<Refusal>>(reject(reason, op + " " + why));
  };
  const Shape& x = dims_of(graph, node.inputs[0]);
  const Shape& y = dims_of(graph, node.outputs[0]);
  const DType out = graph.value(node.outputs[0]).dtype;
  const auto rank = static_cast<int64_t>(x.size());
  if (op == "ConstantOfShape") {
    auto value = node_detail::constant_of_shape_value(node);
    if (!value.is_ok()) return refuse(ReasonCode::kAttributeUnsupported, value.status().message());
    if (value->first != out) return refuse(ReasonCode::kDtypeUnsupported, "value of another dtype");
  } else if (op == "Range") {
    for (size_t i = 0; i < 3; ++i) {
      if (!has_input(node, i) || graph.value(node.inputs[i]).shape.elements() != 1 ||
          graph.value(node.inputs[i]).dtype != out) {
        return refuse(ReasonCode::kShapeUnsupported, "needs three scalars of its output's dtype");
      }
    }
  } else if (op == "EyeLike") {
    if (x.size() != 2 || y != x)
      return refuse(ReasonCode::kShapeUnsupported, "of rank other than 2");
  } else if (op == "OneHot") {
    const int64_t axis = node.attr_int("axis", -1);
    const auto out_rank = static_cast<int64_t>(y.size());
    if (graph.value(node.inputs[0]).dtype != DType::kI64 || !has_input(node, 2) ||
        graph.value(node.inputs[2]).dtype != out ||
        graph.value(node.inputs[2]).shape.elements() != 2) {
      return refuse(ReasonCode::kDtypeUnsupported,
                    "needs int64 indices and two values of its output's dtype");
    }
    if (axis < -out_rank || axis >= out_rank || y.size() != x.size() + 1) {
      return refuse(ReasonCode::kAttributeUnsupported, "attribute axis=" + std::to_string(axis));
    }
  } else if (op == "ReverseSequence") {
    const int64_t b = node.attr_int("batch_axis", 1), t = node.attr_int("time_axis", 0);
    if (x.size() < 2 || x.size() > 6 || y != x || !has_input(node, 1) ||
        graph.value(node.inputs[1]).dtype != DType::kI64 || b < 0 || t < 0 || b >= rank ||
        t >= rank || b == t || dims_of(graph, node.inputs[1]) != Shape{x[static_cast<size_t>(b)]}) {
      return refuse(ReasonCode::kShapeUnsupported,
                    "needs rank 2-6, int64 lengths and distinct batch and time axes");
    }
  } else if (x.size() < 3 || node.attr_int("size", 0) < 1) {  // LRN
    return refuse(ReasonCode::kAttributeUnsupported, "needs N, C, spatial... and size >= 1");
  }
  if (y.size() > 6) return refuse(ReasonCode::kShapeUnsupported, "of rank > 6");
  return std::optional<Refusal>{};
}

// MatMulInteger, ConvInteger, QLinearMatMul and QLinearConv: 8-bit data, zero points of their
// data's dtype, scales of f32, parameter counts as ONNX allows (per tensor, per row of A, per
// column of B or per output channel), shapes that ops_quant.h takes. nullopt for other ops; a
// nullopt inside for accepted.
std::optional<std::optional<Refusal>> check_quant(const Graph& graph, const Node& node) {
  const std::string& op = node.op_type;
  const bool qlinear = op == "QLinearMatMul" || op == "QLinearConv";
  const bool conv = op == "ConvInteger" || op == "QLinearConv";
  if (!qlinear && !conv && op != "MatMulInteger") return std::nullopt;
  const auto refuse = [&](ReasonCode reason, const std::string& why) {
    return std::optional<std::optional<Refusal>>(reject(reason, op + " " + why));
  };
  // Input positions of the two operands, their zero points and scales.
  const size_t a = 0, b = qlinear ? 3 : 1;
  const size_t za = 2, zb = qlinear ? 5 : 3;
  const auto dtype = [&](size_t i) { return graph.value(node.inputs[i]).dtype; };
  const auto count = [&](size_t i) {
    return has_input(node, i) ? graph.value(node.inputs[i]).shape.elements() : int64_t{1};
  };
  const auto eight_bit = [](DType t) { return t == DType::kU8 || t == DType::kI8; };
  if (!has_input(node, b) || !eight_bit(dtype(a)) || !eight_bit(dtype(b))) {
    return refuse(ReasonCode::kDtypeUnsupported, "needs 8-bit operands");
  }
  if ((has_input(node, za) && dtype(za) != dtype(a)) ||
      (has_input(node, zb) && dtype(zb) != dtype(b))) {
    return refuse(ReasonCode::kDtypeUnsupported, "zero point of another dtype than its data");
  }
  const Shape& x = dims_of(graph, node.inputs[a]);
  const Shape& w = dims_of(graph, node.inputs[b]);
  const Shape& y = dims_of(graph, node.outputs[0]);
  int64_t rows = 1, columns = 1;  // what per-row (A) and per-column (B) parameters count
  if (conv) {
    if ((x.size() != 3 && x.size() != 4) || w.size() != x.size()) {
      return refuse(ReasonCode::kShapeUnsupported, "of spatial rank other than 1 or 2");
    }
    auto window = node_detail::window_of(node, x, y, &w, false);
    if (!window.is_ok())
      return refuse(ReasonCode::kAttributeUnsupported, window.status().message());
    const int64_t group = node.attr_int("group", 1);
    if (group < 1 || x[1] % group != 0 || w[0] % group != 0 || w[1] * group != x[1]) {
      return refuse(ReasonCode::kAttributeUnsupported, "attribute group=" + std::to_string(group));
    }
    columns = w[0];
  } else {
    if (x.size() < 2 || w.size() < 2 || x.size() > 6 || w.size() > 6) {
      return refuse(ReasonCode::kShapeUnsupported, "of vectors or of rank > 6");
    }
    const Shape xb(x.begin(), x.end() - 2), wb(w.begin(), w.end() - 2);
    if (!(xb == wb || xb.empty() || wb.empty())) {
      return refuse(ReasonCode::kShapeUnsupported, "with batch axes that differ");
    }
    rows = x[x.size() - 2];
    columns = w.back();
  }
  const auto fits = [](int64_t n, int64_t per) { return n == 1 || n == per; };
  bool counts_fit = (conv ? count(za) == 1 : fits(count(za), rows)) && fits(count(zb), columns);
  if (qlinear) {
    const size_t sa = 1, sb = 4, sy = 6, zy = 7;
    for (size_t i : {sa, sb, sy}) {
      if (!has_input(node, i) || dtype(i) != DType::kF32) {
        return refuse(ReasonCode::kDtypeUnsupported, "needs f32 scales");
      }
    }
    const DType out = graph.value(node.outputs[0]).dtype;
    if (!eight_bit(out) || (has_input(node, zy) && dtype(zy) != out)) {
      return refuse(ReasonCode::kDtypeUnsupported,
                    "output not of 8 bits or of its zero point's dtype");
    }
    counts_fit = counts_fit && (conv ? count(sa) == 1 : fits(count(sa), rows)) &&
                 fits(count(sb), columns) && count(sy) == 1 && count(zy) == 1;
    if (op == "QLinearConv" && has_input(node, 8) &&
        (dtype(8) != DType::kI32 || count(8) != columns)) {
      return refuse(ReasonCode::kDtypeUnsupported, "bias not of int32 [output channels]");
    }
  }
  if (!counts_fit)
    return refuse(ReasonCode::kShapeUnsupported, "parameters of counts that do not fit");
  return std::optional<Refusal>{};
}

}  // namespace hsched::opencl::node_detail
