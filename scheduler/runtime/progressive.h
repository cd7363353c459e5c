// Progressive start (ExecutorOptions::progressive_start): compile() returns once the CPU can run
// the whole model; the plan's partitions compile on one background thread and requests move to
// them, between requests, as they become ready. Internal to the executor.
#pragma once

#include <memory>

#include "graph/graph.h"
#include "hsched/executor.h"
#include "scheduler/runtime/plan_executable.h"

namespace hsched {

// A plan that runs on the host only compiles at once (compile_now). Otherwise: a plan with every
// node on the host (fp32) compiled at once, the given plan staged on a background thread
// (compile_staged: its device partitions on the CPU) and its device partitions built there one
// after another (`options` as given, so each under compile_timeout_ms); requests run on the
// first until a device partition is built, then on the staged plan. A device build failing has
// the plan compiled whole (compile_now, re-planned) and requests move to it once it is ready (its
// compile failing leaves them where they are, with the error in
// ExecutableStats::progressive_error).
Result<std::unique_ptr<Executable>> compile_progressive(const Graph& graph,
                                                        std::shared_ptr<const Graph> owner,
                                                        const Plan& plan, ExecutorOptions options);

}  // namespace hsched
