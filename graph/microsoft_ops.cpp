#include "graph/microsoft_ops.h"

#include <algorithm>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
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
  HSCHED_ASSIGN_OR_RETURN(std::string a, e.dequantize(e.input(0), e.input(1), e.optional_input(2)));
  HSCHED_ASSIGN_OR_RETURN(std::string b, e.dequantize(e.input(3), e.input(4), e.optional_input(5)));
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
    return e.refuse(
        "channels_last 1 (ONNX Runtime's NHWC layout, from its 'all' optimization "
        "level) is not supported");
  }
  HSCHED_ASSIGN_OR_RETURN(std::string x, e.dequantize(e.input(0), e.input(1), e.optional_input(2)));
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
    HSCHED_ASSIGN_OR_RETURN(std::string part,
                            e.dequantize(e.input(i), e.input(i + 1), e.optional_input(i + 2)));
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
  HSCHED_ASSIGN_OR_RETURN(std::string a, e.dequantize(e.input(0), e.input(1), e.optional_input(2)));
  HSCHED_ASSIGN_OR_RETURN(
      std::string b, e.dequantize(e.input(3), e.input(4), e.optional_input(5), trans_b ? 0 : 1));
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
void add_matmul(Expansion& e, const std::string& a, const std::string& b, const std::string& bias) {
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
  HSCHED_ASSIGN_OR_RETURN(std::string a,
                          e.dequantize(e.input(0), e.input(2), e.optional_input(4), int64_t{-1}));
  HSCHED_ASSIGN_OR_RETURN(std::string b,
                          e.dequantize(e.input(1), e.input(3), e.optional_input(5), int64_t{-1}));
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
  HSCHED_ASSIGN_OR_RETURN(std::string b,
                          e.dequantize(e.input(1), e.input(2), e.optional_input(3), int64_t{-1}));
  add_matmul(e, a, b, e.optional_input(4));
  return Status::ok();
}

// ---- the float fusions ONNX Runtime's graph optimizer saves ----------------------------------

// An activation as FusedConv and FusedGemm name it, of x into `output`, with its parameters
// (LeakyRelu: alpha; HardSigmoid: alpha, beta; Clip: min, max).
Status activation(Expansion& e, const std::string& kind, const std::vector<float>& params,
                  const std::string& x, const std::string& output) {
  const auto param = [&](size_t i, float fallback) {
    return i < params.size() ? params[i] : fallback;
  };
  if (kind == "Relu" || kind == "Tanh" || kind == "Sigmoid") {
    e.op(kind, {x}, output);
  } else if (kind == "LeakyRelu" || kind == "HardSigmoid") {
    onnx::NodeProto& n = e.add(kind, {x}, {output}, kind);
    const bool leaky = kind == "LeakyRelu";
    for (int k = 0; k < (leaky ? 1 : 2); ++k) {
      onnx::AttributeProto* attr = n.add_attribute();
      attr->set_name(k == 0 ? "alpha" : "beta");
      attr->set_type(onnx::AttributeProto::FLOAT);
      attr->set_f(param(static_cast<size_t>(k), leaky ? 0.01f : k == 0 ? 0.2f : 0.5f));
    }
  } else if (kind == "Clip" && e.opset() >= 11) {
    e.op("Clip", {x, e.float_constant(param(0, -3.4e38f)), e.float_constant(param(1, 3.4e38f))},
         output);
  } else {
    return e.refuse("activation '" + kind + "' is not supported");
  }
  return Status::ok();
}

std::vector<float> float_list(const onnx::NodeProto& node, const std::string& name) {
  const auto* attr = find_attr(node, name);
  return attr == nullptr ? std::vector<float>{}
                         : std::vector<float>(attr->floats().begin(), attr->floats().end());
}

