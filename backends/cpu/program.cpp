#include "backends/cpu/program.h"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <numeric>
#include <optional>
#include <set>

#include "backends/cpu/denormals.h"
#include "backends/cpu/host_thread.h"
#include "backends/cpu/kernels/elementwise.h"
#include "backends/cpu/kernels/norm_fusion.h"
#include "backends/cpu/kernels/post_ops.h"
#include "backends/cpu/kernels/qdq_fusion.h"
#include "backends/cpu/step_plan.h"

namespace hsched::cpu {

namespace {

bool is_dnnl_spatial(const std::string& op) {
  return op == "Conv" || op == "ConvTranspose" || op == "MaxPool" || op == "AveragePool";
}

bool is_8bit(DType dtype) { return dtype == DType::kU8 || dtype == DType::kI8; }

// A QLinearConv over a 4-D 8-bit activation: its kernel reads and writes either layout, as the
// fp32 oneDNN convolutions do (quant_conv.cpp).
bool is_int8_spatial(const Graph& graph, const Node& node) {
  return node.op_type == "QLinearConv" && !node.inputs.empty() && node.inputs[0] != kNoValue &&
         graph.value(node.inputs[0]).shape.rank() == 4;
}

// Ops whose kernels read and write 4-D activations in either layout (the program records which
// in the node's layout attributes).
bool is_arithmetic(const std::string& op) {
  return op == "Add" || op == "Sub" || op == "Mul" || op == "Div";
}

// Whether v holds exactly one value (a per-tensor scale or zero point).
bool is_single(const Graph& graph, ValueId v) {
  return v != kNoValue && graph.value(v).shape.is_static() && graph.value(v).shape.elements() == 1;
}

// The inputs of a layout-flexible op that take its layout (the others are shapes, scales...);
// nullopt when the op is not layout-flexible. Ops that run elementwise over tensors of one shape
// are flexible without knowing it: the unary fp32 ops above, DequantizeLinear and QuantizeLinear
// with one scale, kQdqBinaryOp whose b is a's shape or one value, and kQdqTableOp.
std::optional<std::vector<size_t>> flexible_inputs(const Graph& graph, const Node& node) {
  const std::string& op = node.op_type;
  if (node.outputs.empty() || node.outputs[0] == kNoValue || node.inputs.empty() ||
      node.inputs[0] == kNoValue) {
    return std::nullopt;
  }
  const Value& out = graph.value(node.outputs[0]);
  if (op == kGroupNormOp || op == kChannelLayerNormOp || op == "Resize" ||
      op == "GlobalAveragePool") {
    return std::vector<size_t>{0};
  }
  if (op == "Concat" || (is_arithmetic(op) && out.dtype == DType::kF32 && out.shape.rank() == 4)) {
    std::vector<size_t> all(node.inputs.size());
    std::iota(all.begin(), all.end(), size_t{0});
    return all;
  }
  // Either layout is theirs, as their kernels never look: between two channels-last steps they
  // keep the chain channels-last (a GELU's Erf, a Sigmoid or HardSwish the fusions did not take,
  // the fp32 ops of an INT8 model between its Q/DQ pairs).
  if (is_elementwise_unary(op) && out.dtype == DType::kF32 && out.shape.rank() == 4 &&
      graph.value(node.inputs[0]).shape.dims == out.shape.dims) {
    return std::vector<size_t>{0};
  }
  if ((op == "DequantizeLinear" || op == "QuantizeLinear") && node.inputs.size() >= 2 &&
      is_single(graph, node.inputs[1]) && out.shape.rank() == 4) {
    return std::vector<size_t>{0};
  }
  if (op == kQdqTableOp && out.shape.rank() == 4) return std::vector<size_t>{0};
  if (op == kQdqBinaryOp && node.inputs.size() == 8 && node.inputs[3] != kNoValue &&
      out.shape.rank() == 4) {
    if (graph.value(node.inputs[3]).shape.dims == out.shape.dims) return std::vector<size_t>{0, 3};
    if (is_single(graph, node.inputs[3])) return std::vector<size_t>{0};
  }
  return std::nullopt;
}

// The flexible ops written for 8-bit data in either layout (the others take fp32 only).
bool is_int8_flexible(const std::string& op) {
  return op == "DequantizeLinear" || op == "QuantizeLinear" || op == kQdqBinaryOp ||
         op == kQdqTableOp || op == kChannelLayerNormOp || op == kGroupNormOp;
}

// A value whose bytes differ between NCHW and NHWC (padded to 4-D: C > 1 and H * W > 1). Where
// they do not, the layout of a broadcast operand or a pooled [N, C, 1, 1] result is moot.
bool layout_bearing(const Value& v) {
  std::vector<int64_t> d = v.shape.dims;
  if (d.size() > 4) return true;
  d.insert(d.begin(), 4 - d.size(), 1);
  return d[1] > 1 && d[2] * d[3] > 1;
}

// Ops whose first output is optional in ONNX and whose kernels run without it (rnn_loops.cpp,
// rnn_dnnl.cpp: an LSTM, GRU or RNN that only the final states are wanted of). None of them is a
// fusion root or layout-flexible, so no pass looks at their first output.
bool may_omit_first_output(const Node& node) {
  return node.op_type == "LSTM" || node.op_type == "GRU" || node.op_type == "RNN";
}

// The first output of every other node is what the fusion, layout and memory passes and the
// kernels treat as its result: a node that omits it ("" in ONNX) is refused, naming it.
Status check_first_outputs(const Graph& graph) {
  for (const Node& node : graph.nodes()) {
    if (node.outputs.empty()) return invalid_argument(node_context(node) + ": it has no output");
    if (node.outputs[0] == kNoValue && !may_omit_first_output(node)) {
      return invalid_argument(node_context(node) +
                              ": its first output is omitted; the CPU backend needs it");
    }
  }
  return Status::ok();
}

}  // namespace

CpuProgram::CpuProgram(const Graph& graph, const CpuOptions& options)
    : graph_(graph),
      options_(options),
      engine_(dnnl::engine::kind::cpu, 0),
      stream_(engine_),
      context_{options.threads, &engine_, &stream_},
      arena_(options.threads) {
  // oneTBB runs an arena's tasks with the floating-point settings (MXCSR) of the thread that
  // initialized it: initialized here under the program's mode, every worker computes in it.
  const DenormalsScope denormals(options.flush_denormals);
  arena_.initialize();
}

CpuProgram::~CpuProgram() = default;

Result<std::unique_ptr<CpuProgram>> CpuProgram::compile(const Graph& graph,
                                                        const CpuOptions& options) {
  if (options.threads < 1) return invalid_argument("--threads must be at least 1");
  for (const Value& v : graph.values()) {
    if (v.is_constant()) {
      // Kernels size their reads by the value's shape and dtype: its bytes must be that.
      if (v.constant->dtype() != v.dtype || v.constant->dims() != v.shape.dims) {
        return invalid_argument("tensor '" + v.name + "' holds " +
                                std::string(dtype_name(v.constant->dtype())) + " " +
                                v.constant->shape().to_string() + " but is declared " +
                                std::string(dtype_name(v.dtype)) + " " + v.shape.to_string());
      }
      continue;
    }
    if (!v.shape.is_static() || v.dtype == DType::kUndefined) {
      std::string where =
          v.producer == kNoNode ? "graph input" : node_context(graph.node(v.producer));
      return invalid_argument("tensor '" + v.name + "' (" + where +
                              ") has no static shape: fix the input dims with --input-shape");
    }
  }
  HSCHED_RETURN_IF_ERROR(check_first_outputs(graph));
  HSCHED_ASSIGN_OR_RETURN(std::vector<NodeId> order, graph.topological_order());
  std::unique_ptr<CpuProgram> program(new CpuProgram(graph, options));
  if (program->options_.memory_limit_bytes <= 0) {
    program->options_.memory_limit_bytes = physical_memory_bytes();
  }
  for (const Value& v : graph.values()) {
    if (v.is_constant()) program->stats_.weight_bytes += static_cast<int64_t>(v.byte_size());
  }
  HSCHED_RETURN_IF_ERROR(program->check_memory(0, "its weights"));
  const KernelRegistry registry = make_cpu_kernel_registry();
  Status status;
  run_on_host_thread([&] {
    const DenormalsScope denormals(options.flush_denormals);  // constant folding computes too
    program->arena_.execute([&] {
      omp_set_num_threads(options.threads);
      set_team_denormals(options.flush_denormals, options.threads);
      status = program->fold_constants(order, registry);
      if (!status.is_ok()) return;
      program->fuse();
      if (options.channels_last) program->assign_layouts();
      status = program->create_kernels(registry);
      if (status.is_ok()) status = program->plan_memory();
    });
  });
  HSCHED_RETURN_IF_ERROR(status);
  return program;
}

int64_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  return pages > 0 && page_size > 0 ? static_cast<int64_t>(pages) * page_size : 0;
}

