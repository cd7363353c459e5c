// What every format of the fallback report shows, computed once from a Plan: the summary figures,
// the header and summary lines, and the tables (partitions, transfers, nodes not on their first
// choice, policy placements, rejections). report_text.cpp lays them out as aligned text,
// report_graph.cpp as HTML, report_json.cpp takes the figures. Internal to scheduler/; the API is
// report.h.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "hsched/plan.h"
#include "hsched/policy.h"
#include "hsched/status.h"

namespace hsched::report {

// ---- names and numbers, the same in every format ----

std::string format_ms(double ms);  // "1.234" (3 decimals); "n/a" when not finite
// A node's name ("#id" when unnamed or not in the graph) and op ("?" when not in the graph):
// reports show plans without trusting their ids.
std::string node_name(const Graph& graph, NodeId id);
std::string node_op(const Graph& graph, NodeId id);
std::string value_name(const Graph& graph, ValueId id);
std::string placement_name(const std::string& device, Precision precision);  // "gpu0/fp16"

// Fixed colours per device kind, so that every picture reads the same: fill and border.
struct Colours {
  const char* fill;
  const char* border;
};
inline constexpr const char* kTransferColour = "#d62728";
Colours colours_of(DeviceKind kind);
Colours colours_of(const Plan& plan, const std::string& device);  // grey for an unknown device

// Text for HTML and SVG: & < > " ' escaped.
std::string html_escape(const std::string& text);

// Per-node lookups into a plan, built once (a report of a 10,000-node plan stays linear).
// Holds references: the graph and plan must outlive it.
class PlanView {
 public:
  PlanView(const Graph& graph, const Plan& plan);

  const Graph& graph() const { return graph_; }
  const Plan& plan() const { return plan_; }
  // The node's fallback record, nullptr when it has none.
  const Fallback* fallback(NodeId id) const;
  // The policy's first choice for a node: its fallback record's `wanted`, else the first of the
  // policy's choices for its op, else the implicit last resort cpu/fp32.
  Choice wanted(NodeId id) const;
  // Why a node is where it is, as one word: the rejection reason of its fallback record when it
  // has one ("op_unsupported"), else its placement reason ("policy"); and the matching detail.
  std::string reason(const NodePlacement& placement) const;
  std::string detail(const NodePlacement& placement) const;

 private:
  const Graph& graph_;
  const Plan& plan_;
  std::vector<const Fallback*> fallback_of_;  // per node id
};

// Nodes in execution order: partition by partition, then nodes no partition holds (by id).
std::vector<NodeId> execution_order(const Plan& plan);

// InvalidArgument unless the plan has one placement per graph node, in node order.
Status check_plan(const Graph& graph, const Plan& plan);

// ---- summary figures ----

struct DeviceTotals {
  std::string device;                  // device id
  std::map<Precision, int64_t> nodes;  // nodes per computed precision
  int64_t node_count = 0;
  int64_t partitions = 0;
  double compute_ms = 0;  // sum of its partitions' compute_ms
};

struct PlanSummary {
  std::vector<DeviceTotals> devices;  // target order, then devices only the plan names (by id)
  int64_t transfer_bytes = 0;
  double transfer_ms = 0;
  double compile_ms = 0;  // sum of the partitions' one-time compile_ms, before amortisation
  // Counts keyed by reason name (ordered by name, so output is stable).
  std::map<std::string, int64_t> fallbacks_by_reason;
  std::map<std::string, int64_t> placements_by_reason;
  std::map<std::string, int64_t> rejections_by_reason;
  // The cheapest finite entry of Plan::single_device_ms (ties: the lower device id).
  std::optional<std::pair<std::string, double>> best_single_device;
  // Set when the plan is predicted more than 1% slower than that device alone: by how much, and
  // the policy rule that forced it.
  struct SingleDeviceGap {
    double gap_ms = 0;
    std::string rule;
  };
  std::optional<SingleDeviceGap> slower_than_single_device;
};

PlanSummary summarize_plan(const Plan& plan);

// ---- lines and tables, laid out by the text and HTML formats ----

// "label   first line" with further lines under the first.
struct Field {
  std::string label;
  std::vector<std::string> lines;
};

struct Column {
  std::string title;
  bool numeric = false;  // right-aligned
  size_t max_width = 0;  // text only: longer cells are shortened in the middle; 0 = no limit
};

struct Table {
  std::string title;
  std::vector<Column> columns;
  std::vector<std::vector<std::string>> rows;  // one cell per column
  std::string empty_text = "(none)";           // shown instead of an empty table
};

struct ReportContent {
  std::string title;
  std::vector<Field> header;   // model, target, policy, devices present or planned
  std::vector<Field> summary;  // nodes, partitions, transfers, predictions, reasons
  // Partitions, transfers, nodes not on their first choice (one line each), nodes placed by the
  // policy (grouped by op).
  std::vector<Table> tables;
};

ReportContent build_report_content(const Graph& graph, const Plan& plan);
// Every "no" asked while planning: long, so only the HTML page and JSON carry it.
Table rejections_table(const Graph& graph, const Plan& plan);

// ---- renderers (format_report checks the plan first) ----

std::string report_to_text(const Graph& graph, const Plan& plan);
std::string report_to_dot(const Graph& graph, const Plan& plan);
struct MeasuredRun;  // report_timeline.h
// `measured`: a run's spans to draw beside the predicted ones on the timeline, or null.
std::string report_to_html(const Graph& graph, const Plan& plan,
                           const MeasuredRun* measured = nullptr);

}  // namespace hsched::report
