// The program's fusions (node_ops.h): a Conv's or MatMul's epilogue (bias Add, residual Add,
// activation, a Conv's per-channel factor), activations exported as several nodes, ConvNeXt's
// channels-first LayerNorm, a Softmax's NaN guard (a MatMul's operands read through views and its
// transposed result: node_fusion_views.cpp). Graph analysis only; enqueue_node runs what they
// produce.
#include <algorithm>
#include <cmath>
#include <set>

#include "backends/opencl/kernels/node_ops.h"
#include "backends/opencl/kernels/node_ops_util.h"

namespace hsched::opencl {

using node_detail::constants_of;
using node_detail::is_graph_output;
using node_detail::only_reader;

std::optional<Activation> fusable_activation(const Graph& graph, const Node& node) {
  static const std::set<std::string> kFusable = {"Relu",        "LeakyRelu", "Sigmoid", "Tanh",
                                                 "HardSigmoid", "HardSwish", "Clip"};
  if (!kFusable.count(node.op_type) || !node.domain.empty()) return std::nullopt;
  if (node.op_type == "Clip") {
    for (size_t i = 1; i < node.inputs.size(); ++i) {
      if (node.inputs[i] != kNoValue && !graph.value(node.inputs[i]).constant) return std::nullopt;
    }
  }
  auto act = node_detail::unary_of(node, constants_of(graph, node, 1, 2));
  if (!act.is_ok()) return std::nullopt;
  return *act;
}

std::optional<ValueId> fusable_bias(const Graph& graph, const Node& matmul, const Node& add) {
  if (add.op_type != "Add" || !add.domain.empty() || add.inputs.size() != 2 ||
      add.outputs.size() != 1 || matmul.outputs.empty()) {
    return std::nullopt;
  }
  const ValueId product = matmul.outputs[0];
  const ValueId bias = add.inputs[0] == product ? add.inputs[1] : add.inputs[0];
  if (bias == product || (add.inputs[0] != product && add.inputs[1] != product)) {
    return std::nullopt;
  }
  // A 1-D operand's product is no [..., M, N] of rows, whatever its shape says (a view's rank is
  // its dims': encode_view's offset, dims and strides).
  for (size_t i = 0; i < 2 && i < matmul.inputs.size(); ++i) {
    const std::vector<int64_t> view = matmul.attr_ints(kMatMulViewAttrs[i]);
    const size_t rank = view.empty() ? graph.value(matmul.inputs[i]).shape.rank() : view.size() / 2;
    if (rank < 2) return std::nullopt;
  }
  const Value& y = graph.value(product);
  const Value& b = graph.value(bias);
  const Value& sum = graph.value(add.outputs[0]);
  if (matmul.inputs.size() < 2 || !b.is_constant() || b.dtype != DType::kF32 ||
      y.dtype != DType::kF32 || !y.shape.is_static() || y.shape.rank() < 1 ||
      sum.shape.dims != y.shape.dims || !b.shape.is_static() || b.shape.rank() > y.shape.rank() ||
      b.shape.rank() < 1 || b.shape.dims.back() != y.shape.dims.back() ||
      b.shape.elements() != y.shape.dims.back()) {  // [N] or [1, ..., 1, N]: a row
    return std::nullopt;
  }
  return bias;
}

std::optional<ValueId> fusable_residual(const Graph& graph, ValueId product, const Node& add,
                                        bool shared) {
  if (add.op_type != "Add" || !add.domain.empty() || add.inputs.size() != 2 ||
      add.outputs.size() != 1 || add.inputs[0] == add.inputs[1]) {
    return std::nullopt;
  }
  if (add.inputs[0] != product && add.inputs[1] != product) return std::nullopt;
  const ValueId residual = add.inputs[0] == product ? add.inputs[1] : add.inputs[0];
  const Value& y = graph.value(product);
  const Value& r = graph.value(residual);
  if (residual == kNoValue || y.dtype != DType::kF32 || r.dtype != DType::kF32 ||
      !y.shape.is_static() || !r.shape.is_static() ||
      graph.value(add.outputs[0]).shape.dims != y.shape.dims) {
    return std::nullopt;
  }
  if (r.shape.dims == y.shape.dims) return residual;
  // One [M, N] for every batch: [..., 1, M, N] against [..., M, N].
  const Shape& rd = r.shape.dims;
  const Shape& yd = y.shape.dims;
  const size_t rank = yd.size();
  if (!shared || rank < 3 || rd.size() < 2 || rd.size() > rank || rd[rd.size() - 1] != yd.back() ||
      rd[rd.size() - 2] != yd[rank - 2] || r.shape.elements() != yd.back() * yd[rank - 2]) {
    return std::nullopt;
  }
  return residual;
}

namespace {

// Whether `v` is a one-element f32 constant equal to `target` (to float rounding).
bool scalar_constant(const Graph& graph, ValueId v, double target) {
  if (v == kNoValue) return false;
  const Value& value = graph.value(v);
  if (!value.is_constant() || value.dtype != DType::kF32 || value.constant->elements() != 1) {
    return false;
  }
  const double got = value.constant->values<float>()[0];
  return std::abs(got - target) <= 1e-6 * std::abs(target);
}

// For a binary `node` of type `op` with `v` as one input: the other input, else kNoValue.
ValueId other_input(const Node& node, const char* op, ValueId v) {
  if (node.op_type != op || !node.domain.empty() || node.inputs.size() != 2) return kNoValue;
  if (node.inputs[0] == v) return node.inputs[1];
  if (node.inputs[1] == v) return node.inputs[0];
  return kNoValue;
}

// x * Sigmoid(x) from the Sigmoid `sigmoid`.
std::optional<ActivationChain> silu_chain(const Graph& graph, NodeId sigmoid) {
  const Node& s = graph.node(sigmoid);
  if (s.inputs.size() != 1 || s.outputs.size() != 1 || s.inputs[0] == kNoValue ||
      graph.value(s.inputs[0]).dtype != DType::kF32) {
    return std::nullopt;
  }
  NodeId mul_id = kNoNode;
  const Node* mul = only_reader(graph, s.outputs[0], &mul_id);
  if (mul == nullptr || other_input(*mul, "Mul", s.outputs[0]) != s.inputs[0]) return std::nullopt;
  return ActivationChain{s.inputs[0], mul_id, {sigmoid, mul_id}, UnaryOp::kSilu, kSiluOp};
}

// The erf GELU around the Erf `erf`.
std::optional<ActivationChain> gelu_chain(const Graph& graph, NodeId erf) {
  const Node& e = graph.node(erf);
  if (e.inputs.size() != 1 || e.outputs.size() != 1) return std::nullopt;
  // x / sqrt(2) or x * (1 / sqrt(2)), read only by the Erf.
  const ValueId scaled = e.inputs[0];
  const NodeId scale_id = graph.value(scaled).producer;
  if (scale_id == kNoNode || graph.value(scaled).consumers.size() != 1 ||
      is_graph_output(graph, scaled)) {
    return std::nullopt;
  }
  const Node& scale = graph.node(scale_id);
  if (scale.inputs.size() != 2 || !scale.domain.empty()) return std::nullopt;
  ValueId x = kNoValue;
  if (scale.op_type == "Div" && scalar_constant(graph, scale.inputs[1], std::sqrt(2.0))) {
    x = scale.inputs[0];
  } else if (scale.op_type == "Mul") {
    for (size_t i = 0; i < 2; ++i) {
      if (scalar_constant(graph, scale.inputs[i], std::sqrt(0.5))) x = scale.inputs[1 - i];
    }
  }
  if (x == kNoValue || graph.value(x).dtype != DType::kF32) return std::nullopt;
  ActivationChain chain{x, kNoNode, {scale_id, erf}};
  NodeId add_id = kNoNode, mul_id = kNoNode, next_id = kNoNode;
  const Node* add = only_reader(graph, e.outputs[0], &add_id);
  if (add == nullptr || !scalar_constant(graph, other_input(*add, "Add", e.outputs[0]), 1.0)) {
    return std::nullopt;
  }
  const Node* mul = only_reader(graph, add->outputs[0], &mul_id);
  const ValueId other = mul ? other_input(*mul, "Mul", add->outputs[0]) : kNoValue;
  if (other == kNoValue) return std::nullopt;
  chain.nodes.insert(chain.nodes.end(), {add_id, mul_id});
  if (other == x || scalar_constant(graph, other, 0.5)) {
    // (1 + erf) x, then * 0.5; or (1 + erf) 0.5, then * x.
    const Node* next = only_reader(graph, mul->outputs[0], &next_id);
    const ValueId last_other = next ? other_input(*next, "Mul", mul->outputs[0]) : kNoValue;
    if (last_other == kNoValue ||
        (other == x ? !scalar_constant(graph, last_other, 0.5) : last_other != x)) {
      return std::nullopt;
    }
    chain.nodes.push_back(next_id);
    chain.last = next_id;
    return chain;
  }
  // (x * 0.5) (1 + erf), the half read only here.
  const NodeId half_id = graph.value(other).producer;
  NodeId reader = kNoNode;
  if (half_id == kNoNode || only_reader(graph, other, &reader) == nullptr ||
      !scalar_constant(graph, other_input(graph.node(half_id), "Mul", x), 0.5)) {
    return std::nullopt;
  }
  chain.nodes.push_back(half_id);
  chain.last = mul_id;
  return chain;
}

}  // namespace

std::optional<ScaledInput> fusable_scale(const Graph& graph, const Node& matmul, size_t i) {
  if (i >= matmul.inputs.size() || matmul.inputs[i] == kNoValue) return std::nullopt;
  const ValueId scaled = matmul.inputs[i];
  const NodeId mul_id = graph.value(scaled).producer;
  NodeId reader = kNoNode;
  if (mul_id == kNoNode || only_reader(graph, scaled, &reader) == nullptr) return std::nullopt;
  const Node& mul = graph.node(mul_id);
  if (mul.op_type != "Mul" || !mul.domain.empty() || mul.inputs.size() != 2) return std::nullopt;
  for (size_t c = 0; c < 2; ++c) {
    const Value& factor = graph.value(mul.inputs[c]);
    const Value& x = graph.value(mul.inputs[1 - c]);
    if (factor.is_constant() && factor.dtype == DType::kF32 && factor.constant->elements() == 1 &&
        !x.is_constant() && x.dtype == DType::kF32 &&
        x.shape.dims == graph.value(scaled).shape.dims) {
      return ScaledInput{mul.inputs[1 - c], mul_id, factor.constant->values<float>()[0]};
    }
  }
  return std::nullopt;
}

std::optional<float> fusable_result_scale(const Graph& graph, ValueId result, const Node& node) {
  const bool mul = node.op_type == "Mul", div = node.op_type == "Div";
  if ((!mul && !div) || !node.domain.empty() || node.inputs.size() != 2 ||
      node.outputs.size() != 1 || graph.value(result).dtype != DType::kF32) {
    return std::nullopt;
  }
  for (size_t c = 0; c < 2; ++c) {
    const Value& factor = graph.value(node.inputs[c]);
    if (node.inputs[1 - c] != result || (div && c == 0) || !factor.is_constant() ||
        factor.dtype != DType::kF32 || factor.constant->elements() != 1 ||
        graph.value(node.outputs[0]).shape.dims != graph.value(result).shape.dims) {
      continue;
    }
    const float f = factor.constant->values<float>()[0];
    if (!std::isfinite(f) || (div && f == 0.0f)) return std::nullopt;
    return div ? 1.0f / f : f;
  }
  return std::nullopt;
}

namespace {

// The node making a Conv's input 0 where only that Conv reads it, with its id; else nullptr.
const Node* conv_input_producer(const Graph& graph, const Node& conv, NodeId* id) {
  if (conv.op_type != "Conv" || !conv.domain.empty() || conv.inputs.empty() ||
      conv.inputs[0] == kNoValue) {
    return nullptr;
  }
  *id = graph.value(conv.inputs[0]).producer;
  NodeId reader = kNoNode;
  if (*id == kNoNode || only_reader(graph, conv.inputs[0], &reader) == nullptr) return nullptr;
  return &graph.node(*id);
}

}  // namespace

std::optional<ScaledConvInput> fusable_input_scale(const Graph& graph, const Node& conv) {
  NodeId mul_id = kNoNode;
  const Node* producer = conv_input_producer(graph, conv, &mul_id);
  if (producer == nullptr) return std::nullopt;
  const ValueId scaled = conv.inputs[0];
  const Node& mul = *producer;
  if (mul.op_type != "Mul" || !mul.domain.empty() || mul.inputs.size() != 2 ||
      mul.inputs[0] == mul.inputs[1]) {
    return std::nullopt;
  }
  for (size_t i = 0; i < 2; ++i) {
    const Value& x = graph.value(mul.inputs[i]);
    const Value& f = graph.value(mul.inputs[1 - i]);
    const auto rank = x.shape.rank();
    if (x.dtype != DType::kF32 || f.dtype != DType::kF32 || (rank != 3 && rank != 4) ||
        !x.shape.is_static() || !f.shape.is_static() || f.shape.rank() != rank ||
        x.shape.dims != graph.value(scaled).shape.dims) {
      continue;
    }
    bool per_channel = f.shape.dims[1] == x.shape.dims[1] &&
                       (f.shape.dims[0] == 1 || f.shape.dims[0] == x.shape.dims[0]);
    for (size_t d = 2; d < rank; ++d) per_channel = per_channel && f.shape.dims[d] == 1;
    if (per_channel) return ScaledConvInput{mul.inputs[i], mul.inputs[1 - i], mul_id};
  }
  return std::nullopt;
}

std::optional<ActivationChain> activation_chain(const Graph& graph, NodeId id) {
  const Node& node = graph.node(id);
  if (!node.domain.empty()) return std::nullopt;
  if (node.op_type == "Erf") return gelu_chain(graph, id);
  if (node.op_type == "Sigmoid") return silu_chain(graph, id);
  return std::nullopt;
}

std::optional<FusedNode> channel_layer_norm(const Graph& graph, NodeId id) {
  const Node& ln = graph.node(id);
  if (ln.op_type != "LayerNormalization" || !ln.domain.empty() || ln.inputs.size() < 2 ||
      ln.outputs.empty() || ln.inputs[0] == kNoValue || ln.inputs[1] == kNoValue) {
    return std::nullopt;
  }
  for (size_t i = 1; i < ln.outputs.size(); ++i) {  // the statistics outputs must be absent
    if (ln.outputs[i] != kNoValue) return std::nullopt;
  }
  const int64_t axis = ln.attr_int("axis", -1);
  const NodeId first = graph.value(ln.inputs[0]).producer;
  NodeId last = kNoNode, reader = kNoNode;
  if ((axis != -1 && axis != 3) || first == kNoNode ||
      only_reader(graph, ln.inputs[0], &reader) == nullptr) {
    return std::nullopt;
  }
  const Node* back = only_reader(graph, ln.outputs[0], &last);
  const Node& forth = graph.node(first);
  const auto permutes = [](const Node& n, const std::vector<int64_t>& perm) {
    return n.op_type == "Transpose" && n.domain.empty() && n.inputs.size() == 1 &&
           n.attr_ints("perm") == perm;
  };
  if (back == nullptr || !permutes(forth, {0, 2, 3, 1}) || !permutes(*back, {0, 3, 1, 2})) {
    return std::nullopt;
  }
  const Value& x = graph.value(forth.inputs[0]);
  if (x.dtype != DType::kF32 || x.shape.rank() != 4 || !x.shape.is_static() ||
      graph.value(ln.inputs[1]).shape.elements() != x.shape.dims[1]) {
    return std::nullopt;
  }
  Node op{ln.name, kChannelLayerNormOp, "", {forth.inputs[0], ln.inputs[1]}, {back->outputs[0]},
          {}};
  if (ln.inputs.size() > 2 && ln.inputs[2] != kNoValue) op.inputs.push_back(ln.inputs[2]);
  op.attributes["epsilon"] = ln.attr_float("epsilon", 1e-5f);
  return FusedNode{std::move(op), {first, last}};
}

namespace {

// The per-channel constant of `node` (a binary op reading `v`) for channels on axis 1 of a
// rank `rank` tensor of `channels` channels: [C, 1, ...] or [1, C, 1, ...] right-aligned.
std::optional<ValueId> channel_constant(const Graph& graph, const Node& node, const char* op,
                                        ValueId v, size_t rank, int64_t channels) {
  const ValueId other = other_input(node, op, v);
  if (other == kNoValue || node.outputs.size() != 1) return std::nullopt;
  const Value& c = graph.value(other);
  const Shape& dims = c.shape.dims;
  if (!c.is_constant() || c.dtype != DType::kF32 || dims.size() > rank || rank < 2 ||
      c.shape.elements() != channels) {
    return std::nullopt;
  }
  const size_t pad = rank - dims.size();  // dims[d - pad] is axis d
  if (pad > 1 || dims[1 - pad] != channels) return std::nullopt;
  return other;
}

}  // namespace

std::optional<ValueId> fusable_output_scale(const Graph& graph, const Node& conv, ValueId result,
                                            const Node& mul) {
  const auto f32_constant = [&](ValueId v) {
    return v != kNoValue && graph.value(v).is_constant() && graph.value(v).dtype == DType::kF32;
  };
  if (conv.op_type != "Conv" || !conv.domain.empty() || conv.inputs.size() < 2 ||
      !f32_constant(conv.inputs[1]) ||
      (conv.inputs.size() > 2 && conv.inputs[2] != kNoValue && !f32_constant(conv.inputs[2]))) {
    return std::nullopt;
  }
  const Value& y = graph.value(result);
  const Shape& w = graph.value(conv.inputs[1]).shape.dims;
  if (y.dtype != DType::kF32 || !y.shape.is_static() || y.shape.rank() < 3 || w.empty() ||
      y.shape.dims[1] != w[0] || graph.value(mul.outputs[0]).shape.dims != y.shape.dims) {
    return std::nullopt;
  }
  return channel_constant(graph, mul, "Mul", result, y.shape.rank(), w[0]);
}

std::optional<FusedNode> group_norm_epilogue(const Graph& graph, NodeId id) {
  const Node& norm = graph.node(id);
  if (norm.op_type != "InstanceNormalization" || !norm.domain.empty() || norm.inputs.size() != 3 ||
      norm.outputs.size() != 1 || graph.value(norm.outputs[0]).dtype != DType::kF32) {
    return std::nullopt;
  }
  NodeId reshape_id = kNoNode, mul_id = kNoNode, add_id = kNoNode;
  const Node* reshape = only_reader(graph, norm.outputs[0], &reshape_id);
  if (reshape == nullptr || reshape->op_type != "Reshape" || reshape->outputs.size() != 1 ||
      reshape->inputs.size() != 2 || !graph.value(reshape->inputs[1]).is_constant()) {
    return std::nullopt;
  }
  const Value& grouped = graph.value(reshape->outputs[0]);
  const size_t rank = grouped.shape.rank();
  if (!grouped.shape.is_static() || rank < 3 || grouped.shape.elements() == 0) return std::nullopt;
  const int64_t channels = grouped.shape.dims[1];
  const Node* mul = only_reader(graph, reshape->outputs[0], &mul_id);
  const auto gamma = mul != nullptr
                         ? channel_constant(graph, *mul, "Mul", reshape->outputs[0], rank, channels)
                         : std::nullopt;
  if (!gamma || graph.value(mul->outputs[0]).shape.dims != grouped.shape.dims) {
    return std::nullopt;
  }
  FusedNode fused{norm, {reshape_id, mul_id}};
  fused.op.inputs.push_back(*gamma);
  ValueId result = mul->outputs[0];
  const Node* add = only_reader(graph, result, &add_id);
  auto beta =
      add != nullptr ? channel_constant(graph, *add, "Add", result, rank, channels) : std::nullopt;
  if (beta && graph.value(add->outputs[0]).shape.dims != grouped.shape.dims) beta.reset();
  fused.op.inputs.push_back(beta ? *beta : kNoValue);
  if (beta) {
    fused.absorbed.push_back(add_id);
    result = add->outputs[0];
  }
  fused.op.attributes[kNormChannelsAttr] =
      std::vector<int64_t>{channels, grouped.shape.elements() / grouped.shape.dims[0] / channels};
  // The activation: one node, or a chain (a SiLU) that alone reads the result.
  NodeId next_id = kNoNode;
  if (const Node* next = only_reader(graph, result, &next_id)) {
    if (const auto act = fusable_activation(graph, *next)) {
      attach_activation(fused.op, *act);
      fused.absorbed.push_back(next_id);
      result = next->outputs[0];
    }
  } else if (!is_graph_output(graph, result)) {
    for (NodeId reader : graph.value(result).consumers) {
      const auto chain = activation_chain(graph, reader);
      if (!chain || chain->x != result) continue;
      const auto& readers = graph.value(result).consumers;
      if (!std::all_of(readers.begin(), readers.end(), [&](NodeId n) {
            return std::find(chain->nodes.begin(), chain->nodes.end(), n) != chain->nodes.end();
          })) {
        continue;
      }
      attach_activation(fused.op, Activation{.op = chain->op});
      fused.absorbed.insert(fused.absorbed.end(), chain->nodes.begin(), chain->nodes.end());
      result = graph.node(chain->last).outputs[0];
      break;
    }
  }
  fused.op.outputs = {result};
  return fused;
}

std::optional<SlicedConvInput> fusable_input_slice(const Graph& graph, const Node& conv) {
  if (conv.op_type != "Conv" || !conv.domain.empty() || conv.inputs.empty()) return std::nullopt;
  return fusable_channel_slice(graph, conv.inputs[0]);
}

std::optional<SlicedConvInput> fusable_channel_slice(const Graph& graph, ValueId sliced) {
  NodeId reader = kNoNode;
  if (sliced == kNoValue || only_reader(graph, sliced, &reader) == nullptr) return std::nullopt;
  const NodeId id = graph.value(sliced).producer;
  if (id == kNoNode) return std::nullopt;
  const Node& slice = graph.node(id);
  if (slice.op_type != "Slice" || !slice.domain.empty() || slice.inputs.size() < 3 ||
      slice.inputs[0] == kNoValue) {
    return std::nullopt;
  }
  const Value& x = graph.value(slice.inputs[0]);
  const Value& out = graph.value(sliced);
  const size_t rank = x.shape.rank();
  if (x.dtype != DType::kF32 || !x.shape.is_static() || !out.shape.is_static() ||
      (rank != 3 && rank != 4) || out.shape.rank() != rank) {
    return std::nullopt;
  }
  std::vector<const Tensor*> params;
  for (size_t i = 1; i < 5; ++i) {
    if (i >= slice.inputs.size() || slice.inputs[i] == kNoValue) {
      params.push_back(nullptr);
      continue;
    }
    const Value& p = graph.value(slice.inputs[i]);
    if (!p.is_constant()) return std::nullopt;
    params.push_back(&*p.constant);
  }
  auto axes = node_detail::slice_of(slice, graph.opset, params, x.shape.dims, out.shape.dims);
  if (!axes.is_ok() || axes->size() != rank) return std::nullopt;
  for (size_t d = 0; d < rank; ++d) {
    const SliceAxis& a = (*axes)[d];
    const bool whole = a.begin == 0 && a.step == 1 && a.count == x.shape.dims[d];
    if (d != 1 ? !whole : a.step != 1 || a.count < 1) return std::nullopt;
  }
  return SlicedConvInput{slice.inputs[0], x.shape.dims[1], (*axes)[1].begin, id};
}

std::optional<ChannelShuffle> fusable_channel_shuffle(const Graph& graph, const Node& concat) {
  if (concat.op_type != "Concat" || !concat.domain.empty() || concat.outputs.size() != 1 ||
      concat.inputs.size() < 2) {
    return std::nullopt;
  }
  const Value& out = graph.value(concat.outputs[0]);
  const size_t rank = out.shape.rank();
  int64_t axis = concat.attr_int("axis", 0);
  if (axis < 0) axis += static_cast<int64_t>(rank);
  if (axis != 1 || (rank != 3 && rank != 4) || out.dtype != DType::kF32 || !out.shape.is_static()) {
    return std::nullopt;
  }
  const auto groups = static_cast<int64_t>(concat.inputs.size());
  const int64_t channels = out.shape.dims[1];
  for (ValueId v : concat.inputs) {
    if (v == kNoValue || graph.value(v).shape.rank() != rank ||
        graph.value(v).shape.dims[1] * groups != channels) {
      return std::nullopt;
    }
  }
  // The three nodes, each the only reader of the one before's output (not a graph output; the
  // last node's may be), as `op` making `dims`.
  ChannelShuffle shuffle{groups, concat.outputs[0], {}};
  const auto next = [&](const char* op, const std::vector<int64_t>& dims) {
    NodeId id = kNoNode;
    const Node* node = only_reader(graph, shuffle.y, &id);
    if (node == nullptr || node->op_type != op || !node->domain.empty() ||
        node->outputs.size() != 1 || node->inputs[0] != shuffle.y) {
      return false;
    }
    const Value& value = graph.value(node->outputs[0]);
    if (value.dtype != DType::kF32 || value.shape.dims != dims) return false;
    shuffle.nodes.push_back(id);
    shuffle.y = node->outputs[0];
    return true;
  };
  std::vector<int64_t> grouped = out.shape.dims, swapped = out.shape.dims;
  grouped[1] = groups;
  grouped.insert(grouped.begin() + 2, channels / groups);
  swapped[1] = channels / groups;
  swapped.insert(swapped.begin() + 2, groups);
  std::vector<int64_t> perm(rank + 1);
  for (size_t d = 0; d <= rank; ++d) perm[d] = static_cast<int64_t>(d);
  std::swap(perm[1], perm[2]);
  if (!next("Reshape", grouped) || !next("Transpose", swapped) ||
      transpose_perm(graph.node(shuffle.nodes[1]), rank + 1) != perm ||
      !next("Reshape", out.shape.dims)) {
    return std::nullopt;
  }
  return shuffle;
}

std::optional<FusedNode> softmax_nan_guard(const Graph& graph, NodeId id) {
  const Node& softmax = graph.node(id);
  if ((softmax.op_type != "Softmax" && softmax.op_type != "LogSoftmax") ||
      !softmax.domain.empty() || softmax.outputs.size() != 1) {
    return std::nullopt;
  }
  const ValueId result = softmax.outputs[0];
  const auto& readers = graph.value(result).consumers;
  if (readers.size() != 2 || is_graph_output(graph, result) ||
      graph.value(result).dtype != DType::kF32) {
    return std::nullopt;
  }
  for (size_t first = 0; first < 2; ++first) {
    const NodeId isnan_id = readers[first], where_id = readers[1 - first];
    const Node& isnan = graph.node(isnan_id);
    const Node& where = graph.node(where_id);
    NodeId reader = kNoNode;
    if (isnan.op_type != "IsNaN" || !isnan.domain.empty() || isnan.outputs.size() != 1 ||
        where.op_type != "Where" || !where.domain.empty() || where.inputs.size() != 3 ||
        where.outputs.size() != 1 || only_reader(graph, isnan.outputs[0], &reader) == nullptr ||
        reader != where_id || where.inputs[0] != isnan.outputs[0] || where.inputs[2] != result) {
      continue;
    }
    const Value& fill = graph.value(where.inputs[1]);
    if (!fill.is_constant() || fill.dtype != DType::kF32 || fill.constant->elements() != 1 ||
        graph.value(where.outputs[0]).shape.dims != graph.value(result).shape.dims) {
      continue;
    }
    Node op = softmax;
    op.outputs[0] = where.outputs[0];
    op.attributes[kNanToAttr] = fill.constant->values<float>()[0];
    return FusedNode{std::move(op), {isnan_id, where_id}};
  }
  return std::nullopt;
}

void attach_activation(Node& conv, const Activation& activation) {
  conv.attributes[kFusedActivationAttr] = static_cast<int64_t>(activation.op);
  conv.attributes[kFusedAlphaAttr] = activation.alpha;
  conv.attributes[kFusedBetaAttr] = activation.beta;
}

}  // namespace hsched::opencl