// FusedConv: X, W, [B], [Z]: Conv, plus Z, then the activation.
Status lower_fused_conv(Expansion& e) {
  HSCHED_RETURN_IF_ERROR(e.check_inputs({0, 1}, 4));
  const auto* kind = find_attr(e.node(), "activation");
  const std::string z = e.optional_input(3);
  std::string y = kind == nullptr && z.empty() ? e.node().output(0) : e.fresh("conv");
  std::vector<std::string> inputs = {e.input(0), e.input(1)};
  if (!e.optional_input(2).empty()) inputs.push_back(e.input(2));
  e.copy_attributes(e.add("Conv", inputs, {y}, "Conv"), {"activation", "activation_params"});
  if (!z.empty()) y = e.op("Add", {y, z}, kind == nullptr ? e.node().output(0) : "");
  if (kind == nullptr) return Status::ok();
  return activation(e, kind->s(), float_list(e.node(), "activation_params"), y, e.node().output(0));
}

// FusedGemm: Gemm with its attributes, then the activation (activation_alpha, _beta).
Status lower_fused_gemm(Expansion& e) {
  HSCHED_RETURN_IF_ERROR(e.check_inputs({0, 1}, 3));
  const auto* kind = find_attr(e.node(), "activation");
  const std::string y = kind == nullptr ? e.node().output(0) : e.fresh("gemm");
  std::vector<std::string> inputs = {e.input(0), e.input(1)};
  if (!e.optional_input(2).empty()) inputs.push_back(e.input(2));
  e.copy_attributes(e.add("Gemm", inputs, {y}, "Gemm"),
                    {"activation", "activation_alpha", "activation_beta", "activation_gamma"});
  if (kind == nullptr) return Status::ok();
  std::vector<float> params;
  for (const char* name : {"activation_alpha", "activation_beta"}) {
    const auto* attr = find_attr(e.node(), name);
    if (attr == nullptr) break;
    params.push_back(attr->f());
  }
  return activation(e, kind->s(), params, y, e.node().output(0));
}

// alpha (the node's attribute) times MatMul(a, b) into the node's output.
void fused_matmul(Expansion& e, const std::string& a, const std::string& b) {
  const auto* alpha = find_attr(e.node(), "alpha");
  if (alpha == nullptr || alpha->f() == 1.0f) {
    e.op("MatMul", {a, b}, e.node().output(0));
    return;
  }
  e.op("Mul", {e.op("MatMul", {a, b}), e.constant_like(alpha->f(), a)}, e.node().output(0));
}

// FusedMatMul: A, B, alpha times MatMul(A, B). With transA or transB the node is kept for
// lower_transposed_fused_matmuls (the transposes need the operands' ranks, known after shape
// inference); transBatchA and transBatchB are refused.
Status lower_fused_matmul(Expansion& e) {
  HSCHED_RETURN_IF_ERROR(e.check_inputs({0, 1}, 2));
  for (const char* name : {"transBatchA", "transBatchB"}) {
    if (int_attr(e.node(), name, 0) != 0) {
      return e.refuse(std::string("attribute ") + name + " = 1 is not supported");
    }
  }
  if (int_attr(e.node(), "transA", 0) != 0 || int_attr(e.node(), "transB", 0) != 0) {
    e.nodes().push_back(e.node());
    return Status::ok();
  }
  fused_matmul(e, e.input(0), e.input(1));
  return Status::ok();
}

// Gelu (erf), FastGelu (tanh, X plus an optional bias), BiasGelu (erf of A + B).
Status lower_gelu(Expansion& e, bool tanh, int inputs) {
  HSCHED_RETURN_IF_ERROR(e.check_inputs(
      inputs == 2 && !tanh ? std::initializer_list<int>{0, 1} : std::initializer_list<int>{0},
      inputs));
  std::string x = e.input(0);
  if (!e.optional_input(1).empty()) x = e.op("Add", {x, e.input(1)});
  e.gelu(x, tanh, e.node().output(0));
  return Status::ok();
}

