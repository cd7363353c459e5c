// What to plan for: this machine's devices (discovery), config files (docs/config-schema.md):
// target profiles (configs/targets/*.yaml), policies (configs/policies/*.yaml) and deployments
// (configs/deploy/*.yaml: a target + a policy + a cache dir and deadlines), read with yaml-cpp,
// and the command line's choices among them (--target, --config, --devices).
//
// Every loader fails with InvalidArgument and one line "<file>: <key path>: <what is wrong>"
// (a YAML syntax error: "<file>:<line>:<column>: ..."); nothing throws, whatever the file holds.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <set>
#include <string>

#include "hsched/device.h"
#include "hsched/policy.h"
#include "hsched/status.h"

namespace hsched {

// The schema version this build reads; every file states it (`schema_version: 1`).
inline constexpr int64_t kConfigSchemaVersion = 1;

// The target made from the devices found at run time, not from a file.
inline constexpr const char* kThisMachineTarget = "this-machine";

// A target and a policy to plan with, plus what running needs (configs/deploy/*.yaml).
struct Deployment {
  std::string name;    // `name:`, else the file's stem
  std::string source;  // the file it came from
  Target target;
  Policy policy;
  std::string cache_dir;              // compiled-program cache; "~" expanded, absolute
  double compile_timeout_ms = 30000;  // per partition compile
  // Runs the compile cost is amortised over: the file's `expected_runs` when given, else the
  // policy's. `policy.expected_runs` holds the same value.
  int64_t expected_runs = 100;
};

// The folder shipped configs are looked up in: $HSCHED_CONFIGS_DIR when set, else the configs
// of the install this library belongs to (<prefix>/share/hsched/configs), else the source tree's
// configs/ folder it was built from.
std::filesystem::path configs_dir();

Result<Target> load_target(const std::string& path);
Result<Policy> load_policy(const std::string& path);

// Builds the "this-machine" target (scheduler/config/discover.h's discover_target); the config
// loaders do not discover devices themselves.
using DiscoverFn = std::function<Target()>;

// `target:` and `policy:` name a shipped config (a bare name: configs/targets/NAME.yaml) or a
// file relative to the deployment file. `target: this-machine` calls `discover`, and fails
// naming the key when none is given.
Result<Deployment> load_deployment(const std::string& path, const DiscoverFn& discover = {});

// What `--target` and `--policy` accept: a bare name ("core-ultra-7-155h", "default") looked up
// in configs_dir(), or a path to a YAML file (containing '/' or ending in .yaml/.yml). The
// target "this-machine" calls `discover`; without one it is an error.
Result<Target> resolve_target(const std::string& name_or_path, const DiscoverFn& discover = {});

// A target profile as YAML in the schema load_target reads, `header` (lines without '#') first
// as comments. What `hsched calibrate` writes; load_target(target_yaml(t)) gives t back.
std::string target_yaml(const Target& target, const std::string& header);
Result<Policy> resolve_policy(const std::string& name_or_path);

// The devices of this machine, from every backend of this build (CPU, OpenCL, Level Zero), as the
// target "this-machine" (kThisMachineTarget, source "discovered"): ids by kind ("cpu0", "gpu0",
// "npu0"), every device present. A device two APIs see is listed once (DeviceProfile::views).
// Never fails: a missing driver means no devices of its API.
Target discover_target();

// discover_target() for a --devices list (comma-separated selectors, as in match_devices): a list
// of host selectors only ("cpu", "host") probes the host CPU alone, so that such a run loads no
// OpenCL or Level Zero driver; any other list probes every backend.
Target discover_target_for(const std::string& device_list);

// For a demonstration on a machine without an NPU: makes this process use hsched's simulated NPU
// driver (a Level Zero driver) when Level Zero has not been initialized yet, ZE_ENABLE_ALT_DRIVERS
// is unset and this machine shows no NPU. The driver is the install's own (<libdir>/hsched),
// else `driver_path` (the build tree's) when it is a file. Returns whether it did; its devices'
// names then say "simulated".
bool use_simulated_npu_if_none(const std::string& driver_path);

// A profile's devices that `found` (this machine's discovered target) has too, at the same
// locator (the host: any host CPU) with the same name, become present and run here: so a
// calibrated profile (its devices carry the locator they were measured at) runs where it was
// measured. Devices without a locator stay planned-only.
Target bind_present(Target target, const Target& found);

// resolve_target / load_deployment (above) with "this-machine" built by discover_target,
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
// listed device that can run it, in list order, at `precision` (the host CPU, "cpu", in fp32 when
// fp16 is asked); a device that computes no bf16 for an op substitutes fp16, else fp32; the host
// CPU in fp32 as the last resort; strict objective; the default policy's tolerances.
Policy devices_policy(const std::string& list, Precision precision);

}  // namespace hsched
