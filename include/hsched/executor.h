// Running a plan: every partition compiled on its device (the CPU backend, OpenCL programs),
// then run in plan order with tensors handed between them on the host.
//
//   auto plan = hsched::schedule(graph, target, policy);
//   auto exe = hsched::compile(graph, *plan, {});
//   auto outputs = (*exe)->run(inputs);
//
// Late failures: a non-CPU partition that cannot be compiled (compile_timeout past the deadline,
// build_failed) becomes a rejection of each of its nodes on that device, the graph is planned
// again with those rejections (final for the run: each round removes a device from some nodes, so
// the loop ends), and compiling goes on; the CPU takes what is left. plan() is the plan that runs.
//
// Transfers: a partition's outputs come back to host memory with blocking reads before the next
// partition reads them (an event-per-copy pipeline across devices is the executor of issue 6).
// Threading: run() may be called from several threads; calls are serialized.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "hsched/plan.h"
#include "hsched/status.h"

namespace hsched {

struct ExecutorOptions {
  // Compiled OpenCL programs: "" means $HSCHED_CACHE_DIR, else ~/.cache/hsched.
  std::string cache_dir;
  int64_t compile_timeout_ms = 30000;  // per partition (a deploy file's compile_timeout_ms)
  int cpu_threads = 2;
  bool profile = false;  // time every step (Executable::profile); OpenCL steps run one at a time
};

struct ExecutableStats {
  double compile_ms = 0;        // wall time of compile(), re-planning included
  int64_t programs_built = 0;   // hsched's OpenCL programs built from source
  int64_t programs_loaded = 0;  // ... loaded from the on-disk cache instead
  int replans = 0;              // plans made again after late rejections
};

// One step of a partition (a CPU step: fused nodes under their root op; an OpenCL step: one
// node, enqueued and waited for alone), mean ms per run.
struct StepProfile {
  std::string node;
  std::string op;
  double mean_ms = 0;
  std::string device;  // the partition's device id
};

class Executable {
 public:
  virtual ~Executable() = default;
  // Inputs in the order of the graph's inputs; outputs in the order of its outputs.
  virtual Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs) = 0;
  // The plan that runs: schedule()'s, or the one made again after late rejections.
  virtual const Plan& plan() const = 0;
  virtual const ExecutableStats& stats() const = 0;
  // Every partition's steps over the runs since compile or reset_profile() (empty or zeros
  // unless ExecutorOptions::profile). Not to be called while a run is in flight.
  virtual std::vector<StepProfile> profile() const = 0;
  virtual void reset_profile() = 0;
};

// Compiles `plan` (made by schedule() for `graph`, which must outlive the Executable). Errors: InvalidArgument for a plan that puts
// nodes on a device not present here (planned from a profile); a CPU partition's compile error;
// Internal when re-planning does not converge.
Result<std::unique_ptr<Executable>> compile(const Graph& graph, const Plan& plan,
                                            const ExecutorOptions& options);

}  // namespace hsched
