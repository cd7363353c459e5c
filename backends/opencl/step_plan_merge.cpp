// The passes over a ClProgram's planned steps that merge several steps into one
// (group_sibling_products, fuse_attention: step_plan.h).
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "backends/opencl/kernels/node_ops.h"
#include "backends/opencl/step_plan.h"

namespace hsched::opencl::detail {
namespace {

// `steps` but those `merged` into others.
std::vector<PlannedStep> without_merged(std::vector<PlannedStep> steps,
                                        const std::vector<bool>& merged) {
  std::vector<PlannedStep> kept;
  for (size_t i = 0; i < steps.size(); ++i) {
    if (!merged[i]) kept.push_back(std::move(steps[i]));
  }
  return kept;
}

// What MatMul step `step` shares with its siblings (group_sibling_products): its A, A's view
// and factor, B's shape and whether it has a bias; nullopt unless it can join a group (a constant
// f32 B of rank 2, a dense result without residual or activation, a tiled product).
std::optional<std::string> sibling_key(const Graph& graph, const PlannedStep& step) {
  const Node& op = step.op;
  if (step.view || op.op_type != "MatMul" || !op.domain.empty() || op.outputs.size() != 1 ||
      op.inputs.size() < 2 || op.inputs.size() > 3) {
    return std::nullopt;
  }
  for (const auto& [name, value] : op.attributes) {
    if (name != kMatMulViewAttrs[0] && name != kMatMulAlphaAttr) return std::nullopt;
  }
  const Value& a = graph.value(op.inputs[0]);
  const Value& b = graph.value(op.inputs[1]);
  const std::vector<int64_t> view = op.attr_ints(kMatMulViewAttrs[0]);
  const auto a_view = view.empty() ? std::nullopt : decode_view(view);
  const Shape a_shape = a_view ? a_view->dims : a.shape.dims;
  if (!b.is_constant() || b.dtype != DType::kF32 || b.shape.rank() != 2 || a_shape.size() < 2 ||
      graph.value(op.outputs[0]).dtype != DType::kF32 || !tiled_matmul(a_shape, b.shape.dims)) {
    return std::nullopt;
  }
  std::string key = std::to_string(op.inputs[0]) + "|" + b.shape.to_string() + "|" +
                    std::to_string(op.attr_float(kMatMulAlphaAttr, 1.0f)) + "|" +
                    std::to_string(op.inputs.size() == 3 && op.inputs[2] != kNoValue);
  for (int64_t v : view) key += "," + std::to_string(v);
  return key;
}

// Whether `op`'s attributes are all among `allowed`.
bool attributes_among(const Node& op, std::initializer_list<const char*> allowed) {
  return std::all_of(op.attributes.begin(), op.attributes.end(), [&](const auto& attribute) {
    return std::any_of(allowed.begin(), allowed.end(),
                       [&](const char* name) { return attribute.first == name; });
  });
}

// Whether `v` is read by node `reader` alone and is not a graph output.
bool read_only_by(const Graph& graph, ValueId v, NodeId reader) {
  const auto& outputs = graph.outputs();
  const auto& readers = graph.value(v).consumers;
  return readers.size() == 1 && readers[0] == reader &&
         std::find(outputs.begin(), outputs.end(), v) == outputs.end();
}

// Whether the Softmax of `softmax` (the graph's node) runs along the last axis of its input (of
// rank `rank`): before opset 13 the input flattened at `axis`, the same where that is the last.
bool softmax_over_last_axis(const Graph& graph, const Node& softmax, size_t rank) {
  const bool flattened = graph.opset != 0 && graph.opset < 13;
  int64_t axis = softmax.attr_int("axis", flattened ? 1 : -1);
  if (axis < 0) axis += static_cast<int64_t>(rank);
  return axis == static_cast<int64_t>(rank) - 1;
}

// The attention step for scores step `scores`, Softmax step `softmax` and output step `output`
// (fuse_attention's pattern), or nullopt.
std::optional<Node> attention_step(const Graph& graph, const PlannedStep& scores,
                                   const PlannedStep& softmax, const PlannedStep& output) {
  const Node& s = scores.op;
  const Node& o = output.op;
  const bool masked = s.inputs.size() == kResidualInput + 1 && s.inputs[2] == kNoValue &&
                      s.inputs[kResidualInput] != kNoValue;
  if (s.op_type != "MatMul" || !s.domain.empty() || (s.inputs.size() != 2 && !masked) ||
      o.op_type != "MatMul" || !o.domain.empty() || o.inputs.size() != 2 ||
      o.inputs[0] != softmax.op.outputs[0] || o.inputs[1] == o.inputs[0] ||
      !attributes_among(s, {kMatMulViewAttrs[0], kMatMulViewAttrs[1], kMatMulAlphaAttr}) ||
      !attributes_among(softmax.op, {"axis", kNanToAttr}) ||
      !attributes_among(o, {kMatMulViewAttrs[1], kMatMulResultPermAttr}) ||
      !read_only_by(graph, s.outputs[0], softmax.node) ||
      !read_only_by(graph, softmax.op.outputs[0], output.node)) {
    return std::nullopt;
  }
  const Value& scores_value = graph.value(s.outputs[0]);
  Node op{o.name,
          kAttentionOp,
          "",
          {s.inputs[0], s.inputs[1], masked ? s.inputs[3] : kNoValue, o.inputs[1]},
          {o.outputs[0]},
          s.attributes};
  for (const auto& [name, value] : o.attributes) {
    op.attributes[name == kMatMulViewAttrs[1] ? kAttentionValueViewAttr : name] = value;
  }
  if (softmax.op.has_attr(kNanToAttr)) {
    op.attributes[kNanToAttr] = softmax.op.attr_float(kNanToAttr, 0.0f);
  }
  op.attributes[kAttentionScoresAttr] = scores_value.shape.dims;
  for (ValueId v : {op.inputs[0], op.inputs[1], op.inputs[2], op.inputs[3], op.outputs[0]}) {
    if (v != kNoValue &&
        (graph.value(v).dtype != DType::kF32 || !graph.value(v).shape.is_static())) {
      return std::nullopt;
    }
  }
  auto fusion = attention_fusion(op);
  if (!scores_value.shape.is_static() ||
      !softmax_over_last_axis(graph, graph.node(softmax.node), scores_value.shape.rank()) ||
      !fusion) {
    return std::nullopt;
  }
  if (masked) fusion->mask_shape = graph.value(op.inputs[2]).shape.dims;
  const auto shape = [&](size_t i) { return graph.value(op.inputs[i]).shape.dims; };
  if (!fits_attention(shape(0), shape(1), shape(3), *fusion)) return std::nullopt;
  return op;
}

}  // namespace

std::vector<PlannedStep> fuse_attention(const Graph& graph, std::vector<PlannedStep> steps) {
  std::map<ValueId, size_t> made_by;  // a step's first output -> the step
  for (size_t i = 0; i < steps.size(); ++i) {
    if (!steps[i].view && !steps[i].op.outputs.empty()) made_by[steps[i].op.outputs[0]] = i;
  }
  std::vector<bool> merged(steps.size(), false);
  for (size_t i = 0; i < steps.size(); ++i) {
    PlannedStep& output = steps[i];
    if (output.view || output.op.op_type != "MatMul" || output.op.inputs.empty()) continue;
    const auto softmax = made_by.find(output.op.inputs[0]);
    if (softmax == made_by.end() || steps[softmax->second].op.op_type != "Softmax" ||
        !steps[softmax->second].op.domain.empty() || steps[softmax->second].op.inputs.size() != 1) {
      continue;
    }
    const auto scores = made_by.find(steps[softmax->second].op.inputs[0]);
    if (scores == made_by.end() || merged[scores->second] || merged[softmax->second]) continue;
    auto op = attention_step(graph, steps[scores->second], steps[softmax->second], output);
    if (!op) continue;
    for (const size_t j : {scores->second, softmax->second}) {
      merged[j] = true;
      output.grouped.push_back(steps[j].node);  // (their compute stays, for the cost model)
      output.absorbed.insert(output.absorbed.end(), steps[j].absorbed.begin(),
                             steps[j].absorbed.end());
    }
    output.op = std::move(*op);
  }
  return without_merged(std::move(steps), merged);
}

std::vector<PlannedStep> group_sibling_products(const Graph& graph,
                                                std::vector<PlannedStep> steps) {
  std::map<std::string, std::vector<size_t>> siblings;  // by key, step indices in order
  for (size_t i = 0; i < steps.size(); ++i) {
    if (const auto key = sibling_key(graph, steps[i])) siblings[*key].push_back(i);
  }
  std::vector<bool> merged(steps.size(), false);
  for (const auto& [key, indices] : siblings) {
    for (size_t first = 0; first + 1 < indices.size(); first += kMaxGroupedProducts) {
      const size_t count = std::min(kMaxGroupedProducts, indices.size() - first);
      PlannedStep& group = steps[indices[first]];
      Node op{group.op.name, kMatMulGroupOp, "", {group.op.inputs[0]}, {}, group.op.attributes};
      for (size_t j = first; j < first + count; ++j) {
        PlannedStep& member = steps[indices[j]];
        op.inputs.push_back(member.op.inputs[1]);
        op.inputs.push_back(member.op.inputs.size() == 3 ? member.op.inputs[2] : kNoValue);
        op.outputs.push_back(member.op.outputs[0]);
        if (j == first) continue;
        group.grouped.push_back(member.node);
        group.absorbed.insert(group.absorbed.end(), member.absorbed.begin(), member.absorbed.end());
        merged[indices[j]] = true;
      }
      group.op = std::move(op);
    }
  }
  return without_merged(std::move(steps), merged);
}

}  // namespace hsched::opencl::detail
