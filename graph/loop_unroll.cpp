#include "graph/loop_unroll.h"

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <onnx/onnx_pb.h>

#include "graph/if_inline.h"
#include "graph/onnx_validate.h"

namespace hsched {
namespace {

using Initializers = std::unordered_map<std::string, const onnx::TensorProto*>;

// The one value of an initializer of one element and `dtype`; nullopt otherwise.
std::optional<int64_t> scalar_of(const Initializers& initializers, const std::string& name,
                                 DType dtype, ExternalData& external) {
  const auto it = initializers.find(name);
  if (it == initializers.end()) return std::nullopt;
  auto tensor = tensor_from_proto(*it->second, &external);
  if (!tensor.is_ok() || tensor->dtype() != dtype || tensor->elements() != 1) return std::nullopt;
  return dtype == DType::kBool ? int64_t{tensor->values<uint8_t>()[0] != 0}
                               : tensor->values<int64_t>()[0];
}

bool holds_true(const onnx::TensorProto& proto) {
  auto tensor = tensor_from_proto(proto, nullptr);
  return tensor.is_ok() && tensor->dtype() == DType::kBool && tensor->elements() == 1 &&
         tensor->values<uint8_t>()[0] != 0;
}

// Whether the body's condition output is always true given a true condition input.
bool passes_condition_through(const onnx::GraphProto& body) {
  const std::string& out = body.output(0).name();
  const std::string& in = body.input(1).name();
  if (out == in) return true;
  for (const auto& node : body.node()) {
    if (node.output_size() != 1 || node.output(0) != out) continue;
    if (node.op_type() == "Identity" && node.input_size() == 1 && node.input(0) == in) return true;
    if (node.op_type() != "Constant" || node.attribute_size() != 1) return false;
    const auto& attr = node.attribute(0);
    return attr.name() == "value" && attr.has_t() && holds_true(attr.t());
  }
  for (const auto& init : body.initializer()) {
    if (init.name() == out) return holds_true(init);
  }
  return false;
}

const onnx::GraphProto* body_of(const onnx::NodeProto& node) {
  for (const auto& attr : node.attribute()) {
    if (attr.name() == "body" && attr.has_g()) return &attr.g();
  }
  return nullptr;
}

void add_scalar_initializer(onnx::GraphProto& graph, const std::string& name, DType dtype,
                            int64_t value) {
  onnx::TensorProto& tensor = *graph.add_initializer();
  tensor.set_name(name);
  tensor.set_data_type(dtype_to_onnx(dtype));
  if (dtype == DType::kBool) {
    tensor.add_int32_data(value != 0 ? 1 : 0);
  } else {
    tensor.add_int64_data(value);
  }
}

// A Loop's or Scan's body prepared for copying: its initializers moved into the main graph once
// (they are the same every trip), under `<base>/body/`.
struct Body {
  onnx::GraphProto per_trip;         // the body without initializers, reading the moved ones
  std::vector<std::string> defined;  // the names its nodes define: each trip renames them
};

Body prepare_body(const onnx::GraphProto& body, const std::string& base, onnx::GraphProto& graph,
                  NameSet& taken) {
  Body prepared;
  prepared.per_trip = body;
  prepared.per_trip.clear_initializer();
  Renames constants;
  std::vector<std::string> constant_names;
  for (const auto& init : body.initializer()) constant_names.push_back(init.name());
  const std::string constant_prefix = unique_prefix(base + "/body", constant_names, taken);
  for (const auto& init : body.initializer()) {
    onnx::TensorProto& moved = *graph.add_initializer();
    moved = init;
    moved.set_name(constant_prefix + init.name());
    taken.insert(moved.name());
    constants.emplace(init.name(), moved.name());
  }
  rename_in_graph(prepared.per_trip, constants);
  for (const auto& inner : body.node()) {
    for (const auto& out : inner.output()) {
      if (!out.empty()) prepared.defined.push_back(out);
    }
  }
  return prepared;
}

// Appends trip `k` of `body` to `nodes`: the body's inputs read `inputs` (one name each), every
// name its nodes define is renamed under `<base>/iter<k>/` (made unique). Returns the names its
// outputs have in this copy.
std::vector<std::string> append_trip(const Body& body, const std::string& base, int64_t k,
                                     const std::vector<std::string>& inputs, NodeList& nodes,
                                     NameSet& taken) {
  const std::string prefix = unique_prefix(base + "/iter" + std::to_string(k), body.defined, taken);
  onnx::GraphProto copy = body.per_trip;
  Renames renamed;
  for (const auto& name : body.defined) {
    renamed.emplace(name, prefix + name);
    taken.insert(prefix + name);
  }
  for (int j = 0; j < copy.input_size(); ++j) {
    renamed[copy.input(j).name()] = inputs[static_cast<size_t>(j)];
  }
  rename_in_graph(copy, renamed);
  for (auto& inner : *copy.mutable_node()) {
    if (!inner.name().empty()) inner.set_name(prefix + inner.name());
    nodes.Add()->Swap(&inner);
  }
  std::vector<std::string> outputs;
  for (const auto& out : copy.output()) outputs.push_back(out.name());
  return outputs;
}

void add_int_attribute(onnx::NodeProto& node, const std::string& name, int64_t value) {
  onnx::AttributeProto& attr = *node.add_attribute();
  attr.set_name(name);
  attr.set_type(onnx::AttributeProto::INT);
  attr.set_i(value);
}

// `out` = the per-trip values `rows` stacked along a new axis `axis`: each Unsqueeze'd, then
// concatenated.
void stack_rows(const std::vector<std::string>& rows, int64_t axis, const std::string& out,
                const std::string& base, int64_t opset, onnx::GraphProto& graph, NodeList& nodes,
                NameSet& taken) {
  std::string axes;
  if (opset >= 13) {
    axes = fresh_name(base + "/unrolled/axis", taken);
    onnx::TensorProto& tensor = *graph.add_initializer();
    tensor.set_name(axes);
    tensor.set_data_type(dtype_to_onnx(DType::kI64));
    tensor.add_dims(1);
    tensor.add_int64_data(axis);
  }
  std::vector<std::string> unsqueezed;
  for (const auto& value : rows) {
    const std::string row = fresh_name(base + "/unrolled/" + value + "/row", taken);
    if (opset >= 13) {
      add_node(nodes, "Unsqueeze", row, {value, axes}, row);
    } else {
      onnx::AttributeProto& attr = *add_node(nodes, "Unsqueeze", row, {value}, row).add_attribute();
      attr.set_name("axes");
      attr.set_type(onnx::AttributeProto::INTS);
      attr.add_ints(axis);
    }
    unsqueezed.push_back(row);
  }
  add_int_attribute(add_node(nodes, "Concat", fresh_name(base + "/unrolled/" + out, taken),
                             unsqueezed, out),
                    "axis", axis);
}

// The final values of a body's carried values reach `outputs` (empty names skipped) through
// Identity.
void add_carried_outputs(const std::vector<std::string>& carried,
                         const google::protobuf::RepeatedPtrField<std::string>& outputs,
                         const std::string& base, NodeList& nodes, NameSet& taken) {
  for (size_t j = 0; j < carried.size(); ++j) {
    const std::string& out = outputs[static_cast<int>(j)];
    if (out.empty()) continue;
    add_node(nodes, "Identity", fresh_name(base + "/unrolled/" + out, taken), {carried[j]}, out);
  }
}

std::string base_of(const onnx::NodeProto& node) {
  return node.name().empty() ? node.output(0) : node.name();
}

// Appends the unrolled trips of `loop` (checked by the caller) to `nodes`.
void unroll_loop(const onnx::NodeProto& loop, const onnx::GraphProto& body, int64_t trips,
                 int64_t opset, onnx::GraphProto& graph, NodeList& nodes, NameSet& taken) {
  const std::string base = base_of(loop);
  const int carried_count = loop.input_size() - 2;
  const int scan_count = loop.output_size() - carried_count;
  std::vector<std::string> carried(loop.input().begin() + 2, loop.input().end());
  std::vector<std::vector<std::string>> scans(static_cast<size_t>(scan_count));
  const Body prepared = prepare_body(body, base, graph, taken);
  for (int64_t k = 0; k < trips; ++k) {
    const std::string trip = base + "/iter" + std::to_string(k) + "/";
    std::vector<std::string> inputs = {fresh_name(trip + "iteration", taken),
                                       fresh_name(trip + "condition", taken)};
    add_scalar_initializer(graph, inputs[0], DType::kI64, k);
    add_scalar_initializer(graph, inputs[1], DType::kBool, 1);
    inputs.insert(inputs.end(), carried.begin(), carried.end());
    const std::vector<std::string> outputs = append_trip(prepared, base, k, inputs, nodes, taken);
    for (int j = 0; j < carried_count; ++j) {
      carried[static_cast<size_t>(j)] = outputs[static_cast<size_t>(1 + j)];
    }
    for (int j = 0; j < scan_count; ++j) {
      scans[static_cast<size_t>(j)].push_back(outputs[static_cast<size_t>(1 + carried_count + j)]);
    }
  }
  add_carried_outputs(carried, loop.output(), base, nodes, taken);
  for (int j = 0; j < scan_count; ++j) {
    const std::string& out = loop.output(carried_count + j);
    if (!out.empty()) {
      stack_rows(scans[static_cast<size_t>(j)], 0, out, base, opset, graph, nodes, taken);
    }
  }
}

// A Scan's attributes (opset 9 on), their lengths and values checked.
struct ScanAttributes {
  int64_t scan_inputs = 0;
  std::vector<int64_t> input_axes, input_reversed, output_axes, output_reversed;
};

Result<ScanAttributes> scan_attributes(const onnx::NodeProto& scan, const std::string& where) {
  ScanAttributes a;
  bool has_count = false;
  for (const auto& attr : scan.attribute()) {
    const std::vector<int64_t> ints(attr.ints().begin(), attr.ints().end());
    if (attr.name() == "num_scan_inputs") {
      a.scan_inputs = attr.i();
      has_count = true;
    } else if (attr.name() == "scan_input_axes") {
      a.input_axes = ints;
    } else if (attr.name() == "scan_input_directions") {
      a.input_reversed = ints;
    } else if (attr.name() == "scan_output_axes") {
      a.output_axes = ints;
    } else if (attr.name() == "scan_output_directions") {
      a.output_reversed = ints;
    }
  }
  if (!has_count || a.scan_inputs < 1 || a.scan_inputs > scan.input_size()) {
    return invalid_argument(where + ": num_scan_inputs must be in [1, " +
                            std::to_string(scan.input_size()) + "] (the node's inputs)");
  }
  const int64_t states = scan.input_size() - a.scan_inputs;
  if (scan.output_size() < states) {
    return invalid_argument(where + " has " + std::to_string(states) + " state inputs and " +
                            std::to_string(scan.output_size()) + " outputs; it needs one per state");
  }
  const size_t m = static_cast<size_t>(a.scan_inputs);
  const size_t k = static_cast<size_t>(scan.output_size() - states);
  const auto check = [&](std::vector<int64_t>& values, size_t count, const char* name,
                         bool direction) -> Status {
    if (values.empty()) values.assign(count, 0);
    if (values.size() != count) {
      return invalid_argument(where + ": " + name + " has " + std::to_string(values.size()) +
                              " values for " + std::to_string(count));
    }
    for (int64_t v : values) {
      if (direction && v != 0 && v != 1) {
        return invalid_argument(where + ": " + name + " holds " + std::to_string(v) +
                                " (0 forward, 1 reverse)");
      }
      if (!direction && (v < -static_cast<int64_t>(kMaxRank) || v > static_cast<int64_t>(kMaxRank))) {
        return invalid_argument(where + ": " + name + " holds the axis " + std::to_string(v));
      }
    }
    return Status::ok();
  };
  HSCHED_RETURN_IF_ERROR(check(a.input_axes, m, "scan_input_axes", false));
  HSCHED_RETURN_IF_ERROR(check(a.input_reversed, m, "scan_input_directions", true));
  HSCHED_RETURN_IF_ERROR(check(a.output_axes, k, "scan_output_axes", false));
  HSCHED_RETURN_IF_ERROR(check(a.output_reversed, k, "scan_output_directions", true));
  return a;
}

// Appends the unrolled iterations of `scan` to `nodes`: iteration t takes element t (counted
// from the end for a reversed input) of each scan input along its axis, by Gather of a scalar
// index, which drops the axis as the body expects.
void unroll_scan(const onnx::NodeProto& scan, const onnx::GraphProto& body,
                 const ScanAttributes& a, const std::vector<int64_t>& axes, int64_t iterations,
                 int64_t opset, onnx::GraphProto& graph, NodeList& nodes, NameSet& taken) {
  const std::string base = base_of(scan);
  const int state_count = scan.input_size() - static_cast<int>(a.scan_inputs);
  const int scan_outputs = scan.output_size() - state_count;
  std::vector<std::string> states(scan.input().begin(), scan.input().begin() + state_count);
  std::vector<std::vector<std::string>> rows(static_cast<size_t>(scan_outputs));
  const Body prepared = prepare_body(body, base, graph, taken);
  std::vector<std::string> index_names(static_cast<size_t>(iterations));
  const auto index = [&](int64_t position) -> const std::string& {
    std::string& name = index_names[static_cast<size_t>(position)];
    if (name.empty()) {
      name = fresh_name(base + "/index" + std::to_string(position), taken);
      add_scalar_initializer(graph, name, DType::kI64, position);
    }
    return name;
  };
  for (int64_t t = 0; t < iterations; ++t) {
    std::vector<std::string> inputs = states;
    for (int j = 0; j < a.scan_inputs; ++j) {
      const size_t ju = static_cast<size_t>(j);
      const std::string element = fresh_name(
          base + "/iter" + std::to_string(t) + "/" + body.input(state_count + j).name(), taken);
      const int64_t position = a.input_reversed[ju] != 0 ? iterations - 1 - t : t;
      add_int_attribute(add_node(nodes, "Gather", element,
                                 {scan.input(state_count + j), index(position)}, element),
                        "axis", axes[ju]);
      inputs.push_back(element);
    }
    const std::vector<std::string> outputs = append_trip(prepared, base, t, inputs, nodes, taken);
    std::copy(outputs.begin(), outputs.begin() + state_count, states.begin());
    for (int j = 0; j < scan_outputs; ++j) {
      rows[static_cast<size_t>(j)].push_back(outputs[static_cast<size_t>(state_count + j)]);
    }
  }
  add_carried_outputs(states, scan.output(), base, nodes, taken);
  for (int j = 0; j < scan_outputs; ++j) {
    const size_t ju = static_cast<size_t>(j);
    const std::string& out = scan.output(state_count + j);
    if (out.empty()) continue;
    if (a.output_reversed[ju] != 0) std::reverse(rows[ju].begin(), rows[ju].end());
    stack_rows(rows[ju], a.output_axes[ju], out, base, opset, graph, nodes, taken);
  }
}

// What unrolling adds to the graph: `trips` copies of the body's nodes plus `per_trip` more
// nodes each trip and `extra` once; false when that passes `budget` or kMaxUnrolledBytes.
bool within_budget(const onnx::GraphProto& body, int64_t trips, int64_t per_trip, int64_t extra,
                   int64_t& budget) {
  const int64_t added = trips * (body.node_size() + per_trip) + extra;
  int64_t constant_bytes = 0;
  for (const auto& init : body.initializer()) {
    constant_bytes += static_cast<int64_t>(init.ByteSizeLong());
  }
  const int64_t trip_bytes = static_cast<int64_t>(body.ByteSizeLong()) - constant_bytes;
  if (added > budget || trip_bytes * trips > kMaxUnrolledBytes) return false;
  budget -= added;
  return true;
}

// Rebuilds the node list of `graph`, in order: node i replaced by what `expand(i, node, nodes,
// taken)` appends to `nodes` when it returns true, else kept. `taken` starts as every name of the
// model, for the new names expand makes.
template <typename Expand>
void replace_nodes(onnx::GraphProto& graph, Expand expand) {
  NameSet taken;
  add_all_names(graph, taken);
  NodeList nodes;
  nodes.Reserve(graph.node_size());
  for (int i = 0; i < graph.node_size(); ++i) {
    onnx::NodeProto& node = *graph.mutable_node(i);
    if (!expand(i, node, nodes, taken)) nodes.Add()->Swap(&node);
  }
  graph.mutable_node()->Swap(&nodes);
}

}  // namespace

bool is_loop_node(const onnx::NodeProto& node) {
  return node.op_type() == "Loop" && is_default_domain(node.domain());
}

Result<int> unroll_constant_loops(onnx::GraphProto& graph, ExternalData& external, int64_t opset,
                                  int64_t& budget) {
  Initializers initializers;
  for (const auto& init : graph.initializer()) initializers[init.name()] = &init;
  // The trips of each Loop that unrolls (-1 for every other node), decided before the graph
  // changes. validate_and_sort() checked the body's input and output counts.
  std::vector<int64_t> trips(static_cast<size_t>(graph.node_size()), -1);
  int count = 0;
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    const onnx::GraphProto* body = is_loop_node(node) ? body_of(node) : nullptr;
    if (body == nullptr || node.input_size() < 2 || node.input(0).empty()) continue;
    const auto m = scalar_of(initializers, node.input(0), DType::kI64, external);
    if (!m || *m < 0 || *m > kMaxUnrolledTrips) continue;
    if (!node.input(1).empty()) {
      const auto condition = scalar_of(initializers, node.input(1), DType::kBool, external);
      if (!condition || *condition == 0) continue;
    }
    if (!passes_condition_through(*body)) continue;
    const bool scans = node.output_size() > node.input_size() - 2;
    if (*m == 0 && scans) continue;
    if (!within_budget(*body, *m, node.output_size() + 2, node.output_size(), budget)) continue;
    trips[static_cast<size_t>(i)] = *m;
    ++count;
  }
  if (count == 0) return 0;
  replace_nodes(graph, [&](int i, onnx::NodeProto& node, NodeList& nodes, NameSet& taken) {
    const int64_t m = trips[static_cast<size_t>(i)];
    if (m < 0) return false;
    unroll_loop(node, *body_of(node), m, opset, graph, nodes, taken);
    return true;
  });
  return count;
}

