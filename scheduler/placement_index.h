// Internal to the partitioner: a PlacementProblem's graph in flat arrays (edges, per-node inputs
// and outputs, positions in the order), built once per problem so that grouping, the cost
// function and the search share it. Not part of the public API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "scheduler/partitioner.h"

namespace hsched::sched {

// Compressed rows: the items of row r are items[begin[r] .. begin[r + 1]).
struct Rows {
  std::vector<int> begin{0};
  std::vector<int> items;

  const int* first(int row) const { return items.data() + begin[static_cast<size_t>(row)]; }
  const int* last(int row) const { return items.data() + begin[static_cast<size_t>(row) + 1]; }
};

class PlacementIndex {
 public:
  // Contract: problem.order is a topological order of every node (when it is empty the node
  // indices are taken as the order); every value names existing nodes; device_count <= 64.
  explicit PlacementIndex(const PlacementProblem& problem);

  const PlacementProblem& problem() const { return problem_; }
  int node_count() const { return node_count_; }
  int device_count() const { return problem_.device_count; }
  const std::vector<int>& order() const { return order_; }
  int position(int node) const { return position_[static_cast<size_t>(node)]; }

  const Rows& successors() const { return successors_; }      // per node, repeats kept
  const Rows& predecessors() const { return predecessors_; }  // per node, repeats kept
  const Rows& inputs() const { return inputs_; }              // distinct values each node reads
  const Rows& outputs() const { return outputs_; }            // values each node produces
  const Rows& consumers() const { return consumers_; }  // distinct readers per value, by position

  double overhead_ms(int device) const;
  double link_ms(int from, int to, int64_t bytes) const;

  // Transfer ms of value v produced on `source` and read on the devices of `destinations` (a bit
  // per device; the host's bit is added for graph outputs).
  double value_ms(int value, int source, uint64_t destinations) const;
  int source_of(int value, const std::vector<int>& device_of) const;

 private:
  const PlacementProblem& problem_;
  int node_count_ = 0;
  std::vector<int> order_;
  std::vector<int> position_;
  Rows successors_;
  Rows predecessors_;
  Rows inputs_;
  Rows outputs_;
  Rows consumers_;
};

}  // namespace hsched::sched
