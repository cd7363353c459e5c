// GroupNorm as one kernel: the fusion pass that finds PyTorch's exported GroupNorm chain in a
// program and the kernel it becomes (group_norm.cpp). Internal to the CPU program.
#pragma once

#include <vector>

#include "backends/cpu/kernel.h"

namespace hsched::cpu {

// Internal op type of the fused node; inputs x [N, C, spatial...], gamma [C], beta [C];
// attributes num_groups, epsilon, silu (0/1); layouts as set_layouts() records them.
inline constexpr const char* kGroupNormOp = "hsched.GroupNorm";

void register_group_norm_kernel(KernelRegistry& registry);

// Finds Reshape([N, G, ...]) -> InstanceNormalization(constant scale, bias) -> Reshape(back) ->
// [Mul(per-channel constant)] -> [Add(per-channel constant)] -> [x * Sigmoid(x)] among `nodes`
// (program order) and rewrites the Reshape into one kGroupNormOp node; the other nodes of the
// chain are marked in `absorbed`. Folded gamma and beta are added to `graph` as constants. An
// intermediate read by anything else, or a graph output, stops the match. Returns the number of
// nodes absorbed.
int fuse_group_norms(Graph& graph, const std::vector<Node*>& nodes, std::vector<bool>& absorbed);

}  // namespace hsched::cpu
