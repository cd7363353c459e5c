#include "graph/onnx_builder.h"

#include <bit>
#include <random>
#include <stdexcept>

#include "hsched/shape.h"

namespace hsched {
namespace {

// The IR version that ONNX 1.12 writes for opsets up to 17.
constexpr int64_t kIrVersion = 8;

// Element count of builder dims; a builder is fed by our own code, so a bad call is a bug.
size_t element_count(const std::string& name, const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) throw std::invalid_argument("OnnxBuilder: initializer '" + name + "' has a dim < 0");
    n *= d;
  }
  return static_cast<size_t>(n);
}

void check_count(const std::string& name, const std::vector<int64_t>& dims, size_t count) {
  if (element_count(name, dims) != count) {
    throw std::invalid_argument("OnnxBuilder: initializer '" + name + "' has " +
                                std::to_string(count) + " values for shape " +
                                Shape(dims).to_string());
  }
}

// Appends `value` little-endian whatever the host's byte order: raw_data is little-endian.
template <typename U>
void append_le(std::string& out, U value) {
  for (size_t i = 0; i < sizeof(U); ++i) {
    out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
  }
}

onnx::TensorProto& add_initializer(onnx::ModelProto& model, const std::string& name, DType dtype,
                                   const std::vector<int64_t>& dims) {
  onnx::TensorProto& tensor = *model.mutable_graph()->add_initializer();
  tensor.set_name(name);
  tensor.set_data_type(dtype_to_onnx(dtype));
  for (int64_t d : dims) tensor.add_dims(d);
  return tensor;
}

void store_f32(onnx::TensorProto& tensor, const std::vector<float>& values) {
  std::string raw;
  raw.reserve(values.size() * sizeof(float));
  for (float v : values) append_le(raw, std::bit_cast<uint32_t>(v));
  tensor.set_raw_data(std::move(raw));
}

void fill_tensor_type(onnx::ValueInfoProto& info, DType dtype, const std::vector<int64_t>& dims,
                      int64_t& next_symbol) {
  onnx::TypeProto_Tensor& type = *info.mutable_type()->mutable_tensor_type();
  type.set_elem_type(dtype_to_onnx(dtype));
  onnx::TensorShapeProto& shape = *type.mutable_shape();
  shape.clear_dim();
  for (int64_t d : dims) {
    onnx::TensorShapeProto_Dimension& dim = *shape.add_dim();
    if (d == kDynamicDim) {
      dim.set_dim_param("N" + std::to_string(next_symbol++));
    } else {
      dim.set_dim_value(d);
    }
  }
}

onnx::AttributeProto& add_attr(onnx::NodeProto& node, const std::string& name,
                               onnx::AttributeProto_AttributeType type) {
  onnx::AttributeProto& attr = *node.add_attribute();
  attr.set_name(name);
  attr.set_type(type);
  return attr;
}

}  // namespace

OnnxBuilder::OnnxBuilder(int64_t opset, std::string graph_name) {
  model_.set_ir_version(kIrVersion);
  model_.set_producer_name("hsched");
  onnx::OperatorSetIdProto& op_set = *model_.add_opset_import();
  op_set.set_domain("");
  op_set.set_version(opset);
  model_.mutable_graph()->set_name(std::move(graph_name));
}

OnnxBuilder& OnnxBuilder::input(const std::string& name, DType dtype,
                                const std::vector<int64_t>& dims) {
  onnx::ValueInfoProto& info = *model_.mutable_graph()->add_input();
  info.set_name(name);
  fill_tensor_type(info, dtype, dims, next_symbol_);
  return *this;
}

OnnxBuilder& OnnxBuilder::output(const std::string& name, DType dtype,
                                 const std::vector<int64_t>& dims) {
  onnx::ValueInfoProto& info = *model_.mutable_graph()->add_output();
  info.set_name(name);
  fill_tensor_type(info, dtype, dims, next_symbol_);
  return *this;
}

OnnxBuilder& OnnxBuilder::initializer_f32(const std::string& name, const std::vector<int64_t>& dims,
                                          const std::vector<float>& values) {
  check_count(name, dims, values.size());
  store_f32(add_initializer(model_, name, DType::kF32, dims), values);
  return *this;
}

