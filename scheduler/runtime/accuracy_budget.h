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

// The largest finite fp16 value and the smallest normal one (2^-14: below it fp16 holds fewer
// than 11 significant bits, below 2^-24 none).
inline constexpr double kFp16Max = 65504;
inline constexpr double kFp16MinNormal = 0x1p-14;

// The nodes a plan computes in fp16 because their device lacks the precision they asked for
// (bf16 or int8 on an NPU or a GPU: placement kSubstituted) with an input or output, as the fp32
// model computes it from `inputs`, outside fp16's range: a value past 65504 (or NaN), or a
// tensor whose values are not all 0 and all below fp16's smallest normal (fp16 holds it as
// rounding noise or zeros). Each is a Rejection of fp16 on its device (reason accuracy_budget,
// detail "fp16 range: values up to 1.3e+05 on sample inputs, past fp16's 65504 (bf16 requested;
// npu0 computes fp16)", or "values at most 4.3e-09 ..., under fp16's smallest normal 6.1e-05").
Result<std::vector<Rejection>> outside_fp16_range(const Graph& graph, const Plan& plan,
                                                  const std::vector<Tensor>& inputs,
                                                  const DeviceProfile& cpu,
                                                  const ExecutorOptions& options);

// What the accuracy checks refuse once a plan has compiled, on `options.accuracy_inputs` (seeded
// inputs when empty), the fp32 values computed on `cpu` (the target's host; null when it has
// none): outside_fp16_range's nodes, then, when there are none and the policy has an accuracy
// budget, over_accuracy_budget's. Nothing when the plan substitutes no fp16 and has no budget.
// InvalidArgument for a budget without a host CPU.
Result<std::vector<Rejection>> accuracy_rejections(const Graph& graph, const Plan& plan,
                                                   const DeviceProfile* cpu,
                                                   PartitionCompiler& compiler,
                                                   const ExecutorOptions& options);

}  // namespace hsched::runtime
