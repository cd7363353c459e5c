// enqueue_node for the products: Conv (paired too) and ConvTranspose, the pools, MatMul (grouped
// too), attention and Gemm, with what the program fused into them (activations, quantization). See
// node_ops_operands.h.
#include <array>

#include "backends/opencl/kernels/node_ops.h"
#include "backends/opencl/kernels/node_ops_operands.h"
#include "backends/opencl/kernels/node_ops_util.h"
#include "backends/opencl/kernels/ops_scratch.h"
#include "backends/opencl/kernels/ops_spatial.h"
#include "backends/opencl/kernels/ops_util.h"

namespace hsched::opencl::node_detail {
namespace {

// The program's Conv/MatMul -> QuantizeLinear fusion (attach_output_quantization), if any.
Result<std::optional<ConvParams::QuantizedOutput>> fused_quantization(const Node& node,
                                                                      const Operands& in) {
  if (!node.has_attr(kQuantizeOutputAttr)) return std::optional<ConvParams::QuantizedOutput>{};
  const std::vector<int64_t> q = node.attr_ints(kQuantizeOutputAttr);
  const float scale = node.attr_float(kQuantizeOutputScaleAttr, 0.0f);
  if (q.size() != 3 || !(scale > 0.0f)) {
    return invalid_argument(in.context() + ": bad output quantization");
  }
  return std::optional{
      ConvParams::QuantizedOutput{.scale = scale, .zero = q[0], .lo = q[1], .hi = q[2]}};
}

// The program's Conv -> Mul fusion (fusable_output_scale): the Conv's weights and bias times its
// factors per output channel, kept per queue (derived_constant); `host` the scaled weights.
struct ScaledWeights {
  std::vector<float> host;
  cl::Buffer w, bias;
};
Result<ScaledWeights> scaled_weights(const OpKernels& ops, cl::CommandQueue& queue,
                                     const Operands& in) {
  const Tensor* w = in.constant(1);
  const Tensor* factors = in.constant(kOutputScaleInput);
  const Tensor* bias = in.has(2) ? in.constant(2) : nullptr;
  const int64_t oc = in.shape(1).empty() ? 0 : in.shape(1)[0];
  const auto f32 = [](const Tensor* t) { return t != nullptr && t->dtype() == DType::kF32; };
  if (!f32(w) || !f32(factors) || (in.has(2) && !f32(bias)) || oc <= 0 ||
      factors->elements() != oc || w->elements() % oc != 0 || (bias && bias->elements() != oc)) {
    return invalid_argument(in.context() + ": per-channel factors need f32 constant weights");
  }
  const auto f = factors->values<float>();
  const auto bytes = [](const Tensor& t) {
    return std::string(reinterpret_cast<const char*>(t.raw()), t.byte_size());
  };
  ScaledWeights out;
  const auto weights = w->values<float>();
  out.host.assign(weights.begin(), weights.end());
  const size_t per_channel = out.host.size() / static_cast<size_t>(oc);
  for (size_t i = 0; i < out.host.size(); ++i) out.host[i] *= f[i / per_channel];
  HSCHED_ASSIGN_OR_RETURN(
      out.w, detail::derived_constant(ops, queue, "conv_scaled:" + bytes(*w) + bytes(*factors),
                                      [&] { return out.host; }));
  if (bias == nullptr) return out;
  HSCHED_ASSIGN_OR_RETURN(
      out.bias, detail::derived_constant(ops, queue,
                                         "conv_scaled_bias:" + bytes(*bias) + bytes(*factors), [&] {
                                           std::vector<float> b(bias->values<float>().begin(),
                                                                bias->values<float>().end());
                                           for (size_t c = 0; c < b.size(); ++c) b[c] *= f[c];
                                           return b;
                                         }));
  return out;
}

Result<cl::Event> enqueue_conv_node(const OpKernels& ops, cl::CommandQueue& queue, const Node& node,
                                    const Operands& in, const Events& wait) {
  HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* x, in.buffer(0));
  HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* w, in.buffer(1));
  HSCHED_ASSIGN_OR_RETURN(cl::Buffer * y, in.output());
  const bool transposed = node.op_type == "ConvTranspose";
  ConvParams params;
  const Shape& w_shape = in.shape(1);
  Shape y_shape = in.output_shape();
  if (node.has_attr(kConvStoredInAttr)) {  // the program's Conv -> Concat fusion
    const std::vector<int64_t> slice = node.attr_ints(kConvStoredInAttr);
    if ((slice.size() != 2 && slice.size() != 3) || transposed || y_shape.size() < 3 ||
        w_shape.empty()) {
      return invalid_argument(in.context() + ": bad output slice");
    }
    params.stored_in = std::make_pair(slice[0], slice[1]);
    if (slice.size() == 3) params.stored_step = slice[2];
    y_shape[1] = w_shape[0];  // its own output: the Concat's shape holds more channels
  }
  params.group = node.attr_int("group", 1);
  Shape x_shape = in.shape(0);
  if (node.has_attr(kConvReadFromAttr)) {  // the program's Slice -> Conv fusion
    const std::vector<int64_t> slice = node.attr_ints(kConvReadFromAttr);
    if (slice.size() != 2 || transposed || x_shape.size() < 3 || w_shape.size() < 2 ||
        slice[0] != x_shape[1]) {
      return invalid_argument(in.context() + ": bad input slice");
    }
    params.read_from = std::make_pair(slice[0], slice[1]);
    x_shape[1] = w_shape[1] * params.group;  // the channels it reads
  }
  HSCHED_ASSIGN_OR_RETURN(params.window, window_of(node, x_shape, y_shape, &w_shape, transposed));
  params.activation = fused_activation(node);
  params.algorithm = static_cast<ConvAlgorithm>(
      node.attr_int(kConvAlgorithmAttr, static_cast<int64_t>(ConvAlgorithm::kAuto)));
  const cl::Buffer* bias = in.optional_buffer(2);
  if (const Tensor* w_host = in.constant(1); w_host != nullptr && w_host->dtype() == DType::kF32 &&
                                             w_host->elements() == detail::element_count(w_shape)) {
    params.weights_on_host = w_host->values<float>().data();
  }
  ScaledWeights scaled;
  if (in.has(kOutputScaleInput)) {  // the program's Conv -> Mul fusion
    HSCHED_ASSIGN_OR_RETURN(scaled, scaled_weights(ops, queue, in));
    w = &scaled.w;
    if (bias != nullptr) bias = &scaled.bias;
    params.weights_on_host = scaled.host.data();
  }
  params.residual = in.optional_buffer(kResidualInput);
  params.input_scale = in.optional_buffer(kInputScaleInput);
  params.input_scale_per_batch =
      params.input_scale != nullptr && in.shape(kInputScaleInput).front() > 1;
  if (node.has_attr(kConvInputZeroAttr)) {  // the program's DequantizeLinear -> Conv fusion
    HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* scales, in.buffer(kWeightScaleInput));
    params.quantized = ConvParams::QuantizedOperands{
        .x_scale = node.attr_float(kConvInputScaleAttr, 0.0f),
        .x_zero = node.attr_int(kConvInputZeroAttr, 0),
        .weight_scale = scales,
        .weight_scales = detail::element_count(in.shape(kWeightScaleInput)),
        .integer_bias = node.attr_int(kConvIntegerBiasAttr, 0) != 0};
  }
  HSCHED_ASSIGN_OR_RETURN(params.quantize_output, fused_quantization(node, in));
  HSCHED_ASSIGN_OR_RETURN(const auto requantized,
                          fused_params(node, kConvRequantizedActivationAttr, 9, in));
  if (requantized) {  // the program's DequantizeLinear -> activation -> QuantizeLinear fusion
    const std::vector<float>& p = *requantized;
    params.requantized_activation = ConvParams::RequantizedActivation{
        .activation = Activation{.op = static_cast<UnaryOp>(p[0]), .alpha = p[1], .beta = p[2]},
        .qdq = QdqRow{p[3], p[4], p[5], p[6], p[7], p[8]}};
  }
  HSCHED_ASSIGN_OR_RETURN(const auto chain, fused_chain(node, in));
  if (chain) params.chain = *chain;       // the program's quantized chain after the Conv
  if (node.has_attr(kConvCarriesAttr)) {  // the program's Concat copy carried by the Conv
    const std::vector<int64_t> copy = node.attr_ints(kConvCarriesAttr);
    HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* carried, in.buffer(kCarriedInput));
    if (copy.size() != 8 || transposed || std::any_of(copy.begin(), copy.end(), [](int64_t v) {
          return v < 0 || v > std::numeric_limits<cl_int>::max();
        })) {
      return invalid_argument(in.context() + ": bad carried copy");
    }
    const auto at = [&](size_t i) { return static_cast<cl_int>(copy[i]); };
    params.carried =
        ConvParams::CarriedCopy{carried, detail::element_count(in.shape(kCarriedInput)),
                                RowCopy{at(0), at(1), at(2), at(3), at(4), at(5), at(6), at(7)}};
  }
  if (transposed) {
    return enqueue_conv_transpose(ops, queue, *x, in.shape(0), *w, w_shape, bias, params, *y,
                                  in.output_shape(), wait);
  }
  return enqueue_conv(ops, queue, *x, x_shape, *w, w_shape, bias, params, *y, y_shape, wait);
}