bool is_scan_node(const onnx::NodeProto& node) {
  return node.op_type() == "Scan" && is_default_domain(node.domain());
}

Result<int> unroll_scans(onnx::GraphProto& graph, int64_t opset, int64_t& budget) {
  std::unordered_map<std::string, Shape> shapes;
  for (const auto& init : graph.initializer()) {
    shapes[init.name()] = Shape(std::vector<int64_t>(init.dims().begin(), init.dims().end()));
  }
  for (const auto* infos : {&graph.input(), &graph.value_info()}) {
    for (const auto& info : *infos) shapes.emplace(info.name(), shape_from_type(info.type()));
  }
  struct Unrolled {
    ScanAttributes attributes;
    std::vector<int64_t> axes;  // of the scan inputs, in [0, rank)
    int64_t iterations = 0;
  };
  std::vector<std::optional<Unrolled>> plans(static_cast<size_t>(graph.node_size()));
  int count = 0;
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    const onnx::GraphProto* body = is_scan_node(node) ? body_of(node) : nullptr;
    if (body == nullptr) continue;
    const std::string where = node_description(node, i);
    HSCHED_ASSIGN_OR_RETURN(ScanAttributes a, scan_attributes(node, where));
    const int state_count = node.input_size() - static_cast<int>(a.scan_inputs);
    std::vector<int64_t> axes;
    int64_t iterations = -1;  // -1 until a scan input's length is known
    bool known = true;
    for (int j = 0; j < a.scan_inputs && known; ++j) {
      const auto it = shapes.find(node.input(state_count + j));
      known = it != shapes.end() && it->second.rank_known;
      if (!known) break;
      const Shape* shape = &it->second;
      const int64_t rank = static_cast<int64_t>(shape->rank());
      int64_t axis = a.input_axes[static_cast<size_t>(j)];
      if (axis < -rank || axis >= rank) {
        return invalid_argument(where + ": scan_input_axes holds " + std::to_string(axis) +
                                " for an input of rank " + std::to_string(rank));
      }
      if (axis < 0) axis += rank;
      const int64_t length = shape->dims[static_cast<size_t>(axis)];
      known = length != kDynamicDim;
      if (known && iterations >= 0 && length != iterations) {
        return invalid_argument(where + ": the scan inputs have " + std::to_string(iterations) +
                                " and " + std::to_string(length) + " elements along their axes");
      }
      iterations = length;
      axes.push_back(axis);
    }
    if (!known || iterations > kMaxUnrolledTrips) continue;
    const int scan_outputs = node.output_size() - state_count;
    if (iterations == 0 && scan_outputs > 0) continue;
    if (!within_budget(*body, iterations, a.scan_inputs + scan_outputs, node.output_size(),
                       budget)) {
      continue;
    }
    plans[static_cast<size_t>(i)] = Unrolled{std::move(a), std::move(axes), iterations};
    ++count;
  }
  if (count == 0) return 0;
  replace_nodes(graph, [&](int i, onnx::NodeProto& node, NodeList& nodes, NameSet& taken) {
    const auto& plan = plans[static_cast<size_t>(i)];
    if (!plan) return false;
    unroll_scan(node, *body_of(node), plan->attributes, plan->axes, plan->iterations, opset,
                graph, nodes, taken);
    return true;
  });
  return count;
}

Status refuse_remaining_loops(const onnx::GraphProto& graph) {
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    if (is_scan_node(node)) {
      return invalid_argument(node_description(node, i) +
                              ": hsched runs a Scan by unrolling it, which needs the length of "
                              "its scan inputs known at load time (at most " +
                              std::to_string(kMaxUnrolledTrips) + ", and not 0 with scan outputs)");
    }
    if (!is_loop_node(node)) continue;
    return invalid_argument(node_description(node, i) +
                            ": hsched runs a Loop by unrolling it, which needs a trip count known "
                            "at load time (at most " +
                            std::to_string(kMaxUnrolledTrips) +
                            ") and a condition that never ends it early");
  }
  return Status::ok();
}

}  // namespace hsched
