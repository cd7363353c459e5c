// `hsched info` and `hsched demo`: import a model (or build the demo) and report on it.
#pragma once

#include <string>
#include <vector>

#include "hsched/status.h"

namespace hsched::cli {

struct InfoArgs {
  std::string model_path;                 // info only
  std::vector<std::string> input_shapes;  // "NAME=d1,d2,..." as given to --input-shape
  bool json = false;
};

// Returns the report (text or JSON, newline-terminated); the caller prints it only on success.
Result<std::string> run_info(const InfoArgs& args);
Result<std::string> run_demo(const InfoArgs& args);

}  // namespace hsched::cli
