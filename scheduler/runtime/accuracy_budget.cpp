#include "scheduler/runtime/accuracy_budget.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <sstream>
#include <string>

#include "graph/integer_layers.h"
#include "graph/subgraph.h"

namespace hsched::runtime {
namespace {

// The error of `got` against `want` under `metric`: max_rel, the largest |got - want| over the
// largest |want| (over the largest |got - want| when `want` is all zero); cosine, the similarity
// of the two as vectors (1 when both are zero). Values are f32, or 8-bit less `zero`.
double error_of(const Tensor& got, const Tensor& want, AccuracyMetric metric, double zero = 0) {
  const auto value = [&](const Tensor& t, size_t i) -> double {
    if (t.dtype() == DType::kU8) return t.values<uint8_t>()[i] - zero;
    if (t.dtype() == DType::kI8) return t.values<int8_t>()[i] - zero;
    return t.values<float>()[i];
  };
  double max_diff = 0, max_want = 0, dot = 0, gg = 0, ww = 0;
  for (size_t i = 0; i < static_cast<size_t>(want.elements()); ++i) {
    const double a = value(got, i), b = value(want, i);
    const double diff = std::abs(a - b);
    max_diff = std::isnan(diff) ? INFINITY : std::max(max_diff, diff);
    max_want = std::max(max_want, std::abs(b));
    dot += a * b;
    gg += a * a;
    ww += b * b;
  }
  if (metric == AccuracyMetric::kMaxRel) return max_want > 0 ? max_diff / max_want : max_diff;
  if (gg == 0 && ww == 0) return 1.0;
  const double cosine = dot / std::sqrt(gg * ww);
  return std::isfinite(cosine) ? cosine : 0.0;
}

// The zero point of 8-bit `v` where a QuantizeLinear makes it with one constant zero point (0
// without one); nullopt for other values.
std::optional<double> quantized_zero(const Graph& graph, ValueId v) {
  const Value& value = graph.value(v);
  if (value.dtype != DType::kU8 && value.dtype != DType::kI8) return std::nullopt;
  if (value.producer == kNoNode) return std::nullopt;
  const Node& q = graph.node(value.producer);
  if (q.op_type != "QuantizeLinear") return std::nullopt;
  if (q.inputs.size() < 3 || q.inputs[2] == kNoValue) return 0.0;
  const Value& zero = graph.value(q.inputs[2]);
  if (!zero.is_constant() || zero.constant->elements() != 1) return std::nullopt;
  if (zero.dtype == DType::kU8) return zero.constant->values<uint8_t>()[0];
  if (zero.dtype == DType::kI8) return zero.constant->values<int8_t>()[0];
  return std::nullopt;
}

// The fp32 values of `wanted`: graph inputs as given, the rest as outputs of a copy of the graph
// run on the CPU (`cpu`) with `inputs`. Constants are left out (their nodes read them).
struct Fp32Values {
  std::vector<Tensor> computed;
  std::map<ValueId, const Tensor*> of;
};

Result<Fp32Values> fp32_values(const Graph& graph, const std::vector<ValueId>& wanted,
                               const std::vector<Tensor>& inputs, const DeviceProfile& cpu,
                               const ExecutorOptions& options) {
  if (inputs.size() != graph.inputs().size()) {
    return invalid_argument("the sample inputs are " + std::to_string(inputs.size()) +
                            " tensors; the model takes " + std::to_string(graph.inputs().size()));
  }
  Fp32Values values;
  for (size_t k = 0; k < inputs.size(); ++k) values.of[graph.inputs()[k]] = &inputs[k];
  Graph reference = graph;
  std::map<ValueId, size_t> output_of;
  for (size_t k = 0; k < graph.outputs().size(); ++k) output_of.emplace(graph.outputs()[k], k);
  for (ValueId v : wanted) {
    if (v == kNoValue || graph.value(v).is_constant() || values.of.count(v) != 0) continue;
    if (output_of.emplace(v, reference.outputs().size()).second) reference.add_output(v);
  }
  HSCHED_ASSIGN_OR_RETURN(std::shared_ptr<Program> whole,
                          compile_cpu_program(reference, cpu, options));
  HSCHED_ASSIGN_OR_RETURN(values.computed, whole->run(inputs, nullptr));
  for (const auto& [value, k] : output_of) values.of.emplace(value, &values.computed[k]);
  return values;
}

// Every input and output of `nodes`.
std::vector<ValueId> values_of(const Graph& graph, const std::vector<NodeId>& nodes) {
  std::vector<ValueId> values;
  for (NodeId n : nodes) {
    for (const auto* list : {&graph.node(n).inputs, &graph.node(n).outputs}) {
      values.insert(values.end(), list->begin(), list->end());
    }
  }
  return values;
}

bool is_budgeted(const NodePlacement& p, const AccuracyBudget& budget) {
  return p.precision != Precision::kFp32 && budget.limits.count(p.precision) != 0;
}

// The worst error of `got` against `want` (the values `outputs` of the graph) under `metric`:
// float outputs, and with `quantized` QuantizeLinear outputs less their zero points.
double worst_error(const Graph& graph, const std::vector<ValueId>& outputs,
                   const std::vector<Tensor>& got, const std::vector<Tensor>& want,
                   AccuracyMetric metric, bool quantized) {
  const bool cosine = metric == AccuracyMetric::kCosine;
  double worst = cosine ? 1.0 : 0.0;
  for (size_t k = 0; k < outputs.size(); ++k) {
    double zero = 0;
    if (graph.value(outputs[k]).dtype != DType::kF32) {
      const std::optional<double> of = quantized_zero(graph, outputs[k]);
      if (!quantized || !of) continue;
      zero = *of;
    }
    const double error = error_of(got[k], want[k], metric, zero);
    worst = cosine ? std::min(worst, error) : std::max(worst, error);
  }
  return worst;
}

bool within(double error, double limit, AccuracyMetric metric) {
  return metric == AccuracyMetric::kCosine ? error >= limit : error <= limit;
}

std::string over_detail(double error, double limit, AccuracyMetric metric, Precision precision) {
  std::ostringstream detail;
  const bool cosine = metric == AccuracyMetric::kCosine;
  detail << accuracy_metric_name(metric) << " " << error << (cosine ? " under" : " over") << " the "
         << precision_name(precision) << " budget " << limit << " on sample inputs";
  return detail.str();
}

// What a partition over the budget gives up: its budgeted float layers, the nodes outside the
// graph's integer layers (graph/integer_layers.h) and the QuantizeLinears of values the partition
// receives as floats, with the DequantizeLinears only those read and the QuantizeLinears of their
// outputs, so that what crosses to the device that takes them is 8-bit; every budgeted node when
// the partition has no float layer.
std::vector<NodeId> float_layers_of(const Graph& graph, const Plan& plan,
                                    const Partition& partition, const AccuracyBudget& budget,
                                    const std::vector<bool>& integer,
                                    const std::vector<bool>& folded) {
  std::vector<bool> moves(graph.nodes().size(), false);
  std::vector<bool> inside(graph.nodes().size(), false);
  for (NodeId n : partition.nodes) inside[n] = true;
  std::vector<NodeId> budgeted;
  for (NodeId n : partition.nodes) {
    if (!is_budgeted(plan.nodes[n], budget)) continue;
    budgeted.push_back(n);
    const Node& node = graph.node(n);
    if (node.op_type == "QuantizeLinear") {
      const NodeId from = graph.value(node.inputs[0]).producer;
      moves[n] = from == kNoNode || !inside[from];
    } else {
      const bool constant = !node.outputs.empty() && node.outputs[0] != kNoValue &&
                            folded[static_cast<size_t>(node.outputs[0])];
      moves[n] = !integer[n] && !is_quantization(node) && !constant;
    }
  }
  if (std::none_of(budgeted.begin(), budgeted.end(), [&](NodeId n) { return moves[n]; })) {
    return budgeted;
  }
  std::vector<NodeId> layers;
  for (NodeId n : budgeted) {
    const Node& node = graph.node(n);
    if (node.op_type == "DequantizeLinear" && node.outputs[0] != kNoValue) {
      const auto& readers = graph.value(node.outputs[0]).consumers;
      moves[n] = !readers.empty() &&
                 std::all_of(readers.begin(), readers.end(), [&](NodeId r) { return moves[r]; });
    } else if (node.op_type == "QuantizeLinear") {
      const NodeId from = graph.value(node.inputs[0]).producer;
      moves[n] = moves[n] || (from != kNoNode && moves[from]);
    }
    if (moves[n]) layers.push_back(n);
  }
  return layers;
}

}  // namespace

Result<std::vector<Rejection>> over_accuracy_budget(const Graph& graph, const Plan& plan,
                                                    const AccuracyBudget& budget,
                                                    const std::vector<Tensor>& inputs,
                                                    const DeviceProfile& cpu,
                                                    PartitionCompiler& compiler,
                                                    const ExecutorOptions& options) {
  std::vector<NodeId> budgeted;
  for (const NodePlacement& p : plan.nodes) {
    if (is_budgeted(p, budget)) budgeted.push_back(p.node);
  }
  if (budgeted.empty()) return std::vector<Rejection>{};

  // A QDQ model's integer layers and quantizations run as integers only beside their
  // (de)quantizations: they are judged in their partitions.
  const std::vector<bool> integer = integer_layers(graph);
  std::vector<NodeId> judged;
  for (NodeId n : budgeted) {
    if (!integer[n] && !is_quantization(graph.node(n))) judged.push_back(n);
  }
  Fp32Values values;
  if (!judged.empty()) {
    HSCHED_ASSIGN_OR_RETURN(values,
                            fp32_values(graph, values_of(graph, judged), inputs, cpu, options));
  }
  const std::map<ValueId, const Tensor*>& fp32 = values.of;
  std::vector<Rejection> over;
  for (NodeId n : judged) {
    const NodePlacement& placement = plan.nodes[n];
    const Subgraph part = extract_subgraph(graph, {n});
    Partition alone;
    alone.id = -1;
    alone.device = placement.device;
    alone.nodes = {n};
    auto program = compiler.compile(plan, alone, part.graph);
    // A node its device compiles only beside others is measured with them, in its partition;
    // alone it is not judged. Its program goes once measured: a device holds a bounded number.
    if (!program.is_ok()) continue;
    std::vector<Tensor> part_inputs, want;
    for (ValueId v : part.inputs) part_inputs.push_back(*fp32.at(v));
    for (ValueId v : part.outputs) want.push_back(*fp32.at(v));
    auto got = (*program)->run(part_inputs, nullptr);
    compiler.forget(plan, alone, part.graph);
    if (!got.is_ok()) continue;
    const double worst = worst_error(graph, part.outputs, *got, want, budget.metric, false);
    const double limit = budget.limits.at(placement.precision);
    if (within(worst, limit, budget.metric)) continue;
    over.push_back({n, placement.device, placement.precision, ReasonCode::kAccuracyBudget,
                    over_detail(worst, limit, budget.metric, placement.precision)});
  }
  if (!over.empty()) return over;

  // Errors add up over layers: each partition holding budgeted nodes runs whole, and is compared
  // with the same partition on the CPU in fp32 on the same inputs: the plan's partitions run in
  // order on the CPU, each on what the CPU computed before it.
  std::map<ValueId, Tensor> on_cpu;
  for (size_t k = 0; k < inputs.size(); ++k) on_cpu.emplace(graph.inputs()[k], inputs[k]);
  const auto inputs_of = [&](const Subgraph& part) {
    std::vector<Tensor> values;
    for (ValueId v : part.inputs) values.push_back(on_cpu.at(v));
    return values;
  };
  struct Measured {
    const Partition* partition;
    Subgraph part;
    std::vector<Tensor> got, want;
  };
  std::vector<Measured> measured;
  for (const Partition& partition : plan.partitions) {
    Subgraph part = partition_subgraph(graph, plan, partition);
    HSCHED_ASSIGN_OR_RETURN(std::shared_ptr<Program> reference,
                            compile_cpu_program(part.graph, cpu, options));
    const std::vector<Tensor> part_inputs = inputs_of(part);
    HSCHED_ASSIGN_OR_RETURN(std::vector<Tensor> want, reference->run(part_inputs, nullptr));
    if (std::any_of(partition.nodes.begin(), partition.nodes.end(),
                    [&](NodeId n) { return is_budgeted(plan.nodes[n], budget); })) {
      auto program = compiler.compile(plan, partition, part.graph);
      auto got = program.is_ok() ? (*program)->run(part_inputs, nullptr)
                                 : Result<std::vector<Tensor>>(program.status());
      if (got.is_ok()) measured.push_back({&partition, part, std::move(got).value(), want});
    }
    for (size_t k = 0; k < part.outputs.size(); ++k) {
      on_cpu.insert_or_assign(part.outputs[k], std::move(want[k]));
    }
  }
  const std::vector<bool> folded = from_constants(graph);
  for (const Measured& m : measured) {
    const Partition& partition = *m.partition;
    const double worst = worst_error(graph, m.part.outputs, m.got, m.want, budget.metric, true);
    Precision strictest = Precision::kFp32;
    double limit = 0;
    for (NodeId n : partition.nodes) {
      const Precision precision = plan.nodes[n].precision;
      if (!is_budgeted(plan.nodes[n], budget)) continue;
      const double node_limit = budget.limits.at(precision);
      if (strictest == Precision::kFp32 || !within(limit, node_limit, budget.metric)) {
        strictest = precision;
        limit = node_limit;
      }
    }
    if (within(worst, limit, budget.metric)) continue;
    const std::string detail = "partition " + std::to_string(partition.id) + " (" +
                               std::to_string(partition.nodes.size()) +
                               " nodes): " + over_detail(worst, limit, budget.metric, strictest);
    for (NodeId n : float_layers_of(graph, plan, partition, budget, integer, folded)) {
      over.push_back(
          {n, partition.device, plan.nodes[n].precision, ReasonCode::kAccuracyBudget, detail});
    }
  }
  return over;
}

Result<std::vector<Rejection>> outside_fp16_range(const Graph& graph, const Plan& plan,
                                                  const std::vector<Tensor>& inputs,
                                                  const DeviceProfile& cpu,
                                                  const ExecutorOptions& options) {
  std::vector<NodeId> substituted;
  for (const NodePlacement& p : plan.nodes) {
    if (p.reason == PlacementReason::kSubstituted && p.precision == Precision::kFp16) {
      substituted.push_back(p.node);
    }
  }
  if (substituted.empty()) return std::vector<Rejection>{};
  HSCHED_ASSIGN_OR_RETURN(const Fp32Values values,
                          fp32_values(graph, values_of(graph, substituted), inputs, cpu, options));
  std::vector<Rejection> outside;
  for (NodeId n : substituted) {
    double largest = 0;  // over every value the node reads or writes
    double tiny = 0;     // the largest magnitude of a nonzero tensor below fp16's normals
    for (const auto* list : {&graph.node(n).inputs, &graph.node(n).outputs}) {
      for (ValueId v : *list) {
        const auto found = values.of.find(v);
        if (found == values.of.end() || found->second->dtype() != DType::kF32) continue;
        double tensor = 0;
        for (float x : found->second->values<float>()) {
          // NaN counts as past the range: fp16 holds no more of it than fp32 computed.
          tensor = std::isnan(x) ? INFINITY : std::max(tensor, double{std::abs(x)});
        }
        largest = std::max(largest, tensor);
        if (tensor > 0 && tensor < kFp16MinNormal) tiny = std::max(tiny, tensor);
      }
    }
    if (largest <= kFp16Max && tiny == 0) continue;
    const NodePlacement& placement = plan.nodes[n];
    std::ostringstream detail;
    if (largest > kFp16Max) {
      detail << "fp16 range: values up to " << largest << " on sample inputs, past fp16's "
             << kFp16Max;
    } else {
      detail << "fp16 range: values at most " << tiny << " on sample inputs, under fp16's "
             << "smallest normal " << kFp16MinNormal;
    }
    detail << " (" << placement.detail << ")";
    outside.push_back(
        {n, placement.device, Precision::kFp16, ReasonCode::kAccuracyBudget, detail.str()});
  }
  return outside;
}

Result<std::vector<Rejection>> accuracy_rejections(const Graph& graph, const Plan& plan,
                                                   const DeviceProfile* cpu,
                                                   PartitionCompiler& compiler,
                                                   const ExecutorOptions& options) {
  const bool substituted_fp16 =
      std::any_of(plan.nodes.begin(), plan.nodes.end(), [](const NodePlacement& p) {
        return p.reason == PlacementReason::kSubstituted && p.precision == Precision::kFp16;
      });
  if (!substituted_fp16 && !plan.policy.accuracy) return std::vector<Rejection>{};
  if (cpu == nullptr) {
    if (!plan.policy.accuracy) return std::vector<Rejection>{};  // nothing to compare with
    return invalid_argument("an accuracy budget needs the host CPU in target " + plan.target.name);
  }
  std::vector<Tensor> inputs = options.accuracy_inputs;
  if (inputs.empty()) {
    for (size_t k = 0; k < graph.inputs().size(); ++k) {
      const Value& value = graph.value(graph.inputs()[k]);
      inputs.push_back(seeded_tensor(value.dtype, value.shape.dims, static_cast<uint32_t>(k + 1)));
    }
  }
  HSCHED_ASSIGN_OR_RETURN(std::vector<Rejection> refused,
                          outside_fp16_range(graph, plan, inputs, *cpu, options));
  if (!refused.empty() || !plan.policy.accuracy) return refused;
  return over_accuracy_budget(graph, plan, *plan.policy.accuracy, inputs, *cpu, compiler, options);
}

}  // namespace hsched::runtime
