#include "cli/plan_command.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "cli/text_table.h"
#include "hsched/atomic_file.h"
#include "hsched/config.h"
#include "hsched/report.h"
#include "hsched/schedule.h"

namespace hsched::cli {
namespace {

namespace fs = std::filesystem;

std::string plan_text(const Model& model, const Plan& plan) {
  std::ostringstream head;
  head << std::fixed << std::setprecision(3) << "plan for " << model.name() << ": target "
       << plan.target.name << ", policy " << plan.policy.name
       << (plan.policy.split_every > 0
               ? " split every " + std::to_string(plan.policy.split_every)
               : std::string())
       << "; predicted " << plan.predicted_ms
       << " ms; nodes " << plan.nodes.size() << ", partitions " << plan.partitions.size()
       << ", transfers " << plan.transfers.size() << "\n";
  std::vector<std::vector<std::string>> rows = {
      {"node", "op", "device", "precision", "partition", "reason"}};
  for (const NodePlacement& p : plan.nodes) {
    std::string reason = placement_reason_name(p.reason);
    if (!p.detail.empty()) reason += " (" + p.detail + ")";
    rows.push_back({model.node_label(p.node), model.op_type(p.node), p.device,
                    precision_name(p.precision), std::to_string(p.partition), reason});
  }
  return head.str() + format_columns(rows);
}

// --split-every K: a whole number in [1, 1000000], nothing else.
Result<int> parse_split_every(const std::string& text) {
  constexpr int64_t kMax = 1'000'000;
  int64_t value = 0;
  bool whole = !text.empty() && text.size() <= 7;
  for (char c : text) {
    whole = whole && c >= '0' && c <= '9';
    if (whole) value = value * 10 + (c - '0');
  }
  if (!whole || value < 1 || value > kMax) {
    return invalid_argument("--split-every: '" + text + "' is not a whole number in [1, 1000000]");
  }
  return static_cast<int>(value);
}

}  // namespace

Result<PlanSource> resolve_plan_source(const PlanSourceArgs& args) {
  PlanSource source;
  if (!args.config.empty()) {
    HSCHED_ASSIGN_OR_RETURN(Deployment deployment, load_deployment_or_discover(args.config));
    source.target = std::move(deployment.target);
    source.policy = std::move(deployment.policy);
    source.cache_dir = deployment.cache_dir;
    source.compile_timeout_ms = static_cast<int64_t>(deployment.compile_timeout_ms);
  } else {
    const std::string name = args.target.empty() ? std::string(kThisMachineTarget) : args.target;
    if (name == kThisMachineTarget && !args.devices.empty()) {
      source.target = discover_target_for(args.devices);  // `--devices cpu` loads no driver
    } else {
      auto target = resolve_target_or_discover(name);
      if (!target.is_ok()) return target.status().with_context("--target");
      source.target = std::move(target).value();
    }
    if (args.policy.empty()) {
      source.policy = default_policy();
    } else {
      auto policy = resolve_policy(args.policy);
      if (!policy.is_ok()) return policy.status().with_context("--policy");
      source.policy = std::move(policy).value();
    }
  }
  const bool policy_named = !args.config.empty() || !args.policy.empty();
  if (!args.precision.empty() && (args.devices.empty() || policy_named)) {
    return invalid_argument("--precision applies to --devices without --policy or --config");
  }
  if (!args.devices.empty()) {
    HSCHED_ASSIGN_OR_RETURN(source.target, restrict_devices(source.target, args.devices));
    if (!policy_named) {
      const std::string precision = args.precision.empty() ? "fp32" : args.precision;
      const std::optional<Precision> parsed = parse_precision(precision);
      if (!parsed) {
        return invalid_argument("--precision: '" + precision + "' is not fp32, fp16, bf16 or int8");
      }
      source.policy = devices_policy(args.devices, *parsed);
    }
  }
  if (args.split_every) {
    HSCHED_ASSIGN_OR_RETURN(source.policy.split_every, parse_split_every(*args.split_every));
  }
  return source;
}

Result<PlannedModel> plan_model(const PlanArgs& args) {
  // Flags and configs first: a bad config fails fast, before a large model is read.
  HSCHED_ASSIGN_OR_RETURN(PlanSource source, resolve_plan_source(args.source));
  ImportOptions options;
  for (const std::string& flag : args.input_shapes) {
    HSCHED_RETURN_IF_ERROR(add_input_shape_flag(flag, options));
  }
  HSCHED_ASSIGN_OR_RETURN(Model model, load_model(args.model_path, options));
  auto plan = schedule(model, source.target, source.policy);
  if (!plan.is_ok()) return plan.status().with_context(args.model_path);
  plan->model = args.model_path;
  return PlannedModel{std::move(model), std::move(plan).value(), source.cache_dir,
                      source.compile_timeout_ms};
}

namespace {

constexpr std::uintmax_t kMaxTraceBytes = std::uintmax_t{512} << 20;

// A `hsched run --trace` file's text (at most 512 MiB).
Result<std::string> read_trace(const std::string& path) {
  std::error_code error;
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  if (error) return invalid_argument("--trace: " + path + ": " + error.message());
  if (size > kMaxTraceBytes) return invalid_argument("--trace: " + path + " is over 512 MiB");
  std::ifstream in(path, std::ios::binary);
  std::string text(static_cast<size_t>(size), '\0');
  if (!in.read(text.data(), static_cast<std::streamsize>(size))) {
    return invalid_argument("--trace: cannot read " + path);
  }
  return text;
}

// `text` on standard output, or written whole to -o FILE (then nothing is printed).
Result<std::string> to_output(const PlanArgs& args, std::string text) {
  if (args.output.empty()) return text;
  HSCHED_RETURN_IF_ERROR(write_file_atomically(args.output, text).with_context("-o"));
  return std::string();
}

}  // namespace

Result<std::string> run_plan(const PlanArgs& args) {
  HSCHED_ASSIGN_OR_RETURN(PlannedModel planned, plan_model(args));
  return to_output(args, args.json ? plan_json(planned.model, planned.plan) + "\n"
                                   : plan_text(planned.model, planned.plan));
}

Result<std::string> run_report(const PlanArgs& args) {
  const std::optional<ReportFormat> format =
      parse_report_format(args.json ? std::string("json") : args.format);
  if (!format) {
    return invalid_argument("--format: unknown format '" + args.format +
                            "' (text, json, dot, html)");
  }
  HSCHED_ASSIGN_OR_RETURN(PlannedModel planned, plan_model(args));
  std::string trace;
  if (!args.trace.empty()) {
    HSCHED_ASSIGN_OR_RETURN(trace, read_trace(args.trace));
  }
  HSCHED_ASSIGN_OR_RETURN(std::string report,
                          args.trace.empty()
                              ? format_report(planned.model, planned.plan, *format)
                              : format_report(planned.model, planned.plan, *format, trace));
  return to_output(args, std::move(report));
}

}  // namespace hsched::cli
