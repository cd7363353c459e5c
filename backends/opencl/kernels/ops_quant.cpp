#include "backends/opencl/kernels/ops_quant.h"

#include <algorithm>
#include <cmath>

#include "backends/opencl/kernels/ops_scratch.h"
#include "backends/opencl/kernels/ops_util.h"
#include "core/qlinear.h"

namespace hsched::opencl {
namespace {

// Mirrors QuantConvShape in kernel_sources_quant.h.
struct QuantConvShape {
  cl_int c, h, w, oc, oh, ow, kh, kw, stride_h, stride_w, dil_h, dil_w, pad_t, pad_l, group;
};

// The buffer of an operand, or `fallback` (never read) where it is omitted.
const cl::Buffer& or_else(const QuantOperand& operand, const cl::Buffer& fallback) {
  return operand.buffer != nullptr ? *operand.buffer : fallback;
}

cl_int count_of(const QuantOperand& operand) {
  return operand.buffer != nullptr ? static_cast<cl_int>(operand.count) : 0;
}

}  // namespace

Result<cl::Event> enqueue_quant_matmul(const OpKernels& ops, cl::CommandQueue& queue,
                                       const cl::Buffer& a, const Shape& a_shape,
                                       const cl::Buffer& b, const Shape& b_shape, QuantOperand za,
                                       QuantOperand zb, const Requantize* requantize, cl::Buffer& y,
                                       const Shape& y_shape, const Events& wait) {
  if (a_shape.size() < 2 || b_shape.size() < 2) {
    return invalid_argument("ops: integer MatMul of vectors is not supported");
  }
  const int64_t m = a_shape[a_shape.size() - 2], k = a_shape.back(), n = b_shape.back();
  const Shape a_batch(a_shape.begin(), a_shape.end() - 2),
      b_batch(b_shape.begin(), b_shape.end() - 2);
  if (b_shape[b_shape.size() - 2] != k ||
      !(a_batch == b_batch || a_batch.empty() || b_batch.empty())) {
    return invalid_argument("ops: integer MatMul operands do not fit");
  }
  const Shape& batch = a_batch.empty() ? b_batch : a_batch;
  Shape expected = batch;
  expected.push_back(m);
  expected.push_back(n);
  if (expected != y_shape) return invalid_argument("ops: integer MatMul output does not fit");
  const int64_t count = detail::element_count(y_shape);
  HSCHED_RETURN_IF_ERROR(detail::check_int_range(count, "integer MatMul output"));
  HSCHED_RETURN_IF_ERROR(detail::check_int_range(
      std::max(detail::element_count(a_shape), detail::element_count(b_shape)),
      "integer MatMul input"));
  static const Requantize kNone{};
  const Requantize& rq = requantize != nullptr ? *requantize : kNone;
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, "quant_matmul"));
  HSCHED_RETURN_IF_ERROR(detail::set_args(
      kernel, "quant_matmul", a, b, or_else(za, a), count_of(za), or_else(zb, a), count_of(zb),
      or_else(rq.a_scale, a), count_of(rq.a_scale), or_else(rq.b_scale, a), count_of(rq.b_scale),
      rq.y_scale != nullptr ? *rq.y_scale : a, or_else(rq.y_zero, a), count_of(rq.y_zero),
      static_cast<cl_int>(rq.lo), static_cast<cl_int>(rq.hi),
      static_cast<cl_int>(requantize != nullptr), y, y, static_cast<cl_int>(m),
      static_cast<cl_int>(k), static_cast<cl_int>(n),
      static_cast<cl_int>(a_batch.empty() ? 0 : m * k),
      static_cast<cl_int>(b_batch.empty() ? 0 : k * n), static_cast<cl_int>(count)));
  return detail::launch(queue, kernel, count, wait, "quant_matmul");
}

