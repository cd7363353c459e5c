#include "scheduler/runtime/partition_program.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <span>
#include <sstream>

#include "backends/capability_rules.h"
#include "scheduler/config/discover.h"

namespace hsched::runtime {

Subgraph partition_subgraph(const Graph& graph, const Plan& plan, const Partition& partition) {
  // A DequantizeLinear read across partitions runs where it is read, where that device takes it
  // (the host; its own device; a device that the plan did not find refusing it and whose profile
  // rules allow it): the 8-bit value crosses, not its dequantized floats (a quarter of the bytes,
  // and no device precision between).
  const auto dequantizes = [&](NodeId dq, NodeId reader) {
    const NodePlacement& at = plan.nodes[reader];
    if (plan.nodes[dq].device == at.device) return true;
    const DeviceProfile* profile = plan.target.find(at.device);
    if (profile == nullptr) return false;
    if (profile->api == DeviceApi::kHost) return true;
    const bool refused =
        std::any_of(plan.rejections.begin(), plan.rejections.end(), [&](const Rejection& r) {
          return r.node == dq && r.device == at.device && r.precision == at.precision;
        });
    return !refused && !check_profile_rules(graph, dq, *profile, at.precision);
  };
  return extract_subgraph(
      graph, partition.nodes, [&](NodeId id) { return plan.nodes[id].device == partition.device; },
      dequantizes);
}

CompileOptions compile_options(const ExecutorOptions& options, Precision precision) {
  CompileOptions compile;
  compile.precision = precision;
  compile.cpu_threads = options.cpu_threads;
  compile.profile = options.profile;
  compile.flush_denormals = options.flush_denormals;
  compile.memory_limit_bytes = options.cpu_memory_limit_bytes;
  compile.compile_timeout_ms = options.compile_timeout_ms;
  return compile;
}

Result<std::shared_ptr<Program>> compile_cpu_program(const Graph& part, const DeviceProfile& cpu,
                                                     const ExecutorOptions& options) {
  return config::backends().open(cpu)->compile(part, compile_options(options, Precision::kFp32));
}

PartitionCompiler::PartitionCompiler(const ExecutorOptions& options) : options_(options) {}

namespace {

// The program of a partition none of whose values another partition reads (its DequantizeLinears
// copied by every reader): nothing to compute.
class NothingToCompute : public Program {
 public:
  Result<std::vector<Tensor>> run(const std::vector<Tensor>&, CopyRecord*) override {
    return std::vector<Tensor>{};
  }
  void append_profile(std::vector<StepProfile>&) const override {}
  void reset_profile() override {}
};

}  // namespace

Result<std::shared_ptr<Program>> PartitionCompiler::compile(const Plan& plan,
                                                            const Partition& partition,
                                                            const Graph& part,
                                                            DriverAnswer* answer) {
  if (part.outputs().empty()) return std::shared_ptr<Program>(std::make_shared<NothingToCompute>());
  const Key key = key_of(plan, partition, part);
  if (auto found = done_.find(key); found != done_.end()) {
    if (answer != nullptr) answer->summary = found->second.driver_answer;
    return found->second.program;
  }
  const DeviceProfile* profile = plan.target.find(partition.device);
  if (profile == nullptr || !profile->present) {
    return invalid_argument("the plan puts partition " + std::to_string(partition.id) + " on " +
                            partition.device + ", which target " + plan.target.name +
                            " plans from a profile and is not present on this machine; "
                            "`hsched plan` shows such plans, `--target this-machine` runs here");
  }
  std::unique_ptr<Device>& device = devices_[profile->id];
  if (!device) device = config::backends().open(*profile, {options_.cache_dir});
  const std::vector<Precision>& precisions = std::get<2>(key);
  const Precision precision =
      precisions.empty() ? Precision::kFp32 : device->partition_precision(precisions);
  // The host CPU checks its own budget (ExecutorOptions::cpu_memory_limit_bytes); a device is
  // held to its profile's memory before its driver is asked.
  if (profile->api != DeviceApi::kHost) {
    HSCHED_RETURN_IF_ERROR(check_partition_memory(part, *profile, precision));
  }
  CompileOptions compile = compile_options(options_, precision);
  compile.node_precisions = precisions;
  HSCHED_ASSIGN_OR_RETURN(DriverAnswer asked, device->query(part, compile));
  if (answer != nullptr) *answer = asked;
  if (!asked.refused.empty()) {
    return Status(ErrorCode::kUnavailable,
                  "driver_unsupported: " + std::to_string(asked.refused.size()) +
                      " nodes of the partition (" + asked.summary + ")");
  }
  HSCHED_ASSIGN_OR_RETURN(std::shared_ptr<Program> program, device->compile(part, compile));
  done_.emplace(key, Compiled{program, asked.summary});
  return program;
}

PartitionCompiler::Key PartitionCompiler::key_of(const Plan& plan, const Partition& partition,
                                                 const Graph& part) {
  std::vector<Precision> precisions;
  for (NodeId id : partition.nodes) precisions.push_back(plan.nodes[id].precision);
  std::vector<std::string> interface;
  for (const auto* list : {&part.inputs(), &part.outputs()}) {
    for (ValueId v : *list) interface.push_back(part.value(v).name);
    interface.emplace_back();  // between the inputs and the outputs
  }
  return {partition.device, partition.nodes, precisions, interface, part.nodes().size()};
}

void PartitionCompiler::forget(const Plan& plan, const Partition& partition, const Graph& part) {
  done_.erase(key_of(plan, partition, part));
}

CacheCounts PartitionCompiler::cache_counts() const {
  CacheCounts total;
  for (const auto& [id, device] : devices_) {
    const CacheCounts counts = device->cache_counts();
    total.built += counts.built;
    total.loaded += counts.loaded;
  }
  return total;
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

}  // namespace hsched::runtime
