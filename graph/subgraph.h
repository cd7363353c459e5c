// A part of a graph as a graph of its own: what a backend compiles for one partition of a plan.
#pragma once

#include <functional>
#include <vector>

#include "graph/graph.h"

namespace hsched {

// The nodes `nodes` of `graph` (in the order given, which must respect their dependencies) as a
// graph. With `copyable`, nodes outside the set for which it holds that compute values the set
// reads from constants only (an int8 model's weight dequantization, shared biases behind
// Identity) are copied in ahead of them, so that the part computes those values itself, as a
// compiler folds constants, instead of receiving them. With `dequantizes(dq, reader)`, a
// DequantizeLinear outside the set whose output a node `reader` of the set reads is copied in
// where it holds: the part reads the 8-bit value and dequantizes it itself, and a
// DequantizeLinear of the set that every reader outside copies so is no output. Its inputs are
// the other non-constant values those nodes read that none of them produces; its outputs are the
// values the nodes of `nodes` produce that a node outside the set reads (or dequantizes itself)
// or that are outputs of `graph`. Constants are shared (Tensor storage is reference-counted),
// not copied.
struct Subgraph {
  Graph graph;
  std::vector<ValueId> inputs;   // per input of `graph`: the value of the original graph
  std::vector<ValueId> outputs;  // per output of `graph`: the value of the original graph
  std::vector<NodeId> nodes;     // per node of `graph`: the node of the original graph
};
using DequantizesHere = std::function<bool(NodeId dq, NodeId reader)>;
Subgraph extract_subgraph(const Graph& graph, const std::vector<NodeId>& nodes,
                          const std::function<bool(NodeId)>& copyable = {},
                          const DequantizesHere& dequantizes = {});

}  // namespace hsched
