// compile(plan) and the sequential executor: one compiled program per partition, run in plan
// order; late compile failures re-plan the graph (see include/hsched/executor.h).
#include "hsched/executor.h"

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <utility>

#include "backends/cpu/program.h"
#include "backends/opencl/program.h"
#include "graph/subgraph.h"
#include "hsched/schedule.h"

namespace hsched {
namespace {

// One partition compiled for its device.
class PartitionProgram {
 public:
  virtual ~PartitionProgram() = default;
  virtual Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs) = 0;
  virtual void append_profile(std::vector<StepProfile>& steps) const = 0;
  virtual void reset_profile() = 0;
};

class CpuPartition final : public PartitionProgram {
 public:
  CpuPartition(std::unique_ptr<cpu::CpuProgram> program, std::string device)
      : program_(std::move(program)), device_(std::move(device)) {}
  Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs) override {
    return program_->run(inputs);
  }
  void append_profile(std::vector<StepProfile>& steps) const override {
    for (const cpu::StepProfile& step : program_->profile()) {
      steps.push_back({step.node, step.op, step.mean_ms, device_});
    }
  }
  void reset_profile() override { program_->reset_profile(); }

 private:
  std::unique_ptr<cpu::CpuProgram> program_;
  std::string device_;
};

class OpenClPartition final : public PartitionProgram {
 public:
  OpenClPartition(std::unique_ptr<opencl::ClProgram> program, std::string device)
      : program_(std::move(program)), device_(std::move(device)) {}
  Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs) override {
    return program_->run(inputs);
  }
  void append_profile(std::vector<StepProfile>& steps) const override {
    const Graph& graph = program_->graph();
    for (const opencl::ClStepTime& step : program_->profile()) {
      steps.push_back({node_label(graph, step.node), graph.node(step.node).op_type, step.total_ms,
                       device_});
    }
  }
  void reset_profile() override { program_->reset_profile(); }

 private:
  std::unique_ptr<opencl::ClProgram> program_;
  std::string device_;
};

struct CompiledPartition {
  Subgraph part;  // inputs/outputs: values of the whole graph
  std::shared_ptr<PartitionProgram> program;
};

class PlanExecutable final : public Executable {
 public:
  PlanExecutable(const Graph& graph, Plan plan, std::vector<CompiledPartition> partitions,
                 ExecutableStats stats)
      : graph_(graph),
        plan_(std::move(plan)),
        partitions_(std::move(partitions)),
        stats_(std::move(stats)) {}

  Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs) override;
  const Plan& plan() const override { return plan_; }
  const ExecutableStats& stats() const override { return stats_; }
  std::vector<StepProfile> profile() const override {
    std::vector<StepProfile> steps;
    for (const CompiledPartition& partition : partitions_) {
      partition.program->append_profile(steps);
    }
    return steps;
  }
  void reset_profile() override {
    for (CompiledPartition& partition : partitions_) partition.program->reset_profile();
  }

 private:
  const Graph& graph_;
  Plan plan_;
  std::vector<CompiledPartition> partitions_;
  ExecutableStats stats_;
  std::mutex run_mutex_;
};

Result<std::vector<Tensor>> PlanExecutable::run(const std::vector<Tensor>& inputs) {
  std::lock_guard<std::mutex> lock(run_mutex_);
  if (inputs.size() != graph_.inputs().size()) {
    return invalid_argument("the model takes " + std::to_string(graph_.inputs().size()) +
                            " inputs, " + std::to_string(inputs.size()) + " given");
  }
  std::vector<std::optional<Tensor>> values(graph_.values().size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    values[static_cast<size_t>(graph_.inputs()[i])] = inputs[i];
  }
  for (size_t p = 0; p < partitions_.size(); ++p) {
    const CompiledPartition& partition = partitions_[p];
    std::vector<Tensor> part_inputs;
    for (ValueId id : partition.part.inputs) {
      if (!values[static_cast<size_t>(id)]) {
        return internal_error("executor: value '" + graph_.value(id).name + "' read by partition " +
                              std::to_string(plan_.partitions[p].id) + " is not computed yet");
      }
      part_inputs.push_back(*values[static_cast<size_t>(id)]);
    }
    auto outputs = partition.program->run(part_inputs);
    if (!outputs.is_ok()) {
      return outputs.status().with_context("partition " + std::to_string(plan_.partitions[p].id) +
                                           " on " + plan_.partitions[p].device);
    }
    for (size_t k = 0; k < outputs->size(); ++k) {
      values[static_cast<size_t>(partition.part.outputs[k])] = std::move((*outputs)[k]);
    }
  }
  std::vector<Tensor> outputs;
  for (ValueId id : graph_.outputs()) {
    const Value& value = graph_.value(id);
    if (value.is_constant()) {
      outputs.push_back(value.constant->clone());
    } else if (values[static_cast<size_t>(id)]) {
      outputs.push_back(std::move(*values[static_cast<size_t>(id)]));
    } else {
      return internal_error("executor: output '" + value.name + "' was not computed");
    }
  }
  return outputs;
}

// Compiles partitions, keeping what it compiled for reuse when a re-plan leaves a partition as
// it was, and the OpenCL devices it opened.
class PartitionCompiler {
 public:
  explicit PartitionCompiler(const ExecutorOptions& options)
      : options_(options), cache_(std::make_shared<opencl::ProgramCache>(options.cache_dir)) {}

  Result<std::shared_ptr<PartitionProgram>> compile(const Plan& plan, const Partition& partition,
                                                    const Graph& part);
  const opencl::ProgramCache& cache() const { return *cache_; }

