// Internal to the QDQ fusions (node_fusion_quant.cpp, node_fusion_qdq_chain.cpp): what they
// read of a QuantizeLinear or DequantizeLinear node and its neighbours.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace hsched::opencl::qdq_detail {

inline bool is_byte(DType dtype) { return dtype == DType::kU8 || dtype == DType::kI8; }

// The node making `v` when it is a `op` of the default domain (its id in `id`); null otherwise.
const Node* made_by(const Graph& graph, ValueId v, const char* op, NodeId* id);

// The constant parameters of a QuantizeLinear or DequantizeLinear `node` of 8-bit data of
// `dtype`: `count` scales, each positive and finite, and as many zero points of that dtype or
// none (every one 0 with `zero_only`); the scales and the first zero point. nullopt otherwise.
struct ConstantParams {
  std::vector<float> scales;
  int64_t zero = 0;
};
std::optional<ConstantParams> constant_params(const Graph& graph, const Node& node, DType dtype,
                                              int64_t count, bool zero_only);

// The float activations a QDQ fusion runs on the 8-bit data (unary_q, qdq_chain).
inline const std::set<std::string> kQdqActivations = {
    "Erf",      "Sigmoid",     "Tanh",      "Exp", "Log",  "Sqrt",     "Gelu",     "Relu",
    "Softplus", "HardSigmoid", "HardSwish", "Elu", "Selu", "Softsign", "LeakyRelu"};

}  // namespace hsched::opencl::qdq_detail