Result<cl::Event> enqueue_pool_node(const OpKernels& ops, cl::CommandQueue& queue, const Node& node,
                                    const Operands& in, const Events& wait) {
  HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* x, in.buffer(0));
  HSCHED_ASSIGN_OR_RETURN(cl::Buffer * y, in.output());
  HSCHED_ASSIGN_OR_RETURN(Window window,
                          window_of(node, in.shape(0), in.output_shape(), nullptr, false));
  const PoolKind kind = node.op_type == "MaxPool" ? PoolKind::kMax : PoolKind::kAverage;
  return enqueue_pool(ops, queue, kind, *x, in.shape(0), window,
                      node.attr_int("count_include_pad", 0) != 0, *y, in.output_shape(), wait,
                      in.outputs().size() > 1 ? in.outputs()[1] : nullptr,
                      node.attr_int("storage_order", 0));
}

Result<cl::Event> enqueue_matmul_node(const OpKernels& ops, cl::CommandQueue& queue,
                                      const Operands& in, const Events& wait) {
  HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* a, in.buffer(0));
  HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* b, in.buffer(1));
  HSCHED_ASSIGN_OR_RETURN(cl::Buffer * y, in.output());
  // 1-D operands as numpy promotes them: [K] -> [1, K] for A, [K, 1] for B; the dropped axis
  // leaves y's bytes as they are.
  Shape a_shape = in.shape(0), b_shape = in.shape(1);
  if (a_shape.size() == 1) a_shape.insert(a_shape.begin(), 1);
  if (b_shape.size() == 1) b_shape.push_back(1);
  // The program's fusions: operands read through views, a transposed result, a scalar factor, a
  // bias Add's row, a residual Add, an activation.
  // A residual of fewer elements than the result: one [M, N] for every batch.
  const bool residual_shared =
      in.optional_buffer(kResidualInput) != nullptr &&
      detail::element_count(in.shape(kResidualInput)) != detail::element_count(in.output_shape());
  std::optional<StridedView> views[2];
  for (size_t i = 0; i < 2; ++i) {
    const std::vector<int64_t> ints = in.node().attr_ints(kMatMulViewAttrs[i]);
    if (ints.empty()) continue;
    views[i] = decode_view(ints);
    if (!views[i]) return invalid_argument("a malformed operand view");
  }
  MatMulFusion fusion{.a_view = views[0],
                      .b_view = views[1],
                      .y_perm = in.node().attr_ints(kMatMulResultPermAttr),
                      .alpha = in.node().attr_float(kMatMulAlphaAttr, 1.0f),
                      .bias = in.optional_buffer(2),
                      .residual = in.optional_buffer(kResidualInput),
                      .residual_shared = residual_shared,
                      .activation = fused_activation(in.node())};
  HSCHED_ASSIGN_OR_RETURN(const auto q, fused_params(in.node(), kMatMulQuantizedAttr, 4, in));
  if (q) {  // the program's DequantizeLinear -> MatMul fusion
    fusion.alpha *= (*q)[0] * (*q)[2];
    fusion.a_zero = (*q)[1];
    fusion.b_zero = (*q)[3];
    fusion.b_scale = in.optional_buffer(kWeightScaleInput);
  }
  if (in.node().has_attr(kMatMulNormAttr)) {  // the program's LayerNormalization -> MatMul merge
    HSCHED_ASSIGN_OR_RETURN(fusion.norm_scale, in.buffer(kNormScaleInput));
    fusion.norm_bias = in.optional_buffer(kNormBiasInput);
    const int64_t k = a_shape.back();
    if (detail::element_count(in.shape(kNormScaleInput)) != k ||
        (fusion.norm_bias != nullptr && detail::element_count(in.shape(kNormBiasInput)) != k)) {
      return invalid_argument(in.context() + ": LayerNormalization scale or bias is not [K]");
    }
    fusion.norm_epsilon = in.node().attr_float(kMatMulNormAttr, 1e-5f);
    HSCHED_ASSIGN_OR_RETURN(const auto q,
                            fused_row_quantization(in.node(), in, kMatMulNormQdqAttr));
    if (q) fusion.norm_q = *q;
  }
  HSCHED_ASSIGN_OR_RETURN(const auto quantize, fused_quantization(in.node(), in));
  if (quantize) {
    fusion.y_scale = quantize->scale;
    fusion.y_zero = static_cast<float>(quantize->zero);
    fusion.y_lo = static_cast<float>(quantize->lo);
    fusion.y_hi = static_cast<float>(quantize->hi);
  }
  // The program's DequantizeLinear -> bias Add (a row) or residual Add -> QuantizeLinear fusions.
  const auto late_step = [&](const char* attr) -> Result<std::optional<LateBias>> {
    HSCHED_ASSIGN_OR_RETURN(const auto p, fused_params(in.node(), attr, 10, in));
    if (!p) return std::optional<LateBias>{};
    LateBias late{.q = QdqRow{(*p)[0], (*p)[1], (*p)[2], (*p)[3], (*p)[4], (*p)[5]},
                  .bias_scale = (*p)[6],
                  .bias_zero = (*p)[7]};
    if ((*p)[9] != 0.0f) {  // ONNX Runtime's QLinearAdd, in the graph's operand order
      const bool first = (*p)[8] == 0.0f;
      late.add.form = first ? 1 : 2;
      late.add.terms = first ? qlinear_add_terms(late.q.x_scale, late.q.x_zero, late.bias_scale,
                                           late.bias_zero, late.q.y_scale, late.q.y_zero)
                       : qlinear_add_terms(late.bias_scale, late.bias_zero, late.q.x_scale,
                                           late.q.x_zero, late.q.y_scale, late.q.y_zero);
    }
    return std::optional{late};
  };
  HSCHED_ASSIGN_OR_RETURN(fusion.late_bias, late_step(kMatMulLateBiasAttr));
  if (fusion.late_bias && (in.optional_buffer(2) == nullptr || in.output_shape().empty() ||
                           detail::element_count(in.shape(2)) != in.output_shape().back())) {
    return invalid_argument(in.context() + ": the bias after the quantization is not a row");
  }
  HSCHED_ASSIGN_OR_RETURN(fusion.late_residual, late_step(kMatMulLateResidualAttr));
  if (fusion.late_residual && fusion.residual == nullptr) {
    return invalid_argument(in.context() + ": a residual after the quantization needs one");
  }
  HSCHED_ASSIGN_OR_RETURN(const auto chain, fused_chain(in.node(), in));
  if (chain) fusion.chain = *chain;
  QdqChain* operand_chains[2] = {&fusion.a_chain, &fusion.b_chain};
  for (size_t i = 0; i < 2; ++i) {
    HSCHED_ASSIGN_OR_RETURN(const auto read_by,
                            fused_chain(in.node(), in, kMatMulOperandChainAttrs[i]));
    if (read_by) *operand_chains[i] = *read_by;
  }
  return enqueue_matmul(ops, queue, *a, a_shape, *b, b_shape, *y, wait, fusion);
}

