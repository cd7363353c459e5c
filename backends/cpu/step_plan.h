// The decisions that shape a CpuProgram's steps: which nodes fold at compile time, which fuse into
// another step, which view ops alias their input. Shared by CpuProgram::compile and by
// nodes_without_steps (program.h), so the analysis cannot drift from the program.
// Internal to the CPU program.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "graph/graph.h"

namespace hsched::cpu {

// Whether `node` runs once at compile time: every input is a constant. `is_constant(ValueId)`
// says which values are (the program: Value::is_constant, folded outputs included once set).
template <class IsConstant>
bool folds_at_compile_time(const Node& node, IsConstant is_constant) {
  return std::all_of(node.inputs.begin(), node.inputs.end(),
                     [&](ValueId v) { return v == kNoValue || is_constant(v); });
}

// A view op (is_view_op) whose data input is a constant: its output becomes that constant's
// bytes under the output's shape, nothing computed. False, graph untouched, for any other node.
bool alias_constant_view(Graph& graph, const Node& node);

// The fusion passes over the program's steps `nodes` (program order): quantized Conv/MatMul/Gemm
// first (fuse_qdq), then normalization chains (fuse_group_norms, fuse_channel_layer_norms,
// fuse_quantized_row_ops), then post-ops (fuse_post_ops) over the steps left, which see the
// fused nodes as plain ones. Roots are rewritten in place and may add constants to `graph`, so
// `nodes` must point to copies the caller owns, never into a vector that can grow. Returns per
// node whether it was absorbed into another.
std::vector<bool> fuse_steps(Graph& graph, const std::vector<Node*>& nodes);

// Views in the memory plan (program_memory.cpp): the output of a view op (Reshape-like, or a Split
// along an axis with only 1s before it) shares its input's storage at an offset, unless that
// storage is a constant, a graph input (bound anew each run) or a graph output, or an output of
// the view is a graph output (handed to the caller).
struct ViewAliases {
  std::vector<size_t> root;             // per value: the value owning its storage (itself if none)
  std::vector<int64_t> offset_in_root;  // per value: bytes into the root's storage
  std::vector<bool> aliased;            // per step: runs as a no-op
};
// `steps` in program order, shapes consistent (as the program's kernels check).
ViewAliases alias_views(const Graph& graph, const std::vector<const Node*>& steps);

}  // namespace hsched::cpu
