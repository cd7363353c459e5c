// FLOP and byte counts per node, for reports and the cost model. A multiply-add counts 2 FLOP.
#pragma once

#include <cstdint>
#include <string>

#include "graph/graph.h"

namespace hsched {

struct NodeCost {
  int64_t flop = 0;           // floating/integer arithmetic operations
  int64_t bytes_read = 0;     // bytes of all inputs (weights included; of a gather's table, the
                              // rows it selects: as many bytes as it writes)
  int64_t bytes_written = 0;  // bytes of all outputs
  bool known = true;          // false when a shape needed for the count is not static
};

// Gather, GatherElements, GatherND: ops whose first input is a table they read rows of.
bool is_gather(const std::string& op_type);

NodeCost node_cost(const Graph& graph, NodeId node);

}  // namespace hsched
