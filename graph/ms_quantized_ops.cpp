#include "graph/ms_quantized_ops.h"

#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <onnx/onnx_pb.h>

#include "graph/node_expansion.h"
#include "graph/node_proto.h"
#include "graph/onnx_validate.h"

namespace hsched {
namespace {

constexpr char kDomain[] = "com.microsoft";
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
  if (depth >= kMaxRewriteDepth) return Status::ok();
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