// QuickGelu: x * Sigmoid(alpha x) (alpha 1.702 by default; 1: SiLU, which the backends fuse).
Status lower_quick_gelu(Expansion& e) {
  HSCHED_RETURN_IF_ERROR(e.check_inputs({0}, 1));
  const auto* attr = find_attr(e.node(), "alpha");
  const float alpha = attr != nullptr ? attr->f() : 1.702f;
  const std::string& x = e.input(0);
  const std::string scaled = alpha == 1.0f ? x : e.op("Mul", {x, e.constant_like(alpha, x)});
  e.op("Mul", {x, e.op("Sigmoid", {scaled})}, e.node().output(0));
  return Status::ok();
}

// SkipLayerNormalization: input, skip, gamma, [beta], [bias]; outputs output, [mean],
// [inv_std_var], [input_skip_bias_sum]: LayerNormalization (opset 17) over the last axis of
// input + skip (+ bias), that sum as the fourth output; the statistics outputs are refused.
Status lower_skip_layer_norm(Expansion& e) {
  const onnx::NodeProto& node = e.node();
  if (node.input_size() > 5 || !has_input(node, 0) || !has_input(node, 1) || !has_input(node, 2)) {
    return invalid_argument(e.label() + ": expects input, skip, gamma, [beta], [bias]");
  }
  if (node.output_size() < 1 || node.output_size() > 4 || node.output(0).empty()) {
    return invalid_argument(e.label() + ": expects 1 to 4 outputs, the first given");
  }
  for (int i = 1; i <= 2 && i < node.output_size(); ++i) {
    if (!node.output(i).empty())
      return e.refuse("its mean and inv_std_var outputs are not supported");
  }
  if (e.opset() < 17) {
    return e.refuse("needs opset 17 or above for LayerNormalization (the model has " +
                    std::to_string(e.opset()) + ")");
  }
  const std::string sum_output = node.output_size() == 4 ? node.output(3) : "";
  const bool bias = has_input(node, 4);
  std::string sum = e.op("Add", {e.input(0), e.input(1)}, bias ? "" : sum_output);
  if (bias) sum = e.op("Add", {sum, e.input(4)}, sum_output);
  std::vector<std::string> inputs = {sum, e.input(2)};
  if (has_input(node, 3)) inputs.push_back(e.input(3));
  onnx::NodeProto& norm = e.add("LayerNormalization", inputs, {node.output(0)}, "LayerNorm");
  Expansion::add_int(norm, "axis", -1);
  onnx::AttributeProto* epsilon = norm.add_attribute();
  epsilon->set_name("epsilon");
  epsilon->set_type(onnx::AttributeProto::FLOAT);
  const auto* given = find_attr(node, "epsilon");
  epsilon->set_f(given != nullptr ? given->f() : 1e-12f);
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
      {"DynamicQuantizeMatMul", lower_dynamic_quantize_matmul},
      {"FusedConv", lower_fused_conv},
      {"FusedGemm", lower_fused_gemm},
      {"FusedMatMul", lower_fused_matmul},
      {"Gelu", [](Expansion& e) { return lower_gelu(e, false, 1); }},
      {"BiasGelu", [](Expansion& e) { return lower_gelu(e, false, 2); }},
      {"FastGelu", [](Expansion& e) { return lower_gelu(e, true, 2); }},
      {"QuickGelu", lower_quick_gelu},
      {"SkipLayerNormalization", lower_skip_layer_norm}};
  const auto it = kLowerings.find(op);
  return it == kLowerings.end() ? nullptr : it->second;
}

// The domain's copies of ONNX operators (the same definitions).
bool is_onnx_copy(const std::string& op) {
  return op == "QuantizeLinear" || op == "DequantizeLinear" || op == "QLinearConv";
}

bool is_lowered(const onnx::NodeProto& node) {
  return node.domain() == kDomain &&
         (is_onnx_copy(node.op_type()) || lowering_of(node.op_type()) != nullptr);
}

