// A small helper to build ONNX models in memory: the demo model and generated test models.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "hsched/dtype.h"
#include "hsched/tensor.h"

namespace hsched {

// Builds a ModelProto of one graph in the default ONNX domain at the given opset (IR version 8).
// Dims given as kDynamicDim (-1) become symbolic ("N0", "N1"... numbered across the model, so
// two dynamic dims are never assumed equal). Initializers are stored as little-endian raw_data.
// A call that contradicts itself (value count != shape) is a bug and throws std::invalid_argument.
class OnnxBuilder {
 public:
  explicit OnnxBuilder(int64_t opset, std::string graph_name = "graph");

  OnnxBuilder& input(const std::string& name, DType dtype, const std::vector<int64_t>& dims);
  OnnxBuilder& output(const std::string& name, DType dtype, const std::vector<int64_t>& dims);
  OnnxBuilder& initializer_f32(const std::string& name, const std::vector<int64_t>& dims,
                               const std::vector<float>& values);
  OnnxBuilder& initializer_i64(const std::string& name, const std::vector<int64_t>& dims,
                               const std::vector<int64_t>& values);
  // Any dtype, from a tensor's bytes (int8 weights, int32 biases).
  OnnxBuilder& initializer(const std::string& name, const Tensor& tensor);
  // Seeded uniform values in [-scale, scale]: deterministic weights for demos and tests.
  OnnxBuilder& initializer_random(const std::string& name, const std::vector<int64_t>& dims,
                                  float scale, uint32_t seed);

  // Adds a node and returns it so that attributes can be set with the helpers below.
  onnx::NodeProto& node(const std::string& op_type, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name = "");

  onnx::ModelProto& model() { return model_; }
  std::string serialize() const;

 private:
  onnx::ModelProto model_;
  int64_t next_symbol_ = 0;  // suffix of the next symbolic dim name ("N0", "N1"...)
};

void set_attr(onnx::NodeProto& node, const std::string& name, int64_t value);
// Lets `set_attr(node, "axis", 1)` compile: an int would otherwise match int64_t and float alike.
inline void set_attr(onnx::NodeProto& node, const std::string& name, int value) {
  set_attr(node, name, int64_t{value});
}
void set_attr(onnx::NodeProto& node, const std::string& name, float value);
void set_attr(onnx::NodeProto& node, const std::string& name, const std::string& value);
void set_attr(onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& value);
void set_attr(onnx::NodeProto& node, const std::string& name, const std::vector<float>& value);

// Dynamic dims are named by position here ("N0" for dim 0...), there being no model to number in.
void set_tensor_type(onnx::ValueInfoProto& info, DType dtype, const std::vector<int64_t>& dims);

}  // namespace hsched
