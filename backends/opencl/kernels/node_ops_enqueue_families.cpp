// enqueue_node for the op families with their own kernels files: gathers and scatters by
// indices on the device (ops_index.h), generators and LRN, and the integer products
// (ops_quant.h). See node_ops_operands.h.
#include <cmath>
#include <set>

#include "backends/opencl/kernels/node_ops_operands.h"
#include "backends/opencl/kernels/node_ops_util.h"
#include "backends/opencl/kernels/ops_index.h"
#include "backends/opencl/kernels/ops_integer.h"
#include "backends/opencl/kernels/ops_quant.h"
#include "backends/opencl/kernels/ops_util.h"

namespace hsched::opencl::node_detail {

// GatherElements, ScatterElements, Scatter, GatherND, ScatterND, TopK (check_gather_scatter);
// nullopt for other ops.
std::optional<Result<cl::Event>> enqueue_gather_scatter(const OpKernels& ops,
                                                        cl::CommandQueue& queue, const Node& node,
                                                        const Operands& in, const Events& wait) {
  const std::string& op = node.op_type;
  const bool gathers = op == "GatherElements" || op == "GatherND";
  const bool scatters = op == "ScatterElements" || op == "Scatter" || op == "ScatterND";
  if (!gathers && !scatters && op != "TopK") return std::nullopt;
  return [&]() -> Result<cl::Event> {
    HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* x, in.buffer(0));
    HSCHED_ASSIGN_OR_RETURN(cl::Buffer * y, in.output());
    if (op == "TopK") {
      const Tensor* k = in.constant(1);
      if (k == nullptr) return invalid_argument(in.context() + ": k is not given");
      HSCHED_ASSIGN_OR_RETURN(std::vector<int64_t> values, node_detail::int_values(*k));
      const int64_t axis = node.attr_int("axis", -1);
      const auto rank = static_cast<int64_t>(in.shape(0).size());
      Shape expected = in.shape(0);
      if (values.size() != 1 || axis < -rank || axis >= rank) {
        return invalid_argument(in.context() + ": k is not one value, or the axis is out of range");
      }
      expected[static_cast<size_t>(axis < 0 ? axis + rank : axis)] = values[0];
      if (expected != in.output_shape() || in.outputs().size() < 2 || !in.outputs()[1]) {
        return invalid_argument(in.context() + ": k does not give the outputs' shape");
      }
      return enqueue_top_k(ops, queue, *x, in.shape(0), axis, values[0],
                           node.attr_int("largest", 1) != 0, *y, *in.outputs()[1], wait);
    }
    HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* idx, in.buffer(1));
    if (in.error_flag() == nullptr) return invalid_argument(in.context() + ": no error flag");
    const cl::Buffer& error = *in.error_flag();
    if (op == "GatherElements") {
      return enqueue_gather_elements(ops, queue, in.dtype(0), *x, in.shape(0), *idx, in.shape(1),
                                     node.attr_int("axis", 0), error, *y, wait);
    }
    if (op == "GatherND") {
      return enqueue_gather_nd(ops, queue, in.dtype(0), *x, in.shape(0), *idx, in.shape(1),
                               node.attr_int("batch_dims", 0), error, *y, in.output_shape(), wait);
    }
    HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* updates, in.buffer(2));
    const std::string name = node.attr_string("reduction", "none");
    const ScatterReduction reduction = name == "add"   ? ScatterReduction::kAdd
                                       : name == "mul" ? ScatterReduction::kMul
                                       : name == "max" ? ScatterReduction::kMax
                                       : name == "min" ? ScatterReduction::kMin
                                                       : ScatterReduction::kNone;
    if (op == "ScatterND") {
      return enqueue_scatter_nd(ops, queue, in.dtype(0), *x, in.shape(0), *idx, in.shape(1),
                                *updates, reduction, error, *y, wait);
    }
    return enqueue_scatter_elements(ops, queue, in.dtype(0), *x, in.shape(0), *idx, in.shape(1),
                                    *updates, node.attr_int("axis", 0), reduction, error, *y, wait);
  }();
}

