// compile(plan): a plan's partitions compiled on their devices into a PlanExecutable, whole
// (late failures re-planned) or staged for progressive start (scheduler/runtime/plan_executable.h).
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "scheduler/planner/schedule.h"
#include "scheduler/runtime/accuracy_budget.h"
#include "scheduler/runtime/plan_executable.h"

namespace hsched {
namespace runtime {
namespace {

// The late rejection a failed device compile stands for ("device_limit: ..." out of graphs).
ReasonCode compile_failure_reason(const Status& error) {
  if (error.code() == ErrorCode::kDeadlineExceeded) return ReasonCode::kCompileTimeout;
  if (error.code() != ErrorCode::kResourceExhausted) return ReasonCode::kCompileFailed;
  const bool limit = error.message().rfind(reason_code_name(ReasonCode::kDeviceLimit), 0) == 0;
  return limit ? ReasonCode::kDeviceLimit : ReasonCode::kMemoryExceeded;
}

// compile(), but for giving the build's free heap memory back.
Result<std::unique_ptr<Executable>> compile_executable(const Graph& graph,
                                                       std::shared_ptr<const Graph> owner,
                                                       const Plan& plan,
                                                       const ExecutorOptions& options) {
  const auto start = Clock::now();
  PartitionCompiler compiler(options);
  Plan current = plan;
  std::vector<Rejection> late;
  ExecutableStats stats;
  const bool verify = options.verify || plan.policy.verify;
  // Each failed round rejects a device for at least one node, so rounds are bounded by the
  // (node, device) pairs; the bound below only guards against a bug.
  const size_t max_rounds = graph.nodes().size() * current.target.devices.size() + 1;
  for (size_t round = 0; round < max_rounds; ++round) {
    std::vector<CompiledPartition> compiled;
    bool failed = false;
    for (const Partition& partition : current.partitions) {
      Subgraph part = partition_subgraph(graph, current, partition);
      CompileRecord record{
          partition.id, partition.device, ms_between(start, Clock::now()), 0, {}, {}};
      DriverAnswer answer;
      auto program = compiler.compile(current, partition, part.graph, &answer);
      record.end_ms = ms_between(start, Clock::now());
      record.driver_answer = answer.summary;
      if (!program.is_ok()) record.error = program.status().message();
      stats.compiles.push_back(record);
      for (const Rejection& r : answer.refused) {  // the driver refused these nodes: they move
        const NodeId node = part.nodes.at(static_cast<size_t>(r.node));
        late.push_back({node, partition.device, current.nodes[node].precision, r.reason, r.detail});
      }
      if (!answer.refused.empty()) {
        failed = true;
        continue;
      }
      const DeviceProfile* device = current.target.find(partition.device);
      if (program.is_ok()) {
        std::shared_ptr<Program> reference;
        if (verify && device != nullptr && device->api != DeviceApi::kHost) {
          const DeviceProfile* cpu = host_of(current.target);
          if (cpu == nullptr) {
            return invalid_argument("--verify needs the host CPU in target " + current.target.name);
          }
          HSCHED_ASSIGN_OR_RETURN(reference, compile_cpu_program(part.graph, *cpu, options));
        }
        const bool verifying = reference != nullptr;
        compiled.push_back(
            {std::move(part), std::move(program).value(), std::move(reference), verifying});
        continue;
      }
      const Status& error = program.status();
      // The CPU is the last resort: its failures, and a plan for absent devices, are final.
      if (device == nullptr || device->api == DeviceApi::kHost ||
          error.code() == ErrorCode::kInvalidArgument ||
          error.code() == ErrorCode::kUnimplemented) {
        return error.with_context("compiling partition " + std::to_string(partition.id) + " on " +
                                  partition.device);
      }
      const ReasonCode reason = compile_failure_reason(error);
      for (NodeId id : partition.nodes) {
        late.push_back(
            {id, partition.device, current.nodes[id].precision, reason, error.message()});
      }
      failed = true;
    }
    // A node the accuracy checks refuse (fp16 range, the policy's budget) is planned again in a
    // higher precision.
    if (!failed) {
      HSCHED_ASSIGN_OR_RETURN(
          std::vector<Rejection> over,
          accuracy_rejections(graph, current, host_of(current.target), compiler, options));
      failed = !over.empty();
      late.insert(late.end(), over.begin(), over.end());
    }
    if (!failed) {
      stats.compile_ms = ms_between(start, Clock::now());
      const CacheCounts counts = compiler.cache_counts();
      stats.programs_built = counts.built;
      stats.programs_loaded = counts.loaded;
      return std::unique_ptr<Executable>(new PlanExecutable(graph, std::move(owner),
                                                            std::move(current), std::move(compiled),
                                                            std::move(stats), start, options));
    }
    const std::string model = current.model;
    HSCHED_ASSIGN_OR_RETURN(current, schedule(graph, plan.target, plan.policy, late));
    current.model = model;
    ++stats.replans;
  }
  return internal_error("executor: re-planning after late rejections did not converge");
}

}  // namespace

Result<std::unique_ptr<PlanExecutable>> compile_staged(
    const Graph& graph, std::shared_ptr<const Graph> owner, const Plan& plan,
    const ExecutorOptions& options, PartitionCompiler& compiler, Clock::time_point origin) {
  const DeviceProfile* cpu = host_of(plan.target);
  if (cpu == nullptr) return unimplemented("staging needs the host CPU in the target");
  HSCHED_ASSIGN_OR_RETURN(std::vector<Rejection> over,
                          accuracy_rejections(graph, plan, cpu, compiler, options));
  if (!over.empty()) {
    return unimplemented(std::to_string(over.size()) +
                         " nodes over the accuracy checks: the plan is made again");
  }
  ExecutableStats stats;
  std::vector<CompiledPartition> compiled;
  for (const Partition& partition : plan.partitions) {
    Subgraph part = partition_subgraph(graph, plan, partition);
    const DeviceProfile* device = plan.target.find(partition.device);
    if (device == nullptr) return unimplemented("no device " + partition.device + " here");
    if (device->api != DeviceApi::kHost) {
      HSCHED_ASSIGN_OR_RETURN(std::shared_ptr<Program> reference,
                              compile_cpu_program(part.graph, *cpu, options));
      const bool verify = options.verify || plan.policy.verify;
      compiled.push_back({std::move(part), nullptr, std::move(reference), verify});
      continue;
    }
    CompileRecord record{
        partition.id, partition.device, ms_between(origin, Clock::now()), 0, {}, {}};
    auto program = compiler.compile(plan, partition, part.graph);
    record.end_ms = ms_between(origin, Clock::now());
    if (!program.is_ok()) {
      return program.status().with_context("compiling partition " + std::to_string(partition.id) +
                                           " on " + partition.device);
    }
    stats.compiles.push_back(record);
    compiled.push_back({std::move(part), std::move(program).value(), nullptr, false});
  }
  stats.compile_ms = ms_between(origin, Clock::now());
  return std::make_unique<PlanExecutable>(graph, std::move(owner), plan, std::move(compiled),
                                          std::move(stats), origin, options);
}

Status compile_staged_partition(PlanExecutable& exe, const Plan& plan, size_t p,
                                PartitionCompiler& compiler) {
  const Partition& partition = plan.partitions[p];
  CompileRecord record{partition.id, partition.device, exe.now_ms(), 0, {}, {}};
  DriverAnswer answer;
  auto program = compiler.compile(plan, partition, exe.partition_graph(p), &answer);
  record.end_ms = exe.now_ms();
  record.driver_answer = answer.summary;
  const std::string where =
      "compiling partition " + std::to_string(partition.id) + " on " + partition.device;
  if (!answer.refused.empty()) {
    return unimplemented(where + ": the driver refuses " + std::to_string(answer.refused.size()) +
                         " of its nodes");
  }
  if (!program.is_ok()) return program.status().with_context(where);
  exe.install(p, std::move(program).value(), record, compiler.cache_counts());
  return Status::ok();
}

}  // namespace runtime

// compile_executable(), then the build's scratch (IR payloads, weight reorders, a failed round's
// programs), freed on the compile workers' and this thread's arenas, goes back to the system
// rather than stay resident beside the new Executable's buffers (core/heap.h).
Result<std::unique_ptr<Executable>> compile_now(const Graph& graph,
                                                std::shared_ptr<const Graph> owner,
                                                const Plan& plan, const ExecutorOptions& options) {
  Result<std::unique_ptr<Executable>> executable =
      runtime::compile_executable(graph, std::move(owner), plan, options);
  release_free_heap_memory();
  return executable;
}

}  // namespace hsched
