#include "graph/graph.h"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/strong_components.hpp>

#include <functional>
#include <queue>

namespace hsched {
namespace {

template <typename T>
const T* find_attr(const AttributeMap& attrs, const std::string& key) {
  auto it = attrs.find(key);
  return it == attrs.end() ? nullptr : std::get_if<T>(&it->second);
}

using NodeGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;

}  // namespace

int64_t Value::byte_size() const {
  if (!shape.is_static() || dtype == DType::kUndefined) return 0;
  return shape.elements() * static_cast<int64_t>(dtype_size(dtype));
}

int64_t Node::attr_int(const std::string& key, int64_t fallback) const {
  const auto* v = find_attr<int64_t>(attributes, key);
  return v ? *v : fallback;
}

float Node::attr_float(const std::string& key, float fallback) const {
  const auto* v = find_attr<float>(attributes, key);
  return v ? *v : fallback;
}

std::string Node::attr_string(const std::string& key, const std::string& fallback) const {
  const auto* v = find_attr<std::string>(attributes, key);
  return v ? *v : fallback;
}

std::vector<int64_t> Node::attr_ints(const std::string& key) const {
  const auto* v = find_attr<std::vector<int64_t>>(attributes, key);
  return v ? *v : std::vector<int64_t>{};
}

ValueId Graph::add_value(std::string name, DType dtype, Shape shape) {
  const auto id = static_cast<ValueId>(values_.size());
  by_name_.emplace(name, id);
  values_.push_back(Value{std::move(name), dtype, std::move(shape), kNoNode, {}, std::nullopt});
  return id;
}

ValueId Graph::add_constant(std::string name, Tensor tensor) {
  const ValueId id = add_value(std::move(name), tensor.dtype(), tensor.shape());
  values_[static_cast<size_t>(id)].constant = std::move(tensor);
  return id;
}

NodeId Graph::add_node(Node node) {
  const auto id = static_cast<NodeId>(nodes_.size());
  for (ValueId in : node.inputs) {
    if (in != kNoValue) value(in).consumers.push_back(id);
  }
  for (ValueId out : node.outputs) {
    if (out != kNoValue) value(out).producer = id;
  }
  nodes_.push_back(std::move(node));
  return id;
}

std::optional<ValueId> Graph::find_value(const std::string& value_name) const {
  auto it = by_name_.find(value_name);
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

Result<std::vector<NodeId>> Graph::topological_order() const {
  const size_t n = nodes_.size();
  NodeGraph g(n);
  for (size_t consumer = 0; consumer < n; ++consumer) {
    for (ValueId in : nodes_[consumer].inputs) {
      if (in == kNoValue) continue;
      const NodeId producer = value(in).producer;
      if (producer != kNoNode) boost::add_edge(static_cast<size_t>(producer), consumer, g);
    }
  }
  // Strong components name a node on the cycle (boost's topological_sort only says "not a DAG").
  std::vector<size_t> component(n);
  if (n > 0) boost::strong_components(g, component.data());
  std::vector<size_t> component_size(n, 0);
  for (size_t c : component) ++component_size[c];
  for (size_t i = 0; i < n; ++i) {
    if (component_size[component[i]] > 1 || boost::edge(i, i, g).second) {
      return invalid_argument("graph has a cycle through node '" +
                              node_label(*this, static_cast<NodeId>(i)) + "' (" +
                              nodes_[i].op_type + ")");
    }
  }
  // Kahn's algorithm with a min-heap keeps the order deterministic and close to the file's.
  std::vector<size_t> in_degree(n, 0);
  for (size_t v = 0; v < n; ++v) {
    for (auto [e, end] = boost::out_edges(v, g); e != end; ++e) ++in_degree[boost::target(*e, g)];
  }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
  for (size_t v = 0; v < n; ++v) {
    if (in_degree[v] == 0) ready.push(v);
  }
  std::vector<NodeId> order;
  order.reserve(n);
  while (!ready.empty()) {
    const size_t v = ready.top();
    ready.pop();
    order.push_back(static_cast<NodeId>(v));
    for (auto [e, end] = boost::out_edges(v, g); e != end; ++e) {
      if (--in_degree[boost::target(*e, g)] == 0) ready.push(boost::target(*e, g));
    }
  }
  return order;
}

bool is_view_op(const std::string& op_type) {
  return op_type == "Identity" || op_type == "Reshape" || op_type == "Flatten" ||
         op_type == "Squeeze" || op_type == "Unsqueeze";
}

std::string node_label(const Graph& graph, NodeId id) {
  const Node& node = graph.node(id);
  return node.name.empty() ? "#" + std::to_string(id) : node.name;
}

}  // namespace hsched
