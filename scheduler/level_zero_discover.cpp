#include "scheduler/level_zero_discover.h"

#include <algorithm>
#include <utility>

#include "backends/opencl/device.h"
#include "scheduler/config_yaml.h"

namespace hsched::sched {
namespace {

constexpr const char* kNpu3720Target = "core-ultra-7-155h";
constexpr const char* kNpu3720Id = "npu0";

bool is_gpu(const opencl::DeviceInfo& info) { return (info.type & CL_DEVICE_TYPE_GPU) != 0; }

OpenClIdentity opencl_identity(const opencl::DeviceInfo& info) {
  OpenClIdentity identity;
  const std::string& extensions = info.extensions;
  auto has = [&](const std::string& name) {
    return (" " + extensions + " ").find(" " + name + " ") != std::string::npos;
  };
  if (has("cl_khr_pci_bus_info")) {
    cl_device_pci_bus_info_khr bus{};
    if (clGetDeviceInfo(info.device(), CL_DEVICE_PCI_BUS_INFO_KHR, sizeof(bus), &bus, nullptr) ==
        CL_SUCCESS) {
      identity.pci =
          level_zero::PciAddress{bus.pci_domain, bus.pci_bus, bus.pci_device, bus.pci_function};
    }
  }
  if (has("cl_khr_device_uuid")) {
    level_zero::DeviceUuid uuid{};
    static_assert(sizeof(uuid) == CL_UUID_SIZE_KHR);
    if (clGetDeviceInfo(info.device(), CL_DEVICE_UUID_KHR, uuid.size(), uuid.data(), nullptr) ==
        CL_SUCCESS) {
      identity.uuid = uuid;
    }
  }
  return identity;
}

// Level Zero GPUs of this machine that are also OpenCL devices, matched once each.
std::vector<CrossApiView> match(const std::vector<level_zero::DeviceInfo>& ze_devices) {
  std::vector<CrossApiView> views;
  bool any_gpu = false;
  for (const auto& ze : ze_devices) any_gpu |= !ze.is_npu();
  if (!any_gpu) return views;
  std::vector<bool> taken(ze_devices.size(), false);
  for (const opencl::DeviceInfo& ocl : opencl::enumerate_devices()) {
    if (!is_gpu(ocl)) continue;
    const OpenClIdentity identity = opencl_identity(ocl);
    for (size_t z = 0; z < ze_devices.size(); ++z) {
      if (taken[z] || ze_devices[z].is_npu()) continue;
      if (auto by = same_device(identity, ze_devices[z])) {
        views.push_back(
            {opencl::locator(ocl), level_zero::locator(ze_devices[z]), ze_devices[z].name, *by});
        taken[z] = true;
        break;
      }
    }
  }
  return views;
}

}  // namespace

std::optional<DeviceProfile> shipped_npu_3720_profile() {
  auto target =
      load_target((configs_dir() / "targets" / (std::string(kNpu3720Target) + ".yaml")).string());
  if (!target.is_ok()) return std::nullopt;
  const DeviceProfile* npu = target->find(kNpu3720Id);
  if (npu == nullptr) return std::nullopt;
  return *npu;
}

DeviceProfile level_zero_profile(const level_zero::DeviceInfo& info,
                                 const std::optional<DeviceProfile>& shipped_npu) {
  DeviceProfile conservative = level_zero::device_profile(info);
  if (!level_zero::is_npu_3720(info) || !shipped_npu) return conservative;
  DeviceProfile profile = *shipped_npu;  // figures, op list and precisions of the NPU 3720
  profile.id.clear();                    // numbered by discover_target: npu0, npu1...
  profile.name = conservative.name;      // what the driver calls it (a simulation says so)
  profile.kind = DeviceKind::kNpu;
  profile.api = DeviceApi::kLevelZero;
  profile.present = true;
  profile.locator = conservative.locator;
  if (info.memory_bytes > 0) profile.memory_bytes = info.memory_bytes;
  return profile;
}

std::optional<std::string> same_device(const OpenClIdentity& ocl,
                                       const level_zero::DeviceInfo& ze) {
  if (ocl.pci && ze.pci && *ocl.pci == *ze.pci) return "pci " + ze.pci->text();
  const level_zero::DeviceUuid zero{};
  if (ocl.uuid && *ocl.uuid != zero && *ocl.uuid == ze.uuid) {
    return "uuid " + level_zero::uuid_text(ze.uuid);
  }
  return std::nullopt;
}

std::vector<CrossApiView> cross_api_views() { return match(level_zero::enumerate_devices()); }

std::vector<DeviceProfile> discover_level_zero() {
  std::vector<DeviceProfile> profiles;
  const std::vector<level_zero::DeviceInfo> devices = level_zero::enumerate_devices();
  if (devices.empty()) return profiles;
  const std::vector<CrossApiView> views = match(devices);
  std::optional<DeviceProfile> shipped_npu;
  if (std::any_of(devices.begin(), devices.end(), level_zero::is_npu_3720)) {
    shipped_npu = shipped_npu_3720_profile();
  }
  for (const level_zero::DeviceInfo& info : devices) {
    const std::string where = level_zero::locator(info);
    const bool seen_through_opencl =
        std::any_of(views.begin(), views.end(),
                    [&](const CrossApiView& view) { return view.level_zero_locator == where; });
    if (seen_through_opencl) continue;  // listed once: as the OpenCL device
    profiles.push_back(level_zero_profile(info, shipped_npu));
  }
  return profiles;
}

}  // namespace hsched::sched
