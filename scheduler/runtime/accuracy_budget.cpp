#include "scheduler/runtime/accuracy_budget.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <string>

#include "graph/subgraph.h"

namespace hsched::runtime {
namespace {

// The error of `got` against `want` (float outputs) under `metric`: max_rel, the largest
// |got - want| over the largest |want| (over the largest |got - want| when `want` is all zero);
// cosine, the similarity of the two as vectors (1 when both are zero).
double error_of(const Tensor& got, const Tensor& want, AccuracyMetric metric) {
  const auto g = got.values<float>();
  const auto w = want.values<float>();
  double max_diff = 0, max_want = 0, dot = 0, gg = 0, ww = 0;
  for (size_t i = 0; i < w.size(); ++i) {
    const double a = g[i], b = w[i];
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

// The fp32 value of every input and output of `nodes`: graph inputs as given, the rest as
// outputs of a copy of the graph run on the CPU (`cpu`) with `inputs`.
struct Fp32Values {
  std::vector<Tensor> computed;
  std::map<ValueId, const Tensor*> of;
};

Result<Fp32Values> fp32_values(const Graph& graph, const std::vector<NodeId>& nodes,
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
  const auto keep = [&](ValueId v) {
    if (v == kNoValue || graph.value(v).is_constant() || values.of.count(v) != 0) return;
    if (output_of.emplace(v, reference.outputs().size()).second) reference.add_output(v);
  };
  for (NodeId n : nodes) {
    for (ValueId v : graph.node(n).inputs) keep(v);
    for (ValueId v : graph.node(n).outputs) keep(v);
  }
  HSCHED_ASSIGN_OR_RETURN(std::shared_ptr<Program> whole,
                          compile_cpu_program(reference, cpu, options));
  HSCHED_ASSIGN_OR_RETURN(values.computed, whole->run(inputs, nullptr));
  for (const auto& [value, k] : output_of) values.of.emplace(value, &values.computed[k]);
  return values;
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
    if (p.precision != Precision::kFp32 && budget.limits.count(p.precision) != 0) {
      budgeted.push_back(p.node);
    }
  }
  if (budgeted.empty()) return std::vector<Rejection>{};

  HSCHED_ASSIGN_OR_RETURN(const Fp32Values values,
                          fp32_values(graph, budgeted, inputs, cpu, options));
  const std::map<ValueId, const Tensor*>& fp32 = values.of;

  std::vector<Rejection> over;
  for (NodeId n : budgeted) {
    const NodePlacement& placement = plan.nodes[n];
    const Subgraph part = extract_subgraph(graph, {n});
    Partition alone;
    alone.id = -1;
    alone.device = placement.device;
    alone.nodes = {n};
    auto program = compiler.compile(plan, alone, part.graph);
    // A node its device compiles only beside others is measured with them, in its partition
    // (the verification's reach); alone it is not judged.
    if (!program.is_ok()) continue;
    std::vector<Tensor> part_inputs;
    for (ValueId v : part.inputs) part_inputs.push_back(*fp32.at(v));
    auto got = (*program)->run(part_inputs, nullptr);
    if (!got.is_ok()) continue;
    const double limit = budget.limits.at(placement.precision);
    const bool cosine = budget.metric == AccuracyMetric::kCosine;
    double worst = cosine ? 1.0 : 0.0;
    for (size_t k = 0; k < part.outputs.size(); ++k) {
      if (graph.value(part.outputs[k]).dtype != DType::kF32) continue;
      const double error = error_of((*got)[k], *fp32.at(part.outputs[k]), budget.metric);
      worst = cosine ? std::min(worst, error) : std::max(worst, error);
    }
    if (cosine ? worst >= limit : worst <= limit) continue;
    std::ostringstream detail;
    detail << accuracy_metric_name(budget.metric) << " " << worst << (cosine ? " under" : " over")
           << " the " << precision_name(placement.precision) << " budget " << limit
           << " on sample inputs";
    over.push_back({n, placement.device, placement.precision, ReasonCode::kAccuracyBudget,
                    detail.str()});
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
                          fp32_values(graph, substituted, inputs, cpu, options));
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
