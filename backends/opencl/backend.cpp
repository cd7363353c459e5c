#include "backends/opencl/backend.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "backends/capability_rules.h"
#include "backends/opencl/device.h"
#include "backends/opencl/kernels/node_ops.h"
#include "backends/opencl/kernels/ops_spatial.h"
#include "backends/opencl/program.h"
#include "backends/opencl/cache.h"
#include "backends/opencl/runtime.h"

namespace hsched::opencl {
namespace {

// Outputs an OpenCL GPU computes at once. Below that its work groups all run together and a
// kernel's time follows its serial loop (a GEMM's depth K, a Conv's chunk of it) more than its
// FLOPs: on the H200 a 128x256 by 256x1024 product and a 128x1024 by 1024x256 one (the same
// FLOPs, bert_mini's two MLP layers) took 0.021 and 0.05 ms. Fitted to the H200's square GEMMs at
// K = 1024 (0.033, 0.045 and 0.055 ms at 64, 128 and 197 rows of 1024 outputs: time ~ K x
// (outputs + 2^17)); its 1x1 Convs below some 200K outputs follow their input channels alike.
constexpr double kGpuFillOutputs = 131072;

// `flop` computing `outputs` values on an OpenCL GPU, counted as if it had kGpuFillOutputs more
// outputs: 2 K (outputs + fill) for a GEMM of depth K.
double gpu_filled_work(double flop, double outputs) {
  return outputs > 0 && flop > 0 ? flop * (outputs + kGpuFillOutputs) / outputs : 0;
}

// The static shape of `node`'s first output, or nullptr.
const hsched::Shape* static_output(const Graph& graph, const Node& node) {
  if (node.outputs.empty() || node.outputs[0] == kNoValue) return nullptr;
  const hsched::Shape& shape = graph.value(node.outputs[0]).shape;
  return shape.is_static() ? &shape : nullptr;
}

// What the kernels execute for a group-1 Conv (conv_execution), on a GPU filled out
// (gpu_filled_work); 0 for any other node.
double conv_work(const Graph& graph, const Node& node, bool gpu) {
  if (node.op_type != "Conv" || node.attr_int("group", 1) != 1 || node.inputs.size() < 2 ||
      node.inputs[1] == kNoValue) {
    return 0;
  }
  const hsched::Shape& w = graph.value(node.inputs[1]).shape;
  const hsched::Shape* y = static_output(graph, node);
  if (y == nullptr || !w.is_static() || w.dims.size() < 3 || y->dims.size() != w.dims.size()) {
    return 0;
  }
  int64_t reduction = 1;
  for (size_t i = 1; i < w.dims.size(); ++i) reduction *= w.dims[i];
  const bool pointwise = reduction == w.dims[1];
  int64_t pixels = y->dims[0];
  for (size_t i = 2; i < y->dims.size(); ++i) pixels *= y->dims[i];
  // A 3x3 kernel of stride and dilation 1 (kWinograd where conv_execution says): its 2x2 tiles.
  const auto ones = [&](const char* attr) {
    const std::vector<int64_t> v = node.attr_ints(attr);
    return std::all_of(v.begin(), v.end(), [](int64_t e) { return e == 1; });
  };
  int64_t tiles = 0;
  if (w.dims.size() == 4 && w.dims[2] == 3 && w.dims[3] == 3 && ones("strides") &&
      ones("dilations")) {
    tiles = y->dims[0] * ((y->dims[2] + 1) / 2) * ((y->dims[3] + 1) / 2);
  }
  const ConvExecution run = conv_execution(y->dims[1], pixels, reduction, pointwise, tiles);
  return gpu ? gpu_filled_work(run.flops, run.outputs) : run.flops;
}

bool is_conv_class(CostClass cost_class) {
  return cost_class == CostClass::kConv || cost_class == CostClass::kPointwiseConv ||
         cost_class == CostClass::kStemConv || cost_class == CostClass::kStridedConv;
}

class OpenClPartition final : public Program {
 public:
  OpenClPartition(std::unique_ptr<ClProgram> program, std::string device)
      : program_(std::move(program)), device_(std::move(device)) {}
  Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs,
                                  CopyRecord* copies) override {
    return program_->run(inputs, copies);
  }
  void append_profile(std::vector<StepProfile>& steps) const override {
    const Graph& graph = program_->graph();
    for (const ClStepTime& step : program_->profile()) {
      steps.push_back({node_label(graph, step.node), graph.node(step.node).op_type, step.total_ms,
                       device_, step.enqueue_ms, step.device_ms});
    }
  }
  void reset_profile() override { program_->reset_profile(); }
  std::shared_ptr<std::byte> host_memory(size_t bytes) const override {
    return program_->host_memory(bytes);
  }

 private:
  std::unique_ptr<ClProgram> program_;
  std::string device_;
};

class OpenClDevice final : public Device {
 public:
  OpenClDevice(DeviceProfile profile, DeviceContext context)
      : profile_(std::move(profile)), context_(std::move(context)) {}
  const DeviceProfile& profile() const override { return profile_; }

