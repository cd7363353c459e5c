#include "cli/run_command.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <iomanip>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/run_requests.h"
#include "cli/text_table.h"
#include "hsched/executor.h"
#include "hsched/report.h"
#include "hsched/trace.h"

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

Status write_outputs(const Model& model, const std::vector<Tensor>& outputs,
                     const std::string& dir) {
  const std::vector<TensorInfo> infos = model.outputs();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return invalid_argument("--outputs " + dir + ": cannot create: " + ec.message());
  for (size_t k = 0; k < outputs.size(); ++k) {
    const fs::path path = fs::path(dir) / ("output_" + std::to_string(k) + ".pb");
    HSCHED_RETURN_IF_ERROR(write_tensor_file(outputs[k], infos[k].name, path));
  }
  return Status::ok();
}

int64_t peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

// `inputs` moved into the memory the executable's devices copy from fastest
// (Executable::allocate_input), as a serving loop holds its requests' buffers. A tensor that is
// not the model's input as declared stays as it is, for run() to refuse.
Result<std::vector<Tensor>> in_copy_memory(Executable& exe, std::vector<Tensor> inputs) {
  for (size_t k = 0; k < inputs.size(); ++k) {
    HSCHED_ASSIGN_OR_RETURN(Tensor copy, exe.allocate_input(k));
    if (copy.dtype() != inputs[k].dtype() || copy.dims() != inputs[k].dims()) continue;
    if (copy.byte_size() > 0) std::memcpy(copy.raw(), inputs[k].raw(), copy.byte_size());
    inputs[k] = std::move(copy);
  }
  return inputs;
}

// "NAME=d1,d2,..." for each input of `model` whose dims the model leaves open and no flag of
// `given` (--input-shape) names, from its input_K.pb in `dir` where that file agrees with the dims
// the model fixes (load_inputs refuses the others, saying why).
Result<std::vector<std::string>> shapes_of_input_files(const Model& model, const std::string& dir,
                                                       const std::vector<std::string>& given) {
  std::set<std::string> named;
  for (const std::string& flag : given) named.insert(flag.substr(0, flag.rfind('=')));
  std::vector<std::string> shapes;
  const std::vector<TensorInfo> infos = model.inputs();
  for (size_t k = 0; k < infos.size(); ++k) {
    const TensorInfo& info = infos[k];
    const fs::path path = fs::path(dir) / ("input_" + std::to_string(k) + ".pb");
    if (info.shape.is_static() || named.count(info.name) != 0 || !fs::exists(path)) continue;
    HSCHED_ASSIGN_OR_RETURN(Tensor tensor, read_tensor_file(path));
    const std::vector<int64_t>& dims = tensor.dims();
    bool agrees = dims.size() == info.shape.dims.size();
    for (size_t d = 0; agrees && d < dims.size(); ++d) {
      agrees = dims[d] > 0 && (info.shape.dims[d] == kDynamicDim || info.shape.dims[d] == dims[d]);
    }
    if (!agrees) continue;
    std::string flag = info.name + "=";
    for (size_t d = 0; d < dims.size(); ++d) flag += (d > 0 ? "," : "") + std::to_string(dims[d]);
    shapes.push_back(std::move(flag));
  }
  return shapes;
}

}  // namespace

