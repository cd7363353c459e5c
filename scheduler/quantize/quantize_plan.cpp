#include "scheduler/quantize/quantize_plan.h"

#include <algorithm>
#include <optional>

#include <onnx/onnx_pb.h>

namespace hsched {
namespace {

// Names read anywhere inside a node's subgraphs (If/Loop/Scan bodies): values of the outer graph
// they capture must keep existing under their names.
// (The importer has bounded the nesting depth before this runs.)
void collect_subgraph_reads(const onnx::GraphProto& graph, std::set<std::string>& names) {
  const auto read = [&names](const onnx::GraphProto& body) {
    for (const onnx::NodeProto& inner : body.node()) {
      names.insert(inner.input().begin(), inner.input().end());
    }
    collect_subgraph_reads(body, names);
  };
  for (const onnx::NodeProto& node : graph.node()) {
    for (const onnx::AttributeProto& attr : node.attribute()) {
      if (attr.has_g()) read(attr.g());
      for (const onnx::GraphProto& body : attr.graphs()) read(body);
    }
  }
}

int64_t int_attr(const onnx::NodeProto& node, const std::string& name, int64_t fallback) {
  for (const onnx::AttributeProto& attr : node.attribute()) {
    if (attr.name() == name) return attr.i();
  }
  return fallback;
}

float float_attr(const onnx::NodeProto& node, const std::string& name, float fallback) {
  for (const onnx::AttributeProto& attr : node.attribute()) {
    if (attr.name() == name) return attr.f();
  }
  return fallback;
}

class Planner {
 public:
  Planner(const onnx::GraphProto& proto, const Graph& graph, const QuantizeOptions& options,
          bool per_channel)
      : proto_(proto), graph_(graph), options_(options), per_channel_(per_channel) {
    for (const onnx::TensorProto& init : proto.initializer()) initializers_[init.name()] = &init;
    for (const onnx::ValueInfoProto& input : proto.input()) initializers_.erase(input.name());
    for (const onnx::ValueInfoProto& output : proto.output()) pinned_.insert(output.name());
    collect_subgraph_reads(proto, pinned_);
    for (int i = 0; i < proto.node_size(); ++i) {
      for (const std::string& input : proto.node(i).input()) {
        if (!input.empty()) readers_[input].push_back(i);
      }
    }
  }

  QuantizePlan run() {
    for (int i = 0; i < proto_.node_size(); ++i) {
      const onnx::NodeProto& node = proto_.node(i);
      if (!node.domain().empty() && node.domain() != "ai.onnx") continue;
      const std::string& op = node.op_type();
      if (op != "Conv" && op != "MatMul" && op != "Gemm" && op != "Add" && op != "Mul") continue;
      if (plan_.removed.count(i)) continue;
      std::string why = refusal(node);
      if (!why.empty()) {
        ++plan_.kept[why];
        continue;
      }
      if (op == "Add" || op == "Mul") {
        for (const std::string& input : node.input()) add_activation(input, input);
      } else {
        add_activation(node.input(0), node.input(0));
        const std::string& weight = node.input(1);
        if (constant(weight)) {
          add_weight(weight, weight_axis(node));
        } else {
          add_activation(weight, weight);  // MatMul of two activations
        }
        if (node.input_size() > 2 && !node.input(2).empty() && constant(node.input(2)) &&
            rank(node.input(2)) == 1) {
          plan_.biases.push_back({i, node.input(2), node.input(0), weight});
        }
      }
      add_output(i);
      ++plan_.quantized[op];
    }
    return std::move(plan_);
  }

 private:
  // Why a node of a quantized op type stays fp32; empty when it is quantized.
  std::string refusal(const onnx::NodeProto& node) const {
    const auto& keep = options_.keep;
    if (std::find(keep.begin(), keep.end(), node.name()) != keep.end() ||
        std::find(keep.begin(), keep.end(), node.op_type()) != keep.end()) {
      return "kept";
    }
    if (node.output_size() != 1 || !is_float(node.output(0))) return "not float";
    for (const std::string& input : node.input()) {
      if (!input.empty() && !is_float(input)) return "not float";
    }
    const std::string& op = node.op_type();
    if (op != "Add" && op != "Mul" && constant(node.input(0))) return "constant input";
    // Add and Mul join int8 regions (a residual Add of two convolutions): both inputs already
    // quantized here. Elsewhere (a bias or a scale, transformers' residual stream read by a
    // LayerNorm) they stay fp32: their own quantization would add error and save nothing.
    if (op == "Add" || op == "Mul") {
      for (const std::string& input : node.input()) {
        if (!quantized_tensors_.count(input)) return "not between quantized ops";
      }
    }
    if (op == "Conv" && (!constant(node.input(1)) || rank(node.input(1)) < 3)) {
      return "weight not constant";
    }
    if (op == "Gemm") {
      if (!constant(node.input(1)) || rank(node.input(1)) != 2) return "weight not constant";
      if (float_attr(node, "alpha", 1.0f) != 1.0f || float_attr(node, "beta", 1.0f) != 1.0f) {
        return "alpha or beta not 1";
      }
    }
    return {};
  }

