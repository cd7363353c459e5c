#include "backends/cpu/step_plan.h"

#include <numeric>
#include <set>

#include "backends/cpu/kernels/norm_fusion.h"
#include "backends/cpu/kernels/post_op_fusion.h"
#include "backends/cpu/kernels/qdq_fusion.h"
#include "backends/cpu/program.h"

namespace hsched::cpu {

namespace {

// Byte offsets of a view op's outputs inside its input: a Reshape-like op is its input's bytes;
// a Split along an axis with only 1s before it cuts them into consecutive pieces. nullopt for any
// other node.
std::optional<std::vector<int64_t>> view_offsets(const Graph& graph, const Node& node) {
  if (is_view_op(node.op_type) && node.outputs.size() == 1) return std::vector<int64_t>{0};
  if (node.op_type != "Split" || node.inputs.empty() || node.inputs[0] == kNoValue) {
    return std::nullopt;
  }
  const auto& dims = graph.value(node.inputs[0]).shape.dims;
  int64_t axis = node.attr_int("axis", 0);
  if (axis < 0) axis += static_cast<int64_t>(dims.size());
  if (axis < 0 || axis >= static_cast<int64_t>(dims.size())) return std::nullopt;
  for (int64_t a = 0; a < axis; ++a) {
    if (dims[static_cast<size_t>(a)] != 1) return std::nullopt;
  }
  std::vector<int64_t> offsets;
  int64_t at = 0;
  for (ValueId out : node.outputs) {
    if (out == kNoValue) return std::nullopt;
    offsets.push_back(at);
    at += graph.value(out).byte_size();
  }
  return offsets;
}

// The steps of `nodes` not yet absorbed, as the next pass sees them.
std::vector<size_t> kept_steps(const std::vector<bool>& absorbed) {
  std::vector<size_t> kept;
  for (size_t s = 0; s < absorbed.size(); ++s) {
    if (!absorbed[s]) kept.push_back(s);
  }
  return kept;
}

}  // namespace

bool alias_constant_view(Graph& graph, const Node& node) {
  if (!is_view_op(node.op_type) || node.outputs.size() != 1 || node.inputs.empty() ||
      node.inputs[0] == kNoValue || node.outputs[0] == kNoValue) {
    return false;
  }
  const Value& in = graph.value(node.inputs[0]);
  if (!in.is_constant()) return false;
  Value& out = graph.value(node.outputs[0]);
  // Only the same bytes under another shape: anything else is left to the op's kernel, which
  // refuses it (an alias claiming more bytes than the constant holds would be read past its end).
  if (!out.shape.is_static() || out.dtype != in.dtype ||
      out.shape.elements() != in.constant->elements()) {
    return false;
  }
  out.constant = in.constant->reshaped(out.shape.dims);
  return true;
}

std::vector<bool> fuse_steps(Graph& graph, const std::vector<Node*>& nodes) {
  std::vector<bool> absorbed(nodes.size(), false);
  // Each pass sees only the steps the passes before it left, as the program runs them.
  const auto pass = [&](auto&& fusion) {
    const std::vector<size_t> kept = kept_steps(absorbed);
    std::vector<Node*> pass_nodes;
    for (size_t s : kept) pass_nodes.push_back(nodes[s]);
    std::vector<bool> pass_absorbed(kept.size(), false);
    fusion(pass_nodes, pass_absorbed);
    for (size_t i = 0; i < kept.size(); ++i) {
      if (pass_absorbed[i]) absorbed[kept[i]] = true;
    }
  };
  pass([&](const std::vector<Node*>& pass_nodes, std::vector<bool>& pass_absorbed) {
    fuse_qdq(graph, pass_nodes, pass_absorbed);
  });
  pass([&](const std::vector<Node*>& pass_nodes, std::vector<bool>& pass_absorbed) {
    fuse_group_norms(graph, pass_nodes, pass_absorbed);
    fuse_channel_layer_norms(graph, pass_nodes, pass_absorbed);
    fuse_quantized_row_ops(graph, pass_nodes, pass_absorbed);
  });
  pass([&](const std::vector<Node*>& pass_nodes, std::vector<bool>& pass_absorbed) {
    fuse_post_ops(graph, pass_nodes, pass_absorbed);
  });
  return absorbed;
}

ViewAliases alias_views(const Graph& graph, const std::vector<const Node*>& steps) {
  const size_t n = graph.values().size();
  const std::set<ValueId> graph_inputs(graph.inputs().begin(), graph.inputs().end());
  const std::set<ValueId> graph_outputs(graph.outputs().begin(), graph.outputs().end());
  ViewAliases views;
  views.root.resize(n);
  std::iota(views.root.begin(), views.root.end(), size_t{0});
  views.offset_in_root.assign(n, 0);
  views.aliased.assign(steps.size(), false);
  for (size_t s = 0; s < steps.size(); ++s) {
    const Node& node = *steps[s];
    const auto offsets = view_offsets(graph, node);
    const auto in_root = node.inputs.empty() || node.inputs[0] == kNoValue
                             ? n
                             : views.root[static_cast<size_t>(node.inputs[0])];
    const bool aliasable = offsets && in_root < n && !graph.values()[in_root].is_constant() &&
                           !graph_inputs.count(static_cast<ValueId>(in_root)) &&
                           !graph_outputs.count(static_cast<ValueId>(in_root)) &&
                           std::none_of(node.outputs.begin(), node.outputs.end(),
                                        [&](ValueId v) { return graph_outputs.count(v) != 0; });
    if (!aliasable) continue;
    const auto in = static_cast<size_t>(node.inputs[0]);
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      const auto out = static_cast<size_t>(node.outputs[i]);
      views.root[out] = in_root;
      views.offset_in_root[out] = views.offset_in_root[in] + (*offsets)[i];
    }
    views.aliased[s] = true;
  }
  return views;
}

}  // namespace hsched::cpu
