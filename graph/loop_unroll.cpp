#include "graph/loop_unroll.h"

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

// Appends the unrolled trips of `loop` (checked by the caller) to `nodes`.
void unroll(const onnx::NodeProto& loop, const onnx::GraphProto& body, int64_t trips, int64_t opset,
            onnx::GraphProto& graph, NodeList& nodes, NameSet& taken) {
  const std::string base = loop.name().empty() ? loop.output(0) : loop.name();
  const int carried_count = loop.input_size() - 2;
  const int scan_count = loop.output_size() - carried_count;
  std::vector<std::string> carried(loop.input().begin() + 2, loop.input().end());
  std::vector<std::vector<std::string>> scans(static_cast<size_t>(scan_count));
  // The body's initializers are the same every trip: moved into the graph once, renamed.
  onnx::GraphProto per_trip = body;
  per_trip.clear_initializer();
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
  rename_in_graph(per_trip, constants);
  std::vector<std::string> defined;
  for (const auto& inner : body.node()) {
    for (const auto& out : inner.output()) {
      if (!out.empty()) defined.push_back(out);
    }
  }
  defined.push_back("iteration");
  defined.push_back("condition");
  for (int64_t k = 0; k < trips; ++k) {
    const std::string prefix = unique_prefix(base + "/iter" + std::to_string(k), defined, taken);
    onnx::GraphProto copy = per_trip;
    Renames renamed;
    for (const auto& name : defined) {
      renamed.emplace(name, prefix + name);
      taken.insert(prefix + name);
    }
    renamed[body.input(0).name()] = prefix + "iteration";
    renamed[body.input(1).name()] = prefix + "condition";
    for (int j = 0; j < carried_count; ++j) {
      renamed[body.input(2 + j).name()] = carried[static_cast<size_t>(j)];
    }
    rename_in_graph(copy, renamed);
    add_scalar_initializer(graph, prefix + "iteration", DType::kI64, k);
    add_scalar_initializer(graph, prefix + "condition", DType::kBool, 1);
    for (auto& inner : *copy.mutable_node()) {
      if (!inner.name().empty()) inner.set_name(prefix + inner.name());
      nodes.Add()->Swap(&inner);
    }
    for (int j = 0; j < carried_count; ++j) {
      carried[static_cast<size_t>(j)] = copy.output(1 + j).name();
    }
    for (int j = 0; j < scan_count; ++j) {
      scans[static_cast<size_t>(j)].push_back(copy.output(1 + carried_count + j).name());
    }
  }
  const auto fresh = [&](const std::string& name) {
    return fresh_name(base + "/unrolled/" + name, taken);
  };
  for (int j = 0; j < carried_count; ++j) {
    const std::string& out = loop.output(j);
    if (out.empty()) continue;
    add_node(nodes, "Identity", fresh("carried_" + std::to_string(j)),
             {carried[static_cast<size_t>(j)]}, out);
  }
  const std::string axes = fresh("axis0");
  if (scan_count > 0 && opset >= 13) {
    onnx::TensorProto& tensor = *graph.add_initializer();
    tensor.set_name(axes);
    tensor.set_data_type(dtype_to_onnx(DType::kI64));
    tensor.add_dims(1);
    tensor.add_int64_data(0);
  }
  for (int j = 0; j < scan_count; ++j) {
    const std::string& out = loop.output(carried_count + j);
    if (out.empty()) continue;
    std::vector<std::string> rows;
    for (const auto& value : scans[static_cast<size_t>(j)]) {
      const std::string row = fresh(value + "/row");
      onnx::NodeProto& unsqueeze = opset >= 13
                                       ? add_node(nodes, "Unsqueeze", row, {value, axes}, row)
                                       : add_node(nodes, "Unsqueeze", row, {value}, row);
      if (opset < 13) {
        onnx::AttributeProto& attr = *unsqueeze.add_attribute();
        attr.set_name("axes");
        attr.set_type(onnx::AttributeProto::INTS);
        attr.add_ints(0);
      }
      rows.push_back(row);
    }
    onnx::NodeProto& concat =
        add_node(nodes, "Concat", fresh("scan_" + std::to_string(j)), rows, out);
    onnx::AttributeProto& axis = *concat.add_attribute();
    axis.set_name("axis");
    axis.set_type(onnx::AttributeProto::INT);
    axis.set_i(0);
  }
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
    const int64_t added = *m * (body->node_size() + 2) + node.output_size() * (*m + 1);
    int64_t constant_bytes = 0;
    for (const auto& init : body->initializer()) {
      constant_bytes += static_cast<int64_t>(init.ByteSizeLong());
    }
    const int64_t trip_bytes = static_cast<int64_t>(body->ByteSizeLong()) - constant_bytes;
    if (added > budget || trip_bytes * *m > kMaxUnrolledBytes) continue;
    budget -= added;
    trips[static_cast<size_t>(i)] = *m;
    ++count;
  }
  if (count == 0) return 0;
  NameSet taken;
  add_all_names(graph, taken);
  NodeList nodes;
  nodes.Reserve(graph.node_size());
  for (int i = 0; i < graph.node_size(); ++i) {
    onnx::NodeProto& node = *graph.mutable_node(i);
    const int64_t m = trips[static_cast<size_t>(i)];
    if (m < 0) {
      nodes.Add()->Swap(&node);
    } else {
      unroll(node, *body_of(node), m, opset, graph, nodes, taken);
    }
  }
  graph.mutable_node()->Swap(&nodes);
  return count;
}

Status refuse_remaining_loops(const onnx::GraphProto& graph) {
  for (int i = 0; i < graph.node_size(); ++i) {
    if (!is_loop_node(graph.node(i))) continue;
    return invalid_argument(node_description(graph.node(i), i) +
                            ": hsched runs a Loop by unrolling it, which needs a trip count known "
                            "at load time (at most " +
                            std::to_string(kMaxUnrolledTrips) +
                            ") and a condition that never ends it early");
  }
  return Status::ok();
}

}  // namespace hsched
