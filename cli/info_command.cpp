#include "cli/info_command.h"

#include <nlohmann/json.hpp>

#include "graph/demo_model.h"
#include "graph/onnx_import.h"
#include "graph/summary.h"

namespace hsched::cli {
namespace {

std::string render(const Graph& graph, const std::string& model_name, bool json) {
  const ModelSummary summary = summarize(graph, model_name);
  if (json) return summary_to_json(summary).dump(2) + "\n";
  return summary_to_text(summary);
}

}  // namespace

Result<std::string> run_info(const InfoArgs& args) {
  ImportOptions options;
  for (const std::string& flag : args.input_shapes) {
    HSCHED_RETURN_IF_ERROR(add_input_shape_flag(flag, options));
  }
  HSCHED_ASSIGN_OR_RETURN(Graph graph, import_onnx_file(args.model_path, options));
  return render(graph, args.model_path, args.json);
}

Result<std::string> run_demo(const InfoArgs& args) {
  HSCHED_ASSIGN_OR_RETURN(Graph graph, build_demo_graph());
  return render(graph, kDemoModelName, args.json);
}

}  // namespace hsched::cli
