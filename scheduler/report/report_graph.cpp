// The fallback report as a Graphviz graph (DOT) and as a self-contained HTML page (the text
// report's fields and tables, the predicted timeline, and the graph as inline SVG when Graphviz
// is installed, one box per partition on big models, with zoom and pan).
#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include "scheduler/report/graphviz.h"
#include "scheduler/report/report_content.h"
#include "scheduler/report/report_timeline.h"

namespace hsched::report {
namespace {

// The contents of a DOT double-quoted string: `"` and `\` escaped (Graphviz would otherwise read
// `\N`, `\G`... in a name as its own escapes), line breaks as `\n`.
std::string dot_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c != '\r') {
      out += c;
    }
  }
  return out;
}

std::string quoted(const std::string& text) { return "\"" + dot_escape(text) + "\""; }

// A label of several lines, each escaped.
std::string dot_lines(std::initializer_list<std::string> lines) {
  std::string out;
  for (const std::string& line : lines) {
    if (!out.empty()) out += "\\n";
    out += dot_escape(line);
  }
  return "\"" + out + "\"";
}

void write_dot_node(std::ostringstream& out, const PlanView& view, NodeId id, const char* indent) {
  const Graph& graph = view.graph();
  const NodePlacement& p = view.plan().nodes[static_cast<size_t>(id)];
  const Colours colours = colours_of(view.plan(), p.device);
  std::string tooltip = placement_name(p.device, p.precision) + ": " + view.reason(p);
  const std::string detail = view.detail(p);
  if (!detail.empty()) tooltip += " (" + detail + ")";
  out << indent << "n" << id << " [label="
      << dot_lines({node_op(graph, id), node_name(graph, id), precision_name(p.precision)})
      << ", fillcolor=\"" << colours.fill << "\", color=\"" << colours.border
      << "\", tooltip=" << quoted(tooltip) << "];\n";
}

// An edge carrying `value`; its tooltip names the value, shape and dtype. A transfer is red and
// labelled with its bytes and ms only: value names would crowd the picture.
void write_dot_edge(std::ostringstream& out, const std::string& from, const std::string& to,
                    const Graph& graph, ValueId value, const Transfer* transfer) {
  const Value& v = graph.value(value);
  out << "  " << from << " -> " << to << " [tooltip="
      << quoted(value_name(graph, value) + " " + v.shape.to_string() + " " +
                std::string(dtype_name(v.dtype)));
  if (transfer != nullptr) {
    out << ", color=\"" << kTransferColour << "\", fontcolor=\"" << kTransferColour
        << "\", penwidth=2.5, label="
        << quoted(std::to_string(transfer->bytes) + " B, " + format_ms(transfer->predicted_ms) +
                  " ms");
  }
  out << "];\n";
}

// Edges, one per (value, consumer): from the producing node or the graph input to each node
// that reads it, and from producers to the graph outputs. Plan transfers are highlighted.
void write_dot_edges(std::ostringstream& out, const Graph& graph, const Plan& plan) {
  std::map<std::pair<ValueId, std::string>, const Transfer*> into_device;  // (value, to_device)
  std::map<ValueId, const Transfer*> to_output;  // read back after the run (to_partition -1)
  for (const Transfer& t : plan.transfers) {
    into_device.emplace(std::make_pair(t.value, t.to_device), &t);
    if (t.to_partition < 0) to_output.emplace(t.value, &t);
  }
  auto find = [](const auto& map, const auto& key) -> const Transfer* {
    const auto it = map.find(key);
    return it == map.end() ? nullptr : it->second;
  };
  std::map<ValueId, size_t> input_index;
  for (size_t i = 0; i < graph.inputs().size(); ++i) input_index.emplace(graph.inputs()[i], i);

  for (size_t c = 0; c < graph.nodes().size(); ++c) {
    std::set<ValueId> seen;
    for (ValueId value : graph.nodes()[c].inputs) {
      if (value == kNoValue || !seen.insert(value).second) continue;
      const Value& v = graph.value(value);
      std::string from;
      if (v.producer != kNoNode) {
        from = "n" + std::to_string(v.producer);
      } else if (input_index.count(value) != 0) {
        from = "in" + std::to_string(input_index[value]);
      } else {
        continue;  // a constant (weights): not drawn
      }
      const Transfer* transfer = find(into_device, std::make_pair(value, plan.nodes[c].device));
      write_dot_edge(out, from, "n" + std::to_string(c), graph, value, transfer);
    }
  }
  for (size_t i = 0; i < graph.outputs().size(); ++i) {
    const ValueId value = graph.outputs()[i];
    const NodeId producer = graph.value(value).producer;
    if (producer == kNoNode) continue;
    write_dot_edge(out, "n" + std::to_string(producer), "out" + std::to_string(i), graph, value,
                   find(to_output, value));
  }
}

