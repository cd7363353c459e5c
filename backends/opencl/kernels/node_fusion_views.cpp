// The program's MatMul fusions through views (node_ops.h): operands read in place through
// Transposes, Splits and view ops (fusable_operand_view, encode_view, decode_view), a result
// stored transposed (fusable_result_transpose); nodes that alias their input as views do
// (leaves_input_as_is). Graph analysis only.
#include <algorithm>
#include <set>

#include "backends/opencl/kernels/node_ops.h"
#include "backends/opencl/kernels/node_ops_util.h"

namespace hsched::opencl {

using node_detail::only_reader;

namespace {

// The extents of `dims` other than 1, in order.
Shape long_axes(const Shape& dims) {
  Shape out;
  for (int64_t extent : dims) {
    if (extent != 1) out.push_back(extent);
  }
  return out;
}

// `view` of `node`'s output `out` (a Transpose, a Split or a view op that changes only axes of
// length 1) given `view` of its input; false where no view expresses it.
bool apply_view_node(const Graph& graph, const Node& node, ValueId out, StridedView& view) {
  const Shape& out_dims = graph.value(out).shape.dims;
  const size_t rank = view.dims.size();
  if (node.op_type == "Transpose") {
    const std::vector<int64_t> perm = transpose_perm(node, rank);
    StridedView next{.dims = {}, .strides = {}, .offset = view.offset};
    std::vector<bool> seen(rank, false);
    for (int64_t axis : perm) {
      if (axis < 0 || axis >= static_cast<int64_t>(rank) || seen[static_cast<size_t>(axis)]) {
        return false;
      }
      seen[static_cast<size_t>(axis)] = true;
      next.dims.push_back(view.dims[static_cast<size_t>(axis)]);
      next.strides.push_back(view.strides[static_cast<size_t>(axis)]);
    }
    view = std::move(next);
  } else if (node.op_type == "Split") {
    int64_t axis = node.attr_int("axis", 0);
    if (axis < 0) axis += static_cast<int64_t>(rank);
    if (axis < 0 || axis >= static_cast<int64_t>(rank) || out_dims.size() != rank) return false;
    const auto a = static_cast<size_t>(axis);
    int64_t start = 0;  // of `out` along the axis
    for (ValueId o : node.outputs) {
      if (o == out) break;
      const Shape& dims = o == kNoValue ? Shape{} : graph.value(o).shape.dims;
      if (dims.size() != rank) return false;
      start += dims[a];
    }
    view.offset += start * view.strides[a];
    view.dims[a] = out_dims[a];
  } else {
    if (long_axes(view.dims) != long_axes(out_dims)) return false;
    StridedView next{.dims = out_dims, .strides = {}, .offset = view.offset};
    size_t d = 0;
    for (int64_t extent : out_dims) {
      while (extent != 1 && view.dims[d] == 1) ++d;
      next.strides.push_back(extent == 1 ? 0 : view.strides[d++]);
    }
    view = std::move(next);
  }
  return view.dims == out_dims;
}

StridedView dense_view(const Shape& dims) {
  StridedView view{.dims = dims, .strides = std::vector<int64_t>(dims.size(), 1), .offset = 0};
  for (size_t d = dims.size(); d-- > 1;) view.strides[d - 1] = view.strides[d] * dims[d];
  return view;
}

// Whether the walk to a MatMul operand's base may pass `node` (its output `out` read by the next
// node alone): a Transpose, a Split (with `through_splits`) or a view op, static f32 data, every
// other input a constant (a Split's sizes, a Reshape's shape).
bool view_node(const Graph& graph, const Node& node, ValueId out, bool through_splits) {
  const bool split = node.op_type == "Split";
  if (!node.domain.empty() || node.inputs.empty() || node.inputs[0] == kNoValue ||
      (split ? !through_splits : node.outputs.size() != 1) ||
      (!split && node.op_type != "Transpose" && !is_view_op(node.op_type))) {
    return false;
  }
  const Value& in = graph.value(node.inputs[0]);
  const Value& value = graph.value(out);
  if (in.dtype != DType::kF32 || value.dtype != DType::kF32 || !in.shape.is_static() ||
      !value.shape.is_static()) {
    return false;
  }
  for (size_t i = 1; i < node.inputs.size(); ++i) {
    if (node.inputs[i] != kNoValue && !graph.value(node.inputs[i]).is_constant()) return false;
  }
  return true;
}

// One step of an operand's walk towards its base: `node`, whose output `out` the walk came by,
// stored as `stored` (out, or a quantized move's 8-bit output), reading `below`.
struct ViewLink {
  NodeId node = kNoNode;
  ValueId out = kNoValue, stored = kNoValue, below = kNoValue;
};

// The link making `v`: a view node (f32), or with `quantized` a quantized move whose
// QuantizeLinear makes 8-bit `v`, read by one DequantizeLinear only one node reads.
std::optional<ViewLink> view_link(const Graph& graph, ValueId v, bool quantized,
                                  bool through_splits, const std::vector<bool>& absorbed) {
  NodeId id = graph.value(v).producer, reader = kNoNode;
  const Node* next = only_reader(graph, v, &reader);
  if (id == kNoNode || next == nullptr) return std::nullopt;
  if (!quantized) {
    if (absorbed[static_cast<size_t>(id)] || !view_node(graph, graph.node(id), v, through_splits)) {
      return std::nullopt;
    }
    return ViewLink{id, v, v, graph.node(id).inputs[0]};
  }
  const Node& q = graph.node(id);
  if (q.op_type != "QuantizeLinear" || q.inputs.empty() || q.inputs[0] == kNoValue ||
      next->op_type != "DequantizeLinear" || next->outputs.size() != 1 ||
      only_reader(graph, next->outputs[0], &reader) == nullptr) {
    return std::nullopt;
  }
  const ValueId out = q.inputs[0];
  const NodeId move = graph.value(out).producer;
  if (move == kNoNode || absorbed[static_cast<size_t>(move)] ||
      !view_node(graph, graph.node(move), out, through_splits)) {
    return std::nullopt;
  }
  const auto fused = fusable_quantized_move(graph, move);
  if (!fused) return std::nullopt;
  return ViewLink{move, out, v, fused->op.inputs[0]};
}

// fusable_operand_view's walk, f32 or (quantized) 8-bit.
std::optional<OperandView> operand_view(const Graph& graph, const Node& matmul, size_t i,
                                        ValueId operand, bool quantized, bool through_splits,
                                        const std::vector<bool>& absorbed) {
  if (i >= 2 || matmul.inputs.size() < 2 || operand == kNoValue) return std::nullopt;
  const Value& a = graph.value(matmul.inputs[0]);
  const Value& b = graph.value(matmul.inputs[1]);
  if (!a.shape.is_static() || !b.shape.is_static() || !tiled_matmul(a.shape.dims, b.shape.dims)) {
    return std::nullopt;
  }
  // From the operand towards the base.
  std::vector<ViewLink> chain;
  ValueId base = operand;
  while (auto link = view_link(graph, base, quantized, through_splits, absorbed)) {
    chain.push_back(*link);
    base = link->below;
  }
  // The view, built from the base; where a node cannot be expressed, its output becomes the
  // base, and while the MatMul cannot read the view (batch axes that do not collapse into one
  // stride), the node nearest the base leaves the way.
  StridedView view;
  for (bool readable = false; !readable && !chain.empty();) {
    view = dense_view(graph.value(base).shape.dims);
    for (size_t n = chain.size(); n-- > 0;) {
      if (!apply_view_node(graph, graph.node(chain[n].node), chain[n].out, view)) {
        base = chain[n].stored;
        view = dense_view(graph.value(base).shape.dims);
        chain.resize(n);
      }
    }
    readable = chain.empty() || operand_strides(view).has_value();
    if (!readable) {
      base = chain.back().stored;
      chain.pop_back();
    }
  }
  const bool moves = std::any_of(chain.begin(), chain.end(), [&](const ViewLink& link) {
    const std::string& op = graph.node(link.node).op_type;
    return op == "Transpose" || op == "Split";
  });
  if (!moves) return std::nullopt;
  OperandView fused{base, std::move(view), {}};
  for (const ViewLink& link : chain) fused.through.push_back(link.node);
  return fused;
}

}  // namespace

std::optional<OperandView> fusable_operand_view(const Graph& graph, const Node& matmul, size_t i,
                                                ValueId operand, bool through_splits,
                                                const std::vector<bool>& absorbed) {
  return operand_view(graph, matmul, i, operand, false, through_splits, absorbed);
}

std::optional<OperandView> fusable_quantized_operand_view(const Graph& graph, const Node& matmul,
                                                          size_t i, ValueId operand,
                                                          bool through_splits,
                                                          const std::vector<bool>& absorbed) {
  return operand_view(graph, matmul, i, operand, true, through_splits, absorbed);
}

std::vector<int64_t> encode_view(const StridedView& view) {
  std::vector<int64_t> ints{view.offset};
  ints.insert(ints.end(), view.dims.begin(), view.dims.end());
  ints.insert(ints.end(), view.strides.begin(), view.strides.end());
  return ints;
}

std::optional<StridedView> decode_view(const std::vector<int64_t>& ints) {
  if (ints.size() < 5 || ints.size() % 2 == 0) return std::nullopt;
  const auto rank = static_cast<std::ptrdiff_t>(ints.size() / 2);
  return StridedView{.dims = Shape(ints.begin() + 1, ints.begin() + 1 + rank),
                     .strides = std::vector<int64_t>(ints.begin() + 1 + rank, ints.end()),
                     .offset = ints[0]};
}

std::optional<std::vector<int64_t>> fusable_result_transpose(const Graph& graph, const Node& matmul,
                                                             ValueId result,
                                                             const Node& transpose) {
  if (transpose.op_type != "Transpose" || !transpose.domain.empty() ||
      transpose.inputs.size() != 1 || transpose.inputs[0] != result ||
      transpose.outputs.size() != 1 || matmul.inputs.size() < 2) {
    return std::nullopt;
  }
  const Value& y = graph.value(result);
  const Value& a = graph.value(matmul.inputs[0]);
  const Value& b = graph.value(matmul.inputs[1]);
  if (y.dtype != DType::kF32 || !y.shape.is_static() || !a.shape.is_static() ||
      !b.shape.is_static() || !tiled_matmul(a.shape.dims, b.shape.dims)) {
    return std::nullopt;
  }
  std::vector<int64_t> perm = transpose_perm(transpose, y.shape.rank());
  if (!transposed_result(y.shape.dims, perm)) return std::nullopt;
  return perm;
}

std::vector<int64_t> transpose_perm(const Node& transpose, size_t rank) {
  std::vector<int64_t> perm = transpose.attr_ints("perm");
  if (perm.empty()) {  // ONNX's default: the axes reversed
    for (size_t d = rank; d-- > 0;) perm.push_back(static_cast<int64_t>(d));
  }
  return perm;
}

bool leaves_input_as_is(const Graph& graph, const Node& node) {
  if (!node.domain.empty() || node.inputs.empty() || node.inputs[0] == kNoValue ||
      node.outputs.size() != 1) {
    return false;
  }
  const Value& x = graph.value(node.inputs[0]);
  const Value& y = graph.value(node.outputs[0]);
  if (x.dtype != y.dtype || !x.shape.is_static() || !y.shape.is_static()) return false;
  if (node.op_type == "Cast") return true;
  if (node.op_type == "Expand") return x.shape.dims == y.shape.dims;
  if (node.op_type != "Gather" || node.inputs.size() != 2 || node.inputs[1] == kNoValue) {
    return false;
  }
  const Value& indices = graph.value(node.inputs[1]);
  const auto rank = static_cast<int64_t>(x.shape.rank());
  int64_t axis = node.attr_int("axis", 0);
  if (axis < 0) axis += rank;
  if (!indices.is_constant() || axis < 0 || axis >= rank) return false;
  const int64_t n = x.shape.dims[static_cast<size_t>(axis)];
  const Tensor& t = *indices.constant;
  if (t.elements() != n) return false;
  for (int64_t i = 0; i < n; ++i) {
    const auto at = static_cast<size_t>(i);
    const int64_t v = t.dtype() == DType::kI64   ? t.values<int64_t>()[at]
                      : t.dtype() == DType::kI32 ? int64_t{t.values<int32_t>()[at]}
                                                 : -1;
    if (v != i) return false;
  }
  return true;
}

}  // namespace hsched::opencl
