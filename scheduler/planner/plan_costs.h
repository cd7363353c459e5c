// Predictions finished on a placed plan, where the partitions are known: what the cost model's
// per-node figures cannot see alone.
#pragma once

#include "graph/graph.h"
#include "hsched/plan.h"
#include "scheduler/planner/cost_model.h"

namespace hsched::planner {

// Each partition's nodes take the precision its device computes the partition in
// (Device::partition_precision; an OpenCL partition that mixes fp16 and fp32 runs in fp32): a
// node that asked another says so in its detail and is predicted as it runs.
void unify_partition_precisions(const Graph& graph, const CostModel& cost, Plan& plan);

// A node predicted free because a backend fuses it into its producer is charged its own time
// when that producer runs in another partition.
void charge_fusions_across_partitions(const Graph& graph, const CostModel& cost, Plan& plan);

// Partition::run_ms and Plan::predicted_run_ms: each partition's nodes, its device's run
// overhead, the wake-up of a device that waited for another's partition (on the host, the
// hand-over part for every partition of a plan of several), on an OpenCL device
// stream_overhead_ms per kernel past the first kStreamKnee, and the copies the executor makes for
// it. Those are per partition, not per device: a partition off the host
// uploads every input it reads from elsewhere (weights stay on the device) and downloads every
// value it makes that another partition or the caller reads, so a value passed between two
// partitions of one device goes through the host, and each partition of a device that reads a
// value uploads it. Plan::transfers, one copy per value and device pair, does not show those.
// Plan::predicted_run_ms adds each partition's dispatch_overhead_ms (the executor's hand-offs,
// outside the partitions' own time) to their run_ms. `host_device`: the index in
// plan.target.devices where graph inputs and outputs live.
void add_run_times(const Graph& graph, const CostModel& cost, int host_device, Plan& plan);

}  // namespace hsched::planner