  int weight_axis(const onnx::NodeProto& node) const {
    if (!per_channel_) return -1;
    if (node.op_type() == "Conv") return 0;
    if (node.op_type() == "Gemm") return int_attr(node, "transB", 0) != 0 ? 0 : 1;
    return rank(node.input(1)) == 2 ? 1 : -1;  // MatMul [K, N]: per column
  }

  bool is_float(const std::string& name) const {
    const std::optional<ValueId> id = graph_.find_value(name);
    return id && graph_.value(*id).dtype == DType::kF32 && graph_.value(*id).shape.rank_known;
  }
  // An initializer, or a value hsched folded to a constant (an Identity or Transpose of one).
  bool constant(const std::string& name) const {
    if (initializers_.count(name)) return true;
    const std::optional<ValueId> id = graph_.find_value(name);
    return id && graph_.value(*id).is_constant();
  }
  int rank(const std::string& name) const {
    const std::optional<ValueId> id = graph_.find_value(name);
    return id ? static_cast<int>(graph_.value(*id).shape.dims.size()) : -1;
  }

  void add_activation(const std::string& tensor, const std::string& source) {
    if (tensor.empty() || !quantized_tensors_.insert(tensor).second) return;
    plan_.activations.push_back({tensor, source, softmax_output(tensor)});
  }
  bool softmax_output(const std::string& name) const {
    const std::optional<ValueId> id = graph_.find_value(name);
    if (!id || graph_.value(*id).producer == kNoNode) return false;
    const Node& node = graph_.node(graph_.value(*id).producer);
    return node.domain.empty() && node.op_type == "Softmax";
  }

  void add_weight(const std::string& name, int axis) {
    for (WeightQuant& weight : plan_.weights) {
      if (weight.name != name) continue;
      if (weight.axis != axis) weight.axis = -1;  // read along two axes: one scale
      return;
    }
    plan_.weights.push_back({name, axis});
  }

  // Relu, or Clip with a lower bound of exactly 0 (Relu6): its output's range is [0, at most
  // its upper bound], so a QuantizeLinear of that range clamps its input as the node did.
  bool clamps_at_zero(const onnx::NodeProto& node) const {
    if (!node.domain().empty()) return false;
    if (node.op_type() == "Relu") return true;
    if (node.op_type() != "Clip") return false;
    if (node.input_size() < 2 || node.input(1).empty()) {  // opset < 11: attributes
      return node.input_size() == 1 && float_attr(node, "min", -1.0f) == 0.0f &&
             float_attr(node, "max", 1.0f) > 0.0f;
    }
    const auto scalar = [&](const std::string& name) -> std::optional<float> {
      const std::optional<ValueId> id = graph_.find_value(name);
      if (!id || !graph_.value(*id).is_constant()) return std::nullopt;
      const Tensor& t = *graph_.value(*id).constant;
      if (t.dtype() != DType::kF32 || t.elements() != 1) return std::nullopt;
      return t.values<float>()[0];
    };
    const std::optional<float> low = scalar(node.input(1));
    if (!low || *low != 0.0f) return false;
    if (node.input_size() < 3 || node.input(2).empty()) return true;
    const std::optional<float> high = scalar(node.input(2));
    return high && *high > 0.0f;
  }

  // The node's output, or the output of the Relu (or Relu6 Clip) that alone reads it: it folds
  // into the quantization (clamps_at_zero).
  void add_output(int node) {
    const std::string& output = proto_.node(node).output(0);
    const auto readers = readers_.find(output);
    if (!pinned_.count(output) && readers != readers_.end() && readers->second.size() == 1) {
      const int reader = readers->second.front();
      const onnx::NodeProto& relu = proto_.node(reader);
      if (clamps_at_zero(relu) && relu.output_size() == 1 && !pinned_.count(relu.output(0)) &&
          std::find(options_.keep.begin(), options_.keep.end(), relu.name()) ==
              options_.keep.end()) {
        plan_.removed.insert(reader);
        add_activation(relu.output(0), output);
        return;
      }
    }
    add_activation(output, output);
  }

  const onnx::GraphProto& proto_;
  const Graph& graph_;
  const QuantizeOptions& options_;
  bool per_channel_;
  std::map<std::string, const onnx::TensorProto*> initializers_;  // not graph inputs
  std::set<std::string> pinned_;  // graph outputs and subgraph captures: keep their producers
  std::map<std::string, std::vector<int>> readers_;
  std::set<std::string> quantized_tensors_;
  QuantizePlan plan_;
};

}  // namespace

QuantizePlan plan_quantization(const onnx::GraphProto& proto, const Graph& graph,
                               const QuantizeOptions& options, bool per_channel) {
  return Planner(proto, graph, options, per_channel).run();
}

}  // namespace hsched
