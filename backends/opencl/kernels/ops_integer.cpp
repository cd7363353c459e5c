#include "backends/opencl/kernels/ops_integer.h"

#include <algorithm>
#include <string>

#include "backends/opencl/kernels/ops_scratch.h"
#include "backends/opencl/kernels/ops_util.h"

namespace hsched::opencl {
namespace {

using detail::check_int_range;
using detail::element_count;
using detail::kMaxRank;
using detail::launch;
using detail::set_args;

// The kernel `base` for `dtype`: base_i32, base_i64, base_i16, base_u16, base_u32, base_u64.
std::string kernel_name(const char* base, DType dtype) {
  switch (dtype) {
    case DType::kI32:
      return std::string(base) + "_i32";
    case DType::kI16:
      return std::string(base) + "_i16";
    case DType::kU16:
      return std::string(base) + "_u16";
    case DType::kU32:
      return std::string(base) + "_u32";
    case DType::kU64:
      return std::string(base) + "_u64";
    default:
      return std::string(base) + "_i64";
  }
}

bool comparison(BinaryOp op) {
  return op == BinaryOp::kEqual || op == BinaryOp::kLess || op == BinaryOp::kLessOrEqual ||
         op == BinaryOp::kGreater || op == BinaryOp::kGreaterOrEqual;
}

Result<cl::Event> launch_named(const OpKernels& ops, cl::CommandQueue& queue,
                               const std::string& name, int64_t count, const Events& wait,
                               const auto&... args) {
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, name.c_str()));
  HSCHED_RETURN_IF_ERROR(set_args(kernel, name.c_str(), args..., static_cast<cl_int>(count)));
  return launch(queue, kernel, count, wait, name.c_str());
}

}  // namespace

bool integer_dtype(DType dtype) {
  return dtype == DType::kI32 || dtype == DType::kI64 || narrow_or_unsigned(dtype);
}

bool narrow_or_unsigned(DType dtype) {
  return dtype == DType::kI16 || dtype == DType::kU16 || dtype == DType::kU32 ||
         dtype == DType::kU64;
}

bool held_as_is(DType dtype) { return integer_dtype(dtype) || dtype == DType::kF16; }

size_t held_bytes(Storage storage, DType dtype) {
  return held_as_is(dtype) ? dtype_size(dtype) : storage_bytes(storage);
}

Result<cl::Event> enqueue_pow_exponent(const OpKernels& ops, cl::CommandQueue& queue,
                                       const cl::Buffer& a, const Shape& a_shape,
                                       const cl::Buffer& b, DType exponent, const Shape& b_shape,
                                       cl::Buffer& y, const Events& wait) {
  if (!integer_dtype(exponent)) {
    return invalid_argument("ops: Pow by a " + std::string(dtype_name(exponent)) + " exponent");
  }
  HSCHED_ASSIGN_OR_RETURN(const detail::Broadcast broadcast,
                          detail::broadcast_of(a_shape, b_shape, "Pow"));
  const auto& [count, shape] = broadcast;
  return launch_named(ops, queue, kernel_name("pow_exponent", exponent), count, wait, a, b, y,
                      shape);
}

Result<cl::Event> enqueue_byte_binary(const OpKernels& ops, cl::CommandQueue& queue, BinaryOp op,
                                      DType dtype, const cl::Buffer& a, const Shape& a_shape,
                                      const cl::Buffer& b, const Shape& b_shape, bool c_fmod,
                                      const cl::Buffer* error, cl::Buffer& y, const Events& wait) {
  const bool divides = op == BinaryOp::kDiv || op == BinaryOp::kFmod;
  const bool supported = op == BinaryOp::kAdd || op == BinaryOp::kSub || op == BinaryOp::kMul ||
                         op == BinaryOp::kShiftLeft || op == BinaryOp::kShiftRight || divides;
  if ((dtype != DType::kU8 && dtype != DType::kI8) || !supported || (divides && !error)) {
    return invalid_argument("ops: 8-bit binary op " + std::to_string(static_cast<int>(op)) +
                            " of " + std::string(dtype_name(dtype)) + " is not supported");
  }
  HSCHED_ASSIGN_OR_RETURN(const detail::Broadcast broadcast,
                          detail::broadcast_of(a_shape, b_shape, "8-bit binary op"));
  const auto& [count, shape] = broadcast;
  return launch_named(ops, queue, "byte_binary", count, wait, a, b, y, static_cast<cl_int>(op),
                      static_cast<cl_int>(dtype == DType::kI8), static_cast<cl_int>(c_fmod), shape,
                      error != nullptr ? *error : y);
}

Result<cl::Event> enqueue_half_binary(const OpKernels& ops, cl::CommandQueue& queue, BinaryOp op,
                                      const cl::Buffer& a, const Shape& a_shape,
                                      const cl::Buffer& b, const Shape& b_shape, cl::Buffer& y,
                                      const Events& wait) {
  if (op != BinaryOp::kMax && op != BinaryOp::kMin && op != BinaryOp::kFmod) {
    return invalid_argument("ops: float16 binary op " + std::to_string(static_cast<int>(op)) +
                            " is not supported");
  }
  HSCHED_ASSIGN_OR_RETURN(const detail::Broadcast broadcast,
                          detail::broadcast_of(a_shape, b_shape, "float16 binary op"));
  const auto& [count, shape] = broadcast;
  return launch_named(ops, queue, "half_binary", count, wait, a, b, y, static_cast<cl_int>(op),
                      shape);
}

