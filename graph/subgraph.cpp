#include "graph/subgraph.h"

#include <unordered_map>
#include <unordered_set>

namespace hsched {

Subgraph extract_subgraph(const Graph& graph, const std::vector<NodeId>& nodes) {
  Subgraph part;
  part.graph.name = graph.name;
  part.graph.opset = graph.opset;
  const std::unordered_set<NodeId> inside(nodes.begin(), nodes.end());
  std::unordered_map<ValueId, ValueId> mapped;  // original value -> value of part.graph

  auto map_value = [&](ValueId original) {
    auto it = mapped.find(original);
    if (it != mapped.end()) return it->second;
    const Value& value = graph.value(original);
    const ValueId id = value.is_constant()
                           ? part.graph.add_constant(value.name, *value.constant)
                           : part.graph.add_value(value.name, value.dtype, value.shape);
    mapped.emplace(original, id);
    return id;
  };

  std::unordered_set<ValueId> produced;
  for (NodeId id : nodes) {
    for (ValueId out : graph.node(id).outputs) {
      if (out != kNoValue) produced.insert(out);
    }
  }
  for (NodeId id : nodes) {
    Node node = graph.node(id);
    for (ValueId& in : node.inputs) {
      if (in == kNoValue) continue;
      const bool is_new = mapped.find(in) == mapped.end();
      const ValueId original = in;
      in = map_value(original);
      if (is_new && !graph.value(original).is_constant() && produced.count(original) == 0) {
        part.graph.add_input(in);
        part.inputs.push_back(original);
      }
    }
    for (ValueId& out : node.outputs) {
      if (out != kNoValue) out = map_value(out);
    }
    part.graph.add_node(std::move(node));
  }

  const std::unordered_set<ValueId> graph_outputs(graph.outputs().begin(), graph.outputs().end());
  for (NodeId id : nodes) {
    for (ValueId out : graph.node(id).outputs) {
      if (out == kNoValue) continue;
      bool needed = graph_outputs.count(out) != 0;
      for (NodeId consumer : graph.value(out).consumers) needed |= inside.count(consumer) == 0;
      if (needed) {
        part.graph.add_output(mapped.at(out));
        part.outputs.push_back(out);
      }
    }
  }
  return part;
}

}  // namespace hsched
