// NPU numerics for the simulated NPU: the NPU 3720 computes in fp16 and int8, so the simulated
// driver runs a copy of the graph in which every f32 value (graph input, weight or other constant,
// node output) is rounded to fp16: a Cast to f16 and back to f32 follows it, and every reader
// reads the rounded value. The CPU program folds the casts of constants when it compiles (weights
// rounded once, at graph creation); the others run after every node (activations rounded).
// Int8 layers are the exception: a product, eltwise sum or product, pooling, clamping activation
// or move between DequantizeLinear and QuantizeLinear runs in integers with one requantization,
// as the CPU program runs such a group, so its dequantized inputs, its output and the f32
// constants quantizations read (scales, biases) are not rounded; a float layer reading a
// dequantized value reads it rounded. Values keep their names on the side the host sees: graph
// inputs name the unrounded value the host writes, graph outputs the rounded value the host reads.
#pragma once

#include "graph/graph.h"
#include "hsched/status.h"

namespace hsched::zesim {

// `gelu_as_erf`: every Gelu computes the erf form, as Intel's NPU compiler converts Gelu-7
// whatever its approximation_mode.
Result<Graph> with_fp16_numerics(const Graph& graph, bool gelu_as_erf = false);

}  // namespace hsched::zesim
