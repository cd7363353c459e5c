#include "scheduler/report/report_timeline.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "scheduler/report/report_content.h"

namespace hsched::report {
namespace {

constexpr double kLaneHeight = 26;
constexpr double kLabelWidth = 120;
constexpr double kPlotWidth = 900;
constexpr double kAxisHeight = 24;

std::string xml_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

const char* fill_of(const Plan& plan, const std::string& device) {
  const DeviceProfile* profile = plan.target.find(device);
  if (profile == nullptr) return "#dddddd";
  switch (profile->kind) {
    case DeviceKind::kCpu:
      return "#dbe8f6";
    case DeviceKind::kGpu:
      return "#d9f0d3";
    case DeviceKind::kNpu:
      return "#fde2c4";
  }
  return "#dddddd";
}

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

std::string timeline_svg(const Graph& graph, const Plan& plan) {
  const std::vector<PartitionSpan> spans = predicted_spans(plan);
  std::vector<std::string> lanes;  // devices in target order, those with partitions
  for (const DeviceProfile& device : plan.target.devices) {
    for (const Partition& p : plan.partitions) {
      if (p.device == device.id) {
        lanes.push_back(device.id);
        break;
      }
    }
  }
  std::map<int, size_t> index_of;
  for (size_t i = 0; i < plan.partitions.size(); ++i) index_of[plan.partitions[i].id] = i;
  double total = 0;
  for (const PartitionSpan& span : spans) total = std::max(total, span.end_ms);
  const double scale = total > 0 ? kPlotWidth / total : 0;
  const double height = kAxisHeight + kLaneHeight * static_cast<double>(lanes.size() + 1);
  std::ostringstream out;
  out << "<svg id=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\""
      << kLabelWidth + kPlotWidth + 20 << "\" height=\"" << height
      << "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  const auto lane_y = [&](size_t lane) { return kAxisHeight + kLaneHeight * lane; };
  for (size_t l = 0; l <= lanes.size(); ++l) {
    out << "<text x=\"4\" y=\"" << lane_y(l) + 17 << "\">"
        << xml_escape(l < lanes.size() ? lanes[l] : "transfers") << "</text>\n";
  }
  for (int tick = 0; tick <= 4; ++tick) {
    const double x = kLabelWidth + kPlotWidth * tick / 4;
    out << "<line x1=\"" << x << "\" y1=\"" << kAxisHeight - 6 << "\" x2=\"" << x << "\" y2=\""
        << height << "\" stroke=\"#ddd\"/><text x=\"" << x + 2 << "\" y=\"" << kAxisHeight - 10
        << "\">" << format_ms(total * tick / 4) << " ms</text>\n";
  }
  for (size_t i = 0; i < plan.partitions.size(); ++i) {
    const Partition& p = plan.partitions[i];
    const size_t lane =
        static_cast<size_t>(std::find(lanes.begin(), lanes.end(), p.device) - lanes.begin());
    const double x = kLabelWidth + spans[i].start_ms * scale;
    const double w = std::max(1.0, (spans[i].end_ms - spans[i].start_ms) * scale);
    out << "<rect class=\"partition\" data-partition=\"" << p.id << "\" x=\"" << x << "\" y=\""
        << lane_y(lane) + 3 << "\" width=\"" << w << "\" height=\"" << kLaneHeight - 6
        << "\" fill=\"" << fill_of(plan, p.device) << "\" stroke=\"#555\"><title>"
        << xml_escape("p" + std::to_string(p.id) + " on " + p.device + ": " +
                      std::to_string(p.nodes.size()) + " nodes, " + format_ms(spans[i].start_ms) +
                      " to " + format_ms(spans[i].end_ms) + " ms predicted")
        << "</title></rect>\n";
  }
  for (const Transfer& t : plan.transfers) {
    const auto from = index_of.find(t.from_partition);
    if (from == index_of.end()) continue;
    const double start = spans[from->second].end_ms;
    out << "<rect class=\"transfer\" x=\"" << kLabelWidth + start * scale << "\" y=\""
        << lane_y(lanes.size()) + 7 << "\" width=\"" << std::max(1.0, t.predicted_ms * scale)
        << "\" height=\"" << kLaneHeight - 14 << "\" fill=\"#d62728\"><title>"
        << xml_escape(value_name(graph, t.value) + ": " + t.from_device + " -> " + t.to_device +
                      ", " + std::to_string(t.bytes) + " B, " + format_ms(t.predicted_ms) + " ms")
        << "</title></rect>\n";
  }
  out << "</svg>\n";
  return out.str();
}

}  // namespace hsched::report
