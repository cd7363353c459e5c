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

#include "backends/cpu/program.h"
#include "graph/tensor_proto.h"

namespace hsched::cli {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxIterations = 1000000;

// Only the CPU executes until the heterogeneous executor (issue 6) exists: a plan that puts nodes
// on a device planned from a profile, or on a present device without an executor, is refused.
Status check_executable(const Plan& plan) {
  std::map<std::string, int> nodes_on;  // device id -> nodes placed there
  for (const NodePlacement& placement : plan.nodes) ++nodes_on[placement.device];
  for (const auto& [id, count] : nodes_on) {
    const DeviceProfile* device = plan.target.find(id);
    const std::string where = "the plan puts " + std::to_string(count) + " nodes on " + id +
                              (device != nullptr ? " (" + device->name + ")" : std::string());
    if (device == nullptr || !device->present) {
      return invalid_argument(where + ", which target " + plan.target.name +
                              " plans from a profile and is not present on this machine; "
                              "`hsched plan` shows such plans, `--target this-machine` runs here");
    }
    if (device->api != DeviceApi::kHost) {
      return unimplemented(where + ": running on " + device_api_name(device->api) +
                           " devices is not built yet (the CPU runs models)");
    }
  }
  return Status::ok();
}

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

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

int64_t peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

}  // namespace

std::vector<Tensor> seeded_inputs(const Graph& graph) {
  std::vector<Tensor> inputs;
  for (size_t k = 0; k < graph.inputs().size(); ++k) {
    inputs.push_back(seeded_input(graph.value(graph.inputs()[k]), static_cast<uint32_t>(k + 1)));
  }
  return inputs;
}

