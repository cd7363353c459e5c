// Predictions finished on a placed plan, where the partitions are known: what the cost model's
// per-node figures cannot see alone.
#pragma once

#include "graph/graph.h"
#include "hsched/plan.h"
#include "scheduler/cost_model.h"

namespace hsched::sched {

// An OpenCL partition that mixes precisions runs in fp32: its fp16 nodes become fp32 (detail
// says so), predicted as such.
void unify_opencl_precisions(const Graph& graph, const CostModel& cost, Plan& plan);

// A node predicted free because a backend fuses it into its producer is charged its own time
// when that producer runs in another partition.
void charge_fusions_across_partitions(const Graph& graph, const CostModel& cost, Plan& plan);

// Partition::run_ms (its nodes, its device's run overhead, the wake-up of a device that waited
// for another's partition, its copies) and Plan::predicted_run_ms, once transfers are known.
void add_run_times(const Graph& graph, Plan& plan);

}  // namespace hsched::sched
