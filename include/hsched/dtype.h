// Element types hsched computes with, and their mapping to ONNX's TensorProto.DataType.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace hsched {

// New enumerators go at the end: the numeric values stay stable.
enum class DType : uint8_t {
  kUndefined,
  kF32,
  kF16,
  kBF16,
  kI8,
  kU8,
  kI32,
  kI64,
  kBool,
  kF64,
  kI16,
  kU16,
  kU32,
  kU64,
};

// Bytes per element (0 for kUndefined).
size_t dtype_size(DType dtype);
// Short lower-case name used in reports and JSON: "f32", "f64", "i64", "u16", "bool"...
std::string_view dtype_name(DType dtype);
std::optional<DType> dtype_from_name(std::string_view name);

// ONNX TensorProto.DataType number <-> DType; nullopt for types hsched does not support.
std::optional<DType> dtype_from_onnx(int32_t onnx_type);
int32_t dtype_to_onnx(DType dtype);
// ONNX's own name for a TensorProto.DataType number ("DOUBLE", "STRING"...), for messages.
std::string_view onnx_dtype_name(int32_t onnx_type);

// f32, f16, bf16 and f64.
bool is_floating(DType dtype);

}  // namespace hsched
