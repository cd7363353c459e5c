// plan_kernels (step_plan.h): which nodes a ClProgram runs as steps, and the fusions that let one
// step run several nodes (kernels/node_ops.h); StepPlanner's passes (step_plan_planner.h) but
// those of the QDQ fusions (step_plan_quant.cpp). What that means for the cost model:
// step_plan_hints.cpp.
#include "backends/opencl/step_plan.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "backends/opencl/kernels/node_ops.h"
#include "backends/opencl/program.h"
#include "backends/opencl/step_plan_planner.h"

namespace hsched::opencl::detail {

Result<std::vector<PlannedStep>> StepPlanner::plan() {
  HSCHED_ASSIGN_OR_RETURN(order_, graph_.topological_order());
  position_.assign(graph_.nodes().size(), 0);
  for (size_t i = 0; i < order_.size(); ++i) position_[static_cast<size_t>(order_[i])] = i;
  find_duplicates();
  find_fusions();
  std::vector<PlannedStep> steps;
  std::map<ValueId, size_t> conv_step_of;  // a Conv step's output -> its index in `steps`
  for (NodeId id : order_) {
    if (absorbed_[static_cast<size_t>(id)] || hoisted_.count(id)) continue;
    const Node& node = graph_.node(id);
    PlannedStep step{id, node, is_view_op(node.op_type) || leaves_input_as_is(graph_, node), {}};
    if (step.op.op_type == "Concat" && step.op.domain.empty()) {
      int64_t groups = 1;
      if (const auto shuffle = shuffles_.find(id); shuffle != shuffles_.end()) {
        groups = shuffle->second.groups;
        step.op.outputs[0] = shuffle->second.y;
        step.op.attributes[kConcatShuffleAttr] = groups;
        step.absorbed = shuffle->second.nodes;
      }
      if (const auto inputs = concat_slices(graph_, step.op, conv_step_of)) {
        if (write_in_place(graph_, *inputs, groups, step, steps)) continue;
      }
      take_concat_slices(step);
    }
    if (const auto fused = rewritten_.find(id); fused != rewritten_.end()) {
      step.op = std::move(fused->second.op);
      step.absorbed = std::move(fused->second.absorbed);
      steps.push_back(std::move(step));
      continue;
    }
    if (const auto chain = chains_.find(id); chain != chains_.end()) {
      const ActivationChain& c = chain->second;
      step.op = Node{step.op.name, c.op_type, "", {c.x}, {step.op.outputs[0]}, {}};
      for (NodeId n : c.nodes) {
        if (n != id) step.absorbed.push_back(n);
      }
      steps.push_back(std::move(step));
      continue;
    }
    take_operand_fusions(step);
    const bool conv = step.op.op_type == "Conv", matmul = step.op.op_type == "MatMul";
    if ((conv || matmul) && graph_.value(step.op.outputs[0]).dtype == DType::kF32) {
      take_epilogue(step, matmul, steps);
    }
    if (conv) conv_step_of[step.op.outputs[0]] = steps.size();
    steps.push_back(std::move(step));
  }
  for (PlannedStep& step : steps) {
    for (ValueId& in : step.op.inputs) in = same_as(in);
    if (const auto dqs = dequantized_by_.find(step.node); dqs != dequantized_by_.end()) {
      step.absorbed.insert(step.absorbed.end(), dqs->second.begin(), dqs->second.end());
    }
    const auto duplicates = duplicate_of_.find(step.node);
    if (duplicates == duplicate_of_.end()) continue;
    step.absorbed.insert(step.absorbed.end(), duplicates->second.begin(), duplicates->second.end());
  }
  steps = group_sibling_products(graph_, std::move(steps));
  steps = merge_attention(graph_, std::move(steps));
  steps = merge_layer_norm(graph_, std::move(steps));
  steps = merge_squeeze_excitation(graph_, std::move(steps));
  steps = carry_concat_copies(graph_, std::move(steps));
  steps = pair_sibling_convs(graph_, std::move(steps));
  mark_constant_steps(steps);
  return steps;
}

void StepPlanner::mark_constant_steps(std::vector<PlannedStep>& steps) const {
  // A value several steps write (a Concat whose parts Convs write in place) is made every run.
  std::map<ValueId, int> writers;
  for (const PlannedStep& step : steps) {
    for (ValueId v : step.op.outputs) ++writers[v];
  }
  std::set<ValueId> made;  // by steps that run once
  for (PlannedStep& step : steps) {
    const auto& inputs = step.op.inputs;
    const auto& outputs = step.op.outputs;
    step.once =
        !inputs.empty() && !draws_random(step.op.op_type) &&
        std::all_of(inputs.begin(), inputs.end(),
                    [&](ValueId v) {
                      return v == kNoValue || graph_.value(v).is_constant() || made.count(v);
                    }) &&
        std::none_of(outputs.begin(), outputs.end(),
                     [&](ValueId v) { return v != kNoValue && writers[v] > 1; });
    if (step.once) made.insert(outputs.begin(), outputs.end());
  }
}

void StepPlanner::find_duplicates() {
  for (const auto& [duplicate, first] : duplicate_nodes(graph_, order_)) {
    absorbed_[static_cast<size_t>(duplicate)] = true;
    same_as_[graph_.node(duplicate).outputs[0]] = graph_.node(first).outputs[0];
    duplicate_of_[first].push_back(duplicate);
  }
}

void StepPlanner::find_fusions() {
  for (NodeId id : order_) {
    const Node& node = graph_.node(id);
    if (auto quantized = fusable_quantized_conv(graph_, node)) {
      rewired_[quantized->x_dequantize].insert(id);
      rewired_[quantized->w_dequantize].insert(id);
      quantized_convs_.emplace(id, *quantized);
      continue;
    }
    if (auto product = fusable_quantized_matmul(graph_, node)) {
      rewired_[product->a_dequantize].insert(id);
      rewired_[product->b_dequantize].insert(id);
      quantized_matmuls_.emplace(id, *product);
      continue;
    }
    if (auto move = fusable_quantized_move(graph_, id)) {
      for (NodeId q : move->quantizations) absorbed_[static_cast<size_t>(q)] = true;
      rewired_[move->dequantize].insert(id);
      rewritten_.emplace(id, FusedNode{std::move(move->op), std::move(move->quantizations)});
      continue;
    }
    if (auto scale = fusable_input_scale(graph_, node)) {
      if (!absorbed_[static_cast<size_t>(scale->mul)] && !chains_.count(scale->mul)) {
        absorbed_[static_cast<size_t>(scale->mul)] = true;
        channel_scaled_.emplace(id, *scale);
      }
      continue;
    }
    if (node.op_type == "Concat" && node.domain.empty()) {
      if (auto shuffle = fusable_channel_shuffle(graph_, node)) {
        for (NodeId n : shuffle->nodes) absorbed_[static_cast<size_t>(n)] = true;
        shuffles_.emplace(id, std::move(*shuffle));
      }
      find_concat_slices(id, node);
      continue;
    }
    if (auto slice = fusable_input_slice(graph_, node)) {
      if (!absorbed_[static_cast<size_t>(slice->slice)]) {
        absorbed_[static_cast<size_t>(slice->slice)] = true;
        channel_sliced_.emplace(id, *slice);
      }
      continue;
    }
    if (node.op_type == "MatMul" && node.domain.empty()) {
      for (size_t i = 0; i < 2; ++i) {
        ValueId operand = node.inputs[i];
        const auto scale = fusable_scale(graph_, node, i);
        // (A GELU's last Mul, by 0.5, stays the GELU's.)
        if (scale && !absorbed_[static_cast<size_t>(scale->mul)] && !chains_.count(scale->mul)) {
          absorbed_[static_cast<size_t>(scale->mul)] = true;
          scaled_[id].emplace_back(i, *scale);
          operand = scale->value;
        }
        if (auto view = fusable_operand_view(graph_, node, i, operand, true, absorbed_)) {
          viewed_.push_back({id, i, operand, std::move(*view)});
        }
      }
      continue;
    }
    auto fused = channel_layer_norm(graph_, id);
    if (!fused) fused = softmax_nan_guard(graph_, id);
    if (!fused) fused = group_norm_epilogue(graph_, id);
    if (fused) {
      for (NodeId n : fused->absorbed) absorbed_[static_cast<size_t>(n)] = true;
      rewritten_.emplace(id, std::move(*fused));
      continue;
    }
    if (absorbed_[static_cast<size_t>(id)]) continue;  // (a normalisation's activation)
    auto chain = activation_chain(graph_, id);
    if (!chain) continue;
    for (NodeId n : chain->nodes) absorbed_[static_cast<size_t>(n)] = n != chain->last;
    chain_of_input_[chain->x] = chain->last;
    chains_.emplace(chain->last, std::move(*chain));
  }
  settle_operand_views();
  find_qdq_elementwise();
  absorb_dequantizations();
  find_quantized_operand_views();
}

void StepPlanner::settle_operand_views() {
  // A node on a way as its step reads it: a quantized move's on 8-bit values.
  const auto node_of = [&](const ViewedOperand& v, NodeId n) -> const Node& {
    const auto move = v.quantized ? rewritten_.find(n) : rewritten_.end();
    return move == rewritten_.end() ? graph_.node(n) : move->second.op;
  };
  for (bool changed = true; changed;) {
    changed = false;
    std::set<ValueId> passed;  // values a view's way passes, the operands too
    for (const ViewedOperand& v : viewed_) {
      passed.insert(v.operand);
      for (NodeId n : v.view.through) {  // (the base, which others may read, is not passed)
        if (node_of(v, n).inputs[0] != v.view.base) passed.insert(node_of(v, n).inputs[0]);
      }
    }
    for (ViewedOperand& v : viewed_) {
      const bool covered = std::all_of(v.view.through.begin(), v.view.through.end(), [&](NodeId n) {
        const Node& node = node_of(v, n);
        return node.op_type != "Split" ||
               std::all_of(node.outputs.begin(), node.outputs.end(), [&](ValueId o) {
                 return o == kNoValue || passed.count(o) ||
                        (graph_.value(o).consumers.empty() && !outputs_.count(o));
               });
      });
      if (covered) continue;
      const Node& matmul = graph_.node(v.matmul);
      auto shorter =
          v.quantized
              ? fusable_quantized_operand_view(graph_, matmul, v.index, v.operand, false, absorbed_)
              : fusable_operand_view(graph_, matmul, v.index, v.operand, false, absorbed_);
      // (A chain is read with no view where none is left.)
      v.view = shorter            ? std::move(*shorter)
               : !v.chain.empty() ? OperandView{v.operand, {}, {}}
                                  : OperandView{};
      changed = true;
    }
    std::erase_if(viewed_, [](const ViewedOperand& v) { return v.view.base == kNoValue; });
  }
  for (ViewedOperand& v : viewed_) {
    if (v.chain_first != kNoNode && !absorbed_[static_cast<size_t>(v.chain_first)]) {
      claim(v.chain_first, v.claimed);
    }
    for (NodeId n : v.view.through) {
      if (!absorbed_[static_cast<size_t>(n)]) claim(n, v.claimed);
    }
  }
}

void StepPlanner::find_concat_slices(NodeId id, const Node& concat) {
  if (concat.outputs.size() != 1 || concat.outputs[0] == kNoValue) return;
  const Value& out = graph_.value(concat.outputs[0]);
  const auto rank = static_cast<int64_t>(out.shape.rank());
  int64_t axis = concat.attr_int("axis", 0);
  if (axis < 0) axis += rank;
  if (axis != 1 || (rank != 3 && rank != 4) || out.dtype != DType::kF32) return;
  for (size_t i = 0; i < concat.inputs.size(); ++i) {
    const auto slice = fusable_channel_slice(graph_, concat.inputs[i]);
    if (!slice || absorbed_[static_cast<size_t>(slice->slice)]) continue;
    absorbed_[static_cast<size_t>(slice->slice)] = true;
    concat_sliced_[id].emplace_back(i, *slice);
  }
}

void StepPlanner::take_concat_slices(PlannedStep& step) const {
  const auto slices = concat_sliced_.find(step.node);
  if (slices == concat_sliced_.end()) return;
  std::vector<int64_t> read_from(3 * step.op.inputs.size(), 0);
  for (const auto& [i, slice] : slices->second) {
    read_from[3 * i] = slice.channels;
    read_from[3 * i + 1] = slice.first;
    read_from[3 * i + 2] = graph_.value(step.op.inputs[i]).shape.dims[1];
    step.op.inputs[i] = slice.x;
    step.absorbed.push_back(slice.slice);
  }
  step.op.attributes[kConcatReadFromAttr] = std::move(read_from);
}

void StepPlanner::take_operand_fusions(PlannedStep& step) const {
  const NodeId id = step.node;
  if (const auto scales = scaled_.find(id); scales != scaled_.end()) {
    float alpha = 1.0f;
    for (const auto& [i, scale] : scales->second) {
      step.op.inputs[i] = scale.value;
      alpha *= scale.factor;
      step.absorbed.push_back(scale.mul);
    }
    step.op.attributes[kMatMulAlphaAttr] = alpha;
  }
  if (const auto q = quantized_matmuls_.find(id); q != quantized_matmuls_.end()) {
    // (A Gemm so fused runs as the MatMul computing it: fusable_quantized_matmul said so.)
    if (step.op.op_type == "Gemm") step.op = *gemm_as_matmul(graph_, step.op);
    attach_quantized_matmul(step.op, q->second);
  }
  for (const ViewedOperand& v : viewed_) {
    if (v.matmul != id) continue;
    step.op.inputs[v.index] = v.view.base;
    if (!v.view.through.empty()) {
      step.op.attributes[kMatMulViewAttrs[v.index]] = encode_view(v.view.view);
    }
    if (!v.chain.empty()) step.op.attributes[kMatMulOperandChainAttrs[v.index]] = v.chain;
    step.absorbed.insert(step.absorbed.end(), v.claimed.begin(), v.claimed.end());
  }
  if (const auto slice = channel_sliced_.find(id); slice != channel_sliced_.end()) {
    step.op.inputs[0] = slice->second.x;
    step.op.attributes[kConvReadFromAttr] =
        std::vector<int64_t>{slice->second.channels, slice->second.first};
    step.absorbed.push_back(slice->second.slice);
  }
  if (const auto scale = channel_scaled_.find(id); scale != channel_scaled_.end()) {
    step.op.inputs[0] = scale->second.x;
    step.op.inputs.resize(kInputScaleInput + 1, kNoValue);
    step.op.inputs[kInputScaleInput] = scale->second.factors;
    step.absorbed.push_back(scale->second.mul);
  }
  if (const auto q = quantized_convs_.find(id); q != quantized_convs_.end()) {
    attach_quantized_conv(step.op, q->second);
  }
}

void StepPlanner::take_epilogue(PlannedStep& step, bool matmul, std::vector<PlannedStep>& steps) {
  const NodeId id = step.node;
  // The epilogue, stage by stage, each taking the node that alone reads the result so far:
  // a MatMul's scalar factor and bias row, a Conv's factors per channel, a residual Add, an
  // activation (one node or a chain).
  ValueId result = step.op.outputs[0];
  const auto take = [&](NodeId n, ValueId out) {
    step.absorbed.push_back(n);
    absorbed_[static_cast<size_t>(n)] = true;
    result = out;
  };
  const auto sole_reader = [&](ValueId v) -> const Node* {
    const Value& value = graph_.value(v);
    if (outputs_.count(v) || value.consumers.size() != 1) return nullptr;
    const NodeId n = value.consumers[0];
    return absorbed_[static_cast<size_t>(n)] || chains_.count(n) || rewritten_.count(n)
               ? nullptr
               : &graph_.node(n);
  };
  if (const Node* next = matmul ? sole_reader(result) : nullptr) {
    if (const auto factor = fusable_result_scale(graph_, result, *next)) {
      step.op.attributes[kMatMulAlphaAttr] = step.op.attr_float(kMatMulAlphaAttr, 1.0f) * *factor;
      take(graph_.value(result).consumers[0], next->outputs[0]);
    }
  }
  // (A Gemm's C, or a bias fused below.)
  const auto has_bias = [&] { return step.op.inputs.size() > 2 && step.op.inputs[2] != kNoValue; };
  if (const Node* next = matmul && !has_bias() ? sole_reader(result) : nullptr) {
    if (auto bias = fusable_bias(graph_, step.op, *next)) {
      // MatMul's input 2, added to each row (slots after it may be set: kWeightScaleInput).
      step.op.inputs.resize(std::max<size_t>(step.op.inputs.size(), 3), kNoValue);
      step.op.inputs[2] = *bias;
      take(graph_.value(result).consumers[0], next->outputs[0]);
    }
  }
  if (const Node* next = matmul ? nullptr : sole_reader(result)) {
    if (const auto factors = fusable_output_scale(graph_, step.op, result, *next)) {
      step.op.inputs.resize(std::max(step.op.inputs.size(), kOutputScaleInput + 1), kNoValue);
      step.op.inputs[kOutputScaleInput] = *factors;
      take(graph_.value(result).consumers[0], next->outputs[0]);
    }
  }
  bool with_residual = false;
  if (const Node* next = sole_reader(result)) {
    // (A MatMul of a 1-D operand is not [..., M, N] as its result's shape says.)
    const bool shared = matmul && graph_.value(step.op.inputs[0]).shape.rank() >= 2 &&
                        graph_.value(step.op.inputs[1]).shape.rank() >= 2;
    auto residual = fusable_residual(graph_, result, *next, shared);
    if (residual) residual = same_as(*residual);
    if (residual && hoist(*residual, id, steps)) {
      step.op.inputs.resize(std::max(step.op.inputs.size(), kResidualInput + 1), kNoValue);
      step.op.inputs[kResidualInput] = *residual;
      take(graph_.value(result).consumers[0], next->outputs[0]);
      with_residual = true;
    }
  }
  const Node* next = sole_reader(result);
  const auto activation = next ? fusable_activation(graph_, *next) : std::nullopt;
  const auto chain_last = chain_of_input_.find(result);
  if (activation) {
    attach_activation(step.op, *activation);
    take(graph_.value(result).consumers[0], next->outputs[0]);
  } else if (chain_last != chain_of_input_.end() && !outputs_.count(result)) {
    // A chain that alone reads the result: the last of the epilogue, in its last node's place.
    const ActivationChain& c = chains_.at(chain_last->second);
    const auto& readers = graph_.value(result).consumers;
    const bool alone = std::all_of(readers.begin(), readers.end(), [&](NodeId n) {
      return std::find(c.nodes.begin(), c.nodes.end(), n) != c.nodes.end();
    });
    if (alone) {
      attach_activation(step.op, Activation{.op = c.op});
      step.absorbed.insert(step.absorbed.end(), c.nodes.begin(), c.nodes.end());
      absorbed_[static_cast<size_t>(c.last)] = true;
      result = graph_.node(c.last).outputs[0];
      chains_.erase(chain_last->second);
    }
  }
  // A MatMul stores its result transposed for a Transpose that alone reads it (attention's
  // heads merged back), unless a residual, read in the stored layout, came before.
  if (const Node* last = matmul && !with_residual ? sole_reader(result) : nullptr) {
    if (auto perm = fusable_result_transpose(graph_, graph_.node(id), result, *last)) {
      step.op.attributes[kMatMulResultPermAttr] = std::move(*perm);
      take(graph_.value(result).consumers[0], last->outputs[0]);
    }
  }
  // The product stores the 8-bit integers of a QuantizeLinear that alone reads its result (a
  // MatMul only where its operands are 8-bit: a float product keeps the graph's kernels).
  const bool quantized_product = !matmul || quantized_matmuls_.count(id);
  if (const Node* q = quantized_product ? sole_reader(result) : nullptr) {
    if (auto quantize = fusable_output_quantization(graph_, *q)) {
      attach_output_quantization(step.op, *quantize);
      take(graph_.value(result).consumers[0], q->outputs[0]);
      if (matmul && !has_bias() && !step.op.has_attr(kMatMulResultPermAttr)) {
        take_requantized_step(step, result, fusable_requantized_bias, steps);
      }
      if (matmul && !step.op.has_attr(kMatMulResultPermAttr)) {
        take_requantized_step(step, result, fusable_requantized_residual, steps);
      }
      if (!matmul) take_requantized_step(step, result, fusable_requantized_activation, steps);
      take_qdq_chain(step, result);
      if (matmul && !with_residual && !step.op.has_attr(kMatMulLateResidualAttr)) {
        take_result_move(step, result);
      }
    }
  }
  step.op.outputs[0] = result;
}

bool StepPlanner::from_constants(ValueId v, int depth) const {
  const Value& value = graph_.value(v);
  if (value.is_constant()) return true;
  if (depth == 0 || value.producer == kNoNode) return false;
  const Node& node = graph_.node(value.producer);
  return !node.inputs.empty() && !draws_random(node.op_type) &&
         std::all_of(node.inputs.begin(), node.inputs.end(),
                     [&](ValueId in) { return in == kNoValue || from_constants(in, depth - 1); });
}

bool StepPlanner::produced_before(ValueId v, NodeId id) const {
  const NodeId producer = graph_.value(v).producer;
  return producer == kNoNode ||
         position_[static_cast<size_t>(producer)] < position_[static_cast<size_t>(id)];
}

bool StepPlanner::hoist(ValueId v, NodeId id, std::vector<PlannedStep>& steps, int depth) {
  if (produced_before(v, id)) return true;
  const NodeId producer = graph_.value(v).producer;
  if (depth == 0) return false;
  if (producer == kNoNode || absorbed_[static_cast<size_t>(producer)] || hoisted_.count(producer) ||
      chains_.count(producer) || rewritten_.count(producer)) {
    return false;
  }
  const Node& node = graph_.node(producer);
  // (Products and Concats take fusions as their steps are made: not hoisted.)
  static const std::set<std::string> kNotPlain = {"Conv", "ConvTranspose", "MatMul", "Gemm",
                                                  "Concat"};
  if (is_view_op(node.op_type) || node.outputs.size() != 1 || kNotPlain.count(node.op_type)) {
    return false;
  }
  for (ValueId in : node.inputs) {
    if (in != kNoValue && !hoist(same_as(in), id, steps, depth - 1)) return false;
  }
  hoisted_.insert(producer);
  position_[static_cast<size_t>(producer)] = position_[static_cast<size_t>(id)];
  steps.push_back(PlannedStep{producer, node, false, {}});
  return true;
}
Result<std::vector<PlannedStep>> plan_kernels(const Graph& graph) {
  return StepPlanner(graph).plan();
}

}  // namespace hsched::opencl::detail
