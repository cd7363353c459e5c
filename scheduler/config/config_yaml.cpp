// Config files: reading a file into a checked YAML document, the target/policy/deployment
// schemas (docs/config-schema.md), and how names and relative paths resolve.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>
#include <sstream>
#include <vector>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include "core/install_paths.h"
#include "core/mapped_file.h"
#include "hsched/config.h"
#include "scheduler/config/config_node.h"

namespace hsched {
namespace {

namespace fs = std::filesystem;
using config::Bounds;
using config::ConfigNode;
using config::EnumNames;
using config::Need;
using config::read_enum_map;
using config::read_list;

constexpr Need kRequired = Need::kRequired;
constexpr Need kOptional = Need::kOptional;

constexpr EnumNames<DeviceKind> kDeviceKinds{"device kind", device_kind_name, 3};
constexpr EnumNames<DeviceApi> kDeviceApis{"device API", device_api_name, 3};
constexpr EnumNames<Precision> kPrecisions{"precision", precision_name, 4};
constexpr EnumNames<OpClass> kOpClasses{"op class", op_class_name, kOpClassCount};
constexpr EnumNames<CostClass> kCostClasses{"cost class", cost_class_name, kCostClassCount};
// The classes counted in FLOP: the enum's first (device.h), the keys of qdq_curves.
constexpr int kComputeClassCount = static_cast<int>(CostClass::kGemv) + 1;
constexpr EnumNames<CostClass> kComputeClasses{"compute class", cost_class_name,
                                               kComputeClassCount};
constexpr EnumNames<FallbackMode> kFallbackModes{"fallback mode", fallback_mode_name, 3};
constexpr EnumNames<Objective> kObjectives{"objective", objective_name, 2};
constexpr EnumNames<AccuracyMetric> kAccuracyMetrics{"metric", accuracy_metric_name, 2};

// Sane ranges, so that a typo (a unit off by 1e6, a sign) is refused rather than planned with.
constexpr Bounds kPeakGflops{0, 1e7, true};  // up to 10 PFLOP/s
constexpr Bounds kFraction{0, 1, true};      // efficiencies
constexpr Bounds kMemoryBandwidthGbps{0, 1e5, true};
constexpr Bounds kTransferBandwidthGbps{0, 1e4, false};  // 0: not given (zero-copy devices)
constexpr Bounds kMicroseconds{0, 1e6, false};           // launch and transfer latencies
constexpr Bounds kMemoryGib{0, 1e5, true};
constexpr Bounds kCompileMs{0, 1e7, false};
constexpr Bounds kCurveWork{0, 1e18, true};  // FLOP or bytes of one node
constexpr Bounds kCurveMs{0, 1e7, true};
constexpr Bounds kSpread{0, 1e3, false};
constexpr size_t kMaxCurvePoints = 1000;
constexpr Bounds kTimeoutMs{0, 8.64e7, true};  // up to a day
constexpr Bounds kTolerance{0, 1e3, false};
constexpr int64_t kMaxExpectedRuns = 1'000'000'000;
constexpr int64_t kMaxSplitEvery = 1'000'000;
constexpr int64_t kMaxPartitions = 1'000'000;
constexpr int64_t kMaxSchemaVersion = 1'000'000;
constexpr uintmax_t kMaxConfigBytes = 1 << 20;  // config files are small; refuse anything else

constexpr double kBytesPerGib = 1024.0 * 1024.0 * 1024.0;

auto read_enum(const auto& names) {
  return [&names](const ConfigNode& node) { return names.parse(node); };
}
Result<std::string> read_identifier(const ConfigNode& node) { return node.as_identifier(); }

// ---------------------------------------------------------------------------------------------
// Files

// How a config file is named in messages and in Target/Policy::source: "configs/<rest>" when it
// lies in configs_dir(), so that reports do not depend on where the tree is checked out; else
// the path as given.
std::string display_path(const fs::path& path) {
  std::error_code error;
  const fs::path file = fs::weakly_canonical(path, error);
  if (!error) {
    const fs::path root = fs::weakly_canonical(configs_dir(), error);
    const fs::path relative = file.lexically_relative(root);
    if (!error && !relative.empty() && *relative.begin() != "..") {
      return (fs::path("configs") / relative).string();
    }
  }
  return path.lexically_normal().string();
}

// Counts the documents of a YAML stream, for read_document to stop at the second. yaml-cpp 0.7
// parses a token that starts no node (a lone ',') as an empty document without consuming it, so
// LoadAll loops for ever on it; the count notices a stream that stops advancing instead.
class DocumentCount : public YAML::EventHandler {
 public:
  int documents = 0;
  bool stuck = false;
  YAML::Mark stuck_at = YAML::Mark::null_mark();

