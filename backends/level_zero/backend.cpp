#include "backends/level_zero/backend.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "backends/capability_rules.h"
#include "backends/level_zero/ir/ir.h"
#include "backends/level_zero/cache.h"
#include "backends/level_zero/program.h"
#include "hsched/config.h"

namespace hsched::level_zero {
namespace {

// An NPU graph: one step for the whole partition (the driver runs it as one graph).
class NpuPartition final : public Program {
 public:
  NpuPartition(std::unique_ptr<NpuProgram> program, std::string device, bool profile)
      : program_(std::move(program)), device_(std::move(device)), profile_(profile) {}
  Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs,
                                  CopyRecord* copies) override {
    const auto start = std::chrono::steady_clock::now();
    auto outputs = program_->run(inputs, copies);
    if (profile_ && outputs.is_ok()) {
      total_ms_ +=
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count();
      ++runs_;
    }
    return outputs;
  }
  void append_profile(std::vector<StepProfile>& steps) const override {
    if (!profile_) return;
    const Graph& graph = program_->graph();
    steps.push_back({graph.nodes().empty() ? std::string("graph") : node_label(graph, 0),
                     "NpuGraph", runs_ > 0 ? total_ms_ / static_cast<double>(runs_) : 0.0, device_,
                     std::nullopt, std::nullopt});
  }
  void reset_profile() override {
    total_ms_ = 0;
    runs_ = 0;
  }

 private:
  std::unique_ptr<NpuProgram> program_;
  std::string device_;
  bool profile_;
  double total_ms_ = 0;
  int64_t runs_ = 0;
};

class LevelZeroDevice final : public Device {
 public:
  LevelZeroDevice(DeviceProfile profile, DeviceContext context)
      : profile_(std::move(profile)), context_(std::move(context)) {}
  const DeviceProfile& profile() const override { return profile_; }

  std::optional<Rejection> check(const Graph& graph, NodeId node,
                                 Precision precision) const override {
    if (!profile_.present) return check_profile_rules(graph, node, profile_, precision);
    if (profile_.kind != DeviceKind::kNpu) {
      return Rejection{node, profile_.id, precision, ReasonCode::kOpUnsupported,
                       "the Level Zero backend runs graphs on NPUs only; hsched runs GPUs "
                       "through OpenCL"};
    }
    if (auto rejection = check_profile_rules(graph, node, profile_, precision)) return rejection;
    if (precision != Precision::kFp16 && precision != Precision::kFp32) {
      return Rejection{node, profile_.id, precision, ReasonCode::kPrecisionNotAllowed,
                       std::string("the Level Zero backend builds fp16 and fp32 graphs; ") +
                           precision_name(precision) + " needs quantized IR, not built"};
    }
    if (auto refusal = ir::ir_refusal(graph, graph.node(node), precision)) {
      return Rejection{node, profile_.id, precision, refusal->reason,
                       "the Level Zero backend's IR writer: " + refusal->detail};
    }
    return std::nullopt;
  }

  Result<std::shared_ptr<Program>> compile(const Graph& part,
                                           const CompileOptions& options) override {
    HSCHED_ASSIGN_OR_RETURN(std::shared_ptr<NpuRuntime> runtime, open_runtime());
    NpuCompileOptions npu_options;
    npu_options.precision = ir_precision(options);
    npu_options.deadline_ms = options.compile_timeout_ms;
    // The graph the driver's query just saw, when it was this partition's.
    std::optional<PreparedGraph> prepared;
    if (queried_ && queried_->part == &part && queried_->precision == npu_options.precision) {
      prepared = std::move(queried_->graph);
    }
    queried_.reset();
    auto compiled = NpuProgram::compile(part, runtime, npu_options, std::move(prepared));
    if (!compiled.is_ok()) return as_build_failure(compiled.status());
    ++((*compiled)->loaded_from_cache() ? counts_.loaded : counts_.built);
    return std::shared_ptr<Program>(std::make_shared<NpuPartition>(
        std::move(compiled).value(), profile_.id, options.profile));
  }

  // The driver's query of supported layers (when it offers one) on the partition's IR: a node is
  // refused when one of its layers (named after it, ir::layer_name) is not in the answer.
  Result<DriverAnswer> query(const Graph& part, const CompileOptions& options) override {
    HSCHED_ASSIGN_OR_RETURN(std::shared_ptr<NpuRuntime> runtime, open_runtime());
    queried_.reset();
    const Precision precision = ir_precision(options);
    auto prepared = prepare_graph(part, *runtime, precision);
    if (!prepared.is_ok()) return as_build_failure(prepared.status());
    auto query = query_layers(*prepared, runtime, options.compile_timeout_ms);
    if (!query.is_ok()) return as_build_failure(query.status());
    queried_ = Queried{&part, precision, std::move(prepared).value()};  // compile() takes it
    DriverAnswer answer;
    const LayerQuery& layers = *query;
    if (!layers.not_asked.empty()) {
      answer.summary = "driver query: " + layers.not_asked;
      return answer;
    }
    for (NodeId id = 0; id < static_cast<NodeId>(part.nodes().size()); ++id) {
      const std::string name = ir::layer_name(part, part.node(id));
      std::vector<std::string> missing;
      for (const std::string& layer : layers.layers) {
        const bool of_node = layer == name || layer.rfind(name + "/", 0) == 0;
        if (of_node && layers.supported.count(layer) == 0) missing.push_back(layer);
      }
      if (missing.empty()) continue;
      answer.refused.push_back(
          {id, profile_.id, options.precision, ReasonCode::kDriverUnsupported,
           "the driver's query of supported layers leaves out layer '" + missing.front() + "'" +
               (missing.size() > 1 ? " and " + std::to_string(missing.size() - 1) + " more"
                                   : std::string())});
    }
    size_t supported = 0;
    for (const std::string& layer : layers.layers) supported += layers.supported.count(layer);
    answer.summary = "driver query: " + std::to_string(supported) + " of " +
                     std::to_string(layers.layers.size()) + " IR layers supported";
    return answer;
  }

