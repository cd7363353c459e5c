// `hsched run`: import a model, compile it for the devices asked for, run it and time it.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include "cli/plan_command.h"
#include "hsched/calibrate.h"
#include "hsched/executor.h"
#include "hsched/model.h"
#include "hsched/status.h"

namespace hsched::cli {

struct RunArgs {
  std::string model_path;
  std::vector<std::string> input_shapes;  // "NAME=d1,d2,..." as given to --input-shape
  // Target, policy and --devices: the model is planned, then every partition compiled for its
  // device (hsched/executor.h); a plan for devices not present here is refused.
  PlanSourceArgs source;
  std::string inputs_dir;   // input_K.pb files; seeded random inputs when empty
  std::string outputs_dir;  // output_K.pb files written here when set
  int iterations = 10;
  int warmup = 2;
  int threads = default_cpu_threads();
  int64_t compile_timeout_ms = -1;  // < 0: the deploy file's, else 30000
  bool json = false;
  bool profile = false;  // time every step; the report lists time per op type and the slowest steps
  bool verify = false;   // check non-CPU partitions against the CPU (or the policy's `verify`)
  bool progressive = false;     // ExecutorOptions::progressive_start
  bool keep_denormals = false;  // --no-flush-denormals: IEEE subnormals on the CPU (slow)
  int64_t memory_limit_mb = 0;  // a CPU program's memory cap; 0: the machine's memory
  std::string trace_path;       // Chrome trace-event JSON of every run, written here when set
  // After the timed runs, `requests` more (0: none) one by one, and with mode "throughput" the
  // same requests again pipelined through Executable::run_stream.
  int requests = 0;
  std::string mode = "latency";  // latency or throughput
};

// Returns the report (text or JSON). Output files are written only after every run succeeded.
// When the policy's fallback mode is `warn` and nodes fell back, one summary line goes to
// `warnings` (stderr).
Result<std::string> run_model(const RunArgs& args, std::ostream& warnings);

// Run records kept per pass (warm-up, timed, requests one by one, pipelined): the first ones, so
// that a million iterations do not hold a million records. Medians and the trace use these.
inline constexpr size_t kMaxKeptRecords = 10000;

struct TimedRuns {
  std::vector<Tensor> outputs;  // of the last run
  double first_ms = 0;          // the first run after compiling (warm-up or timed)
  double median_ms = 0, min_ms = 0, max_ms = 0;
  double p90_ms = 0, p99_ms = 0;  // nearest-rank percentiles of the timed runs (p50: median_ms)
  double runs_per_s = 0;          // timed runs over their total time, one at a time
  std::vector<RunRecord> warmup_records;  // what each run did (hsched/executor.h), the first
  std::vector<RunRecord> records;         // kMaxKeptRecords warm-up and timed runs
};

// Runs `program` (anything with run(inputs, RunRecord*) and reset_profile()) warmup + iterations
// times on `inputs`, timing the last `iterations` runs; the profile covers those runs only.
template <typename Program>
Result<TimedRuns> time_runs(Program& program, const std::vector<Tensor>& inputs, int warmup,
                            int iterations) {
  using Clock = std::chrono::steady_clock;
  TimedRuns timed;
  std::vector<double> times;
  for (int i = 0; i < warmup + iterations; ++i) {
    RunRecord record;
    const auto start = Clock::now();
    auto result = program.run(inputs, &record);
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (!result.is_ok()) return result.status();
    if (i == 0) timed.first_ms = ms;
    if (i >= warmup) times.push_back(ms);
    if (i + 1 == warmup) program.reset_profile();
    auto& kept = i >= warmup ? timed.records : timed.warmup_records;
    if (kept.size() < kMaxKeptRecords) kept.push_back(std::move(record));
    timed.outputs = std::move(result).value();
  }
  const auto [min_it, max_it] = std::minmax_element(times.begin(), times.end());
  timed.min_ms = *min_it;
  timed.max_ms = *max_it;
  timed.median_ms = median_of(times);
  double total_ms = 0;
  for (double ms : times) total_ms += ms;
  timed.runs_per_s = total_ms > 0 ? 1000.0 * static_cast<double>(times.size()) / total_ms : 0;
  std::sort(times.begin(), times.end());
  const auto rank = [&](double p) {  // nearest rank: the smallest value with p% at or below it
    const auto k = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(times.size())));
    return times[std::min(times.size(), std::max<size_t>(k, 1)) - 1];
  };
  timed.p90_ms = rank(90);
  timed.p99_ms = rank(99);
  return timed;
}

// One partition's medians over run records (ms and bytes; hsched/executor.h's PartitionRun).
struct PartitionTiming {
  int runs = 0;  // records that ran it
  double measured_ms = 0;
  int64_t upload_bytes = 0;
  int64_t zero_copy_bytes = 0;  // inputs the device read in place
  double upload_ms = 0;
  int64_t download_bytes = 0;
  double download_ms = 0;
  double verify_ms = 0;
};

// Per Plan::partitions index; partitions no record ran are all zeros.
std::vector<PartitionTiming> partition_timings(size_t partitions,
                                               const std::vector<RunRecord>& records);
// The median of the records' end - start (ms); 0 without records.
double median_request_ms(const std::vector<RunRecord>& records);
// "partition device nodes predicted measured upload download", each line indented two spaces:
// a row per partition (its predicted run, the records' medians) and one for the whole
// request (Plan::predicted_run_ms, the median request).
std::string partition_table(const Plan& plan, const std::vector<RunRecord>& records);

// Deterministic inputs for every model input: floats in [-1, 1), integers and bools in {0, 1}.
// `request` varies them (request 0: the same inputs every time).
std::vector<Tensor> seeded_inputs(const Model& model, int request = 0);

// input_K.pb files of `dir`, one per model input, checked against the inputs' dtypes and shapes;
// seeded_inputs(model) when `dir` is empty.
Result<std::vector<Tensor>> load_inputs(const Model& model, const std::string& dir);

}  // namespace hsched::cli
