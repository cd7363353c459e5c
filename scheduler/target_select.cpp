#include "scheduler/target_select.h"

#include <set>
#include <sstream>

#include "scheduler/discover.h"

namespace hsched::sched {
namespace {

Target discover() { return discover_target(); }

std::string device_ids(const Target& target) {
  std::string ids;
  for (const DeviceProfile& device : target.devices) ids += (ids.empty() ? "" : ", ") + device.id;
  return ids.empty() ? "none" : ids;
}

}  // namespace

Result<Target> resolve_target_or_discover(const std::string& name_or_path) {
  return resolve_target(name_or_path, discover);
}

Result<Deployment> load_deployment_or_discover(const std::string& path) {
  return load_deployment(path, discover);
}

Result<Target> restrict_devices(const Target& target, const std::string& list) {
  std::set<std::string> kept;
  std::stringstream stream(list);
  std::string selector;
  while (std::getline(stream, selector, ',')) {
    if (selector.empty()) continue;
    const std::vector<std::string> ids = match_devices(target, selector);
    if (ids.empty()) {
      return invalid_argument("--devices: unknown or absent device '" + selector + "' (target " +
                              target.name + " has " + device_ids(target) + ")");
    }
    kept.insert(ids.begin(), ids.end());
  }
  if (kept.empty()) return invalid_argument("--devices: no device given");
  Target restricted = target;
  restricted.devices.clear();
  for (const DeviceProfile& device : target.devices) {
    if (kept.count(device.id) != 0) restricted.devices.push_back(device);
  }
  return restricted;
}

}  // namespace hsched::sched
