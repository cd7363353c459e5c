#include "cli/info_command.h"

#include <cstdio>
#include <map>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/run_command.h"
#include "hsched/config.h"
#include "hsched/executor.h"
#include "hsched/model.h"
#include "hsched/report.h"
#include "hsched/schedule.h"

namespace hsched::cli {
namespace {

std::string render(const Model& model, bool json) {
  const ModelSummary summary = model.summary();
  if (json) return summary_to_json_text(summary) + "\n";
  return summary_to_text(summary);
}

// The targets the demo plans for: the devices found here and a laptop we may not have.
constexpr const char* kDemoTargets[] = {kThisMachineTarget, "core-ultra-7-155h"};

struct DemoPlan {
  Plan plan;
  std::string text;  // the text report
};

// A simulated device says so in its name (hsched's simulated NPU driver).
bool is_simulated(const DeviceProfile& device) {
  return device.name.find("simulated") != std::string::npos;
}

// The demo model scheduled with the default policy for each demo target. This machine's plan
// uses its real devices only: a simulated NPU gets a run of its own (run_demo).
Result<std::vector<DemoPlan>> plan_demo(const Model& model) {
  std::vector<DemoPlan> plans;
  for (const char* name : kDemoTargets) {
    HSCHED_ASSIGN_OR_RETURN(Target target, resolve_target_or_discover(name));
    std::erase_if(target.devices, [](const DeviceProfile& device) {
      return device.present && is_simulated(device);
    });
    HSCHED_ASSIGN_OR_RETURN(Plan plan, schedule(model, target, default_policy()));
    plan.model = model.name();
    HSCHED_ASSIGN_OR_RETURN(std::string text, format_report(model, plan, ReportFormat::kText));
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
  HSCHED_ASSIGN_OR_RETURN(Model model, load_model(args.model_path, options));
  return render(model, args.json);
}

namespace {

// One run of the demo: a plan for this machine, compiled and timed.
struct DemoRun {
  std::string label;  // what was run: "default policy", "--devices opencl"
  Plan plan;
  TimedRuns timed;
  double max_abs_diff = 0;  // against the first run's outputs
};

// Whether some partition of `plan` ran on a simulated device.
bool uses_simulated_device(const Plan& plan) {
  for (const Partition& partition : plan.partitions) {
    const DeviceProfile* device = plan.target.find(partition.device);
    if (device != nullptr && is_simulated(*device)) return true;
  }
  return false;
}

Result<DemoRun> run_demo_plan(const Model& model, const std::string& label, const Plan& plan,
                              const std::vector<Tensor>& inputs) {
  constexpr int kWarmup = 2, kIterations = 20;
  HSCHED_ASSIGN_OR_RETURN(auto exe, compile(model, plan, ExecutorOptions{}));
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
//
// With an NPU here the model runs once more with the npu-offload policy. Without one, the demo
// offers hsched's simulated NPU for that run (a Level Zero driver of our own, built with hsched:
// HSCHED_ZE_SIM_PATH, loaded before anything asks the Level Zero loader for devices); every line
// that shows it says it is simulated, and the other runs and plans use the real devices only.
Result<std::string> run_demo(const InfoArgs& args) {
  const bool simulated_npu = use_simulated_npu_if_none(HSCHED_ZE_SIM_PATH);
  HSCHED_ASSIGN_OR_RETURN(Model model, demo_model());
  HSCHED_ASSIGN_OR_RETURN(std::vector<DemoPlan> plans, plan_demo(model));
  const std::vector<Tensor> inputs = seeded_inputs(model);
  std::vector<DemoRun> runs;
  HSCHED_ASSIGN_OR_RETURN(DemoRun first,
                          run_demo_plan(model, "default policy", plans.front().plan, inputs));
  runs.push_back(std::move(first));
  const Target& here = plans.front().plan.target;
  if (!match_devices(here, "opencl").empty()) {
    HSCHED_ASSIGN_OR_RETURN(Target target, restrict_devices(here, "opencl"));
    HSCHED_ASSIGN_OR_RETURN(
        Plan plan, schedule(model, target, devices_policy("opencl", Precision::kFp32)));
    HSCHED_ASSIGN_OR_RETURN(DemoRun opencl, run_demo_plan(model, "--devices opencl", plan, inputs));
    opencl.max_abs_diff = max_abs_diff(opencl.timed.outputs, runs.front().timed.outputs);
    runs.push_back(std::move(opencl));
  }
  // This machine's NPU, simulated or not, taking every node it can (npu-offload).
  HSCHED_ASSIGN_OR_RETURN(Target with_npu, resolve_target_or_discover(kThisMachineTarget));
  if (!match_devices(with_npu, "npu").empty()) {
    HSCHED_ASSIGN_OR_RETURN(Policy policy, resolve_policy("npu-offload"));
    HSCHED_ASSIGN_OR_RETURN(Plan plan, schedule(model, with_npu, policy));
    plan.model = model.name();
    HSCHED_ASSIGN_OR_RETURN(
        DemoRun npu,
        run_demo_plan(model,
                      simulated_npu ? "npu-offload policy, simulated NPU" : "npu-offload policy",
                      plan, inputs));
    npu.max_abs_diff = max_abs_diff(npu.timed.outputs, runs.front().timed.outputs);
    runs.push_back(std::move(npu));
  }
  const ModelSummary summary = model.summary();
  if (args.json) {
    nlohmann::json report = nlohmann::json::parse(summary_to_json_text(summary));
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
                              {"predicted_ms", partition.run_ms},
                              {"measured_ms", timings[p].measured_ms}});
      }
      report["runs"].push_back(
          {{"plan", run.label},
           {"placement", placement_text(run.plan)},
           // Every device of a this-machine plan is present here; a simulated one says so.
           {"hardware", uses_simulated_device(run.plan) ? "simulated" : "real"},
           {"predicted_ms", run.plan.predicted_run_ms},
           {"measured_ms", median_request_ms(run.timed.records)},
           {"partitions", std::move(partitions)},
           {"latency_ms",
            {{"median", run.timed.median_ms},
             {"min", run.timed.min_ms},
             {"max", run.timed.max_ms}}},
           {"max_abs_diff_vs_first_run", run.max_abs_diff}});
    }
    report["plans"] = nlohmann::json::array();
    for (const DemoPlan& plan : plans) {
      HSCHED_ASSIGN_OR_RETURN(std::string json, format_report(model, plan.plan, ReportFormat::kJson));
      report["plans"].push_back(nlohmann::json::parse(json));
    }
    return report.dump(2) + "\n";
  }
  std::string text = summary_to_text(summary);
  for (const DemoRun& run : runs) {
    char line[160];
    std::snprintf(line, sizeof(line), "median %.3f ms (predicted %.3f ms) over 20 runs",
                  run.timed.median_ms, run.plan.predicted_run_ms);
    text += "run (" + run.label + ")  " + line + "; " + placement_text(run.plan);
    if (&run != &runs.front()) {
      std::snprintf(line, sizeof(line), "%.3g", run.max_abs_diff);
      text += std::string("; max |diff| vs the first run ") + line;
    }
    text += "\n" + partition_table(run.plan, run.timed.records);
  }
  bool any_simulated = false;
  for (const DemoRun& run : runs) any_simulated |= uses_simulated_device(run.plan);
  text += any_simulated
              ? "(seeded random input; the NPU above is hsched's simulated NPU driver (no NPU "
                "here): its times are the CPU's, its numerics an NPU's fp16; every other device "
                "is real)\n"
              : "(seeded random input; every run above ran on this machine's real devices)\n";
  for (const DemoPlan& plan : plans) text += "\n" + plan.text;
  return text;
}

}  // namespace hsched::cli