Status CpuProgram::check_memory(int64_t more, const std::string& what) const {
  const int64_t limit = options_.memory_limit_bytes;
  const int64_t total = stats_.weight_bytes + stats_.folded_bytes + more;
  if (limit <= 0 || total <= limit) return Status::ok();
  auto mib = [](int64_t bytes) { return std::to_string((bytes + (1 << 20) - 1) >> 20) + " MiB"; };
  return Status(ErrorCode::kResourceExhausted,
                "memory_exceeded: the CPU program needs " + mib(total) + " at " + what +
                    " (weights " + mib(stats_.weight_bytes) + ", folded constants " +
                    mib(stats_.folded_bytes) + ", then " + mib(more) + "), over its limit of " +
                    mib(limit) + " (the machine's memory, or the memory limit given)");
}

KernelSpec CpuProgram::spec_for(const Node& node) {
  KernelSpec spec{node, {}, {}, graph_.opset, &context_};
  for (ValueId v : node.inputs) spec.inputs.push_back(v == kNoValue ? nullptr : &graph_.value(v));
  for (ValueId v : node.outputs) spec.outputs.push_back(v == kNoValue ? nullptr : &graph_.value(v));
  return spec;
}

// Nodes whose inputs are all constants run once, here. View ops on constants share the bytes.
Status CpuProgram::fold_constants(const std::vector<NodeId>& order,
                                  const KernelRegistry& registry) {
  for (NodeId id : order) {
    const Node& node = graph_.node(id);
    if (!folds_at_compile_time(node, [&](ValueId v) { return graph_.value(v).is_constant(); })) {
      steps_.push_back(std::make_unique<Step>(Step{node, nullptr}));
      const auto index = static_cast<size_t>(id);
      const NodeCompute compute =
          index < options_.node_compute.size() ? options_.node_compute[index] : NodeCompute::kFp32;
      if (compute == NodeCompute::kBf16) mark_bf16(steps_.back()->node);
      if (compute == NodeCompute::kInt8) mark_int8(steps_.back()->node);
      continue;
    }
    if (alias_constant_view(graph_, node)) {
      ++stats_.folded_nodes;
      continue;
    }
    HSCHED_ASSIGN_OR_RETURN(auto kernel, registry.create(spec_for(node)));
    std::vector<Tensor> outputs;
    std::vector<const Tensor*> in;
    std::vector<Tensor*> out;
    for (ValueId v : node.inputs)
      in.push_back(v == kNoValue ? nullptr : &*graph_.value(v).constant);
    int64_t bytes = 0;
    for (ValueId v : node.outputs) {
      if (v != kNoValue) bytes += static_cast<int64_t>(graph_.value(v).byte_size());
    }
    HSCHED_RETURN_IF_ERROR(check_memory(bytes, "folding " + node_context(node)));
    for (ValueId v : node.outputs) {
      if (v == kNoValue) {
        outputs.emplace_back();  // an omitted output: the kernel sees null
        continue;
      }
      const Value& value = graph_.value(v);
      outputs.push_back(Tensor::uninitialized(value.dtype, value.shape.dims));
    }
    stats_.folded_bytes += bytes;
    for (size_t i = 0; i < outputs.size(); ++i) {
      out.push_back(node.outputs[i] == kNoValue ? nullptr : &outputs[i]);
    }
    HSCHED_RETURN_IF_ERROR(kernel->run(in, out));
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      if (node.outputs[i] != kNoValue)
        graph_.value(node.outputs[i]).constant = std::move(outputs[i]);
    }
    ++stats_.folded_nodes;
  }
  return Status::ok();
}

