// The report on hsched's graph IR, for hsched's own code (the public calls:
// include/hsched/report.h), and its JSON as nlohmann::json.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "graph/graph.h"
#include "hsched/plan.h"
#include "hsched/report.h"
#include "hsched/status.h"

namespace hsched {

// The plan alone, as `hsched plan --json` prints it: nodes, partitions, transfers, rejections,
// fallbacks, predictions, target and policy. `plan` must have been made for `graph`; ids it
// holds that the graph lacks are shown as "#id" rather than failing. Names come from the model
// and need not be valid UTF-8: dump with `json::error_handler_t::replace`.
nlohmann::json plan_to_json(const Graph& graph, const Plan& plan);

// plan_to_json plus the report's summary (counts per device, precision and reason, per-device
// ms, best single device), so the report and the plan never diverge.
nlohmann::json report_to_json(const Graph& graph, const Plan& plan);

// As the public format_report(Model, ...).
Result<std::string> format_report(const Graph& graph, const Plan& plan, ReportFormat format,
                                  const std::string& trace = "");

}  // namespace hsched
