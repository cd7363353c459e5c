#include "hsched/config.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "scheduler/config/discover.h"

namespace hsched {
namespace {

Target discover() { return discover_target(); }

std::string device_ids(const Target& target) {
  std::string ids;
  for (const DeviceProfile& device : target.devices) ids += (ids.empty() ? "" : ", ") + device.id;
  return ids.empty() ? "none" : ids;
}

}  // namespace

Target bind_present(Target target, const Target& found) {
  for (DeviceProfile& device : target.devices) {
    if (device.locator.empty() || device.present) continue;
    for (const DeviceProfile& here : found.devices) {
      const bool same_place = device.api == DeviceApi::kHost ? here.api == DeviceApi::kHost
                                                             : here.locator == device.locator;
      if (same_place && here.api == device.api && here.name == device.name) {
        device.present = true;
        if (device.api != DeviceApi::kHost) device.locator = here.locator;
      }
    }
  }
  return target;
}

namespace {

// Profiles that name where their devices were measured (calibrated ones) run on them here.
Target bind_if_located(Target target) {
  const bool located = std::any_of(target.devices.begin(), target.devices.end(),
                                   [](const DeviceProfile& d) { return !d.locator.empty(); });
  if (!located || target.source == "discovered") return target;
  return bind_present(std::move(target), discover_target());
}

}  // namespace

Result<Target> resolve_target_or_discover(const std::string& name_or_path) {
  HSCHED_ASSIGN_OR_RETURN(Target target, resolve_target(name_or_path, discover));
  return bind_if_located(std::move(target));
}

Result<Deployment> load_deployment_or_discover(const std::string& path) {
  HSCHED_ASSIGN_OR_RETURN(Deployment deployment, load_deployment(path, discover));
  deployment.target = bind_if_located(std::move(deployment.target));
  return deployment;
}

Result<std::set<std::string>> listed_devices(const Target& target, const std::string& list) {
  std::set<std::string> listed;
  std::stringstream stream(list);
  std::string selector;
  while (std::getline(stream, selector, ',')) {
    if (selector.empty()) continue;
    const std::vector<std::string> ids = match_devices(target, selector);
    if (ids.empty()) {
      return invalid_argument("--devices: unknown or absent device '" + selector + "' (target " +
                              target.name + " has " + device_ids(target) + ")");
    }
    listed.insert(ids.begin(), ids.end());
  }
  if (listed.empty()) return invalid_argument("--devices: no device given");
  return listed;
}

Result<Target> restrict_devices(const Target& target, const std::string& list) {
  HSCHED_ASSIGN_OR_RETURN(const std::set<std::string> kept, listed_devices(target, list));
  Target restricted = target;
  restricted.devices.clear();
  for (const DeviceProfile& device : target.devices) {
    // The host CPU stays: it is every plan's last resort (a fallback needs somewhere to go).
    if (kept.count(device.id) != 0 || device.api == DeviceApi::kHost) {
      restricted.devices.push_back(device);
    }
  }
  return restricted;
}

Policy devices_policy(const std::string& list, Precision precision) {
  Policy policy = default_policy();
  policy.name = "devices";
  policy.source = "--devices " + list;
  policy.choices.clear();
  policy.op_choices.clear();
  policy.default_choices.clear();
  std::stringstream stream(list);
  std::string selector;
  while (std::getline(stream, selector, ',')) {
    if (selector.empty()) continue;
    // The host CPU computes no fp16: asked fp32 then. Every device is asked for bf16.
    const bool host = selector == "cpu" || selector == "host";
    policy.default_choices.push_back(
        {selector, host && precision == Precision::kFp16 ? Precision::kFp32 : precision});
  }
  // What a device computes no bf16 or int8 for runs fp16 there (the NPU), else fp32 (the CPU's
  // ops other than convolutions and matmuls).
  policy.precision_substitutes[Precision::kBf16] = {Precision::kFp16, Precision::kFp32};
  policy.precision_substitutes[Precision::kInt8] = {Precision::kFp16, Precision::kFp32};
  policy.objective = Objective::kStrict;
  policy.fallback = FallbackMode::kWarn;
  return policy;
}

}  // namespace hsched
