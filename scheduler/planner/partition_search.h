// Internal to the partitioner: the two stages of partition()'s search. Not part of the public
// API; partitioner.h states what the whole search promises.
#pragma once

#include <vector>

#include "scheduler/planner/placement_index.h"

namespace hsched::planner {

// Dynamic programming over the slots (the problem's order) with the device of the current node as
// state. A state's cost counts its node, the partition overhead when the device changes from the
// previous node's, the output copies back to the host, and each input's transfer from the
// device its producer has on the state's back-pointer path (charged once per value and device,
// looking back a bounded number of earlier readers). Exact on chains; on other graphs a
// starting point for improve_locally(). Ties go to the lower device index.
// Contract: every node has at least one finite node_ms entry.
SlotDevices assign_by_dp(const PlacementIndex& index);

// Local improvement of `device_at`: passes of single-node moves, then passes of whole-partition
// moves, each move judged by its exact node and transfer cost change plus an estimate of the
// partitions it adds or removes; a pass is kept only when the plan cost of the result is lower.
// Then, on graphs small enough (exact_search_fits), Kernighan-Lin passes of single-node moves
// judged by the exact plan cost. The plan cost never rises. Deterministic. Returns the plan
// cost of the result, bit for bit what plan_cost() gives for it.
double improve_locally(const PlacementIndex& index, SlotDevices& device_at);

// Whether the graph is small enough for improve_locally's exact stage (a few dozen nodes);
// partition() then also restarts the search from other assignments.
bool exact_search_fits(const PlacementIndex& index);

}  // namespace hsched::planner
