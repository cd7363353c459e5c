#include "cli/run_command.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iomanip>
#include <map>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "hsched/executor.h"
#include "graph/tensor_proto.h"

namespace hsched::cli {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxIterations = 1000000;
constexpr int64_t kMaxCompileTimeoutMs = int64_t{24} * 3600 * 1000;  // a day

// The `fallback: warn` summary: how many nodes fell back and why, on one line.
void warn_fallbacks(const Plan& plan, std::ostream& warnings) {
  if (plan.policy.fallback != FallbackMode::kWarn || plan.fallbacks.empty()) return;
  std::map<std::string, int> by_reason;
  for (const Fallback& fallback : plan.fallbacks) ++by_reason[reason_code_name(fallback.reason)];
  warnings << "hsched: warning: policy " << plan.policy.name << ": " << plan.fallbacks.size()
           << " nodes fell back from their first choice (";
  bool first = true;
  for (const auto& [reason, count] : by_reason) {
    warnings << (first ? "" : ", ") << reason << " " << count;
    first = false;
  }
  warnings << "); `hsched report` lists them\n";
  warnings.flush();
}

// Deterministic inputs: floats in [-1, 1); integers in {0, 1} (valid token ids and mask values
// for any embedding); bools random.
Tensor seeded_input(const Value& value, uint32_t seed) {
  Tensor t(value.dtype, value.shape.dims);
  std::mt19937 rng(seed);
  switch (value.dtype) {
    case DType::kF32: {
      std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
      for (float& v : t.values<float>()) v = dist(rng);
      break;
    }
    case DType::kI64:
      for (int64_t& v : t.values<int64_t>()) v = static_cast<int64_t>(rng() & 1);
      break;
    case DType::kI32:
      for (int32_t& v : t.values<int32_t>()) v = static_cast<int32_t>(rng() & 1);
      break;
    default:
      for (uint8_t& v : t.values<uint8_t>()) v = static_cast<uint8_t>(rng() & 1);
      break;
  }
  return t;
}

Result<std::vector<Tensor>> load_inputs(const Graph& graph, const std::string& dir) {
  if (dir.empty()) return seeded_inputs(graph);
  std::vector<Tensor> inputs;
  for (size_t k = 0; k < graph.inputs().size(); ++k) {
    const Value& value = graph.value(graph.inputs()[k]);
    const fs::path path = fs::path(dir) / ("input_" + std::to_string(k) + ".pb");
    if (!fs::exists(path)) {
      return invalid_argument(path.string() + ": missing (the model takes " +
                              std::to_string(graph.inputs().size()) + " inputs)");
    }
    HSCHED_ASSIGN_OR_RETURN(Tensor tensor, read_tensor_file(path));
    if (tensor.dtype() != value.dtype || tensor.dims() != value.shape.dims) {
      return invalid_argument(path.string() + ": holds " + std::string(dtype_name(tensor.dtype())) +
                              " " + tensor.shape().to_string() + " but input '" + value.name +
                              "' is " + std::string(dtype_name(value.dtype)) + " " +
                              value.shape.to_string());
    }
    inputs.push_back(std::move(tensor));
  }
  return inputs;
}

Status write_outputs(const Graph& graph, const std::vector<Tensor>& outputs,
                     const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return invalid_argument("--outputs " + dir + ": cannot create: " + ec.message());
  for (size_t k = 0; k < outputs.size(); ++k) {
    const fs::path path = fs::path(dir) / ("output_" + std::to_string(k) + ".pb");
    HSCHED_RETURN_IF_ERROR(
        write_tensor_file(outputs[k], graph.value(graph.outputs()[k]).name, path));
  }
  return Status::ok();
}

int64_t peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

}  // namespace

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

std::vector<Tensor> seeded_inputs(const Graph& graph) {
  std::vector<Tensor> inputs;
  for (size_t k = 0; k < graph.inputs().size(); ++k) {
    inputs.push_back(seeded_input(graph.value(graph.inputs()[k]), static_cast<uint32_t>(k + 1)));
  }
  return inputs;
}

namespace {

struct OpTime {
  std::string device;
  std::string op;
  double ms = 0;
};

// Mean ms per run of each (device, op type) (fused CPU steps count under their root op), most
// expensive first.
std::vector<OpTime> time_per_op(const std::vector<StepProfile>& steps) {
  std::map<std::pair<std::string, std::string>, double> by_op;
  for (const auto& step : steps) by_op[{step.device, step.op}] += step.mean_ms;
  std::vector<OpTime> sorted;
  for (const auto& [key, ms] : by_op) sorted.push_back({key.first, key.second, ms});
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const OpTime& a, const OpTime& b) { return a.ms > b.ms; });
  return sorted;
}

