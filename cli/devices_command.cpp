#include "cli/devices_command.h"

#include <iomanip>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/text_table.h"
#include "scheduler/target_select.h"

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

nlohmann::json device_json(const DeviceProfile& device) {
  nlohmann::json json = {{"id", device.id},
                         {"kind", device_kind_name(device.kind)},
                         {"api", device_api_name(device.api)},
                         {"name", device.name},
                         {"present", device.present},
                         // Real hardware or a real driver (PoCL included). The simulated NPU
                         // driver (issue 7) is the only device that will report true.
                         {"simulated", false},
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
  auto resolved = sched::resolve_target_or_discover(
      args.target.empty() ? std::string(kThisMachineTarget) : args.target);
  if (!resolved.is_ok()) return resolved.status().with_context("--target");
  const Target& target = *resolved;
  if (args.json) {
    nlohmann::json json = {{"target", target.name}, {"source", target.source}};
    json["devices"] = nlohmann::json::array();
    for (const DeviceProfile& device : target.devices)
      json["devices"].push_back(device_json(device));
    return json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  }
  std::vector<std::vector<std::string>> rows = {
      {"id", "kind", "api", "present", "peak GFLOP/s (int8: GOP/s)", "name"}};
  for (const DeviceProfile& device : target.devices) {
    rows.push_back({device.id, device_kind_name(device.kind), device_api_name(device.api),
                    device.present ? "yes" : "planned", peaks_text(device), device.name});
  }
  return "target " + target.name + " (" + target.source + ")\n" + format_columns(rows);
}

}  // namespace hsched::cli