// Normalization chains into one kernel each, then activations (and residual or bias adds) that
// follow a Conv, ConvTranspose, Gemm or MatMul into its oneDNN primitive as post-ops: the
// intermediate tensors are never written.
void CpuProgram::fuse() {
  if (!options_.fuse) return;
  std::vector<Node*> nodes;
  for (auto& step : steps_) nodes.push_back(&step->node);
  drop_steps(fuse_steps(graph_, nodes));
}

void CpuProgram::drop_steps(const std::vector<bool>& absorbed) {
  std::vector<std::unique_ptr<Step>> kept;
  for (size_t s = 0; s < steps_.size(); ++s) {
    if (absorbed[s]) {
      ++stats_.fused_nodes;
    } else {
      kept.push_back(std::move(steps_[s]));
    }
  }
  steps_ = std::move(kept);
}

// The steps of compile() with default CpuOptions, decided by the same code (step_plan.h) on a copy
// of the graph and copies of its nodes; layouts and kernels change no step count, so they are
// skipped. Folded values are never computed: a small one (a QDQ model's dequantized scale or
// per-channel gamma) stands as a tensor of its shape holding 1s (floats) or 0s, so that fusions
// reading such parameters decide as in the program (their values matter to what a fused kernel
// computes, not to which nodes it takes); a larger one (dequantized weights) is only marked, and a
// fusion that needs its bytes does not happen here although the program makes it, so such a node
// is then reported as a step.
std::vector<bool> nodes_without_steps(const Graph& graph, std::vector<std::string>* step_ops) {
  std::vector<bool> without(graph.nodes().size(), false);
  if (step_ops != nullptr) step_ops->assign(graph.nodes().size(), "");
  const auto order = graph.topological_order();
  // As for a graph the program refuses (a node without its first output): no step is analysed.
  if (!order.is_ok() || !check_first_outputs(graph).is_ok()) return without;
  Graph copy = graph;  // fusion adds constants; the caller's graph stays as it is
  std::vector<bool> folded(copy.values().size(), false);  // per value: computed at compile time
  std::vector<Node> nodes;  // the steps, in program order; not resized once pointed into
  std::vector<NodeId> ids;
  for (NodeId id : *order) {
    const Node& node = copy.node(id);
    const bool constant_inputs = folds_at_compile_time(node, [&](ValueId v) {
      return copy.value(v).is_constant() || folded[static_cast<size_t>(v)];
    });
    if (!constant_inputs) {
      nodes.push_back(node);
      ids.push_back(id);
      continue;
    }
    without[static_cast<size_t>(id)] = true;
    if (alias_constant_view(copy, node)) continue;
    for (ValueId v : node.outputs) {
      if (v == kNoValue) continue;
      folded[static_cast<size_t>(v)] = true;
      Value& value = copy.value(v);
      constexpr int64_t kStandInElements = 4096;
      if (value.shape.is_static() && value.shape.elements() <= kStandInElements &&
          !value.is_constant()) {
        Tensor stand_in(value.dtype, value.shape.dims);
        if (value.dtype == DType::kF32) std::ranges::fill(stand_in.values<float>(), 1.0f);
        value.constant = std::move(stand_in);
      }
    }
  }
  std::vector<Node*> fusable;
  for (Node& node : nodes) fusable.push_back(&node);
  const std::vector<bool> absorbed = fuse_steps(copy, fusable);
  std::vector<const Node*> kept;
  std::vector<NodeId> kept_ids;
  for (size_t s = 0; s < nodes.size(); ++s) {
    if (absorbed[s]) {
      without[static_cast<size_t>(ids[s])] = true;
    } else {
      kept.push_back(&nodes[s]);
      kept_ids.push_back(ids[s]);
    }
  }
  const ViewAliases views = alias_views(copy, kept);
  for (size_t s = 0; s < kept.size(); ++s) {
    const auto id = static_cast<size_t>(kept_ids[s]);
    if (views.aliased[s]) {
      without[id] = true;
    } else if (step_ops != nullptr) {
      (*step_ops)[id] = kept[s]->op_type;
    }
  }
  return without;
}

