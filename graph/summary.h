// `hsched info`'s model summary (ModelSummary, include/hsched/model.h) computed from a graph.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "graph/graph.h"
#include "hsched/model.h"

namespace hsched {

ModelSummary summarize(const Graph& graph, const std::string& model_name);
nlohmann::json summary_to_json(const ModelSummary& summary);

}  // namespace hsched
