// Internal to the partitioner: plan_cost() and group_partitions() on a prebuilt index, with
// reusable scratch space so that the search can evaluate many assignments without allocating.
// Not part of the public API.
#pragma once

#include <cstdint>
#include <vector>

#include "scheduler/placement_index.h"

namespace hsched::sched {

// Threading: one evaluator per thread (it owns scratch space); the index is shared read-only.
class PlanEvaluator {
 public:
  explicit PlanEvaluator(const PlacementIndex& index);

  // plan_cost(): node and transfer ms plus the partition overhead of the grouping.
  double cost(const std::vector<int>& device_of);
  // The partition overhead alone: partition_overhead_ms summed over the grouping's partitions.
  // The search tracks node and transfer ms itself and needs only this.
  double overhead_ms(const std::vector<int>& device_of);
  // group_partitions().
  Grouping group(const std::vector<int>& device_of);
  // The grouping of the assignment last passed to cost() or overhead_ms(), without redoing it.
  Grouping last_grouping(const std::vector<int>& device_of);

 private:
  // The grouping's execution sequence and its same-device runs (sequence_, run_of_).
  void sequence(const std::vector<int>& device_of);
  int find(int node);

  const PlacementIndex& index_;
  std::vector<std::vector<int>> ready_;  // per device: a min-heap of positions
  std::vector<int> waiting_;             // per node: inputs not yet sequenced
  std::vector<int> sequence_;
  std::vector<int> run_of_;
  std::vector<int> parent_;             // union-find over nodes within a run
  std::vector<int64_t> partitions_on_;  // per device
};

// Node and transfer ms of an assignment (plan_cost without the partition overhead);
// kNotAllowed when a node is on a device it is not allowed on, or on no device.
double node_and_transfer_ms(const PlacementIndex& index, const std::vector<int>& device_of);

}  // namespace hsched::sched
