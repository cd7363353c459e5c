// plan_kernels (step_plan.h) and nodes_without_kernels (program.h): which nodes a ClProgram runs
// as steps, and the fusions that let one step run several nodes (kernels/node_ops.h).
#include "backends/opencl/step_plan.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "backends/opencl/kernels/node_ops.h"
#include "backends/opencl/program.h"

namespace hsched::opencl {
namespace detail {
namespace {

// For a Concat over the channels (axis 1, rank 3 or 4, f32, static) whose every input is a
// different Conv step's output that only it reads: those steps' indices in order, with their
// channels; nullopt otherwise.
std::optional<std::vector<std::pair<size_t, int64_t>>> concat_slices(
    const Graph& graph, const Node& concat, const std::map<ValueId, size_t>& conv_step_of) {
  if (concat.outputs.size() != 1 || concat.inputs.empty()) return std::nullopt;
  const Value& out = graph.value(concat.outputs[0]);
  const auto rank = static_cast<int64_t>(out.shape.rank());
  int64_t axis = concat.attr_int("axis", 0);
  if (axis < 0) axis += rank;
  if (axis != 1 || (rank != 3 && rank != 4) || out.dtype != DType::kF32 || !out.shape.is_static()) {
    return std::nullopt;
  }
  const auto& outputs = graph.outputs();
  std::vector<std::pair<size_t, int64_t>> slices;
  std::set<ValueId> seen;
  for (ValueId v : concat.inputs) {
    const auto step = v == kNoValue ? conv_step_of.end() : conv_step_of.find(v);
    if (step == conv_step_of.end() || !seen.insert(v).second) return std::nullopt;
    const Value& value = graph.value(v);
    if (value.consumers.size() != 1 || value.dtype != DType::kF32 || !value.shape.is_static() ||
        value.shape.rank() != out.shape.rank() ||
        std::find(outputs.begin(), outputs.end(), v) != outputs.end()) {
      return std::nullopt;
    }
    slices.emplace_back(step->second, value.shape.dims[1]);
  }
  return slices;
}

}  // namespace

Result<std::vector<PlannedStep>> plan_kernels(const Graph& graph) {
  HSCHED_ASSIGN_OR_RETURN(std::vector<NodeId> order, graph.topological_order());
  std::vector<bool> absorbed(graph.nodes().size(), false);
  std::map<NodeId, ActivationChain> chains;  // by the chain's last node
  std::map<ValueId, NodeId> chain_of_input;  // x -> the last node of the chain reading it
  std::map<NodeId, FusedNode> rewritten;     // channel LayerNorms and guarded Softmaxes, by anchor
  std::map<NodeId, std::vector<std::pair<size_t, ScaledInput>>> scaled;  // by their MatMul
  std::map<NodeId, std::vector<std::pair<size_t, NodeId>>> transposed;   // by their MatMul
  std::map<NodeId, ScaledConvInput> channel_scaled;                      // by their Conv
  for (NodeId id : order) {
    const Node& node = graph.node(id);
    if (auto scale = fusable_input_scale(graph, node)) {
      if (!absorbed[static_cast<size_t>(scale->mul)] && !chains.count(scale->mul)) {
        absorbed[static_cast<size_t>(scale->mul)] = true;
        channel_scaled.emplace(id, *scale);
      }
      continue;
    }
    if (node.op_type == "MatMul" && node.domain.empty()) {
      for (size_t i = 0; i < 2; ++i) {
        ValueId operand = node.inputs[i];
        const auto scale = fusable_scale(graph, node, i);
        // (A GELU's last Mul, by 0.5, stays the GELU's.)
        if (scale && !absorbed[static_cast<size_t>(scale->mul)] && !chains.count(scale->mul)) {
          absorbed[static_cast<size_t>(scale->mul)] = true;
          scaled[id].emplace_back(i, *scale);
          operand = scale->value;
        }
        const auto transpose = fusable_transpose(graph, node, i, operand);
        if (transpose && !absorbed[static_cast<size_t>(*transpose)]) {
          absorbed[static_cast<size_t>(*transpose)] = true;
          transposed[id].emplace_back(i, *transpose);
        }
      }
      continue;
    }
    auto fused = channel_layer_norm(graph, id);
    if (!fused) fused = softmax_nan_guard(graph, id);
    if (fused) {
      for (NodeId n : fused->absorbed) absorbed[static_cast<size_t>(n)] = true;
      rewritten.emplace(id, std::move(*fused));
      continue;
    }
    auto chain = activation_chain(graph, id);
    if (!chain) continue;
    for (NodeId n : chain->nodes) absorbed[static_cast<size_t>(n)] = n != chain->last;
    chain_of_input[chain->x] = chain->last;
    chains.emplace(chain->last, std::move(*chain));
  }
  const std::set<ValueId> outputs(graph.outputs().begin(), graph.outputs().end());
  std::vector<size_t> position(graph.nodes().size(), 0);
  for (size_t i = 0; i < order.size(); ++i) position[static_cast<size_t>(order[i])] = i;
  // Whether `v` exists before node `id` runs: a graph input or constant, or made by a node that
  // comes earlier (a step that absorbs that node comes earlier still).
  const auto produced_before = [&](ValueId v, NodeId id) {
    const NodeId producer = graph.value(v).producer;
    return producer == kNoNode ||
           position[static_cast<size_t>(producer)] < position[static_cast<size_t>(id)];
  };
  std::vector<PlannedStep> steps;
  std::map<ValueId, size_t> conv_step_of;  // a Conv step's output -> its index in `steps`
  for (NodeId id : order) {
    if (absorbed[static_cast<size_t>(id)]) continue;
    PlannedStep step{id, graph.node(id), is_view_op(graph.node(id).op_type), {}};
    if (step.op.op_type == "Concat" && step.op.domain.empty()) {
      if (const auto slices = concat_slices(graph, step.op, conv_step_of)) {
        int64_t first = 0;
        for (const auto& [index, channels] : *slices) {
          PlannedStep& conv = steps[index];
          conv.op.attributes[kConvStoredInAttr] =
              std::vector<int64_t>{graph.value(step.op.outputs[0]).shape.dims[1], first};
          conv.op.outputs[0] = step.op.outputs[0];
          first += channels;
        }
        steps[slices->back().first].absorbed.push_back(id);
        continue;
      }
    }
    if (const auto fused = rewritten.find(id); fused != rewritten.end()) {
      step.op = std::move(fused->second.op);
      step.absorbed = std::move(fused->second.absorbed);
      steps.push_back(std::move(step));
      continue;
    }
    if (const auto chain = chains.find(id); chain != chains.end()) {
      const ActivationChain& c = chain->second;
      step.op = Node{step.op.name, c.op_type, "", {c.x}, {step.op.outputs[0]}, {}};
      for (NodeId n : c.nodes) {
        if (n != id) step.absorbed.push_back(n);
      }
      steps.push_back(std::move(step));
      continue;
    }
    if (const auto scales = scaled.find(id); scales != scaled.end()) {
      float alpha = 1.0f;
      for (const auto& [i, scale] : scales->second) {
        step.op.inputs[i] = scale.value;
        alpha *= scale.factor;
        step.absorbed.push_back(scale.mul);
      }
      step.op.attributes[kMatMulAlphaAttr] = alpha;
    }
    if (const auto operands = transposed.find(id); operands != transposed.end()) {
      for (const auto& [i, t] : operands->second) {
        const Node& transpose = graph.node(t);
        step.op.inputs[i] = transpose.inputs[0];
        step.op.attributes[kMatMulPermAttrs[i]] =
            transpose_perm(transpose, graph.value(transpose.inputs[0]).shape.rank());
        step.absorbed.push_back(t);
      }
    }
    if (const auto scale = channel_scaled.find(id); scale != channel_scaled.end()) {
      step.op.inputs[0] = scale->second.x;
      step.op.inputs.resize(kInputScaleInput + 1, kNoValue);
      step.op.inputs[kInputScaleInput] = scale->second.factors;
      step.absorbed.push_back(scale->second.mul);
    }
    const bool conv = step.op.op_type == "Conv", matmul = step.op.op_type == "MatMul";
    if ((conv || matmul) && graph.value(step.op.outputs[0]).dtype == DType::kF32) {
      // The epilogue, stage by stage, each taking the node that alone reads the result so far:
      // a MatMul's bias row, a residual Add, an activation (one node or a chain).
      ValueId result = step.op.outputs[0];
      const auto take = [&](NodeId n, ValueId out) {
        step.absorbed.push_back(n);
        absorbed[static_cast<size_t>(n)] = true;
        result = out;
      };
      const auto sole_reader = [&](ValueId v) -> const Node* {
        const Value& value = graph.value(v);
        if (outputs.count(v) || value.consumers.size() != 1) return nullptr;
        const NodeId n = value.consumers[0];
        return absorbed[static_cast<size_t>(n)] || chains.count(n) ? nullptr : &graph.node(n);
      };
      if (const Node* next = matmul ? sole_reader(result) : nullptr) {
        if (auto bias = fusable_bias(graph, step.op, *next)) {
          step.op.inputs.push_back(*bias);  // MatMul's input 2: added to each row
          take(graph.value(result).consumers[0], next->outputs[0]);
        }
      }
      bool with_residual = false;
      if (const Node* next = sole_reader(result)) {
        const auto residual = fusable_residual(graph, result, *next);
        if (residual && produced_before(*residual, id)) {
          step.op.inputs.resize(std::max(step.op.inputs.size(), kResidualInput + 1), kNoValue);
          step.op.inputs[kResidualInput] = *residual;
          take(graph.value(result).consumers[0], next->outputs[0]);
          with_residual = true;
        }
      }
      const Node* next = sole_reader(result);
      const auto activation = next ? fusable_activation(graph, *next) : std::nullopt;
      const auto chain_last = chain_of_input.find(result);
      if (activation) {
        attach_activation(step.op, *activation);
        take(graph.value(result).consumers[0], next->outputs[0]);
      } else if (chain_last != chain_of_input.end() && !outputs.count(result)) {
        // A chain that alone reads the result: the last of the epilogue, in its last node's place.
        const ActivationChain& c = chains.at(chain_last->second);
        const auto& readers = graph.value(result).consumers;
        const bool alone = std::all_of(readers.begin(), readers.end(), [&](NodeId n) {
          return std::find(c.nodes.begin(), c.nodes.end(), n) != c.nodes.end();
        });
        if (alone) {
          attach_activation(step.op, Activation{.op = c.op});
          step.absorbed.insert(step.absorbed.end(), c.nodes.begin(), c.nodes.end());
          absorbed[static_cast<size_t>(c.last)] = true;
          result = graph.node(c.last).outputs[0];
          chains.erase(chain_last->second);
        }
      }
      // A MatMul stores its result transposed for a Transpose that alone reads it (attention's
      // heads merged back), unless a residual, read in the stored layout, came before.
      if (const Node* last = matmul && !with_residual ? sole_reader(result) : nullptr) {
        if (auto perm = fusable_result_transpose(graph, graph.node(id), result, *last)) {
          step.op.attributes[kMatMulResultPermAttr] = std::move(*perm);
          take(graph.value(result).consumers[0], last->outputs[0]);
        }
      }
      step.op.outputs[0] = result;
    }
    if (conv) conv_step_of[step.op.outputs[0]] = steps.size();
    steps.push_back(std::move(step));
  }
  return steps;
}

}  // namespace detail

std::vector<bool> nodes_without_kernels(const Graph& graph) {
  std::vector<bool> without(graph.nodes().size(), false);
  auto planned = detail::plan_kernels(graph);
  if (!planned.is_ok()) return without;
  for (const detail::PlannedStep& step : *planned) {
    if (step.view) without[static_cast<size_t>(step.node)] = true;
    for (NodeId n : step.absorbed) without[static_cast<size_t>(n)] = true;
  }
  return without;
}

}  // namespace hsched::opencl
