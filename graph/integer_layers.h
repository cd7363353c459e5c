// The integer layers of a QDQ graph: what an int8 engine (Intel's NPU, ONNX Runtime's QDQ
// fusions) computes as integers between DequantizeLinear and QuantizeLinear.
#pragma once

#include <string>
#include <vector>

#include "graph/graph.h"

namespace hsched {

// Ops with an integer form: products, elementwise sums and products, pooling, clamping
// activations and data movement. Normalizations, Softmax, Erf, Div, Sigmoid... have none: an NPU
// computes them in fp16 on dequantized values.
bool has_integer_form(const std::string& op_type);

bool is_quantization(const Node& node);  // QuantizeLinear or DequantizeLinear

// Per value of `graph`: a constant, or computed from constants only (an Identity of a shared
// zero bias): what a compiler folds.
std::vector<bool> from_constants(const Graph& graph);

// Per node of `graph`: an integer layer, a node of has_integer_form whose float inputs not
// computed from constants are all DequantizeLinear outputs (at least one) and whose outputs only
// QuantizeLinear reads (none a graph output).
std::vector<bool> integer_layers(const Graph& graph);

}  // namespace hsched
