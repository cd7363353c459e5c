// The executable of a compiled plan (include/hsched/executor.h): partitions as nodes of a oneTBB
// flow graph, requests as messages, device partitions on a thread per device, CPU partitions on
// the process's host thread (executor.cpp). And the ways a plan becomes one: compiled whole
// (compile_now) or staged, its device partitions on the CPU until each one's program is built
// (compile_staged, for progressive start; compile_plan.cpp). Internal to the runtime.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <tbb/flow_graph.h>

#include "backends/backend.h"
#include "core/heap.h"
#include "core/work_thread.h"
#include "graph/subgraph.h"
#include "hsched/executor.h"
#include "scheduler/runtime/compile.h"
#include "scheduler/runtime/partition_program.h"

namespace hsched {

// compile() without progressive start. `owner`, when set, keeps `graph` alive.
Result<std::unique_ptr<Executable>> compile_now(const Graph& graph,
                                                std::shared_ptr<const Graph> owner,
                                                const Plan& plan, const ExecutorOptions& options);

namespace runtime {

using Clock = std::chrono::steady_clock;

inline double ms_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

// The target's host CPU (where partitions fall back to, the fp32 reference of verification and
// of the accuracy budget); null when the target has none.
const DeviceProfile* host_of(const Target& target);

struct CompiledPartition {
  Subgraph part;  // inputs/outputs: values of the whole graph
  // Null for a staged device partition whose program is not built yet (it runs `reference`).
  std::shared_ptr<Program> program;
  // CPU fp32: a device partition's verification reference, or what it runs while staged (dropped
  // once installed, unless verifying) or quarantined (compiled when first needed otherwise).
  std::shared_ptr<Program> reference;
  bool verify = false;  // compare the device's outputs with `reference`'s
};

struct PartitionNode;
struct Request;

class PlanExecutable final : public Executable {
 public:
  // `origin`: compile()'s start, the time line of compile and run records.
  PlanExecutable(const Graph& graph, std::shared_ptr<const Graph> owner, Plan plan,
                 std::vector<CompiledPartition> partitions, ExecutableStats stats,
                 Clock::time_point origin, const ExecutorOptions& options);
  ~PlanExecutable() override;

  Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs, RunRecord* record) override;
  Result<std::vector<std::vector<Tensor>>> run_stream(
      const std::vector<std::vector<Tensor>>& requests, int max_in_flight,
      std::vector<RunRecord>* records) override;
  Plan plan() const override {
    std::lock_guard<std::mutex> lock(plan_mutex_);
    return plan_;
  }
  ExecutableStats stats() const override {
    std::lock_guard<std::mutex> lock(plan_mutex_);
    return stats_;
  }
  std::vector<Quarantine> quarantines() const override {
    std::lock_guard<std::mutex> lock(plan_mutex_);
    return quarantines_;
  }
  std::vector<StepProfile> profile() const override;
  void reset_profile() override;
  Result<Tensor> allocate_input(size_t k) override;

  // Staged partitions: the device partitions without a program, in plan order.
  std::vector<size_t> staged() const;
  // Partition p's graph (CompiledPartition::part), fixed at construction.
  const Graph& partition_graph(size_t p) const;
  // Gives staged partition p its device program: requests submitted after this call returns run
  // it there (it waits for a run() or run_stream() in progress); those before ran it on the CPU,
  // RunRecord::plan "partial". `record` joins the stats' compiles, `counts` (its compiler's,
  // now) their cache counts. Any thread.
  void install(size_t p, std::shared_ptr<Program> program, const CompileRecord& record,
               const CacheCounts& counts);
  double now_ms() const;  // since `origin`

 private:
  void build_flow_graph();
  Result<std::unique_ptr<Request>> make_request(const std::vector<Tensor>& inputs);
  void submit(Request& request);
  void run_partition(size_t p, Request& request);
  void finish(Request& request);
  Result<std::vector<Tensor>> compute(size_t p, const std::vector<Tensor>& inputs,
                                      PartitionRun& record);
  // compute(), with an exception (std::bad_alloc, a library's throw) as the request's error:
  // partitions run on device threads and flow-graph nodes, where a throw would end the process.
  Result<std::vector<Tensor>> compute_or_catch(size_t p, const std::vector<Tensor>& inputs,
                                               PartitionRun& record);
  void quarantine(size_t p, Quarantine quarantine);
  Result<Program*> cpu_fallback(PartitionNode& node);

  // First, so destroyed last: once the partitions (weights, programs, activation arenas) and the
  // threads that used them are gone, the heap pages they leave free go back to the system rather
  // than stay resident as holes in malloc's per-thread arenas (core/heap.h).
  ReleaseFreeHeapMemoryAtEnd release_heap_at_end_;
  std::shared_ptr<const Graph> graph_owner_;  // a Model's graph; null: the caller keeps it alive
  const Graph& graph_model_;
  Plan plan_;
  ExecutableStats stats_;
  Clock::time_point origin_;
  ExecutorOptions options_;
  DeviceOutputHook device_output_hook_;  // the test hook installed at compile time
  std::string cpu_device_;
  DeviceProfile cpu_profile_;    // the host, for CPU fallbacks
  std::vector<char> is_output_;  // per value
  std::vector<std::unique_ptr<PartitionNode>> partitions_;

  // plan_, stats_ (quarantined, compiles) and quarantines_ while running
  mutable std::mutex plan_mutex_;
  std::vector<Quarantine> quarantines_;
  std::mutex run_mutex_;  // one run() or run_stream() at a time; install() between them
  // CPU programs run one at a time on the CPU backend's host thread: a host
  // partition takes its turn here, so its span starts when it runs, not while it queues behind an
  // independent one.
  std::mutex host_turn_;

  tbb::flow::graph graph_;
  // Per device id but the host's: its partitions run in submission order there, so waiting for
  // the device (blocking reads) holds that thread and never a TBB worker.
  std::map<std::string, std::unique_ptr<WorkThread>> threads_;
  std::vector<std::unique_ptr<tbb::flow::graph_node>> nodes_;
  std::unique_ptr<tbb::flow::broadcast_node<Request*>> start_;
  std::unique_ptr<tbb::flow::function_node<Request*>> finish_;
  std::atomic<size_t> submitted_{0};  // requests submitted so far: the next one's sequence
};

// A staged executable of `plan`: its host partitions compiled, and the fp32 CPU program of each
// device partition, which runs that partition until PlanExecutable::install gives it its device
// program (compile_staged_partition builds them). The accuracy checks the plan needs (fp16 range,
// the policy's budget) run first. Unimplemented when the plan cannot run as it is (a node the
// accuracy checks refuse, a device not here: compile_now makes a new plan or names the error);
// a CPU compile's error otherwise. `compiler` builds the device programs later (the caller keeps
// it); `origin` is compile()'s start, the executable's time line.
Result<std::unique_ptr<PlanExecutable>> compile_staged(
    const Graph& graph, std::shared_ptr<const Graph> owner, const Plan& plan,
    const ExecutorOptions& options, PartitionCompiler& compiler, Clock::time_point origin);

// Builds staged partition p of `exe` (made by compile_staged from `plan`) on its device through
// `compiler` and installs it. Its error (the device's compile, or Unimplemented for nodes the
// device's driver refuses) leaves the partition on the CPU: only a new plan (compile_now) moves
// its nodes elsewhere.
Status compile_staged_partition(PlanExecutable& exe, const Plan& plan, size_t p,
                                PartitionCompiler& compiler);

}  // namespace runtime
}  // namespace hsched
