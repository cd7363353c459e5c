// `hsched plan` and `hsched report`: import a model, choose a target and a policy (--config, or
// --target/--policy, then --devices), schedule, and print the plan or the fallback report.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hsched/device.h"
#include "hsched/model.h"
#include "hsched/plan.h"
#include "hsched/policy.h"
#include "hsched/status.h"

namespace hsched::cli {

// What to plan for, as given on the command line. --config excludes --target and --policy.
struct PlanSourceArgs {
  std::string config;   // deployment file (configs/deploy/*.yaml)
  std::string target;   // name or file; empty: this-machine
  std::string policy;   // name or file; empty: the built-in default policy
  std::string devices;  // comma-separated selectors (kind, API or id); empty: every device
  std::string precision;  // with --devices and no policy: the listed devices' precision
  std::optional<std::string> split_every;  // --split-every K as given; unset: the policy's
};

struct PlanSource {
  Target target;
  Policy policy;
  std::string cache_dir;  // the deploy file's cache_dir; "" otherwise
  int64_t compile_timeout_ms = 30000;  // the deploy file's compile_timeout_ms, else the default
};

// The target (restricted to --devices) and policy the flags name; with --devices and neither
// --policy nor --config, the policy is devices_policy (the listed devices first). InvalidArgument
// naming the flag, file and key at fault.
Result<PlanSource> resolve_plan_source(const PlanSourceArgs& args);

struct PlanArgs {
  std::string model_path;
  std::vector<std::string> input_shapes;  // "NAME=d1,d2,..." as given to --input-shape
  PlanSourceArgs source;
  bool json = false;            // the plan as JSON; report: the same as --format json
  std::string format = "text";  // report: text, json, dot, html
  std::string output;           // write here (atomically) instead of stdout
  std::string trace;            // report, html: a `run --trace` file drawn on the timeline
};

// A model with its plan, and the deploy settings the run uses.
struct PlannedModel {
  Model model;
  Plan plan;
  std::string cache_dir;
  int64_t compile_timeout_ms = 30000;
};

// Imports args.model_path and schedules it for the source the flags name.
Result<PlannedModel> plan_model(const PlanArgs& args);

// `hsched plan`: one line per node (device, precision, partition, reason), or the plan's JSON.
Result<std::string> run_plan(const PlanArgs& args);

// `hsched report`: the fallback report. With args.output the report goes to that file (written
// whole or not at all) and nothing is returned for stdout.
Result<std::string> run_report(const PlanArgs& args);

}  // namespace hsched::cli
