#include "graph/integer_layers.h"

#include <algorithm>
#include <unordered_set>

namespace hsched {

bool has_integer_form(const std::string& op_type) {
  static const std::unordered_set<std::string> kOps = {
      "Conv",      "ConvTranspose", "MatMul",       "Gemm",         "Add",
      "Sub",       "Mul",           "MaxPool",      "AveragePool",  "GlobalAveragePool",
      "Relu",      "Clip",          "LeakyRelu",    "Concat",       "Reshape",
      "Transpose", "Flatten",       "Squeeze",      "Unsqueeze",    "Slice",
      "Gather",    "Split",         "DepthToSpace", "SpaceToDepth", "Resize"};
  return kOps.count(op_type) != 0;
}

bool is_quantization(const Node& node) {
  return node.op_type == "QuantizeLinear" || node.op_type == "DequantizeLinear";
}

std::vector<bool> from_constants(const Graph& graph) {
  std::vector<bool> folded(graph.values().size(), false);
  for (ValueId v = 0; v < static_cast<ValueId>(graph.values().size()); ++v) {
    folded[static_cast<size_t>(v)] = graph.value(v).is_constant();
  }
  // Until nothing changes: node ids need not be in topological order.
  for (bool changed = true; changed;) {
    changed = false;
    for (const Node& node : graph.nodes()) {
      if (node.inputs.empty() || node.op_type.rfind("Random", 0) == 0) continue;
      const bool all = std::all_of(node.inputs.begin(), node.inputs.end(), [&](ValueId in) {
        return in == kNoValue || folded[static_cast<size_t>(in)];
      });
      for (ValueId out : node.outputs) {
        if (!all || out == kNoValue || folded[static_cast<size_t>(out)]) continue;
        folded[static_cast<size_t>(out)] = true;
        changed = true;
      }
    }
  }
  return folded;
}

namespace {

// Whether node `id` is an integer layer, `folded` being from_constants(graph).
bool is_integer_layer(const Graph& graph, NodeId id, const std::vector<bool>& folded) {
  const Node& node = graph.node(id);
  if (!has_integer_form(node.op_type)) return false;
  const auto& outputs = graph.outputs();
  const auto is_output = [&](ValueId v) {
    return std::find(outputs.begin(), outputs.end(), v) != outputs.end();
  };
  int dequantized = 0;
  for (ValueId in : node.inputs) {
    if (in == kNoValue) continue;
    const Value& value = graph.value(in);
    if (value.dtype != DType::kF32 || folded[static_cast<size_t>(in)]) continue;
    ++dequantized;
    if (value.producer == kNoNode || is_output(in) ||
        graph.node(value.producer).op_type != "DequantizeLinear") {
      return false;
    }
  }
  for (ValueId out : node.outputs) {
    if (out == kNoValue) continue;
    const Value& value = graph.value(out);
    if (value.consumers.empty() || is_output(out)) return false;
    for (NodeId reader : value.consumers) {
      if (graph.node(reader).op_type != "QuantizeLinear") return false;
    }
  }
  return dequantized > 0;
}

}  // namespace

std::vector<bool> integer_layers(const Graph& graph) {
  const std::vector<bool> folded = from_constants(graph);
  std::vector<bool> layers(graph.nodes().size(), false);
  for (NodeId id = 0; id < static_cast<NodeId>(graph.nodes().size()); ++id) {
    layers[static_cast<size_t>(id)] = is_integer_layer(graph, id, folded);
  }
  return layers;
}

}  // namespace hsched