Result<std::vector<Tensor>> load_inputs(const Model& model, const std::string& dir) {
  if (dir.empty()) return seeded_inputs(model);
  const std::vector<TensorInfo> infos = model.inputs();
  std::vector<Tensor> inputs;
  for (size_t k = 0; k < infos.size(); ++k) {
    const TensorInfo& value = infos[k];
    const fs::path path = fs::path(dir) / ("input_" + std::to_string(k) + ".pb");
    if (!fs::exists(path)) {
      return invalid_argument(path.string() + ": missing (the model takes " +
                              std::to_string(infos.size()) + " inputs)");
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

std::vector<Tensor> seeded_inputs(const Model& model, int request) {
  constexpr uint32_t kRequestStride = 1000003;  // a prime: no two (request, input) seeds meet
  const std::vector<TensorInfo> infos = model.inputs();
  std::vector<Tensor> inputs;
  for (size_t k = 0; k < infos.size(); ++k) {
    const uint32_t seed =
        static_cast<uint32_t>(k + 1) + kRequestStride * static_cast<uint32_t>(request);
    inputs.push_back(seeded_tensor(infos[k].dtype, infos[k].shape.dims, seed));
  }
  return inputs;
}

std::vector<PartitionTiming> partition_timings(size_t partitions,
                                               const std::vector<RunRecord>& records) {
  struct Samples {
    std::vector<double> ms, upload_bytes, zero_copy_bytes, upload_ms, download_bytes, download_ms,
        verify_ms;
  };
  std::vector<Samples> samples(partitions);
  for (const RunRecord& record : records) {
    for (const PartitionRun& run : record.partitions) {
      if (run.partition < 0 || static_cast<size_t>(run.partition) >= partitions) continue;
      Samples& s = samples[static_cast<size_t>(run.partition)];
      s.ms.push_back(run.end_ms - run.start_ms);
      s.upload_bytes.push_back(static_cast<double>(run.upload_bytes));
      s.zero_copy_bytes.push_back(static_cast<double>(run.zero_copy_bytes));
      s.upload_ms.push_back(run.upload_ms);
      s.download_bytes.push_back(static_cast<double>(run.download_bytes));
      s.download_ms.push_back(run.download_ms);
      s.verify_ms.push_back(run.verified ? run.verify_ms : 0.0);
    }
  }
  std::vector<PartitionTiming> timings(partitions);
  for (size_t p = 0; p < partitions; ++p) {
    const Samples& s = samples[p];
    if (s.ms.empty()) continue;
    PartitionTiming& t = timings[p];
    t.runs = static_cast<int>(s.ms.size());
    t.measured_ms = median_of(s.ms);
    t.upload_bytes = std::llround(median_of(s.upload_bytes));
    t.zero_copy_bytes = std::llround(median_of(s.zero_copy_bytes));
    t.upload_ms = median_of(s.upload_ms);
    t.download_bytes = std::llround(median_of(s.download_bytes));
    t.download_ms = median_of(s.download_ms);
    t.verify_ms = median_of(s.verify_ms);
  }
  return timings;
}

double median_request_ms(const std::vector<RunRecord>& records) {
  if (records.empty()) return 0;
  std::vector<double> ms;
  for (const RunRecord& record : records) ms.push_back(record.end_ms - record.start_ms);
  return median_of(ms);
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
    nlohmann::json entry = {
        {"node", step.node}, {"op", step.op}, {"device", step.device}, {"ms", step.mean_ms}};
    if (step.enqueue_ms) entry["enqueue_ms"] = *step.enqueue_ms;
    if (step.device_ms) entry["device_ms"] = *step.device_ms;
    json["steps"].push_back(std::move(entry));
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

// Rejections found while compiling (compile_timeout, compile_failed, memory_exceeded: the last
// also when planning found a node too big for a device), one line each, for the report.
std::vector<const Rejection*> late_rejections(const Plan& plan) {
  std::vector<const Rejection*> late;
  for (const Rejection& rejection : plan.rejections) {
    if (rejection.reason == ReasonCode::kCompileTimeout ||
        rejection.reason == ReasonCode::kCompileFailed ||
        rejection.reason == ReasonCode::kMemoryExceeded ||
        rejection.reason == ReasonCode::kDriverUnsupported ||
        rejection.reason == ReasonCode::kDeviceLimit) {
      late.push_back(&rejection);
    }
  }
  return late;
}

// Per partition of `plan`: its device driver's answer when asked before the build (the last
// compile record of the partition: the plan's own round), else "".
std::vector<std::string> driver_answers(const Plan& plan, const ExecutableStats& stats) {
  std::vector<std::string> answers;
  for (const Partition& partition : plan.partitions) {
    std::string answer;
    for (const CompileRecord& record : stats.compiles) {
      if (record.partition == partition.id && record.device == partition.device) {
        answer = record.driver_answer;
      }
    }
    answers.push_back(answer);
  }
  return answers;
}

// What the runs measured, for both reports.
struct Measured {
  std::vector<PartitionTiming> partitions;  // over the timed runs
  double request_ms = 0;                    // median end - start of the timed runs
  int verified_runs = 0;                    // partition runs checked against the CPU
  bool transfers_timed = false;             // ExecutorOptions::time_transfers (or profile)
};

Measured measure(const Plan& plan, const TimedRuns& timed, bool transfers_timed) {
  Measured measured;
  measured.transfers_timed = transfers_timed;
  // Requests progressive start ran on its CPU plan have other partitions than `plan`.
  std::vector<RunRecord> on_plan;
  for (const RunRecord& record : timed.records) {
    if (record.plan == "plan") on_plan.push_back(record);
  }
  measured.partitions = partition_timings(plan.partitions.size(), on_plan);
  measured.request_ms = median_request_ms(timed.records);
  for (const RunRecord& record : timed.records) {
    for (const PartitionRun& run : record.partitions) measured.verified_runs += run.verified;
  }
  return measured;
}

std::string fixed3(double value) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(3) << value;
  return text.str();
}

// "-" for a partition on the host; "BYTES B", "BYTES B MS ms" where timed, and "(+BYTES B in
// place)" for inputs the device read from host memory without a copy.
std::string transfer_cell(int64_t bytes, double ms, bool timed, int64_t in_place = 0) {
  if (bytes == 0 && ms == 0 && in_place == 0) return "-";
  std::string cell = std::to_string(bytes) + " B";
  if (timed) cell += " " + fixed3(ms) + " ms";
  if (in_place > 0) cell += " (+" + std::to_string(in_place) + " B in place)";
  return cell;
}

nlohmann::json partitions_json(const Plan& plan, const Measured& measured,
                               const std::vector<std::string>& answers) {
  nlohmann::json partitions = nlohmann::json::array();
  for (size_t p = 0; p < plan.partitions.size(); ++p) {
    const Partition& partition = plan.partitions[p];
    const PartitionTiming& t = measured.partitions[p];
    partitions.push_back({{"id", partition.id},
                          {"device", partition.device},
                          {"driver_query", answers[p]},
                          {"nodes", partition.nodes.size()},
                          {"predicted_ms", partition.run_ms},
                          {"measured_ms", t.measured_ms},
                          {"transfers",
                           {{"upload_bytes", t.upload_bytes},
                            {"zero_copy_bytes", t.zero_copy_bytes},
                            {"upload_ms", t.upload_ms},
                            {"download_bytes", t.download_bytes},
                            {"download_ms", t.download_ms},
                            {"timed", measured.transfers_timed}}},
                          {"verify_ms", t.verify_ms}});
  }
  return partitions;
}

nlohmann::json transfers_json(const Model& model, const Plan& plan) {
  nlohmann::json transfers = nlohmann::json::array();
  for (const Transfer& transfer : plan.transfers) {
    transfers.push_back({{"value", model.value_name(transfer.value)},
                         {"from_partition", transfer.from_partition},
                         {"to_partition", transfer.to_partition},
                         {"from_device", transfer.from_device},
                         {"to_device", transfer.to_device},
                         {"bytes", transfer.bytes},
                         {"predicted_ms", transfer.predicted_ms}});
  }
  return transfers;
}

nlohmann::json throughput_json(const RequestRuns& runs) {
  return {{"requests", runs.requests},
          {"mode", runs.throughput ? "throughput" : "latency"},
          {"requests_per_s", runs.throughput ? runs.pipelined_per_s : runs.sequential_per_s},
          {"sequential_requests_per_s", runs.sequential_per_s},
          {"speedup", runs.throughput ? runs.speedup : 1.0},
          {"identical_outputs", runs.identical},
          {"max_abs_diff", runs.max_abs_diff}};
}

// "partition device nodes predicted measured upload download", one row per partition and the
// whole request.
std::string partitions_text(const Plan& plan, const Measured& measured) {
  std::vector<std::vector<std::string>> rows = {
      {"partition", "device", "nodes", "predicted", "measured", "upload", "download"}};
  for (size_t p = 0; p < plan.partitions.size(); ++p) {
    const Partition& partition = plan.partitions[p];
    const PartitionTiming& t = measured.partitions[p];
    rows.push_back(
        {std::to_string(partition.id), partition.device, std::to_string(partition.nodes.size()),
         fixed3(partition.run_ms) + " ms", fixed3(t.measured_ms) + " ms",
         transfer_cell(t.upload_bytes, t.upload_ms, measured.transfers_timed, t.zero_copy_bytes),
         transfer_cell(t.download_bytes, t.download_ms, measured.transfers_timed)});
  }
  rows.push_back({"request", "", std::to_string(plan.nodes.size()),
                  fixed3(plan.predicted_run_ms) + " ms", fixed3(measured.request_ms) + " ms"});
  std::istringstream table(format_columns(rows));
  std::string text;
  for (std::string line; std::getline(table, line);) text += "  " + line + "\n";
  return text;
}

std::string throughput_text(const RequestRuns& runs) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(1) << "requests     " << runs.requests
       << " one by one: " << runs.sequential_per_s << " requests/s\n";
  if (!runs.throughput) return text.str();
  text << "throughput   " << runs.requests << " pipelined: " << runs.pipelined_per_s
       << " requests/s (" << std::setprecision(2) << runs.speedup << "x one by one); outputs "
       << (runs.identical ? "identical to one by one"
                          : "differ from one by one by up to " + fixed3(runs.max_abs_diff))
       << "\n";
  return text.str();
}

// The folder of --trace must exist: found before the model is compiled and run, not after.
Status check_trace_path(const std::string& path) {
  if (path.empty()) return Status::ok();
  const fs::path file(path);
  const fs::path dir = file.has_parent_path() ? file.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return invalid_argument("--trace " + path + ": no folder " + dir.string());
  }
  if (fs::is_directory(file, ec)) return invalid_argument("--trace " + path + ": is a folder");
  return Status::ok();
}

}  // namespace