nlohmann::json profile_json(const std::vector<StepProfile>& steps) {
  nlohmann::json json;
  json["ops"] = nlohmann::json::array();
  for (const OpTime& op : time_per_op(steps)) {
    json["ops"].push_back({{"device", op.device}, {"op", op.op}, {"ms", op.ms}});
  }
  json["steps"] = nlohmann::json::array();
  for (const auto& step : steps) {
    json["steps"].push_back(
        {{"node", step.node}, {"op", step.op}, {"device", step.device}, {"ms", step.mean_ms}});
  }
  return json;
}

std::string profile_text(const std::vector<StepProfile>& steps) {
  constexpr size_t kSlowest = 10;
  std::ostringstream text;
  text << std::fixed << std::setprecision(3);
  for (const OpTime& op : time_per_op(steps)) {
    text << "profile      " << std::left << std::setw(6) << op.device << std::setw(28) << op.op
         << std::right << std::setw(10) << op.ms << " ms\n";
  }
  std::vector<StepProfile> slowest = steps;
  std::stable_sort(slowest.begin(), slowest.end(),
                   [](const auto& a, const auto& b) { return a.mean_ms > b.mean_ms; });
  slowest.resize(std::min(slowest.size(), kSlowest));
  for (const auto& step : slowest) {
    text << "slowest      " << std::setw(10) << step.mean_ms << " ms  " << step.device << " "
         << step.op << " " << step.node << "\n";
  }
  return text.str();
}

}  // namespace

namespace {

// "cpu0 (3 partitions, 40 nodes), ocl0 (2 partitions, 12 nodes)": where the plan runs.
std::string devices_text(const Plan& plan) {
  std::map<std::string, std::pair<int, size_t>> by_device;  // partitions, nodes
  for (const Partition& partition : plan.partitions) {
    auto& [partitions, nodes] = by_device[partition.device];
    ++partitions;
    nodes += partition.nodes.size();
  }
  std::string text;
  for (const auto& [id, counts] : by_device) {
    const DeviceProfile* device = plan.target.find(id);
    text += (text.empty() ? "" : ", ") + id + " " +
            (device != nullptr ? "(" + device->name + ") " : std::string()) +
            std::to_string(counts.first) + " partitions, " + std::to_string(counts.second) +
            " nodes";
  }
  return text;
}

// Rejections found while compiling (compile_timeout...), one line each, for the report.
std::vector<const Rejection*> late_rejections(const Plan& plan) {
  std::vector<const Rejection*> late;
  for (const Rejection& rejection : plan.rejections) {
    if (rejection.reason == ReasonCode::kCompileTimeout ||
        rejection.reason == ReasonCode::kCompileFailed) {
      late.push_back(&rejection);
    }
  }
  return late;
}

}  // namespace

