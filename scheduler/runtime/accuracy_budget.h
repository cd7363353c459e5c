// A policy's accuracy budget (Policy::accuracy), checked when a plan is compiled: each node the
// plan puts in a budgeted precision runs alone on its device in that precision and on the CPU in
// fp32, both on the node's inputs as the fp32 model computes them from sample inputs.
#pragma once

#include <vector>

#include "hsched/executor.h"
#include "hsched/plan.h"
#include "scheduler/runtime/partition_program.h"

namespace hsched::runtime {

// The nodes of `plan` over `budget`, each as a Rejection (its device and precision, reason
// accuracy_budget, detail "max_rel 0.31 over the bf16 budget 0.02 on sample inputs"). Nodes are
// compiled through `compiler` (one-node partitions); the fp32 values come from the whole graph
// on the CPU (`cpu`, the target's host) with `inputs`.
Result<std::vector<Rejection>> over_accuracy_budget(const Graph& graph, const Plan& plan,
                                                    const AccuracyBudget& budget,
                                                    const std::vector<Tensor>& inputs,
                                                    const DeviceProfile& cpu,
                                                    PartitionCompiler& compiler,
                                                    const ExecutorOptions& options);

}  // namespace hsched::runtime
