// The report's entry points: format names and the dispatch to each format's renderer.
#include "scheduler/report/report.h"

#include <array>
#include <optional>
#include <utility>

#include "scheduler/report/report_content.h"
#include "scheduler/report/report_timeline.h"

namespace hsched {
namespace {

constexpr std::array<std::pair<ReportFormat, const char*>, 4> kFormatNames{{
    {ReportFormat::kText, "text"},
    {ReportFormat::kJson, "json"},
    {ReportFormat::kDot, "dot"},
    {ReportFormat::kHtml, "html"},
}};

constexpr int kJsonIndent = 2;

}  // namespace

std::optional<ReportFormat> parse_report_format(const std::string& name) {
  for (const auto& [format, format_name] : kFormatNames) {
    if (name == format_name) return format;
  }
  return std::nullopt;
}

const char* report_format_name(ReportFormat format) {
  for (const auto& [known, name] : kFormatNames) {
    if (known == format) return name;
  }
  return "unknown";
}

Result<std::string> format_report(const Graph& graph, const Plan& plan, ReportFormat format,
                                  const std::string& trace) {
  HSCHED_RETURN_IF_ERROR(report::check_plan(graph, plan));
  if (!trace.empty() && format != ReportFormat::kHtml) {
    return invalid_argument("a run's trace is drawn on the HTML report's timeline only");
  }
  switch (format) {
    case ReportFormat::kText:
      return report::report_to_text(graph, plan);
    case ReportFormat::kJson:
      // Names from a model file need not be valid UTF-8: replace bad bytes rather than throw.
      return report_to_json(graph, plan)
                 .dump(kJsonIndent, ' ', false, nlohmann::json::error_handler_t::replace) +
             "\n";
    case ReportFormat::kDot:
      return report::report_to_dot(graph, plan);
    case ReportFormat::kHtml: {
      std::optional<report::MeasuredRun> measured;
      if (!trace.empty()) {
        HSCHED_ASSIGN_OR_RETURN(report::MeasuredRun run, report::measured_run(trace));
        measured = std::move(run);
      }
      return report::report_to_html(graph, plan, measured ? &*measured : nullptr);
    }
  }
  return invalid_argument("report: unknown format " + std::to_string(static_cast<int>(format)));
}

std::string plan_json(const Model& model, const Plan& plan) {
  return plan_to_json(model.graph(), plan)
      .dump(kJsonIndent, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<std::string> format_report(const Model& model, const Plan& plan, ReportFormat format) {
  return format_report(model.graph(), plan, format);
}

Result<std::string> format_report(const Model& model, const Plan& plan, ReportFormat format,
                                  const std::string& trace) {
  return format_report(model.graph(), plan, format, trace);
}

}  // namespace hsched
