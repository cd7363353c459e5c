// Writing a target profile (docs/config-schema.md), the inverse of config_yaml.cpp's reader:
// `hsched calibrate` saves its measurements this way.
#include <cmath>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "hsched/config.h"

namespace hsched {
namespace {

constexpr double kBytesPerGib = 1024.0 * 1024.0 * 1024.0;

// Shortest text that reads back as the same double.
std::string number(double value) {
  std::ostringstream out;
  out.precision(6);
  out << value;
  return out.str();
}

void emit_points(YAML::Emitter& out, const std::vector<CurvePoint>& points) {
  out << YAML::BeginSeq;
  for (const CurvePoint& point : points) {
    out << YAML::Flow << YAML::BeginMap;
    if (!point.bench.empty()) out << YAML::Key << "bench" << YAML::Value << point.bench;
    out << YAML::Key << "work" << YAML::Value << number(point.work);
    out << YAML::Key << "ms" << YAML::Value << number(point.ms);
    out << YAML::Key << "spread" << YAML::Value << number(point.spread);
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
}

void emit_curves(YAML::Emitter& out, const DeviceProfile& device) {
  out << YAML::Key << "curves" << YAML::Value << YAML::BeginMap;
  for (int c = 0; c < kCostClassCount; ++c) {
    const auto cost_class = static_cast<CostClass>(c);
    bool open = false;
    for (const auto& [key, curve] : device.curves) {
      if (key.first != cost_class || curve.empty()) continue;
      if (!open) out << YAML::Key << cost_class_name(cost_class) << YAML::Value << YAML::BeginMap;
      open = true;
      out << YAML::Key << precision_name(key.second) << YAML::Value;
      emit_points(out, curve);
    }
    if (open) out << YAML::EndMap;
  }
  out << YAML::EndMap;
}

void emit_qdq_curves(YAML::Emitter& out, const DeviceProfile& device) {
  out << YAML::Key << "qdq_curves" << YAML::Value << YAML::BeginMap;
  for (const auto& [cost_class, curve] : device.qdq_curves) {
    if (curve.empty()) continue;
    out << YAML::Key << cost_class_name(cost_class) << YAML::Value;
    emit_points(out, curve);
  }
  out << YAML::EndMap;
}

void emit_device(YAML::Emitter& out, const DeviceProfile& device) {
  out << YAML::BeginMap;
  out << YAML::Key << "id" << YAML::Value << device.id;
  out << YAML::Key << "name" << YAML::Value << device.name;
  out << YAML::Key << "kind" << YAML::Value << device_kind_name(device.kind);
  out << YAML::Key << "api" << YAML::Value << device_api_name(device.api);
  if (!device.locator.empty()) out << YAML::Key << "locator" << YAML::Value << device.locator;
  if (!device.calibration.empty()) {
    out << YAML::Key << "calibration" << YAML::Value << device.calibration;
  }
  out << YAML::Key << "peak_gflops" << YAML::Value << YAML::BeginMap;
  for (const auto& [precision, gflops] : device.peak_gflops) {
    out << YAML::Key << precision_name(precision) << YAML::Value << number(gflops);
  }
  out << YAML::EndMap;
  if (!device.efficiency.empty()) {
    out << YAML::Key << "efficiency" << YAML::Value << YAML::BeginMap;
    for (const auto& [op_class, fraction] : device.efficiency) {
      out << YAML::Key << op_class_name(op_class) << YAML::Value << number(fraction);
    }
    out << YAML::EndMap;
  }
  out << YAML::Key << "default_efficiency" << YAML::Value << number(device.default_efficiency);
  out << YAML::Key << "memory_bandwidth_gbps" << YAML::Value
      << number(device.memory_bandwidth_gbps);
  out << YAML::Key << "launch_overhead_us" << YAML::Value
      << number(device.launch_overhead_ms * 1000);
  out << YAML::Key << "run_overhead_us" << YAML::Value << number(device.run_overhead_ms * 1000);
  out << YAML::Key << "wake_overhead_us" << YAML::Value << number(device.wake_overhead_ms * 1000);
  if (device.stream_overhead_ms > 0) {
    out << YAML::Key << "stream_overhead_us" << YAML::Value
        << number(device.stream_overhead_ms * 1000);
  }
  if (device.team_wake_overhead_ms > 0) {
    out << YAML::Key << "team_wake_overhead_us" << YAML::Value
        << number(device.team_wake_overhead_ms * 1000);
  }
  if (device.dispatch_overhead_ms > 0) {
    out << YAML::Key << "dispatch_overhead_us" << YAML::Value
        << number(device.dispatch_overhead_ms * 1000);
  }
  out << YAML::Key << "zero_copy" << YAML::Value << device.zero_copy;
  if (device.transfer_bandwidth_gbps > 0) {
    out << YAML::Key << "transfer_bandwidth_gbps" << YAML::Value
        << number(device.transfer_bandwidth_gbps);
  }
  out << YAML::Key << "transfer_latency_us" << YAML::Value
      << number(device.transfer_latency_ms * 1000);
  out << YAML::Key << "memory_gib" << YAML::Value
      << number(static_cast<double>(device.memory_bytes) / kBytesPerGib);
  if (device.max_partitions > 0) {
    out << YAML::Key << "max_partitions" << YAML::Value << device.max_partitions;
  }
  out << YAML::Key << "compile_ms_per_node" << YAML::Value << number(device.compile_ms_per_node);
  out << YAML::Key << "compile_ms_per_partition" << YAML::Value
      << number(device.compile_ms_per_partition);
  if (!device.curves.empty()) emit_curves(out, device);
  if (!device.qdq_curves.empty()) emit_qdq_curves(out, device);
  if (!device.probe.empty()) {
    out << YAML::Key << "probe" << YAML::Value;
    emit_points(out, device.probe);
  }
  out << YAML::Key << "ops" << YAML::Value;
  if (device.ops.size() == 1 && device.ops[0] == "*") {
    out << "*";
  } else {
    out << YAML::Flow << device.ops;
  }
  out << YAML::EndMap;
}

}  // namespace

std::string target_yaml(const Target& target, const std::string& header) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "schema_version" << YAML::Value << kConfigSchemaVersion;
  out << YAML::Key << "kind" << YAML::Value << "target";
  out << YAML::Key << "name" << YAML::Value << target.name;
  out << YAML::Key << "devices" << YAML::Value << YAML::BeginSeq;
  for (const DeviceProfile& device : target.devices) emit_device(out, device);
  out << YAML::EndSeq << YAML::EndMap;
  std::string text;
  std::istringstream lines(header);
  for (std::string line; std::getline(lines, line);) text += "# " + line + "\n";
  return text + out.c_str() + "\n";
}

}  // namespace hsched
