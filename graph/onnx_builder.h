// A small helper to build ONNX models in memory: the demo model and generated test models.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "graph/dtype.h"

namespace hsched {

// Builds a ModelProto of one graph in the default ONNX domain at the given opset.
// Dims given as kDynamicDim (-1) become symbolic ("N0", "N1"...).
class OnnxBuilder {
 public:
  explicit OnnxBuilder(int64_t opset, std::string graph_name = "graph");

  OnnxBuilder& input(const std::string& name, DType dtype, const std::vector<int64_t>& dims);
  OnnxBuilder& output(const std::string& name, DType dtype, const std::vector<int64_t>& dims);
  // An output whose type and shape are left to shape inference.
  OnnxBuilder& output(const std::string& name);
  OnnxBuilder& initializer_f32(const std::string& name, const std::vector<int64_t>& dims,
                               const std::vector<float>& values);
  OnnxBuilder& initializer_i64(const std::string& name, const std::vector<int64_t>& dims,
                               const std::vector<int64_t>& values);
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
};

void set_attr(onnx::NodeProto& node, const std::string& name, int64_t value);
void set_attr(onnx::NodeProto& node, const std::string& name, float value);
void set_attr(onnx::NodeProto& node, const std::string& name, const std::string& value);
void set_attr(onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& value);
void set_attr(onnx::NodeProto& node, const std::string& name, const std::vector<float>& value);

void set_tensor_type(onnx::ValueInfoProto& info, DType dtype, const std::vector<int64_t>& dims);

}  // namespace hsched