// A 4-D value stays channels-last when a oneDNN spatial primitive or a layout-flexible op
// (GroupNorm, channel LayerNorm, Resize, Concat) produces it and only such ops read it (spatial
// primitives as their activation or fused residual): no reorder in between. A flexible op keeps one
// layout on all sides, so its inputs and output are settled together.
void CpuProgram::assign_layouts() {
  const size_t n = graph_.values().size();
  channels_last_.assign(n, false);
  std::vector<bool> candidate(n, false), blocked(n, false);
  std::vector<std::vector<size_t>> flexible_sides;  // per flexible op: values in its layout
  for (const auto& step : steps_) {
    const Node& node = step->node;
    const bool int8_spatial = is_int8_spatial(graph_, node);
    const bool spatial = is_dnnl_spatial(node.op_type) || int8_spatial;
    const auto flexible = flexible_inputs(graph_, node);
    const bool flex = flexible.has_value();
    if (node.outputs[0] != kNoValue) {
      const Value& out = graph_.value(node.outputs[0]);
      const bool dtype_ok = out.dtype == DType::kF32 ||
                            (is_8bit(out.dtype) && (int8_spatial || is_int8_flexible(node.op_type)));
      if ((spatial || flex) && out.shape.rank() == 4 && dtype_ok) {
        candidate[static_cast<size_t>(node.outputs[0])] = true;
      }
    }
    std::set<size_t> activation_inputs{0};
    for (const auto& op : post_ops_of(node)) {
      if (op.kind == PostOp::Kind::kAdd) activation_inputs.insert(static_cast<size_t>(op.input));
    }
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      if (node.inputs[i] == kNoValue) continue;
      // The fp32 spatial kernels take 8-bit data in one layout only.
      const bool spatial_input = spatial && activation_inputs.count(i) &&
                                 (int8_spatial || !is_8bit(graph_.value(node.inputs[i]).dtype));
      const bool flexible_input =
          flex && std::find(flexible->begin(), flexible->end(), i) != flexible->end() &&
          (is_int8_flexible(node.op_type) || !is_8bit(graph_.value(node.inputs[i]).dtype));
      if (!spatial_input && !flexible_input) blocked[static_cast<size_t>(node.inputs[i])] = true;
    }
    if (!flex) continue;
    // Arithmetic and global pooling constrain only the operands whose bytes the layout changes;
    // the others keep one layout on every side.
    const bool moot_allowed = node.op_type == "GlobalAveragePool" || is_arithmetic(node.op_type);
    std::vector<size_t> sides;
    if (node.op_type != "GlobalAveragePool") sides.push_back(static_cast<size_t>(node.outputs[0]));
    for (size_t i : *flexible) sides.push_back(static_cast<size_t>(node.inputs[i]));
    if (moot_allowed) {
      std::erase_if(sides, [&](size_t v) { return !layout_bearing(graph_.values()[v]); });
    }
    flexible_sides.push_back(std::move(sides));
  }
  for (ValueId v : graph_.outputs()) blocked[static_cast<size_t>(v)] = true;
  for (size_t v = 0; v < n; ++v) channels_last_[v] = candidate[v] && !blocked[v];
  // Only ever clears, so it ends.
  const auto is_nhwc = [&](size_t v) { return static_cast<bool>(channels_last_[v]); };
  for (bool changed = true; changed;) {
    changed = false;
    for (const auto& sides : flexible_sides) {
      const bool any = std::any_of(sides.begin(), sides.end(), is_nhwc);
      if (any && !std::all_of(sides.begin(), sides.end(), is_nhwc)) {
        for (size_t v : sides) channels_last_[v] = false;
        changed = true;
      }
    }
  }
  for (size_t v = 0; v < n; ++v) stats_.channels_last_values += channels_last_[v] ? 1 : 0;
  for (auto& step : steps_) {
    Node& node = step->node;
    if (!is_dnnl_spatial(node.op_type) && !is_int8_spatial(graph_, node) &&
        !flexible_inputs(graph_, node)) {
      continue;
    }
    std::vector<int64_t> in, out;
    for (ValueId v : node.inputs)
      in.push_back(v != kNoValue && channels_last_[static_cast<size_t>(v)]);
    for (ValueId v : node.outputs)
      out.push_back(v != kNoValue && channels_last_[static_cast<size_t>(v)]);
    set_layouts(node, in, out);
  }
}

