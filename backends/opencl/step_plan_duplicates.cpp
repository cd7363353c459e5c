// duplicate_nodes (step_plan.h): nodes that compute what an earlier node computes, which
// plan_kernels runs once.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <type_traits>
#include <variant>

#include "backends/opencl/step_plan.h"

namespace hsched::opencl::detail {
namespace {

bool same_attributes(const AttributeMap& a, const AttributeMap& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const auto& x, const auto& y) {
    return x.first == y.first && x.second.index() == y.second.index() &&
           std::visit(
               [&](const auto& value) {
                 using T = std::decay_t<decltype(value)>;
                 if constexpr (std::is_same_v<T, Tensor>) {
                   return false;
                 } else {
                   return value == std::get<T>(y.second);
                 }
               },
               x.second);
  });
}

// Whether a constant's bytes, dtype and shape are another's.
bool same_constant(const Value& u, const Value& v) {
  return u.is_constant() && v.is_constant() && u.dtype == v.dtype && u.shape.dims == v.shape.dims &&
         u.constant->byte_size() == v.constant->byte_size() &&
         std::equal(u.constant->raw(), u.constant->raw() + u.constant->byte_size(),
                    v.constant->raw());
}

}  // namespace

std::vector<std::pair<NodeId, NodeId>> duplicate_nodes(const Graph& graph,
                                                       const std::vector<NodeId>& order) {
  static const std::set<std::string> kShared = {"Where", "Cast",    "Expand",      "Equal",
                                                "Less",  "Greater", "LessOrEqual", "GreaterOrEqual",
                                                "Not",   "And",     "Or",          "Xor"};
  const std::set<ValueId> outputs(graph.outputs().begin(), graph.outputs().end());
  std::map<ValueId, ValueId> same_as;  // a duplicate's output -> the first's
  const auto read_as = [&](ValueId v) {
    const auto it = v == kNoValue ? same_as.end() : same_as.find(v);
    return it == same_as.end() ? v : it->second;
  };
  const auto same_computation = [&](const Node& a, const Node& b) {
    if (a.op_type != b.op_type || a.inputs.size() != b.inputs.size() ||
        !same_attributes(a.attributes, b.attributes)) {
      return false;
    }
    for (size_t i = 0; i < a.inputs.size(); ++i) {
      const ValueId x = read_as(a.inputs[i]), y = read_as(b.inputs[i]);
      if (x == y) continue;
      if (x == kNoValue || y == kNoValue || !same_constant(graph.value(x), graph.value(y))) {
        return false;
      }
    }
    return true;
  };
  std::vector<std::pair<NodeId, NodeId>> duplicates;
  // Candidates by op and first input (its value, or a constant's shape): few compared each.
  std::map<std::pair<std::string, std::string>, std::vector<NodeId>> candidates;
  for (NodeId id : order) {
    const Node& node = graph.node(id);
    if (!kShared.count(node.op_type) || !node.domain.empty() || node.outputs.size() != 1 ||
        node.outputs[0] == kNoValue || outputs.count(node.outputs[0]) || node.inputs.empty()) {
      continue;
    }
    const ValueId in = read_as(node.inputs[0]);
    const std::string key = in == kNoValue                  ? ""
                            : graph.value(in).is_constant() ? graph.value(in).shape.to_string()
                                                            : std::to_string(in);
    std::vector<NodeId>& bucket = candidates[{node.op_type, key}];
    const auto first = std::find_if(bucket.begin(), bucket.end(), [&](NodeId c) {
      return same_computation(graph.node(c), node);
    });
    if (first == bucket.end()) {
      bucket.push_back(id);
      continue;
    }
    same_as[node.outputs[0]] = graph.node(*first).outputs[0];
    duplicates.emplace_back(id, *first);
  }
  return duplicates;
}

}  // namespace hsched::opencl::detail
