// enqueue_node: one graph node onto the op layer (ops.h, ops_spatial.h, ops_integer.h...); the
// families of node_ops_enqueue_families.cpp and the products of node_ops_enqueue_products.cpp
// dispatched to. See node_ops.h.
#include <cfloat>
#include <numeric>

#include "backends/opencl/kernels/node_ops.h"
#include "backends/opencl/kernels/node_ops_operands.h"
#include "backends/opencl/kernels/node_ops_util.h"
#include "backends/opencl/kernels/ops_index.h"
#include "backends/opencl/kernels/ops_integer.h"
#include "backends/opencl/kernels/ops_quant.h"
#include "backends/opencl/kernels/ops_util.h"

namespace hsched::opencl {
namespace node_detail {

std::optional<Activation> fused_activation(const Node& node, bool inner) {
  const char* const op = inner ? kInnerActivationAttrs[0] : kFusedActivationAttr;
  if (!node.has_attr(op)) return std::nullopt;
  return Activation{
      .op = static_cast<UnaryOp>(node.attr_int(op, 0)),
      .alpha = node.attr_float(inner ? kInnerActivationAttrs[1] : kFusedAlphaAttr, 0.0f),
      .beta = node.attr_float(inner ? kInnerActivationAttrs[2] : kFusedBetaAttr, 0.0f)};
}

Result<const std::vector<float>*> fused_params(const Node& node, const char* attr, size_t count,
                                               const Operands& in) {
  const auto it = node.attributes.find(attr);
  if (it == node.attributes.end()) return static_cast<const std::vector<float>*>(nullptr);
  const auto* params = std::get_if<std::vector<float>>(&it->second);
  if (params == nullptr || params->size() != count) {
    return invalid_argument(in.context() + ": bad quantization parameters");
  }
  return params;
}

Result<std::optional<QdqChain>> fused_chain(const Node& node, const Operands& in,
                                            const char* attr) {
  const auto it = node.attributes.find(attr);
  if (it == node.attributes.end()) return std::optional<QdqChain>{};
  const auto* p = std::get_if<std::vector<float>>(&it->second);
  const auto bad = [&] { return invalid_argument(in.context() + ": bad quantized chain"); };
  if (p == nullptr || p->size() < 16 || p->size() % 8 != 0 || (*p)[6] != (p->size() - 8) / 8 ||
      (p->size() - 8) / 8 > kQdqChainOps) {
    return bad();
  }
  // (A MatMul operand's chain: x's lowest integer in `unused`.)
  QdqChain chain{(*p)[0], (*p)[1], (*p)[2], (*p)[3], (*p)[4], (*p)[5], (*p)[6], (*p)[7], {}};
  if ((chain.unused != 0.0f && chain.unused != -128.0f) ||
      !requantizes(
          QdqRow{chain.x_scale, chain.x_zero, chain.y_scale, chain.y_zero, chain.lo, chain.hi})) {
    return bad();
  }
  const auto operand = [](float f) { return f == 0.0f || f == 1.0f || f == 2.0f; };
  for (size_t i = 0; i * 8 + 8 < p->size(); ++i) {
    float* op = chain.ops[i];
    std::copy_n(p->begin() + static_cast<std::ptrdiff_t>(8 * i + 8), 8, op);
    const bool ok =
        op[0] == 0.0f
            ? op[1] >= 0.0f && op[1] <= static_cast<float>(UnaryOp::kNanTo) && operand(op[2])
        : op[0] == 1.0f ? op[1] >= 0.0f && op[1] <= static_cast<float>(BinaryOp::kDiv) &&
                              operand(op[2]) && operand(op[3])
                        : op[0] == 2.0f && op[2] == 0.0f && op[4] > 0.0f;
    if (!ok) return bad();
  }
  return std::optional{chain};
}

Result<std::optional<QdqRow>> fused_row_quantization(const Node& node, const Operands& in,
                                                     const char* attr) {
  HSCHED_ASSIGN_OR_RETURN(const auto p, fused_params(node, attr, 6, in));
  if (!p) return std::optional<QdqRow>{};
  return std::optional{QdqRow{(*p)[0], (*p)[1], (*p)[2], (*p)[3], (*p)[4], (*p)[5]}};
}

}  // namespace node_detail
namespace {

using node_detail::fused_activation;
using node_detail::fused_params;
using node_detail::fused_row_quantization;
using node_detail::Operands;

int64_t product(const Shape& shape, size_t begin, size_t end) {
  int64_t count = 1;
  for (size_t i = begin; i < end && i < shape.size(); ++i) count *= shape[i];
  return count;
}

// Host inputs given per run (node_ops.h) are checked against the static shapes the program was
// planned for: a value that disagrees is an error of the run, never a write out of bounds.
Status check_reduced_shape(const Operands& in, bool keepdims, const std::vector<bool>& mask) {
  const Shape& x = in.shape(0);
  Shape expected;
  for (size_t d = 0; d < x.size(); ++d) {
    if (mask[d] && x[d] == 0)
      return invalid_argument(in.context() + ": reduction of an empty axis");
    if (!mask[d] || keepdims) expected.push_back(mask[d] ? 1 : x[d]);
  }
  if (expected != in.output_shape()) {
    return invalid_argument(in.context() + ": the axes give shape " +
                            hsched::Shape(expected).to_string() + ", the output is " +
                            hsched::Shape(in.output_shape()).to_string());
  }
  return Status::ok();
}

Status check_split_sizes(const Operands& in, int64_t axis) {
  const Tensor* sizes = in.constant(1);
  if (sizes == nullptr) return Status::ok();  // even parts: the outputs' shapes
  HSCHED_ASSIGN_OR_RETURN(std::vector<int64_t> parts, node_detail::int_values(*sizes));
  const auto rank = static_cast<int64_t>(in.shape(0).size());
  if (axis < -rank || axis >= rank) return invalid_argument(in.context() + ": axis out of range");
  const auto a = static_cast<size_t>(axis < 0 ? axis + rank : axis);
  bool same = parts.size() == in.output_shapes().size();
  for (size_t i = 0; same && i < parts.size(); ++i) {
    same = in.output_shapes()[i].size() > a && in.output_shapes()[i][a] == parts[i];
  }
  if (!same) return invalid_argument(in.context() + ": split sizes differ from the outputs'");
  return Status::ok();
}

Status check_gather_count(const Operands& in, int64_t indices) {
  const Shape& x = in.shape(0);
  const auto rank = static_cast<int64_t>(x.size());
  int64_t axis = in.node().attr_int("axis", 0);
  if (axis < -rank || axis >= rank) return invalid_argument(in.context() + ": axis out of range");
  if (axis < 0) axis += rank;
  int64_t expected = indices;
  for (size_t d = 0; d < x.size(); ++d) expected *= d == static_cast<size_t>(axis) ? 1 : x[d];
  if (expected != detail::element_count(in.output_shape())) {
    return invalid_argument(in.context() + ": " + std::to_string(indices) +
                            " indices do not give the output's shape " +
                            hsched::Shape(in.output_shape()).to_string());
  }
  return Status::ok();
}

// Views (and Identity): the output holds the input's bytes.
Result<cl::Event> enqueue_view(const OpKernels& ops, cl::CommandQueue& queue, const Operands& in,
                               const Events& wait) {
  HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* x, in.buffer(0));
  HSCHED_ASSIGN_OR_RETURN(cl::Buffer * y, in.output());
  const auto bytes = static_cast<size_t>(detail::element_count(in.output_shape())) *
                     held_bytes(ops.storage(), in.dtype(0));
  cl::Event event;
  if (bytes == 0 || (*x)() == (*y)()) {  // aliased by the program: nothing to copy
    HSCHED_RETURN_IF_ERROR(
        detail::check_cl(queue.enqueueMarkerWithWaitList(&wait, &event), "marker for view"));
    return event;
  }
  detail::not_replayable();
  HSCHED_RETURN_IF_ERROR(detail::check_cl(
      queue.enqueueCopyBuffer(*x, *y, 0, 0, bytes, &wait, &event), "copy for view"));
  return event;
}

Result<cl::Event> enqueue_softmax_node(const OpKernels& ops, cl::CommandQueue& queue,
                                       const Node& node, const Operands& in, const Events& wait) {
  HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* x, in.buffer(0));
  HSCHED_ASSIGN_OR_RETURN(cl::Buffer * y, in.output());
  const Shape& shape = in.shape(0);
  const SoftmaxKind kind = node.op_type == "LogSoftmax" ? SoftmaxKind::kLogSoftmax
                           : node.op_type == "Hardmax"  ? SoftmaxKind::kHardmax
                                                        : SoftmaxKind::kSoftmax;
  std::optional<float> nan_to;  // a NaN guard fused in (softmax_nan_guard)
  if (node.has_attr(kNanToAttr)) nan_to = node.attr_float(kNanToAttr, 0.0f);
  HSCHED_ASSIGN_OR_RETURN(const auto quantized, fused_row_quantization(node, in));
  const int64_t size = shape.empty() ? 0 : shape.back();
  if (quantized && node.has_attr(kQLinearSoftmaxAttr) && size > 0 &&
      (ops.ordered_sums() || !softmax_by_rows(size, 1, kind))) {
    // ONNX Runtime's QLinearSoftmax (one 8-bit type, the last axis: the fusion saw to it).
    QdqRow q = *quantized;
    q.y_scale = node.attr_float(kQLinearSoftmaxAttr, 0.0f);
    return enqueue_qlinear_softmax(ops, queue, *x, detail::element_count(shape) / size, size,
                                   q.x_scale, q, *y, wait);
  }
  if (in.opset() == 0 || in.opset() >= 13) {
    return enqueue_softmax(ops, queue, *x, shape, node.attr_int("axis", -1), kind, *y, wait, nan_to,
                           quantized);
  }
  // Before opset 13: the input flattened to 2-D at `axis` (default 1), softmax over the rows.
  const auto rank = static_cast<int64_t>(shape.size());
  int64_t axis = node.attr_int("axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) return invalid_argument(in.context() + ": axis out of range");
  const auto a = static_cast<size_t>(axis);
  const Shape flat = {product(shape, 0, a), product(shape, a, shape.size())};
  return enqueue_softmax(ops, queue, *x, flat, 1, kind, *y, wait, nan_to, quantized);
}

// Sum, Mean, and Max/Min of other than two inputs: the first two inputs combined into y (which
// has their broadcast shape, check_node saw to it), then each further input into y in place
// (elementwise: each work item reads and writes only its own element of y); Mean scales last.
Result<cl::Event> enqueue_variadic(const OpKernels& ops, cl::CommandQueue& queue, const Node& node,
                                   const Operands& in, const Events& wait) {
  HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* x, in.buffer(0));
  HSCHED_ASSIGN_OR_RETURN(cl::Buffer * y, in.output());
  const std::string& op = node.op_type;
  const int64_t count = detail::element_count(in.output_shape());
  const size_t n = in.input_count();
  if (n == 1) {
    return enqueue_unary(ops, queue, UnaryOp::kScale, 1.0f, 0.0f, *x, *y, count, wait);
  }
  const BinaryOp combine = op == "Max"   ? BinaryOp::kMax
                           : op == "Min" ? BinaryOp::kMin
                                         : BinaryOp::kAdd;
  HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* second, in.buffer(1));
  HSCHED_ASSIGN_OR_RETURN(cl::Event event, enqueue_binary(ops, queue, combine, *x, in.shape(0),
                                                          *second, in.shape(1), *y, wait));
  for (size_t i = 2; i < n; ++i) {
    HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* next, in.buffer(i));
    HSCHED_ASSIGN_OR_RETURN(event, enqueue_binary(ops, queue, combine, *y, in.output_shape(), *next,
                                                  in.shape(i), *y, {event}));
  }
  if (op != "Mean") return event;
  return enqueue_unary(ops, queue, UnaryOp::kScale, 1.0f / static_cast<float>(n), 0.0f, *y, *y,
                       count, {event});
}

