#include "scheduler/config/discover.h"

#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <utility>

#include "hsched/config.h"

namespace hsched::config {
namespace {

constexpr const char* kNpu3720Target = "core-ultra-7-155h";
constexpr const char* kNpu3720Id = "npu0";

}  // namespace

const BackendRegistry& backends() {
  static const BackendRegistry registry = make_backends({shipped_npu_3720_profile});
  return registry;
}

std::optional<DeviceProfile> shipped_npu_3720_profile() {
  auto target =
      load_target((configs_dir() / "targets" / (std::string(kNpu3720Target) + ".yaml")).string());
  if (!target.is_ok()) return std::nullopt;
  const DeviceProfile* npu = target->find(kNpu3720Id);
  if (npu == nullptr) return std::nullopt;
  return *npu;
}

std::optional<std::string> same_device(const DeviceProfile& a, const DeviceProfile& b) {
  if (a.kind != b.kind) return std::nullopt;
  if (!a.pci_address.empty() && a.pci_address == b.pci_address) return "pci " + a.pci_address;
  if (!a.uuid.empty() && a.uuid == b.uuid) return "uuid " + a.uuid;
  return std::nullopt;
}

std::vector<Discoverer> default_discoverers(std::optional<DeviceApi> only) {
  std::vector<Discoverer> discoverers;
  for (const auto& backend : backends().backends()) {
    const Backend* found = backend.get();
    if (only && found->api() != *only) continue;
    discoverers.push_back([found] { return found->discover(); });
  }
  return discoverers;
}

Target discover_target(const std::vector<Discoverer>& discoverers) {
  Target target;
  target.name = kThisMachineTarget;
  target.source = "discovered";
  std::map<std::string, int> count;  // per id family
  for (const Discoverer& discoverer : discoverers) {
    for (DeviceProfile device : discoverer()) {
      // Seen before through another API: a view of that device, not a device of its own.
      const auto seen =
          std::find_if(target.devices.begin(), target.devices.end(),
                       [&](const DeviceProfile& d) { return same_device(d, device); });
      if (seen != target.devices.end()) {
        seen->views.push_back(
            {device.api, device.name, device.locator, *same_device(*seen, device)});
        continue;
      }
      const std::string family = !device.id.empty() && device.id.back() == '*'
                                     ? device.id.substr(0, device.id.size() - 1)
                                     : std::string(device_kind_name(device.kind));
      device.id = family + std::to_string(count[family]++);
      device.present = true;
      target.devices.push_back(std::move(device));
    }
  }
  return target;
}

}  // namespace hsched::config

namespace hsched {

Target discover_target() { return config::discover_target(config::default_discoverers()); }

Target discover_target_for(const std::string& device_list) {
  std::stringstream stream(device_list);
  std::string selector;
  bool host_only = false;
  while (std::getline(stream, selector, ',')) {
    if (selector.empty()) continue;
    if (selector != "cpu" && selector != "host") return discover_target();
    host_only = true;
  }
  if (!host_only) return discover_target();
  return config::discover_target(config::default_discoverers(DeviceApi::kHost));
}

}  // namespace hsched