void write_html_fields(std::ostringstream& out, const std::vector<Field>& fields) {
  out << "<table class=\"fields\">\n";
  for (const Field& field : fields) {
    out << "<tr><th>" << html_escape(field.label) << "</th><td>";
    for (size_t i = 0; i < field.lines.size(); ++i) {
      out << (i > 0 ? "<br>" : "") << html_escape(field.lines[i]);
    }
    out << "</td></tr>\n";
  }
  out << "</table>\n";
}

void write_html_table(std::ostringstream& out, const Table& table) {
  out << "<h2>" << html_escape(table.title) << "</h2>\n";
  if (table.rows.empty()) {
    out << "<p>" << html_escape(table.empty_text) << "</p>\n";
    return;
  }
  out << "<table>\n<tr>";
  for (const Column& column : table.columns) out << "<th>" << html_escape(column.title) << "</th>";
  out << "</tr>\n";
  for (const auto& row : table.rows) {
    out << "<tr>";
    for (size_t c = 0; c < table.columns.size(); ++c) {
      out << (table.columns[c].numeric ? "<td class=\"num\">" : "<td>")
          << html_escape(c < row.size() ? row[c] : "") << "</td>";
    }
    out << "</tr>\n";
  }
  out << "</table>\n";
}

// Graphs of more nodes than this are drawn with each partition as one box: node by node they
// grow taller than any page (vit_tiny's was 31,000 pt).
constexpr size_t kCollapseAbove = 150;

// The plan as one box per partition (device, nodes, the most frequent ops, ms) and an edge per
// pair of partitions one feeds the other, red and labelled where the plan copies between them.
std::string collapsed_dot(const Graph& graph, const Plan& plan) {
  std::vector<int> partition_of(graph.nodes().size(), -1);  // position in plan.partitions
  for (size_t i = 0; i < plan.partitions.size(); ++i) {
    for (NodeId id : plan.partitions[i].nodes) {
      if (id >= 0 && static_cast<size_t>(id) < partition_of.size()) {
        partition_of[static_cast<size_t>(id)] = static_cast<int>(i);
      }
    }
  }
  std::ostringstream out;
  out << "digraph plan {\n  graph [label="
      << dot_lines({"hsched plan: " + (plan.model.empty() ? graph.name : plan.model),
                    std::to_string(graph.nodes().size()) + " nodes in " +
                        std::to_string(plan.partitions.size()) + " partitions, one box each"})
      << ", labelloc=t, fontname=\"Helvetica\", fontsize=12];\n"
      << "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n"
      << "  edge [color=\"#555555\", arrowsize=0.6, fontname=\"Helvetica\", fontsize=9];\n";
  for (size_t i = 0; i < plan.partitions.size(); ++i) {
    const Partition& p = plan.partitions[i];
    std::map<std::string, int> ops;
    for (NodeId id : p.nodes) ++ops[node_op(graph, id)];
    std::vector<std::pair<int, std::string>> by_count;
    for (const auto& [op, count] : ops) by_count.emplace_back(-count, op);
    std::sort(by_count.begin(), by_count.end());
    std::string top;
    for (size_t k = 0; k < by_count.size() && k < 3; ++k) {
      top += (k > 0 ? ", " : "") + by_count[k].second + " x" + std::to_string(-by_count[k].first);
    }
    const Colours colours = colours_of(plan, p.device);
    out << "  p" << i << " [label="
        << dot_lines({"p" + std::to_string(p.id) + ": " + p.device,
                      std::to_string(p.nodes.size()) + " nodes, " + format_ms(p.compute_ms) + " ms",
                      top})
        << ", fillcolor=\"" << colours.fill << "\", color=\"" << colours.border << "\"];\n";
  }
  std::set<std::pair<int, int>> edges;
  for (const Node& node : graph.nodes()) {
    const int to = partition_of[static_cast<size_t>(&node - graph.nodes().data())];
    for (ValueId in : node.inputs) {
      if (in == kNoValue) continue;
      const NodeId producer = graph.value(in).producer;
      if (producer == kNoNode || to < 0) continue;
      const int from = partition_of[static_cast<size_t>(producer)];
      if (from >= 0 && from != to) edges.emplace(from, to);
    }
  }
  for (const auto& [from, to] : edges) {
    int64_t bytes = 0;
    double ms = 0;
    for (const Transfer& t : plan.transfers) {
      if (t.from_partition == plan.partitions[static_cast<size_t>(from)].id &&
          t.to_partition == plan.partitions[static_cast<size_t>(to)].id) {
        bytes += t.bytes;
        ms += t.predicted_ms;
      }
    }
    out << "  p" << from << " -> p" << to;
    if (bytes > 0) {
      out << " [color=\"" << kTransferColour << "\", penwidth=2, label="
          << quoted(std::to_string(bytes) + " B, " + format_ms(ms) + " ms") << "]";
    }
    out << ";\n";
  }
  out << "}\n";
  return out.str();
}

