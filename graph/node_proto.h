// Small readers and editors of ONNX NodeProtos, for the passes that rewrite an unvalidated model
// before validation (graph/newer_opsets.h, graph/microsoft_ops.h).
#pragma once

#include <cstdint>
#include <string>

#include <onnx/onnx_pb.h>

namespace hsched {

inline const onnx::AttributeProto* find_attr(const onnx::NodeProto& node,
                                             const std::string& name) {
  for (const auto& attr : node.attribute()) {
    if (attr.name() == name) return &attr;
  }
  return nullptr;
}

inline void erase_attr(onnx::NodeProto& node, const std::string& name) {
  auto* attrs = node.mutable_attribute();
  for (int i = attrs->size(); i-- > 0;) {
    if (attrs->Get(i).name() == name) attrs->DeleteSubrange(i, 1);
  }
}

inline int64_t int_attr(const onnx::NodeProto& node, const std::string& name, int64_t fallback) {
  const onnx::AttributeProto* attr = find_attr(node, name);
  return attr == nullptr ? fallback : attr->i();
}

// Whether input `i` is given (present and not the empty name of an omitted optional input).
inline bool has_input(const onnx::NodeProto& node, int i) {
  return node.input_size() > i && !node.input(i).empty();
}

}  // namespace hsched
