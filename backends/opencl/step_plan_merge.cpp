// The pass over a ClProgram's planned steps that merges several steps into one
// (group_sibling_products: step_plan.h).
#include <algorithm>
#include <map>
#include <optional>
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

}  // namespace

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
