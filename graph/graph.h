// The graph IR: values (tensors) and nodes, with producers, consumers and topological order.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "hsched/dtype.h"
#include "hsched/shape.h"
#include "hsched/tensor.h"
#include "graph/attribute.h"
#include "hsched/ids.h"
#include "hsched/status.h"

namespace hsched {

struct Value {
  std::string name;
  DType dtype = DType::kUndefined;
  Shape shape;
  NodeId producer = kNoNode;       // kNoNode for graph inputs and constants
  std::vector<NodeId> consumers;   // one entry per use, in node order
  std::optional<Tensor> constant;  // initializer data (weights, folded shape tensors)

  bool is_constant() const { return constant.has_value(); }
  // Bytes of a static shape (0 when not static or dtype undefined).
  int64_t byte_size() const;
};

struct Node {
  std::string name;
  std::string op_type;
  std::string domain;            // "" for the default ONNX domain
  std::vector<ValueId> inputs;   // kNoValue for an omitted optional input
  std::vector<ValueId> outputs;  // kNoValue for an omitted optional output
  AttributeMap attributes;

  int64_t attr_int(const std::string& key, int64_t fallback) const;
  float attr_float(const std::string& key, float fallback) const;
  std::string attr_string(const std::string& key, const std::string& fallback) const;
  std::vector<int64_t> attr_ints(const std::string& key) const;  // empty when absent
  bool has_attr(const std::string& key) const { return attributes.count(key) != 0; }
};

// Owns values and nodes. Nodes are kept in a topological order once built by the importer;
// topological_order() checks that independently (Boost.Graph) and names a cycle if there is one.
// Threading: immutable use from many threads is safe; building is single-threaded.
class Graph {
 public:
  ValueId add_value(std::string name, DType dtype, Shape shape);
  ValueId add_constant(std::string name, Tensor tensor);
  // Adds a node and records it as producer/consumer of its values (which must exist).
  NodeId add_node(Node node);
  void add_input(ValueId id) { inputs_.push_back(id); }
  void add_output(ValueId id) { outputs_.push_back(id); }

  const std::vector<Value>& values() const { return values_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const Value& value(ValueId id) const { return values_.at(static_cast<size_t>(id)); }
  Value& value(ValueId id) { return values_.at(static_cast<size_t>(id)); }
  const Node& node(NodeId id) const { return nodes_.at(static_cast<size_t>(id)); }
  const std::vector<ValueId>& inputs() const { return inputs_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }
  std::optional<ValueId> find_value(const std::string& name) const;

  // Nodes ordered so that each comes after the producers of its inputs, ties by node index.
  // InvalidArgument naming a node on the cycle when there is one.
  Result<std::vector<NodeId>> topological_order() const;

  std::string name;
  int64_t opset = 0;  // version of the default ONNX domain

 private:
  std::vector<Value> values_;
  std::vector<Node> nodes_;
  std::vector<ValueId> inputs_;
  std::vector<ValueId> outputs_;
  std::unordered_map<std::string, ValueId> by_name_;
};

// A display name for a node: its name, or "#index" when the model left it unnamed.
std::string node_label(const Graph& graph, NodeId id);

// Identity, Reshape, Flatten, Squeeze, Unsqueeze: ops whose output is their input's bytes (a
// backend can run them as views).
bool is_view_op(const std::string& op_type);

}  // namespace hsched
