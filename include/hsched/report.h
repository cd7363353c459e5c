// The fallback report: a Plan shown as text, JSON, Graphviz DOT or a self-contained HTML page.
// Every format shows the same facts (built once in report_content.h), read from the Plan alone:
// nothing is reconstructed from logs. Output is deterministic for a given model and plan: fixed
// number formats, no timestamps, no paths but those the plan holds. Units: ms and bytes.
#pragma once

#include <optional>
#include <string>

#include "hsched/model.h"
#include "hsched/plan.h"
#include "hsched/status.h"

namespace hsched {

enum class ReportFormat { kText, kJson, kDot, kHtml };

// "text", "json", "dot", "html" (the --format flag); nullopt for anything else.
std::optional<ReportFormat> parse_report_format(const std::string& name);
const char* report_format_name(ReportFormat format);

// The `schema_version` of every JSON hsched prints (plan and report, `run`, `info`, `demo`,
// `devices`): bumped when a field changes meaning or goes away (docs/report-schema.md); adding a
// field keeps the version.
inline constexpr int kReportSchemaVersion = 2;

// The plan alone, as `hsched plan --json` prints it (docs/report-schema.md): nodes, partitions,
// transfers, rejections, fallbacks, predictions, target and policy; indented JSON text.
std::string plan_json(const Model& model, const Plan& plan);

// The report in one format. InvalidArgument when the plan does not match the model (a placement
// per node, in node order). The HTML page embeds an SVG of the graph when Graphviz `dot` is on
// PATH and otherwise the DOT source; it never fails because of Graphviz.
Result<std::string> format_report(const Model& model, const Plan& plan, ReportFormat format);
// The HTML report with the measured spans of a run beside the predicted ones on its timeline:
// `trace` is the text of a `hsched run --trace` file (chrome_trace) of this plan; its last
// request is drawn. InvalidArgument when it is not such a trace or the format is not HTML.
Result<std::string> format_report(const Model& model, const Plan& plan, ReportFormat format,
                                  const std::string& trace);

}  // namespace hsched
