// The op layer's integer products (kernel_sources_quant.h): MatMulInteger, ConvInteger,
// QLinearMatMul and QLinearConv over 8-bit data held as its integer values in the storage type
// (exact in fp16 too), 32-bit sums, written as int32 or requantized as the CPU's kernels do
// (acc x a_scale x b_scale / y_scale in fp32, clamped, rounded half to even, plus the zero
// point). With fp16 storage the scales are read in fp16. Same conventions as ops.h.
#pragma once

#include "backends/opencl/kernels/ops.h"
#include "backends/opencl/kernels/ops_spatial.h"

namespace hsched::opencl {

// A zero point, scale or bias on the device: `count` values (0 when omitted, 1 per tensor, else
// one per row, column or output channel as the op says).
struct QuantOperand {
  const cl::Buffer* buffer = nullptr;
  int64_t count = 0;
};

// Requantization of the sums into 8-bit outputs in [lo, hi] (u8: 0..255, i8: -128..127).
struct Requantize {
  QuantOperand a_scale;  // QLinearMatMul: a's (1 or M); QLinearConv: x's (1)
  QuantOperand b_scale;  // b's (1 or N); w's (1 or OC)
  const cl::Buffer* y_scale = nullptr;
  QuantOperand y_zero;
  int lo = 0, hi = 255;
};

// y [batch..., M, N] = (a - za) x (b - zb) over K: a [batch..., M, K], b [batch..., K, N] with the
// batch axes equal or one operand of rank 2. `requantize` null: y is int32 (MatMulInteger).
Result<cl::Event> enqueue_quant_matmul(const OpKernels& ops, cl::CommandQueue& queue,
                                       const cl::Buffer& a, const Shape& a_shape,
                                       const cl::Buffer& b, const Shape& b_shape, QuantOperand za,
                                       QuantOperand zb, const Requantize* requantize, cl::Buffer& y,
                                       const Shape& y_shape, const Events& wait = {});

// y [N, OC, ...] = conv of (x - zx) by (w - zw) (1-D or 2-D, `window` and `group` as Conv), plus
// `bias` (int32 [OC]) when requantizing. `requantize` null: y is int32 (ConvInteger).
Result<cl::Event> enqueue_quant_conv(const OpKernels& ops, cl::CommandQueue& queue,
                                     const cl::Buffer& x, const Shape& x_shape, const cl::Buffer& w,
                                     const Shape& w_shape, const Window& window, int64_t group,
                                     QuantOperand zx, QuantOperand zw, QuantOperand bias,
                                     const Requantize* requantize, cl::Buffer& y,
                                     const Shape& y_shape, const Events& wait = {});

// y = op(a, b) with numpy broadcasting (ranks up to 6), where `q` dequantizes either input (8-bit
// integers, (x - zero) * scale) and quantizes the output (clamp(rint(v / scale) + zero, lo, hi)):
// a scale of 0 leaves that operand as it is. Mirrors QdqBinary in kernel_sources_quant.h.
struct QdqBinary {
  cl_float a_scale = 0, a_zero = 0, b_scale = 0, b_zero = 0, y_scale = 0, y_zero = 0, lo = 0,
           hi = 255;
};
Result<cl::Event> enqueue_qdq_binary(const OpKernels& ops, cl::CommandQueue& queue, BinaryOp op,
                                     const cl::Buffer& a, const Shape& a_shape, const cl::Buffer& b,
                                     const Shape& b_shape, const QdqBinary& q, cl::Buffer& y,
                                     const Events& wait = {});

// ONNX Runtime's QLinearSoftmax of x [rows, size] (8-bit integers of one type, y's too) with
// x_scale and y's scale, zero point and range (qlinear_softmax_rows: one work item a row).
Result<cl::Event> enqueue_qlinear_softmax(const OpKernels& ops, cl::CommandQueue& queue,
                                          const cl::Buffer& x, int64_t rows, int64_t size,
                                          float x_scale, const QdqRow& y_quantization,
                                          cl::Buffer& y, const Events& wait = {});

// ONNX Runtime's QLinearAdd (`add`) or QLinearMul of a and b of one 8-bit type, numpy
// broadcasting, from the QdqBinary parameters of all three quantized (qlinear_binary).
Result<cl::Event> enqueue_qlinear_binary(const OpKernels& ops, cl::CommandQueue& queue, bool add,
                                         const cl::Buffer& a, const Shape& a_shape,
                                         const cl::Buffer& b, const Shape& b_shape,
                                         const QdqBinary& q, cl::Buffer& y,
                                         const Events& wait = {});

// y = `chain` of each 8-bit x (`count` values; qdq_chain).
Result<cl::Event> enqueue_qdq_chain(const OpKernels& ops, cl::CommandQueue& queue,
                                    const cl::Buffer& x, int64_t count, const QdqChain& chain,
                                    cl::Buffer& y, const Events& wait = {});

// DynamicQuantizeLinear of x (`count` floats) into y (u8 values), scale and zero (one value
// each), as the CPU computes them; with fp16 storage the scale is the fp16 nearest.
Result<cl::Event> enqueue_dynamic_quantize(const OpKernels& ops, cl::CommandQueue& queue,
                                           const cl::Buffer& x, int64_t count, cl::Buffer& y,
                                           cl::Buffer& scale, cl::Buffer& zero,
                                           const Events& wait = {});

}  // namespace hsched::opencl
