#include "graph/tensor_proto.h"

#include <cstdio>
#include <fstream>

#include <onnx/onnx_pb.h>

#include "hsched/atomic_file.h"

namespace hsched {
namespace {

namespace fs = std::filesystem;

std::string tensor_label(const onnx::TensorProto& proto) {
  return "tensor '" + proto.name() + "'";
}

// Reads `count` values from a typed repeated field into `tensor` (ONNX packs f16, bf16, i8, u8,
// i16, u16, bool and i32 into int32_data, f16/bf16 as their 16-bit patterns; u32 and u64 into
// uint64_data; f64 into double_data).
template <typename Dst, typename Field>
void copy_field(const Field& field, Tensor& tensor) {
  auto out = tensor.values<Dst>();
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<Dst>(field.Get(static_cast<int>(i)));
}

// Called after check_embedded_payload: the field holds exactly tensor.elements() values.
void copy_typed_fields(const onnx::TensorProto& proto, Tensor& tensor) {
  switch (tensor.dtype()) {
    case DType::kF32: copy_field<float>(proto.float_data(), tensor); break;
    case DType::kI64: copy_field<int64_t>(proto.int64_data(), tensor); break;
    case DType::kI32: copy_field<int32_t>(proto.int32_data(), tensor); break;
    case DType::kF16:
    case DType::kBF16: copy_field<uint16_t>(proto.int32_data(), tensor); break;
    case DType::kI8: copy_field<int8_t>(proto.int32_data(), tensor); break;
    case DType::kU8:
    case DType::kBool: copy_field<uint8_t>(proto.int32_data(), tensor); break;
    case DType::kF64: copy_field<double>(proto.double_data(), tensor); break;
    case DType::kI16: copy_field<int16_t>(proto.int32_data(), tensor); break;
    case DType::kU16: copy_field<uint16_t>(proto.int32_data(), tensor); break;
    case DType::kU32: copy_field<uint32_t>(proto.uint64_data(), tensor); break;
    case DType::kU64: copy_field<uint64_t>(proto.uint64_data(), tensor); break;
    case DType::kUndefined: break;
  }
}

bool is_external(const onnx::TensorProto& proto) {
  return proto.data_location() == onnx::TensorProto::EXTERNAL;
}

// Checks that an embedded (not external) payload holds exactly what the header promises.
Status check_embedded_payload(const onnx::TensorProto& proto, DType dtype, int64_t elements) {
  const size_t bytes = static_cast<size_t>(elements) * dtype_size(dtype);
  if (proto.has_raw_data()) {
    if (proto.raw_data().size() != bytes) {
      return invalid_argument(tensor_label(proto) + " has " +
                              std::to_string(proto.raw_data().size()) +
                              " bytes of raw data but its shape and dtype need " +
                              std::to_string(bytes));
    }
    return Status::ok();
  }
  int count = 0;
  switch (dtype) {
    case DType::kF32: count = proto.float_data_size(); break;
    case DType::kI64: count = proto.int64_data_size(); break;
    case DType::kF64: count = proto.double_data_size(); break;
    case DType::kU32:
    case DType::kU64: count = proto.uint64_data_size(); break;
    default: count = proto.int32_data_size(); break;
  }
  if (count != elements) {
    return invalid_argument(tensor_label(proto) + " holds " + std::to_string(count) +
                            " values but its shape needs " + std::to_string(elements));
  }
  return Status::ok();
}

Result<Tensor> convert(const onnx::TensorProto& proto, ExternalData* external,
                       std::string* stealable_raw) {
  DType dtype = DType::kUndefined;
  std::vector<int64_t> dims;
  HSCHED_RETURN_IF_ERROR(check_tensor_header(proto, &dtype, &dims));
  if (is_external(proto)) {
    if (external == nullptr) {
      return invalid_argument(tensor_label(proto) +
                              " uses external data, which a model read from memory cannot have");
    }
    return external->load(proto, dtype, std::move(dims));
  }
  HSCHED_RETURN_IF_ERROR(check_embedded_payload(proto, dtype, Shape(dims).elements()));
  Tensor tensor(dtype, dims);
  const size_t bytes = tensor.byte_size();
  if (!proto.has_raw_data()) {
    copy_typed_fields(proto, tensor);
    return tensor;
  }
  if (stealable_raw != nullptr && bytes >= 64) {
    // Keep the protobuf's string alive as the owner: weights are not copied again.
    auto owner = std::make_shared<std::string>(std::move(*stealable_raw));
    auto* data = reinterpret_cast<std::byte*>(owner->data());
    if (reinterpret_cast<uintptr_t>(data) % 16 == 0) {
      return Tensor(dtype, std::move(dims), std::shared_ptr<std::byte>(owner, data));
    }
    std::memcpy(tensor.raw(), data, bytes);
    return tensor;
  }
  if (bytes != 0) std::memcpy(tensor.raw(), proto.raw_data().data(), bytes);
  return tensor;
}

}  // namespace

ExternalData::ExternalData(fs::path base_dir) : base_dir_(std::move(base_dir)) {}

Result<std::shared_ptr<MappedFile>> ExternalData::map(const std::string& location) {
  auto cached = files_.find(location);
  if (cached != files_.end()) return cached->second;
  const fs::path relative(location);
  if (location.empty() || location.find('\0') != std::string::npos || relative.is_absolute() ||
      relative.has_root_name()) {
    return invalid_argument("external data location '" + location +
                            "' must be a path relative to the model's folder");
  }
  for (const auto& part : relative) {
    if (part == "..") {
      return invalid_argument("external data location '" + location +
                              "' leaves the model's folder");
    }
  }
  // Opened component by component without following links: a link cannot lead out of the
  // folder, and a FIFO or device is refused without blocking.
  auto file = MappedFile::open_beneath(base_dir_, relative);
  if (!file.is_ok()) {
    return file.status().with_context("external data '" + location + "'");
  }
  files_.emplace(location, *file);
  return *file;
}

Result<Tensor> ExternalData::load(const onnx::TensorProto& proto, DType dtype,
                                  std::vector<int64_t> dims) {
  if (base_dir_.empty()) {
    return invalid_argument(tensor_label(proto) +
                            " uses external data, which a model read from memory cannot have");
  }
  std::string location;
  int64_t offset = 0;
  int64_t length = -1;
  for (const auto& entry : proto.external_data()) {
    auto parse = [&](int64_t* out) -> Status {
      try {
        size_t used = 0;
        *out = std::stoll(entry.value(), &used);
        if (used != entry.value().size() || *out < 0) throw std::invalid_argument("");
      } catch (const std::exception&) {
        return invalid_argument(tensor_label(proto) + ": external data " + entry.key() + " '" +
                                entry.value() + "' is not a non-negative integer");
      }
      return Status::ok();
    };
    if (entry.key() == "location") location = entry.value();
    if (entry.key() == "offset") HSCHED_RETURN_IF_ERROR(parse(&offset));
    if (entry.key() == "length") HSCHED_RETURN_IF_ERROR(parse(&length));
  }
  auto file = map(location);
  if (!file.is_ok()) return file.status().with_context(tensor_label(proto));
  const int64_t bytes =
      checked_elements(dims).value() * static_cast<int64_t>(dtype_size(dtype));
  if (length >= 0 && length != bytes) {
    return invalid_argument(tensor_label(proto) + ": external data length " +
                            std::to_string(length) + " does not match the " +
                            std::to_string(bytes) + " bytes its shape needs");
  }
  const auto file_size = static_cast<int64_t>((*file)->size());
  if (offset > file_size || bytes > file_size - offset) {
    return invalid_argument(tensor_label(proto) + ": external data [" + std::to_string(offset) +
                            ", +" + std::to_string(bytes) + ") lies past the end of '" +
                            location + "' (" + std::to_string(file_size) + " bytes)");
  }
  const std::byte* start = (*file)->data() + offset;
  if (bytes == 0 || reinterpret_cast<uintptr_t>(start) % dtype_size(dtype) != 0) {
    Tensor copy(dtype, std::move(dims));
    if (bytes != 0) std::memcpy(copy.raw(), start, static_cast<size_t>(bytes));
    return copy;
  }
  // The mapping is read-only: constants are never written.
  return Tensor(dtype, std::move(dims),
                std::shared_ptr<std::byte>(*file, const_cast<std::byte*>(start)));
}

Status check_tensor_header(const onnx::TensorProto& proto, DType* dtype,
                           std::vector<int64_t>* dims) {
  const auto type = dtype_from_onnx(proto.data_type());
  if (!type) {
    return invalid_argument(tensor_label(proto) + " has dtype " +
                            std::string(onnx_dtype_name(proto.data_type())) +
                            ", which hsched does not support");
  }
  if (proto.has_segment()) return unimplemented(tensor_label(proto) + " is segmented");
  dims->assign(proto.dims().begin(), proto.dims().end());
  auto elements = checked_elements(*dims);
  if (!elements.is_ok()) return elements.status().with_context(tensor_label(proto));
  if (*elements > kMaxTensorBytes / static_cast<int64_t>(dtype_size(*type))) {
    return invalid_argument(tensor_label(proto) + " is larger than the limit of " +
                            std::to_string(kMaxTensorBytes) + " bytes");
  }
  *dtype = *type;
  return Status::ok();
}

Status check_tensor_data(const onnx::TensorProto& proto, ExternalData* external) {
  DType dtype = DType::kUndefined;
  std::vector<int64_t> dims;
  HSCHED_RETURN_IF_ERROR(check_tensor_header(proto, &dtype, &dims));
  if (!is_external(proto)) return check_embedded_payload(proto, dtype, Shape(dims).elements());
  if (external == nullptr) {
    return invalid_argument(tensor_label(proto) +
                            " uses external data, which a model read from memory cannot have");
  }
  return external->load(proto, dtype, std::move(dims)).status();
}

Result<Tensor> tensor_from_proto(const onnx::TensorProto& proto, ExternalData* external) {
  return convert(proto, external, nullptr);
}

Result<Tensor> take_tensor_from_proto(onnx::TensorProto& proto, ExternalData* external) {
  return convert(proto, external, proto.has_raw_data() ? proto.mutable_raw_data() : nullptr);
}

void tensor_to_proto(const Tensor& tensor, const std::string& name, onnx::TensorProto* proto) {
  proto->Clear();
  proto->set_name(name);
  proto->set_data_type(dtype_to_onnx(tensor.dtype()));
  for (int64_t d : tensor.dims()) proto->add_dims(d);
  proto->set_raw_data(reinterpret_cast<const char*>(tensor.raw()), tensor.byte_size());
}

Result<AttributeMap> attributes_from_proto(const onnx::NodeProto& node, ExternalData& external) {
  AttributeMap attrs;
  using A = onnx::AttributeProto;
  for (const auto& attr : node.attribute()) {
    switch (attr.type()) {
      case A::INT: attrs.emplace(attr.name(), attr.i()); break;
      case A::FLOAT: attrs.emplace(attr.name(), attr.f()); break;
      case A::STRING: attrs.emplace(attr.name(), attr.s()); break;
      case A::INTS:
        attrs.emplace(attr.name(), std::vector<int64_t>(attr.ints().begin(), attr.ints().end()));
        break;
      case A::FLOATS:
        attrs.emplace(attr.name(), std::vector<float>(attr.floats().begin(), attr.floats().end()));
        break;
      case A::STRINGS:
        attrs.emplace(attr.name(),
                      std::vector<std::string>(attr.strings().begin(), attr.strings().end()));
        break;
      case A::TENSOR: {
        HSCHED_ASSIGN_OR_RETURN(Tensor t, tensor_from_proto(attr.t(), &external));
        attrs.emplace(attr.name(), std::move(t));
        break;
      }
      default:
        return unimplemented("attribute '" + attr.name() + "' of type " +
                             A::AttributeType_Name(attr.type()) + " is not supported");
    }
  }
  return attrs;
}

DType dtype_from_type(const onnx::TypeProto& type) {
  if (!type.has_tensor_type()) return DType::kUndefined;
  return dtype_from_onnx(type.tensor_type().elem_type()).value_or(DType::kUndefined);
}

Shape shape_from_type(const onnx::TypeProto& type) {
  if (!type.has_tensor_type() || !type.tensor_type().has_shape()) return Shape();
  std::vector<int64_t> dims;
  for (const auto& dim : type.tensor_type().shape().dim()) {
    dims.push_back(dim.has_dim_value() && dim.dim_value() >= 0 ? dim.dim_value() : kDynamicDim);
  }
  return Shape(std::move(dims));
}

Result<Tensor> read_tensor_file(const fs::path& path, std::string* name) {
  auto file = MappedFile::open(path);
  if (!file.is_ok()) return file.status().with_context(path.string());
  // Protobuf parses at most INT_MAX bytes: the size is checked before it becomes an int (a 4 GiB
  // + 100 byte file once parsed as its first 100 bytes).
  const size_t size = (*file)->size();
  if (size > static_cast<size_t>(kMaxProtobufBytes)) {
    return invalid_argument(path.string() + ": " + std::to_string(size) +
                            " bytes, more than protobuf's limit of 2 GiB - 1 for one TensorProto");
  }
  onnx::TensorProto proto;
  if (!proto.ParseFromArray((*file)->data(), static_cast<int>(size))) {
    return invalid_argument(path.string() + ": not a serialized ONNX TensorProto");
  }
  auto tensor = take_tensor_from_proto(proto, nullptr);
  if (!tensor.is_ok()) return tensor.status().with_context(path.string());
  if (name != nullptr) *name = proto.name();
  return tensor;
}

Status write_tensor_file(const Tensor& tensor, const std::string& name, const fs::path& path) {
  onnx::TensorProto proto;
  tensor_to_proto(tensor, name, &proto);
  std::string bytes;
  if (!proto.SerializeToString(&bytes)) {
    return Status(ErrorCode::kUnavailable, path.string() + ": cannot write");
  }
  return write_file_atomically(path, bytes);
}

}  // namespace hsched
