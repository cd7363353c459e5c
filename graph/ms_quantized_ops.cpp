#include "graph/ms_quantized_ops.h"

#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <onnx/onnx_pb.h>

#include "graph/node_proto.h"
#include "graph/onnx_validate.h"

namespace hsched {
namespace {

constexpr char kDomain[] = "com.microsoft";
// Deeper If branches are refused by validation; they are not rewritten.
constexpr int kMaxDepth = 8;

// The graphs a node can read names from, innermost last.
using Scope = std::vector<const onnx::GraphProto*>;

// The element type the scope declares for `name` (initializer, graph input or output, value_info,
// Constant node), or 0 (UNDEFINED) when it does not say.
int32_t declared_type(const Scope& scope, const std::string& name) {
  for (auto graph = scope.rbegin(); graph != scope.rend(); ++graph) {
    for (const auto& init : (*graph)->initializer()) {
      if (init.name() == name) return init.data_type();
    }
    for (const auto* infos : {&(*graph)->input(), &(*graph)->value_info(), &(*graph)->output()}) {
      for (const auto& info : *infos) {
        if (info.name() == name && info.type().has_tensor_type()) {
          return info.type().tensor_type().elem_type();
        }
      }
    }
    for (const auto& node : (*graph)->node()) {
      if (node.op_type() == "Constant" && node.output_size() == 1 && node.output(0) == name) {
        const auto* value = find_attr(node, "value");
        return value != nullptr && value->has_t() ? value->t().data_type() : 0;
      }
    }
  }
  return 0;
}

// Whether `name` is an initializer of rank 0 (a per-tensor scale before opset 13).
bool scalar_initializer(const Scope& scope, const std::string& name) {
  for (auto graph = scope.rbegin(); graph != scope.rend(); ++graph) {
    for (const auto& init : (*graph)->initializer()) {
      if (init.name() == name) return init.dims_size() == 0;
    }
  }
  return false;
}

// The nodes that replace one node, in order. New values are named after the node's first output.
class Expansion {
 public:
  // `index`: the node's position in its graph, which names the new nodes of an unnamed one.
  Expansion(const onnx::NodeProto& node, int index, const Scope& scope, int64_t opset)
      : node_(node),
        label_(node_description(node, index)),
        name_(node.name().empty() ? node.op_type() + "#" + std::to_string(index) : node.name()),
        scope_(scope),
        opset_(opset) {}

  const onnx::NodeProto& node() const { return node_; }
  const std::string& label() const { return label_; }
  int64_t opset() const { return opset_; }
  std::vector<onnx::NodeProto>& nodes() { return nodes_; }
  const std::string& input(int i) const { return node_.input(i); }
  std::string optional_input(int i) const { return has_input(node_, i) ? node_.input(i) : ""; }

  Status refuse(const std::string& what) const {
    return unimplemented(label_ + ": " + what);
  }

  // Inputs `required` must be given; at most `most` inputs.
  Status check_inputs(std::initializer_list<int> required, int most) const {
    if (node_.input_size() > most) {
      return invalid_argument(label_ + ": " + std::to_string(node_.input_size()) +
                              " inputs, at most " + std::to_string(most) + " expected");
    }
    for (int i : required) {
      if (!has_input(node_, i)) {
        return invalid_argument(label_ + ": input " + std::to_string(i) + " is missing");
      }
    }
    if (node_.output_size() != 1 || node_.output(0).empty()) {
      return invalid_argument(label_ + ": expected one output");
    }
    return Status::ok();
  }

  onnx::NodeProto& add(const std::string& op, const std::vector<std::string>& inputs,
                       const std::vector<std::string>& outputs, const std::string& role) {
    onnx::NodeProto& n = nodes_.emplace_back();
    n.set_op_type(op);
    n.set_name(role.empty() ? name_ : name_ + "/" + role);
    for (const auto& in : inputs) n.add_input(in);
    for (const auto& out : outputs) n.add_output(out);
    return n;
  }

  std::string fresh(const std::string& what) {
    return node_.output(0) + "/hsched_" + what + std::to_string(next_++);
  }

