#include "hsched/model.h"

#include <algorithm>
#include <optional>
#include <utility>

#include <nlohmann/json.hpp>

#include "graph/demo_model.h"
#include "graph/graph.h"
#include "graph/onnx_import.h"
#include "graph/summary.h"
#include "hsched/report.h"

namespace hsched {
namespace {

std::vector<TensorInfo> describe(const Graph& graph, const std::vector<ValueId>& ids) {
  std::vector<TensorInfo> infos;
  infos.reserve(ids.size());
  for (ValueId id : ids) {
    const Value& value = graph.value(id);
    infos.push_back({value.name, value.dtype, value.shape});
  }
  return infos;
}

Model make_model(Graph graph, std::string name) {
  return Model(std::make_shared<const Graph>(std::move(graph)), std::move(name));
}

}  // namespace

Model::Model(std::shared_ptr<const Graph> graph, std::string name)
    : graph_(std::move(graph)), name_(std::move(name)) {}

std::vector<TensorInfo> Model::inputs() const { return describe(*graph_, graph_->inputs()); }
std::vector<TensorInfo> Model::outputs() const { return describe(*graph_, graph_->outputs()); }
int64_t Model::node_count() const { return static_cast<int64_t>(graph_->nodes().size()); }
std::string Model::node_label(NodeId node) const { return hsched::node_label(*graph_, node); }
const std::string& Model::op_type(NodeId node) const { return graph_->node(node).op_type; }
const std::string& Model::value_name(ValueId value) const { return graph_->value(value).name; }
ModelSummary Model::summary() const { return summarize(*graph_, name_); }

std::string summary_to_json_text(const ModelSummary& summary) {
  nlohmann::json json = summary_to_json(summary);
  json["schema_version"] = kReportSchemaVersion;
  return json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<std::vector<Tensor>> inputs_in_order(const Model& model,
                                            const std::map<std::string, Tensor>& named) {
  const Graph& graph = model.graph();
  std::vector<Tensor> inputs;
  for (ValueId id : graph.inputs()) {
    const std::string& name = graph.value(id).name;
    const auto found = named.find(name);
    if (found == named.end()) return invalid_argument("no tensor for the model's input " + name);
    inputs.push_back(found->second);
  }
  for (const auto& [name, tensor] : named) {
    const std::optional<ValueId> id = graph.find_value(name);
    if (!id || std::find(graph.inputs().begin(), graph.inputs().end(), *id) == graph.inputs().end()) {
      return invalid_argument("'" + name + "' is not an input of the model (it has " +
                              std::to_string(graph.inputs().size()) + ")");
    }
  }
  return inputs;
}

Result<Model> load_model(const std::filesystem::path& path, const ImportOptions& options) {
  HSCHED_ASSIGN_OR_RETURN(Graph graph, import_onnx_file(path, options));
  return make_model(std::move(graph), path.string());
}

Result<Model> demo_model() {
  HSCHED_ASSIGN_OR_RETURN(Graph graph, build_demo_graph());
  return make_model(std::move(graph), kDemoModelName);
}

}  // namespace hsched
