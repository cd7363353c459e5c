// The plan and the report as JSON (docs/report-schema.md). report_to_json is plan_to_json plus a
// summary, so the two never diverge. Times are ms rounded to 6 decimals (1 ns), so that golden
// files do not depend on the last bits of a floating-point sum; null where not finite.
#include <cmath>

#include "scheduler/report/report.h"
#include "scheduler/report/report_content.h"

namespace hsched {
namespace {

using nlohmann::json;
using report::node_name;
using report::node_op;

json ms_json(double ms) {
  if (!std::isfinite(ms)) return nullptr;
  return std::round(ms * 1e6) / 1e6;
}

json target_json(const Target& target) {
  json devices = json::array();
  for (const DeviceProfile& d : target.devices) {
    devices.push_back({{"id", d.id},
                       {"kind", device_kind_name(d.kind)},
                       {"api", device_api_name(d.api)},
                       {"name", d.name},
                       {"present", d.present}});
  }
  return {{"name", target.name}, {"source", target.source}, {"devices", devices}};
}

json policy_json(const Policy& policy) {
  return {{"name", policy.name},
          {"source", policy.source},
          {"fallback", fallback_mode_name(policy.fallback)},
          {"objective", objective_name(policy.objective)},
          {"expected_runs", policy.expected_runs}};
}

json nodes_json(const report::PlanView& view) {
  const Graph& graph = view.graph();
  json nodes = json::array();
  for (const NodePlacement& p : view.plan().nodes) {
    nodes.push_back({{"id", p.node},
                     {"name", node_name(graph, p.node)},
                     {"op", node_op(graph, p.node)},
                     {"device", p.device},
                     {"precision", precision_name(p.precision)},
                     {"partition", p.partition},
                     {"wanted", choice_name(view.wanted(p.node))},
                     {"reason", placement_reason_name(p.reason)},
                     {"detail", view.detail(p)},
                     {"predicted_ms", ms_json(p.predicted_ms)}});
  }
  return nodes;
}

json partitions_json(const Graph& graph, const Plan& plan) {
  json partitions = json::array();
  for (const Partition& p : plan.partitions) {
    json names = json::array();
    for (NodeId id : p.nodes) names.push_back(node_name(graph, id));
    partitions.push_back({{"id", p.id},
                          {"device", p.device},
                          {"node_count", p.nodes.size()},
                          {"nodes", names},
                          {"compute_ms", ms_json(p.compute_ms)},
                          {"run_ms", ms_json(p.run_ms)},
                          {"compile_ms", ms_json(p.compile_ms)}});
  }
  return partitions;
}

json transfers_json(const Graph& graph, const Plan& plan) {
  json transfers = json::array();
  for (const Transfer& t : plan.transfers) {
    transfers.push_back({{"value", report::value_name(graph, t.value)},
                         {"bytes", t.bytes},
                         {"from_partition", t.from_partition},
                         {"to_partition", t.to_partition},
                         {"from_device", t.from_device},
                         {"to_device", t.to_device},
                         {"predicted_ms", ms_json(t.predicted_ms)}});
  }
  return transfers;
}

json rejections_json(const Graph& graph, const Plan& plan) {
  json rejections = json::array();
  for (const Rejection& r : plan.rejections) {
    rejections.push_back({{"node", node_name(graph, r.node)},
                          {"op", node_op(graph, r.node)},
                          {"device", r.device},
                          {"precision", precision_name(r.precision)},
                          {"reason", reason_code_name(r.reason)},
                          {"detail", r.detail}});
  }
  return rejections;
}

json fallbacks_json(const Graph& graph, const Plan& plan) {
  json fallbacks = json::array();
  for (const Fallback& f : plan.fallbacks) {
    fallbacks.push_back({{"node", node_name(graph, f.node)},
                         {"op", node_op(graph, f.node)},
                         {"wanted", choice_name(f.wanted)},
                         {"device", f.device},
                         {"precision", precision_name(f.precision)},
                         {"reason", reason_code_name(f.reason)},
                         {"detail", f.detail}});
  }
  return fallbacks;
}

json summary_json(const Graph& graph, const Plan& plan) {
  const report::PlanSummary s = report::summarize_plan(plan);
  json devices = json::array();
  for (const report::DeviceTotals& d : s.devices) {
    json precisions = json::object();
    for (const auto& [precision, count] : d.nodes) precisions[precision_name(precision)] = count;
    devices.push_back({{"device", d.device},
                       {"node_count", d.node_count},
                       {"nodes_per_precision", precisions},
                       {"partition_count", d.partitions},
                       {"compute_ms", ms_json(d.compute_ms)}});
  }
  json best = nullptr;
  if (s.best_single_device) {
    best = {{"device", s.best_single_device->first}, {"ms", ms_json(s.best_single_device->second)}};
  }
  json slower = nullptr;
  if (s.slower_than_single_device) {
    slower = {{"device", s.best_single_device->first},
              {"gap_ms", ms_json(s.slower_than_single_device->gap_ms)},
              {"rule", s.slower_than_single_device->rule}};
  }
  return {{"node_count", graph.nodes().size()},
          {"partition_count", plan.partitions.size()},
          {"transfer_count", plan.transfers.size()},
          {"transfer_bytes", s.transfer_bytes},
          {"transfer_ms", ms_json(s.transfer_ms)},
          {"compile_ms", ms_json(s.compile_ms)},
          {"devices", devices},
          {"placements_by_reason", s.placements_by_reason},
          {"fallbacks_by_reason", s.fallbacks_by_reason},
          {"rejections_by_reason", s.rejections_by_reason},
          {"best_single_device", best},
          {"slower_than_single_device", slower}};
}

}  // namespace

nlohmann::json plan_to_json(const Graph& graph, const Plan& plan) {
  const report::PlanView view(graph, plan);
  json single = json::object();
  for (const auto& [device, ms] : plan.single_device_ms) single[device] = ms_json(ms);
  return {{"schema_version", kReportSchemaVersion},
          {"model", plan.model.empty() ? graph.name : plan.model},
          {"target", target_json(plan.target)},
          {"policy", policy_json(plan.policy)},
          {"predicted_ms", ms_json(plan.predicted_ms)},
          {"predicted_run_ms", ms_json(plan.predicted_run_ms)},
          {"single_device_ms", single},
          {"nodes", nodes_json(view)},
          {"partitions", partitions_json(graph, plan)},
          {"transfers", transfers_json(graph, plan)},
          {"fallbacks", fallbacks_json(graph, plan)},
          {"rejections", rejections_json(graph, plan)}};
}

nlohmann::json report_to_json(const Graph& graph, const Plan& plan) {
  json out = plan_to_json(graph, plan);
  out["summary"] = summary_json(graph, plan);
  return out;
}

}  // namespace hsched
