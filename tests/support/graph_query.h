// Questions tests ask of an imported graph.
#pragma once

#include <algorithm>
#include <string>

#include "graph/graph.h"

namespace hsched::test {

// Whether `graph` has a node of op type `op`.
inline bool has_op(const Graph& graph, const std::string& op) {
  return std::any_of(graph.nodes().begin(), graph.nodes().end(),
                     [&](const Node& node) { return node.op_type == op; });
}

}  // namespace hsched::test
