// `hsched devices`: the devices of this machine (or of a target profile) as the planner sees
// them, with the ids every --devices flag and policy accepts.
#pragma once

#include <string>

#include "hsched/status.h"

namespace hsched::cli {

struct DevicesArgs {
  std::string target;  // name or file; empty: this-machine (discovered)
  bool json = false;
};

Result<std::string> run_devices(const DevicesArgs& args);

}  // namespace hsched::cli
