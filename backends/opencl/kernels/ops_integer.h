// The op layer's integer kernels (kernel_sources_integer.h): int32 and int64 values held on the
// device in their own type, 4 and 8 bytes an element, whatever the storage type of the floats.
// Bools are the storage type's 1 and 0, as everywhere on the device. Same conventions as ops.h
// (an in-order queue, the event of the last command, nothing read back).
#pragma once

#include "backends/opencl/kernels/ops.h"
#include "hsched/dtype.h"

namespace hsched::opencl {

// Whether `dtype` is held as integers: int32, int64, and (narrow_or_unsigned) int16, uint16,
// uint32, uint64, which only the kernels of this file take (binary ops, comparisons, Where,
// Trilu) besides moves of their bytes.
bool integer_dtype(DType dtype);
bool narrow_or_unsigned(DType dtype);
// Whether `dtype` is held in its own type, bytes as the host's: the integers above and float16
// (raw halves: Cast to and from float, Max, Min, Mod and moves only).
bool held_as_is(DType dtype);
// Bytes of one element of `dtype` on the device: 4 or 8 for integers, the storage type's else.
size_t held_bytes(Storage storage, DType dtype);

// y = op(a, b) of `dtype` (both inputs) with numpy broadcasting up to rank 6, for Add, Sub, Mul
// (wrapping), Div (truncating), Mod (`c_fmod`: the dividend's sign; else the divisor's), Max,
// Min, Pow (by squaring, wrapping), BitShift (kShiftLeft/kShiftRight, unsigned types; by the
// width or more gives 0);
// comparisons (Equal, Less, LessOrEqual, Greater, GreaterOrEqual) write bools. A zero
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

// Pow of float a by integer exponents b of dtype `exponent` (taken as floats), broadcast.
Result<cl::Event> enqueue_pow_exponent(const OpKernels& ops, cl::CommandQueue& queue,
                                       const cl::Buffer& a, const Shape& a_shape,
                                       const cl::Buffer& b, DType exponent, const Shape& b_shape,
                                       cl::Buffer& y, const Events& wait = {});

// Add, Sub, Mul (wrapping), Div, Mod (both sign rules) or BitShift of u8 or i8 data (`dtype`),
// held as exact floats in the storage type; a zero divisor gives 0 and sets kDivisionByZero.
Result<cl::Event> enqueue_byte_binary(const OpKernels& ops, cl::CommandQueue& queue, BinaryOp op,
                                      DType dtype, const cl::Buffer& a, const Shape& a_shape,
                                      const cl::Buffer& b, const Shape& b_shape, bool c_fmod,
                                      const cl::Buffer* error, cl::Buffer& y,
                                      const Events& wait = {});

// Max, Min or Mod (fmod) of float16 data (raw halves), broadcast up to rank 6, computed in float.
Result<cl::Event> enqueue_half_binary(const OpKernels& ops, cl::CommandQueue& queue, BinaryOp op,
                                      const cl::Buffer& a, const Shape& a_shape,
                                      const cl::Buffer& b, const Shape& b_shape, cl::Buffer& y,
                                      const Events& wait = {});

// Cast of `count` elements between float, bool (both in the storage type), int32 and int64, and
// between float and float16 (raw halves; to float16 rounds to nearest even), and from float,
// bool or 8-bit data to u8/i8 (truncated, saturated to int64, the low 8 bits: the CPU's):
// float to integer truncates toward zero, saturating to int64 (NaN gives 0), int32 keeping the
// low 32 bits of that, as the CPU does; integer to bool is x != 0; int64 to int32 keeps the low
// 32 bits. InvalidArgument for other pairs (a
// cast to the same dtype is a copy: the node level's).
Result<cl::Event> enqueue_cast(const OpKernels& ops, cl::CommandQueue& queue, DType from, DType to,
                               const cl::Buffer& x, cl::Buffer& y, int64_t count,
                               const Events& wait = {});

}  // namespace hsched::opencl
