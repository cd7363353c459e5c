#include "scheduler/report/report_content.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <tuple>
#include <utility>

namespace hsched::report {
namespace {

// What a node placed on an unknown or empty device list wants: the CPU's fp32, the implicit last
// resort of every policy (policy.h).
const Choice kLastResort{"cpu", Precision::kFp32};

// Text widths of names in tables, so that lines stay within 100 columns (the free-form detail
// last on a line excepted): two node names share a partition line, one has more room elsewhere.
constexpr size_t kNameWidth = 30;
constexpr size_t kLongNameWidth = 32;

bool in_graph(const Graph& graph, NodeId id) {
  return id >= 0 && static_cast<size_t>(id) < graph.nodes().size();
}

// "op_unsupported 2, shape_unsupported 1"; "none" when empty.
std::string counts_text(const std::map<std::string, int64_t>& counts) {
  std::string out;
  for (const auto& [name, count] : counts) {
    if (!out.empty()) out += ", ";
    out += name + " " + std::to_string(count);
  }
  return out.empty() ? "none" : out;
}

int64_t total(const std::map<std::string, int64_t>& counts) {
  int64_t sum = 0;
  for (const auto& entry : counts) sum += entry.second;
  return sum;
}

std::string plural(int64_t count, const char* noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

std::string pad_right(std::string text, size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text;
}

// "cpu0 (p2)"; a partition id of -1 marks a graph input (from) or output (to) on the host.
std::string transfer_end(const std::string& device, int partition, const char* outside) {
  return device + " (" + (partition < 0 ? std::string(outside) : "p" + std::to_string(partition)) +
         ")";
}

std::vector<Field> header_fields(const Graph& graph, const Plan& plan) {
  const Target& target = plan.target;
  const Policy& policy = plan.policy;
  std::vector<Field> fields;
  fields.push_back({"model",
                    {(plan.model.empty() ? graph.name : plan.model) + " (" +
                     plural(static_cast<int64_t>(graph.nodes().size()), "node") + ")"}});
  fields.push_back({"target", {target.name + " (from " + target.source + ")"}});
  fields.push_back({"policy",
                    {policy.name + " (from " + policy.source + ")",
                     std::string("fallback ") + fallback_mode_name(policy.fallback) +
                         ", objective " + objective_name(policy.objective) + ", " +
                         std::to_string(policy.expected_runs) + " expected runs" +
                         (policy.split_every > 0
                              ? ", split every " + std::to_string(policy.split_every) + " nodes"
                              : std::string())}});
  Field devices{"devices", {}};
  // Two lines per device: whether it is here, then what it is (names can be long).
  for (const DeviceProfile& device : target.devices) {
    devices.lines.push_back(
        device.id + ": " +
        (device.present ? "present on this machine" : "planned from profile (not present)"));
    devices.lines.push_back("  " + std::string(device_kind_name(device.kind)) + "/" +
                            device_api_name(device.api) + ", " + device.name);
  }
  if (devices.lines.empty()) devices.lines.push_back("none");
  fields.push_back(std::move(devices));
  return fields;
}

std::vector<Field> summary_fields(const Graph& graph, const Plan& plan, const PlanSummary& s) {
  std::vector<Field> fields;
  fields.push_back({"nodes",
                    {plural(static_cast<int64_t>(graph.nodes().size()), "node") + " in " +
                     plural(static_cast<int64_t>(plan.partitions.size()), "partition")}});

  // One aligned line per device: "gpu0  30 nodes (fp16 28, fp32 2)  1 partition  1.000 ms".
  std::vector<std::vector<std::string>> cells;
  for (const DeviceTotals& d : s.devices) {
    std::string precisions;
    for (const auto& [precision, count] : d.nodes) {
      if (!precisions.empty()) precisions += ", ";
      precisions += std::string(precision_name(precision)) + " " + std::to_string(count);
    }
    cells.push_back(
        {d.device,
         plural(d.node_count, "node") + (precisions.empty() ? "" : " (" + precisions + ")"),
         plural(d.partitions, "partition"), format_ms(d.compute_ms) + " ms"});
  }
  std::vector<size_t> widths(4, 0);
  for (const auto& row : cells) {
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  Field per_device{"per device", {}};
  for (const auto& row : cells) {
    per_device.lines.push_back(pad_right(row[0], widths[0] + 2) + pad_right(row[1], widths[1] + 2) +
                               pad_right(row[2], widths[2] + 2) + row[3]);
  }
  if (per_device.lines.empty()) per_device.lines.push_back("none");
  fields.push_back(std::move(per_device));

  fields.push_back(
      {"transfers",
       {std::to_string(plan.transfers.size()) + ": " + std::to_string(s.transfer_bytes) +
        " bytes, " + format_ms(s.transfer_ms) + " ms"}});
  fields.push_back({"predicted",
                    {format_ms(plan.predicted_run_ms) + " ms per run; " +
                     format_ms(plan.predicted_ms) + " ms with the compile amortised"}});
  fields.push_back({"compile",
                    {format_ms(s.compile_ms) + " ms once, amortised over " +
                     std::to_string(plan.policy.expected_runs) + " runs"}});

  std::string singles;
  for (const auto& [device, ms] : plan.single_device_ms) {
    if (!singles.empty()) singles += ", ";
    singles += device + " " + (std::isfinite(ms) ? format_ms(ms) + " ms" : "n/a");
  }
  Field single{"single device", {singles.empty() ? "none" : singles}};
  if (s.best_single_device) {
    const auto& [device, ms] = *s.best_single_device;
    std::string best = "best " + device + " " + format_ms(ms) + " ms";
    if (plan.predicted_ms > 0) {
      char ratio[32];
      std::snprintf(ratio, sizeof(ratio), "%.2f", ms / plan.predicted_ms);
      best += std::string("; speed-up of this plan ") + ratio + "x";
    }
    single.lines.push_back(best);
    if (s.slower_than_single_device) {
      const auto& gap = *s.slower_than_single_device;
      char percent[32];
      std::snprintf(percent, sizeof(percent), "%.0f", 100 * gap.gap_ms / ms);
      single.lines.push_back("warning: this plan is predicted " + format_ms(gap.gap_ms) + " ms (" +
                             percent + "%) slower than " + device + " alone; " + gap.rule);
    }
  }
  fields.push_back(std::move(single));

  fields.push_back({"placements", {counts_text(s.placements_by_reason)}});
  fields.push_back(
      {"fallbacks",
       {std::to_string(total(s.fallbacks_by_reason)) + ": " + counts_text(s.fallbacks_by_reason)}});
  fields.push_back({"rejections",
                    {std::to_string(total(s.rejections_by_reason)) + ": " +
                     counts_text(s.rejections_by_reason)}});
  return fields;
}

Table partitions_table(const Graph& graph, const Plan& plan) {
  Table table{"Partitions (execution order)",
              {{"id", true},
               {"device"},
               {"nodes", true},
               {"first node", false, kNameWidth},
               {"last node", false, kNameWidth},
               {"compute ms", true}},
              {}};
  for (const Partition& p : plan.partitions) {
    const bool empty = p.nodes.empty();
    table.rows.push_back({std::to_string(p.id), p.device, std::to_string(p.nodes.size()),
                          empty ? "-" : node_name(graph, p.nodes.front()),
                          empty ? "-" : node_name(graph, p.nodes.back()), format_ms(p.compute_ms)});
  }
  return table;
}

Table transfers_table(const Graph& graph, const Plan& plan) {
  Table table{"Transfers",
              {{"value", false, kLongNameWidth}, {"bytes", true}, {"from"}, {"to"}, {"ms", true}},
              {}};
  for (const Transfer& t : plan.transfers) {
    table.rows.push_back({value_name(graph, t.value), std::to_string(t.bytes),
                          transfer_end(t.from_device, t.from_partition, "input"),
                          transfer_end(t.to_device, t.to_partition, "output"),
                          format_ms(t.predicted_ms)});
  }
  return table;
}

Table off_first_choice_table(const PlanView& view) {
  const Graph& graph = view.graph();
  const Plan& plan = view.plan();
  Table table{
      "Nodes not on their first choice",
      {{"node", false, kLongNameWidth}, {"op"}, {"wanted"}, {"placed"}, {"reason"}, {"detail"}},
      {}};
  for (NodeId id : execution_order(plan)) {
    const NodePlacement& p = plan.nodes[static_cast<size_t>(id)];
    // A policy placement is the policy's only choice: policy_table groups those.
    if (p.reason == PlacementReason::kFirstChoice || p.reason == PlacementReason::kPolicy) continue;
    table.rows.push_back({node_name(graph, id), node_op(graph, id), choice_name(view.wanted(id)),
                          placement_name(p.device, p.precision), view.reason(p), view.detail(p)});
  }
  table.title += " (" + std::to_string(table.rows.size()) + ")";
  return table;
}

// Nodes the policy allows in one place only, one line per (op, placement, detail): a model has
// hundreds of them and they all say the same.
Table policy_table(const PlanView& view) {
  const Graph& graph = view.graph();
  std::map<std::tuple<std::string, std::string, std::string>, int64_t> groups;
  int64_t count = 0;
  for (const NodePlacement& p : view.plan().nodes) {
    if (p.reason != PlacementReason::kPolicy) continue;
    ++groups[{node_op(graph, p.node), placement_name(p.device, p.precision), view.detail(p)}];
    ++count;
  }
  Table table{"Placed by the policy, its only choice (" + plural(count, "node") + ")",
              {{"op"}, {"nodes", true}, {"placed"}, {"detail"}},
              {}};
  for (const auto& [key, nodes] : groups) {
    const auto& [op, placed, detail] = key;
    table.rows.push_back({op, std::to_string(nodes), placed, detail});
  }
  return table;
}

}  // namespace

namespace {

constexpr Colours kCpuColours{"#dbe8f6", "#2e6da4"};
constexpr Colours kGpuColours{"#d9f0d3", "#2f8a2f"};
constexpr Colours kNpuColours{"#fde2c4", "#c4620f"};
constexpr Colours kUnknownColours{"#eeeeee", "#777777"};  // a device the target lacks

}  // namespace

Colours colours_of(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::kCpu:
      return kCpuColours;
    case DeviceKind::kGpu:
      return kGpuColours;
    case DeviceKind::kNpu:
      return kNpuColours;
  }
  return kUnknownColours;
}

Colours colours_of(const Plan& plan, const std::string& device) {
  const DeviceProfile* profile = plan.target.find(device);
  return profile != nullptr ? colours_of(profile->kind) : kUnknownColours;
}

std::string html_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
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
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string format_ms(double ms) {
  if (!std::isfinite(ms)) return "n/a";
  char buffer[48];
  std::snprintf(buffer, sizeof(buffer), "%.3f", ms);
  return buffer;
}

std::string node_name(const Graph& graph, NodeId id) {
  return in_graph(graph, id) ? node_label(graph, id) : "#" + std::to_string(id);
}

std::string node_op(const Graph& graph, NodeId id) {
  return in_graph(graph, id) ? graph.node(id).op_type : "?";
}

std::string value_name(const Graph& graph, ValueId id) {
  const bool known = id >= 0 && static_cast<size_t>(id) < graph.values().size();
  if (!known || graph.value(id).name.empty()) return "#" + std::to_string(id);
  return graph.value(id).name;
}

std::string placement_name(const std::string& device, Precision precision) {
  return device + "/" + precision_name(precision);
}

PlanView::PlanView(const Graph& graph, const Plan& plan)
    : graph_(graph), plan_(plan), fallback_of_(graph.nodes().size(), nullptr) {
  for (const Fallback& f : plan.fallbacks) {
    // The first record of a node wins: it names the policy's first choice.
    if (in_graph(graph, f.node) && fallback_of_[static_cast<size_t>(f.node)] == nullptr) {
      fallback_of_[static_cast<size_t>(f.node)] = &f;
    }
  }
}

const Fallback* PlanView::fallback(NodeId id) const {
  return in_graph(graph_, id) ? fallback_of_[static_cast<size_t>(id)] : nullptr;
}

Choice PlanView::wanted(NodeId id) const {
  if (const Fallback* f = fallback(id)) return f->wanted;
  if (!in_graph(graph_, id)) return kLastResort;
  // A forced split wants the slot it placed the node in (a miss is a Fallback, above).
  if (plan_.policy.split_every > 0 && static_cast<size_t>(id) < plan_.nodes.size()) {
    const NodePlacement& placed = plan_.nodes[static_cast<size_t>(id)];
    return {placed.device, placed.precision};
  }
  const std::vector<Choice>& choices = plan_.policy.choices_for(graph_.node(id).op_type);
  return choices.empty() ? kLastResort : choices.front();
}

std::string PlanView::reason(const NodePlacement& placement) const {
  if (const Fallback* f = fallback(placement.node)) return reason_code_name(f->reason);
  return placement_reason_name(placement.reason);
}

std::string PlanView::detail(const NodePlacement& placement) const {
  const Fallback* f = fallback(placement.node);
  return f != nullptr && !f->detail.empty() ? f->detail : placement.detail;
}

std::vector<NodeId> execution_order(const Plan& plan) {
  std::vector<NodeId> order;
  order.reserve(plan.nodes.size());
  std::vector<bool> seen(plan.nodes.size(), false);
  for (const Partition& partition : plan.partitions) {
    for (NodeId id : partition.nodes) {
      if (id < 0 || static_cast<size_t>(id) >= seen.size() || seen[static_cast<size_t>(id)]) {
        continue;
      }
      seen[static_cast<size_t>(id)] = true;
      order.push_back(id);
    }
  }
  for (size_t i = 0; i < seen.size(); ++i) {
    if (!seen[i]) order.push_back(static_cast<NodeId>(i));
  }
  return order;
}

Status check_plan(const Graph& graph, const Plan& plan) {
  const std::string model = plan.model.empty() ? graph.name : plan.model;
  if (plan.nodes.size() != graph.nodes().size()) {
    return invalid_argument("report for '" + model + "': the plan places " +
                            std::to_string(plan.nodes.size()) + " nodes but the graph has " +
                            std::to_string(graph.nodes().size()));
  }
  for (size_t i = 0; i < plan.nodes.size(); ++i) {
    if (plan.nodes[i].node != static_cast<NodeId>(i)) {
      return invalid_argument("report for '" + model + "': placement " + std::to_string(i) +
                              " is for node " + std::to_string(plan.nodes[i].node) +
                              "; placements must be indexed by node id");
    }
  }
  for (const Partition& partition : plan.partitions) {
    for (NodeId id : partition.nodes) {
      if (!in_graph(graph, id)) {
        return invalid_argument("report for '" + model + "': partition " +
                                std::to_string(partition.id) + " holds node " + std::to_string(id) +
                                ", which the graph lacks");
      }
    }
  }
  return Status::ok();
}

PlanSummary summarize_plan(const Plan& plan) {
  PlanSummary s;
  std::map<std::string, size_t> index;  // device id -> position in s.devices
  auto totals_of = [&](const std::string& device) -> DeviceTotals& {
    auto [it, inserted] = index.emplace(device, s.devices.size());
    if (inserted) s.devices.push_back(DeviceTotals{device, {}, 0, 0, 0});
    return s.devices[it->second];
  };
  for (const DeviceProfile& device : plan.target.devices) totals_of(device.id);
  // Devices the plan uses but the target lacks go last, by id (a std::set orders them).
  std::set<std::string> extra;
  for (const NodePlacement& p : plan.nodes) {
    if (index.count(p.device) == 0) extra.insert(p.device);
  }
  for (const std::string& device : extra) totals_of(device);

  for (const NodePlacement& p : plan.nodes) {
    DeviceTotals& d = totals_of(p.device);
    ++d.nodes[p.precision];
    ++d.node_count;
    ++s.placements_by_reason[placement_reason_name(p.reason)];
  }
  for (const Partition& partition : plan.partitions) {
    DeviceTotals& d = totals_of(partition.device);
    ++d.partitions;
    d.compute_ms += partition.compute_ms;
    s.compile_ms += partition.compile_ms;
  }
  for (const Transfer& t : plan.transfers) {
    s.transfer_bytes += t.bytes;
    s.transfer_ms += t.predicted_ms;
  }
  for (const Fallback& f : plan.fallbacks) ++s.fallbacks_by_reason[reason_code_name(f.reason)];
  for (const Rejection& r : plan.rejections) ++s.rejections_by_reason[reason_code_name(r.reason)];
  for (const auto& [device, ms] : plan.single_device_ms) {
    // A std::map iterates by id, so a strict `<` keeps the lower id on ties.
    if (std::isfinite(ms) && (!s.best_single_device || ms < s.best_single_device->second)) {
      s.best_single_device = std::make_pair(device, ms);
    }
  }
  if (s.best_single_device && plan.predicted_ms > 1.01 * s.best_single_device->second) {
    const std::string name = "policy '" + plan.policy.name + "'";
    s.slower_than_single_device = PlanSummary::SingleDeviceGap{
        plan.predicted_ms - s.best_single_device->second,
        plan.policy.objective == Objective::kStrict
            ? name +
                  " is strict: every node on its first choice, whatever the cost (the "
                  "default policy lets the cost model remove boundaries)"
            : name + " (objective " + objective_name(plan.policy.objective) + ")"};
  }
  return s;
}

ReportContent build_report_content(const Graph& graph, const Plan& plan) {
  const PlanView view(graph, plan);
  const PlanSummary summary = summarize_plan(plan);
  ReportContent content;
  content.title = "hsched fallback report: " + (plan.model.empty() ? graph.name : plan.model);
  content.header = header_fields(graph, plan);
  content.summary = summary_fields(graph, plan, summary);
  content.tables.push_back(partitions_table(graph, plan));
  content.tables.push_back(transfers_table(graph, plan));
  content.tables.push_back(off_first_choice_table(view));
  content.tables.push_back(policy_table(view));
  return content;
}

Table rejections_table(const Graph& graph, const Plan& plan) {
  Table table{
      "Rejections (every \"no\" asked while planning)",
      {{"node", false, kLongNameWidth}, {"op"}, {"device"}, {"precision"}, {"reason"}, {"detail"}},
      {}};
  for (const Rejection& r : plan.rejections) {
    table.rows.push_back({node_name(graph, r.node), node_op(graph, r.node), r.device,
                          precision_name(r.precision), reason_code_name(r.reason), r.detail});
  }
  return table;
}

}  // namespace hsched::report
