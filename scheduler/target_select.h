// Choosing what to plan for from the command line: --target/--config with "this-machine" routed
// to discovery, and --devices restricting a target to some of its devices.
#pragma once

#include <string>

#include "hsched/device.h"
#include "hsched/status.h"
#include "scheduler/config_yaml.h"

namespace hsched::sched {

// resolve_target / load_deployment (config_yaml.h) with "this-machine" built by discover_target.
Result<Target> resolve_target_or_discover(const std::string& name_or_path);
Result<Deployment> load_deployment_or_discover(const std::string& path);

// Keeps the devices of `target` that some selector of `list` matches (comma-separated kinds,
// APIs or ids as in match_devices), in target order. InvalidArgument "--devices: ..." when the
// list is empty or a selector matches no device (naming it and the target's devices). The CPU is
// not kept implicitly: a node only the CPU could run then makes schedule() fail, naming it.
Result<Target> restrict_devices(const Target& target, const std::string& list);

}  // namespace hsched::sched
