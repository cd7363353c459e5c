// StepPlanner's passes for the QDQ fusions (step_plan_planner.h): 8-bit elementwise chains and
// binary ops between DequantizeLinear and QuantizeLinear nodes, quantized MatMuls reading their
// operands through chains and moves, requantized epilogues.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "backends/opencl/kernels/node_ops.h"
#include "backends/opencl/step_plan_planner.h"

namespace hsched::opencl::detail {

void StepPlanner::find_quantized_operand_views() {
  for (const auto& [id, q] : quantized_matmuls_) {
    const Node& matmul = graph_.node(id);
    if (matmul.op_type != "MatMul") continue;
    for (size_t i = 0; i < 2; ++i) {
      ValueId operand = i == 0 ? q.a : q.b;
      if (graph_.value(operand).is_constant()) continue;
      ViewedOperand v{id, i, operand, {}, {}, true};
      const auto chain = fusable_operand_chain(graph_, matmul, operand);
      const auto fused = chain ? rewritten_.find(chain->first) : rewritten_.end();
      if (fused != rewritten_.end() && !absorbed_[static_cast<size_t>(chain->first)] &&
          std::is_permutation(chain->absorbed.begin(), chain->absorbed.end(),
                              fused->second.absorbed.begin(), fused->second.absorbed.end())) {
        v.chain = std::get<std::vector<float>>(chain->op.attributes.at(kQdqChainAttr));
        v.chain[7] = graph_.value(chain->op.inputs[0]).dtype == DType::kI8 ? -128.0f : 0.0f;
        v.chain_first = chain->first;
        v.operand = operand = chain->op.inputs[0];
      }
      // (A chain with no view is read so too: tabulated, it costs 256 evaluations a work group.)
      auto view = fusable_quantized_operand_view(graph_, matmul, i, operand, true, absorbed_);
      if (!view && v.chain.empty()) continue;
      v.view = view ? std::move(*view) : OperandView{operand, {}, {}};
      viewed_.push_back(std::move(v));
    }
  }
  settle_operand_views();
}

void StepPlanner::find_qdq_elementwise() {
  const auto taken = [&](NodeId id) {
    return absorbed_[static_cast<size_t>(id)] || chains_.count(id) || rewritten_.count(id);
  };
  for (NodeId id : order_) {
    if (taken(id)) continue;
    const Node& node = graph_.node(id);
    auto chain = node.op_type == "DequantizeLinear" && !node.inputs.empty()
                     ? fusable_qdq_chain(graph_, node.inputs[0])
                     : std::nullopt;
    if (!chain && node.op_type == "DequantizeLinear" && !node.inputs.empty()) {
      // One op that only a chain runs (a NaN guard), not fusable_qdq_elementwise's.
      chain = fusable_qdq_chain(graph_, node.inputs[0], 1);
      if (chain && fusable_qdq_elementwise(graph_, chain->first)) chain.reset();
    }
    if (chain && !taken(chain->first) &&
        std::none_of(chain->absorbed.begin(), chain->absorbed.end(), taken)) {
      for (NodeId n : chain->absorbed) absorbed_[static_cast<size_t>(n)] = true;
      for (const auto& [dq, reader] : chain->reads) rewired_[dq].insert(reader);
      rewritten_.emplace(chain->first, FusedNode{std::move(chain->op), chain->absorbed});
    }
    if (taken(id)) continue;
    auto binary = fusable_qdq_elementwise(graph_, id);
    if (!binary ||
        (binary->quantization && absorbed_[static_cast<size_t>(*binary->quantization)])) {
      continue;
    }
    std::vector<NodeId> absorbed;
    if (binary->quantization) {
      absorbed_[static_cast<size_t>(*binary->quantization)] = true;
      absorbed.push_back(*binary->quantization);
    }
    for (NodeId dq : binary->dequantizations) rewired_[dq].insert(id);
    rewritten_.emplace(id, FusedNode{std::move(binary->op), std::move(absorbed)});
  }
}

void StepPlanner::absorb_dequantizations() {
  for (const auto& entry : rewired_) {  // (clang 14 captures no structured binding)
    const NodeId dq = entry.first;
    const std::set<NodeId>& rewired = entry.second;
    const ValueId out = graph_.node(dq).outputs[0];
    const auto& readers = graph_.value(out).consumers;
    if (absorbed_[static_cast<size_t>(dq)] || outputs_.count(out) || readers.empty() ||
        !std::all_of(readers.begin(), readers.end(), [&](NodeId r) {
          const auto& inputs = graph_.node(r).inputs;
          return rewired.count(r) && std::count(inputs.begin(), inputs.end(), out) == 1;
        })) {
      continue;
    }
    absorbed_[static_cast<size_t>(dq)] = true;
    dequantized_by_[*std::min_element(readers.begin(), readers.end(), [&](NodeId a, NodeId b) {
      return position_[static_cast<size_t>(a)] < position_[static_cast<size_t>(b)];
    })].push_back(dq);
  }
}

void StepPlanner::claim(NodeId n, std::vector<NodeId>& into) {
  absorbed_[static_cast<size_t>(n)] = true;
  into.push_back(n);
  std::vector<NodeId> nodes{n};
  if (const auto fused = rewritten_.find(n); fused != rewritten_.end()) {
    into.insert(into.end(), fused->second.absorbed.begin(), fused->second.absorbed.end());
    nodes.insert(nodes.end(), fused->second.absorbed.begin(), fused->second.absorbed.end());
  }
  for (NodeId reader : nodes) {
    if (const auto dqs = dequantized_by_.find(reader); dqs != dequantized_by_.end()) {
      into.insert(into.end(), dqs->second.begin(), dqs->second.end());
      dequantized_by_.erase(dqs);
    }
  }
}

void StepPlanner::take_result_move(PlannedStep& step, ValueId& result) {
  const auto sole = [&](ValueId v) {
    const auto& readers = graph_.value(v).consumers;
    return readers.size() == 1 && !outputs_.count(v) ? readers[0] : kNoNode;
  };
  const NodeId dq = sole(result);
  const NodeId t = dq == kNoNode || graph_.node(dq).op_type != "DequantizeLinear"
                       ? kNoNode
                       : sole(graph_.node(dq).outputs[0]);
  const auto move = t == kNoNode ? rewritten_.end() : rewritten_.find(t);
  if (move == rewritten_.end() || absorbed_[static_cast<size_t>(t)] ||
      move->second.op.op_type != "Transpose" || step.op.has_attr(kMatMulResultPermAttr)) {
    return;
  }
  auto perm = fusable_result_transpose(graph_, graph_.node(step.node), graph_.node(dq).outputs[0],
                                       graph_.node(t));
  if (!perm) return;
  step.op.attributes[kMatMulResultPermAttr] = std::move(*perm);
  result = move->second.op.outputs[0];
  claim(t, step.absorbed);
}

void StepPlanner::take_requantized_step(PlannedStep& step, ValueId& result,
                                        std::optional<RequantizedStep> (*find)(const Graph&,
                                                                               ValueId),
                                        std::vector<PlannedStep>& steps) {
  const auto r = find(graph_, result);
  const bool free = r && !absorbed_[static_cast<size_t>(r->node)];  // (not a MatMul operand's)
  const auto fused = free ? rewritten_.find(r->node) : rewritten_.end();
  const auto dequantized = free ? dequantized_by_.find(r->node) : dequantized_by_.end();
  if (fused == rewritten_.end() || dequantized == dequantized_by_.end() ||
      fused->second.op.op_type == kQdqChainOp) {  // (not a longer chain's first op)
    return;
  }
  if (r->bias != kNoValue) {  // the MatMul's bias row, its input 2
    const ValueId bias = same_as(r->bias);
    if (!from_constants(bias) && !hoist(bias, step.node, steps)) return;
    step.op.inputs.resize(std::max<size_t>(step.op.inputs.size(), 3), kNoValue);
    step.op.inputs[2] = bias;
    step.op.attributes[kMatMulLateBiasAttr] = r->params;
  } else if (r->residual != kNoValue) {  // the MatMul's residual, its input kResidualInput
    const ValueId residual = same_as(r->residual);
    if (!from_constants(residual) && !hoist(residual, step.node, steps)) return;
    step.op.inputs.resize(std::max(step.op.inputs.size(), kResidualInput + 1), kNoValue);
    step.op.inputs[kResidualInput] = residual;
    step.op.attributes[kMatMulLateResidualAttr] = r->params;
  } else {
    step.op.attributes[kConvRequantizedActivationAttr] = r->params;
  }
  step.absorbed.insert(step.absorbed.end(), dequantized->second.begin(), dequantized->second.end());
  step.absorbed.insert(step.absorbed.end(), {r->node, r->quantization});
  absorbed_[static_cast<size_t>(r->node)] = true;
  result = r->output;
  dequantized_by_.erase(dequantized);
  rewritten_.erase(fused);
}

void StepPlanner::take_qdq_chain(PlannedStep& step, ValueId& result) {
  const auto chain = outputs_.count(result) ? std::nullopt : fusable_qdq_chain(graph_, result, 1);
  const auto fused = chain && chain->alone && !absorbed_[static_cast<size_t>(chain->first)]
                         ? rewritten_.find(chain->first)
                         : rewritten_.end();
  if (fused == rewritten_.end() ||
      !std::is_permutation(chain->absorbed.begin(), chain->absorbed.end(),
                           fused->second.absorbed.begin(), fused->second.absorbed.end()) ||
      std::any_of(chain->reads.begin(), chain->reads.end(),
                  [&](const auto& read) { return !absorbed_[static_cast<size_t>(read.first)]; })) {
    return;
  }
  std::vector<NodeId> nodes = chain->absorbed;
  nodes.push_back(chain->first);
  step.op.attributes[kQdqChainAttr] = chain->op.attributes.at(kQdqChainAttr);
  for (NodeId n : nodes) {
    step.absorbed.push_back(n);
    if (const auto dqs = dequantized_by_.find(n); dqs != dequantized_by_.end()) {
      step.absorbed.insert(step.absorbed.end(), dqs->second.begin(), dqs->second.end());
      dequantized_by_.erase(dqs);
    }
  }
  absorbed_[static_cast<size_t>(chain->first)] = true;
  result = chain->op.outputs[0];
  rewritten_.erase(fused);
}
}  // namespace hsched::opencl::detail