Status CpuProgram::create_kernels(const KernelRegistry& registry) {
  for (auto& step : steps_) {
    HSCHED_ASSIGN_OR_RETURN(step->kernel, registry.create(spec_for(step->node)));
  }
  stats_.kernels = static_cast<int>(steps_.size());
  return Status::ok();
}

std::vector<StepProfile> CpuProgram::profile() const {
  std::vector<StepProfile> steps;
  for (const auto& step : steps_) {
    steps.push_back(
        {step->node.name, step->node.op_type, step->runs == 0 ? 0.0 : step->total_ms / step->runs});
  }
  return steps;
}

void CpuProgram::reset_profile() {
  for (auto& step : steps_) {
    step->total_ms = 0;
    step->runs = 0;
  }
}

Result<std::vector<Tensor>> CpuProgram::run(const std::vector<Tensor>& inputs) {
  std::lock_guard<std::mutex> lock(run_mutex_);
  const auto& graph_inputs = graph_.inputs();
  if (inputs.size() != graph_inputs.size()) {
    return invalid_argument("the model takes " + std::to_string(graph_inputs.size()) + " inputs, " +
                            std::to_string(inputs.size()) + " given");
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& v = graph_.value(graph_inputs[i]);
    if (inputs[i].dtype() != v.dtype || inputs[i].dims() != v.shape.dims) {
      return invalid_argument("input '" + v.name + "' is " +
                              std::string(dtype_name(inputs[i].dtype())) + " " +
                              inputs[i].shape().to_string() + " but the model needs " +
                              std::string(dtype_name(v.dtype)) + " " + v.shape.to_string());
    }
  }
  std::vector<Tensor> outputs;
  Status status;
  run_on_host_thread([&] {
    const DenormalsScope denormals(options_.flush_denormals);
    arena_.execute([&] {
      omp_set_num_threads(options_.threads);
      set_team_denormals(options_.flush_denormals, options_.threads);
      status = run_steps(inputs, outputs);
    });
  });
  HSCHED_RETURN_IF_ERROR(status);
  return outputs;
}

