#include "backends/cpu/backend.h"

#include <algorithm>
#include <mutex>
#include <utility>

#include "backends/capability_rules.h"
#include "backends/cpu/device.h"
#include "backends/cpu/kernels/kernel.h"
#include "backends/cpu/kernels/norm_fusion.h"
#include "backends/cpu/program.h"

namespace hsched::cpu {
namespace {

// The ops the CPU computes in bf16 (oneDNN's bf16 primitives: inputs and weights rounded to
// bf16, products summed and written in fp32); everything else computes fp32.
bool computes_bf16(const std::string& op_type) {
  return op_type == "Conv" || op_type == "ConvTranspose" || op_type == "MatMul" ||
         op_type == "Gemm";
}

// A depthwise convolution (one input channel per group) does a multiply-add per loaded value:
// bf16 halves no work there and adds the reorder of its input, so it stays fp32.
bool is_depthwise(const Graph& graph, const Node& node) {
  const int64_t group = node.attr_int("group", 1);
  if (node.op_type != "Conv" || group <= 1 || node.inputs.empty()) return false;
  const Shape& x = graph.value(node.inputs[0]).shape;
  return x.rank() >= 2 && x.dims[1] == group;
}

class CpuPartition final : public Program {
 public:
  CpuPartition(std::unique_ptr<CpuProgram> program, std::string device)
      : program_(std::move(program)), device_(std::move(device)) {}
  Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs, CopyRecord*) override {
    return program_->run(inputs);
  }
  void append_profile(std::vector<hsched::StepProfile>& steps) const override {
    for (const StepProfile& step : program_->profile()) {
      steps.push_back({step.node, step.op, step.mean_ms, device_, std::nullopt});
    }
  }
  void reset_profile() override { program_->reset_profile(); }

 private:
  std::unique_ptr<CpuProgram> program_;
  std::string device_;
};

class CpuDevice final : public Device {
 public:
  explicit CpuDevice(DeviceProfile profile) : profile_(std::move(profile)) {}
  const DeviceProfile& profile() const override { return profile_; }

  std::optional<Rejection> check(const Graph& graph, NodeId node,
                                 Precision precision) const override {
    const Node& n = graph.node(node);
    if (auto rejection = check_default_domain(graph, node, profile_, precision)) return rejection;
    if (!kernels().supports(n.op_type)) {
      // Worded as the CPU program words it when compiling, so both read the same.
      return Rejection{node, profile_.id, precision, ReasonCode::kOpUnsupported,
                       "the CPU backend has no kernel for op '" + n.op_type + "'"};
    }
    if (auto rejection = check_op_listed(graph, node, profile_, precision)) return rejection;
    if (precision == Precision::kBf16 && !computes_bf16(n.op_type)) {
      return Rejection{node, profile_.id, precision, ReasonCode::kPrecisionNotAllowed,
                       "the CPU computes bf16 in Conv, ConvTranspose, MatMul and Gemm only"};
    }
    if (precision == Precision::kBf16 && is_depthwise(graph, n)) {
      return Rejection{node, profile_.id, precision, ReasonCode::kPrecisionNotAllowed,
                       "the CPU computes depthwise convolutions in fp32 (bf16 saves no work "
                       "there)"};
    }
    if (precision != Precision::kFp32 && precision != Precision::kBf16) {
      return Rejection{node, profile_.id, precision, ReasonCode::kPrecisionNotAllowed,
                       std::string("the CPU backend computes fp32 and bf16 only (no ") +
                           precision_name(precision) + " kernels)"};
    }
    // bf16 needs the profile's bf16 peak: a CPU with AVX512_BF16 (device.h).
    return check_precision_listed(graph, node, profile_, precision);
  }

  // A bf16 convolution and the fp32 ops around it share a partition.
  bool mixes_precisions() const override { return true; }

  // Folded, aliased and fused nodes cost nothing; a fused normalization chain costs one
  // normalization (over an image's channels: a class of its own).
  StepHints step_hints(const Graph& graph) const override {
    StepHints hints;
    std::vector<std::string> step_ops;
    hints.free = nodes_without_steps(graph, &step_ops);
    hints.as_class.resize(step_ops.size());
    for (size_t n = 0; n < step_ops.size(); ++n) {
      if (step_ops[n] == kGroupNormOp) hints.as_class[n] = CostClass::kNormalization;
      if (step_ops[n] == kChannelLayerNormOp) hints.as_class[n] = CostClass::kChannelNorm;
    }
    return hints;
  }

  Result<std::shared_ptr<Program>> compile(const Graph& part,
                                           const CompileOptions& options) override {
    CpuOptions cpu_options;
    // CompileOptions' 0 means every core (backend.h); CpuProgram wants a count.
    cpu_options.threads = options.cpu_threads > 0
                              ? options.cpu_threads
                              : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    cpu_options.profile = options.profile;
    cpu_options.flush_denormals = options.flush_denormals;
    cpu_options.memory_limit_bytes = options.memory_limit_bytes;
    for (Precision p : options.node_precisions) {
      cpu_options.bf16_nodes.push_back(p == Precision::kBf16);
    }
    HSCHED_ASSIGN_OR_RETURN(auto compiled, CpuProgram::compile(part, cpu_options));
    return std::shared_ptr<Program>(std::make_shared<CpuPartition>(std::move(compiled),
                                                                   profile_.id));
  }

 private:
  // The kernel library of this build, made on the first check.
  const KernelRegistry& kernels() const {
    std::call_once(kernels_made_, [this] { kernels_ = make_cpu_kernel_registry(); });
    return kernels_;
  }

  DeviceProfile profile_;
  mutable std::once_flag kernels_made_;
  mutable KernelRegistry kernels_;
};

class CpuBackend final : public Backend {
 public:
  DeviceApi api() const override { return DeviceApi::kHost; }
  std::vector<DeviceProfile> discover() const override { return {cpu_profile(probe_cpu())}; }
  std::unique_ptr<Device> open(const DeviceProfile& profile, const DeviceContext&) const override {
    return std::make_unique<CpuDevice>(profile);
  }
};

}  // namespace

std::unique_ptr<Backend> make_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace hsched::cpu
