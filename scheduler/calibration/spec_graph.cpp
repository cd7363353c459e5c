// A benchmark's graph (calibrate_specs.h): built, imported and, for a QDQ benchmark, quantized.
#include <memory>
#include <random>
#include <utility>

#include "graph/onnx_import.h"
#include "scheduler/calibration/calibrate_specs.h"
#include "scheduler/planner/cost_model.h"
#include "scheduler/quantize/quantize_proto.h"

namespace hsched::calibration {
namespace {

constexpr int64_t kOpset = 17;

}  // namespace

std::vector<Tensor> random_inputs(const Graph& graph) {
  std::vector<Tensor> inputs;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (ValueId id : graph.inputs()) {
    const Value& value = graph.value(id);
    Tensor tensor(value.dtype, value.shape.dims);
    for (float& v : tensor.values<float>()) v = uniform(rng);
    inputs.push_back(std::move(tensor));
  }
  return inputs;
}

Result<Graph> spec_graph(const Spec& spec, int nodes, bool as_run) {
  OnnxBuilder builder(kOpset, spec.name);
  spec.build(builder, nodes);
  if (!spec.quantized || !as_run) return import_onnx_model(builder.model(), {}, spec.name, "");
  onnx::ModelProto built = builder.model();  // the import consumes what it reads
  HSCHED_ASSIGN_OR_RETURN(Graph graph, import_onnx_model(built, {}, spec.name, ""));
  QuantizeOptions quantize;
  quantize.calibration = {random_inputs(graph)};
  quantize.cpu_threads = 1;
  const Model model(std::make_shared<const Graph>(std::move(graph)), spec.name);
  HSCHED_RETURN_IF_ERROR(
      quantize_proto(builder.model(), model, {}, quantize, spec.name, ".").status());
  return import_onnx_model(builder.model(), {}, spec.name, "");
}

Result<double> point_work(const Spec& spec, int nodes, const DeviceProfile& device) {
  HSCHED_ASSIGN_OR_RETURN(Graph graph, spec_graph(spec, nodes, false));
  return planner::node_work(graph, spec.work_node, spec.precision, device, spec.cost_class).work;
}

}  // namespace hsched::calibration