  CacheCounts cache_counts() const override { return counts_; }

 private:
  Result<std::shared_ptr<NpuRuntime>> open_runtime() {
    if (runtime_) return runtime_;
    const std::optional<DeviceInfo> info =
        profile_.present ? find_device(profile_.locator) : std::nullopt;
    if (!info) {
      return Status(ErrorCode::kUnavailable, "Level Zero device " + profile_.id + " (" +
                                                 profile_.name + ") is not present at " +
                                                 (profile_.locator.empty() ? std::string("this machine")
                                                                           : profile_.locator));
    }
    auto cache = std::make_shared<NativeCache>(context_.cache_dir);
    HSCHED_ASSIGN_OR_RETURN(runtime_, NpuRuntime::open(*info, std::move(cache)));
    return runtime_;
  }

  // The precision write_ir serializes a partition in: fp16 when it asks fp16, else fp32.
  static Precision ir_precision(const CompileOptions& options) {
    return options.precision == Precision::kFp16 ? Precision::kFp16 : Precision::kFp32;
  }

  // The IR writer refusing a node the capability accepted is a build failure of this device
  // (re-planned), not the user's input at fault.
  static Status as_build_failure(const Status& error) {
    if (error.code() == ErrorCode::kInvalidArgument || error.code() == ErrorCode::kUnimplemented) {
      return internal_error("build_failed: " + error.message());
    }
    return error;
  }

  // The graph query() prepared, for compile() of the same partition (PartitionCompiler calls
  // the two in turn on one subgraph).
  struct Queried {
    const Graph* part;
    Precision precision;
    PreparedGraph graph;
  };

  DeviceProfile profile_;
  DeviceContext context_;
  std::shared_ptr<NpuRuntime> runtime_;
  CacheCounts counts_;
  std::optional<Queried> queried_;
};

class LevelZeroBackend final : public Backend {
 public:
  explicit LevelZeroBackend(std::function<std::optional<DeviceProfile>()> npu_3720_profile)
      : npu_3720_profile_(std::move(npu_3720_profile)) {}
  DeviceApi api() const override { return DeviceApi::kLevelZero; }

  std::vector<DeviceProfile> discover() const override {
    std::vector<DeviceProfile> profiles;
    const std::vector<DeviceInfo> devices = enumerate_devices();
    std::optional<DeviceProfile> shipped_npu;
    if (npu_3720_profile_ && std::any_of(devices.begin(), devices.end(), is_npu_3720)) {
      shipped_npu = npu_3720_profile_();
    }
    for (const DeviceInfo& info : devices) profiles.push_back(npu_profile(info, shipped_npu));
    return profiles;
  }

  std::unique_ptr<Device> open(const DeviceProfile& profile,
                               const DeviceContext& context) const override {
    return std::make_unique<LevelZeroDevice>(profile, context);
  }

 private:
  std::function<std::optional<DeviceProfile>()> npu_3720_profile_;
};

}  // namespace

DeviceProfile npu_profile(const DeviceInfo& info, const std::optional<DeviceProfile>& shipped_npu) {
  DeviceProfile conservative = device_profile(info);
  if (!is_npu_3720(info) || !shipped_npu) return conservative;
  DeviceProfile profile = *shipped_npu;  // figures, op list and precisions of the NPU 3720
  profile.id.clear();                    // numbered by discovery: npu0, npu1...
  profile.name = conservative.name;      // what the driver calls it (a simulation says so)
  profile.kind = DeviceKind::kNpu;
  profile.api = DeviceApi::kLevelZero;
  profile.present = true;
  profile.locator = conservative.locator;
  profile.pci_address = conservative.pci_address;
  profile.uuid = conservative.uuid;
  if (info.memory_bytes > 0) profile.memory_bytes = info.memory_bytes;
  return profile;
}

std::unique_ptr<Backend> make_backend(
    std::function<std::optional<DeviceProfile>()> npu_3720_profile) {
  return std::make_unique<LevelZeroBackend>(std::move(npu_3720_profile));
}

}  // namespace hsched::level_zero

namespace hsched {

bool use_simulated_npu_if_none(const std::string& driver_path) {
  return level_zero::use_simulated_driver_if_no_npu(driver_path);
}

}  // namespace hsched
