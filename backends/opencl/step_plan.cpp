// plan_kernels (step_plan.h): which nodes a ClProgram runs as steps, and the fusions that let one
// step run several nodes (kernels/node_ops.h). What that means for the cost model:
// step_plan_hints.cpp.
#include "backends/opencl/step_plan.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <type_traits>
#include <variant>

#include "backends/opencl/kernels/node_ops.h"
#include "backends/opencl/program.h"

namespace hsched::opencl {
namespace detail {
namespace {

// One planning pass over a graph: first the fusions anchored before the steps (found in
// topological order), then the steps, each taking its operand fusions and its epilogue.
class StepPlanner {
 public:
  explicit StepPlanner(const Graph& graph)
      : graph_(graph),
        absorbed_(graph.nodes().size(), false),
        outputs_(graph.outputs().begin(), graph.outputs().end()) {}

  Result<std::vector<PlannedStep>> plan() {
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
      step.absorbed.insert(step.absorbed.end(), duplicates->second.begin(),
                           duplicates->second.end());
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

 private:
  // Steps whose inputs are all graph constants or made by such steps (views alias theirs) run
  // once (PlannedStep::once); never an op that draws random numbers.
  static bool draws_random(const std::string& op) {
    static const std::set<std::string> kRandom = {"RandomNormal",     "RandomUniform",
                                                  "RandomNormalLike", "RandomUniformLike",
                                                  "Bernoulli",        "Multinomial"};
    return kRandom.count(op) != 0;
  }
  void mark_constant_steps(std::vector<PlannedStep>& steps) const {
    std::set<ValueId> made;  // by steps that run once
    for (PlannedStep& step : steps) {
      const auto& inputs = step.op.inputs;
      step.once = !inputs.empty() && !draws_random(step.op.op_type) &&
                  std::all_of(inputs.begin(), inputs.end(), [&](ValueId v) {
                    return v == kNoValue || graph_.value(v).is_constant() || made.count(v);
                  });
      if (step.once) made.insert(step.op.outputs.begin(), step.op.outputs.end());
    }
  }

  // Nodes that compute what an earlier node computes (the same op, attributes and inputs,
  // constants compared by value: each attention layer's mask made anew from the same input) run
  // no kernel; their readers read the earlier node's output. Only ops no fusion takes as a
  // producer whose output it leaves unstored (masks, casts, comparisons), never a graph output.
  void find_duplicates() {
    static const std::set<std::string> kShared = {
        "Where",       "Cast",           "Expand", "Equal", "Less", "Greater",
        "LessOrEqual", "GreaterOrEqual", "Not",    "And",   "Or",   "Xor"};
    // Candidates by op and first input (its value, or a constant's shape): few compared each.
    std::map<std::pair<std::string, std::string>, std::vector<NodeId>> candidates;
    for (NodeId id : order_) {
      const Node& node = graph_.node(id);
      if (!kShared.count(node.op_type) || !node.domain.empty() || node.outputs.size() != 1 ||
          node.outputs[0] == kNoValue || outputs_.count(node.outputs[0]) || node.inputs.empty()) {
        continue;
      }
      const ValueId in = same_as(node.inputs[0]);
      const std::string key = in == kNoValue                   ? ""
                              : graph_.value(in).is_constant() ? graph_.value(in).shape.to_string()
                                                               : std::to_string(in);
      std::vector<NodeId>& bucket = candidates[{node.op_type, key}];
      const auto first = std::find_if(bucket.begin(), bucket.end(), [&](NodeId c) {
        return same_computation(graph_.node(c), node);
      });
      if (first == bucket.end()) {
        bucket.push_back(id);
        continue;
      }
      absorbed_[static_cast<size_t>(id)] = true;
      same_as_[node.outputs[0]] = graph_.node(*first).outputs[0];
      duplicate_of_[*first].push_back(id);
    }
  }

  bool same_computation(const Node& a, const Node& b) const {
    if (a.op_type != b.op_type || a.inputs.size() != b.inputs.size() ||
        !same_attributes(a.attributes, b.attributes)) {
      return false;
    }
    for (size_t i = 0; i < a.inputs.size(); ++i) {
      const ValueId x = same_as(a.inputs[i]), y = same_as(b.inputs[i]);
      if (x == y) continue;
      if (x == kNoValue || y == kNoValue) return false;
      const Value& u = graph_.value(x);
      const Value& v = graph_.value(y);
      if (!u.is_constant() || !v.is_constant() || u.dtype != v.dtype ||
          u.shape.dims != v.shape.dims || u.constant->byte_size() != v.constant->byte_size() ||
          !std::equal(u.constant->raw(), u.constant->raw() + u.constant->byte_size(),
                      v.constant->raw())) {
        return false;
      }
    }
    return true;
  }

  static bool same_attributes(const AttributeMap& a, const AttributeMap& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const auto& x, const auto& y) {
      return x.first == y.first && x.second.index() == y.second.index() &&
             std::visit(
                 [&](const auto& value) {
                   using T = std::decay_t<decltype(value)>;
                   if constexpr (std::is_same_v<T, Tensor>) {
                     return false;
                   } else {
                     return value == std::get<T>(y.second);
                   }
                 },
                 x.second);
    });
  }