// ConstantOfShape, Range, EyeLike, OneHot, ReverseSequence, LRN (check_generator); nullopt for
// other ops. The host values are checked against the output's shape first.
std::optional<Result<cl::Event>> enqueue_generator(const OpKernels& ops, cl::CommandQueue& queue,
                                                   const Node& node, const Operands& in,
                                                   const Events& wait) {
  const std::string& op = node.op_type;
  static const std::set<std::string> kOps = {"ConstantOfShape", "Range",           "EyeLike",
                                             "OneHot",          "ReverseSequence", "LRN"};
  if (!kOps.count(op)) return std::nullopt;
  return [&]() -> Result<cl::Event> {
    HSCHED_ASSIGN_OR_RETURN(cl::Buffer * y, in.output());
    const Shape& out = in.output_shape();
    const int64_t count = detail::element_count(out);
    const auto mismatch = [&](const std::string& what) {
      return invalid_argument(in.context() + ": " + what + " does not give the output's shape " +
                              hsched::Shape(out).to_string());
    };
    if (op == "ConstantOfShape") {
      const Tensor* shape = in.constant(0);
      if (shape == nullptr) return invalid_argument(in.context() + ": no shape");
      HSCHED_ASSIGN_OR_RETURN(std::vector<int64_t> dims, node_detail::int_values(*shape));
      if (dims != out) return mismatch("the shape");
      HSCHED_ASSIGN_OR_RETURN(auto value, node_detail::constant_of_shape_value(node));
      return enqueue_fill_value(ops, queue, value.first, value.second, *y, count, wait);
    }
    if (op == "Range") {
      PadFill bounds[3];
      for (size_t i = 0; i < 3; ++i) {
        if (in.constant(i) == nullptr) return invalid_argument(in.context() + ": no bounds");
        HSCHED_ASSIGN_OR_RETURN(bounds[i], node_detail::scalar_fill(*in.constant(i)));
      }
      const bool integers = integer_dtype(in.dtype(0));
      const double span = integers ? static_cast<double>(bounds[1].integer - bounds[0].integer)
                                   : bounds[1].real - bounds[0].real;
      const double step = integers ? static_cast<double>(bounds[2].integer) : bounds[2].real;
      const double n = step == 0 ? -1 : std::max(std::ceil(span / step), 0.0);
      if (n != static_cast<double>(count)) return mismatch("start, limit and delta");
      return enqueue_range(ops, queue, in.dtype(0), bounds[0], bounds[2], *y, count, wait);
    }
    if (op == "EyeLike") {
      const DType dtype = node.has_attr("dtype")
                              ? dtype_from_onnx(static_cast<int32_t>(node.attr_int("dtype", 1)))
                                    .value_or(DType::kUndefined)
                              : in.dtype(0);
      return enqueue_eye(ops, queue, dtype, out.at(1), node.attr_int("k", 0), *y, count, wait);
    }
    if (op == "LRN") {
      HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* x, in.buffer(0));
      return enqueue_lrn(ops, queue, *x, in.shape(0), node.attr_int("size", 1),
                         node.attr_float("alpha", 1e-4f), node.attr_float("beta", 0.75f),
                         node.attr_float("bias", 1.0f), *y, wait);
    }
    HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* x, in.buffer(0));
    if (op == "ReverseSequence") {
      HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* lens, in.buffer(1));
      if (in.error_flag() == nullptr) return invalid_argument(in.context() + ": no error flag");
      return enqueue_reverse_sequence(ops, queue, in.dtype(0), *x, in.shape(0), *lens,
                                      node.attr_int("batch_axis", 1), node.attr_int("time_axis", 0),
                                      *in.error_flag(), *y, wait);
    }
    // OneHot: depth on the host (a float depth truncates, as ONNX says).
    if (in.constant(1) == nullptr) return invalid_argument(in.context() + ": no depth");
    HSCHED_ASSIGN_OR_RETURN(PadFill depth, node_detail::scalar_fill(*in.constant(1)));
    const int64_t d = integer_dtype(in.dtype(1)) ? depth.integer : static_cast<int64_t>(depth.real);
    const auto rank = static_cast<int64_t>(out.size());
    int64_t axis = node.attr_int("axis", -1);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank || out[static_cast<size_t>(axis)] != d) return mismatch("depth");
    int64_t outer = 1, inner = 1;
    for (int64_t a = 0; a < axis; ++a) outer *= out[static_cast<size_t>(a)];
    for (int64_t a = axis + 1; a < rank; ++a) inner *= out[static_cast<size_t>(a)];
    HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* values, in.buffer(2));
    return enqueue_one_hot(ops, queue, in.dtype(2), *x, *values, outer, d, inner, *y, wait);
  }();
}

// MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv (check_quant) and the program's
// kQdqChainOp; nullopt for other ops.
std::optional<Result<cl::Event>> enqueue_quant(const OpKernels& ops, cl::CommandQueue& queue,
                                               const Node& node, const Operands& in,
                                               const Events& wait) {
  const std::string& op = node.op_type;
  if (op == kQdqChainOp) {
    return [&]() -> Result<cl::Event> {
      HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* x, in.buffer(0));
      HSCHED_ASSIGN_OR_RETURN(cl::Buffer * y, in.output());
      HSCHED_ASSIGN_OR_RETURN(const auto chain, fused_chain(node, in));
      if (!chain || in.shape(0) != in.output_shape()) {
        return invalid_argument(in.context() + ": a quantized chain of another shape");
      }
      return enqueue_qdq_chain(ops, queue, *x, detail::element_count(in.shape(0)), *chain, *y,
                               wait);
    }();
  }
  const bool qlinear = op == "QLinearMatMul" || op == "QLinearConv";
  const bool conv = op == "ConvInteger" || op == "QLinearConv";
  if (!qlinear && !conv && op != "MatMulInteger") return std::nullopt;
  return [&]() -> Result<cl::Event> {
    const auto operand = [&](size_t i) {
      const cl::Buffer* buffer = in.optional_buffer(i);
      return QuantOperand{buffer, buffer != nullptr ? detail::element_count(in.shape(i)) : 0};
    };
    const size_t a = 0, b = qlinear ? 3 : 1, za = 2, zb = qlinear ? 5 : 3;
    HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* x, in.buffer(a));
    HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* w, in.buffer(b));
    HSCHED_ASSIGN_OR_RETURN(cl::Buffer * y, in.output());
    std::optional<Requantize> requantize;
    if (qlinear) {
      HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* y_scale, in.buffer(6));
      const bool i8 = in.dtype(7) == DType::kI8 || (!in.has(7) && in.dtype(a) == DType::kI8);
      requantize =
          Requantize{operand(1), operand(4), y_scale, operand(7), i8 ? -128 : 0, i8 ? 127 : 255};
    }
    const Requantize* rq = requantize ? &*requantize : nullptr;
    if (!conv) {
      return enqueue_quant_matmul(ops, queue, *x, in.shape(a), *w, in.shape(b), operand(za),
                                  operand(zb), rq, *y, in.output_shape(), wait);
    }
    HSCHED_ASSIGN_OR_RETURN(Window window,
                            window_of(node, in.shape(a), in.output_shape(), &in.shape(b), false));
    return enqueue_quant_conv(ops, queue, *x, in.shape(a), *w, in.shape(b), window,
                              node.attr_int("group", 1), operand(za), operand(zb),
                              qlinear ? operand(8) : QuantOperand{}, rq, *y, in.output_shape(),
                              wait);
  }();
}

}  // namespace hsched::opencl::node_detail
