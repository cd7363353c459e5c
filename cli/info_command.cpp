#include "cli/info_command.h"

#include <cstdio>
#include <map>

#include <nlohmann/json.hpp>

#include "cli/run_command.h"
#include "graph/demo_model.h"
#include "graph/onnx_import.h"
#include "graph/summary.h"
#include "hsched/executor.h"
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

namespace {

// One run of the demo: a plan for this machine, compiled and timed.
struct DemoRun {
  std::string label;  // what was run: "default policy", "--devices opencl"
  Plan plan;
  TimedRuns timed;
  double max_abs_diff = 0;  // against the first run's outputs
};

Result<DemoRun> run_demo_plan(const Graph& graph, const std::string& label, const Plan& plan,
                              const std::vector<Tensor>& inputs) {
  constexpr int kWarmup = 2, kIterations = 20;
  HSCHED_ASSIGN_OR_RETURN(auto exe, compile(graph, plan, ExecutorOptions{}));
  HSCHED_ASSIGN_OR_RETURN(TimedRuns timed, time_runs(*exe, inputs, kWarmup, kIterations));
  return DemoRun{label, exe->plan(), std::move(timed), 0};
}

double max_abs_diff(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  double worst = 0;
  for (size_t k = 0; k < a.size() && k < b.size(); ++k) {
    const auto x = a[k].values<float>();
    const auto y = b[k].values<float>();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      worst = std::max(worst, static_cast<double>(std::abs(x[i] - y[i])));
    }
  }
  return worst;
}

// Where a plan runs, per device: "cpu0 (host, real) 12 nodes".
std::string placement_text(const Plan& plan) {
  std::map<std::string, int> nodes;
  for (const NodePlacement& placement : plan.nodes) ++nodes[placement.device];
  std::string text;
  for (const auto& [id, count] : nodes) {
    const DeviceProfile* device = plan.target.find(id);
    text += (text.empty() ? "" : ", ") + id + " " + std::to_string(count) + " nodes";
    if (device != nullptr) {
      text += std::string(" (") + device_kind_name(device->kind) + "/" +
              device_api_name(device->api) + ", " + device->name + ")";
    }
  }
  return text;
}

}  // namespace

// The demo model's info; the model scheduled for this machine with the default policy and run
// there, and, when this machine has OpenCL devices, run again with them taking every node they
// can (outputs compared with the first run), each run with measured next to predicted per
// partition and per request; then its plans for this machine and for a Core Ultra
// 7 155H laptop (planned from its profile: not run).
Result<std::string> run_demo(const InfoArgs& args) {
  HSCHED_ASSIGN_OR_RETURN(Graph graph, build_demo_graph());
  HSCHED_ASSIGN_OR_RETURN(std::vector<DemoPlan> plans, plan_demo(graph));
  const std::vector<Tensor> inputs = seeded_inputs(graph);
  std::vector<DemoRun> runs;
  HSCHED_ASSIGN_OR_RETURN(DemoRun first,
                          run_demo_plan(graph, "default policy", plans.front().plan, inputs));
  runs.push_back(std::move(first));
  const Target& here = plans.front().plan.target;
  if (!match_devices(here, "opencl").empty()) {
    HSCHED_ASSIGN_OR_RETURN(Target target, sched::restrict_devices(here, "opencl"));
    HSCHED_ASSIGN_OR_RETURN(
        Plan plan, schedule(graph, target, sched::devices_policy("opencl", Precision::kFp32)));
    HSCHED_ASSIGN_OR_RETURN(DemoRun opencl, run_demo_plan(graph, "--devices opencl", plan, inputs));
    opencl.max_abs_diff = max_abs_diff(opencl.timed.outputs, runs.front().timed.outputs);
    runs.push_back(std::move(opencl));
  }
  const ModelSummary summary = summarize(graph, kDemoModelName);
  if (args.json) {
    nlohmann::json report = summary_to_json(summary);
    report["runs"] = nlohmann::json::array();
    for (const DemoRun& run : runs) {
      const std::vector<PartitionTiming> timings =
          partition_timings(run.plan.partitions.size(), run.timed.records);
      nlohmann::json partitions = nlohmann::json::array();
      for (size_t p = 0; p < run.plan.partitions.size(); ++p) {
        const Partition& partition = run.plan.partitions[p];
        partitions.push_back({{"id", partition.id},
                              {"device", partition.device},
                              {"nodes", partition.nodes.size()},
                              {"predicted_ms", partition.compute_ms},
                              {"measured_ms", timings[p].measured_ms}});
      }
      report["runs"].push_back(
          {{"plan", run.label},
           {"placement", placement_text(run.plan)},
           {"hardware", "real"},  // every device of a this-machine plan is present here
           {"predicted_ms", run.plan.predicted_ms},
           {"measured_ms", median_request_ms(run.timed.records)},
           {"partitions", std::move(partitions)},
           {"latency_ms",
            {{"median", run.timed.median_ms}, {"min", run.timed.min_ms}, {"max", run.timed.max_ms}}},
           {"max_abs_diff_vs_first_run", run.max_abs_diff}});
    }
    report["plans"] = nlohmann::json::array();
    for (const DemoPlan& plan : plans) report["plans"].push_back(report_to_json(graph, plan.plan));
    return report.dump(2) + "\n";
  }
  std::string text = summary_to_text(summary);
  for (const DemoRun& run : runs) {
    char line[160];
    std::snprintf(line, sizeof(line), "median %.3f ms (predicted %.3f ms) over 20 runs",
                  run.timed.median_ms, run.plan.predicted_ms);
    text += "run (" + run.label + ")  " + line + "; " + placement_text(run.plan);
    if (&run != &runs.front()) {
      std::snprintf(line, sizeof(line), "%.3g", run.max_abs_diff);
      text += std::string("; max |diff| vs the first run ") + line;
    }
    text += "\n" + partition_table(run.plan, run.timed.records);
  }
  text += "(seeded random input; every run above ran on this machine's real devices)\n";
  for (const DemoPlan& plan : plans) text += "\n" + plan.text;
  return text;
}

}  // namespace hsched::cli
