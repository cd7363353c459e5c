// The op layer's integer kernels (kernel_sources_integer.h): int32 and int64 values held on the
// device in their own type, 4 and 8 bytes an element, whatever the storage type of the floats.
// Bools are the storage type's 1 and 0, as everywhere on the device. Same conventions as ops.h
// (an in-order queue, the event of the last command, nothing read back).
#pragma once

#include "backends/opencl/kernels/ops.h"
#include "hsched/dtype.h"

namespace hsched::opencl {

// Whether `dtype` is held as integers (int32, int64).
bool integer_dtype(DType dtype);
// Bytes of one element of `dtype` on the device: 4 or 8 for integers, the storage type's else.
size_t held_bytes(Storage storage, DType dtype);

// y = op(a, b) of `dtype` (both inputs) with numpy broadcasting up to rank 6, for Add, Sub, Mul
// (wrapping), Div (truncating), Mod (`c_fmod`: the dividend's sign; else the divisor's), Max,
// Min; comparisons (Equal, Less, LessOrEqual, Greater, GreaterOrEqual) write bools. A zero
// divisor gives 0 and sets bit kDivisionByZero of the int at `error` (needed for Div and Mod).
Result<cl::Event> enqueue_int_binary(const OpKernels& ops, cl::CommandQueue& queue, BinaryOp op,
                                     DType dtype, const cl::Buffer& a, const Shape& a_shape,
                                     const cl::Buffer& b, const Shape& b_shape, bool c_fmod,
                                     const cl::Buffer* error, cl::Buffer& y,
                                     const Events& wait = {});

// y = cond ? a : b (Where) with integer a, b of `dtype`, the three broadcast together.
Result<cl::Event> enqueue_int_select(const OpKernels& ops, cl::CommandQueue& queue, DType dtype,
                                     const cl::Buffer& cond, const Shape& cond_shape,
                                     const cl::Buffer& a, const Shape& a_shape, const cl::Buffer& b,
                                     const Shape& b_shape, cl::Buffer& y, const Events& wait = {});

// Trilu of integer x (rank >= 2), as enqueue_trilu (ops_spatial.h).
Result<cl::Event> enqueue_int_trilu(const OpKernels& ops, cl::CommandQueue& queue, DType dtype,
                                    const cl::Buffer& x, const Shape& shape, int64_t k, bool upper,
                                    cl::Buffer& y, const Events& wait = {});

// Cast of `count` elements between float, bool (both in the storage type), int32 and int64:
// float to integer truncates toward zero, saturating to int64 (NaN gives 0), int32 keeping the
// low 32 bits of that, as the CPU does; integer to bool is x != 0; int64 to int32 keeps the low
// 32 bits. InvalidArgument for other pairs (a
// cast to the same dtype is a copy: the node level's).
Result<cl::Event> enqueue_cast(const OpKernels& ops, cl::CommandQueue& queue, DType from, DType to,
                               const cl::Buffer& x, cl::Buffer& y, int64_t count,
                               const Events& wait = {});

}  // namespace hsched::opencl
