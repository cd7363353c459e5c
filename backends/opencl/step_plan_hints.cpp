// kernel_hints and nodes_without_kernels (program.h): what ClProgram's step plan (step_plan.h)
// means for the cost model, without compiling anything.
#include <algorithm>
#include <vector>

#include "backends/opencl/program.h"
#include "backends/opencl/step_plan.h"

namespace hsched::opencl {

KernelHints kernel_hints(const Graph& graph) {
  KernelHints hints{std::vector<bool>(graph.nodes().size(), false),
                    std::vector<double>(graph.nodes().size(), 1.0)};
  auto planned = detail::plan_kernels(graph);
  if (!planned.is_ok()) return hints;
  const auto copies = [&](const std::vector<ValueId>& inputs) {
    return std::count_if(inputs.begin(), inputs.end(), [&](ValueId v) {
      if (v == kNoValue) return false;
      const hsched::Shape& shape = graph.value(v).shape;
      return !shape.is_static() || shape.elements() > 0;
    });
  };
  for (const detail::PlannedStep& step : *planned) {
    if (step.view || step.once) hints.without[static_cast<size_t>(step.node)] = true;
    for (NodeId n : step.absorbed) hints.without[static_cast<size_t>(n)] = true;
    if (step.once) {
      for (NodeId n : step.grouped) hints.without[static_cast<size_t>(n)] = true;
    }
    if (step.op.op_type != "Concat" || !step.op.domain.empty()) continue;
    const auto all = copies(graph.node(step.node).inputs);
    if (all > 0) {
      hints.copy_share[static_cast<size_t>(step.node)] =
          static_cast<double>(copies(step.op.inputs)) / static_cast<double>(all);
    }
  }
  return hints;
}

std::vector<bool> nodes_without_kernels(const Graph& graph) { return kernel_hints(graph).without; }

}  // namespace hsched::opencl
