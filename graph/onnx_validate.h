// hsched's own structural checks of an untrusted ONNX model. They run before libonnx's checker
// and shape inference see the model (libonnx 1.12 can crash on some malformed nodes), and bound
// every size the model declares.
#pragma once

#include <string>

#include "graph/tensor_proto.h"
#include "hsched/status.h"

namespace onnx {
class ModelProto;
class NodeProto;
}  // namespace onnx

namespace hsched {

inline constexpr int kMaxNodes = 1 << 20;
inline constexpr int kMaxAttributeValues = 1 << 24;
// The longest list attribute of an ONNX operator that gives values per axis (pads: two per axis);
// only attributes holding data (Constant's value_ints...) may be longer.
inline constexpr int kMaxAxisListLength = 2 * static_cast<int>(kMaxRank);

// The default ONNX domain: "" or "ai.onnx".
inline bool is_default_domain(const std::string& domain) {
  return domain.empty() || domain == "ai.onnx";
}

// "node 'conv1' (Conv)" or "node #12 (Conv)" for unnamed nodes.
std::string node_description(const onnx::NodeProto& node, int index);

// First inlines the model's functions (graph/function_inline.h), so that all that follows
// applies to the nodes of their bodies too. Checks IR version and opsets, tensor types and dims,
// initializer payloads (external data included, through `external`), that every name is defined
// once and every used name is defined, node arity and attribute types against the operator
// schemas, list attributes of ONNX operators no longer than kMaxAxisListLength. Then reorders the
// graph's nodes topologically (what the ONNX checker expects), refusing a cycle by naming a node
// on it. The only subgraphs accepted are the branches of an If (nested at most 4 deep, their
// nodes counted in kMaxNodes): each is checked and sorted the same way, may read the names of
// the graphs around it, and what it reads counts as an input of its If when sorting. Returns the
// version of the default ONNX domain (1 to kMaxOpset: the caller upgrades old opsets; opsets 18
// to 22 are rewritten to 17 after the functions are inlined, graph/newer_opsets.h). ONNX Runtime's
// quantized operators of its com.microsoft domain are then rewritten into standard ones
// (graph/microsoft_ops.h).
Result<int64_t> validate_and_sort(onnx::ModelProto& model, ExternalData& external);

}  // namespace hsched