Result<cl::Event> enqueue_quant_conv(const OpKernels& ops, cl::CommandQueue& queue,
                                     const cl::Buffer& x, const Shape& x_shape, const cl::Buffer& w,
                                     const Shape& w_shape, const Window& window, int64_t group,
                                     QuantOperand zx, QuantOperand zw, QuantOperand bias,
                                     const Requantize* requantize, cl::Buffer& y,
                                     const Shape& y_shape, const Events& wait) {
  const size_t spatial = x_shape.size() - 2;
  if ((x_shape.size() != 3 && x_shape.size() != 4) || w_shape.size() != x_shape.size() ||
      y_shape.size() != x_shape.size() || window.kernel.size() != spatial || group < 1 ||
      x_shape[1] % group != 0 || w_shape[0] % group != 0 || w_shape[1] * group != x_shape[1] ||
      y_shape[1] != w_shape[0] || y_shape[0] != x_shape[0]) {
    return invalid_argument("ops: integer Conv operands do not fit");
  }
  const auto at = [](const std::vector<int64_t>& v, size_t i, int64_t fallback) {
    return i < v.size() ? v[i] : fallback;
  };
  // 1-D as 2-D with a height of 1: its window lists have no entry `h` (defaults apply).
  const size_t h = spatial == 2 ? 0 : window.kernel.size(), wi = spatial - 1;
  QuantConvShape s{};
  s.c = static_cast<cl_int>(x_shape[1]);
  s.h = static_cast<cl_int>(spatial == 2 ? x_shape[2] : 1);
  s.w = static_cast<cl_int>(x_shape.back());
  s.oc = static_cast<cl_int>(y_shape[1]);
  s.oh = static_cast<cl_int>(spatial == 2 ? y_shape[2] : 1);
  s.ow = static_cast<cl_int>(y_shape.back());
  s.kh = static_cast<cl_int>(spatial == 2 ? window.kernel[0] : 1);
  s.kw = static_cast<cl_int>(window.kernel[wi]);
  s.stride_h = static_cast<cl_int>(at(window.strides, h, 1));
  s.stride_w = static_cast<cl_int>(at(window.strides, wi, 1));
  s.dil_h = static_cast<cl_int>(at(window.dilations, h, 1));
  s.dil_w = static_cast<cl_int>(at(window.dilations, wi, 1));
  s.pad_t = static_cast<cl_int>(at(window.pads_begin, h, 0));
  s.pad_l = static_cast<cl_int>(at(window.pads_begin, wi, 0));
  s.group = static_cast<cl_int>(group);
  const int64_t count = detail::element_count(y_shape);
  HSCHED_RETURN_IF_ERROR(detail::check_int_range(count, "integer Conv output"));
  HSCHED_RETURN_IF_ERROR(detail::check_int_range(
      std::max(detail::element_count(x_shape), detail::element_count(w_shape)),
      "integer Conv input"));
  static const Requantize kNone{};
  const Requantize& rq = requantize != nullptr ? *requantize : kNone;
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, "quant_conv"));
  HSCHED_RETURN_IF_ERROR(detail::set_args(
      kernel, "quant_conv", x, w, or_else(zx, x), count_of(zx), or_else(zw, x), count_of(zw),
      or_else(rq.a_scale, x), or_else(rq.b_scale, x), count_of(rq.b_scale),
      rq.y_scale != nullptr ? *rq.y_scale : x, or_else(rq.y_zero, x), count_of(rq.y_zero),
      or_else(bias, x), count_of(bias), static_cast<cl_int>(rq.lo), static_cast<cl_int>(rq.hi),
      static_cast<cl_int>(requantize != nullptr), y, y, s, static_cast<cl_int>(count)));
  return detail::launch(queue, kernel, count, wait, "quant_conv");
}

Result<cl::Event> enqueue_qdq_binary(const OpKernels& ops, cl::CommandQueue& queue, BinaryOp op,
                                     const cl::Buffer& a, const Shape& a_shape, const cl::Buffer& b,
                                     const Shape& b_shape, const QdqBinary& q, cl::Buffer& y,
                                     const Events& wait) {
  HSCHED_ASSIGN_OR_RETURN(const detail::Broadcast broadcast,
                          detail::broadcast_of(a_shape, b_shape, "quantized binary op"));
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, "qdq_binary"));
  HSCHED_RETURN_IF_ERROR(detail::set_args(kernel, "qdq_binary", a, b, y, static_cast<cl_int>(op),
                                          broadcast.shape, q,
                                          static_cast<cl_int>(broadcast.count)));
  return detail::launch(queue, kernel, broadcast.count, wait, "qdq_binary");
}

namespace {
// Mirrors QLinearBinary in kernel_sources_quant.h.
struct QLinearBinaryParams {
  cl_float ra = 0, rb = 0, fixed = 0, multiplier = 0, za = 0, zb = 0, lo = 0, hi = 255;
  cl_int form = 0;
};
}  // namespace

