#include "graph/summary.h"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <sstream>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "graph/cost.h"

namespace hsched {
namespace {

std::vector<TensorInfo> describe(const Graph& graph, const std::vector<ValueId>& ids) {
  std::vector<TensorInfo> out;
  for (ValueId id : ids) {
    const Value& value = graph.value(id);
    out.push_back({value.name, value.dtype, value.shape});
  }
  return out;
}

// Topological order, or node order when the graph has a cycle (a summary still says something).
std::vector<NodeId> execution_order(const Graph& graph) {
  auto order = graph.topological_order();
  if (order.is_ok()) return std::move(order).value();
  std::vector<NodeId> fallback(graph.nodes().size());
  std::iota(fallback.begin(), fallback.end(), NodeId{0});
  return fallback;
}

// Live bytes of non-constant values while nodes run one at a time in `order`: graph inputs live
// from the start, a node's outputs are allocated while its inputs are still live, a value is
// freed after its last consumer has run, and graph outputs are never freed. Returns the peak.
int64_t peak_activation_bytes(const Graph& graph, const std::vector<NodeId>& order) {
  const size_t value_count = graph.values().size();
  constexpr size_t kNever = static_cast<size_t>(-1);
  std::vector<size_t> last_use(value_count, kNever);
  for (size_t step = 0; step < order.size(); ++step) {
    for (ValueId in : graph.node(order[step]).inputs) {
      if (in != kNoValue) last_use[static_cast<size_t>(in)] = step;
    }
  }
  std::vector<bool> pinned(value_count, false);  // graph outputs
  for (ValueId id : graph.outputs()) pinned[static_cast<size_t>(id)] = true;

  std::vector<bool> live(value_count, false);
  int64_t current = 0;
  auto allocate = [&](ValueId id) {
    if (id == kNoValue || live[static_cast<size_t>(id)] || graph.value(id).is_constant()) return;
    live[static_cast<size_t>(id)] = true;
    current += graph.value(id).byte_size();
  };
  auto release = [&](ValueId id) {
    if (id == kNoValue || !live[static_cast<size_t>(id)] || pinned[static_cast<size_t>(id)]) {
      return;
    }
    live[static_cast<size_t>(id)] = false;
    current -= graph.value(id).byte_size();
  };

  for (ValueId id : graph.inputs()) allocate(id);
  int64_t peak = current;
  for (size_t step = 0; step < order.size(); ++step) {
    const Node& node = graph.node(order[step]);
    for (ValueId out : node.outputs) allocate(out);
    peak = std::max(peak, current);
    for (ValueId in : node.inputs) {
      if (in != kNoValue && last_use[static_cast<size_t>(in)] == step) release(in);
    }
    // An output nobody reads is dropped at once.
    for (ValueId out : node.outputs) {
      if (out != kNoValue && last_use[static_cast<size_t>(out)] == kNever) release(out);
    }
  }
  return peak;
}

nlohmann::json tensors_to_json(const std::vector<TensorInfo>& tensors) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& t : tensors) {
    nlohmann::json shape = nullptr;  // null: not even the rank is known
    if (t.shape.rank_known) {
      shape = nlohmann::json::array();
      for (int64_t d : t.shape.dims) shape.push_back(d < 0 ? int64_t{-1} : d);
    }
    out.push_back(
        {{"name", t.name}, {"shape", shape}, {"dtype", std::string(dtype_name(t.dtype))}});
  }
  return out;
}

std::string format(const char* fmt, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), fmt, value);
  return buffer;
}

// "23466" -> "23,466": parameter counts are easier to read grouped.
std::string grouped(int64_t value) {
  std::string digits = std::to_string(value);
  const size_t first = digits[0] == '-' ? 1 : 0;
  for (size_t i = digits.size(); i > first + 3; i -= 3) digits.insert(i - 3, ",");
  return digits;
}

constexpr double kBytesPerMb = 1e6;  // reports use decimal MB, as GFLOP uses 1e9
constexpr size_t kLabelWidth = 20;

std::string pad(const std::string& text, size_t width) {
  return text + std::string(text.size() < width ? width - text.size() : 1, ' ');
}

void add_line(std::ostringstream& out, const std::string& label, const std::string& text) {
  out << pad(label, kLabelWidth) << text << '\n';
}

// Inputs and outputs share column widths so that the two lists line up.
struct TensorColumns {
  size_t name = 0;
  size_t shape = 0;
};

