// The steps of a ClProgram before any device is involved (program.h): graph analysis shared by
// ClProgram::compile and nodes_without_kernels. Internal to the OpenCL backend.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "graph/graph.h"
#include "hsched/status.h"

namespace hsched::opencl::detail {

// One step of a program over a graph, before any device is involved.
struct PlannedStep {
  NodeId node = kNoNode;
  Node op;            // the graph's node, or a copy carrying a fused epilogue, or a Gelu
  bool view = false;  // aliases its input; enqueues nothing
  // Nodes this step runs too or makes unneeded (the fusions below).
  std::vector<NodeId> absorbed;
  // MatMuls this step runs in the same launch as its own (kMatMulGroupOp): their compute stays.
  std::vector<NodeId> grouped{};
  // Reads only graph constants and what other such steps make (a DequantizeLinear of int8
  // weights, an Expand of a constant): it computes the same every run, so it runs once, when the
  // program is compiled.
  bool once = false;
};

// Steps in topological order; a node computing what an earlier mask, cast or comparison
// computes runs nothing (its readers read the earlier output); a Conv or MatMul absorbs the nodes
// after it that alone read its result, as its epilogue: a MatMul its Mul or Div by a scalar
// constant (fusable_result_scale) and the Add of a constant bias row,
// then either one the Add of a tensor of its shape (a MatMul also of one [M, N] for every batch)
// made before it or hoisted there (a residual connection, an attention mask), then an activation
// (Relu, Clip...) or one exported as several nodes (activation_chain: a GELU, a SiLU), then a
// MatMul without a residual a Transpose it can store its result as (fusable_result_transpose); such
// a chain after anything else runs as one step in its last node's place; a LayerNormalization
// between Transposes to and from channels-last runs over the channels (channel_layer_norm); a
// Softmax absorbs the IsNaN and Where that replace its NaNs (softmax_nan_guard); GroupNorm's
// affine map and activation run in its InstanceNormalization (group_norm_epilogue); a MatMul takes
// the scalar factor of a Mul that only feeds it as its alpha (fusable_scale) and reads an operand
// made by Transposes, Splits and views in place (fusable_operand_view); a Conv reads its input's
// Mul by per-channel factors as it loads it (fusable_input_scale) and a Slice of its input's
// channels in place (fusable_input_slice); view ops become aliases; Convs
// write their outputs into a Concat's in place (the Concat absorbed by the last of them, or
// copying its other inputs alone, reading those that are Slices of channels in place); then the
// merging pass below; steps that read only constants marked `once`.
Result<std::vector<PlannedStep>> plan_kernels(const Graph& graph);

// Nodes that compute what an earlier node computes (the same op, attributes and inputs, constants
// compared by value: each attention layer's mask made anew from the same input), each with that
// earlier node, whose output its readers read instead, in `order`. Only ops no fusion takes as a
// producer whose output it leaves unstored (masks, casts, comparisons), never a graph output.
std::vector<std::pair<NodeId, NodeId>> duplicate_nodes(const Graph& graph,
                                                       const std::vector<NodeId>& order);

// One input of a Concat over the channels: the Conv step that writes it in place, if any, and
// its channels.
struct ConcatInput {
  std::optional<size_t> conv_step;
  int64_t channels = 0;
};
// For a Concat over the channels (axis 1, rank 3 or 4, f32, static, each input once) with at
// least one input made by a Conv step (its index in `conv_step_of`) and read only by it: each
// input, those Convs' steps marked (they store their outputs in place); nullopt otherwise
// (step_plan_merge.cpp).
std::optional<std::vector<ConcatInput>> concat_slices(
    const Graph& graph, const Node& concat, const std::map<ValueId, size_t>& conv_step_of);
// Then the Convs among those inputs store their outputs in the Concat's (`groups` > 1: a channel
// shuffle's, input i's channel c at c * groups + i): true when that was all of them (the Concat
// and what it absorbed run no kernel), else the Concat `step` copies the others alone (its
// in-place inputs kNoValue, each input's channels in kConcatChannelsAttr).
bool write_in_place(const Graph& graph, const std::vector<ConcatInput>& inputs, int64_t groups,
                    PlannedStep& step, std::vector<PlannedStep>& steps);

// plan_kernels' last pass (step_plan_merge.cpp): MatMul steps reading one A by constant weights
// of one shape (attention's Q, K and V projections) run as one kMatMulGroupOp step, up to
// kMaxGroupedProducts each, in the first one's place: they need nothing but A, made before it.
std::vector<PlannedStep> group_sibling_products(const Graph& graph, std::vector<PlannedStep> steps);

// Then (step_plan_merge.cpp) attention's product of Q by K (with its factor and mask), the Softmax
// over its last axis alone reading it and the product of that by V alone reading the Softmax run
// as one kAttentionOp step in the last one's place, where enqueue_attention takes their shapes
// (fused_attention_fits): its scores and weights never reach global memory.
std::vector<PlannedStep> merge_attention(const Graph& graph, std::vector<PlannedStep> steps);

// Then (step_plan_merge.cpp) a LayerNormalization over the last axis whose output only a MatMul
// step reads, as its dense A, runs in that MatMul (kNormScaleInput, kMatMulNormAttr): the MatMul
// reads the LayerNormalization's input and normalizes its rows as it loads them.
std::vector<PlannedStep> merge_layer_norm(const Graph& graph, std::vector<PlannedStep> steps);

// Then (step_plan_merge.cpp) a squeeze-and-excitation's two 1x1 Convs on pooled means, the second
// alone reading the first, run as one kSqueezeExcitationOp step in the second's place (se_gate:
// the hidden layer stays in local memory).
std::vector<PlannedStep> merge_squeeze_excitation(const Graph& graph,
                                                  std::vector<PlannedStep> steps);
// Then (step_plan_merge.cpp) a Concat step that copies one input alone, the rest written in place
// by Convs, made before the last of them: that Conv copies it (kCarriedInput, kConvCarriesAttr)
// and the Concat runs no kernel.
std::vector<PlannedStep> carry_concat_copies(const Graph& graph, std::vector<PlannedStep> steps);
// Then (step_plan_merge.cpp) two Conv steps of one input storing their outputs in one Concat's,
// each of group 1 with a bias or none and the same activation (a fire module's expand Convs), run
// as one kConvPairOp step in the second's place.
std::vector<PlannedStep> pair_sibling_convs(const Graph& graph, std::vector<PlannedStep> steps);

}  // namespace hsched::opencl::detail