Result<cl::Event> enqueue_matmul_group_node(const OpKernels& ops, cl::CommandQueue& queue,
                                            const Operands& in, const Events& wait) {
  const size_t products = in.outputs().size();
  if (products == 0 || in.input_count() != 1 + 2 * products) {
    return invalid_argument(in.context() + ": a MatMul group needs a B and bias per result");
  }
  HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* a, in.buffer(0));
  std::vector<GroupedProduct> group;
  for (size_t p = 0; p < products; ++p) {
    HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* b, in.buffer(1 + 2 * p));
    if (in.outputs()[p] == nullptr || in.shape(1 + 2 * p) != in.shape(1)) {
      return invalid_argument(in.context() + ": a MatMul group's products differ");
    }
    group.push_back({b, in.optional_buffer(2 + 2 * p), in.outputs()[p]});
  }
  MatMulFusion fusion{.alpha = in.node().attr_float(kMatMulAlphaAttr, 1.0f)};
  if (const std::vector<int64_t> ints = in.node().attr_ints(kMatMulViewAttrs[0]); !ints.empty()) {
    fusion.a_view = decode_view(ints);
    if (!fusion.a_view) return invalid_argument("a malformed operand view");
  }
  return enqueue_matmul_group(ops, queue, *a, in.shape(0), in.shape(1), group, wait, fusion);
}

