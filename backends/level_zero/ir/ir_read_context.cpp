#include <algorithm>
#include <cstring>

#include "backends/level_zero/ir/ir_format.h"
#include "backends/level_zero/ir/ir_read.h"

namespace hsched::ir::detail {
namespace {

// f16 tensors of the IR are f32 in the graph (the CPU kernels compute in f32); values are exact.
DType graph_type(DType type) { return type == DType::kF16 ? DType::kF32 : type; }

}  // namespace

ReadContext::ReadContext(Graph& graph, const std::vector<IrLayer>& layers,
                         const std::vector<std::vector<PortSource>>& sources)
    : graph_(graph), layers_(layers), sources_(sources) {
  constants_.resize(layers.size());
  values_.resize(layers.size());
  for (size_t i = 0; i < layers.size(); ++i) {
    constants_[i].resize(layers[i].outputs.size());
    values_[i].assign(layers[i].outputs.size(), kNoValue);
  }
}

Status ReadContext::fail(const std::string& why) const {
  return invalid_argument("IR layer '" + layer().name + "' (" + layer().type + "): " + why);
}

Status ReadContext::arity(size_t inputs, size_t outputs) const {
  if (layer().inputs.size() != inputs || layer().outputs.size() != outputs) {
    return fail("expects " + std::to_string(inputs) + " inputs and " + std::to_string(outputs) +
                " outputs, has " + std::to_string(layer().inputs.size()) + " and " +
                std::to_string(layer().outputs.size()));
  }
  return Status::ok();
}

Status ReadContext::require_float(size_t input) const {
  const DType t = in_type(input);
  if (t != DType::kF32 && t != DType::kF16) {
    return fail("input " + std::to_string(input) + " is " + std::string(element_type_name(t)) +
                ", not f32 or f16");
  }
  return Status::ok();
}

const Tensor* ReadContext::in_constant(size_t i) const {
  const PortSource& s = sources_[current_].at(i);
  const auto& c = constants_[s.layer][s.output];
  return c ? &*c : nullptr;
}

Result<std::vector<int64_t>> ReadContext::in_ints(size_t i, size_t max_count) const {
  const Tensor* t = in_constant(i);
  if (t == nullptr || (t->dtype() != DType::kI64 && t->dtype() != DType::kI32)) {
    return fail("input " + std::to_string(i) + " is not an integer Const");
  }
  if (t->dims().size() > 1 || static_cast<size_t>(t->elements()) > max_count) {
    return fail("input " + std::to_string(i) + " is not a list of at most " +
                std::to_string(max_count) + " values");
  }
  std::vector<int64_t> values;
  if (t->dtype() == DType::kI64) {
    const auto v = t->values<int64_t>();
    values.assign(v.begin(), v.end());
  } else {
    for (int32_t x : t->values<int32_t>()) values.push_back(x);
  }
  return values;
}

Result<float> ReadContext::in_scalar(size_t i) const {
  const Tensor* t = in_constant(i);
  if (t == nullptr || t->dtype() != DType::kF32 || t->elements() != 1) {
    return fail("input " + std::to_string(i) + " is not a single-value float Const");
  }
  return t->values<float>()[0];
}

ValueId ReadContext::in_value(size_t i) {
  const PortSource s = sources_[current_].at(i);
  ValueId& value = values_[s.layer][s.output];
  if (value != kNoValue) return value;
  const IrLayer& source = layers_[s.layer];
  const IrPort& port = source.outputs[s.output];
  std::string name =
      unique_name(port.name.empty() ? source.name + ":" + std::to_string(port.id) : port.name);
  const auto& constant = constants_[s.layer][s.output];
  // Producers come first in topological order, so only Const outputs are created here.
  value = constant ? graph_.add_constant(std::move(name), *constant)
                   : graph_.add_value(std::move(name), graph_type(port.type), Shape(port.dims));
  return value;
}

bool ReadContext::has_attr(const char* key) const {
  return layer().data && layer().data.attribute(key);
}

Result<std::string> ReadContext::attr(const char* key) const {
  if (!has_attr(key)) return fail("attribute '" + std::string(key) + "' is missing");
  return std::string(layer().data.attribute(key).value());
}

std::string ReadContext::attr_or(const char* key, const std::string& fallback) const {
  return has_attr(key) ? std::string(layer().data.attribute(key).value()) : fallback;
}

Result<int64_t> ReadContext::attr_int(const char* key, int64_t lo, int64_t hi) const {
  HSCHED_ASSIGN_OR_RETURN(const std::string text, attr(key));
  auto value = parse_int(text, key);
  if (!value.is_ok()) return fail(value.status().message());
  if (*value < lo || *value > hi) {
    return fail("attribute '" + std::string(key) + "' = " + std::to_string(*value) + " outside [" +
                std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return *value;
}

Result<float> ReadContext::attr_float(const char* key) const {
  HSCHED_ASSIGN_OR_RETURN(const std::string text, attr(key));
  auto value = parse_double(text, key);
  if (!value.is_ok()) return fail(value.status().message());
  const double clamped = std::clamp(*value, -3.4028234663852886e38, 3.4028234663852886e38);
  return static_cast<float>(clamped);
}

Result<bool> ReadContext::attr_bool(const char* key, std::optional<bool> fallback) const {
  if (!has_attr(key) && fallback) return *fallback;
  HSCHED_ASSIGN_OR_RETURN(std::string text, attr(key));
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (text == "true" || text == "1") return true;
  if (text == "false" || text == "0") return false;
  return fail("attribute '" + std::string(key) + "' is not a boolean");
}

Result<std::vector<int64_t>> ReadContext::attr_ints(const char* key, size_t count, int64_t lo,
                                                    int64_t hi) const {
  HSCHED_ASSIGN_OR_RETURN(const std::string text, attr(key));
  auto values = parse_ints(text, key, kMaxAttributeInts, lo, hi);
  if (!values.is_ok()) return fail(values.status().message());
  if (values->size() != count) {
    return fail("attribute '" + std::string(key) + "' has " + std::to_string(values->size()) +
                " values, expected " + std::to_string(count));
  }
  return std::move(values).value();
}

Status ReadContext::expect_out_dims(size_t i, const std::vector<int64_t>& dims) const {
  if (out_dims(i) != dims) {
    return fail("output " + std::to_string(i) + " is declared " + Shape(out_dims(i)).to_string() +
                " but the inputs give " + Shape(dims).to_string());
  }
  return Status::ok();
}

ValueId ReadContext::out_value(size_t i) {
  ValueId& value = values_[current_].at(i);
  if (value != kNoValue) return value;
  const IrPort& port = layer().outputs[i];
  value = graph_.add_value(
      unique_name(port.name.empty() ? layer().name + ":" + std::to_string(port.id) : port.name),
      graph_type(port.type), Shape(port.dims));
  return value;
}

void ReadContext::alias_output(size_t i, ValueId value) { values_[current_].at(i) = value; }

ValueId ReadContext::temp_value(const std::string& suffix, DType type,
                                const std::vector<int64_t>& dims) {
  return graph_.add_value(unique_name(layer().name + "/" + suffix), type, Shape(dims));
}

ValueId ReadContext::add_constant(const std::string& suffix, Tensor tensor) {
  return graph_.add_constant(unique_name(layer().name + "/" + suffix), std::move(tensor));
}

void ReadContext::add_node(const std::string& op, const std::string& suffix,
                           std::vector<ValueId> inputs, std::vector<ValueId> outputs,
                           AttributeMap attributes) {
  Node node;
  node.name = suffix.empty() ? layer().name : layer().name + "/" + suffix;
  node.op_type = op;
  node.inputs = std::move(inputs);
  node.outputs = std::move(outputs);
  node.attributes = std::move(attributes);
  graph_.add_node(std::move(node));
}

std::string ReadContext::unique_name(std::string base) {
  if (base.empty()) base = "value";
  if (names_.insert(base).second) return base;
  // Counting on from the last suffix given to this base keeps many equal names linear.
  for (size_t& n = next_suffix_[base];;) {
    std::string candidate = base + "#" + std::to_string(++n);
    if (names_.insert(candidate).second) return candidate;
  }
}

}  // namespace hsched::ir::detail
