#include "scheduler/report/report_timeline.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "scheduler/report/report_content.h"

namespace hsched::report {
namespace {

constexpr double kLaneHeight = 26;
constexpr double kLabelWidth = 120;
constexpr double kPlotWidth = 900;
constexpr double kAxisHeight = 24;

}  // namespace

std::vector<PartitionSpan> predicted_spans(const Plan& plan) {
  std::vector<PartitionSpan> spans(plan.partitions.size());
  std::map<int, size_t> index_of;  // partition id -> position
  for (size_t i = 0; i < plan.partitions.size(); ++i) index_of[plan.partitions[i].id] = i;
  std::map<std::string, double> device_free;
  for (size_t i = 0; i < plan.partitions.size(); ++i) {
    const Partition& p = plan.partitions[i];
    double start = device_free[p.device];
    for (const Transfer& t : plan.transfers) {
      const auto from = index_of.find(t.from_partition);
      if (t.to_partition != p.id || from == index_of.end() || from->second >= i) continue;
      start = std::max(start, spans[from->second].end_ms + t.predicted_ms);
    }
    spans[i] = {start, start + std::max(0.0, p.run_ms)};
    device_free[p.device] = spans[i].end_ms;
  }
  return spans;
}

Result<MeasuredRun> measured_run(const std::string& trace) {
  const nlohmann::json doc = nlohmann::json::parse(trace, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("traceEvents") ||
      !doc["traceEvents"].is_array()) {
    return invalid_argument("trace: not a Chrome trace of `hsched run --trace` (no traceEvents)");
  }
  const auto number = [](const nlohmann::json& event, const char* key) -> std::optional<double> {
    const auto found = event.find(key);
    if (found == event.end() || !found->is_number()) return std::nullopt;
    return found->get<double>();
  };
  const auto text = [](const nlohmann::json& event, const char* key) {
    const auto found = event.find(key);
    return found != event.end() && found->is_string() ? found->get<std::string>() : std::string();
  };
  // Thread tracks are named after their device, extra tracks "<id> (2)".
  std::map<int64_t, std::string> device_of;
  int64_t last = -1;
  for (const nlohmann::json& event : doc["traceEvents"]) {
    if (!event.is_object()) continue;
    const std::optional<double> tid = number(event, "tid");
    if (!tid) continue;
    const auto args = event.find("args");
    if (text(event, "ph") == "M" && text(event, "name") == "thread_name" && args != event.end() &&
        args->is_object()) {
      std::string name = text(*args, "name");
      if (const size_t paren = name.find(" ("); paren != std::string::npos) name.resize(paren);
      device_of[static_cast<int64_t>(*tid)] = name;
    }
    if (text(event, "ph") == "X" && text(event, "cat") == "partition" && args != event.end() &&
        args->is_object()) {
      if (const std::optional<double> request = number(*args, "request")) {
        last = std::max(last, static_cast<int64_t>(*request));
      }
    }
  }
  if (last < 0) return invalid_argument("trace: no partition of any request in it");
  MeasuredRun run;
  run.request = last;
  struct Interval {
    int64_t tid;
    double begin, end;
  };
  std::vector<Interval> partitions;
  double origin = std::numeric_limits<double>::infinity();
  for (const nlohmann::json& event : doc["traceEvents"]) {
    if (!event.is_object() || text(event, "ph") != "X" || text(event, "cat") != "partition") {
      continue;
    }
    const auto args = event.find("args");
    const std::optional<double> ts = number(event, "ts"), dur = number(event, "dur");
    const std::optional<double> tid = number(event, "tid");
    if (args == event.end() || !args->is_object() || !ts || !dur || !tid ||
        number(*args, "request").value_or(-1) != static_cast<double>(last)) {
      continue;
    }
    const int64_t track = static_cast<int64_t>(*tid);
    partitions.push_back({track, *ts, *ts + *dur});
    origin = std::min(origin, *ts);
    const std::optional<double> partition = number(*args, "partition");
    run.spans.push_back({device_of[track],
                         "p" + std::to_string(static_cast<int64_t>(partition.value_or(-1))), false,
                         *ts / 1000.0, (*ts + *dur) / 1000.0});
  }
  // Copies are the transfer events inside this request's partitions on the same track.
  for (const nlohmann::json& event : doc["traceEvents"]) {
    if (!event.is_object() || text(event, "ph") != "X" || text(event, "cat") != "transfer") {
      continue;
    }
    const std::optional<double> ts = number(event, "ts"), dur = number(event, "dur");
    const std::optional<double> tid = number(event, "tid");
    if (!ts || !dur || !tid) continue;
    const int64_t track = static_cast<int64_t>(*tid);
    const bool inside = std::any_of(partitions.begin(), partitions.end(), [&](const Interval& i) {
      return i.tid == track && *ts >= i.begin && *ts + *dur <= i.end;
    });
    if (!inside) continue;
    const auto args = event.find("args");
    const double bytes =
        args != event.end() && args->is_object() ? number(*args, "bytes").value_or(0) : 0;
    run.spans.push_back(
        {device_of[track],
         text(event, "name") + " " + std::to_string(static_cast<int64_t>(bytes)) + " B", true,
         *ts / 1000.0, (*ts + *dur) / 1000.0});
  }
  for (MeasuredSpan& span : run.spans) {
    span.start_ms -= origin / 1000.0;
    span.end_ms -= origin / 1000.0;
  }
  return run;
}

std::string timeline_svg(const Graph& graph, const Plan& plan, const MeasuredRun* measured) {
  const std::vector<PartitionSpan> spans = predicted_spans(plan);
  // Lanes: the plan's devices (in target order), its transfers; then the measured devices and
  // copies.
  std::vector<std::string> lanes;
  for (const DeviceProfile& device : plan.target.devices) {
    for (const Partition& p : plan.partitions) {
      if (p.device == device.id) {
        lanes.push_back(device.id);
        break;
      }
    }
  }
  const size_t transfer_lane = lanes.size();
  lanes.push_back("transfers");
  std::vector<std::string> measured_devices;
  if (measured != nullptr) {
    for (const MeasuredSpan& span : measured->spans) {
      if (std::find(measured_devices.begin(), measured_devices.end(), span.device) ==
          measured_devices.end()) {
        measured_devices.push_back(span.device);
      }
    }
    for (const std::string& device : measured_devices) lanes.push_back(device + " measured");
    lanes.push_back("copies measured");
  }
  std::map<int, size_t> index_of;
  for (size_t i = 0; i < plan.partitions.size(); ++i) index_of[plan.partitions[i].id] = i;
  double total = 0;
  for (const PartitionSpan& span : spans) total = std::max(total, span.end_ms);
  if (measured != nullptr) {
    for (const MeasuredSpan& span : measured->spans) total = std::max(total, span.end_ms);
  }
  const double scale = total > 0 ? kPlotWidth / total : 0;
  const double height = kAxisHeight + kLaneHeight * static_cast<double>(lanes.size());
  std::ostringstream out;
  out << "<svg id=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\""
      << kLabelWidth + kPlotWidth + 20 << "\" height=\"" << height
      << "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  const auto lane_y = [&](size_t lane) { return kAxisHeight + kLaneHeight * lane; };
  for (size_t l = 0; l < lanes.size(); ++l) {
    out << "<text x=\"4\" y=\"" << lane_y(l) + 17 << "\">" << html_escape(lanes[l]) << "</text>\n";
  }
  for (int tick = 0; tick <= 4; ++tick) {
    const double x = kLabelWidth + kPlotWidth * tick / 4;
    out << "<line x1=\"" << x << "\" y1=\"" << kAxisHeight - 6 << "\" x2=\"" << x << "\" y2=\""
        << height << "\" stroke=\"#ddd\"/><text x=\"" << x + 2 << "\" y=\"" << kAxisHeight - 10
        << "\">" << format_ms(total * tick / 4) << " ms</text>\n";
  }
  const auto bar = [&](const char* css, size_t lane, double start, double end, const char* fill,
                       const std::string& title, const std::string& data) {
    const bool thin = std::string(css).find("transfer") != std::string::npos;
    out << "<rect class=\"" << css << "\"" << data << " x=\"" << kLabelWidth + start * scale
        << "\" y=\"" << lane_y(lane) + (thin ? 7 : 3) << "\" width=\""
        << std::max(1.0, (end - start) * scale) << "\" height=\"" << kLaneHeight - (thin ? 14 : 6)
        << "\" fill=\"" << fill << "\" stroke=\"#555\"><title>" << html_escape(title)
        << "</title></rect>\n";
  };
  for (size_t i = 0; i < plan.partitions.size(); ++i) {
    const Partition& p = plan.partitions[i];
    const auto lane =
        static_cast<size_t>(std::find(lanes.begin(), lanes.end(), p.device) - lanes.begin());
    bar("partition", lane, spans[i].start_ms, spans[i].end_ms, colours_of(plan, p.device).fill,
        "p" + std::to_string(p.id) + " on " + p.device + ": " + std::to_string(p.nodes.size()) +
            " nodes, " + format_ms(spans[i].start_ms) + " to " + format_ms(spans[i].end_ms) +
            " ms predicted",
        " data-partition=\"" + std::to_string(p.id) + "\"");
  }
  for (const Transfer& t : plan.transfers) {
    const auto from = index_of.find(t.from_partition);
    if (from == index_of.end()) continue;
    const double start = spans[from->second].end_ms;
    bar("transfer", transfer_lane, start, start + t.predicted_ms, kTransferColour,
        value_name(graph, t.value) + ": " + t.from_device + " -> " + t.to_device + ", " +
            std::to_string(t.bytes) + " B, " + format_ms(t.predicted_ms) + " ms",
        "");
  }
  if (measured != nullptr) {
    for (const MeasuredSpan& span : measured->spans) {
      const size_t lane =
          span.transfer ? lanes.size() - 1
                        : transfer_lane + 1 +
                              static_cast<size_t>(std::find(measured_devices.begin(),
                                                            measured_devices.end(), span.device) -
                                                  measured_devices.begin());
      bar(span.transfer ? "measured-transfer" : "measured", lane, span.start_ms, span.end_ms,
          span.transfer ? kTransferColour : colours_of(plan, span.device).fill,
          span.label + " on " + span.device + ": " + format_ms(span.start_ms) + " to " +
              format_ms(span.end_ms) + " ms measured (request " +
              std::to_string(measured->request) + ")",
          "");
    }
  }
  out << "</svg>\n";
  return out.str();
}

}  // namespace hsched::report
