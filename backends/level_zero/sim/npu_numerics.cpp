#include "backends/level_zero/sim/npu_numerics.h"

#include <algorithm>
#include <string>
#include <unordered_set>
#include <vector>

#include "graph/integer_layers.h"

namespace hsched::zesim {
namespace {

class Rewriter {
 public:
  Rewriter(const Graph& source, bool gelu_as_erf)
      : source_(source),
        gelu_as_erf_(gelu_as_erf),
        use_(source.values().size(), kNoValue),
        rounded_(source.values().size(), kNoValue) {
    for (const Value& value : source.values()) names_.insert(value.name);
    out_.name = source.name;
    out_.opset = source.opset;
  }

  Result<Graph> run() {
    HSCHED_ASSIGN_OR_RETURN(const std::vector<NodeId> order, source_.topological_order());
    find_integer_layers();
    for (ValueId id = 0; id < static_cast<ValueId>(source_.values().size()); ++id) {
      const Value& value = source_.value(id);
      if (value.is_constant()) {
        const bool rounds = is_f32(value) && !exact_[static_cast<size_t>(id)];
        const ValueId raw = rounds ? out_.add_constant(unique(value.name + "/f32"), *value.constant)
                                   : out_.add_constant(value.name, *value.constant);
        use_[id] = rounds ? round(raw, value, value.name, value.name) : raw;
      }
    }
    for (ValueId id : source_.inputs()) {
      const Value& value = source_.value(id);
      const ValueId raw = out_.add_value(value.name, value.dtype, value.shape);
      out_.add_input(raw);
      use_[id] = is_f32(value) ? round(raw, value, unique(value.name + "/fp16"), value.name) : raw;
    }
    for (NodeId node_id : order) {
      const Node& node = source_.node(node_id);
      Node copy = node;
      if (gelu_as_erf_ && copy.op_type == "Gelu") copy.attributes.erase("approximate");
      for (ValueId& in : copy.inputs) {
        if (in == kNoValue) continue;
        if (use_[static_cast<size_t>(in)] == kNoValue)
          return invalid_argument("npu numerics: node '" + node.name + "' reads value '" +
                                  source_.value(in).name + "' that nothing produces");
        in = exact_[static_cast<size_t>(in)] && !reads_exact(node_id)
                 ? rounded_copy(in)
                 : use_[static_cast<size_t>(in)];
      }
      std::vector<std::pair<ValueId, ValueId>> to_round;  // (source value, raw output)
      for (ValueId& out : copy.outputs) {
        if (out == kNoValue) continue;
        const Value& value = source_.value(out);
        if (is_f32(value) && !exact_[static_cast<size_t>(out)]) {
          const ValueId raw = out_.add_value(unique(value.name + "/f32"), value.dtype, value.shape);
          to_round.emplace_back(out, raw);
          out = raw;
        } else {
          const ValueId same = out_.add_value(value.name, value.dtype, value.shape);
          use_[static_cast<size_t>(out)] = same;
          out = same;
        }
      }
      out_.add_node(std::move(copy));
      for (const auto& [source_id, raw] : to_round) {
        const Value& value = source_.value(source_id);
        use_[static_cast<size_t>(source_id)] =
            round(raw, value, value.name, node.name.empty() ? value.name : node.name);
      }
    }
    for (ValueId id : source_.outputs()) {
      if (use_[static_cast<size_t>(id)] == kNoValue)
        return invalid_argument("npu numerics: graph output '" + source_.value(id).name +
                                "' is not produced");
      out_.add_output(use_[static_cast<size_t>(id)]);
    }
    return std::move(out_);
  }

 private:
  static bool is_f32(const Value& value) { return value.dtype == DType::kF32; }

  bool reads_exact(NodeId id) const {
    return integer_[static_cast<size_t>(id)] || is_quantization(source_.node(id));
  }

  // The NPU's integer engine runs the integer layers (graph/integer_layers.h) in int8: integer
  // sums, one requantization in f32. Their outputs, the DequantizeLinear outputs and the f32
  // constants quantizations and integer layers read (scales, biases) are exact: no fp16 value
  // between; the other layers (normalizations, Softmax, Erf, Div...) run in fp16 on dequantized
  // values rounded to fp16.
  void find_integer_layers() {
    integer_ = integer_layers(source_);
    exact_.assign(source_.values().size(), false);
    const auto& outputs = source_.outputs();
    for (NodeId id = 0; id < static_cast<NodeId>(source_.nodes().size()); ++id) {
      const Node& node = source_.node(id);
      if (!integer_[static_cast<size_t>(id)] && node.op_type != "DequantizeLinear") continue;
      for (ValueId out : node.outputs) {  // the host reads graph outputs in fp16
        if (out != kNoValue && is_f32(source_.value(out)) &&
            std::find(outputs.begin(), outputs.end(), out) == outputs.end()) {
          exact_[static_cast<size_t>(out)] = true;
        }
      }
    }
    for (ValueId id = 0; id < static_cast<ValueId>(source_.values().size()); ++id) {
      const Value& value = source_.value(id);
      if (!value.is_constant() || !is_f32(value)) continue;
      for (NodeId reader : value.consumers) {
        if (reads_exact(reader)) exact_[static_cast<size_t>(id)] = true;
      }
    }
  }

  // Exact value `id` rounded to fp16, for the float layers that read it (made once).
  ValueId rounded_copy(ValueId id) {
    ValueId& copy = rounded_[static_cast<size_t>(id)];
    if (copy == kNoValue) {
      const Value& value = source_.value(id);
      copy = round(use_[static_cast<size_t>(id)], value, unique(value.name + "/fp16"), value.name);
    }
    return copy;
  }

  std::string unique(const std::string& base) {
    std::string name = base;
    for (int n = 2; names_.count(name) != 0; ++n) name = base + "#" + std::to_string(n);
    names_.insert(name);
    return name;
  }

  // Cast(raw -> f16) -> Cast(-> f32); returns the f32 value, named `name`.
  ValueId round(ValueId raw, const Value& like, const std::string& name, const std::string& label) {
    const ValueId half = out_.add_value(unique(like.name + "/f16"), DType::kF16, like.shape);
    const ValueId rounded = out_.add_value(name, DType::kF32, like.shape);
    Node to_half;
    to_half.name = unique(label + "/npu_to_f16");
    to_half.op_type = "Cast";
    to_half.inputs = {raw};
    to_half.outputs = {half};
    to_half.attributes["to"] = static_cast<int64_t>(dtype_to_onnx(DType::kF16));
    out_.add_node(std::move(to_half));
    Node to_float;
    to_float.name = unique(label + "/npu_to_f32");
    to_float.op_type = "Cast";
    to_float.inputs = {half};
    to_float.outputs = {rounded};
    to_float.attributes["to"] = static_cast<int64_t>(dtype_to_onnx(DType::kF32));
    out_.add_node(std::move(to_float));
    return rounded;
  }

  const Graph& source_;
  bool gelu_as_erf_;
  Graph out_;
  std::vector<ValueId> use_;  // per source value: the value its readers read in out_
  std::vector<bool> exact_;   // per source value: not rounded to fp16 (find_integer_layers)
  std::vector<bool> integer_;     // per source node: an integer layer
  std::vector<ValueId> rounded_;  // per exact source value: its fp16 copy, once made
  std::unordered_set<std::string> names_;
};

}  // namespace

Result<Graph> with_fp16_numerics(const Graph& graph, bool gelu_as_erf) {
  return Rewriter(graph, gelu_as_erf).run();
}

}  // namespace hsched::zesim