namespace {

// Mean ms per run of each op type (fused steps count under their root op), most expensive first.
std::vector<std::pair<std::string, double>> time_per_op(const std::vector<cpu::StepProfile>& steps) {
  std::map<std::string, double> by_op;
  for (const auto& step : steps) by_op[step.op] += step.mean_ms;
  std::vector<std::pair<std::string, double>> sorted(by_op.begin(), by_op.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return sorted;
}

nlohmann::json profile_json(const std::vector<cpu::StepProfile>& steps) {
  nlohmann::json json;
  json["ops"] = nlohmann::json::array();
  for (const auto& [op, ms] : time_per_op(steps)) json["ops"].push_back({{"op", op}, {"ms", ms}});
  json["steps"] = nlohmann::json::array();
  for (const auto& step : steps) {
    json["steps"].push_back({{"node", step.node}, {"op", step.op}, {"ms", step.mean_ms}});
  }
  return json;
}

std::string profile_text(const std::vector<cpu::StepProfile>& steps) {
  constexpr size_t kSlowest = 10;
  std::ostringstream text;
  text << std::fixed << std::setprecision(3);
  for (const auto& [op, ms] : time_per_op(steps)) {
    text << "profile      " << std::left << std::setw(28) << op << std::right << std::setw(10)
         << ms << " ms\n";
  }
  std::vector<cpu::StepProfile> slowest = steps;
  std::stable_sort(slowest.begin(), slowest.end(),
                   [](const auto& a, const auto& b) { return a.mean_ms > b.mean_ms; });
  slowest.resize(std::min(slowest.size(), kSlowest));
  for (const auto& step : slowest) {
    text << "slowest      " << std::setw(10) << step.mean_ms << " ms  " << step.op << " "
         << step.node << "\n";
  }
  return text.str();
}

}  // namespace

Result<TimedRuns> time_runs(cpu::CpuProgram& program, const std::vector<Tensor>& inputs, int warmup,
                            int iterations) {
  using Clock = std::chrono::steady_clock;
  TimedRuns timed;
  std::vector<double> times;
  for (int i = 0; i < warmup + iterations; ++i) {
    const auto start = Clock::now();
    auto result = program.run(inputs);
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (!result.is_ok()) return result.status();
    if (i >= warmup) times.push_back(ms);
    if (i + 1 == warmup) program.reset_profile();  // the profile covers the timed runs only
    timed.outputs = std::move(result).value();
  }
  const auto [min_it, max_it] = std::minmax_element(times.begin(), times.end());
  timed.min_ms = *min_it;
  timed.max_ms = *max_it;
  timed.median_ms = median_of(times);
  return timed;
}

Result<std::string> run_model(const RunArgs& args, std::ostream& warnings) {
  if (args.iterations < 1 || args.iterations > kMaxIterations) {
    return invalid_argument("--iterations must be in [1, " + std::to_string(kMaxIterations) + "]");
  }
  if (args.warmup < 0 || args.warmup > kMaxIterations) {
    return invalid_argument("--warmup must be in [0, " + std::to_string(kMaxIterations) + "]");
  }
  if (args.threads < 1 || args.threads > 1024)
    return invalid_argument("--threads must be in [1, 1024]");
  PlanArgs plan_args;
  plan_args.model_path = args.model_path;
  plan_args.input_shapes = args.input_shapes;
  plan_args.source = args.source;
  HSCHED_ASSIGN_OR_RETURN(PlannedModel planned, plan_model(plan_args));
  const Graph& graph = planned.graph;
  const Plan& plan = planned.plan;
  HSCHED_RETURN_IF_ERROR(check_executable(plan));
  warn_fallbacks(plan, warnings);
  HSCHED_ASSIGN_OR_RETURN(std::vector<Tensor> inputs, load_inputs(graph, args.inputs_dir));

  using Clock = std::chrono::steady_clock;
  const auto compile_start = Clock::now();
  cpu::CpuOptions cpu_options;
  cpu_options.threads = args.threads;
  cpu_options.profile = args.profile;
  auto program = cpu::CpuProgram::compile(graph, cpu_options);
  if (!program.is_ok()) return program.status().with_context(args.model_path);
  const double compile_ms =
      std::chrono::duration<double, std::milli>(Clock::now() - compile_start).count();

  auto timed = time_runs(**program, inputs, args.warmup, args.iterations);
  if (!timed.is_ok()) return timed.status().with_context(args.model_path);
  const std::vector<Tensor>& outputs = timed->outputs;
  if (!args.outputs_dir.empty())
    HSCHED_RETURN_IF_ERROR(write_outputs(graph, outputs, args.outputs_dir));

  const double median = timed->median_ms;
  const auto& stats = (*program)->stats();
  if (args.json) {
    nlohmann::json report;
    report["model"] = args.model_path;
    report["devices"] = nlohmann::json::array({"cpu"});
    report["plan"] = {{"target", plan.target.name},
                      {"policy", plan.policy.name},
                      {"partitions", plan.partitions.size()},
                      {"fallbacks", plan.fallbacks.size()},
                      {"predicted_ms", plan.predicted_ms}};
    report["threads"] = args.threads;
    report["iterations"] = args.iterations;
    report["warmup"] = args.warmup;
    report["latency_ms"] = {{"median", median}, {"min", timed->min_ms}, {"max", timed->max_ms}};
    report["compile_ms"] = compile_ms;
    report["peak_rss_bytes"] = peak_rss_bytes();
    report["cpu"] = {
        {"kernels", stats.kernels},         {"folded_nodes", stats.folded_nodes},
        {"fused_nodes", stats.fused_nodes}, {"channels_last_values", stats.channels_last_values},
        {"arena_bytes", stats.arena_bytes}, {"activation_bytes", stats.activation_bytes}};
    if (args.profile) report["profile"] = profile_json((*program)->profile());
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
       << "devices      cpu (" << args.threads << " threads)\n"
       << "plan         target " << plan.target.name << ", policy " << plan.policy.name
       << ": predicted " << plan.predicted_ms << " ms, partitions " << plan.partitions.size()
       << ", fallbacks " << plan.fallbacks.size() << "\n"
       << "compile      " << compile_ms << " ms (" << stats.kernels << " kernels, "
       << stats.folded_nodes << " nodes folded, " << stats.fused_nodes << " fused)\n"
       << "latency      median " << median << " ms, min " << timed->min_ms << " ms, max "
       << timed->max_ms << " ms over " << args.iterations << " runs (" << args.warmup
       << " warm-up)\n";
  for (size_t k = 0; k < outputs.size(); ++k) {
    text << "output       " << graph.value(graph.outputs()[k]).name << " "
         << dtype_name(outputs[k].dtype()) << " " << outputs[k].shape().to_string() << "\n";
  }
  if (!args.outputs_dir.empty()) text << "written      " << args.outputs_dir << "\n";
  if (args.profile) text << profile_text((*program)->profile());
  return text.str();
}

}  // namespace hsched::cli
