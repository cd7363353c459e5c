#include "backends/cpu/backend.h"

#include <algorithm>
#include <cstdio>
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

// Whether a convolution gains from bf16 or int8. Its oneDNN primitive first converts the fp32
// activation to bf16 (int8: measures its range, then quantizes it), a pass over the input that
// the higher peak must pay for: with too few
// multiply-adds in all, per input value or per output value (the reduction), it does not. On the
// shared CNNs (AVX512_BF16), depthwise convolutions, 1x1 convolutions over 16-24 channels,
// projections to 16-32 channels and convolutions of 1-3 M multiply-adds ran slower in bf16, the
// 3x3 and wide 1x1 ones 1.3-2x faster; in int8 the same split held (mobilenet_v2 with every
// convolution in int8 ran 3x slower than in fp32, resnet18 2.2x faster). nullopt when it gains
// (or its shapes are not known); else the figures that say why not.
constexpr int64_t kBf16MinMacs = 4'000'000;
constexpr int64_t kBf16MinMacsPerInput = 64;
constexpr int64_t kBf16MinReduction = 27;  // one 3x3 kernel over 3 channels: a stem convolution

std::optional<std::string> reduced_precision_does_not_pay(const Graph& graph, const Node& node) {
  if (node.op_type != "Conv" || node.inputs.size() < 2 || node.inputs[0] == kNoValue ||
      node.inputs[1] == kNoValue || node.outputs.empty() || node.outputs[0] == kNoValue) {
    return std::nullopt;
  }
  const Shape& x = graph.value(node.inputs[0]).shape;
  const Shape& w = graph.value(node.inputs[1]).shape;
  const Shape& y = graph.value(node.outputs[0]).shape;
  if (!x.is_static() || !w.is_static() || !y.is_static() || x.rank() < 3 || w.rank() != x.rank() ||
      y.rank() != x.rank() || x.elements() <= 0) {
    return std::nullopt;
  }
  int64_t reduction = 1;  // input channels per group x kernel size
  for (size_t d = 1; d < w.dims.size(); ++d) reduction *= w.dims[d];
  const double macs = static_cast<double>(y.elements()) * static_cast<double>(reduction);
  const double per_input = macs / static_cast<double>(x.elements());
  if (macs >= kBf16MinMacs && per_input >= kBf16MinMacsPerInput &&
      reduction >= kBf16MinReduction) {
    return std::nullopt;
  }
  char figures[160];
  std::snprintf(figures, sizeof(figures),
                "%.2f M multiply-adds, %.0f per input value, reduction %lld; it needs >= %.0f M, "
                "%lld and %lld",
                macs / 1e6, per_input, static_cast<long long>(reduction), kBf16MinMacs / 1e6,
                static_cast<long long>(kBf16MinMacsPerInput),
                static_cast<long long>(kBf16MinReduction));
  return std::string(figures);
}

// Why the CPU does not compute `node` in int8, or nullopt when it does: dynamic quantization
// (kernels/dnnl_int8.h) of a Conv, MatMul or Gemm whose weights are a constant, 2-D for the
// matrix products.
std::optional<std::string> int8_refusal(const Graph& graph, const Node& node) {
  const bool conv = node.op_type == "Conv";
  if (!conv && node.op_type != "MatMul" && node.op_type != "Gemm") {
    return "the CPU computes int8 in Conv, MatMul and Gemm only";
  }
  if (node.inputs.size() < 2 || node.inputs[1] == kNoValue ||
      !graph.value(node.inputs[1]).is_constant() ||
      graph.value(node.inputs[1]).dtype != DType::kF32) {
    return "the CPU computes int8 with constant f32 weights only (input 1 is not one)";
  }
  if (!conv && graph.value(node.inputs[1]).shape.rank() != 2) {
    return "the CPU computes int8 matrix products with 2-D weights only";
  }
  return std::nullopt;
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
      steps.push_back({step.node, step.op, step.mean_ms, device_, std::nullopt, std::nullopt});
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
    if (precision == Precision::kInt8) {
      if (auto why = int8_refusal(graph, n)) {
        return Rejection{node, profile_.id, precision, ReasonCode::kPrecisionNotAllowed, *why};
      }
    }
    if (precision == Precision::kBf16 || precision == Precision::kInt8) {
      if (auto figures = reduced_precision_does_not_pay(graph, n)) {
        return Rejection{node, profile_.id, precision, ReasonCode::kPrecisionNotAllowed,
                         std::string("the CPU computes this convolution in fp32: ") +
                             precision_name(precision) +
                             " saves less than converting its input "
                             "costs (" +
                             *figures + ")"};
      }
    }
    if (precision == Precision::kFp16) {
      return Rejection{node, profile_.id, precision, ReasonCode::kPrecisionNotAllowed,
                       "the CPU backend computes fp32, bf16 and int8 only (no fp16 kernels)"};
    }
    // bf16 and int8 need the profile's peak in them: AVX512_BF16, VNNI (device.h).
    return check_precision_listed(graph, node, profile_, precision);
  }

  // A bf16 or int8 convolution and the fp32 ops around it share a partition.
  bool mixes_precisions() const override { return true; }

  // oneDNN's convolutions block the output channels by 16 (weights Acdb16a; AcdB16a4b in int8):
  // a Conv of one group to fewer channels computes 16 (vae_decoder_small's 64-to-3 output layer
  // took 3.3-7.3 ms in fp32 where its FLOPs at the conv curve's rate said 0.59). Calibration's
  // convolutions have 16 output channels or more.
  double executed_work(const Graph& graph, NodeId id, CostClass /*cost_class*/,
                       double work) const override {
    constexpr int64_t kOutputBlock = 16;
    const Node& node = graph.node(id);
    if (node.op_type != "Conv" || node.attr_int("group", 1) != 1 || node.inputs.size() < 2 ||
        node.inputs[1] == kNoValue) {
      return work;
    }
    const Shape& w = graph.value(node.inputs[1]).shape;
    if (!w.is_static() || w.rank() < 1 || w.dims[0] <= 0 || w.dims[0] >= kOutputBlock) return work;
    return work * static_cast<double>(kOutputBlock) / static_cast<double>(w.dims[0]);
  }

  // Folded, aliased and fused nodes cost nothing; a fused normalization chain costs one
  // normalization (over an image's channels: a class of its own).
  StepHints step_hints(const Graph& graph) const override {
    StepHints hints;
    std::vector<std::string> step_ops;
    hints.free = nodes_without_steps(graph, &step_ops);
    hints.as_class.resize(step_ops.size());
    for (size_t n = 0; n < step_ops.size(); ++n) {
      if (step_ops[n] == kGroupNormOp || step_ops[n] == kQdqLayerNormOp ||
          step_ops[n] == kQdqSoftmaxOp) {
        hints.as_class[n] = CostClass::kNormalization;
      }
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
      cpu_options.node_compute.push_back(p == Precision::kBf16   ? NodeCompute::kBf16
                                         : p == Precision::kInt8 ? NodeCompute::kInt8
                                                                 : NodeCompute::kFp32);
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