  // DequantizeLinear(x, scale, zero_point) into a new value; `axis` for per-axis scales. Before
  // opset 13 (no per-axis DequantizeLinear) the scale must be a scalar initializer.
  Result<std::string> dequantize(const std::string& x, const std::string& scale,
                                 const std::string& zero_point, std::optional<int64_t> axis = {}) {
    if (axis && opset_ < 13 && !scalar_initializer(scope_, scale)) {
      return refuse("per-axis scale '" + scale + "' needs opset 13 or above (the model has " +
                    std::to_string(opset_) + ")");
    }
    const std::string out = fresh("dequantized");
    std::vector<std::string> inputs = {x, scale};
    if (!zero_point.empty()) inputs.push_back(zero_point);
    onnx::NodeProto& n = add("DequantizeLinear", inputs, {out}, "DequantizeLinear_" + x);
    if (axis && opset_ >= 13) add_int(n, "axis", *axis);
    return out;
  }

  // QuantizeLinear(y, scale, zero_point) into the node's output. Without a zero point the output
  // keeps the type of the node's 8-bit operand `like` (QuantizeLinear alone would make uint8).
  void quantize(const std::string& y, const std::string& scale, const std::string& zero_point,
                const std::string& like, const std::string& like_zero_point) {
    std::vector<std::string> inputs = {y, scale};
    if (!zero_point.empty()) {
      inputs.push_back(zero_point);
    } else if (element_type(like, like_zero_point) == onnx::TensorProto::INT8) {
      inputs.push_back(int8_zero());
    }
    add("QuantizeLinear", inputs, {node_.output(0)}, "QuantizeLinear");
  }

  // Copies the node's attributes but those named.
  void copy_attributes(onnx::NodeProto& to, std::initializer_list<const char*> except) const {
    for (const auto& attr : node_.attribute()) {
      bool skip = false;
      for (const char* name : except) skip = skip || attr.name() == name;
      if (!skip) *to.add_attribute() = attr;
    }
  }

  static void add_int(onnx::NodeProto& n, const std::string& name, int64_t value) {
    onnx::AttributeProto* attr = n.add_attribute();
    attr->set_name(name);
    attr->set_type(onnx::AttributeProto::INT);
    attr->set_i(value);
  }

  // Initializers the expansion made (an int8 zero, a float constant), added to the graph.
  std::vector<onnx::TensorProto>& initializers() { return initializers_; }

  std::string float_constant(float value) {
    onnx::TensorProto& t = initializers_.emplace_back();
    t.set_name(fresh("constant"));
    t.set_data_type(onnx::TensorProto::FLOAT);
    t.add_float_data(value);
    return t.name();
  }

 private:
  int32_t element_type(const std::string& x, const std::string& zero_point) const {
    const int32_t from_zero_point = zero_point.empty() ? 0 : declared_type(scope_, zero_point);
    return from_zero_point != 0 ? from_zero_point : declared_type(scope_, x);
  }

  std::string int8_zero() {
    onnx::TensorProto& t = initializers_.emplace_back();
    t.set_name(fresh("zero_point"));
    t.set_data_type(onnx::TensorProto::INT8);
    t.add_int32_data(0);
    return t.name();
  }

