// Internal to the partitioner: plan_cost() and group_partitions() on a prebuilt index, with
// reusable scratch space so that the search can evaluate many assignments without allocating.
// Everything here is in slots (placement_index.h). Not part of the public API.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "scheduler/planner/placement_index.h"

namespace hsched::planner {

// The ready nodes of one device as a bitset over slots with a cursor at or below the lowest one:
// taking the lowest is a short forward scan, since ready nodes sit near the front of the order.
// (A binary heap here cost a quarter of each evaluation.)
class ReadySlots {
 public:
  void reset(int slots);
  bool empty() const { return count_ == 0; }
  void insert(int slot);
  int lowest();  // contract: !empty()
  void erase(int slot);

 private:
  std::vector<uint64_t> words_;
  int cursor_ = 0;  // no slot below it is ready
  int count_ = 0;
};

// Threading: one evaluator per thread (it owns scratch space); the index is shared read-only.
// Contract: every assignment passed names existing devices (PlacementIndex::to_slots checks).
class PlanEvaluator {
 public:
  explicit PlanEvaluator(const PlacementIndex& index);

  // plan_cost(): node and transfer ms plus the partition overhead of the grouping.
  double cost(const SlotDevices& device_at);
  // The partition overhead alone: partition_overhead_ms summed over the grouping's partitions.
  // The search tracks node and transfer ms itself and needs only this.
  double overhead_ms(const SlotDevices& device_at);
  // group_partitions(), in slots.
  Grouping group(const SlotDevices& device_at);
  // The grouping of the assignment last passed to cost() or overhead_ms(), without redoing it.
  Grouping last_grouping() const;

 private:
  // The grouping's execution sequence and its same-device runs (sequence_, run_of_,
  // run_device_).
  void sequence(const SlotDevices& device_at);
  void emit_deferred_inputs(int u, int run);

  const PlacementIndex& index_;
  std::vector<ReadySlots> ready_;  // per device
  std::vector<int> waiting_;       // per slot: inputs not yet sequenced (deferred ones aside)
  std::vector<char> deferred_;     // per slot: 0 no, 1 deferred, 2 deferred and sequenced
  std::vector<std::pair<int, const int*>> stack_;  // emit_deferred_inputs: (slot, next input)
  std::vector<int> sequence_;
  std::vector<int> run_of_;      // per slot
  std::vector<int> run_device_;  // per run
};

// Node and transfer ms of an assignment (plan_cost without the partition overhead);
// kNotAllowed when a node is on a device it is not allowed on.
double node_and_transfer_ms(const PlacementIndex& index, const SlotDevices& device_at);

}  // namespace hsched::planner
