// `hsched run`: import a model, compile it for the devices asked for, run it and time it.
#pragma once

#include <string>
#include <vector>

#include "hsched/status.h"

namespace hsched::cli {

struct RunArgs {
  std::string model_path;
  std::vector<std::string> input_shapes;  // "NAME=d1,d2,..." as given to --input-shape
  std::string devices = "cpu";            // comma-separated: cpu (more with later backends)
  std::string inputs_dir;                 // input_K.pb files; seeded random inputs when empty
  std::string outputs_dir;                // output_K.pb files written here when set
  int iterations = 10;
  int warmup = 2;
  int threads = 2;
  bool json = false;
};

// Returns the report (text or JSON). Output files are written only after every run succeeded.
Result<std::string> run_model(const RunArgs& args);

}  // namespace hsched::cli