TensorColumns tensor_columns(const ModelSummary& s) {
  TensorColumns columns;
  for (const auto* list : {&s.inputs, &s.outputs}) {
    for (const auto& t : *list) {
      columns.name = std::max(columns.name, t.name.size());
      columns.shape = std::max(columns.shape, t.shape.to_string().size());
    }
  }
  return columns;
}

void add_tensors(std::ostringstream& out, const std::string& label,
                 const std::vector<TensorInfo>& tensors, const TensorColumns& columns) {
  if (tensors.empty()) add_line(out, label, "(none)");
  for (size_t i = 0; i < tensors.size(); ++i) {
    const auto& t = tensors[i];
    add_line(out, i == 0 ? label : "",
             pad(t.name, columns.name + 2) + pad(t.shape.to_string(), columns.shape + 2) +
                 std::string(dtype_name(t.dtype)));
  }
}

}  // namespace

ModelSummary summarize(const Graph& graph, const std::string& model_name) {
  ModelSummary s;
  s.model = model_name;
  s.opset = graph.opset;
  s.inputs = describe(graph, graph.inputs());
  s.outputs = describe(graph, graph.outputs());
  s.nodes = static_cast<int64_t>(graph.nodes().size());

  const std::vector<NodeId> order = execution_order(graph);
  double flop = 0;
  for (NodeId id : order) {
    ++s.ops[graph.node(id).op_type];
    flop += static_cast<double>(node_cost(graph, id).flop);
  }
  s.gflop = flop / 1e9;

  const std::unordered_set<ValueId> inputs(graph.inputs().begin(), graph.inputs().end());
  const std::unordered_set<ValueId> outputs(graph.outputs().begin(), graph.outputs().end());
  for (size_t i = 0; i < graph.values().size(); ++i) {
    const auto id = static_cast<ValueId>(i);
    const Value& value = graph.value(id);
    if (value.is_constant()) {
      // Initializers nothing reads (left over in the file) are not part of the model.
      if (value.consumers.empty() && outputs.count(id) == 0) continue;
      s.params += value.constant->elements();
      s.param_bytes += static_cast<int64_t>(value.constant->byte_size());
      continue;
    }
    if (inputs.count(id) == 0 && value.producer == kNoNode) continue;  // neither computed nor fed
    if (!value.shape.is_static() || value.dtype == DType::kUndefined) ++s.non_static_tensors;
  }
  s.peak_activation_bytes = peak_activation_bytes(graph, order);
  return s;
}

nlohmann::json summary_to_json(const ModelSummary& s) {
  nlohmann::json ops = nlohmann::json::object();
  for (const auto& [op, count] : s.ops) ops[op] = count;
  return {
      {"model", s.model},
      {"opset", s.opset},
      {"inputs", tensors_to_json(s.inputs)},
      {"outputs", tensors_to_json(s.outputs)},
      {"nodes", s.nodes},
      {"ops", ops},
      {"params", s.params},
      {"param_bytes", s.param_bytes},
      {"gflop", s.gflop},
      {"peak_activation_bytes", s.peak_activation_bytes},
      {"non_static_tensors", s.non_static_tensors},
  };
}

std::string summary_to_text(const ModelSummary& s) {
  std::ostringstream out;
  add_line(out, "model", s.model);
  add_line(out, "opset", std::to_string(s.opset));
  const TensorColumns columns = tensor_columns(s);
  add_tensors(out, "inputs", s.inputs, columns);
  add_tensors(out, "outputs", s.outputs, columns);
  add_line(out, "nodes", std::to_string(s.nodes));
  add_line(out, "params",
           grouped(s.params) + " (" +
               format("%.2f", static_cast<double>(s.param_bytes) / kBytesPerMb) + " MB)");
  add_line(out, "GFLOP", format("%.3f", s.gflop));
  add_line(out, "peak activation",
           format("%.2f", static_cast<double>(s.peak_activation_bytes) / kBytesPerMb) + " MB");
  add_line(out, "non-static tensors", std::to_string(s.non_static_tensors));

  // Most frequent ops first, ties by name, so the report reads the same on every run.
  std::vector<std::pair<std::string, int64_t>> ops(s.ops.begin(), s.ops.end());
  std::stable_sort(ops.begin(), ops.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  size_t op_width = 0;
  for (const auto& [op, count] : ops) op_width = std::max(op_width, op.size());
  out << "ops\n";
  for (const auto& [op, count] : ops) {
    out << "  " << pad(op, op_width + 2) << count << '\n';
  }
  return out.str();
}

}  // namespace hsched
