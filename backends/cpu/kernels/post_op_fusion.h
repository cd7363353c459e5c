// The post-op fusion pass of the CPU program: activations, residual and bias adds, per-channel
// scales and attention's input scales and transposes absorbed into the oneDNN primitive (Conv,
// ConvTranspose, Gemm, MatMul) next to them, so the intermediate tensors are never written.
// Internal to the CPU program.
#pragma once

#include <vector>

#include "graph/graph.h"

namespace hsched::cpu {

// `nodes` are the program's steps in order; the roots among them are rewritten in place (post-ops
// recorded with set_post_ops, inputs replaced, constants added to `graph`) and the nodes they
// absorb are marked in `absorbed`. Returns the number of nodes absorbed.
int fuse_post_ops(Graph& graph, const std::vector<Node*>& nodes, std::vector<bool>& absorbed);

}  // namespace hsched::cpu