Result<cl::Event> enqueue_qlinear_binary(const OpKernels& ops, cl::CommandQueue& queue, bool add,
                                         const cl::Buffer& a, const Shape& a_shape,
                                         const cl::Buffer& b, const Shape& b_shape,
                                         const QdqBinary& q, cl::Buffer& y, const Events& wait) {
  HSCHED_ASSIGN_OR_RETURN(const detail::Broadcast broadcast,
                          detail::broadcast_of(a_shape, b_shape, "quantized binary op"));
  QLinearBinaryParams p;
  p.lo = q.lo;
  p.hi = q.hi;
  p.za = q.a_zero;
  p.zb = q.b_zero;
  if (add) {
    const QLinearAddTerms t =
        qlinear_add_terms(q.a_scale, q.a_zero, q.b_scale, q.b_zero, q.y_scale, q.y_zero);
    p.ra = t.ra;
    p.rb = t.rb;
    p.fixed = t.fixed;
    // MLAS takes an operand of one value (the first when both are) into the fixed part.
    p.form = detail::element_count(a_shape) == 1 ? 2 : detail::element_count(b_shape) == 1 ? 1 : 0;
  } else {
    p.multiplier = q.a_scale * q.b_scale / q.y_scale;
    p.fixed = q.y_zero;
    p.form = 3;
  }
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, "qlinear_binary"));
  HSCHED_RETURN_IF_ERROR(detail::set_args(kernel, "qlinear_binary", a, b, y, broadcast.shape, p,
                                          static_cast<cl_int>(broadcast.count)));
  return detail::launch(queue, kernel, broadcast.count, wait, "qlinear_binary");
}

Result<cl::Event> enqueue_qlinear_softmax(const OpKernels& ops, cl::CommandQueue& queue,
                                          const cl::Buffer& x, int64_t rows, int64_t size,
                                          float x_scale, const QdqRow& y_quantization,
                                          cl::Buffer& y, const Events& wait) {
  HSCHED_RETURN_IF_ERROR(detail::check_int_range(rows * size, "QLinearSoftmax input"));
  if (size < 1 || !(x_scale > 0.0f) || !(y_quantization.y_scale > 0.0f)) {
    return invalid_argument("ops: QLinearSoftmax needs rows and positive scales");
  }
  const QLinearSoftmaxTable table = qlinear_softmax_table(x_scale, y_quantization.y_scale, size);
  HSCHED_ASSIGN_OR_RETURN(cl::Buffer exp,
                          detail::constant_buffer(ops, queue, table.exp, sizeof(table.exp)));
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel,
                          detail::queue_kernel(ops, queue, "qlinear_softmax_rows"));
  HSCHED_RETURN_IF_ERROR(detail::set_args(
      kernel, "qlinear_softmax_rows", x, y, exp, static_cast<cl_int>(rows),
      static_cast<cl_int>(size), table.y_factor, static_cast<cl_int>(table.overflows),
      y_quantization.y_zero, y_quantization.lo, y_quantization.hi));
  return detail::launch(queue, kernel, rows, wait, "qlinear_softmax_rows");
}

Result<cl::Event> enqueue_qdq_chain(const OpKernels& ops, cl::CommandQueue& queue,
                                    const cl::Buffer& x, int64_t count, const QdqChain& chain,
                                    cl::Buffer& y, const Events& wait) {
  HSCHED_RETURN_IF_ERROR(detail::check_int_range(count, "quantized chain"));
  HSCHED_ASSIGN_OR_RETURN(const cl::Buffer program,
                          detail::constant_buffer(ops, queue, &chain, sizeof chain));
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, "qdq_chain"));
  HSCHED_RETURN_IF_ERROR(
      detail::set_args(kernel, "qdq_chain", x, y, program, static_cast<cl_int>(count)));
  return detail::launch(queue, kernel, count, wait, "qdq_chain");
}

Result<cl::Event> enqueue_dynamic_quantize(const OpKernels& ops, cl::CommandQueue& queue,
                                           const cl::Buffer& x, int64_t count, cl::Buffer& y,
                                           cl::Buffer& scale, cl::Buffer& zero,
                                           const Events& wait) {
  HSCHED_RETURN_IF_ERROR(detail::check_int_range(count, "DynamicQuantizeLinear input"));
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel params,
                          detail::queue_kernel(ops, queue, "dynamic_quant_params"));
  HSCHED_RETURN_IF_ERROR(
      detail::set_args(params, "dynamic_quant_params", x, scale, zero, static_cast<cl_int>(count)));
  HSCHED_ASSIGN_OR_RETURN(
      cl::Event found, detail::launch_range(queue, params, cl::NDRange(64), cl::NDRange(64), wait,
                                            "dynamic_quant_params"));
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, "dynamic_quantize"));
  HSCHED_RETURN_IF_ERROR(
      detail::set_args(kernel, "dynamic_quantize", x, scale, zero, y, static_cast<cl_int>(count)));
  return detail::launch(queue, kernel, count, {found}, "dynamic_quantize");
}

}  // namespace hsched::opencl
