#include "scheduler/partition_program.h"

#include <chrono>
#include <cmath>
#include <optional>
#include <span>
#include <sstream>

#include "backends/cpu/program.h"
#include "backends/level_zero/program.h"
#include "backends/opencl/program.h"

namespace hsched {
namespace {

class CpuPartition final : public PartitionProgram {
 public:
  CpuPartition(std::unique_ptr<cpu::CpuProgram> program, std::string device)
      : program_(std::move(program)), device_(std::move(device)) {}
  Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs, PartitionIo*) override {
    return program_->run(inputs);
  }
  void append_profile(std::vector<StepProfile>& steps) const override {
    for (const cpu::StepProfile& step : program_->profile()) {
      steps.push_back({step.node, step.op, step.mean_ms, device_, std::nullopt});
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
  Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs, PartitionIo* io) override {
    if (io == nullptr) return program_->run(inputs);
    opencl::ClRunCopies copies;
    auto outputs = program_->run(inputs, &copies);
    *io = {copies.upload_bytes, copies.zero_copy_bytes, copies.upload_ms, copies.download_bytes,
           copies.download_ms};
    return outputs;
  }
  void append_profile(std::vector<StepProfile>& steps) const override {
    const Graph& graph = program_->graph();
    for (const opencl::ClStepTime& step : program_->profile()) {
      steps.push_back({node_label(graph, step.node), graph.node(step.node).op_type, step.total_ms,
                       device_, step.enqueue_ms});
    }
  }
  void reset_profile() override { program_->reset_profile(); }

 private:
  std::unique_ptr<opencl::ClProgram> program_;
  std::string device_;
};

// An NPU graph: one step for the whole partition (the driver runs it as one graph).
class NpuPartition final : public PartitionProgram {
 public:
  NpuPartition(std::unique_ptr<level_zero::NpuProgram> program, std::string device, bool profile)
      : program_(std::move(program)), device_(std::move(device)), profile_(profile) {}
  Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs, PartitionIo* io) override {
    const auto start = std::chrono::steady_clock::now();
    level_zero::NpuRunCopies copies;
    auto outputs = program_->run(inputs, &copies);
    if (profile_ && outputs.is_ok()) {
      total_ms_ +=
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count();
      ++runs_;
    }
    if (io != nullptr) {
      *io = {copies.upload_bytes, 0, copies.upload_ms, copies.download_bytes, copies.download_ms};
    }
    return outputs;
  }
  void append_profile(std::vector<StepProfile>& steps) const override {
    if (!profile_) return;
    const Graph& graph = program_->graph();
    steps.push_back({graph.nodes().empty() ? std::string("graph") : node_label(graph, 0),
                     "NpuGraph", runs_ > 0 ? total_ms_ / static_cast<double>(runs_) : 0.0, device_,
                     std::nullopt});
  }
  void reset_profile() override {
    total_ms_ = 0;
    runs_ = 0;
  }

 private:
  std::unique_ptr<level_zero::NpuProgram> program_;
  std::string device_;
  bool profile_;
  double total_ms_ = 0;
  int64_t runs_ = 0;
};

}  // namespace

PartitionCompiler::PartitionCompiler(const ExecutorOptions& options)
    : options_(options),
      cache_(std::make_shared<opencl::ProgramCache>(options.cache_dir)),
      graph_cache_(std::make_shared<level_zero::NativeCache>(cache_->dir().string())) {}

Result<std::shared_ptr<level_zero::NpuRuntime>> PartitionCompiler::open_npu(
    const DeviceProfile& device) {
  auto found = npu_runtimes_.find(device.locator);
  if (found != npu_runtimes_.end()) return found->second;
  const std::optional<level_zero::DeviceInfo> info = level_zero::find_device(device.locator);
  if (!info) {
    return Status(ErrorCode::kUnavailable, "Level Zero device " + device.id + " (" + device.name +
                                               ") is no longer present at " + device.locator);
  }
  HSCHED_ASSIGN_OR_RETURN(auto runtime, level_zero::NpuRuntime::open(*info, graph_cache_));
  npu_runtimes_.emplace(device.locator, runtime);
  return runtime;
}

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

