// FLOP and byte counts per node, for reports and the cost model. A multiply-add counts 2 FLOP.
#pragma once

#include <cstdint>

#include "graph/graph.h"

namespace hsched {

struct NodeCost {
  int64_t flop = 0;           // floating/integer arithmetic operations
  int64_t bytes_read = 0;     // bytes of all inputs (weights included)
  int64_t bytes_written = 0;  // bytes of all outputs
  bool known = true;          // false when a shape needed for the count is not static
};

NodeCost node_cost(const Graph& graph, NodeId node);

}  // namespace hsched