  // The value `v` is read as (the earlier node's output for a duplicate's).
  ValueId same_as(ValueId v) const {
    const auto it = v == kNoValue ? same_as_.end() : same_as_.find(v);
    return it == same_as_.end() ? v : it->second;
  }

  // Fusions whose nodes come before their anchor in the order (a MatMul's scaled or transposed
  // operands, a Conv's channel-scaled input) or whose anchor is not a product (LayerNorms,
  // Softmaxes, activation chains): their nodes are marked before the steps are made.
  void find_fusions() {
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
  }

  // Chains of ops on one 8-bit tensor (at its first DequantizeLinear), binary ops, LayerNorms...
  // between DequantizeLinear and QuantizeLinear nodes that no other fusion took.
  void find_qdq_elementwise() {
    const auto taken = [&](NodeId id) {
      return absorbed_[static_cast<size_t>(id)] || chains_.count(id) || rewritten_.count(id);
    };
    for (NodeId id : order_) {
      if (taken(id)) continue;
      const Node& node = graph_.node(id);
      auto chain = node.op_type == "DequantizeLinear" && !node.inputs.empty()
                       ? fusable_qdq_chain(graph_, node.inputs[0])
                       : std::nullopt;
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

  // A DequantizeLinear whose every reader reads its 8-bit input instead (a quantized Conv, a
  // quantized move) runs no kernel: the first of them absorbs it.
  void absorb_dequantizations() {
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

  // A MatMul operand's view passes a Split only if every output of that Split is read through
  // views too (else the Split runs, and the operand's view starts at the Split's output). Then
  // the nodes on the views' ways run no kernel.
  void settle_operand_views() {
    for (bool changed = true; changed;) {
      changed = false;
      std::set<ValueId> passed;  // values a view's way passes, the operands too
      for (const ViewedOperand& v : viewed_) {
        passed.insert(v.operand);
        for (NodeId n : v.view.through) {  // (the base, which others may read, is not passed)
          if (graph_.node(n).inputs[0] != v.view.base) passed.insert(graph_.node(n).inputs[0]);
        }
      }
      for (ViewedOperand& v : viewed_) {
        const bool covered =
            std::all_of(v.view.through.begin(), v.view.through.end(), [&](NodeId n) {
              const Node& node = graph_.node(n);
              return node.op_type != "Split" ||
                     std::all_of(node.outputs.begin(), node.outputs.end(), [&](ValueId o) {
                       return o == kNoValue || passed.count(o) ||
                              (graph_.value(o).consumers.empty() && !outputs_.count(o));
                     });
            });
        if (covered) continue;
        auto shorter = fusable_operand_view(graph_, graph_.node(v.matmul), v.index, v.operand,
                                            false, absorbed_);
        v.view = shorter ? std::move(*shorter) : OperandView{};
        changed = true;
      }
      std::erase_if(viewed_, [](const ViewedOperand& v) { return v.view.base == kNoValue; });
    }
    for (ViewedOperand& v : viewed_) {
      for (NodeId n : v.view.through) {
        if (absorbed_[static_cast<size_t>(n)]) continue;
        absorbed_[static_cast<size_t>(n)] = true;
        v.claimed.push_back(n);
      }
    }
  }

  // The inputs of a Concat over the channels that are Slices of channels only it reads: read in
  // place (their Slices absorbed).
  void find_concat_slices(NodeId id, const Node& concat) {
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

  // A Concat step's inputs read in place from the values their Slices cut.
  void take_concat_slices(PlannedStep& step) const {
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

  // A MatMul's scaled and transposed operands, a Conv's channel-scaled input.
  void take_operand_fusions(PlannedStep& step) const {
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
    for (const ViewedOperand& v : viewed_) {
      if (v.matmul != id) continue;
      step.op.inputs[v.index] = v.view.base;
      step.op.attributes[kMatMulViewAttrs[v.index]] = encode_view(v.view.view);
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
    if (const auto q = quantized_matmuls_.find(id); q != quantized_matmuls_.end()) {
      // (A Gemm so fused runs as the MatMul computing it: fusable_quantized_matmul said so.)
      if (step.op.op_type == "Gemm") step.op = *gemm_as_matmul(graph_, step.op);
      attach_quantized_matmul(step.op, q->second);
    }
  }

  // A Conv's or MatMul's epilogue.
  void take_epilogue(PlannedStep& step, bool matmul, std::vector<PlannedStep>& steps) {
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
    const auto has_bias = [&] {
      return step.op.inputs.size() > 2 && step.op.inputs[2] != kNoValue;
    };
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
        if (!matmul) take_requantized_step(step, result, fusable_requantized_activation, steps);
        if (matmul && !has_bias() && !step.op.has_attr(kMatMulResultPermAttr)) {
          take_requantized_step(step, result, fusable_requantized_bias, steps);
        }
        if (matmul) take_qdq_chain(step, result);
      }
    }
    step.op.outputs[0] = result;
  }

  // What `find` (fusable_requantized_activation after a Conv, fusable_requantized_bias after a
  // MatMul) finds after the product's quantized `result`, where the program runs it between its
  // DequantizeLinear and QuantizeLinear: in the product's epilogue, `result` then its
  // QuantizeLinear's.
  template <typename Find>
  void take_requantized_step(PlannedStep& step, ValueId& result, Find find,
                             std::vector<PlannedStep>& steps) {
    const auto r = find(graph_, result);
    const auto fused = r ? rewritten_.find(r->node) : rewritten_.end();
    const auto dequantized = r ? dequantized_by_.find(r->node) : dequantized_by_.end();
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
    } else {
      step.op.attributes[kConvRequantizedActivationAttr] = r->params;
    }
    step.absorbed.insert(step.absorbed.end(), dequantized->second.begin(),
                         dequantized->second.end());
    step.absorbed.insert(step.absorbed.end(), {r->node, r->quantization});
    absorbed_[static_cast<size_t>(r->node)] = true;
    result = r->output;
    dequantized_by_.erase(dequantized);
    rewritten_.erase(fused);
  }

  // A chain of ops on a MatMul's quantized `result` (fusable_qdq_chain, one op or more) that
  // alone reads it, through DequantizeLinears only it reads, where the program runs it as one step
  // (a kQdqChainOp, or a single op's QDQ fusion): in the MatMul's epilogue, `result` then the
  // chain's output.
  void take_qdq_chain(PlannedStep& step, ValueId& result) {
    const auto chain = outputs_.count(result) ? std::nullopt : fusable_qdq_chain(graph_, result, 1);
    const auto fused = chain && chain->alone ? rewritten_.find(chain->first) : rewritten_.end();
    if (fused == rewritten_.end() ||
        !std::is_permutation(chain->absorbed.begin(), chain->absorbed.end(),
                             fused->second.absorbed.begin(), fused->second.absorbed.end()) ||
        std::any_of(chain->reads.begin(), chain->reads.end(), [&](const auto& read) {
          return !absorbed_[static_cast<size_t>(read.first)];
        })) {
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

  // Whether `v` is a constant or made from constants alone, `depth` nodes deep at most: the steps
  // making it run once, at compile time, before any step of a run (mark_constant_steps).
  bool from_constants(ValueId v, int depth = 8) const {
    const Value& value = graph_.value(v);
    if (value.is_constant()) return true;
    if (depth == 0 || value.producer == kNoNode) return false;
    const Node& node = graph_.node(value.producer);
    return !node.inputs.empty() && !draws_random(node.op_type) &&
           std::all_of(node.inputs.begin(), node.inputs.end(),
                       [&](ValueId in) { return in == kNoValue || from_constants(in, depth - 1); });
  }

  // Whether `v` exists before node `id` runs: a graph input or constant, or made by a node that
  // comes earlier (a step that absorbs that node comes earlier still).
  bool produced_before(ValueId v, NodeId id) const {
    const NodeId producer = graph_.value(v).producer;
    return producer == kNoNode ||
           position_[static_cast<size_t>(producer)] < position_[static_cast<size_t>(id)];
  }

  // Runs the node making `v` as a step before node `id` where the order puts it after but it
  // needs nothing `id` makes (an attention mask made after the scores), with the nodes it needs
  // alike, `depth` levels at most: plain nodes, not fused or absorbed.
  bool hoist(ValueId v, NodeId id, std::vector<PlannedStep>& steps, int depth = 3) {
    if (produced_before(v, id)) return true;
    const NodeId producer = graph_.value(v).producer;
    if (depth == 0) return false;
    if (producer == kNoNode || absorbed_[static_cast<size_t>(producer)] ||
        hoisted_.count(producer) || chains_.count(producer) || rewritten_.count(producer)) {
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

  const Graph& graph_;
  std::vector<NodeId> order_;
  std::vector<size_t> position_;  // of each node in order_
  std::vector<bool> absorbed_;
  const std::set<ValueId> outputs_;
  std::map<NodeId, ActivationChain> chains_;  // by the chain's last node
  std::map<ValueId, NodeId> chain_of_input_;  // x -> the last node of the chain reading it
  // Channel LayerNorms, guarded Softmaxes, quantized moves, binary ops and LayerNorms, by anchor.
  std::map<NodeId, FusedNode> rewritten_;
  std::map<NodeId, std::vector<std::pair<size_t, ScaledInput>>> scaled_;  // by their MatMul
  // MatMul operands read through views, with the nodes on the way each one absorbs.
  struct ViewedOperand {
    NodeId matmul = kNoNode;
    size_t index = 0;
    ValueId operand = kNoValue;  // after any fused scale
    OperandView view;
    std::vector<NodeId> claimed{};
  };
  std::vector<ViewedOperand> viewed_;
  std::map<ValueId, ValueId> same_as_;                       // a duplicate's output -> the first's
  std::map<NodeId, std::vector<NodeId>> duplicate_of_;       // the first -> its duplicates
  std::set<NodeId> hoisted_;                                 // run before a product that reads them
  std::map<NodeId, ScaledConvInput> channel_scaled_;         // by their Conv
  std::map<NodeId, SlicedConvInput> channel_sliced_;         // by their Conv
  std::map<NodeId, QuantizedConvOperands> quantized_convs_;  // by their Conv
  std::map<NodeId, QuantizedMatMulOperands> quantized_matmuls_;
  std::map<NodeId, std::set<NodeId>> rewired_;  // a DequantizeLinear -> readers of its input
  std::map<NodeId, std::vector<NodeId>> dequantized_by_;  // DequantizeLinears a step absorbs
  std::map<NodeId, std::vector<std::pair<size_t, SlicedConvInput>>> concat_sliced_;  // by Concat
  std::map<NodeId, ChannelShuffle> shuffles_;                                        // by Concat
};

}  // namespace

Result<std::vector<PlannedStep>> plan_kernels(const Graph& graph) {
  return StepPlanner(graph).plan();
}

}  // namespace detail
}  // namespace hsched::opencl
