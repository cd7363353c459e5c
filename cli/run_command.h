// `hsched run`: import a model, compile it for the devices asked for, run it and time it.
#pragma once

#include <algorithm>
#include <chrono>
#include <ostream>
#include <string>
#include <vector>

#include "cli/plan_command.h"
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
  int threads = 2;
  int64_t compile_timeout_ms = -1;  // < 0: the deploy file's, else 30000
  bool json = false;
  bool profile = false;  // time every step; the report lists time per op type and the slowest steps
};

// Returns the report (text or JSON). Output files are written only after every run succeeded.
// When the policy's fallback mode is `warn` and nodes fell back, one summary line goes to
// `warnings` (stderr).
Result<std::string> run_model(const RunArgs& args, std::ostream& warnings);

struct TimedRuns {
  std::vector<Tensor> outputs;  // of the last run
  double first_ms = 0;          // the first run after compiling (warm-up or timed)
  double median_ms = 0, min_ms = 0, max_ms = 0;
};

double median_of(std::vector<double> values);

// Runs `program` (anything with run(inputs) and reset_profile()) warmup + iterations times on
// `inputs`, timing the last `iterations` runs; the profile covers those runs only.
template <typename Program>
Result<TimedRuns> time_runs(Program& program, const std::vector<Tensor>& inputs, int warmup,
                            int iterations) {
  using Clock = std::chrono::steady_clock;
  TimedRuns timed;
  std::vector<double> times;
  for (int i = 0; i < warmup + iterations; ++i) {
    const auto start = Clock::now();
    auto result = program.run(inputs);
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (!result.is_ok()) return result.status();
    if (i == 0) timed.first_ms = ms;
    if (i >= warmup) times.push_back(ms);
    if (i + 1 == warmup) program.reset_profile();
    timed.outputs = std::move(result).value();
  }
  const auto [min_it, max_it] = std::minmax_element(times.begin(), times.end());
  timed.min_ms = *min_it;
  timed.max_ms = *max_it;
  timed.median_ms = median_of(times);
  return timed;
}

// Deterministic inputs for every graph input: floats in [-1, 1), integers and bools in {0, 1}.
std::vector<Tensor> seeded_inputs(const Graph& graph);

}  // namespace hsched::cli
