// StepPlanner, plan_kernels' one pass over a graph (step_plan.h): its passes are defined in
// step_plan.cpp, those of the QDQ fusions (8-bit operands, requantized epilogues) in
// step_plan_quant.cpp. Internal to those two files.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "backends/opencl/kernels/node_ops.h"
#include "backends/opencl/step_plan.h"

namespace hsched::opencl::detail {

// One planning pass over a graph: first the fusions anchored before the steps (found in
// topological order), then the steps, each taking its operand fusions and its epilogue.
class StepPlanner {
 public:
  explicit StepPlanner(const Graph& graph)
      : graph_(graph),
        absorbed_(graph.nodes().size(), false),
        outputs_(graph.outputs().begin(), graph.outputs().end()) {}
  Result<std::vector<PlannedStep>> plan();

 private:
  // Steps whose inputs are all graph constants or made by such steps (views alias theirs) run
  // once (PlannedStep::once); never an op that draws random numbers.
  static bool draws_random(const std::string& op) {
    static const std::set<std::string> kRandom = {"RandomNormal",     "RandomUniform",
                                                  "RandomNormalLike", "RandomUniformLike",
                                                  "Bernoulli",        "Multinomial"};
    return kRandom.count(op) != 0;
  }
  void mark_constant_steps(std::vector<PlannedStep>& steps) const;

  // Nodes that compute what an earlier node computes (duplicate_nodes) run no kernel; their
  // readers read the earlier node's output.
  void find_duplicates();

  // The value `v` is read as (the earlier node's output for a duplicate's).
  ValueId same_as(ValueId v) const {
    const auto it = v == kNoValue ? same_as_.end() : same_as_.find(v);
    return it == same_as_.end() ? v : it->second;
  }

  // Fusions whose nodes come before their anchor in the order (a MatMul's scaled or transposed
  // operands, a Conv's channel-scaled input) or whose anchor is not a product (LayerNorms,
  // Softmaxes, activation chains): their nodes are marked before the steps are made.
  void find_fusions();

  // A quantized MatMul's 8-bit operands read through the chain of ops making them
  // (fusable_operand_chain, where the program runs it as one step; the MatMul tabulates it) and
  // through quantized moves (fusable_quantized_operand_view), as settle_operand_views settles
  // them.
  void find_quantized_operand_views();

  // Chains of ops on one 8-bit tensor (at its first DequantizeLinear), binary ops, LayerNorms...
  // between DequantizeLinear and QuantizeLinear nodes that no other fusion took.
  void find_qdq_elementwise();

  // A DequantizeLinear whose every reader reads its 8-bit input instead (a quantized Conv, a
  // quantized move) runs no kernel: the first of them absorbs it.
  void absorb_dequantizations();

  // A MatMul operand's view passes a Split only if every output of that Split is read through
  // views too (else the Split runs, and the operand's view starts at the Split's output). Then
  // the nodes on the views' ways run no kernel.
  void settle_operand_views();

  // Node `n`, which a step runs in its stead, absorbed into `into`: with the nodes its rewritten
  // form absorbed (a quantized move's QuantizeLinears) and the DequantizeLinears it read.
  void claim(NodeId n, std::vector<NodeId>& into);

  // The inputs of a Concat over the channels that are Slices of channels only it reads: read in
  // place (their Slices absorbed).
  void find_concat_slices(NodeId id, const Node& concat);

  // A Concat step's inputs read in place from the values their Slices cut.
  void take_concat_slices(PlannedStep& step) const;

  // A MatMul's scaled and transposed operands, a Conv's channel-scaled input.
  void take_operand_fusions(PlannedStep& step) const;

  // A Conv's or MatMul's epilogue.
  void take_epilogue(PlannedStep& step, bool matmul, std::vector<PlannedStep>& steps);

  // A quantized MatMul stores its 8-bit `result` transposed for a quantized move Transpose that
  // alone reads it, through one DequantizeLinear (attention's heads merged back): `result` then
  // the move's.
  void take_result_move(PlannedStep& step, ValueId& result);

  // What `find` (fusable_requantized_activation after a Conv, fusable_requantized_bias or
  // fusable_requantized_residual after a MatMul) finds after the product's quantized `result`,
  // where the program runs it between its DequantizeLinear and QuantizeLinear (and no MatMul
  // reads it as an operand's chain): in the product's epilogue, `result` then its
  // QuantizeLinear's.
  void take_requantized_step(PlannedStep& step, ValueId& result,
                             std::optional<RequantizedStep> (*find)(const Graph&, ValueId),
                             std::vector<PlannedStep>& steps);

  // A chain of ops on a Conv's or MatMul's quantized `result` (fusable_qdq_chain, one op or
  // more: an activation between its DequantizeLinear and QuantizeLinear, a quantized SiLU or
  // GELU; after a Conv's one requantized activation, what follows it) that alone reads it, through
  // DequantizeLinears only it reads, where the program runs it as one step (a kQdqChainOp, or a
  // single op's QDQ fusion): in the product's epilogue, `result` then the chain's output.
  void take_qdq_chain(PlannedStep& step, ValueId& result);

  // Whether `v` is a constant or made from constants alone, `depth` nodes deep at most: the steps
  // making it run once, at compile time, before any step of a run (mark_constant_steps).
  bool from_constants(ValueId v, int depth = 8) const;

  // Whether `v` exists before node `id` runs: a graph input or constant, or made by a node that
  // comes earlier (a step that absorbs that node comes earlier still).
  bool produced_before(ValueId v, NodeId id) const;

  // Runs the node making `v` as a step before node `id` where the order puts it after but it
  // needs nothing `id` makes (an attention mask made after the scores), with the nodes it needs
  // alike, `depth` levels at most: plain nodes, not fused or absorbed.
  bool hoist(ValueId v, NodeId id, std::vector<PlannedStep>& steps, int depth = 3);
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
    // An 8-bit operand of a quantized MatMul (through quantized moves), perhaps read through the
    // chain of ops that makes it (kQdqChainAttr's floats; its first node): operand is its x.
    bool quantized = false;
    std::vector<float> chain{};
    NodeId chain_first = kNoNode;
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

}  // namespace hsched::opencl::detail
