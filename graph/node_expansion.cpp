#include "graph/node_expansion.h"

#include <utility>

#include "graph/node_proto.h"
#include "graph/onnx_validate.h"

namespace hsched {

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

bool scalar_initializer(const Scope& scope, const std::string& name) {
  for (auto graph = scope.rbegin(); graph != scope.rend(); ++graph) {
    for (const auto& init : (*graph)->initializer()) {
      if (init.name() == name) return init.dims_size() == 0;
    }
  }
  return false;
}

Expansion::Expansion(const onnx::NodeProto& node, int index, const Scope& scope, int64_t opset)
    : node_(node),
      label_(node_description(node, index)),
      name_(node.name().empty() ? node.op_type() + "#" + std::to_string(index) : node.name()),
      scope_(scope),
      opset_(opset) {}

std::string Expansion::optional_input(int i) const {
  return has_input(node_, i) ? node_.input(i) : "";
}

Status Expansion::check_inputs(std::initializer_list<int> required, int most) const {
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

onnx::NodeProto& Expansion::add(const std::string& op, const std::vector<std::string>& inputs,
                                const std::vector<std::string>& outputs, const std::string& role) {
  onnx::NodeProto& n = nodes_.emplace_back();
  n.set_op_type(op);
  n.set_name(role.empty() ? name_ : name_ + "/" + role);
  for (const auto& in : inputs) n.add_input(in);
  for (const auto& out : outputs) n.add_output(out);
  return n;
}

std::string Expansion::fresh(const std::string& what) {
  return node_.output(0) + "/hsched_" + what + std::to_string(next_++);
}

Result<std::string> Expansion::dequantize(const std::string& x, const std::string& scale,
                                          const std::string& zero_point,
                                          std::optional<int64_t> axis) {
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

void Expansion::quantize(const std::string& y, const std::string& scale,
                         const std::string& zero_point, const std::string& like,
                         const std::string& like_zero_point) {
  std::vector<std::string> inputs = {y, scale};
  if (!zero_point.empty()) {
    inputs.push_back(zero_point);
  } else if (element_type(like, like_zero_point) == onnx::TensorProto::INT8) {
    inputs.push_back(int8_zero());
  }
  add("QuantizeLinear", inputs, {node_.output(0)}, "QuantizeLinear");
}

void Expansion::copy_attributes(onnx::NodeProto& to,
                                std::initializer_list<const char*> except) const {
  for (const auto& attr : node_.attribute()) {
    bool skip = false;
    for (const char* name : except) skip = skip || attr.name() == name;
    if (!skip) *to.add_attribute() = attr;
  }
}

void Expansion::add_int(onnx::NodeProto& n, const std::string& name, int64_t value) {
  onnx::AttributeProto* attr = n.add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::INT);
  attr->set_i(value);
}

std::string Expansion::float_constant(float value) {
  onnx::TensorProto& t = initializers_.emplace_back();
  t.set_name(fresh("constant"));
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_float_data(value);
  return t.name();
}

std::string Expansion::constant_like(float value, const std::string& like) {
  const std::string c = float_constant(value);
  if (declared_type(scope_, like) == onnx::TensorProto::FLOAT) return c;
  return op("CastLike", {c, like});
}

std::string Expansion::op(const std::string& op, const std::vector<std::string>& inputs,
                          std::string output) {
  if (output.empty()) output = fresh(op);
  add(op, inputs, {output}, output.substr(output.rfind('/') + 1));
  return output;
}

void Expansion::gelu(const std::string& x, bool tanh, const std::string& output) {
  std::string inner;
  if (!tanh) {
    inner = op("Erf", {op("Div", {x, constant_like(1.41421356237f, x)})});
  } else {
    const std::string cube = op("Mul", {op("Mul", {x, x}), x});
    const std::string sum = op("Add", {x, op("Mul", {cube, constant_like(0.044715f, x)})});
    inner = op("Tanh", {op("Mul", {sum, constant_like(0.7978845608f, x)})});
  }
  const std::string product = op("Mul", {x, op("Add", {inner, constant_like(1.0f, x)})});
  op("Mul", {product, constant_like(0.5f, x)}, output);
}

std::string Expansion::int8_zero() {
  onnx::TensorProto& t = initializers_.emplace_back();
  t.set_name(fresh("zero_point"));
  t.set_data_type(onnx::TensorProto::INT8);
  t.add_int32_data(0);
  return t.name();
}

int32_t Expansion::element_type(const std::string& x, const std::string& zero_point) const {
  const int32_t from_zero_point = zero_point.empty() ? 0 : declared_type(scope_, zero_point);
  return from_zero_point != 0 ? from_zero_point : declared_type(scope_, x);
}

}  // namespace hsched