Result<std::shared_ptr<PartitionProgram>> compile_cpu_program(const Graph& part,
                                                              const std::string& device,
                                                              const ExecutorOptions& options) {
  cpu::CpuOptions cpu_options;
  cpu_options.threads = options.cpu_threads;
  cpu_options.profile = options.profile;
  cpu_options.flush_denormals = options.flush_denormals;
  cpu_options.memory_limit_bytes = options.cpu_memory_limit_bytes;
  HSCHED_ASSIGN_OR_RETURN(auto compiled, cpu::CpuProgram::compile(part, cpu_options));
  return std::shared_ptr<PartitionProgram>(
      std::make_shared<CpuPartition>(std::move(compiled), device));
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
      HSCHED_ASSIGN_OR_RETURN(program, compile_cpu_program(part, device->id, options_));
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
    case DeviceApi::kLevelZero: {
      // The graph in fp16 when every node asks fp16 (the NPU policies' precision), else fp32.
      bool all_fp16 = !partition.nodes.empty();
      for (NodeId id : partition.nodes) all_fp16 &= plan.nodes[id].precision == Precision::kFp16;
      HSCHED_ASSIGN_OR_RETURN(auto runtime, open_npu(*device));
      level_zero::NpuCompileOptions npu_options;
      npu_options.precision = all_fp16 ? Precision::kFp16 : Precision::kFp32;
      npu_options.deadline_ms = options_.compile_timeout_ms;
      auto compiled = level_zero::NpuProgram::compile(part, runtime, npu_options);
      if (!compiled.is_ok()) {
        const Status& error = compiled.status();
        // The IR writer refusing a node the capability accepted is a build failure of this
        // device (re-planned), not the user's input at fault.
        if (error.code() == ErrorCode::kInvalidArgument ||
            error.code() == ErrorCode::kUnimplemented) {
          return internal_error("build_failed: " + error.message());
        }
        return error;
      }
      // Counted with the OpenCL programs (ExecutableStats programs_built/programs_loaded).
      if ((*compiled)->loaded_from_cache()) {
        cache_->record_loaded();
      } else {
        cache_->record_built();
      }
      program =
          std::make_shared<NpuPartition>(std::move(compiled).value(), device->id, options_.profile);
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

Deviation compare_outputs(const Graph& part, const std::vector<Tensor>& got,
                          const std::vector<Tensor>& want, const Tolerance& tolerance) {
  Deviation deviation;
  double sum = 0;
  int64_t count = 0;
  double worst_excess = 0;
  // Floats as they are, bools as 1 and 0 (a flipped bool is beyond any tolerance); other
  // dtypes are not compared.
  const auto widened = [](const Tensor& bools) {
    const auto values = bools.values<uint8_t>();
    return std::vector<float>(values.begin(), values.end());
  };
  std::vector<float> got_bools, want_bools;
  for (size_t k = 0; k < got.size() && k < want.size(); ++k) {
    const DType dtype = got[k].dtype();
    if (dtype != want[k].dtype() || (dtype != DType::kF32 && dtype != DType::kBool) ||
        got[k].elements() != want[k].elements()) {
      continue;
    }
    if (dtype == DType::kBool) {
      got_bools = widened(got[k]);
      want_bools = widened(want[k]);
    }
    const std::span<const float> a =
        dtype == DType::kBool ? std::span<const float>(got_bools) : got[k].values<float>();
    const std::span<const float> b =
        dtype == DType::kBool ? std::span<const float>(want_bools) : want[k].values<float>();
    for (size_t i = 0; i < a.size(); ++i) {
      const double diff = std::abs(static_cast<double>(a[i]) - static_cast<double>(b[i]));
      const double bound = tolerance.atol + tolerance.rtol * std::abs(static_cast<double>(b[i]));
      // NaN compares false everywhere: a NaN where the reference has a number is out of bounds.
      const bool ok = diff <= bound || (std::isnan(a[i]) && std::isnan(b[i]));
      if (!std::isnan(diff)) {
        deviation.max_abs = std::max(deviation.max_abs, diff);
        sum += diff;
        ++count;
      }
      if (ok) continue;
      const double excess = std::isnan(diff) ? INFINITY : diff - bound;
      if (deviation.within || excess > worst_excess) {
        std::ostringstream detail;
        detail << "output '" << part.value(part.outputs()[k]).name << "'[" << i << "]: " << a[i]
               << " vs " << b[i];
        deviation.detail = detail.str();
        worst_excess = excess;
      }
      deviation.within = false;
    }
  }
  deviation.mean_abs = count > 0 ? sum / static_cast<double>(count) : 0;
  return deviation;
}

}  // namespace hsched
