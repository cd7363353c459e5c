// Internal to the CPU program's fusion passes: which step produces and which steps read each
// value, among the steps a pass sees.
#pragma once

#include <optional>
#include <set>
#include <vector>

#include "graph/graph.h"

namespace hsched::cpu {

struct StepUses {
  // `nodes` are the program's steps in order; those `absorbed` by an earlier pass are left out.
  StepUses(const Graph& graph, const std::vector<Node*>& nodes, const std::vector<bool>& absorbed)
      : produced_at(graph.values().size(), -1),
        consumers(graph.values().size()),
        outputs(graph.outputs().begin(), graph.outputs().end()) {
    for (size_t s = 0; s < nodes.size(); ++s) {
      if (absorbed[s]) continue;
      for (ValueId v : nodes[s]->outputs) {
        if (v != kNoValue) produced_at[static_cast<size_t>(v)] = static_cast<int>(s);
      }
      for (ValueId v : nodes[s]->inputs) {
        if (v != kNoValue) consumers[static_cast<size_t>(v)].push_back(s);
      }
    }
  }

  // The step reading `v` when it is the only reader and `v` is no graph output.
  std::optional<size_t> sole_consumer(ValueId v) const {
    const auto& c = consumers[static_cast<size_t>(v)];
    if (c.size() != 1 || outputs.count(v)) return std::nullopt;
    return c[0];
  }

  std::vector<int> produced_at;                // per value: its producing step, or -1
  std::vector<std::vector<size_t>> consumers;  // per value: the steps reading it
  std::set<ValueId> outputs;                   // graph outputs: never fused away
};

}  // namespace hsched::cpu
