#include "graph/subgraph.h"

#include <functional>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace hsched {

namespace {

bool is_random(const std::string& op) {
  return op.rfind("Random", 0) == 0 || op == "Multinomial" || op == "Bernoulli";
}

// The nodes outside `inside` that compute, from constants only, values the nodes of `inside`
// read (an int8 model's weight and bias dequantization), inputs first: each partition computes
// its own copy, as a compiler folds it, instead of receiving it from another partition.
std::vector<NodeId> constant_producers(const Graph& graph, const std::vector<NodeId>& nodes,
                                       const std::unordered_set<NodeId>& inside,
                                       const std::function<bool(NodeId)>& copyable) {
  std::unordered_map<NodeId, bool> foldable;  // memo
  std::unordered_set<NodeId> taken;
  std::vector<NodeId> order;
  // Iterative depth-first walk (chains of constant nodes can be long): (node, next input).
  std::vector<std::pair<NodeId, size_t>> stack;
  auto visit = [&](NodeId root) {
    stack.emplace_back(root, 0);
    while (!stack.empty()) {
      auto& [id, next] = stack.back();
      const Node& node = graph.node(id);
      if (next == 0 && (node.inputs.empty() || is_random(node.op_type) || !copyable(id))) {
        foldable[id] = false;
      }
      if (foldable.count(id) != 0 && next == 0) {
        stack.pop_back();
        continue;
      }
      if (next < node.inputs.size()) {
        const ValueId in = node.inputs[next++];
        if (in == kNoValue || graph.value(in).is_constant()) continue;
        const NodeId producer = graph.value(in).producer;
        if (producer == kNoNode || inside.count(producer) != 0) {
          foldable[id] = false;
        } else if (foldable.count(producer) == 0) {
          stack.emplace_back(producer, 0);
        } else if (!foldable[producer]) {
          foldable[id] = false;
        }
        continue;
      }
      if (foldable.count(id) == 0) {
        bool all = true;
        for (ValueId in : node.inputs) {
          if (in == kNoValue || graph.value(in).is_constant()) continue;
          all = all && foldable[graph.value(in).producer];
        }
        foldable[id] = all;
        if (all && taken.insert(id).second) order.push_back(id);
      }
      stack.pop_back();
    }
  };
  for (NodeId id : nodes) {
    for (ValueId in : graph.node(id).inputs) {
      if (in == kNoValue || graph.value(in).is_constant()) continue;
      const NodeId producer = graph.value(in).producer;
      if (producer != kNoNode && inside.count(producer) == 0) visit(producer);
    }
  }
  return order;
}

}  // namespace

Subgraph extract_subgraph(const Graph& graph, const std::vector<NodeId>& requested,
                          const std::function<bool(NodeId)>& copyable,
                          const DequantizesHere& dequantizes) {
  Subgraph part;
  part.graph.name = graph.name;
  part.graph.opset = graph.opset;
  const std::unordered_set<NodeId> requested_set(requested.begin(), requested.end());
  const auto copied_by = [&](NodeId dq, NodeId reader) {
    return dequantizes && graph.node(dq).op_type == "DequantizeLinear" && dequantizes(dq, reader);
  };
  // The DequantizeLinears outside the set whose outputs it dequantizes itself, then the set.
  std::vector<NodeId> own;
  std::unordered_set<NodeId> own_set = requested_set;
  for (NodeId id : requested) {
    for (ValueId in : graph.node(id).inputs) {
      if (in == kNoValue) continue;
      const NodeId producer = graph.value(in).producer;
      if (producer == kNoNode || own_set.count(producer) != 0 || !copied_by(producer, id)) continue;
      own.push_back(producer);
      own_set.insert(producer);
    }
  }
  own.insert(own.end(), requested.begin(), requested.end());
  std::vector<NodeId> nodes;
  if (copyable) nodes = constant_producers(graph, own, own_set, copyable);
  nodes.insert(nodes.end(), own.begin(), own.end());
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
    part.nodes.push_back(id);
  }

  const std::unordered_set<ValueId> graph_outputs(graph.outputs().begin(), graph.outputs().end());
  for (NodeId id : requested) {
    for (ValueId out : graph.node(id).outputs) {
      if (out == kNoValue) continue;
      // Another part computes what this one copies in too: only `requested` is this part's.
      bool needed = graph_outputs.count(out) != 0;
      for (NodeId consumer : graph.value(out).consumers) {
        if (requested_set.count(consumer) == 0) {
          needed |= !copied_by(id, consumer);
        } else if (graph.node(consumer).op_type == "DequantizeLinear") {
          for (ValueId dequantized : graph.node(consumer).outputs) {
            if (dequantized == kNoValue) continue;
            for (NodeId reader : graph.value(dequantized).consumers) {
              needed |= requested_set.count(reader) == 0 && copied_by(consumer, reader);
            }
          }
        }
      }
      if (needed) {
        part.graph.add_output(mapped.at(out));
        part.outputs.push_back(out);
      }
    }
  }
  return part;
}

}  // namespace hsched
