#include "cli/devices_command.h"

#include <iomanip>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/text_table.h"
#include "hsched/config.h"
#include "hsched/report.h"

namespace hsched::cli {
namespace {

std::string peaks_text(const DeviceProfile& device) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(0);
  for (Precision p : device.precisions()) {
    if (text.tellp() > 0) text << ", ";
    text << precision_name(p) << " " << device.peak_gflops.at(p);
  }
  return text.str();
}

// Simulated devices say so in their name (hsched's simulated NPU driver: "... (simulated by
// hsched)"); every output repeats it.
bool is_simulated(const DeviceProfile& device) {
  return device.name.find("simulated") != std::string::npos;
}

nlohmann::json device_json(const DeviceProfile& device) {
  nlohmann::json json = {{"id", device.id},
                         {"kind", device_kind_name(device.kind)},
                         {"api", device_api_name(device.api)},
                         {"name", device.name},
                         {"present", device.present},
                         // Real hardware or a real driver (PoCL included), or hsched's
                         // simulated NPU driver (its name says so too).
                         {"simulated", is_simulated(device)},
                         {"precisions", nlohmann::json::array()},
                         {"peak_gflops", nlohmann::json::object()},
                         {"memory_bandwidth_gbps", device.memory_bandwidth_gbps},
                         {"memory_bytes", device.memory_bytes},
                         {"zero_copy", device.zero_copy}};
  for (Precision p : device.precisions()) {
    json["precisions"].push_back(precision_name(p));
    json["peak_gflops"][precision_name(p)] = device.peak_gflops.at(p);
  }
  return json;
}

}  // namespace

Result<std::string> run_devices(const DevicesArgs& args) {
  auto resolved = resolve_target_or_discover(
      args.target.empty() ? std::string(kThisMachineTarget) : args.target);
  if (!resolved.is_ok()) return resolved.status().with_context("--target");
  const Target& target = *resolved;
  // A GPU seen through OpenCL and Level Zero is listed once (as the OpenCL device, which runs
  // it), with its Level Zero view beside it (DeviceProfile::views).
  if (args.json) {
    nlohmann::json json = {{"schema_version", kReportSchemaVersion},
                           {"target", target.name},
                           {"source", target.source}};
    json["devices"] = nlohmann::json::array();
    for (const DeviceProfile& device : target.devices) {
      nlohmann::json entry = device_json(device);
      for (const DeviceProfile::View& view : device.views) {
        entry[device_api_name(view.api)] = {
            {"name", view.name}, {"locator", view.locator}, {"matched_by", view.matched_by}};
      }
      json["devices"].push_back(std::move(entry));
    }
    return json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  }
  std::vector<std::vector<std::string>> rows = {
      {"id", "kind", "api", "present", "peak GFLOP/s (int8: GOP/s)", "name"}};
  for (const DeviceProfile& device : target.devices) {
    std::string name = device.name;
    for (const DeviceProfile::View& view : device.views) {
      name += " [also " + std::string(device_api_name(view.api)) + ": " + view.name + ", " +
              view.matched_by + "]";
    }
    rows.push_back({device.id, device_kind_name(device.kind), device_api_name(device.api),
                    device.present ? "yes" : "planned", peaks_text(device), name});
  }
  return "target " + target.name + " (" + target.source + ")\n" + format_columns(rows);
}

}  // namespace hsched::cli
