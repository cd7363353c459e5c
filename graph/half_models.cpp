#include "graph/half_models.h"

#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/float16.h"

namespace hsched {
namespace {

bool is_half(DType dtype) { return dtype == DType::kF16 || dtype == DType::kBF16; }

bool is_cast(const Node& node) {
  return node.domain.empty() && (node.op_type == "Cast" || node.op_type == "CastLike");
}

// A half tensor's values in float32 (exact).
Tensor widened(const Tensor& half) {
  Tensor out = Tensor::uninitialized(DType::kF32, half.dims());
  const auto in = half.values<uint16_t>();
  auto values = out.values<float>();
  const bool bf16 = half.dtype() == DType::kBF16;
  for (size_t i = 0; i < in.size(); ++i) {
    values[i] = bf16 ? bf16_to_float(in[i]) : half_to_float(in[i]);
  }
  return out;
}

// ConstantOfShape's value and a `dtype` naming a half type, in float32.
void widen_attributes(Node& node) {
  for (auto& [key, attr] : node.attributes) {
    if (auto* tensor = std::get_if<Tensor>(&attr); tensor != nullptr && is_half(tensor->dtype())) {
      *tensor = widened(*tensor);
    } else if (auto* type = std::get_if<int64_t>(&attr); type != nullptr && key == "dtype") {
      const auto dtype = dtype_from_onnx(static_cast<int32_t>(*type));
      if (dtype && is_half(*dtype)) *type = dtype_to_onnx(DType::kF32);
    }
  }
}

class Widening {
 public:
  explicit Widening(const Graph& graph) : old_(graph), map_(graph.values().size(), kNoValue) {
    for (const Value& value : graph.values()) taken_.insert(value.name);
    for (ValueId id : graph.outputs()) outputs_.insert(id);
    out_.name = graph.name;
    out_.opset = graph.opset;
  }

  Graph run() && {
    for (size_t i = 0; i < old_.values().size(); ++i) {
      if (old_.values()[i].is_constant()) add_constant(static_cast<ValueId>(i));
    }
    for (ValueId id : old_.inputs()) {
      const Value& value = old_.value(id);
      const ValueId input = out_.add_value(value.name, value.dtype, value.shape);
      out_.add_input(input);
      map_[static_cast<size_t>(id)] = input;
      if (is_half(value.dtype)) widen_for_consumers(id, input);
    }
    for (const Node& node : old_.nodes()) add_node(node);
    for (ValueId id : old_.outputs()) {
      const Value& value = old_.value(id);
      const auto kept = out_.find_value(value.name);
      if (kept && out_.value(*kept).dtype == value.dtype) {
        out_.add_output(*kept);
      } else {  // a half value computed in float32 under another name
        out_.add_output(add_cast(map_[static_cast<size_t>(id)], value.name, value.dtype));
      }
    }
    return std::move(out_);
  }

 private:
  ValueId mapped(ValueId id) const {
    return id == kNoValue ? kNoValue : map_[static_cast<size_t>(id)];
  }

  std::string fresh_name(const std::string& base) {
    std::string name = base + "_fp32";
    for (int k = 1; taken_.count(name) != 0; ++k) name = base + "_fp32_" + std::to_string(k);
    taken_.insert(name);
    return name;
  }

  // A Cast of `from` to `to`, writing a new value named `name`.
  ValueId add_cast(ValueId from, const std::string& name, DType to) {
    const ValueId out = out_.add_value(name, to, out_.value(from).shape);
    Node cast;
    cast.name = name + "_cast";
    cast.op_type = "Cast";
    cast.inputs = {from};
    cast.outputs = {out};
    cast.attributes["to"] = int64_t{dtype_to_onnx(to)};
    out_.add_node(std::move(cast));
    return out;
  }

  // Consumers of the half value `id` (written as `kept`) read it through a Cast to float32.
  void widen_for_consumers(ValueId id, ValueId kept) {
    if (old_.value(id).consumers.empty()) return;
    map_[static_cast<size_t>(id)] = add_cast(kept, fresh_name(old_.value(id).name), DType::kF32);
  }

  void add_constant(ValueId id) {
    const Value& value = old_.value(id);
    if (!is_half(value.dtype)) {
      map_[static_cast<size_t>(id)] = out_.add_constant(value.name, *value.constant);
      return;
    }
    // A half constant that is also a graph output keeps its name for the output.
    std::string name = value.name;
    if (outputs_.count(id) != 0) {
      out_.add_constant(value.name, *value.constant);
      name = fresh_name(value.name);
    }
    map_[static_cast<size_t>(id)] = out_.add_constant(name, widened(*value.constant));
  }

  void add_node(const Node& node) {
    Node copy = node;
    for (ValueId& input : copy.inputs) input = mapped(input);
    const bool rounds = is_cast(node) && node.outputs.size() == 1 && node.outputs[0] != kNoValue &&
                        is_half(old_.value(node.outputs[0]).dtype);
    if (rounds && node.op_type == "CastLike") {  // its target is float32 now: a Cast keeps it
      copy.op_type = "Cast";
      copy.inputs.resize(1);
      copy.attributes = {{"to", int64_t{dtype_to_onnx(old_.value(node.outputs[0]).dtype)}}};
    } else if (!rounds) {
      widen_attributes(copy);
    }
    copy.outputs.clear();
    for (ValueId id : node.outputs) {
      if (id == kNoValue) {
        copy.outputs.push_back(kNoValue);
        continue;
      }
      const Value& value = old_.value(id);
      DType dtype = value.dtype;
      std::string name = value.name;
      if (is_half(dtype) && !rounds) {
        dtype = DType::kF32;
        if (outputs_.count(id) != 0) name = fresh_name(value.name);
      }
      const ValueId out = out_.add_value(std::move(name), dtype, value.shape);
      map_[static_cast<size_t>(id)] = out;
      copy.outputs.push_back(out);
    }
    out_.add_node(std::move(copy));
    if (rounds) widen_for_consumers(node.outputs[0], map_[static_cast<size_t>(node.outputs[0])]);
  }

  const Graph& old_;
  Graph out_;
  std::vector<ValueId> map_;  // old value -> the new value its consumers read
  std::unordered_set<std::string> taken_;
  std::unordered_set<ValueId> outputs_;
};

}  // namespace

bool computes_in_half(const Graph& graph) {
  for (const Node& node : graph.nodes()) {
    if (is_cast(node)) continue;
    for (const auto* ids : {&node.inputs, &node.outputs}) {
      for (ValueId id : *ids) {
        if (id != kNoValue && is_half(graph.value(id).dtype)) return true;
      }
    }
  }
  return false;
}

Graph widen_half_values(Graph graph) {
  if (!computes_in_half(graph)) return graph;
  return Widening(graph).run();
}

}  // namespace hsched