Result<cl::Event> enqueue_attention_node(const OpKernels& ops, cl::CommandQueue& queue,
                                         const Operands& in, const Events& wait) {
  if (in.input_count() != 4) return invalid_argument(in.context() + ": attention takes 4 inputs");
  HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* q, in.buffer(0));
  HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* k, in.buffer(1));
  HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* v, in.buffer(2));
  HSCHED_ASSIGN_OR_RETURN(cl::Buffer * y, in.output());
  const Node& node = in.node();
  AttentionFusion fusion{.y_perm = node.attr_ints(kMatMulResultPermAttr),
                         .alpha = node.attr_float(kMatMulAlphaAttr, 1.0f),
                         .out_alpha = node.attr_float(kAttentionOutAlphaAttr, 1.0f),
                         .mask = in.optional_buffer(3)};
  if (fusion.mask != nullptr) fusion.mask_shape = in.shape(3);
  if (node.has_attr(kNanToAttr)) fusion.nan_to = node.attr_float(kNanToAttr, 0.0f);
  std::optional<StridedView>* views[3] = {&fusion.q_view, &fusion.k_view, &fusion.v_view};
  for (size_t i = 0; i < 3; ++i) {
    const std::vector<int64_t> ints = node.attr_ints(kAttentionViewAttrs[i]);
    if (ints.empty()) continue;
    *views[i] = decode_view(ints);
    if (!*views[i]) return invalid_argument("a malformed operand view");
  }
  return enqueue_attention(ops, queue, *q, in.shape(0), *k, in.shape(1), *v, in.shape(2), *y,
                           fusion, wait);
}