void write_html_graph(std::ostringstream& out, const Graph& graph, const Plan& plan) {
  out << "<h2>Graph</h2>\n<p class=\"legend\">";
  for (DeviceKind kind : {DeviceKind::kCpu, DeviceKind::kGpu, DeviceKind::kNpu}) {
    const Colours colours = colours_of(kind);
    out << "<span style=\"background:" << colours.fill << ";border-color:" << colours.border
        << "\">" << device_kind_name(kind) << "</span> ";
  }
  out << "<span style=\"border-color:" << kTransferColour << "\">transfer</span></p>\n";
  const bool collapsed = graph.nodes().size() > kCollapseAbove;
  if (collapsed) {
    out << "<p>" << graph.nodes().size() << " nodes: each partition is one box (the tables below "
        << "list every node; <code>hsched report --format dot</code> draws them all).</p>\n";
  }
  const std::string dot = collapsed ? collapsed_dot(graph, plan) : report_to_dot(graph, plan);
  Result<std::string> svg = render_svg(dot);
  if (svg.is_ok()) {
    // dot writes well-formed SVG with every label XML-escaped: safe to inline as is. Ctrl+wheel
    // zooms it, dragging pans (kHtmlScript).
    out << "<div class=\"graph zoom\" id=\"graph\">\n" << *svg << "\n</div>\n";
  } else {
    out << "<div id=\"graph\"><p>Graph not drawn: install graphviz for the graph ("
        << html_escape(svg.status().message()) << "). Its DOT source:</p>\n<pre>"
        << html_escape(dot) << "</pre></div>\n";
  }
}

constexpr const char* kHtmlStyle =
    "body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}"
    "table{border-collapse:collapse;margin:.4em 0 1.2em}"
    "th,td{border:1px solid #ccc;padding:2px 8px;text-align:left;vertical-align:top}"
    "td.num{text-align:right;font-variant-numeric:tabular-nums}"
    "table.fields th,table.fields td{border:none;padding:1px 12px 1px 0}"
    ".legend span{border:2px solid;padding:1px 8px;margin-right:4px}"
    ".graph{overflow:auto;max-height:85vh;border:1px solid #ccc;cursor:grab}"
    "pre{background:#f6f6f6;padding:8px}";