Result<std::string> run_model(const RunArgs& args, std::ostream& warnings) {
  if (args.iterations < 1 || args.iterations > kMaxIterations) {
    return invalid_argument("--iterations must be in [1, " + std::to_string(kMaxIterations) + "]");
  }
  if (args.warmup < 0 || args.warmup > kMaxIterations) {
    return invalid_argument("--warmup must be in [0, " + std::to_string(kMaxIterations) + "]");
  }
  if (args.threads < 1 || args.threads > 1024)
    return invalid_argument("--threads must be in [1, 1024]");
  if (args.compile_timeout_ms > kMaxCompileTimeoutMs) {
    return invalid_argument("--compile-timeout-ms must be in [0, " +
                            std::to_string(kMaxCompileTimeoutMs) + "]");
  }
  PlanArgs plan_args;
  plan_args.model_path = args.model_path;
  plan_args.input_shapes = args.input_shapes;
  plan_args.source = args.source;
  HSCHED_ASSIGN_OR_RETURN(PlannedModel planned, plan_model(plan_args));
  const Graph& graph = planned.graph;
  HSCHED_ASSIGN_OR_RETURN(std::vector<Tensor> inputs, load_inputs(graph, args.inputs_dir));

  ExecutorOptions options;
  options.cache_dir = planned.cache_dir;
  options.compile_timeout_ms =
      args.compile_timeout_ms >= 0 ? args.compile_timeout_ms : planned.compile_timeout_ms;
  options.cpu_threads = args.threads;
  options.profile = args.profile;
  auto executable = compile(graph, planned.plan, options);
  if (!executable.is_ok()) return executable.status().with_context(args.model_path);
  Executable& exe = **executable;
  const Plan& plan = exe.plan();
  warn_fallbacks(plan, warnings);

  auto timed = time_runs(exe, inputs, args.warmup, args.iterations);
  if (!timed.is_ok()) return timed.status().with_context(args.model_path);
  const std::vector<Tensor>& outputs = timed->outputs;
  if (!args.outputs_dir.empty())
    HSCHED_RETURN_IF_ERROR(write_outputs(graph, outputs, args.outputs_dir));

  const double median = timed->median_ms;
  const ExecutableStats& stats = exe.stats();
  if (args.json) {
    nlohmann::json report;
    report["model"] = args.model_path;
    report["devices"] = nlohmann::json::array();
    for (const DeviceProfile& device : plan.target.devices) {
      report["devices"].push_back({{"id", device.id},
                                   {"name", device.name},
                                   {"api", device_api_name(device.api)},
                                   {"kind", device_kind_name(device.kind)}});
    }
    report["plan"] = {{"target", plan.target.name},
                      {"policy", plan.policy.name},
                      {"partitions", plan.partitions.size()},
                      {"fallbacks", plan.fallbacks.size()},
                      {"replans", stats.replans},
                      {"predicted_ms", plan.predicted_ms}};
    report["partitions"] = nlohmann::json::array();
    for (const Partition& partition : plan.partitions) {
      report["partitions"].push_back({{"id", partition.id},
                                      {"device", partition.device},
                                      {"nodes", partition.nodes.size()},
                                      {"predicted_ms", partition.compute_ms}});
    }
    report["late_rejections"] = nlohmann::json::array();
    for (const Rejection* rejection : late_rejections(plan)) {
      report["late_rejections"].push_back({{"node", node_label(graph, rejection->node)},
                                           {"device", rejection->device},
                                           {"reason", reason_code_name(rejection->reason)},
                                           {"detail", rejection->detail}});
    }
    report["threads"] = args.threads;
    report["iterations"] = args.iterations;
    report["warmup"] = args.warmup;
    report["latency_ms"] = {{"median", median}, {"min", timed->min_ms}, {"max", timed->max_ms}};
    report["compile_ms"] = stats.compile_ms;
    report["first_run_ms"] = timed->first_ms;
    report["cache"] = {{"programs_built", stats.programs_built},
                       {"programs_loaded", stats.programs_loaded}};
    report["peak_rss_bytes"] = peak_rss_bytes();
    if (args.profile) report["profile"] = profile_json(exe.profile());
    report["outputs"] = nlohmann::json::array();
    for (size_t k = 0; k < outputs.size(); ++k) {
      report["outputs"].push_back({{"name", graph.value(graph.outputs()[k]).name},
                                   {"shape", outputs[k].dims()},
                                   {"dtype", dtype_name(outputs[k].dtype())}});
    }
    return report.dump(2) + "\n";
  }
  std::ostringstream text;
  text << "model        " << args.model_path << "\n"
       << "devices      " << devices_text(plan) << " (CPU: " << args.threads << " threads)\n"
       << "plan         target " << plan.target.name << ", policy " << plan.policy.name
       << ": predicted " << plan.predicted_ms << " ms, partitions " << plan.partitions.size()
       << ", fallbacks " << plan.fallbacks.size() << ", re-plans " << stats.replans << "\n";
  for (const Rejection* rejection : late_rejections(plan)) {
    text << "rejected     " << node_label(graph, rejection->node) << " on " << rejection->device
         << ": " << reason_code_name(rejection->reason) << " (" << rejection->detail << ")\n";
  }
  text << "compile      " << stats.compile_ms << " ms (OpenCL programs: " << stats.programs_built
       << " built, " << stats.programs_loaded << " loaded from the cache)\n"
       << "first run    " << timed->first_ms << " ms\n"
       << "latency      median " << median << " ms, min " << timed->min_ms << " ms, max "
       << timed->max_ms << " ms over " << args.iterations << " runs (" << args.warmup
       << " warm-up)\n";
  for (size_t k = 0; k < outputs.size(); ++k) {
    text << "output       " << graph.value(graph.outputs()[k]).name << " "
         << dtype_name(outputs[k].dtype()) << " " << outputs[k].shape().to_string() << "\n";
  }
  if (!args.outputs_dir.empty()) text << "written      " << args.outputs_dir << "\n";
  if (args.profile) text << profile_text(exe.profile());
  return text.str();
}

}  // namespace hsched::cli