Result<cl::Event> enqueue_squeeze_excitation_node(const OpKernels& ops, cl::CommandQueue& queue,
                                                  const Operands& in, const Events& wait) {
  if (in.input_count() != 5) {
    return invalid_argument(in.context() + ": squeeze-and-excitation takes 5 inputs");
  }
  HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* m, in.buffer(0));
  HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* w1, in.buffer(1));
  HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* w2, in.buffer(3));
  HSCHED_ASSIGN_OR_RETURN(cl::Buffer * y, in.output());
  const Shape &x = in.shape(0), &s1 = in.shape(1), &s2 = in.shape(3);
  const auto is_1x1 = [](const Shape& w) { return w.size() == 4 && w[2] == 1 && w[3] == 1; };
  SqueezeExcitation se{.b1 = in.optional_buffer(2),
                       .b2 = in.optional_buffer(4),
                       .act1 = fused_activation(in.node(), true),
                       .act2 = fused_activation(in.node())};
  if (x.size() != 4 || !is_1x1(s1) || !is_1x1(s2) || x[1] != s1[1] || s2[1] != s1[0] || x[2] != 1 ||
      x[3] != 1 || (se.b1 != nullptr && detail::element_count(in.shape(2)) != s1[0]) ||
      (se.b2 != nullptr && detail::element_count(in.shape(4)) != s2[0]) ||
      detail::element_count(in.output_shape()) != x[0] * s2[0]) {
    return invalid_argument(in.context() + ": squeeze-and-excitation shapes do not match");
  }
  se.batch = x[0];
  se.channels = x[1];
  se.hidden = s1[0];
  se.out_channels = s2[0];
  return enqueue_squeeze_excitation(ops, queue, *m, *w1, *w2, se, *y, wait);
}

