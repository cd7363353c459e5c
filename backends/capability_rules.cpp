#include "backends/capability_rules.h"

#include <algorithm>
#include <string>
#include <vector>

namespace hsched {
namespace {

Rejection reject(NodeId node, const DeviceProfile& device, Precision precision, ReasonCode reason,
                 std::string detail) {
  return Rejection{node, device.id, precision, reason, std::move(detail)};
}

std::string join_precisions(const std::vector<Precision>& precisions) {
  std::string text;
  for (Precision p : precisions)
    text += (text.empty() ? "" : ", ") + std::string(precision_name(p));
  return text.empty() ? "none" : text;
}

// Inputs then outputs of a node, omitted optional ones skipped.
std::vector<ValueId> node_values(const Node& node) {
  std::vector<ValueId> ids;
  for (ValueId id : node.inputs) {
    if (id != kNoValue) ids.push_back(id);
  }
  for (ValueId id : node.outputs) {
    if (id != kNoValue) ids.push_back(id);
  }
  return ids;
}

// node_values with a value read twice counted once.
std::vector<ValueId> distinct_node_values(const Node& node) {
  std::vector<ValueId> ids = node_values(node);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

std::string mib(int64_t bytes) {
  return std::to_string((bytes + (int64_t{1} << 20) - 1) >> 20) + " MiB";
}

}  // namespace

int64_t element_bytes(DType dtype, Precision precision) {
  if (!is_floating(dtype)) return static_cast<int64_t>(dtype_size(dtype));
  switch (precision) {
    case Precision::kFp16:
    case Precision::kBf16:
      return 2;
    case Precision::kInt8:
      return 1;
    case Precision::kFp32:
      break;
  }
  return static_cast<int64_t>(dtype_size(dtype));
}

std::optional<Rejection> check_default_domain(const Graph& graph, NodeId node,
                                              const DeviceProfile& device, Precision precision) {
  const Node& n = graph.node(node);
  if (n.domain.empty()) return std::nullopt;
  return reject(node, device, precision, ReasonCode::kOpUnsupported,
                "op '" + n.op_type + "' of domain '" + n.domain +
                    "': only the default ONNX domain is supported");
}

std::optional<Rejection> check_op_listed(const Graph& graph, NodeId node,
                                         const DeviceProfile& device, Precision precision) {
  const Node& n = graph.node(node);
  if (device.supports_op(n.op_type)) return std::nullopt;
  return reject(node, device, precision, ReasonCode::kOpUnsupported,
                "op '" + n.op_type + "' is not in " + device.id + "'s op list");
}

std::optional<Rejection> check_precision_listed(const Graph&, NodeId node,
                                                const DeviceProfile& device, Precision precision) {
  if (device.peak_gflops.count(precision) != 0) return std::nullopt;
  return reject(node, device, precision, ReasonCode::kPrecisionNotAllowed,
                device.id + " does not compute " + precision_name(precision) + " (computes " +
                    join_precisions(device.precisions()) + ")");
}

std::optional<Rejection> check_float_data(const Graph& graph, NodeId node,
                                          const DeviceProfile& device, Precision precision) {
  if (precision == Precision::kFp32) return std::nullopt;
  const Node& n = graph.node(node);
  // A QuantizeLinear computes on its float input; only its output is an integer.
  if (n.op_type == "QuantizeLinear" && n.domain.empty()) return std::nullopt;
  const Value* first = nullptr;
  for (ValueId id : n.outputs) {
    if (id == kNoValue) continue;
    const Value& v = graph.value(id);
    if (is_floating(v.dtype)) return std::nullopt;
    if (first == nullptr) first = &v;
  }
  if (first == nullptr) return std::nullopt;  // no outputs: nothing computed in any precision
  return reject(node, device, precision, ReasonCode::kDtypeUnsupported,
                "output '" + first->name + "' is " + std::string(dtype_name(first->dtype)) + ": " +
                    precision_name(precision) + " applies to float data only");
}

std::optional<Rejection> check_static_shapes(const Graph& graph, NodeId node,
                                             const DeviceProfile& device, Precision precision) {
  for (ValueId id : node_values(graph.node(node))) {
    const Value& v = graph.value(id);
    if (!v.shape.rank_known || !v.shape.is_static()) {
      return reject(node, device, precision, ReasonCode::kShapeUnsupported,
                    "tensor '" + v.name + "' has a dynamic shape " + v.shape.to_string());
    }
    if (v.shape.rank() > kMaxDeviceRank) {
      return reject(node, device, precision, ReasonCode::kShapeUnsupported,
                    "tensor '" + v.name + "' has rank " + std::to_string(v.shape.rank()) + " > " +
                        std::to_string(kMaxDeviceRank));
    }
  }
  return std::nullopt;
}

std::optional<Rejection> check_attributes(const Graph& graph, NodeId node,
                                          const DeviceProfile& device, Precision precision) {
  const Node& n = graph.node(node);
  auto refuse = [&](const std::string& key, const std::string& value) {
    return reject(node, device, precision, ReasonCode::kAttributeUnsupported,
                  "attribute " + key + "=" + value);
  };
  // The OpenCL backend resizes cubically and resolves auto_pad (its check_node decides).
  const bool opencl = device.api == DeviceApi::kOpenCl;
  if (n.op_type == "Resize" || n.op_type == "Upsample") {
    const std::string mode = n.attr_string("mode", "nearest");
    if (mode != "nearest" && mode != "linear" && !(opencl && mode == "cubic")) {
      return refuse("mode", mode);
    }
  }
  if (n.op_type == "Conv" || n.op_type == "ConvTranspose") {
    const std::string auto_pad = n.attr_string("auto_pad", "NOTSET");
    if (auto_pad != "NOTSET" && !opencl) {
      return refuse("auto_pad", auto_pad);
    }
  }
  if (n.op_type == "Pad" && device.kind == DeviceKind::kNpu) {
    const std::string mode = n.attr_string("mode", "constant");
    if (mode != "constant") return refuse("mode", mode);
  }
  return std::nullopt;
}

std::optional<Rejection> check_memory(const Graph& graph, NodeId node, const DeviceProfile& device,
                                      Precision precision) {
  if (device.memory_bytes <= 0) return std::nullopt;
  int64_t bytes = 0;
  for (ValueId id : distinct_node_values(graph.node(node))) {
    const Value& v = graph.value(id);
    if (!v.shape.is_static()) continue;
    bytes += v.shape.elements() * element_bytes(v.dtype, precision);
  }
  if (bytes <= device.memory_bytes) return std::nullopt;
  return reject(node, device, precision, ReasonCode::kMemoryExceeded,
                "weights and activations need " + mib(bytes) + " in " + precision_name(precision) +
                    "; " + device.id + " has " + mib(device.memory_bytes));
}

Status check_partition_memory(const Graph& part, const DeviceProfile& device,
                              Precision precision) {
  if (device.memory_bytes <= 0) return Status::ok();
  const auto bytes_of = [&](const Value& v) {
    return v.shape.is_static() ? v.shape.elements() * element_bytes(v.dtype, precision) : 0;
  };
  int64_t weights = 0;
  for (const Value& v : part.values()) {
    if (v.is_constant() && !v.consumers.empty()) weights += bytes_of(v);
  }
  int64_t working_set = 0;
  for (const Node& node : part.nodes()) {
    int64_t bytes = 0;
    for (ValueId id : distinct_node_values(node)) {
      if (!part.value(id).is_constant()) bytes += bytes_of(part.value(id));
    }
    working_set = std::max(working_set, bytes);
  }
  if (weights + working_set <= device.memory_bytes) return Status::ok();
  return Status(ErrorCode::kResourceExhausted,
                "memory_exceeded: the partition needs at least " + mib(weights + working_set) +
                    " on " + device.id + " (weights " + mib(weights) +
                    ", the largest node's activations " + mib(working_set) + "), which has " +
                    mib(device.memory_bytes));
}

}  // namespace hsched
