// A part of a graph as a graph of its own: what a backend compiles for one partition of a plan.
#pragma once

#include <vector>

#include "graph/graph.h"

namespace hsched {

// The nodes `nodes` of `graph` (in the order given, which must respect their dependencies) as a
// graph. Its inputs are the non-constant values those nodes read that none of them produces; its
// outputs are the values they produce that a node outside the set reads or that are outputs of
// `graph`. Constants are shared (Tensor storage is reference-counted), not copied.
struct Subgraph {
  Graph graph;
  std::vector<ValueId> inputs;   // per input of `graph`: the value of the original graph
  std::vector<ValueId> outputs;  // per output of `graph`: the value of the original graph
};
Subgraph extract_subgraph(const Graph& graph, const std::vector<NodeId>& nodes);

}  // namespace hsched