Status CpuProgram::run_steps(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs) {
  // Per run: graph inputs are borrowed, graph outputs freshly allocated (the caller owns them).
  std::vector<const Tensor*> bound(graph_.values().size(), nullptr);
  for (size_t v = 0; v < graph_.values().size(); ++v) {
    if (graph_.values()[v].is_constant())
      bound[v] = &*graph_.values()[v].constant;
    else if (buffers_[v])
      bound[v] = &*buffers_[v];
  }
  for (size_t i = 0; i < inputs.size(); ++i)
    bound[static_cast<size_t>(graph_.inputs()[i])] = &inputs[i];
  std::vector<Tensor> produced;
  produced.reserve(graph_.outputs().size());
  for (ValueId v : graph_.outputs()) {
    const Value& value = graph_.value(v);
    if (bound[static_cast<size_t>(v)] != nullptr) {
      produced.push_back(bound[static_cast<size_t>(v)]->clone());  // a constant or an input
    } else {
      produced.push_back(Tensor::uninitialized(value.dtype, value.shape.dims));
      bound[static_cast<size_t>(v)] = &produced.back();
    }
  }
  std::vector<const Tensor*> in;
  std::vector<Tensor*> out;
  for (const auto& step : steps_) {
    in.clear();
    out.clear();
    for (ValueId v : step->node.inputs)
      in.push_back(v == kNoValue ? nullptr : bound[static_cast<size_t>(v)]);
    for (ValueId v : step->node.outputs) {
      out.push_back(v == kNoValue ? nullptr : const_cast<Tensor*>(bound[static_cast<size_t>(v)]));
    }
    if (!options_.profile) {
      HSCHED_RETURN_IF_ERROR(step->kernel->run(in, out));
      continue;
    }
    const auto start = std::chrono::steady_clock::now();
    HSCHED_RETURN_IF_ERROR(step->kernel->run(in, out));
    step->total_ms +=
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    ++step->runs;
  }
  outputs = std::move(produced);
  return Status::ok();
}

}  // namespace hsched::cpu
