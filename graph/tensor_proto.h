// onnx::TensorProto <-> hsched::Tensor, external data, and `.pb` tensor files.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "core/mapped_file.h"
#include "graph/attribute.h"
#include "hsched/model.h"  // read_tensor_file, write_tensor_file
#include "hsched/status.h"
#include "hsched/tensor.h"

namespace onnx {
class NodeProto;
class TensorProto;
class TypeProto;
}  // namespace onnx

namespace hsched {

// The most bytes protobuf parses into one message (INT_MAX): a model file or a `.pb` tensor file.
inline constexpr int64_t kMaxProtobufBytes = 2147483647;

// Resolves the external-data references of one model: only regular files inside `base_dir`,
// reached without following a symbolic link below it (MappedFile::open_beneath), each mapped
// once and shared by every tensor that points into it.
class ExternalData {
 public:
  // An empty `base_dir` refuses all external data (models read from memory).
  explicit ExternalData(std::filesystem::path base_dir);

  // Checks location, offset and length and returns the tensor's bytes, read in place from the
  // mapping (copied only when misaligned for the dtype).
  Result<Tensor> load(const onnx::TensorProto& proto, DType dtype, std::vector<int64_t> dims);

 private:
  Result<std::shared_ptr<MappedFile>> map(const std::string& location);

  std::filesystem::path base_dir_;
  std::map<std::string, std::shared_ptr<MappedFile>> files_;
};

// Dtype and checked dims of a TensorProto (bounded by kMaxElements and kMaxTensorBytes).
Status check_tensor_header(const onnx::TensorProto& proto, DType* dtype,
                           std::vector<int64_t>* dims);

// Checks header and payload (sizes, external references) without copying any data.
Status check_tensor_data(const onnx::TensorProto& proto, ExternalData* external);

// Converts, copying the data. `external` may be null when external data is not allowed.
Result<Tensor> tensor_from_proto(const onnx::TensorProto& proto, ExternalData* external);
// Converts, taking over `raw_data` without a copy (the proto's raw_data is left empty).
Result<Tensor> take_tensor_from_proto(onnx::TensorProto& proto, ExternalData* external);

void tensor_to_proto(const Tensor& tensor, const std::string& name, onnx::TensorProto* proto);

// A node's attributes (subgraph attributes are refused by validation before this is called).
// Tensor attributes are copied.
Result<AttributeMap> attributes_from_proto(const onnx::NodeProto& node, ExternalData& external);

// dtype and shape of a value's TypeProto; kUndefined / unknown rank where ONNX did not say.
DType dtype_from_type(const onnx::TypeProto& type);
Shape shape_from_type(const onnx::TypeProto& type);

}  // namespace hsched