Result<cl::Event> enqueue_int_binary(const OpKernels& ops, cl::CommandQueue& queue, BinaryOp op,
                                     DType dtype, const cl::Buffer& a, const Shape& a_shape,
                                     const cl::Buffer& b, const Shape& b_shape, bool c_fmod,
                                     const cl::Buffer* error, cl::Buffer& y, const Events& wait) {
  const bool divides = op == BinaryOp::kDiv || op == BinaryOp::kFmod;
  const bool arithmetic = op == BinaryOp::kAdd || op == BinaryOp::kSub || op == BinaryOp::kMul ||
                          op == BinaryOp::kMax || op == BinaryOp::kMin || divides ||
                          op == BinaryOp::kShiftLeft || op == BinaryOp::kShiftRight ||
                          op == BinaryOp::kPow;
  if (!integer_dtype(dtype) || !(arithmetic || comparison(op)) || (divides && error == nullptr)) {
    return invalid_argument("ops: integer binary op " + std::to_string(static_cast<int>(op)) +
                            " of " + std::string(dtype_name(dtype)) + " is not supported");
  }
  HSCHED_ASSIGN_OR_RETURN(const detail::Broadcast broadcast,
                          detail::broadcast_of(a_shape, b_shape, "integer binary op"));
  const auto& [count, shape] = broadcast;
  if (comparison(op)) {
    return launch_named(ops, queue, kernel_name("int_compare", dtype), count, wait, a, b, y,
                        static_cast<cl_int>(op), shape);
  }
  // The Mod code of the kernel is BinaryOp::kFmod's; c_fmod picks the sign rule.
  return launch_named(ops, queue, kernel_name("int_binary", dtype), count, wait, a, b, y,
                      static_cast<cl_int>(op), static_cast<cl_int>(c_fmod), shape,
                      error != nullptr ? *error : y);
}

Result<cl::Event> enqueue_int_select(const OpKernels& ops, cl::CommandQueue& queue, DType dtype,
                                     const cl::Buffer& cond, const Shape& cond_shape,
                                     const cl::Buffer& a, const Shape& a_shape, const cl::Buffer& b,
                                     const Shape& b_shape, cl::Buffer& y, const Events& wait) {
  if (!integer_dtype(dtype)) return invalid_argument("ops: integer Where of another dtype");
  HSCHED_ASSIGN_OR_RETURN(const detail::SelectBroadcast where,
                          detail::select_broadcast_of(cond_shape, a_shape, b_shape));
  return launch_named(ops, queue, kernel_name("int_select", dtype), where.count, wait, cond, a, b,
                      y, where.shape);
}

Result<cl::Event> enqueue_int_trilu(const OpKernels& ops, cl::CommandQueue& queue, DType dtype,
                                    const cl::Buffer& x, const Shape& shape, int64_t k, bool upper,
                                    cl::Buffer& y, const Events& wait) {
  if (!integer_dtype(dtype) || shape.size() < 2) {
    return invalid_argument("ops: integer Trilu of another dtype or of rank < 2");
  }
  const int64_t count = element_count(shape);
  HSCHED_RETURN_IF_ERROR(check_int_range(count, "Trilu input"));
  const int64_t h = shape[shape.size() - 2], w = shape[shape.size() - 1];
  const int64_t bound = h + w + 1;  // past it every element is on one side of the diagonal
  return launch_named(
      ops, queue, kernel_name("int_trilu", dtype), count, wait, x, y,
      static_cast<cl_int>(std::max<int64_t>(h, 1)), static_cast<cl_int>(std::max<int64_t>(w, 1)),
      static_cast<cl_int>(std::clamp(k, -bound, bound)), static_cast<cl_int>(upper));
}

Result<cl::Event> enqueue_cast(const OpKernels& ops, cl::CommandQueue& queue, DType from, DType to,
                               const cl::Buffer& x, cl::Buffer& y, int64_t count,
                               const Events& wait) {
  HSCHED_RETURN_IF_ERROR(check_int_range(count, "Cast input"));
  // Held in the storage type: floats, bools (1 and 0) and 8-bit data (its exact integers).
  const auto storage = [](DType t) {
    return t == DType::kF32 || t == DType::kBool || t == DType::kU8 || t == DType::kI8;
  };
  if (storage(from) && (to == DType::kU8 || to == DType::kI8)) {
    return launch_named(ops, queue, "cast_to_byte", count, wait, x, y,
                        static_cast<cl_int>(to == DType::kI8));
  }
  if (integer_dtype(from) && integer_dtype(to) && from != to) {
    return launch_named(ops, queue, from == DType::kI32 ? "int_widen" : "int_narrow", count, wait,
                        x, y);
  }
  if (integer_dtype(from) && storage(to)) {
    return launch_named(ops, queue, kernel_name("int_to_storage", from), count, wait, x, y,
                        static_cast<cl_int>(to == DType::kBool));
  }
  if (from == DType::kF16 && to == DType::kF32) {
    return launch_named(ops, queue, "half_to_storage", count, wait, x, y);
  }
  if (from == DType::kF32 && to == DType::kF16) {
    return launch_named(ops, queue, "storage_to_half", count, wait, x, y);
  }
  if (storage(from) && integer_dtype(to)) {
    return launch_named(ops, queue, kernel_name("int_from_storage", to), count, wait, x, y);
  }
  return invalid_argument("ops: Cast from " + std::string(dtype_name(from)) + " to " +
                          std::string(dtype_name(to)) + " is not supported");
}

}  // namespace hsched::opencl