 private:
  Result<std::shared_ptr<opencl::DeviceRuntime>> open_opencl(const DeviceProfile& device);

  ExecutorOptions options_;
  std::shared_ptr<opencl::ProgramCache> cache_;
  std::map<std::string, std::shared_ptr<opencl::DeviceRuntime>> runtimes_;  // by locator
  std::map<std::pair<std::string, std::vector<NodeId>>, std::shared_ptr<PartitionProgram>> done_;
};

Result<std::shared_ptr<opencl::DeviceRuntime>> PartitionCompiler::open_opencl(
    const DeviceProfile& device) {
  auto found = runtimes_.find(device.locator);
  if (found != runtimes_.end()) return found->second;
  const std::optional<opencl::DeviceInfo> info = opencl::find_device(device.locator);
  if (!info) {
    return Status(ErrorCode::kUnavailable, "OpenCL device " + device.id + " (" + device.name +
                                               ") is no longer present at " + device.locator);
  }
  HSCHED_ASSIGN_OR_RETURN(auto runtime, opencl::DeviceRuntime::open(*info, cache_));
  runtimes_.emplace(device.locator, runtime);
  return runtime;
}

Result<std::shared_ptr<PartitionProgram>> PartitionCompiler::compile(const Plan& plan,
                                                                     const Partition& partition,
                                                                     const Graph& part) {
  const auto key = std::make_pair(partition.device, partition.nodes);
  if (auto found = done_.find(key); found != done_.end()) return found->second;
  const DeviceProfile* device = plan.target.find(partition.device);
  if (device == nullptr || !device->present) {
    return invalid_argument("the plan puts partition " + std::to_string(partition.id) + " on " +
                            partition.device + ", which target " + plan.target.name +
                            " plans from a profile and is not present on this machine; "
                            "`hsched plan` shows such plans, `--target this-machine` runs here");
  }
  std::shared_ptr<PartitionProgram> program;
  switch (device->api) {
    case DeviceApi::kHost: {
      cpu::CpuOptions cpu_options;
      cpu_options.threads = options_.cpu_threads;
      cpu_options.profile = options_.profile;
      HSCHED_ASSIGN_OR_RETURN(auto compiled, cpu::CpuProgram::compile(part, cpu_options));
      program = std::make_shared<CpuPartition>(std::move(compiled), device->id);
      break;
    }
    case DeviceApi::kOpenCl: {
      // fp16 storage when every node asks fp16; any fp32 node keeps the partition in fp32.
      bool all_fp16 = !partition.nodes.empty();
      for (NodeId id : partition.nodes) all_fp16 &= plan.nodes[id].precision == Precision::kFp16;
      HSCHED_ASSIGN_OR_RETURN(auto runtime, open_opencl(*device));
      HSCHED_ASSIGN_OR_RETURN(
          auto compiled,
          opencl::ClProgram::compile(part, runtime,
                                     all_fp16 ? opencl::Storage::kFloat16 : opencl::Storage::kFloat32,
                                     options_.compile_timeout_ms, options_.profile));
      program = std::make_shared<OpenClPartition>(std::move(compiled), device->id);
      break;
    }
    default:
      return unimplemented("running on " + std::string(device_api_name(device->api)) +
                           " devices is not built yet (partition " + std::to_string(partition.id) +
                           " on " + device->id + ")");
  }
  done_.emplace(key, program);
  return program;
}

}  // namespace

Result<std::unique_ptr<Executable>> compile(const Graph& graph, const Plan& plan,
                                            const ExecutorOptions& options) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  PartitionCompiler compiler(options);
  Plan current = plan;
  std::vector<Rejection> late;
  ExecutableStats stats;
  // Each failed round rejects a device for at least one node, so rounds are bounded by the
  // (node, device) pairs; the bound below only guards against a bug.
  const size_t max_rounds = graph.nodes().size() * current.target.devices.size() + 1;
  for (size_t round = 0; round < max_rounds; ++round) {
    std::vector<CompiledPartition> compiled;
    bool failed = false;
    for (const Partition& partition : current.partitions) {
      Subgraph part = extract_subgraph(graph, partition.nodes);
      auto program = compiler.compile(current, partition, part.graph);
      if (program.is_ok()) {
        compiled.push_back({std::move(part), std::move(program).value()});
        continue;
      }
      const DeviceProfile* device = current.target.find(partition.device);
      const Status& error = program.status();
      // The CPU is the last resort: its failures, and a plan for absent devices, are final.
      if (device == nullptr || device->api == DeviceApi::kHost ||
          error.code() == ErrorCode::kInvalidArgument || error.code() == ErrorCode::kUnimplemented) {
        return error.with_context("compiling partition " + std::to_string(partition.id) + " on " +
                                  partition.device);
      }
      const ReasonCode reason = error.code() == ErrorCode::kDeadlineExceeded
                                    ? ReasonCode::kCompileTimeout
                                    : ReasonCode::kCompileFailed;
      for (NodeId id : partition.nodes) {
        late.push_back({id, partition.device, current.nodes[id].precision, reason, error.message()});
      }
      failed = true;
    }
    if (!failed) {
      stats.compile_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
      stats.programs_built = compiler.cache().programs_built();
      stats.programs_loaded = compiler.cache().programs_loaded();
      return std::unique_ptr<Executable>(
          new PlanExecutable(graph, std::move(current), std::move(compiled), stats));
    }
    const std::string model = current.model;
    HSCHED_ASSIGN_OR_RETURN(current, schedule(graph, plan.target, plan.policy, late));
    current.model = model;
    ++stats.replans;
  }
  return internal_error("executor: re-planning after late rejections did not converge");
}

}  // namespace hsched