// Zoom (Ctrl or Cmd + wheel) and pan (drag) of the graph; nothing else runs on the page.
constexpr const char* kHtmlScript =
    "document.querySelectorAll('.zoom').forEach(function(box){"
    "var svg=box.querySelector('svg');if(!svg)return;"
    "var w=svg.width.baseVal.value,h=svg.height.baseVal.value,k=1;"
    "function size(){svg.setAttribute('width',w*k);svg.setAttribute('height',h*k);}"
    "box.addEventListener('wheel',function(e){if(!e.ctrlKey&&!e.metaKey)return;"
    "e.preventDefault();k=Math.min(8,Math.max(0.1,k*(e.deltaY<0?1.2:1/1.2)));size();},"
    "{passive:false});"
    "var drag=null;box.addEventListener('mousedown',function(e){"
    "drag={x:e.clientX,y:e.clientY,l:box.scrollLeft,t:box.scrollTop};});"
    "window.addEventListener('mouseup',function(){drag=null;});"
    "box.addEventListener('mousemove',function(e){if(!drag)return;"
    "box.scrollLeft=drag.l-(e.clientX-drag.x);box.scrollTop=drag.t-(e.clientY-drag.y);});});";

}  // namespace

std::string report_to_dot(const Graph& graph, const Plan& plan) {
  const PlanView view(graph, plan);
  std::ostringstream out;
  out << "digraph plan {\n"
      << "  graph [label="
      << dot_lines({"hsched plan: " + (plan.model.empty() ? graph.name : plan.model),
                    "target " + plan.target.name + ", policy " + plan.policy.name + ", predicted " +
                        format_ms(plan.predicted_ms) + " ms",
                    "cpu blue, gpu green, npu orange; transfers red"})
      << ", labelloc=t, fontname=\"Helvetica\", fontsize=12];\n"
      << "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n"
      << "  edge [color=\"#555555\", arrowsize=0.6, fontname=\"Helvetica\", fontsize=9];\n";

  std::vector<bool> drawn(graph.nodes().size(), false);
  for (size_t i = 0; i < plan.partitions.size(); ++i) {
    const Partition& p = plan.partitions[i];
    out << "  subgraph cluster_" << i << " {\n"
        << "    label="
        << quoted("p" + std::to_string(p.id) + ": " + p.device + ", " + format_ms(p.compute_ms) +
                  " ms")
        << ";\n    style=\"rounded,dashed\";\n    color=\"" << colours_of(plan, p.device).border
        << "\";\n";
    for (NodeId id : p.nodes) {
      write_dot_node(out, view, id, "    ");
      drawn[static_cast<size_t>(id)] = true;
    }
    out << "  }\n";
  }
  for (size_t id = 0; id < drawn.size(); ++id) {
    if (!drawn[id]) write_dot_node(out, view, static_cast<NodeId>(id), "  ");
  }
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    out << "  in" << i << " [label=" << dot_lines({"input", value_name(graph, graph.inputs()[i])})
        << ", shape=ellipse, style=solid];\n";
  }
  for (size_t i = 0; i < graph.outputs().size(); ++i) {
    out << "  out" << i
        << " [label=" << dot_lines({"output", value_name(graph, graph.outputs()[i])})
        << ", shape=ellipse, style=solid];\n";
  }
  write_dot_edges(out, graph, plan);
  out << "}\n";
  return out.str();
}

std::string report_to_html(const Graph& graph, const Plan& plan, const MeasuredRun* measured) {
  const ReportContent content = build_report_content(graph, plan);
  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>"
      << html_escape(content.title) << "</title>\n<style>" << kHtmlStyle
      << "</style>\n</head>\n<body>\n<h1>" << html_escape(content.title) << "</h1>\n";
  write_html_fields(out, content.header);
  out << "<h2>Summary</h2>\n";
  write_html_fields(out, content.summary);
  // The pictures before the long tables.
  out << "<h2>Timeline</h2>\n<p>One predicted run: each partition on its device from its "
      << "predicted start to its end, and each transfer from its producer's end"
      << (measured != nullptr ? "; below, measured, the last request of the run's trace" : "")
      << ".</p>\n"
      << timeline_svg(graph, plan, measured);
  write_html_graph(out, graph, plan);
  for (const Table& table : content.tables) write_html_table(out, table);
  write_html_table(out, rejections_table(graph, plan));
  out << "<script>" << kHtmlScript << "</script>\n</body>\n</html>\n";
  return out.str();
}

}  // namespace hsched::report
