// Progressive start (ExecutorOptions::progressive_start): compile() returns once the CPU can run
// the whole model; the plan compiles on one background thread and requests move to it, between
// requests, once it is ready. Internal to the executor.
#pragma once

#include <memory>

#include "graph/graph.h"
#include "hsched/executor.h"

namespace hsched {

// compile() without progressive start (executor.cpp). `owner`, when set, keeps `graph` alive.
Result<std::unique_ptr<Executable>> compile_now(const Graph& graph,
                                                std::shared_ptr<const Graph> owner,
                                                const Plan& plan, const ExecutorOptions& options);

// A plan that runs on the host only compiles at once (compile_now). Otherwise: a plan with every
// node on the host (fp32) compiled at once, the given plan compiled on a background thread
// (`options` as given, so each partition under compile_timeout_ms); requests run on the first
// until the second is ready (its compile failing leaves them on the CPU, with the error in
// ExecutableStats::progressive_error).
Result<std::unique_ptr<Executable>> compile_progressive(const Graph& graph,
                                                        std::shared_ptr<const Graph> owner,
                                                        const Plan& plan, ExecutorOptions options);

}  // namespace hsched