  const onnx::NodeProto& node_;
  std::string label_;
  std::string name_;  // of the new nodes: the node's, or its op and index
  const Scope& scope_;
  int64_t opset_;
  std::vector<onnx::NodeProto> nodes_;
  std::vector<onnx::TensorProto> initializers_;
  int next_ = 0;
};

// QLinearAdd, QLinearMul: A, A_scale, [A_zero_point], B, B_scale, [B_zero_point], C_scale,
// [C_zero_point].
Status lower_binary(Expansion& e, const std::string& op) {
  HSCHED_RETURN_IF_ERROR(e.check_inputs({0, 1, 3, 4, 6}, 8));
  HSCHED_ASSIGN_OR_RETURN(std::string a, e.dequantize(e.input(0), e.input(1),
                                                      e.optional_input(2)));
  HSCHED_ASSIGN_OR_RETURN(std::string b, e.dequantize(e.input(3), e.input(4),
                                                      e.optional_input(5)));
  const std::string sum = e.fresh("float");
  e.add(op, {a, b}, {sum}, "");
  e.quantize(sum, e.input(6), e.optional_input(7), e.input(0), e.optional_input(2));
  return Status::ok();
}

// The ops of one 8-bit input: X, X_scale, [X_zero_point], Y_scale, [Y_zero_point], the float
// op taking the node's attributes but `except`, then given `extra` (name, value).
Status lower_unary(Expansion& e, const std::string& op,
                   std::initializer_list<const char*> except = {},
                   std::optional<std::pair<const char*, int64_t>> extra = {}) {
  HSCHED_RETURN_IF_ERROR(e.check_inputs({0, 1, 3}, 5));
  if (int_attr(e.node(), "channels_last", 0) != 0) {
    return e.refuse("channels_last 1 (ONNX Runtime's NHWC layout, from its 'all' optimization "
                    "level) is not supported");
  }
  HSCHED_ASSIGN_OR_RETURN(std::string x, e.dequantize(e.input(0), e.input(1),
                                                      e.optional_input(2)));
  const std::string y = e.fresh("float");
  onnx::NodeProto& n = e.add(op, {x}, {y}, "");
  e.copy_attributes(n, except);
  if (extra) Expansion::add_int(n, extra->first, extra->second);
  e.quantize(y, e.input(3), e.optional_input(4), e.input(0), e.optional_input(2));
  return Status::ok();
}

Status lower_softmax(Expansion& e) {
  const auto* semantics = find_attr(e.node(), "opset");
  if (semantics == nullptr) return invalid_argument(e.label() + ": attribute 'opset' is missing");
  // Before opset 13 Softmax flattens to 2-D at its axis; from 13 it normalizes along the axis
  // alone. The two agree on the last axis.
  const int64_t axis = int_attr(e.node(), "axis", -1);
  if (axis != -1 && (semantics->i() >= 13) != (e.opset() >= 13)) {
    return e.refuse("Softmax of opset " + std::to_string(semantics->i()) + " on axis " +
                    std::to_string(axis) + " in a model of opset " + std::to_string(e.opset()) +
                    " is not supported");
  }
  return lower_unary(e, "Softmax", {"opset", "axis"}, std::make_pair("axis", axis));
}

// QLinearConcat: Y_scale, Y_zero_point, then (X, X_scale, X_zero_point) for each input.
Status lower_concat(Expansion& e) {
  const int n = e.node().input_size();
  if (n < 5 || (n - 2) % 3 != 0) {
    return invalid_argument(e.label() + ": " + std::to_string(n) +
                            " inputs, expected Y_scale, Y_zero_point and triples of X, X_scale, "
                            "X_zero_point");
  }
  HSCHED_RETURN_IF_ERROR(e.check_inputs({0}, n));
  if (find_attr(e.node(), "axis") == nullptr) {
    return invalid_argument(e.label() + ": attribute 'axis' is missing");
  }
  std::vector<std::string> parts;
  for (int i = 2; i < n; i += 3) {
    if (!has_input(e.node(), i) || !has_input(e.node(), i + 1)) {
      return invalid_argument(e.label() + ": input " + std::to_string(i) + " or its scale is " +
                              "missing");
    }
    HSCHED_ASSIGN_OR_RETURN(std::string part, e.dequantize(e.input(i), e.input(i + 1),
                                                           e.optional_input(i + 2)));
    parts.push_back(part);
  }
  const std::string y = e.fresh("float");
  e.copy_attributes(e.add("Concat", parts, {y}, ""), {});
  e.quantize(y, e.input(0), e.optional_input(1), e.input(2), e.optional_input(4));
  return Status::ok();
}

// QGemm: A, a_scale, a_zero_point, B, b_scale, b_zero_point, [C int32], [y_scale],
// [y_zero_point]. b_scale is per tensor or per column of B.
Status lower_qgemm(Expansion& e) {
  HSCHED_RETURN_IF_ERROR(e.check_inputs({0, 1, 3, 4}, 9));
  const bool trans_b = int_attr(e.node(), "transB", 0) != 0;
  const auto* alpha_attr = find_attr(e.node(), "alpha");
  const float alpha = alpha_attr == nullptr ? 1.0f : alpha_attr->f();
  HSCHED_ASSIGN_OR_RETURN(std::string a, e.dequantize(e.input(0), e.input(1),
                                                      e.optional_input(2)));
  HSCHED_ASSIGN_OR_RETURN(std::string b, e.dequantize(e.input(3), e.input(4), e.optional_input(5),
                                                      trans_b ? 0 : 1));
  std::vector<std::string> inputs = {a, b};
  if (has_input(e.node(), 6)) {
    // C is int32 at scale alpha * a_scale * b_scale, zero point 0.
    std::string scale = e.fresh("bias_scale");
    e.add("Mul", {e.input(1), e.input(4)}, {scale}, "bias_scale");
    if (alpha != 1.0f) {
      const std::string scaled = e.fresh("bias_scale");
      e.add("Mul", {scale, e.float_constant(alpha)}, {scaled}, "bias_alpha");
      scale = scaled;
    }
    const std::string c = e.fresh("bias_float");
    Expansion::add_int(e.add("Cast", {e.input(6)}, {c}, "bias_cast"), "to",
                       onnx::TensorProto::FLOAT);
    const std::string bias = e.fresh("bias");
    e.add("Mul", {c, scale}, {bias}, "bias");
    inputs.push_back(bias);
  }
  const bool quantized = has_input(e.node(), 7);
  const std::string y = quantized ? e.fresh("float") : e.node().output(0);
  e.copy_attributes(e.add("Gemm", inputs, {y}, ""), {});
  if (quantized) e.quantize(y, e.input(7), e.optional_input(8), e.input(0), e.optional_input(2));
  return Status::ok();
}

// MatMul of the dequantized operands into the node's output, plus `bias` when given.
void add_matmul(Expansion& e, const std::string& a, const std::string& b,
                const std::string& bias) {
  if (bias.empty()) {
    e.add("MatMul", {a, b}, {e.node().output(0)}, "");
    return;
  }
  const std::string product = e.fresh("product");
  e.add("MatMul", {a, b}, {product}, "");
  e.add("Add", {product, bias}, {e.node().output(0)}, "bias");
}

// MatMulIntegerToFloat: A, B, a_scale, b_scale, [a_zero_point], [b_zero_point], [bias]; the scales
// per tensor or per column.
Status lower_matmul_integer_to_float(Expansion& e) {
  HSCHED_RETURN_IF_ERROR(e.check_inputs({0, 1, 2, 3}, 7));
  HSCHED_ASSIGN_OR_RETURN(std::string a, e.dequantize(e.input(0), e.input(2), e.optional_input(4),
                                                      int64_t{-1}));
  HSCHED_ASSIGN_OR_RETURN(std::string b, e.dequantize(e.input(1), e.input(3), e.optional_input(5),
                                                      int64_t{-1}));
  add_matmul(e, a, b, e.optional_input(6));
  return Status::ok();
}

// DynamicQuantizeMatMul: A (float), B, b_scale, [b_zero_point], [bias]. A is quantized to uint8
// on the fly, as DynamicQuantizeLinear does.
Status lower_dynamic_quantize_matmul(Expansion& e) {
  HSCHED_RETURN_IF_ERROR(e.check_inputs({0, 1, 2}, 5));
  if (e.opset() < 11) return e.refuse("needs opset 11 or above (DynamicQuantizeLinear)");
  const std::string q = e.fresh("a_quantized");
  const std::string scale = e.fresh("a_scale");
  const std::string zero_point = e.fresh("a_zero_point");
  e.add("DynamicQuantizeLinear", {e.input(0)}, {q, scale, zero_point}, "DynamicQuantizeLinear");
  HSCHED_ASSIGN_OR_RETURN(std::string a, e.dequantize(q, scale, zero_point));
  HSCHED_ASSIGN_OR_RETURN(std::string b, e.dequantize(e.input(1), e.input(2), e.optional_input(3),
                                                      int64_t{-1}));
  add_matmul(e, a, b, e.optional_input(4));
  return Status::ok();
}

using Lowering = Status (*)(Expansion&);

// How a com.microsoft op is rewritten, or nullptr when it is not one of those lowered here.
Lowering lowering_of(const std::string& op) {
  static const std::map<std::string, Lowering> kLowerings = {
      {"QLinearAdd", [](Expansion& e) { return lower_binary(e, "Add"); }},
      {"QLinearMul", [](Expansion& e) { return lower_binary(e, "Mul"); }},
      {"QLinearSigmoid", [](Expansion& e) { return lower_unary(e, "Sigmoid"); }},
      {"QLinearLeakyRelu", [](Expansion& e) { return lower_unary(e, "LeakyRelu"); }},
      {"QLinearGlobalAveragePool",
       [](Expansion& e) { return lower_unary(e, "GlobalAveragePool", {"channels_last"}); }},
      {"QLinearAveragePool",
       [](Expansion& e) { return lower_unary(e, "AveragePool", {"channels_last"}); }},
      {"QLinearReduceMean", [](Expansion& e) { return lower_unary(e, "ReduceMean"); }},
      {"QLinearSoftmax", lower_softmax},
      {"QLinearConcat", lower_concat},
      {"QGemm", lower_qgemm},
      {"MatMulIntegerToFloat", lower_matmul_integer_to_float},
      {"DynamicQuantizeMatMul", lower_dynamic_quantize_matmul}};
  const auto it = kLowerings.find(op);
  return it == kLowerings.end() ? nullptr : it->second;
}

// The domain's copies of ONNX operators (the same definitions).
bool is_onnx_copy(const std::string& op) {
  return op == "QuantizeLinear" || op == "DequantizeLinear" || op == "QLinearConv";
}

bool is_ms_quantized(const onnx::NodeProto& node) {
  return node.domain() == kDomain &&
         (is_onnx_copy(node.op_type()) || lowering_of(node.op_type()) != nullptr);
}

Status lower_graph(onnx::GraphProto& graph, Scope scope, int depth, int64_t opset) {
  scope.push_back(&graph);
  bool any = false;
  for (int i = 0; i < graph.node_size() && !any; ++i) any = is_ms_quantized(graph.node(i));
  if (any) {
    if (opset < 10) {
      return unimplemented("ONNX Runtime's quantized operators need opset 10 or above (the model "
                           "has " + std::to_string(opset) + ")");
    }
    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    for (int i = 0; i < graph.node_size(); ++i) {
      onnx::NodeProto& node = *graph.mutable_node(i);
      if (!is_ms_quantized(node)) {
        *nodes.Add() = std::move(node);
        continue;
      }
      if (node.op_type() == "QLinearConv" && int_attr(node, "channels_last", 0) != 0) {
        return unimplemented(node_description(node, i) + ": channels_last 1 (ONNX Runtime's " +
                             "NHWC layout, from its 'all' optimization level) is not supported");
      }
      if (is_onnx_copy(node.op_type())) {  // validation checks their types
        node.clear_domain();
        erase_attr(node, "channels_last");
        *nodes.Add() = std::move(node);
        continue;
      }
      Expansion e(node, i, scope, opset);
      HSCHED_RETURN_IF_ERROR(lowering_of(node.op_type())(e));
      for (auto& n : e.nodes()) *nodes.Add() = std::move(n);
      for (auto& t : e.initializers()) *graph.add_initializer() = std::move(t);
    }
    graph.mutable_node()->Swap(&nodes);
  }
  if (depth >= kMaxDepth) return Status::ok();
  for (auto& node : *graph.mutable_node()) {
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_g()) HSCHED_RETURN_IF_ERROR(lower_graph(*attr.mutable_g(), scope, depth + 1,
                                                           opset));
      for (auto& branch : *attr.mutable_graphs()) {
        HSCHED_RETURN_IF_ERROR(lower_graph(branch, scope, depth + 1, opset));
      }
    }
  }
  return Status::ok();
}

}  // namespace

Status lower_microsoft_quantized_ops(onnx::ModelProto& model, int64_t opset) {
  return lower_graph(*model.mutable_graph(), {}, 0, opset);
}

}  // namespace hsched
