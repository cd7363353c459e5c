#include "cli/info_command.h"

#include <nlohmann/json.hpp>

#include "backends/cpu/program.h"
#include "cli/run_command.h"
#include "graph/demo_model.h"
#include "graph/onnx_import.h"
#include "graph/summary.h"
#include "hsched/schedule.h"
#include "scheduler/report.h"
#include "scheduler/target_select.h"

namespace hsched::cli {
namespace {

std::string render(const Graph& graph, const std::string& model_name, bool json) {
  const ModelSummary summary = summarize(graph, model_name);
  if (json) return summary_to_json(summary).dump(2) + "\n";
  return summary_to_text(summary);
}

// The targets the demo plans for: the devices found here and a laptop we may not have.
constexpr const char* kDemoTargets[] = {kThisMachineTarget, "core-ultra-7-155h"};

struct DemoPlan {
  Plan plan;
  std::string text;  // the text report
};

// The demo model scheduled with the default policy for each demo target.
Result<std::vector<DemoPlan>> plan_demo(const Graph& graph) {
  std::vector<DemoPlan> plans;
  for (const char* name : kDemoTargets) {
    HSCHED_ASSIGN_OR_RETURN(Target target, sched::resolve_target_or_discover(name));
    HSCHED_ASSIGN_OR_RETURN(Plan plan, schedule(graph, target, default_policy()));
    plan.model = kDemoModelName;
    HSCHED_ASSIGN_OR_RETURN(std::string text, format_report(graph, plan, ReportFormat::kText));
    plans.push_back({std::move(plan), std::move(text)});
  }
  return plans;
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

// The demo model's info, the model run on the CPU (the one device hsched runs on so far), then
// its plans for this machine and for a Core Ultra 7 155H laptop.
Result<std::string> run_demo(const InfoArgs& args) {
  HSCHED_ASSIGN_OR_RETURN(Graph graph, build_demo_graph());
  HSCHED_ASSIGN_OR_RETURN(auto program, cpu::CpuProgram::compile(graph, cpu::CpuOptions{}));
  constexpr int kWarmup = 2, kIterations = 20;
  HSCHED_ASSIGN_OR_RETURN(TimedRuns timed,
                          time_runs(*program, seeded_inputs(graph), kWarmup, kIterations));
  HSCHED_ASSIGN_OR_RETURN(std::vector<DemoPlan> plans, plan_demo(graph));
  const ModelSummary summary = summarize(graph, kDemoModelName);
  if (args.json) {
    nlohmann::json report = summary_to_json(summary);
    report["run"] = {{"device", "cpu"},
                     {"hardware", "real"},
                     {"iterations", kIterations},
                     {"latency_ms",
                      {{"median", timed.median_ms}, {"min", timed.min_ms}, {"max", timed.max_ms}}}};
    report["plans"] = nlohmann::json::array();
    for (const DemoPlan& plan : plans) report["plans"].push_back(report_to_json(graph, plan.plan));
    return report.dump(2) + "\n";
  }
  std::string text = summary_to_text(summary);
  text += "run on cpu          median " + std::to_string(timed.median_ms) + " ms over " +
          std::to_string(kIterations) + " runs (seeded random input; real hardware)\n";
  for (const DemoPlan& plan : plans) text += "\n" + plan.text;
  return text;
}

}  // namespace hsched::cli