  std::optional<Rejection> check(const Graph& graph, NodeId node,
                                 Precision precision) const override {
    if (auto rejection = check_profile_rules(graph, node, profile_, precision)) return rejection;
    if (auto refusal = check_node(graph, graph.node(node))) {
      return Rejection{node, profile_.id, precision, refusal->reason,
                       "the OpenCL backend: " + refusal->detail};
    }
    return std::nullopt;
  }

  StepHints step_hints(const Graph& graph) const override {
    KernelHints hints = kernel_hints(graph);
    return {std::move(hints.without), {}, std::move(hints.copy_share)};
  }

  // A copy per non-empty input of a Concat and per output of a Split, an InstanceNormalization's
  // instance_norm_kernels, one for any other node.
  int64_t launches(const Graph& graph, NodeId id) const override {
    const Node& node = graph.node(id);
    if (node.op_type == "InstanceNormalization") {
      if (node.inputs.empty() || node.inputs[0] == kNoValue) return 1;
      const hsched::Shape& x = graph.value(node.inputs[0]).shape;
      return x.is_static() ? instance_norm_kernels(x.dims, profile_.kind == DeviceKind::kCpu) : 1;
    }
    const bool split = node.op_type == "Split";
    if (!split && node.op_type != "Concat") return 1;
    int64_t kernels = 0;
    for (ValueId value : split ? node.outputs : node.inputs) {
      if (value == kNoValue) continue;
      const hsched::Shape& shape = graph.value(value).shape;
      kernels += !shape.is_static() || shape.elements() > 0 ? 1 : 0;
    }
    return std::max<int64_t>(kernels, 1);
  }

  // The concat curve's point is a Concat of kConcatBenchInputs inputs: that many kernels.
  double curve_points(const Graph& graph, NodeId node, CostClass cost_class) const override {
    const auto kernels = static_cast<double>(launches(graph, node));
    return cost_class == CostClass::kConcat ? kernels / kConcatBenchInputs : kernels;
  }

  // A Conv counts the FLOPs its tiles execute; on a GPU a GEMM and a Conv count as if they had
  // kGpuFillOutputs more outputs.
  double executed_work(const Graph& graph, NodeId id, CostClass cost_class,
                       double work) const override {
    const Node& node = graph.node(id);
    const bool gpu = profile_.kind == DeviceKind::kGpu;
    double executed = 0;
    if (is_conv_class(cost_class)) {
      executed = conv_work(graph, node, gpu);
    } else if (gpu && cost_class == CostClass::kGemm) {
      const hsched::Shape* y = static_output(graph, node);
      if (y != nullptr) executed = gpu_filled_work(work, static_cast<double>(y->elements()));
    }
    return executed > 0 ? executed : work;
  }

  Result<std::shared_ptr<Program>> compile(const Graph& part,
                                           const CompileOptions& options) override {
    HSCHED_ASSIGN_OR_RETURN(std::shared_ptr<DeviceRuntime> runtime, open_runtime());
    const Storage storage =
        options.precision == Precision::kFp16 ? Storage::kFloat16 : Storage::kFloat32;
    HSCHED_ASSIGN_OR_RETURN(auto compiled,
                            ClProgram::compile(part, runtime, storage, options.compile_timeout_ms,
                                               options.profile));
    return std::shared_ptr<Program>(
        std::make_shared<OpenClPartition>(std::move(compiled), profile_.id));
  }

  CacheCounts cache_counts() const override {
    if (!cache_) return {};
    return {cache_->programs_built(), cache_->programs_loaded()};
  }

 private:
  Result<std::shared_ptr<DeviceRuntime>> open_runtime() {
    if (runtime_) return runtime_;
    if (!profile_.present) {
      return Status(ErrorCode::kUnavailable, "OpenCL device " + profile_.id + " (" +
                                                 profile_.name +
                                                 ") is planned from a profile, not present here");
    }
    const std::optional<DeviceInfo> info = find_device(profile_.locator);
    if (!info) {
      return Status(ErrorCode::kUnavailable, "OpenCL device " + profile_.id + " (" +
                                                 profile_.name + ") is no longer present at " +
                                                 profile_.locator);
    }
    if (!cache_) cache_ = std::make_shared<ProgramCache>(context_.cache_dir);
    HSCHED_ASSIGN_OR_RETURN(runtime_, DeviceRuntime::open(*info, cache_));
    return runtime_;
  }

  DeviceProfile profile_;
  DeviceContext context_;
  std::shared_ptr<ProgramCache> cache_;
  std::shared_ptr<DeviceRuntime> runtime_;
};

class OpenClBackend final : public Backend {
 public:
  DeviceApi api() const override { return DeviceApi::kOpenCl; }
  std::vector<DeviceProfile> discover() const override { return discover_devices(); }
  std::unique_ptr<Device> open(const DeviceProfile& profile,
                               const DeviceContext& context) const override {
    return std::make_unique<OpenClDevice>(profile, context);
  }
};

}  // namespace

std::unique_ptr<Backend> make_backend() { return std::make_unique<OpenClBackend>(); }

}  // namespace hsched::opencl