Result<cl::Event> enqueue_resize_node(const OpKernels& ops, cl::CommandQueue& queue,
                                      const Node& node, const Operands& in, const Events& wait) {
  HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* x, in.buffer(0));
  HSCHED_ASSIGN_OR_RETURN(cl::Buffer * y, in.output());
  HSCHED_ASSIGN_OR_RETURN(ResizeMode mode,
                          node_detail::resize_mode_of(
                              node, in.constant(node.op_type == "Upsample" ? 1 : 2), in.shape(0)));
  if (mode.cubic) {
    HSCHED_ASSIGN_OR_RETURN(std::vector<CubicPass> passes,
                            resize_cubic_plan(mode, in.shape(0), in.output_shape()));
    return enqueue_resize_cubic(ops, queue, *x, in.shape(0), passes, *y, in.output_shape(), wait);
  }
  HSCHED_ASSIGN_OR_RETURN(ResizeTables tables, resize_plan(mode, in.shape(0), in.output_shape()));
  return enqueue_resize(ops, queue, *x, in.shape(0), tables, *y, in.output_shape(), wait);
}

Result<cl::Event> enqueue_any(const OpKernels& ops, cl::CommandQueue& queue, const Node& node,
                              const Operands& in, const Events& wait) {
  const std::string& op = node.op_type;
  if (is_view_op(op)) return enqueue_view(ops, queue, in, wait);
  HSCHED_ASSIGN_OR_RETURN(const auto qdq_unary, fused_params(node, kQdqUnaryAttr, 6, in));
  if (qdq_unary) {  // the program's DequantizeLinear -> activation -> Q fusion (8-bit x and y)
    HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* x, in.buffer(0));
    HSCHED_ASSIGN_OR_RETURN(cl::Buffer * y, in.output());
    HSCHED_ASSIGN_OR_RETURN(Activation act, node_detail::unary_of(node, {}));
    const std::vector<float>& p = *qdq_unary;
    return enqueue_unary(ops, queue, act.op, act.alpha, act.beta, *x, *y,
                         detail::element_count(in.shape(0)), wait,
                         QdqRow{p[0], p[1], p[2], p[3], p[4], p[5]});
  }
  if (auto product = node_detail::enqueue_product(ops, queue, node, in, wait)) return *product;
  if (op == "Softmax" || op == "LogSoftmax" || op == "Hardmax") {
    return enqueue_softmax_node(ops, queue, node, in, wait);
  }
  if (op == "Resize" || op == "Upsample") return enqueue_resize_node(ops, queue, node, in, wait);
  if (auto generated = node_detail::enqueue_generator(ops, queue, node, in, wait))
    return *generated;
  if (auto quantized = node_detail::enqueue_quant(ops, queue, node, in, wait)) return *quantized;
  if (op == "Concat") {
    // With kConcatChannelsAttr, the inputs Convs wrote in place are kNoValue: no copy, their
    // channels from the attribute.
    const std::vector<int64_t> channels = node.attr_ints(kConcatChannelsAttr);
    if (!channels.empty() &&
        (channels.size() != in.input_count() || in.output_shape().size() < 2)) {
      return invalid_argument(in.context() + ": bad in-place inputs");
    }
    // With kConcatReadFromAttr, {channels, first, count} per input: Slices read in place.
    const std::vector<int64_t> read_from = node.attr_ints(kConcatReadFromAttr);
    if (!read_from.empty() && read_from.size() != 3 * in.input_count()) {
      return invalid_argument(in.context() + ": bad input slices");
    }
    std::vector<const cl::Buffer*> buffers;
    std::vector<Shape> shapes;
    std::vector<std::pair<int64_t, int64_t>> sources(read_from.empty() ? 0 : in.input_count());
    for (size_t i = 0; i < in.input_count(); ++i) {
      if (!channels.empty() && in.optional_buffer(i) == nullptr) {
        buffers.push_back(nullptr);
        shapes.push_back(in.output_shape());
        shapes.back()[1] = channels[i];
        continue;
      }
      HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* buffer, in.buffer(i));
      buffers.push_back(buffer);
      shapes.push_back(in.shape(i));
      if (read_from.empty()) continue;
      const int64_t extent = read_from[3 * i], count = read_from[3 * i + 2];
      if (extent == 0) continue;
      if (shapes.back().size() < 2 || shapes.back()[1] != extent) {
        return invalid_argument(in.context() + ": bad input slice");
      }
      sources[i] = {extent, read_from[3 * i + 1]};
      shapes.back()[1] = count;
    }
    // With kQdqConcatAttr, each input's DequantizeLinear and the QuantizeLinear fused in.
    HSCHED_ASSIGN_OR_RETURN(const auto qdq,
                            fused_params(node, kQdqConcatAttr, 2 * in.input_count() + 4, in));
    std::vector<QdqRow> quantized;
    for (size_t i = 0; qdq && i < in.input_count(); ++i) {
      const std::vector<float>& p = *qdq;
      const size_t y = 2 * in.input_count();
      quantized.push_back(QdqRow{p[2 * i], p[2 * i + 1], p[y], p[y + 1], p[y + 2], p[y + 3]});
    }
    HSCHED_ASSIGN_OR_RETURN(cl::Buffer * out, in.output());
    return enqueue_concat(ops, queue, buffers, shapes, node.attr_int("axis", 0), *out, wait,
                          sources, node.attr_int(kConcatShuffleAttr, 1), quantized);
  }
  HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* x, in.buffer(0));
  HSCHED_ASSIGN_OR_RETURN(cl::Buffer * y, in.output());
  const Shape& shape = in.shape(0);
  if (node_detail::is_variadic(node)) {
    return enqueue_variadic(ops, queue, node, in, wait);
  }
  if (op == "DynamicQuantizeLinear") {
    if (in.outputs().size() < 3 || !in.outputs()[1] || !in.outputs()[2]) {
      return invalid_argument(in.context() + ": needs its three outputs");
    }
    return enqueue_dynamic_quantize(ops, queue, *x, detail::element_count(shape), *y,
                                    *in.outputs()[1], *in.outputs()[2], wait);
  }
  if (op == "Det") return enqueue_det(ops, queue, *x, shape, *y, wait);
  if (op == "STFT") {
    const cl::Buffer* window = in.optional_buffer(2);
    HSCHED_ASSIGN_OR_RETURN(
        node_detail::StftOf stft,
        node_detail::stft_of(node, in.constant(1), window != nullptr ? &in.shape(2) : nullptr,
                             in.constant(3), shape, in.output_shape()));
    return enqueue_stft(ops, queue, *x, shape, window, stft.step, stft.n, stft.bins, *y, wait);
  }
  if (op == "DFT") {
    HSCHED_ASSIGN_OR_RETURN(
        node_detail::DftOf dft,
        node_detail::dft_of(node, in.opset(), in.constant(1), shape, in.output_shape()));
    return enqueue_dft(ops, queue, *x, shape, dft.axis, dft.n, dft.bins, dft.inverse, *y, wait);
  }
  if (op == "GridSample") {
    HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* grid, in.buffer(1));
    const auto mode = node_detail::grid_sample_mode(node);
    if (!mode) return invalid_argument(in.context() + ": mode or padding_mode not supported");
    return enqueue_grid_sample(ops, queue, *x, shape, *grid, in.shape(1), mode->first, mode->second,
                               node.attr_int("align_corners", 0) != 0, *y, wait);
  }
  HSCHED_ASSIGN_OR_RETURN(const auto qdq, fused_params(node, kQdqBinaryAttr, 8, in));
  if (qdq) {  // the program's DequantizeLinear -> op -> Q fusion
    HSCHED_ASSIGN_OR_RETURN(BinaryOp binary, binary_op_from_onnx(op));
    HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* b, in.buffer(1));
    const std::vector<float>& p = *qdq;
    const QdqBinary q{p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]};
    // Both operands and y 8-bit of one type: ONNX Runtime's QLinearAdd / QLinearMul, as the CPU.
    const bool same_type = in.dtype(0) == in.dtype(1) &&
                           (in.dtype(0) == DType::kU8
                                ? q.lo == 0.0f && q.hi == 255.0f
                                : in.dtype(0) == DType::kI8 && q.lo == -128.0f && q.hi == 127.0f);
    if ((op == "Add" || op == "Mul") && q.a_scale > 0 && q.b_scale > 0 && q.y_scale > 0 &&
        same_type) {
      return enqueue_qlinear_binary(ops, queue, op == "Add", *x, shape, *b, in.shape(1), q, *y,
                                    wait);
    }
    return enqueue_qdq_binary(ops, queue, binary, *x, shape, *b, in.shape(1), q, *y, wait);
  }
  // Max and Min of 8-bit data take the float kernels: choosing a value is exact on them.
  const bool bytes =
      (in.dtype(0) == DType::kU8 || in.dtype(0) == DType::kI8) && op != "Max" && op != "Min";
  if (auto binary = binary_op_from_onnx(op); bytes && (binary.is_ok() || op == "BitShift")) {
    // Integer arithmetic on 8-bit data (check_node): wrapping, as the CPU's.
    HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* b, in.buffer(1));
    const bool left = node.attr_string("direction", "") == "LEFT";
    const BinaryOp code =
        op == "BitShift" ? (left ? BinaryOp::kShiftLeft : BinaryOp::kShiftRight) : *binary;
    return enqueue_byte_binary(ops, queue, code, in.dtype(0), *x, shape, *b, in.shape(1),
                               node.attr_int("fmod", 0) != 0, in.error_flag(), *y, wait);
  }
  if (op == "BitShift") {  // unsigned integers (check_node)
    HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* b, in.buffer(1));
    const bool left = node.attr_string("direction", "") == "LEFT";
    return enqueue_int_binary(ops, queue, left ? BinaryOp::kShiftLeft : BinaryOp::kShiftRight,
                              in.dtype(0), *x, shape, *b, in.shape(1), false, nullptr, *y, wait);
  }
  if (op == "Pow" && in.dtype(0) == DType::kF32 && integer_dtype(in.dtype(1))) {
    HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* b, in.buffer(1));
    return enqueue_pow_exponent(ops, queue, *x, shape, *b, in.dtype(1), in.shape(1), *y, wait);
  }
  if (auto binary = binary_op_from_onnx(op); binary.is_ok() && in.dtype(0) == DType::kF16) {
    HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* b, in.buffer(1));
    return enqueue_half_binary(ops, queue, *binary, *x, shape, *b, in.shape(1), *y, wait);
  }
  if (auto binary = binary_op_from_onnx(op); binary.is_ok() && integer_dtype(in.dtype(0))) {
    HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* b, in.buffer(1));
    return enqueue_int_binary(ops, queue, *binary, in.dtype(0), *x, shape, *b, in.shape(1),
                              node.attr_int("fmod", 0) != 0, in.error_flag(), *y, wait);
  }
  if (auto binary = binary_op_from_onnx(op); binary.is_ok()) {
    HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* b, in.buffer(1));
    return enqueue_binary(ops, queue, *binary, *x, shape, *b, in.shape(1), *y, wait);
  }
  if (op == "QuantizeLinear" || op == "DequantizeLinear") {
    const bool has_zero = in.optional_buffer(2) != nullptr;
    const DType packed = has_zero ? in.dtype(2) : op == "QuantizeLinear" ? DType::kU8 : in.dtype(0);
    HSCHED_ASSIGN_OR_RETURN(
        const QuantizeParams params,
        node_detail::quantize_params(node, shape, in.shape(1), has_zero ? &in.shape(2) : nullptr,
                                     packed));
    HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* scale, in.buffer(1));
    return enqueue_quantize_linear(ops, queue, params, *x, *scale, in.optional_buffer(2), *y,
                                   detail::element_count(shape), wait);
  }
  if (op == "Cast" || op == "CastLike") {  // among float, bool, int32, int64, float16
    const DType from = in.dtype(0);
    const DType to = op == "CastLike"
                         ? in.dtype(1)
                         : dtype_from_onnx(static_cast<int32_t>(node.attr_int("to", 0)))
                               .value_or(DType::kUndefined);
    const bool to_byte = to == DType::kU8 || to == DType::kI8;
    if (held_as_is(from) || held_as_is(to) || (to_byte && from != to)) {
      if (from == to) return enqueue_view(ops, queue, in, wait);
      return enqueue_cast(ops, queue, from, to, *x, *y, detail::element_count(shape), wait);
    }
    if (to != DType::kBool) return enqueue_view(ops, queue, in, wait);  // bools are 1 and 0
    return enqueue_unary(ops, queue, UnaryOp::kNonZero, 0, 0, *x, *y, detail::element_count(shape),
                         wait);
  }
  if (op == "Expand" && (in.dtype(0) == DType::kI32 || in.dtype(0) == DType::kI64)) {
    // Integers: the broadcast as an index map, x's shape with leading 1s to y's rank, every
    // output coordinate clamped to the input's (edge mapping from 0: 0 along a broadcast axis).
    const Shape& y_shape = in.output_shape();
    Shape x_full(y_shape.size() - std::min(y_shape.size(), shape.size()), 1);
    x_full.insert(x_full.end(), shape.begin(), shape.end());
    const PadMode mode = detail::element_count(x_full) == 0 ? PadMode::kConstant : PadMode::kEdge;
    return enqueue_index_map(ops, queue, in.dtype(0), *x, x_full,
                             std::vector<int64_t>(x_full.size(), 0), mode, {}, *y, y_shape, wait);
  }
  if (op == "Expand") return enqueue_expand(ops, queue, *x, shape, in.output_shape(), *y, wait);
  if (op == "Where") {
    HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* a, in.buffer(1));
    HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* b, in.buffer(2));
    if (integer_dtype(in.dtype(1))) {
      return enqueue_int_select(ops, queue, in.dtype(1), *x, shape, *a, in.shape(1), *b,
                                in.shape(2), *y, wait);
    }
    return enqueue_select(ops, queue, *x, shape, *a, in.shape(1), *b, in.shape(2), *y, wait);
  }
  if (op == kChannelLayerNormOp) {
    HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* scale, in.buffer(1));
    return enqueue_channel_layer_norm(ops, queue, *x, shape, *scale, in.optional_buffer(2),
                                      node.attr_float("epsilon", 1e-5f), *y, wait);
  }
  if (op == "LayerNormalization") {
    HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* scale, in.buffer(1));
    const auto output = [&](size_t i) {
      return i < in.outputs().size() ? in.outputs()[i] : nullptr;
    };
    HSCHED_ASSIGN_OR_RETURN(const auto quantized, fused_row_quantization(node, in));
    return enqueue_layer_norm_rows(ops, queue, *x, shape, node.attr_int("axis", -1), *scale,
                                   in.optional_buffer(2), node.attr_float("epsilon", 1e-5f), *y,
                                   output(1), output(2), wait, quantized);
  }
  if (op == "BatchNormalization") {
    std::vector<const cl::Buffer*> params;
    for (size_t i = 1; i <= 4; ++i) {
      HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* param, in.buffer(i));
      params.push_back(param);
    }
    return enqueue_batch_norm(ops, queue, *x, shape, *params[0], *params[1], *params[2], *params[3],
                              node.attr_float("epsilon", 1e-5f), *y, wait);
  }
  if (op == "InstanceNormalization") {
    HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* scale, in.buffer(1));
    HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* bias, in.buffer(2));
    // GroupNorm's per-channel affine map and activation, fused by the program.
    NormEpilogue epilogue{.gamma = in.optional_buffer(3),
                          .beta = in.optional_buffer(4),
                          .activation = fused_activation(node)};
    if (const std::vector<int64_t> post = node.attr_ints(kNormChannelsAttr); post.size() == 2) {
      epilogue.channels = post[0];
      epilogue.plane = post[1];
    }
    return enqueue_instance_norm(ops, queue, *x, shape, *scale, *bias,
                                 node.attr_float("epsilon", 1e-5f), *y, wait, epilogue);
  }
  if (const auto kind = reduce_kind(op)) {
    HSCHED_ASSIGN_OR_RETURN(std::vector<bool> mask,
                            node_detail::reduce_mask(node, in.constant(1), shape.size()));
    HSCHED_RETURN_IF_ERROR(check_reduced_shape(in, node.attr_int("keepdims", 1) != 0, mask));
    return enqueue_reduce(ops, queue, *kind, *x, shape, mask, *y, wait);
  }
  if (op == "GlobalMaxPool") {
    std::vector<bool> spatial(shape.size(), true);
    spatial[0] = spatial[1] = false;
    return enqueue_reduce(ops, queue, ReduceKind::kMax, *x, shape, spatial, *y, wait);
  }
  if (op == "Slice") {
    HSCHED_ASSIGN_OR_RETURN(
        std::vector<SliceAxis> axes,
        node_detail::slice_of(node, in.opset(), in.constants(1, 4), shape, in.output_shape()));
    return enqueue_slice(ops, queue, *x, shape, axes, *y, wait);
  }
  if (op == "ArgMax" || op == "ArgMin") {
    return enqueue_arg_reduce(ops, queue, *x, shape, node.attr_int("axis", 0), op == "ArgMax",
                              node.attr_int("select_last_index", 0) != 0, *y, wait);
  }
  if (auto gathered = node_detail::enqueue_gather_scatter(ops, queue, node, in, wait))
    return *gathered;
  if (op == "Pad" || op == "Tile") {
    HSCHED_ASSIGN_OR_RETURN(
        node_detail::IndexMapOf map,
        node_detail::index_map_of(node, in.opset(), in.constants(1, 3), shape, in.output_shape()));
    return enqueue_index_map(ops, queue, in.dtype(0), *x, shape, map.begin, map.mode, map.fill, *y,
                             in.output_shape(), wait);
  }
  if (op == "Dropout") {  // inference (check_node): y = x, the mask all true
    HSCHED_ASSIGN_OR_RETURN(cl::Event copied, enqueue_view(ops, queue, in, wait));
    if (in.outputs().size() < 2 || in.outputs()[1] == nullptr) return copied;
    return enqueue_fill(ops, queue, 1.0f, *in.outputs()[1],
                        detail::element_count(in.output_shapes()[1]), {copied});
  }
  if (op == "Trilu") {
    int64_t k = 0;
    if (const Tensor* given = in.constant(1)) {
      HSCHED_ASSIGN_OR_RETURN(std::vector<int64_t> values, node_detail::int_values(*given));
      if (values.size() != 1) return invalid_argument(in.context() + ": k is not a scalar");
      k = values[0];
    }
    const bool upper = node.attr_int("upper", 1) != 0;
    if (integer_dtype(in.dtype(0))) {
      return enqueue_int_trilu(ops, queue, in.dtype(0), *x, shape, k, upper, *y, wait);
    }
    return enqueue_trilu(ops, queue, *x, shape, k, upper, *y, wait);
  }
  if (op == "DepthToSpace" || op == "SpaceToDepth") {
    HSCHED_ASSIGN_OR_RETURN(node_detail::TransposeView view,
                            node_detail::depth_space_view(node, shape));
    return enqueue_transpose(ops, queue, *x, view.view, view.perm, *y, wait);
  }
  if (op == "GlobalAveragePool") {
    HSCHED_ASSIGN_OR_RETURN(const auto quantized, fused_row_quantization(node, in));
    return enqueue_global_average_pool(ops, queue, *x, shape, *y, wait, quantized);
  }
  if (op == "Transpose") {
    return enqueue_transpose(ops, queue, *x, shape, node.attr_ints("perm"), *y, wait);
  }
  if (op == "Split") {
    HSCHED_RETURN_IF_ERROR(check_split_sizes(in, node.attr_int("axis", 0)));
    return enqueue_split(ops, queue, *x, shape, node.attr_int("axis", 0), in.outputs(),
                         in.output_shapes(), wait);
  }
  if (op == "Gather") {
    const Tensor* indices = in.constant(1);
    if (indices == nullptr) {  // given per run: read on the device
      const int64_t count = detail::element_count(in.shape(1));
      HSCHED_RETURN_IF_ERROR(check_gather_count(in, count));
      HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* idx, in.buffer(1));
      if (in.error_flag() == nullptr) return invalid_argument(in.context() + ": no error flag");
      return enqueue_gather_by(ops, queue, *x, shape, node.attr_int("axis", 0), *idx, in.dtype(1),
                               count, *in.error_flag(), *y, wait);
    }
    HSCHED_RETURN_IF_ERROR(check_gather_count(in, indices->elements()));
    HSCHED_ASSIGN_OR_RETURN(std::vector<int64_t> rows, node_detail::int_values(*indices));
    return enqueue_gather(ops, queue, *x, shape, node.attr_int("axis", 0), rows, *y, wait);
  }
  // Clip with a bound computed at run time (a device scalar): the lower bound, then the upper
  // (min > max gives max everywhere, as ONNX says), each a broadcast max or min with a runtime
  // bound or a clip to a constant one.
  const auto runtime_bound = [&](size_t i) { return in.optional_buffer(i) && !in.constant(i); };
  if (op == "Clip" && (runtime_bound(1) || runtime_bound(2))) {
    HSCHED_ASSIGN_OR_RETURN(const auto constant,
                            node_detail::clip_bounds(node, in.constants(1, 2)));
    const int64_t count = detail::element_count(shape);
    const cl::Buffer* from = x;
    Events after = wait;
    cl::Event event;
    for (size_t i : {size_t{1}, size_t{2}}) {
      if (runtime_bound(i)) {
        const BinaryOp bound = i == 1 ? BinaryOp::kMax : BinaryOp::kMin;
        HSCHED_ASSIGN_OR_RETURN(
            event, enqueue_binary(ops, queue, bound, *from, shape, *in.optional_buffer(i),
                                  in.shape(i), *y, after));
      } else if (in.constant(i) == nullptr) {
        continue;  // omitted
      } else {
        const float low = i == 1 ? constant.first : -FLT_MAX;
        const float high = i == 2 ? constant.second : FLT_MAX;
        HSCHED_ASSIGN_OR_RETURN(
            event, enqueue_unary(ops, queue, UnaryOp::kClip, low, high, *from, *y, count, after));
      }
      from = y;
      after = {event};
    }
    return event;
  }
  // The elementwise activations.
  HSCHED_ASSIGN_OR_RETURN(Activation act, node_detail::unary_of(node, in.constants(1, 2)));
  return enqueue_unary(ops, queue, act.op, act.alpha, act.beta, *x, *y,
                       detail::element_count(shape), wait);
}

}  // namespace

Result<cl::Event> enqueue_node(const OpKernels& ops, cl::CommandQueue& queue, const Node& node,
                               const NodeOperands& operands, const Events& wait) {
  const Operands in(node, operands);
  auto event = enqueue_any(ops, queue, node, in, wait);
  if (!event.is_ok()) return event.status().with_context(in.context());
  return event;
}

}  // namespace hsched::opencl
