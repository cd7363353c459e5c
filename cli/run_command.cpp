#include "cli/run_command.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "backends/cpu/program.h"
#include "graph/onnx_import.h"
#include "graph/tensor_proto.h"

namespace hsched::cli {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxIterations = 1000000;

Status check_devices(const std::string& list) {
  std::stringstream stream(list);
  std::string device;
  bool any = false;
  while (std::getline(stream, device, ',')) {
    if (device != "cpu") {
      return invalid_argument("--devices: unknown or absent device '" + device +
                              "' (available: cpu)");
    }
    any = true;
  }
  if (!any) return invalid_argument("--devices: no device given");
  return Status::ok();
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

Result<TimedRuns> time_runs(cpu::CpuProgram& program, const std::vector<Tensor>& inputs,
                            int warmup, int iterations) {
  using Clock = std::chrono::steady_clock;
  TimedRuns timed;
  std::vector<double> times;
  for (int i = 0; i < warmup + iterations; ++i) {
    const auto start = Clock::now();
    auto result = program.run(inputs);
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (!result.is_ok()) return result.status();
    if (i >= warmup) times.push_back(ms);
    timed.outputs = std::move(result).value();
  }
  const auto [min_it, max_it] = std::minmax_element(times.begin(), times.end());
  timed.min_ms = *min_it;
  timed.max_ms = *max_it;
  timed.median_ms = median_of(times);
  return timed;
}

Result<std::string> run_model(const RunArgs& args) {
  if (args.iterations < 1 || args.iterations > kMaxIterations) {
    return invalid_argument("--iterations must be in [1, " + std::to_string(kMaxIterations) + "]");
  }
  if (args.warmup < 0 || args.warmup > kMaxIterations) {
    return invalid_argument("--warmup must be in [0, " + std::to_string(kMaxIterations) + "]");
  }
  if (args.threads < 1 || args.threads > 1024) return invalid_argument("--threads must be in [1, 1024]");
  HSCHED_RETURN_IF_ERROR(check_devices(args.devices));
  ImportOptions options;
  for (const std::string& flag : args.input_shapes) {
    HSCHED_RETURN_IF_ERROR(add_input_shape_flag(flag, options));
  }
  HSCHED_ASSIGN_OR_RETURN(Graph graph, import_onnx_file(args.model_path, options));
  HSCHED_ASSIGN_OR_RETURN(std::vector<Tensor> inputs, load_inputs(graph, args.inputs_dir));

  using Clock = std::chrono::steady_clock;
  const auto compile_start = Clock::now();
  cpu::CpuOptions cpu_options;
  cpu_options.threads = args.threads;
  auto program = cpu::CpuProgram::compile(graph, cpu_options);
  if (!program.is_ok()) return program.status().with_context(args.model_path);
  const double compile_ms =
      std::chrono::duration<double, std::milli>(Clock::now() - compile_start).count();

  auto timed = time_runs(**program, inputs, args.warmup, args.iterations);
  if (!timed.is_ok()) return timed.status().with_context(args.model_path);
  const std::vector<Tensor>& outputs = timed->outputs;
  if (!args.outputs_dir.empty()) HSCHED_RETURN_IF_ERROR(write_outputs(graph, outputs, args.outputs_dir));

  const double median = timed->median_ms;
  const auto& stats = (*program)->stats();
  if (args.json) {
    nlohmann::json report;
    report["model"] = args.model_path;
    report["devices"] = nlohmann::json::array({"cpu"});
    report["threads"] = args.threads;
    report["iterations"] = args.iterations;
    report["warmup"] = args.warmup;
    report["latency_ms"] = {{"median", median}, {"min", timed->min_ms}, {"max", timed->max_ms}};
    report["compile_ms"] = compile_ms;
    report["peak_rss_bytes"] = peak_rss_bytes();
    report["cpu"] = {{"kernels", stats.kernels},
                     {"folded_nodes", stats.folded_nodes},
                     {"fused_nodes", stats.fused_nodes},
                     {"channels_last_values", stats.channels_last_values},
                     {"arena_bytes", stats.arena_bytes},
                     {"activation_bytes", stats.activation_bytes}};
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
       << "compile      " << compile_ms << " ms (" << stats.kernels << " kernels, "
       << stats.folded_nodes << " nodes folded, " << stats.fused_nodes << " fused)\n"
       << "latency      median " << median << " ms, min " << timed->min_ms << " ms, max " << timed->max_ms
       << " ms over " << args.iterations << " runs (" << args.warmup << " warm-up)\n";
  for (size_t k = 0; k < outputs.size(); ++k) {
    text << "output       " << graph.value(graph.outputs()[k]).name << " "
         << dtype_name(outputs[k].dtype()) << " " << outputs[k].shape().to_string() << "\n";
  }
  if (!args.outputs_dir.empty()) text << "written      " << args.outputs_dir << "\n";
  return text.str();
}

}  // namespace hsched::cli
