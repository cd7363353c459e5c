#include "hsched/dtype.h"

#include <array>

namespace hsched {
namespace {

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  size_t size;
  int32_t onnx;  // TensorProto.DataType
};

// TensorProto.DataType: FLOAT=1 UINT8=2 INT8=3 UINT16=4 INT16=5 INT32=6 INT64=7 BOOL=9
// FLOAT16=10 DOUBLE=11 UINT32=12 UINT64=13 BFLOAT16=16.
constexpr std::array<DTypeInfo, 13> kTypes{{
    {DType::kF32, "f32", 4, 1},
    {DType::kF16, "f16", 2, 10},
    {DType::kBF16, "bf16", 2, 16},
    {DType::kI8, "i8", 1, 3},
    {DType::kU8, "u8", 1, 2},
    {DType::kI32, "i32", 4, 6},
    {DType::kI64, "i64", 8, 7},
    {DType::kBool, "bool", 1, 9},
    {DType::kF64, "f64", 8, 11},
    {DType::kI16, "i16", 2, 5},
    {DType::kU16, "u16", 2, 4},
    {DType::kU32, "u32", 4, 12},
    {DType::kU64, "u64", 8, 13},
}};

const DTypeInfo* find(DType dtype) {
  for (const auto& info : kTypes) {
    if (info.dtype == dtype) return &info;
  }
  return nullptr;
}

}  // namespace

size_t dtype_size(DType dtype) {
  const DTypeInfo* info = find(dtype);
  return info ? info->size : 0;
}

std::string_view dtype_name(DType dtype) {
  const DTypeInfo* info = find(dtype);
  return info ? info->name : "undefined";
}

std::optional<DType> dtype_from_name(std::string_view name) {
  for (const auto& info : kTypes) {
    if (info.name == name) return info.dtype;
  }
  return std::nullopt;
}

std::optional<DType> dtype_from_onnx(int32_t onnx_type) {
  for (const auto& info : kTypes) {
    if (info.onnx == onnx_type) return info.dtype;
  }
  return std::nullopt;
}

int32_t dtype_to_onnx(DType dtype) {
  const DTypeInfo* info = find(dtype);
  return info ? info->onnx : 0;
}

std::string_view onnx_dtype_name(int32_t onnx_type) {
  static constexpr std::array<std::string_view, 17> kNames{
      "UNDEFINED", "FLOAT",  "UINT8",   "INT8",   "UINT16",    "INT16",
      "INT32",     "INT64",  "STRING",  "BOOL",   "FLOAT16",   "DOUBLE",
      "UINT32",    "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16"};
  if (onnx_type >= 0 && onnx_type < static_cast<int32_t>(kNames.size())) {
    return kNames[static_cast<size_t>(onnx_type)];
  }
  return "UNKNOWN";
}

bool is_floating(DType dtype) {
  return dtype == DType::kF32 || dtype == DType::kF16 || dtype == DType::kBF16 ||
         dtype == DType::kF64;
}

}  // namespace hsched