std::string partition_table(const Plan& plan, const std::vector<RunRecord>& records) {
  Measured measured;
  measured.partitions = partition_timings(plan.partitions.size(), records);
  measured.request_ms = median_request_ms(records);
  return partitions_text(plan, measured);
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
  if (args.compile_timeout_ms > kMaxCompileTimeoutMs) {
    return invalid_argument("--compile-timeout-ms must be in [0, " +
                            std::to_string(kMaxCompileTimeoutMs) + "]");
  }
  if (args.requests < 0 || args.requests > kMaxRequests) {
    return invalid_argument("--requests must be in [1, " + std::to_string(kMaxRequests) + "]");
  }
  if (args.mode != "latency" && args.mode != "throughput") {
    return invalid_argument("--mode: unknown mode '" + args.mode + "' (latency, throughput)");
  }
  if (args.mode == "throughput" && args.requests == 0)
    return invalid_argument("--mode throughput needs --requests N");
  HSCHED_RETURN_IF_ERROR(check_trace_path(args.trace_path));
  PlanArgs plan_args;
  plan_args.model_path = args.model_path;
  plan_args.input_shapes = args.input_shapes;
  plan_args.source = args.source;
  HSCHED_ASSIGN_OR_RETURN(PlannedModel planned, plan_model(plan_args));
  if (!args.inputs_dir.empty()) {  // the dims the model leaves open, from the input files
    HSCHED_ASSIGN_OR_RETURN(
        const std::vector<std::string> fixed,
        shapes_of_input_files(planned.model, args.inputs_dir, plan_args.input_shapes));
    if (!fixed.empty()) {
      plan_args.input_shapes.insert(plan_args.input_shapes.end(), fixed.begin(), fixed.end());
      HSCHED_ASSIGN_OR_RETURN(PlannedModel replanned, plan_model(plan_args));
      planned = std::move(replanned);
    }
  }
  const Model& model = planned.model;
  HSCHED_ASSIGN_OR_RETURN(std::vector<Tensor> inputs, load_inputs(model, args.inputs_dir));

  ExecutorOptions options;
  options.cache_dir = planned.cache_dir;
  options.compile_timeout_ms =
      args.compile_timeout_ms >= 0 ? args.compile_timeout_ms : planned.compile_timeout_ms;
  options.cpu_threads = args.threads;
  options.profile = args.profile;
  options.verify = args.verify || planned.plan.policy.verify;
  options.flush_denormals = !args.keep_denormals;
  options.cpu_memory_limit_bytes = args.memory_limit_mb << 20;
  options.accuracy_inputs = inputs;  // an accuracy budget is measured on the run's inputs
  options.progressive_start = args.progressive;
  auto executable = compile(model, planned.plan, options);
  if (!executable.is_ok()) return executable.status().with_context(args.model_path);
  Executable& exe = **executable;
  warn_fallbacks(exe.plan(), warnings);
  HSCHED_ASSIGN_OR_RETURN(inputs, in_copy_memory(exe, std::move(inputs)));

  auto timed = time_runs(exe, inputs, args.warmup, args.iterations);
  if (!timed.is_ok()) return timed.status().with_context(args.model_path);
  std::optional<RequestRuns> requests;
  if (args.requests > 0) {
    auto runs = run_requests(exe, model, inputs, !args.inputs_dir.empty(), args.requests,
                             args.mode == "throughput", !args.trace_path.empty());
    if (!runs.is_ok()) return runs.status().with_context(args.model_path);
    requests = std::move(runs).value();
  }
  // Read once every run has finished: verification may have moved partitions to the CPU.
  const Plan plan = exe.plan();
  const std::vector<Tensor>& outputs = requests ? requests->outputs : timed->outputs;
  const ExecutableStats stats = exe.stats();
  const std::vector<Quarantine> quarantines = exe.quarantines();
  if (!args.trace_path.empty()) {
    std::vector<RunRecord> records = timed->warmup_records;
    records.insert(records.end(), timed->records.begin(), timed->records.end());
    if (requests) {
      for (auto* more : {&requests->sequential_records, &requests->pipelined_records}) {
        records.insert(records.end(), more->begin(), more->end());
      }
    }
    HSCHED_RETURN_IF_ERROR(write_trace_file(args.trace_path, chrome_trace(plan, stats, records))
                               .with_context("--trace"));
  }
  if (!args.outputs_dir.empty())
    HSCHED_RETURN_IF_ERROR(write_outputs(model, outputs, args.outputs_dir));

  const double median = timed->median_ms;
  const Measured measured = measure(plan, *timed, options.profile || options.time_transfers);
  const std::vector<std::string> answers = driver_answers(plan, stats);
  const std::vector<TensorInfo> output_infos = model.outputs();
  if (args.json) {
    nlohmann::json report;
    report["schema_version"] = kReportSchemaVersion;
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
                      {"predicted_run_ms", plan.predicted_run_ms},
                      {"predicted_ms", plan.predicted_ms},
                      {"measured_ms", measured.request_ms}};
    report["partitions"] = partitions_json(plan, measured, answers);
    report["transfers"] = transfers_json(model, plan);
    report["late_rejections"] = nlohmann::json::array();
    for (const Rejection* rejection : late_rejections(plan)) {
      report["late_rejections"].push_back({{"node", model.node_label(rejection->node)},
                                           {"device", rejection->device},
                                           {"reason", reason_code_name(rejection->reason)},
                                           {"detail", rejection->detail}});
    }
    report["verify"] = options.verify;
    report["verified_partition_runs"] = measured.verified_runs;
    report["quarantined"] = nlohmann::json::array();
    for (const Quarantine& q : quarantines) {
      report["quarantined"].push_back({{"partition", q.partition},
                                       {"device", q.device},
                                       {"reason", reason_code_name(q.reason)},
                                       {"max_abs", q.max_abs},
                                       {"mean_abs", q.mean_abs},
                                       {"detail", q.detail}});
    }
    report["threads"] = args.threads;
    report["iterations"] = args.iterations;
    report["warmup"] = args.warmup;
    report["latency_ms"] = {{"median", median},     {"p50", median},        {"p90", timed->p90_ms},
                            {"p99", timed->p99_ms}, {"min", timed->min_ms}, {"max", timed->max_ms}};
    report["runs_per_s"] = timed->runs_per_s;
    report["compile_ms"] = stats.compile_ms;
    report["first_run_ms"] = timed->first_ms;
    report["cache"] = {{"programs_built", stats.programs_built},
                       {"programs_loaded", stats.programs_loaded}};
    if (requests) report["throughput"] = throughput_json(*requests);
    if (options.progressive_start) {
      report["progressive"] = {{"plan_started_ms", stats.plan_started_ms},
                               {"plan_ready_ms", stats.plan_ready_ms},
                               {"requests_on_cpu", stats.requests_on_cpu},
                               {"requests_partial", stats.requests_partial},
                               {"error", stats.progressive_error}};
    }
    report["peak_rss_bytes"] = peak_rss_bytes();
    if (args.profile) report["profile"] = profile_json(exe.profile());
    if (!args.trace_path.empty()) report["trace"] = args.trace_path;
    report["outputs"] = nlohmann::json::array();
    for (size_t k = 0; k < outputs.size(); ++k) {
      report["outputs"].push_back({{"name", output_infos[k].name},
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
    text << "rejected     " << model.node_label(rejection->node) << " on " << rejection->device
         << ": " << reason_code_name(rejection->reason) << " (" << rejection->detail << ")\n";
  }
  for (size_t p = 0; p < plan.partitions.size(); ++p) {
    if (answers[p].empty()) continue;
    text << "driver       partition " << plan.partitions[p].id << " on "
         << plan.partitions[p].device << ": " << answers[p] << "\n";
  }
  if (options.verify) {
    text << "verify       " << measured.verified_runs
         << " partition runs checked against the CPU in the timed runs, " << quarantines.size()
         << " partitions quarantined\n";
  }
  for (const Quarantine& q : quarantines) {
    text << "quarantined  partition " << q.partition << " on " << q.device << ": "
         << reason_code_name(q.reason) << " (";
    if (q.reason == ReasonCode::kVerificationFailed) {
      text << "max |diff| " << q.max_abs << ", mean |diff| " << q.mean_abs;
    } else {
      text << q.detail;
    }
    text << "); it runs on the CPU\n";
  }
  text << "compile      " << stats.compile_ms << " ms (OpenCL programs: " << stats.programs_built
       << " built, " << stats.programs_loaded << " loaded from the cache)\n"
       << "first run    " << timed->first_ms << " ms\n";
  if (options.progressive_start) {
    text << "progressive  " << stats.requests_on_cpu << " requests ran on the CPU and "
         << stats.requests_partial << " on part of the plan while it compiled; "
         << (stats.plan_ready_ms >= 0
                 ? "plan compile began " + std::to_string(stats.plan_started_ms) +
                       " ms and was ready " + std::to_string(stats.plan_ready_ms) +
                       " ms after compile() began"
             : stats.progressive_error.empty() ? std::string("plan still compiling")
                                               : "plan failed: " + stats.progressive_error)
         << "\n";
  }
  text << "latency      p50 " << median << " ms, p90 " << timed->p90_ms << " ms, p99 "
       << timed->p99_ms << " ms, min " << timed->min_ms << " ms, max " << timed->max_ms
       << " ms over " << args.iterations << " runs (" << args.warmup << " warm-up); "
       << timed->runs_per_s << " runs/s one at a time\n"
       << "partitions   predicted compute and measured medians (transfers: bytes, and ms with "
          "--profile)\n"
       << partitions_text(plan, measured);
  if (requests) text << throughput_text(*requests);
  for (size_t k = 0; k < outputs.size(); ++k) {
    text << "output       " << output_infos[k].name << " " << dtype_name(outputs[k].dtype()) << " "
         << outputs[k].shape().to_string() << "\n";
  }
  if (!args.outputs_dir.empty()) text << "written      " << args.outputs_dir << "\n";
  if (!args.trace_path.empty()) text << "trace        " << args.trace_path << "\n";
  if (args.profile) text << profile_text(exe.profile());
  return text.str();
}

}  // namespace hsched::cli