Status lower_graph(onnx::GraphProto& graph, Scope scope, int depth, int64_t opset) {
  scope.push_back(&graph);
  bool any = false;
  for (int i = 0; i < graph.node_size() && !any; ++i) any = is_lowered(graph.node(i));
  if (any) {
    if (opset < 10) {
      return unimplemented(
          "ONNX Runtime's com.microsoft operators need opset 10 or above (the model "
          "has " +
          std::to_string(opset) + ")");
    }
    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    for (int i = 0; i < graph.node_size(); ++i) {
      onnx::NodeProto& node = *graph.mutable_node(i);
      if (!is_lowered(node)) {
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
      if (attr.has_g())
        HSCHED_RETURN_IF_ERROR(lower_graph(*attr.mutable_g(), scope, depth + 1, opset));
      for (auto& branch : *attr.mutable_graphs()) {
        HSCHED_RETURN_IF_ERROR(lower_graph(branch, scope, depth + 1, opset));
      }
    }
  }
  return Status::ok();
}

// The rank `graph` declares for each name it types (an input, value_info or output with a shape,
// the first declaration winning, else an initializer). Built once a call: a graph unrolled from
// a Loop has thousands of names, and a search per node was quadratic (a fuzzed model of 11,266
// nodes took 29 s under ASan).
std::unordered_map<std::string, int> declared_ranks(const onnx::GraphProto& graph) {
  std::unordered_map<std::string, int> ranks;
  for (const auto* infos : {&graph.input(), &graph.value_info(), &graph.output()}) {
    for (const auto& info : *infos) {
      if (info.type().tensor_type().has_shape()) {
        ranks.emplace(info.name(), info.type().tensor_type().shape().dim_size());
      }
    }
  }
  for (const auto& init : graph.initializer()) ranks.emplace(init.name(), init.dims_size());
  return ranks;
}

bool is_fused_matmul(const onnx::NodeProto& node) {
  return node.domain() == kDomain && node.op_type() == "FusedMatMul";
}

}  // namespace

Result<int> lower_transposed_fused_matmuls(onnx::GraphProto& graph, int64_t opset) {
  if (std::none_of(graph.node().begin(), graph.node().end(), is_fused_matmul)) return 0;
  const std::unordered_map<std::string, int> declared = declared_ranks(graph);
  const auto rank_of = [&](const onnx::NodeProto& node, int k) {
    if (node.input_size() <= k) return -1;
    const auto it = declared.find(node.input(k));
    return it == declared.end() ? -1 : it->second;
  };
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  int rewritten = 0;
  const Scope scope = {&graph};
  for (int i = 0; i < graph.node_size(); ++i) {
    onnx::NodeProto& node = *graph.mutable_node(i);
    const int ranks[] = {rank_of(node, 0), rank_of(node, 1)};
    if (!is_fused_matmul(node) || ranks[0] < 0 || ranks[1] < 0) {
      *nodes.Add() = std::move(node);
      continue;
    }
    Expansion e(node, i, scope, opset);
    std::string operands[] = {node.input(0), node.input(1)};
    for (int k = 0; k < 2; ++k) {
      if (int_attr(node, k == 0 ? "transA" : "transB", 0) == 0) continue;
      if (ranks[k] < 2) return e.refuse("a transposed operand of rank below 2");
      std::vector<int64_t> perm(static_cast<size_t>(ranks[k]));
      for (size_t d = 0; d < perm.size(); ++d) perm[d] = static_cast<int64_t>(d);
      std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
      const std::string transposed = e.fresh("transposed");
      onnx::AttributeProto* attr =
          e.add("Transpose", {operands[k]}, {transposed}, transposed).add_attribute();
      attr->set_name("perm");
      attr->set_type(onnx::AttributeProto::INTS);
      for (int64_t d : perm) attr->add_ints(d);
      operands[k] = transposed;
    }
    fused_matmul(e, operands[0], operands[1]);
    for (auto& n : e.nodes()) *nodes.Add() = std::move(n);
    for (auto& t : e.initializers()) *graph.add_initializer() = std::move(t);
    ++rewritten;
  }
  graph.mutable_node()->Swap(&nodes);
  return rewritten;
}

Status lower_microsoft_ops(onnx::ModelProto& model, int64_t opset) {
  return lower_graph(*model.mutable_graph(), {}, 0, opset);
}

}  // namespace hsched
