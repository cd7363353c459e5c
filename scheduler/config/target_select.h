// Choosing what to plan for from the command line: --target/--config with "this-machine" routed
// to discovery, and --devices restricting a target to some of its devices.
#pragma once

#include <set>
#include <string>

#include "hsched/device.h"
#include "hsched/policy.h"
#include "hsched/status.h"
#include "scheduler/config/config_yaml.h"

namespace hsched::sched {

// A profile's devices that `found` (this machine's discovered target) has too, at the same
// locator (the host: any host CPU) with the same name, become present and run here: so a
// calibrated profile (its devices carry the locator they were measured at) runs where it was
// measured. Devices without a locator stay planned-only.
Target bind_present(Target target, const Target& found);

// resolve_target / load_deployment (config_yaml.h) with "this-machine" built by discover_target,
// then bind_present for profiles whose devices carry locators.
Result<Target> resolve_target_or_discover(const std::string& name_or_path);
Result<Deployment> load_deployment_or_discover(const std::string& path);

// The ids of the devices of `target` that some selector of `list` matches (comma-separated kinds,
// APIs or ids as in match_devices); errors as restrict_devices'.
Result<std::set<std::string>> listed_devices(const Target& target, const std::string& list);

// Keeps the devices of `target` that some selector of `list` matches (comma-separated kinds,
// APIs or ids as in match_devices), in target order, and the host CPU, every plan's last resort.
// InvalidArgument "--devices: ..." when the list is empty or a selector matches no device (naming
// it and the target's devices).
Result<Target> restrict_devices(const Target& target, const std::string& list);

// The policy of `--devices LIST` when no --policy or --config names one: every op to the first
// listed device that can run it, in list order, at `precision` (the host CPU, "cpu", in fp32);
// the host CPU in fp32 as the last resort; strict objective; the default policy's tolerances.
Policy devices_policy(const std::string& list, Precision precision);

}  // namespace hsched::sched