OnnxBuilder& OnnxBuilder::initializer_i64(const std::string& name, const std::vector<int64_t>& dims,
                                          const std::vector<int64_t>& values) {
  check_count(name, dims, values.size());
  std::string raw;
  raw.reserve(values.size() * sizeof(int64_t));
  for (int64_t v : values) append_le(raw, static_cast<uint64_t>(v));
  add_initializer(model_, name, DType::kI64, dims).set_raw_data(std::move(raw));
  return *this;
}

OnnxBuilder& OnnxBuilder::initializer(const std::string& name, const Tensor& tensor) {
  const size_t size = dtype_size(tensor.dtype());
  const auto* bytes = reinterpret_cast<const unsigned char*>(tensor.raw());
  std::string raw;
  raw.reserve(tensor.byte_size());
  for (size_t at = 0; at < tensor.byte_size(); at += size) {
    for (size_t b = 0; b < size; ++b) {  // each element's bytes least significant first
      const size_t from = std::endian::native == std::endian::little ? b : size - 1 - b;
      raw.push_back(static_cast<char>(bytes[at + from]));
    }
  }
  add_initializer(model_, name, tensor.dtype(), tensor.dims()).set_raw_data(std::move(raw));
  return *this;
}

OnnxBuilder& OnnxBuilder::initializer_random(const std::string& name,
                                             const std::vector<int64_t>& dims, float scale,
                                             uint32_t seed) {
  std::mt19937 engine(seed);
  std::vector<float> values(element_count(name, dims));
  // uniform_real_distribution differs between standard libraries; the top 24 bits of the
  // engine's output, which mt19937 fixes, make the weights the same everywhere.
  constexpr float kInv24 = 1.0f / static_cast<float>(1u << 24);
  for (float& v : values) {
    const float unit = static_cast<float>(engine() >> 8) * kInv24;  // [0, 1)
    v = scale * (2.0f * unit - 1.0f);
  }
  store_f32(add_initializer(model_, name, DType::kF32, dims), values);
  return *this;
}

onnx::NodeProto& OnnxBuilder::node(const std::string& op_type,
                                   const std::vector<std::string>& inputs,
                                   const std::vector<std::string>& outputs,
                                   const std::string& name) {
  // RepeatedPtrField keeps element addresses stable, so the reference survives later nodes.
  onnx::NodeProto& node = *model_.mutable_graph()->add_node();
  node.set_op_type(op_type);
  if (!name.empty()) node.set_name(name);
  for (const auto& in : inputs) node.add_input(in);
  for (const auto& out : outputs) node.add_output(out);
  return node;
}

std::string OnnxBuilder::serialize() const {
  std::string bytes;
  if (!model_.SerializeToString(&bytes)) {
    throw std::runtime_error("OnnxBuilder: model does not serialize (over 2 GiB?)");
  }
  return bytes;
}

void set_attr(onnx::NodeProto& node, const std::string& name, int64_t value) {
  add_attr(node, name, onnx::AttributeProto::INT).set_i(value);
}

void set_attr(onnx::NodeProto& node, const std::string& name, float value) {
  add_attr(node, name, onnx::AttributeProto::FLOAT).set_f(value);
}

void set_attr(onnx::NodeProto& node, const std::string& name, const std::string& value) {
  add_attr(node, name, onnx::AttributeProto::STRING).set_s(value);
}

void set_attr(onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& value) {
  onnx::AttributeProto& attr = add_attr(node, name, onnx::AttributeProto::INTS);
  for (int64_t v : value) attr.add_ints(v);
}

void set_attr(onnx::NodeProto& node, const std::string& name, const std::vector<float>& value) {
  onnx::AttributeProto& attr = add_attr(node, name, onnx::AttributeProto::FLOATS);
  for (float v : value) attr.add_floats(v);
}

void set_tensor_type(onnx::ValueInfoProto& info, DType dtype, const std::vector<int64_t>& dims) {
  // Without a builder to count symbols across the model, dims are named by position.
  int64_t next_symbol = 0;
  fill_tensor_type(info, dtype, dims, next_symbol);
}

}  // namespace hsched