  void OnDocumentStart(const YAML::Mark& mark) override {
    stuck = documents > 0 && mark.pos == last_start_.pos;
    if (stuck) stuck_at = mark;
    last_start_ = mark;
    ++documents;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

 private:
  YAML::Mark last_start_ = YAML::Mark::null_mark();
};

// The one document of a config file. Errors are complete lines starting with `display`.
Result<ConfigNode> read_document(const fs::path& path, const std::string& display) {
  std::error_code error;
  if (!fs::exists(path, error)) return invalid_argument(display + ": file not found");
  // Opened without blocking and checked to be a regular file before it is read (a FIFO named as
  // a config would otherwise block the open for ever).
  auto mapped = MappedFile::open(path);
  if (!mapped.is_ok()) return invalid_argument(display + ": not a file");
  if ((*mapped)->size() > kMaxConfigBytes) {
    return invalid_argument(display + ": not a config file (larger than 1 MiB)");
  }
  std::stringstream text;
  text.write(reinterpret_cast<const char*>((*mapped)->data()),
             static_cast<std::streamsize>((*mapped)->size()));

  const auto syntax_error = [&display](const YAML::Mark& mark, const std::string& message) {
    const std::string where = mark.is_null() ? ""
                                             : ":" + std::to_string(mark.line + 1) + ":" +
                                                   std::to_string(mark.column + 1);
    return invalid_argument(display + where + ": YAML syntax error: " + message);
  };
  DocumentCount count;
  YAML::Node document;
  try {
    YAML::Parser parser(text);
    while (count.documents < 2 && parser.HandleNextDocument(count)) {
    }
    if (count.stuck) return syntax_error(count.stuck_at, "unexpected token");
    if (count.documents == 1) document = YAML::Load(text.str());
  } catch (const YAML::ParserException& e) {
    return syntax_error(e.mark, e.msg);
  }
  if (count.documents == 0 || (count.documents == 1 && document.IsNull())) {
    return invalid_argument(display + ": empty file (expected schema_version, kind and more)");
  }
  if (count.documents > 1) {
    return invalid_argument(display + ": more than one YAML document; a config file holds one");
  }
  return ConfigNode(document, "");
}

// schema_version and kind, checked before any other key so that a file of the wrong kind is
// named as such rather than as a list of unknown keys.
Status check_header(const ConfigNode& root, const std::string& kind) {
  HSCHED_RETURN_IF_ERROR(root.entries().status());
  int64_t version = 0;
  HSCHED_RETURN_IF_ERROR(root.read("schema_version", kRequired, 0, kMaxSchemaVersion, &version));
  if (version != kConfigSchemaVersion) {
    return root.find("schema_version")
        ->error("unsupported version " + std::to_string(version) + " (this hsched reads " +
                std::to_string(kConfigSchemaVersion) + ")");
  }
  std::string file_kind;
  HSCHED_RETURN_IF_ERROR(root.read("kind", kRequired, &file_kind));
  if (file_kind != kind) {
    const bool known = file_kind == "target" || file_kind == "policy" || file_kind == "deployment";
    return root.find("kind")->error(known ? "this file is a " + file_kind + ", expected a " + kind
                                          : "unknown kind '" + file_kind +
                                                "' (expected target, policy or deployment)");
  }
  return Status::ok();
}

// Reads `path` as a config of `kind` and hands its root to `parse(const ConfigNode&) ->
// Result<T>`. The boundary: everything yaml-cpp or the parser could throw stops here.
template <typename T, typename Parse>
Result<T> load_config(const fs::path& path, const std::string& kind, Parse parse) {
  const std::string display = display_path(path);
  try {
    HSCHED_ASSIGN_OR_RETURN(ConfigNode root, read_document(path, display));
    Status header = check_header(root, kind);
    if (!header.is_ok()) return header.with_context(display);
    Result<T> result = parse(root, display);
    if (!result.is_ok()) return result.status().with_context(display);
    return result;
  } catch (const YAML::Exception& e) {
    return invalid_argument(display + ": " + e.what());
  } catch (const std::exception& e) {
    return internal_error(display + ": reading the config failed: " + e.what());
  }
}

// ---------------------------------------------------------------------------------------------
// Targets

Result<std::vector<std::string>> read_ops(const ConfigNode& node) {
  if (auto text = node.as_string(); text.is_ok()) {
    if (*text == "*") return std::vector{*text};
    return node.type_error("a list of op types or '*'");
  }
  HSCHED_ASSIGN_OR_RETURN(std::vector<ConfigNode> items, node.items());
  if (items.empty()) return node.error("empty list (give op types, or '*' for every op)");
  std::vector<std::string> ops;
  std::set<std::string> seen;
  for (const ConfigNode& item : items) {
    HSCHED_ASSIGN_OR_RETURN(std::string op, item.as_identifier());
    if (!seen.insert(op).second) return item.error("duplicate op '" + op + "'");
    ops.push_back(std::move(op));
  }
  return ops;
}

DeviceApi default_api(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::kCpu:
      return DeviceApi::kHost;
    case DeviceKind::kGpu:
      return DeviceApi::kOpenCl;
    case DeviceKind::kNpu:
      return DeviceApi::kLevelZero;
  }
  return DeviceApi::kHost;
}

Result<CurvePoint> parse_curve_point(const ConfigNode& node) {
  HSCHED_RETURN_IF_ERROR(node.expect_keys({"bench", "work", "ms", "spread"}));
  CurvePoint point;
  HSCHED_RETURN_IF_ERROR(node.read("bench", kOptional, &point.bench));
  HSCHED_RETURN_IF_ERROR(node.read("work", kRequired, kCurveWork, &point.work));
  HSCHED_RETURN_IF_ERROR(node.read("ms", kRequired, kCurveMs, &point.ms));
  HSCHED_RETURN_IF_ERROR(node.read("spread", kOptional, kSpread, &point.spread));
  return point;
}

// Points in any order (a device's probe), bounded in count.
Result<std::vector<CurvePoint>> read_points(const ConfigNode& node) {
  HSCHED_ASSIGN_OR_RETURN(auto points, read_list<CurvePoint>(node, false, parse_curve_point));
  if (points.size() > kMaxCurvePoints) {
    return node.error(std::to_string(points.size()) + " points (at most " +
                      std::to_string(kMaxCurvePoints) + ")");
  }
  return points;
}

// A curve: points in strictly ascending work (interpolation needs an order), bounded in count.
Result<Curve> read_curve(const ConfigNode& node) {
  HSCHED_ASSIGN_OR_RETURN(Curve curve, read_points(node));
  for (size_t i = 1; i < curve.size(); ++i) {
    if (curve[i].work <= curve[i - 1].work) {
      return node.error("[" + std::to_string(i) + "].work: not above the point before (points go " +
                        "in ascending work)");
    }
  }
  return curve;
}

// curves: {class: {precision: [points]}}.
Result<std::map<std::pair<CostClass, Precision>, Curve>> read_curves(const ConfigNode& node) {
  using PerPrecision = std::map<Precision, Curve>;
  const auto read_class = [](const ConfigNode& per_class) {
    return read_enum_map<Curve>(per_class, kPrecisions, read_curve);
  };
  HSCHED_ASSIGN_OR_RETURN(auto by_class,
                          read_enum_map<PerPrecision>(node, kCostClasses, read_class));
  std::map<std::pair<CostClass, Precision>, Curve> curves;
  for (auto& [cost_class, per_precision] : by_class) {
    for (auto& [precision, curve] : per_precision) {
      curves[{cost_class, precision}] = std::move(curve);
    }
  }
  return curves;
}

Result<DeviceProfile> parse_device(const ConfigNode& node) {
  HSCHED_RETURN_IF_ERROR(node.expect_keys({"id",
                                           "name",
                                           "kind",
                                           "api",
                                           "peak_gflops",
                                           "efficiency",
                                           "default_efficiency",
                                           "memory_bandwidth_gbps",
                                           "launch_overhead_us",
                                           "zero_copy",
                                           "transfer_bandwidth_gbps",
                                           "transfer_latency_us",
                                           "memory_gib",
                                           "max_partitions",
                                           "compile_ms_per_node",
                                           "compile_ms_per_partition",
                                           "run_overhead_us",
                                           "wake_overhead_us",
                                           "team_wake_overhead_us",
                                           "stream_overhead_us",
                                           "dispatch_overhead_us",
                                           "curves",
                                           "qdq_curves",
                                           "calibration",
                                           "probe",
                                           "locator",
                                           "ops"}));
  DeviceProfile device;
  HSCHED_RETURN_IF_ERROR(node.read_with("id", kRequired, &device.id, read_identifier));
  device.name = device.id;
  HSCHED_RETURN_IF_ERROR(node.read("name", kOptional, &device.name));
  HSCHED_RETURN_IF_ERROR(node.read_with("kind", kRequired, &device.kind, read_enum(kDeviceKinds)));
  device.api = default_api(device.kind);
  HSCHED_RETURN_IF_ERROR(node.read_with("api", kOptional, &device.api, read_enum(kDeviceApis)));

  HSCHED_RETURN_IF_ERROR(
      node.read_with("peak_gflops", kRequired, &device.peak_gflops, [](const ConfigNode& peaks) {
        return read_enum_map<double>(
            peaks, kPrecisions, [](const ConfigNode& peak) { return peak.as_number(kPeakGflops); });
      }));
  if (device.peak_gflops.empty()) {
    return node.find("peak_gflops")->error("empty (give at least one precision)");
  }
  HSCHED_RETURN_IF_ERROR(node.read_with(
      "efficiency", kOptional, &device.efficiency, [](const ConfigNode& efficiencies) {
        return read_enum_map<double>(efficiencies, kOpClasses, [](const ConfigNode& fraction) {
          return fraction.as_number(kFraction);
        });
      }));
  HSCHED_RETURN_IF_ERROR(
      node.read("default_efficiency", kOptional, kFraction, &device.default_efficiency));

  HSCHED_RETURN_IF_ERROR(node.read("memory_bandwidth_gbps", kRequired, kMemoryBandwidthGbps,
                                   &device.memory_bandwidth_gbps));
  double launch_overhead_us = 0;
  HSCHED_RETURN_IF_ERROR(
      node.read("launch_overhead_us", kOptional, kMicroseconds, &launch_overhead_us));
  device.launch_overhead_ms = launch_overhead_us / 1000.0;
  HSCHED_RETURN_IF_ERROR(node.read("zero_copy", kOptional, &device.zero_copy));
  HSCHED_RETURN_IF_ERROR(node.read("transfer_bandwidth_gbps", kOptional, kTransferBandwidthGbps,
                                   &device.transfer_bandwidth_gbps));
  // A copy to a device that neither shares host memory nor states a link speed has no cost we
  // could predict; the host itself never copies.
  if (!device.zero_copy && device.api != DeviceApi::kHost && device.transfer_bandwidth_gbps == 0) {
    return node.error("transfer_bandwidth_gbps is required (> 0) when zero_copy is false");
  }
  double transfer_latency_us = 0;
  HSCHED_RETURN_IF_ERROR(
      node.read("transfer_latency_us", kOptional, kMicroseconds, &transfer_latency_us));
  device.transfer_latency_ms = transfer_latency_us / 1000.0;
  double memory_gib = 0;
  HSCHED_RETURN_IF_ERROR(node.read("memory_gib", kRequired, kMemoryGib, &memory_gib));
  device.memory_bytes = static_cast<int64_t>(std::llround(memory_gib * kBytesPerGib));
  HSCHED_RETURN_IF_ERROR(
      node.read("max_partitions", kOptional, 0, kMaxPartitions, &device.max_partitions));
  HSCHED_RETURN_IF_ERROR(
      node.read("compile_ms_per_node", kOptional, kCompileMs, &device.compile_ms_per_node));
  HSCHED_RETURN_IF_ERROR(node.read("compile_ms_per_partition", kOptional, kCompileMs,
                                   &device.compile_ms_per_partition));
  double run_overhead_us = 0;
  HSCHED_RETURN_IF_ERROR(node.read("run_overhead_us", kOptional, kMicroseconds, &run_overhead_us));
  device.run_overhead_ms = run_overhead_us / 1000.0;
  double stream_overhead_us = 0;
  HSCHED_RETURN_IF_ERROR(
      node.read("stream_overhead_us", kOptional, kMicroseconds, &stream_overhead_us));
  device.stream_overhead_ms = stream_overhead_us / 1000.0;
  double wake_overhead_us = 0;
  HSCHED_RETURN_IF_ERROR(
      node.read("wake_overhead_us", kOptional, kMicroseconds, &wake_overhead_us));
  device.wake_overhead_ms = wake_overhead_us / 1000.0;
  double team_wake_overhead_us = 0;
  HSCHED_RETURN_IF_ERROR(
      node.read("team_wake_overhead_us", kOptional, kMicroseconds, &team_wake_overhead_us));
  device.team_wake_overhead_ms = team_wake_overhead_us / 1000.0;
  double dispatch_overhead_us = 0;
  HSCHED_RETURN_IF_ERROR(
      node.read("dispatch_overhead_us", kOptional, kMicroseconds, &dispatch_overhead_us));
  device.dispatch_overhead_ms = dispatch_overhead_us / 1000.0;
  HSCHED_RETURN_IF_ERROR(node.read_with("curves", kOptional, &device.curves, read_curves));
  HSCHED_RETURN_IF_ERROR(
      node.read_with("qdq_curves", kOptional, &device.qdq_curves, [](const ConfigNode& by_class) {
        return read_enum_map<Curve>(by_class, kComputeClasses, read_curve);
      }));
  HSCHED_RETURN_IF_ERROR(node.read("calibration", kOptional, &device.calibration));
  HSCHED_RETURN_IF_ERROR(node.read_with("probe", kOptional, &device.probe, read_points));
  // Where a calibrated device was found; `--target FILE` runs on it when it is present again.
  HSCHED_RETURN_IF_ERROR(node.read("locator", kOptional, &device.locator));
  HSCHED_RETURN_IF_ERROR(node.read_with("ops", kRequired, &device.ops, read_ops));
  return device;
}

Result<Target> parse_target(const ConfigNode& root, const std::string& display) {
  HSCHED_RETURN_IF_ERROR(
      root.expect_keys({"schema_version", "kind", "name", "description", "devices"}));
  Target target;
  target.source = display;
  std::string description;  // for readers of the file only
  HSCHED_RETURN_IF_ERROR(root.read_with("name", kRequired, &target.name, read_identifier));
  HSCHED_RETURN_IF_ERROR(root.read("description", kOptional, &description));
  HSCHED_RETURN_IF_ERROR(
      root.read_with("devices", kRequired, &target.devices, [](const ConfigNode& devices) {
        return read_list<DeviceProfile>(devices, false, parse_device);
      }));
  std::set<std::string> ids;
  for (size_t i = 0; i < target.devices.size(); ++i) {
    if (!ids.insert(target.devices[i].id).second) {
      return invalid_argument("devices[" + std::to_string(i) + "].id: duplicate device id '" +
                              target.devices[i].id + "'");
    }
  }
  // The CPU in fp32 is every policy's last resort (policy.h), so every target has one.
  const bool has_cpu = std::any_of(target.devices.begin(), target.devices.end(), [](auto& d) {
    return d.kind == DeviceKind::kCpu && d.peak_gflops.count(Precision::kFp32) != 0;
  });
  if (!has_cpu) {
    return invalid_argument(
        "devices: no cpu device with an fp32 peak (the last resort of every "
        "plan)");
  }
  return target;
}

// ---------------------------------------------------------------------------------------------
// Policies

Result<Choice> parse_choice(const ConfigNode& node) {
  HSCHED_RETURN_IF_ERROR(node.expect_keys({"device", "precision"}));
  Choice choice;
  HSCHED_RETURN_IF_ERROR(node.read_with("device", kRequired, &choice.device, read_identifier));
  HSCHED_RETURN_IF_ERROR(
      node.read_with("precision", kRequired, &choice.precision, read_enum(kPrecisions)));
  return choice;
}

Result<std::vector<Choice>> read_choices(const ConfigNode& node) {
  return read_list<Choice>(node, false, parse_choice);
}

Result<std::map<std::string, std::vector<Choice>>> read_op_choices(const ConfigNode& node) {
  HSCHED_ASSIGN_OR_RETURN(auto entries, node.entries());
  std::map<std::string, std::vector<Choice>> op_choices;
  for (const auto& [op, choices_node] : entries) {
    HSCHED_ASSIGN_OR_RETURN(op_choices[op], read_choices(choices_node));
  }
  return op_choices;
}

Result<std::map<Precision, std::vector<Precision>>> read_substitutes(const ConfigNode& node) {
  HSCHED_ASSIGN_OR_RETURN(auto entries, node.entries());
  std::map<Precision, std::vector<Precision>> substitutes;
  for (const auto& [key, list] : entries) {
    HSCHED_ASSIGN_OR_RETURN(Precision wanted, kPrecisions.parse(key, list, true));
    HSCHED_ASSIGN_OR_RETURN(substitutes[wanted],
                            read_list<Precision>(list, false, read_enum(kPrecisions)));
    const auto& chosen = substitutes[wanted];
    if (std::find(chosen.begin(), chosen.end(), wanted) != chosen.end()) {
      return list.error("lists " + key + " itself");
    }
  }
  return substitutes;
}

Result<Tolerance> parse_tolerance(const ConfigNode& node) {
  HSCHED_RETURN_IF_ERROR(node.expect_keys({"atol", "rtol"}));
  Tolerance tolerance;
  HSCHED_RETURN_IF_ERROR(node.read("atol", kRequired, kTolerance, &tolerance.atol));
  HSCHED_RETURN_IF_ERROR(node.read("rtol", kRequired, kTolerance, &tolerance.rtol));
  return tolerance;
}

// accuracy: {metric: max_rel|cosine, fp16: x, bf16: x, int8: x}: max_rel a bound in (0, 1e3],
// cosine a least similarity in (0, 1].
Result<AccuracyBudget> parse_accuracy(const ConfigNode& node) {
  HSCHED_RETURN_IF_ERROR(node.expect_keys({"metric", "fp16", "bf16", "int8"}));
  AccuracyBudget budget;
  HSCHED_RETURN_IF_ERROR(
      node.read_with("metric", kRequired, &budget.metric, read_enum(kAccuracyMetrics)));
  const Bounds bounds = budget.metric == AccuracyMetric::kMaxRel ? kTolerance : kFraction;
  for (Precision precision : {Precision::kFp16, Precision::kBf16, Precision::kInt8}) {
    if (const auto limit = node.find(precision_name(precision))) {
      HSCHED_ASSIGN_OR_RETURN(budget.limits[precision], limit->as_number(bounds));
    }
  }
  if (budget.limits.empty()) return node.error("gives no precision a budget (fp16, bf16, int8)");
  return budget;
}

// `split_every` (0: off) and `verify`: a policy's keys that a deployment file may override.
Status read_split_and_verify(const ConfigNode& root, Policy& policy) {
  int64_t split_every = policy.split_every;
  HSCHED_RETURN_IF_ERROR(root.read("split_every", kOptional, 0, kMaxSplitEvery, &split_every));
  policy.split_every = static_cast<int>(split_every);
  return root.read("verify", kOptional, &policy.verify);
}

Result<Policy> parse_policy(const ConfigNode& root, const std::string& display) {
  HSCHED_RETURN_IF_ERROR(
      root.expect_keys({"schema_version", "kind", "name", "description", "choices", "default",
                        "ops", "precision_substitutes", "fallback", "objective", "tolerances",
                        "accuracy", "expected_runs", "split_every", "verify"}));
  Policy policy;
  policy.source = display;
  std::string description;  // for readers of the file only
  HSCHED_RETURN_IF_ERROR(root.read_with("name", kRequired, &policy.name, read_identifier));
  HSCHED_RETURN_IF_ERROR(root.read("description", kOptional, &description));
  HSCHED_RETURN_IF_ERROR(
      root.read_with("choices", kOptional, &policy.choices, [](const ConfigNode& node) {
        return read_enum_map<std::vector<Choice>>(node, kOpClasses, read_choices);
      }));
  HSCHED_RETURN_IF_ERROR(
      root.read_with("default", kRequired, &policy.default_choices, read_choices));
  HSCHED_RETURN_IF_ERROR(root.read_with("ops", kOptional, &policy.op_choices, read_op_choices));
  HSCHED_RETURN_IF_ERROR(root.read_with("precision_substitutes", kOptional,
                                        &policy.precision_substitutes, read_substitutes));
  HSCHED_RETURN_IF_ERROR(
      root.read_with("fallback", kOptional, &policy.fallback, read_enum(kFallbackModes)));
  HSCHED_RETURN_IF_ERROR(
      root.read_with("objective", kOptional, &policy.objective, read_enum(kObjectives)));
  HSCHED_RETURN_IF_ERROR(
      root.read_with("tolerances", kOptional, &policy.tolerances, [](const ConfigNode& node) {
        return read_enum_map<Tolerance>(node, kPrecisions, parse_tolerance);
      }));
  // Precisions the file leaves out keep the built-in tolerances.
  policy.tolerances.merge(default_policy().tolerances);
  HSCHED_RETURN_IF_ERROR(root.read_with("accuracy", kOptional, &policy.accuracy, parse_accuracy));
  HSCHED_RETURN_IF_ERROR(
      root.read("expected_runs", kOptional, 1, kMaxExpectedRuns, &policy.expected_runs));
  HSCHED_RETURN_IF_ERROR(read_split_and_verify(root, policy));
  return policy;
}

// ---------------------------------------------------------------------------------------------
// Names and references

// A bare name ("default") as opposed to a path ("./mine.yaml", "policies/x.yml").
bool is_bare_name(const std::string& text) {
  const auto ends_with = [&](const std::string& suffix) {
    return text.size() >= suffix.size() &&
           text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return text.find('/') == std::string::npos && !ends_with(".yaml") && !ends_with(".yml");
}

// Stems of configs_dir()/folder/*.yaml, sorted: for "unknown name" messages.
std::string shipped_names(const fs::path& folder) {
  std::vector<std::string> names;
  std::error_code error;
  for (fs::directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
    if (it->path().extension() == ".yaml") names.push_back(it->path().stem().string());
  }
  std::sort(names.begin(), names.end());
  std::string text;
  for (const auto& name : names) text += (text.empty() ? "" : ", ") + name;
  return text.empty() ? "none" : text;
}

// The file a name or path refers to: a bare name in configs_dir()/folder, else a path relative
// to `base_dir` (empty: the working directory). `what` is "target" or "policy".
Result<fs::path> locate_config(const std::string& name_or_path, const std::string& folder,
                               const std::string& what, const fs::path& base_dir) {
  if (name_or_path.empty()) return invalid_argument("empty " + what + " name");
  std::error_code error;
  if (is_bare_name(name_or_path)) {
    const fs::path dir = configs_dir() / folder;
    const fs::path file = dir / (name_or_path + ".yaml");
    if (!fs::exists(file, error)) {
      return invalid_argument("unknown " + what + " '" + name_or_path + "' (no " +
                              display_path(file) + "; shipped: " + shipped_names(dir) + ")");
    }
    return file;
  }
  const fs::path file = (base_dir / name_or_path).lexically_normal();
  if (!fs::exists(file, error)) {
    return invalid_argument("file not found: " + display_path(file));
  }
  return file;
}

Result<Target> resolve_target_from(const std::string& name_or_path, const fs::path& base_dir,
                                   const DiscoverFn& discover) {
  if (name_or_path == kThisMachineTarget) {
    if (!discover) {
      return invalid_argument(std::string("target '") + kThisMachineTarget +
                              "' is built by device discovery, which this caller does not offer");
    }
    return discover();
  }
  HSCHED_ASSIGN_OR_RETURN(fs::path file,
                          locate_config(name_or_path, "targets", "target", base_dir));
  return load_target(file.string());
}

Result<Policy> resolve_policy_from(const std::string& name_or_path, const fs::path& base_dir) {
  HSCHED_ASSIGN_OR_RETURN(fs::path file,
                          locate_config(name_or_path, "policies", "policy", base_dir));
  return load_policy(file.string());
}

// ---------------------------------------------------------------------------------------------
// Deployments

// "~/x" -> "$HOME/x"; a relative path is relative to the deployment file's folder.
Result<std::string> expand_cache_dir(const ConfigNode& node, const fs::path& base_dir) {
  HSCHED_ASSIGN_OR_RETURN(std::string text, node.as_string());
  if (text.empty()) return node.error("empty path");
  fs::path dir = text;
  if (text == "~" || text.rfind("~/", 0) == 0) {
    const char* home = std::getenv("HOME");
    if (home == nullptr || *home == '\0') return node.error("'~' used but HOME is not set");
    dir = text == "~" ? fs::path(home) : fs::path(home) / text.substr(2);
  } else if (text[0] == '~') {
    return node.error("'~user' paths are not supported; write the path out");
  }
  std::error_code error;
  fs::path absolute = fs::absolute(base_dir / dir, error);
  if (error) return node.error("cannot make '" + text + "' absolute");
  return absolute.lexically_normal().string();
}

Result<Deployment> parse_deployment(const ConfigNode& root, const std::string& display,
                                    const fs::path& path, const DiscoverFn& discover) {
  HSCHED_RETURN_IF_ERROR(root.expect_keys({"schema_version", "kind", "name", "description",
                                           "target", "policy", "cache_dir", "compile_timeout_ms",
                                           "expected_runs", "split_every", "verify"}));
  Deployment deployment;
  deployment.source = display;
  deployment.name = path.stem().string();
  std::string description;  // for readers of the file only
  HSCHED_RETURN_IF_ERROR(root.read_with("name", kOptional, &deployment.name, read_identifier));
  HSCHED_RETURN_IF_ERROR(root.read("description", kOptional, &description));

  // References resolve against the deployment's folder; their errors keep the referenced
  // file's own "file: key: problem" after the key naming it here.
  const fs::path base_dir = path.parent_path();
  std::string target_name;
  std::string policy_name;
  HSCHED_RETURN_IF_ERROR(root.read("target", kRequired, &target_name));
  HSCHED_RETURN_IF_ERROR(root.read("policy", kRequired, &policy_name));
  Result<Target> target = resolve_target_from(target_name, base_dir, discover);
  if (!target.is_ok()) return target.status().with_context("target");
  deployment.target = std::move(target).value();
  Result<Policy> policy = resolve_policy_from(policy_name, base_dir);
  if (!policy.is_ok()) return policy.status().with_context("policy");
  deployment.policy = std::move(policy).value();

  HSCHED_RETURN_IF_ERROR(
      root.read_with("cache_dir", kRequired, &deployment.cache_dir,
                     [&](const ConfigNode& node) { return expand_cache_dir(node, base_dir); }));
  HSCHED_RETURN_IF_ERROR(
      root.read("compile_timeout_ms", kOptional, kTimeoutMs, &deployment.compile_timeout_ms));
  deployment.expected_runs = deployment.policy.expected_runs;
  HSCHED_RETURN_IF_ERROR(
      root.read("expected_runs", kOptional, 1, kMaxExpectedRuns, &deployment.expected_runs));
  deployment.policy.expected_runs = deployment.expected_runs;
  HSCHED_RETURN_IF_ERROR(read_split_and_verify(root, deployment.policy));
  return deployment;
}

}  // namespace

fs::path configs_dir() {
  const char* env = std::getenv("HSCHED_CONFIGS_DIR");
  if (env != nullptr && *env != '\0') return fs::path(env);
  if (const std::optional<fs::path> installed = installed_data_dir()) return *installed / "configs";
  return fs::path(HSCHED_CONFIGS_DIR);  // the build tree's
}

Result<Target> load_target(const std::string& path) {
  return load_config<Target>(path, "target", parse_target);
}

Result<Policy> load_policy(const std::string& path) {
  return load_config<Policy>(path, "policy", parse_policy);
}

Result<Deployment> load_deployment(const std::string& path, const DiscoverFn& discover) {
  return load_config<Deployment>(path, "deployment",
                                 [&](const ConfigNode& root, const std::string& display) {
                                   return parse_deployment(root, display, path, discover);
                                 });
}

Result<Target> resolve_target(const std::string& name_or_path, const DiscoverFn& discover) {
  return resolve_target_from(name_or_path, fs::path(), discover);
}

Result<Policy> resolve_policy(const std::string& name_or_path) {
  return resolve_policy_from(name_or_path, fs::path());
}

}  // namespace hsched
