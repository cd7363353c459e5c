// `hsched run`: import a model, compile it for the devices asked for, run it and time it.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "backends/cpu/program.h"
#include "cli/plan_command.h"
#include "hsched/status.h"

namespace hsched::cli {

struct RunArgs {
  std::string model_path;
  std::vector<std::string> input_shapes;  // "NAME=d1,d2,..." as given to --input-shape
  // Target, policy and --devices: the model is planned first, and runs only when every device
  // of the plan is present and executable here (the CPU until the executor of issue 6).
  PlanSourceArgs source;
  std::string inputs_dir;   // input_K.pb files; seeded random inputs when empty
  std::string outputs_dir;  // output_K.pb files written here when set
  int iterations = 10;
  int warmup = 2;
  int threads = 2;
  bool json = false;
  bool profile = false;  // time every step; the report lists time per op type and the slowest steps
};

// Returns the report (text or JSON). Output files are written only after every run succeeded.
// When the policy's fallback mode is `warn` and nodes fell back, one summary line goes to
// `warnings` (stderr).
Result<std::string> run_model(const RunArgs& args, std::ostream& warnings);

struct TimedRuns {
  std::vector<Tensor> outputs;  // of the last run
  double median_ms = 0, min_ms = 0, max_ms = 0;
};

// Runs `program` warmup + iterations times on `inputs`, timing the last `iterations` runs.
Result<TimedRuns> time_runs(cpu::CpuProgram& program, const std::vector<Tensor>& inputs, int warmup,
                            int iterations);

// Deterministic inputs for every graph input: floats in [-1, 1), integers and bools in {0, 1}.
std::vector<Tensor> seeded_inputs(const Graph& graph);

}  // namespace hsched::cli