Result<cl::Event> enqueue_conv_pair_node(const OpKernels& ops, cl::CommandQueue& queue,
                                         const Node& node, const Operands& in, const Events& wait) {
  HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* x, in.buffer(0));
  HSCHED_ASSIGN_OR_RETURN(cl::Buffer * y, in.output());
  const std::vector<int64_t> first = node.attr_ints(kConvPairFirstAttr);
  const std::vector<int64_t> stored = node.attr_ints(kConvStoredInAttr);
  const Shape& x_shape = in.shape(0);
  if (first.size() != 9 || stored.size() != 2 || x_shape.size() != 4 ||
      in.output_shape().size() != 4 || in.input_count() != 5) {
    return invalid_argument(in.context() + ": bad Conv pair");
  }
  std::array<ConvPart, 2> parts;
  for (size_t i = 0; i < 2; ++i) {
    ConvPart& part = parts[i];
    HSCHED_ASSIGN_OR_RETURN(part.w, in.buffer(1 + 2 * i));
    part.w_shape = in.shape(1 + 2 * i);
    part.bias = in.optional_buffer(2 + 2 * i);
    if (part.w_shape.size() != 4) return invalid_argument(in.context() + ": bad Conv pair");
    part.y_shape = in.output_shape();
    part.y_shape[1] = part.w_shape[0];
    part.params.activation = fused_activation(node);
    part.params.stored_in = std::make_pair(stored[0], i == 0 ? first[8] : stored[1]);
  }
  Window& window = parts[0].params.window;
  window.kernel = {first[0], first[1]};
  window.strides = {first[2], first[3]};
  window.dilations = {first[4], first[5]};
  window.pads_begin = {first[6], first[7]};
  HSCHED_ASSIGN_OR_RETURN(parts[1].params.window,
                          window_of(node, x_shape, parts[1].y_shape, &parts[1].w_shape, false));
  return enqueue_conv_pair(ops, queue, *x, x_shape, parts[0], parts[1], *y, wait);
}

Result<cl::Event> enqueue_gemm_node(const OpKernels& ops, cl::CommandQueue& queue, const Node& node,
                                    const Operands& in, const Events& wait) {
  HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* a, in.buffer(0));
  HSCHED_ASSIGN_OR_RETURN(const cl::Buffer* b, in.buffer(1));
  HSCHED_ASSIGN_OR_RETURN(cl::Buffer * y, in.output());
  const GemmParams params{.trans_a = node.attr_int("transA", 0) != 0,
                          .trans_b = node.attr_int("transB", 0) != 0,
                          .alpha = node.attr_float("alpha", 1.0f),
                          .beta = node.attr_float("beta", 1.0f)};
  const cl::Buffer* c = in.optional_buffer(2);
  return enqueue_gemm(ops, queue, *a, in.shape(0), *b, in.shape(1), c, c ? in.shape(2) : Shape{},
                      params, *y, wait);
}

}  // namespace

std::optional<Result<cl::Event>> enqueue_product(const OpKernels& ops, cl::CommandQueue& queue,
                                                 const Node& node, const Operands& in,
                                                 const Events& wait) {
  const std::string& op = node.op_type;
  if (op == "Conv" || op == "ConvTranspose") return enqueue_conv_node(ops, queue, node, in, wait);
  if (op == "MaxPool" || op == "AveragePool") return enqueue_pool_node(ops, queue, node, in, wait);
  if (op == "MatMul") return enqueue_matmul_node(ops, queue, in, wait);
  if (op == kMatMulGroupOp) return enqueue_matmul_group_node(ops, queue, in, wait);
  if (op == kAttentionOp) return enqueue_attention_node(ops, queue, in, wait);
  if (op == kSqueezeExcitationOp) return enqueue_squeeze_excitation_node(ops, queue, in, wait);
  if (op == kConvPairOp) return enqueue_conv_pair_node(ops, queue, node, in, wait);
  if (op == "Gemm") return enqueue_gemm_node(ops, queue, node, in, wait);
  return std::nullopt;
}

}  // namespace hsched::opencl::node_detail
