// Conv (im2col + CLBlast GEMM, the implicit GEMM or Winograd's F(2x2, 3x3) for group 1, a direct
// kernel otherwise, a work group per output for few outputs) and ConvTranspose (a direct gather
// kernel). See ops_spatial.h.
//
// The GEMM path computes t[OC, N * P] = W[OC, K] x col[K, N * P] (K = C * KH * KW, P = OH * OW)
// in one CLBlast call for the whole batch, then the epilogue adds the bias and the residual,
// applies the activation and scatters t into NCHW. With batch 1 and fp32 storage t is y itself.
// CLBlast takes no wait list, so `wait` becomes a barrier on the (in-order) queue first.
#include <clblast.h>

#include <cmath>
#include <string>
#include <vector>

#include "backends/opencl/kernels/ops_scratch.h"
#include "backends/opencl/kernels/ops_spatial.h"
#include "backends/opencl/kernels/ops_util.h"

namespace hsched::opencl {
namespace {

using detail::check_cl;
using detail::check_int_range;
using detail::element_count;
using detail::launch;
using detail::set_args;

// Mirrors ConvShape in kernel_sources_conv.h.
struct ConvShape {
  cl_int n, c, h, w;
  cl_int oc, oh, ow;
  cl_int kh, kw, sh, sw, dh, dw, ph, pw;
  cl_int group;
  cl_int y_channels, y_c0;                  // where the output is stored (ConvParams::stored_in)
  cl_int has_in_scale, in_scale_batch;      // ConvParams::input_scale
  cl_int x_channels, x_c0;                  // where the input is read (ConvParams::read_from)
  cl_int y_step;                            // ConvParams::stored_step
  cl_int quantized, x_zero, w_scale_count;  // ConvParams::quantized
  cl_float x_scale;
  cl_int qlinear;  // requantized as ONNX Runtime's QLinearConv (QuantizedOperands::integer_bias)
  cl_int quantize_y, y_zero, y_lo, y_hi;  // ConvParams::quantize_output
  cl_float y_scale;
  cl_int post_op;  // ConvParams::requantized_activation, -1 without
  cl_float post_alpha, post_beta;
  QdqRow post;
  cl_int chained;  // ConvParams::chain
};

// `values` (1 per spatial axis, or empty for `fallback`) as the (h, w) pair; 1-D ops get h = 1
// from `one_d_h`.
std::pair<cl_int, cl_int> pair_of(const std::vector<int64_t>& values, size_t spatial,
                                  int64_t fallback, int64_t one_d_h) {
  if (values.empty())
    return {static_cast<cl_int>(spatial == 1 ? one_d_h : fallback), static_cast<cl_int>(fallback)};
  if (spatial == 1) return {static_cast<cl_int>(one_d_h), static_cast<cl_int>(values[0])};
  return {static_cast<cl_int>(values[0]), static_cast<cl_int>(values[1])};
}

// Validates the shapes and fills the kernel geometry. `transposed`: w is [C, OC / group, k...].
Result<ConvShape> conv_shape(const Shape& x, const Shape& w, const Shape& y,
                             const ConvParams& params, bool transposed, const char* op) {
  const std::string name = op;
  if (x.size() < 3 || x.size() > 4 || w.size() != x.size() || y.size() != x.size()) {
    return invalid_argument("ops: " + name + " needs 1-D or 2-D NCHW operands of equal rank");
  }
  const size_t spatial = x.size() - 2;
  const Window& win = params.window;
  auto sized = [&](const std::vector<int64_t>& v) { return v.empty() || v.size() == spatial; };
  if (win.kernel.size() != spatial || !sized(win.strides) || !sized(win.dilations) ||
      !sized(win.pads_begin)) {
    return invalid_argument("ops: " + name + " window does not match the spatial rank");
  }
  const int64_t group = params.group;
  const int64_t c = x[1], oc = y[1];
  const int64_t w_in = transposed ? w[0] : w[1] * group;
  const int64_t w_out = transposed ? w[1] * group : w[0];
  if (group < 1 || c % group != 0 || oc % group != 0 || w_in != c || w_out != oc || y[0] != x[0]) {
    return invalid_argument("ops: " + name + " weights " + std::to_string(w[0]) + "x" +
                            std::to_string(w[1]) + " do not match " + std::to_string(c) +
                            " input and " + std::to_string(oc) + " output channels in group " +
                            std::to_string(group));
  }
  for (size_t i = 0; i < spatial; ++i) {
    if (w[i + 2] != win.kernel[i]) {
      return invalid_argument("ops: " + name + " kernel_shape differs from the weights");
    }
  }
  HSCHED_RETURN_IF_ERROR(check_int_range(
      std::max({element_count(x), element_count(w), element_count(y)}), name + " operand"));
  ConvShape s{};
  s.n = static_cast<cl_int>(x[0]);
  s.c = static_cast<cl_int>(c);
  s.oc = static_cast<cl_int>(oc);
  s.h = spatial == 1 ? 1 : static_cast<cl_int>(x[2]);
  s.w = static_cast<cl_int>(x.back());
  s.oh = spatial == 1 ? 1 : static_cast<cl_int>(y[2]);
  s.ow = static_cast<cl_int>(y.back());
  std::tie(s.kh, s.kw) = pair_of(win.kernel, spatial, 1, 1);
  std::tie(s.sh, s.sw) = pair_of(win.strides, spatial, 1, 1);
  std::tie(s.dh, s.dw) = pair_of(win.dilations, spatial, 1, 1);
  std::tie(s.ph, s.pw) = pair_of(win.pads_begin, spatial, 0, 0);
  s.group = static_cast<cl_int>(group);
  s.has_in_scale = params.input_scale != nullptr;
  s.in_scale_batch = params.input_scale_per_batch ? s.c : 0;
  if (transposed && params.input_scale) {
    return invalid_argument("ops: ConvTranspose takes no input scale");
  }
  // A tensor's channels first, first + step, ... of `slice`'s {channels, first} (`own` of them),
  // checked: the channels stored and the first.
  const auto channel_slice = [&](const std::optional<std::pair<int64_t, int64_t>>& slice,
                                 int64_t own, int64_t step, const Shape& dims,
                                 const char* what) -> Result<std::pair<cl_int, cl_int>> {
    if (!slice) return std::pair{static_cast<cl_int>(own), cl_int{0}};
    const auto [channels, first] = *slice;
    if (transposed || first < 0 || step < 1 || step > channels ||
        channels < first + (own - 1) * step + 1) {
      return invalid_argument("ops: " + name + " " + what + " slice " + std::to_string(first) +
                              "+" + std::to_string(own) + " does not fit " +
                              std::to_string(channels) + " channels");
    }
    HSCHED_RETURN_IF_ERROR(check_int_range(
        channels * (element_count(dims) / std::max<int64_t>(own, 1)), name + " " + what));
    return std::pair{static_cast<cl_int>(channels), static_cast<cl_int>(first)};
  };
  HSCHED_ASSIGN_OR_RETURN(std::tie(s.x_channels, s.x_c0),
                          channel_slice(params.read_from, c, 1, x, "input"));
  HSCHED_ASSIGN_OR_RETURN(std::tie(s.y_channels, s.y_c0),
                          channel_slice(params.stored_in, oc, params.stored_step, y, "output"));
  s.y_step = static_cast<cl_int>(params.stored_step);
  if (const auto& q = params.quantized) {
    if (transposed || q->weight_scale == nullptr ||
        (q->weight_scales != 1 && q->weight_scales != oc) || q->x_zero < -128 || q->x_zero > 255 ||
        !(q->x_scale > 0.0f)) {
      return invalid_argument("ops: " + name + " has bad quantization parameters");
    }
    s.quantized = 1;
    s.x_zero = static_cast<cl_int>(q->x_zero);
    s.w_scale_count = static_cast<cl_int>(q->weight_scales);
    s.x_scale = q->x_scale;
  }
  if (const auto& q = params.quantize_output) {
    if (transposed || q->lo < -128 || q->hi > 255 || q->lo > q->hi || q->zero < q->lo ||
        q->zero > q->hi || !(q->scale > 0.0f) || !std::isfinite(q->scale)) {
      return invalid_argument("ops: " + name + " has a bad output quantization");
    }
    s.quantize_y = 1;
    s.y_zero = static_cast<cl_int>(q->zero);
    s.y_lo = static_cast<cl_int>(q->lo);
    s.y_hi = static_cast<cl_int>(q->hi);
    s.y_scale = q->scale;
  }
  // Nothing between the product and its quantization but the QDQ format's bias, or a Relu that
  // the output range's clamp makes.
  const auto& act = params.activation;
  s.qlinear = params.quantized && params.quantized->integer_bias && params.quantize_output &&
              params.residual == nullptr &&
              (!act || (act->op == UnaryOp::kRelu && s.y_zero == s.y_lo));
  s.post_op = -1;
  if (const auto& r = params.requantized_activation) {
    const QdqRow& q = r->qdq;
    if (!params.quantize_output || !requantizes(q)) {
      return invalid_argument("ops: " + name + " has a bad requantized activation");
    }
    s.post_op = static_cast<cl_int>(r->activation.op);
    s.post_alpha = r->activation.alpha;
    s.post_beta = r->activation.beta;
    s.post = q;
  }
  if (params.chain.count > 0) {
    if (!params.quantize_output) {
      return invalid_argument("ops: " + name + "'s chain of quantized ops needs its quantization");
    }
    s.chained = 1;
  }
  if (s.kh < 1 || s.kw < 1 || s.sh < 1 || s.sw < 1 || s.dh < 1 || s.dw < 1 || s.ph < 0 ||
      s.pw < 0) {
    return invalid_argument("ops: " + name +
                            " kernel, strides and dilations must be >= 1, pads >= 0");
  }
  return s;
}

// The buffer of a Conv's chain of quantized ops (ConvParams::chain): its kernels' last argument,
// a null one without.
Result<cl::Buffer> chain_buffer(const OpKernels& ops, cl::CommandQueue& queue,
                                const ConvParams& params) {
  if (params.chain.count == 0) return detail::or_null(nullptr);
  return detail::constant_buffer(ops, queue, &params.chain, sizeof params.chain);
}

// Whether a Conv runs the quantized kernels (conv_gemm_q_*, conv_direct_q): 8-bit operands or a
// quantized result.
bool quantized_kernel(const ConvShape& s) { return s.quantized || s.quantize_y; }

// The weights' scales of a quantized Conv (null otherwise).
const cl::Buffer& weight_scale(const ConvParams& params) {
  return detail::or_null(params.quantized ? params.quantized->weight_scale : nullptr);
}

// Multiply-adds x 2 of a group-1 convolution.
int64_t conv_flops(const ConvShape& s) {
  return 2 * int64_t{s.n} * s.oc * s.oh * s.ow * s.c * s.kh * s.kw;
}
// Above this the im2col + CLBlast path takes over (its tuned GEMM outruns the simple tiles on
// large problems; below, its extra kernels and host overhead dominate).
constexpr int64_t kIm2colFlops = int64_t{1} << 34;

Result<cl::Event> conv_gemm(const OpKernels& ops, cl::CommandQueue& queue, const cl::Buffer& x,
                            const Shape& x_shape, const cl::Buffer& w, const cl::Buffer* bias,
                            const ConvShape& s, const ConvParams& params, cl::Buffer& y,
                            const Events& wait) {
  const int64_t plane = int64_t{s.oh} * s.ow;
  const int64_t cols = s.n * plane;
  const int64_t k = int64_t{s.c} * s.kh * s.kw;
  HSCHED_RETURN_IF_ERROR(check_int_range(std::max(k * cols, s.oc * cols), "Conv im2col"));
  detail::not_replayable();  // a fill and a CLBlast call
  if (!wait.empty()) {
    HSCHED_RETURN_IF_ERROR(
        check_cl(queue.enqueueBarrierWithWaitList(&wait), "barrier before Conv"));
  }
  // A 1x1, stride-1, unpadded conv of batch 1, no input scale or zero point: x is already col
  // [C, H * W].
  const bool pointwise = !s.has_in_scale && !s.quantized && s.x_channels == s.c && s.n == 1 &&
                         s.kh == 1 && s.kw == 1 && s.sh == 1 && s.sw == 1 && s.ph == 0 &&
                         s.pw == 0 && s.oh == s.h && s.ow == s.w;
  cl::Buffer col;
  if (pointwise) {
    HSCHED_ASSIGN_OR_RETURN(col, detail::as_float(ops, queue, x, element_count(x_shape),
                                                  detail::ScratchSlot::kConvInput));
  } else {
    HSCHED_ASSIGN_OR_RETURN(
        col, detail::float_scratch(ops, queue, detail::ScratchSlot::kConvColumns, k * cols));
    HSCHED_ASSIGN_OR_RETURN(cl::Kernel im2col, detail::queue_kernel(ops, queue, "im2col"));
    HSCHED_RETURN_IF_ERROR(set_args(im2col, "im2col", x, detail::or_null(params.input_scale), col,
                                    s, static_cast<cl_int>(k * cols)));
    HSCHED_RETURN_IF_ERROR(launch(queue, im2col, k * cols, {}, "im2col").status());
  }
  HSCHED_ASSIGN_OR_RETURN(
      cl::Buffer w32, detail::as_float(ops, queue, w, s.oc * k, detail::ScratchSlot::kConvWeights));
  const int64_t y_count = s.oc * cols;
  // Batch 1, fp32, y its own: the GEMM writes y in place, the epilogue finishes it.
  cl::Buffer t = y;
  if (s.n != 1 || ops.storage() != Storage::kFloat32 || s.y_channels != s.oc) {
    HSCHED_ASSIGN_OR_RETURN(
        t, detail::float_scratch(ops, queue, detail::ScratchSlot::kConvResult, y_count));
  }
  // CLBlast is called with beta 0; zeroing keeps stale NaNs out whatever it does with beta.
  HSCHED_RETURN_IF_ERROR(
      check_cl(queue.enqueueFillBuffer(t, 0.0f, 0, static_cast<size_t>(y_count) * sizeof(float)),
               "zero fill for Conv"));
  cl_command_queue raw_queue = queue();
  cl_event raw_event = nullptr;
  const auto m = static_cast<size_t>(s.oc), n = static_cast<size_t>(cols);
  const auto kk = static_cast<size_t>(k);
  const clblast::StatusCode code = clblast::Gemm<float>(
      clblast::Layout::kRowMajor, clblast::Transpose::kNo, clblast::Transpose::kNo, m, n, kk, 1.0f,
      w32(), 0, kk, col(), 0, n, 0.0f, t(), 0, n, &raw_queue, &raw_event);
  if (code != clblast::StatusCode::kSuccess) {
    return internal_error("ops: CLBlast GEMM for Conv failed (status " +
                          std::to_string(static_cast<int>(code)) + ")");
  }
  cl::Event gemm_done(raw_event);  // takes CLBlast's reference
  const bool fused = params.activation.has_value();
  const cl::Buffer* res = params.residual;
  if (!bias && !fused && !res && !params.quantized && !params.quantize_output && t() == y()) {
    return gemm_done;
  }
  const Activation act = params.activation.value_or(Activation{});
  HSCHED_ASSIGN_OR_RETURN(const cl::Buffer chain, chain_buffer(ops, queue, params));
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel epilogue, detail::queue_kernel(ops, queue, "conv_epilogue"));
  HSCHED_RETURN_IF_ERROR(set_args(epilogue, "conv_epilogue", t, y, weight_scale(params),
                                  detail::or_null(bias), static_cast<cl_int>(bias != nullptr),
                                  detail::or_null(res), static_cast<cl_int>(res != nullptr), s,
                                  fused ? static_cast<cl_int>(act.op) : cl_int{-1}, act.alpha,
                                  act.beta, static_cast<cl_int>(y_count), chain));
  return launch(queue, epilogue, y_count, {}, "conv_epilogue");
}

// conv_direct_pixel's work group: PIXEL_LANES output positions by PIXEL_SLICES channel slices.
constexpr int64_t kPixelLanes = 32;
constexpr size_t kPixelGroup = kPixelLanes * 8;

// The implicit GEMM's target of work groups: a 1x1 Conv, a product over the pixels, fills a large
// GPU better with the MatMuls' (its tiles narrower, or K split further); other Convs keep theirs
// (measured, docs/benchmarks.md).
int64_t conv_target_groups(bool pointwise) {
  return pointwise ? detail::kMatMulTargetGroups : detail::kConvTargetGroups;
}

Result<cl::Event> conv_implicit_gemm(const OpKernels& ops, cl::CommandQueue& queue,
                                     const cl::Buffer& x, const cl::Buffer& w,
                                     const cl::Buffer* bias, const ConvShape& s,
                                     const ConvParams& params, cl::Buffer& y, const Events& wait) {
  const int64_t m = s.oc, cols = int64_t{s.n} * s.oh * s.ow;
  const auto [tile, k_chunk, splits] =
      detail::gemm_tiling(m, cols, int64_t{s.c} * s.kh * s.kw, 1, detail::KSplit::kToFill,
                          conv_target_groups(s.kh == 1 && s.kw == 1));
  HSCHED_RETURN_IF_ERROR(check_int_range(splits * m * cols, "Conv split-K partial sums"));
  cl::Buffer partial;  // null with one split
  if (splits > 1) {
    HSCHED_ASSIGN_OR_RETURN(
        partial,
        detail::float_scratch(ops, queue, detail::ScratchSlot::kConvPartial, splits * m * cols));
  }
  const Activation act = params.activation.value_or(Activation{});
  const cl_int op = params.activation ? static_cast<cl_int>(act.op) : cl_int{-1};
  // A 1x1 kernel without leading pads gathers no window (a trailing pad's pixels read zeros).
  const bool one_by_one = s.kh == 1 && s.kw == 1 && s.ph == 0 && s.pw == 0;
  // Float, quantized, quantized with a chain (its argument last).
  static constexpr const char* kNames[3][2][3] = {
      {{"conv_gemm_64", "conv_gemm_32", "conv_gemm_16"},
       {"conv_gemm_64_1x1", "conv_gemm_32_1x1", "conv_gemm_16_1x1"}},
      {{"conv_gemm_q_64", "conv_gemm_q_32", "conv_gemm_q_16"},
       {"conv_gemm_q_64_1x1", "conv_gemm_q_32_1x1", "conv_gemm_q_16_1x1"}},
      {{"conv_gemm_qc_64", "conv_gemm_qc_32", "conv_gemm_qc_16"},
       {"conv_gemm_qc_64_1x1", "conv_gemm_qc_32_1x1", "conv_gemm_qc_16_1x1"}}};
  const int width = tile == 64 ? 0 : tile == 32 ? 1 : 2;
  const int kind = s.chained ? 2 : quantized_kernel(s) ? 1 : 0;
  const char* name = kNames[kind][one_by_one ? 1 : 0][width];
  HSCHED_ASSIGN_OR_RETURN(const cl::Buffer chain, chain_buffer(ops, queue, params));
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, name));
  const cl::Buffer* res = params.residual;
  const ConvParams::CarriedCopy carried = params.carried.value_or(ConvParams::CarriedCopy{});
  if (!row_copy_fits(carried.copy, carried.x_elements, int64_t{s.n} * s.y_channels * s.oh * s.ow)) {
    return invalid_argument("ops: the copy a Conv carries reaches past its buffers");
  }
  HSCHED_RETURN_IF_ERROR(
      set_args(kernel, name, x, detail::or_null(params.input_scale), w, weight_scale(params),
               detail::or_null(bias), static_cast<cl_int>(bias != nullptr), detail::or_null(res),
               static_cast<cl_int>(res != nullptr), y, partial, s, static_cast<cl_int>(k_chunk), op,
               act.alpha, act.beta, detail::or_null(carried.x), carried.copy));
  if (s.chained) {  // conv_gemm_qc_*: the chain after the 17 arguments every conv_gemm takes
    HSCHED_RETURN_IF_ERROR(check_cl(kernel.setArg(17, chain), "setArg of conv_gemm_qc"));
  }
  const auto groups = [tile = tile](int64_t extent) {  // clang 14 captures no structured binding
    return static_cast<size_t>((extent + tile - 1) / tile);
  };
  HSCHED_ASSIGN_OR_RETURN(cl::Event event,
                          detail::launch_range(queue, kernel,
                                               cl::NDRange(groups(cols) * 16, groups(m) * 16,
                                                           static_cast<size_t>(splits)),
                                               cl::NDRange(16, 16, 1), wait, name));
  if (splits == 1) return event;
  const int64_t count = m * cols;
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel reduce, detail::queue_kernel(ops, queue, "conv_split_reduce"));
  HSCHED_RETURN_IF_ERROR(set_args(reduce, "conv_split_reduce", partial, y, weight_scale(params),
                                  detail::or_null(bias), static_cast<cl_int>(bias != nullptr),
                                  detail::or_null(res), static_cast<cl_int>(res != nullptr),
                                  static_cast<cl_int>(splits), s, op, act.alpha, act.beta,
                                  static_cast<cl_int>(count), chain));
  return launch(queue, reduce, count, {}, "conv_split_reduce");
}

// Winograd's F(2x2, 3x3) pays from these channels (in and out) and 2x2 output tiles (measured,
// docs/benchmarks.md: SqueezeNet's Convs of 16 and 32 input channels ran slower): below, its
// three launches and the transforms' traffic outweigh the multiply-adds it saves.
constexpr int64_t kWinogradMinChannels = 64;
constexpr int64_t kWinogradMinTiles = 64;

// The 2x2 output tiles of a Conv: th x tw a plane.
struct WinogradTiles {
  int64_t th = 0, tw = 0, count = 0;
};
WinogradTiles winograd_tiles(const ConvShape& s) {
  const int64_t th = (s.oh + 1) / 2, tw = (s.ow + 1) / 2;
  return {th, tw, s.n * th * tw};
}

bool winograd_shape(const ConvShape& s) {
  return s.kh == 3 && s.kw == 3 && s.sh == 1 && s.sw == 1 && s.dh == 1 && s.dw == 1 && s.group == 1;
}

// u = G g G' of every (output, input) channel's 3x3 kernel g, stored [16, OC, C] (element
// 4 r + q of u at [4 r + q, oc, c]): the A operands of winograd_input's 16 products.
std::vector<float> winograd_weights(const float* w, int64_t oc, int64_t c) {
  std::vector<float> u(static_cast<size_t>(16 * oc * c));
  for (int64_t k = 0; k < oc; ++k) {
    for (int64_t ci = 0; ci < c; ++ci) {
      const float* g = w + (k * c + ci) * 9;
      float t[4][3];  // G g
      for (int q = 0; q < 3; ++q) {
        t[0][q] = g[q];
        t[1][q] = 0.5f * (g[q] + g[3 + q] + g[6 + q]);
        t[2][q] = 0.5f * (g[q] - g[3 + q] + g[6 + q]);
        t[3][q] = g[6 + q];
      }
      for (int r = 0; r < 4; ++r) {  // (G g) G'
        const float row[4] = {t[r][0], 0.5f * (t[r][0] + t[r][1] + t[r][2]),
                              0.5f * (t[r][0] - t[r][1] + t[r][2]), t[r][2]};
        for (int q = 0; q < 4; ++q) {
          u[static_cast<size_t>(((4 * r + q) * oc + k) * c + ci)] = row[q];
        }
      }
    }
  }
  return u;
}

// Why kWinograd cannot run this Conv, or "" where it can.
std::string winograd_refusal(const ConvShape& s, const ConvParams& params) {
  if (!winograd_shape(s)) return "a 3x3 kernel of stride and dilation 1 and group 1";
  if (params.weights_on_host == nullptr) return "constant weights";
  if (quantized_kernel(s)) return "no quantization";
  return "";
}

Result<cl::Event> conv_winograd_gemm(const OpKernels& ops, cl::CommandQueue& queue,
                                     const cl::Buffer& x, const cl::Buffer* bias,
                                     const ConvShape& s, const ConvParams& params, cl::Buffer& y,
                                     const Events& wait) {
  const WinogradTiles t = winograd_tiles(s);
  HSCHED_RETURN_IF_ERROR(
      check_int_range(16 * std::max<int64_t>(s.c, s.oc) * t.count, "Conv Winograd transform"));
  // The key holds the weights' bytes: the same weights on this queue reuse their transform.
  std::string key = "winograd_f2x3:" + std::to_string(s.oc) + "x" + std::to_string(s.c) + ":";
  key.append(reinterpret_cast<const char*>(params.weights_on_host),
             static_cast<size_t>(s.oc) * s.c * 9 * sizeof(float));
  HSCHED_ASSIGN_OR_RETURN(cl::Buffer u, detail::derived_constant(ops, queue, key, [&] {
                            return winograd_weights(params.weights_on_host, s.oc, s.c);
                          }));
  const auto bytes = [&](int64_t channels) {  // of the tiles' transforms, in the storage type
    return static_cast<size_t>(16 * channels * t.count) * storage_bytes(ops.storage());
  };
  HSCHED_ASSIGN_OR_RETURN(
      cl::Buffer v,
      detail::scratch_buffer(ops, queue, detail::ScratchSlot::kWinogradInput, bytes(s.c)));
  HSCHED_ASSIGN_OR_RETURN(
      cl::Buffer m,
      detail::scratch_buffer(ops, queue, detail::ScratchSlot::kWinogradProduct, bytes(s.oc)));
  const auto th = static_cast<cl_int>(t.th), tw = static_cast<cl_int>(t.tw);
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel input, detail::queue_kernel(ops, queue, "winograd_input"));
  HSCHED_RETURN_IF_ERROR(set_args(input, "winograd_input", x, detail::or_null(params.input_scale),
                                  v, s, th, tw, static_cast<cl_int>(s.c * t.count)));
  HSCHED_RETURN_IF_ERROR(launch(queue, input, s.c * t.count, wait, "winograd_input").status());
  HSCHED_RETURN_IF_ERROR(
      detail::enqueue_batched_product(ops, queue, u, v, m, 16, s.oc, t.count, s.c, {}).status());
  const Activation act = params.activation.value_or(Activation{});
  const cl::Buffer* res = params.residual;
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel output, detail::queue_kernel(ops, queue, "winograd_output"));
  HSCHED_RETURN_IF_ERROR(set_args(output, "winograd_output", m, y, detail::or_null(bias),
                                  static_cast<cl_int>(bias != nullptr), detail::or_null(res),
                                  static_cast<cl_int>(res != nullptr), s, th, tw,
                                  params.activation ? static_cast<cl_int>(act.op) : cl_int{-1},
                                  act.alpha, act.beta, static_cast<cl_int>(s.oc * t.count)));
  return launch(queue, output, s.oc * t.count, {}, "winograd_output");
}

}  // namespace

bool conv_by_rows(int64_t outputs, int64_t reduction) {
  // A work group per output pays where the implicit GEMM's tiles would be few, mostly padding and
  // K split (squeeze-and-excitation Convs on one pixel), and each reduction fills the group's 64
  // lanes; the bound is measured (docs/benchmarks.md).
  constexpr int64_t kMaxOutputs = 4096;
  return outputs > 0 && outputs <= kMaxOutputs && reduction >= 64;
}

bool conv_direct_by_channels(int64_t out_channels) {
  // An implicit-GEMM tile spans 16 to 64 output channels: with 4 or fewer (a decoder's last Conv
  // to RGB) three quarters of it or more is padding, for which it still gathers its input
  // columns. The direct kernel computes only the real outputs (measured, docs/benchmarks.md).
  constexpr int64_t kMaxChannels = 4;
  return out_channels > 0 && out_channels <= kMaxChannels;
}

bool conv_winograd(int64_t out_channels, int64_t in_channels, int64_t tiles) {
  return out_channels >= kWinogradMinChannels && in_channels >= kWinogradMinChannels &&
         tiles >= kWinogradMinTiles;
}

ConvExecution conv_execution(int64_t out_channels, int64_t pixels, int64_t reduction,
                             bool pointwise, int64_t winograd_tiles) {
  const double outputs = static_cast<double>(out_channels) * static_cast<double>(pixels);
  const double flops = 2.0 * outputs * static_cast<double>(reduction);
  if (winograd_tiles > 0 && !conv_by_rows(out_channels * pixels, reduction) &&
      !conv_direct_by_channels(out_channels) &&
      conv_winograd(out_channels, reduction / 9, winograd_tiles)) {
    // The 16 products as matmul_tiled tiles them; the transforms are traffic, not products.
    const detail::GemmTiling t =
        detail::gemm_tiling(out_channels, winograd_tiles, reduction / 9, 16,
                            detail::KSplit::kUnderHalf, detail::kMatMulTargetGroups);
    const auto padded = [&](int64_t extent) {
      return static_cast<double>((extent + t.tile - 1) / t.tile * t.tile);
    };
    const double partials =
        16.0 * padded(out_channels) * padded(winograd_tiles) * static_cast<double>(t.splits);
    return {2.0 * partials * static_cast<double>(t.k_chunk), partials};
  }
  if (out_channels <= 0 || pixels <= 0 || reduction <= 0 ||
      flops >= static_cast<double>(kIm2colFlops) ||
      conv_by_rows(out_channels * pixels, reduction) || conv_direct_by_channels(out_channels)) {
    return {flops, outputs};
  }
  const detail::GemmTiling t = detail::gemm_tiling(
      out_channels, pixels, reduction, 1, detail::KSplit::kToFill, conv_target_groups(pointwise));
  const auto padded = [&](int64_t extent) {
    return static_cast<double>((extent + t.tile - 1) / t.tile * t.tile);
  };
  const double partials = padded(out_channels) * padded(pixels) * static_cast<double>(t.splits);
  return {2.0 * partials * static_cast<double>(t.k_chunk), partials};
}

Result<cl::Event> enqueue_conv(const OpKernels& ops, cl::CommandQueue& queue, const cl::Buffer& x,
                               const Shape& x_shape, const cl::Buffer& w, const Shape& w_shape,
                               const cl::Buffer* bias, const ConvParams& params, cl::Buffer& y,
                               const Shape& y_shape, const Events& wait) {
  HSCHED_ASSIGN_OR_RETURN(ConvShape s,
                          conv_shape(x_shape, w_shape, y_shape, params, false, "Conv"));
  const bool empty = element_count(y_shape) == 0;
  ConvAlgorithm algorithm = params.algorithm;
  if (algorithm == ConvAlgorithm::kAuto) {
    const bool winograd =
        winograd_refusal(s, params).empty() && conv_winograd(s.oc, s.c, winograd_tiles(s).count);
    algorithm = conv_by_rows(element_count(y_shape), int64_t{s.c} / s.group * s.kh * s.kw)
                    ? ConvAlgorithm::kRows
                : s.group != 1 || conv_direct_by_channels(s.oc) ? ConvAlgorithm::kDirect
                : winograd                                      ? ConvAlgorithm::kWinograd
                : conv_flops(s) < kIm2colFlops                  ? ConvAlgorithm::kImplicitGemm
                                                                : ConvAlgorithm::kIm2colGemm;
  }
  if (params.carried && (empty || algorithm != ConvAlgorithm::kImplicitGemm)) {
    // Only the implicit GEMM's kernels take the copy: the others make it after the Conv.
    ConvParams alone = params;
    alone.carried.reset();
    alone.algorithm = algorithm;
    HSCHED_RETURN_IF_ERROR(
        enqueue_conv(ops, queue, x, x_shape, w, w_shape, bias, alone, y, y_shape, wait).status());
    const ConvParams::CarriedCopy& carried = *params.carried;
    return enqueue_row_copy(ops, queue, *carried.x, carried.x_elements, y,
                            int64_t{s.n} * s.y_channels * s.oh * s.ow, carried.copy);
  }
  if (empty) {  // nothing to compute; still an event to chain on
    cl::Event event;
    HSCHED_RETURN_IF_ERROR(
        check_cl(queue.enqueueMarkerWithWaitList(&wait, &event), "marker for an empty Conv"));
    return event;
  }
  if (algorithm == ConvAlgorithm::kWinograd) {
    const std::string refusal = winograd_refusal(s, params);
    if (!refusal.empty()) return invalid_argument("ops: Winograd's Conv needs " + refusal);
    return conv_winograd_gemm(ops, queue, x, bias, s, params, y, wait);
  }
  if (s.group != 1 && algorithm != ConvAlgorithm::kDirect && algorithm != ConvAlgorithm::kRows) {
    return invalid_argument("ops: only the direct Conv kernel takes group " +
                            std::to_string(s.group));
  }
  if (algorithm == ConvAlgorithm::kImplicitGemm) {
    return conv_implicit_gemm(ops, queue, x, w, bias, s, params, y, wait);
  }
  if (algorithm == ConvAlgorithm::kIm2colGemm) {
    return conv_gemm(ops, queue, x, x_shape, w, bias, s, params, y, wait);
  }
  const Activation act = params.activation.value_or(Activation{});
  const bool rows = algorithm == ConvAlgorithm::kRows;
  // The direct kernel of few channels computes them all per output position.
  const bool per_pixel = !rows && s.group == 1 && conv_direct_by_channels(s.oc);
  const int64_t count = element_count(y_shape) / (per_pixel ? s.oc : 1);
  const char* name = rows                  ? "conv_rows"
                     : per_pixel           ? "conv_direct_pixel"
                     : s.chained           ? "conv_direct_qc"
                     : quantized_kernel(s) ? "conv_direct_q"
                                           : "conv_direct";
  HSCHED_ASSIGN_OR_RETURN(const cl::Buffer chain, chain_buffer(ops, queue, params));
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, name));
  const cl::Buffer* res = params.residual;
  HSCHED_RETURN_IF_ERROR(
      set_args(kernel, name, x, detail::or_null(params.input_scale), w, weight_scale(params),
               detail::or_null(bias), static_cast<cl_int>(bias != nullptr), detail::or_null(res),
               static_cast<cl_int>(res != nullptr), y, s,
               params.activation ? static_cast<cl_int>(act.op) : cl_int{-1}, act.alpha, act.beta));
  // conv_rows takes the chain next; the others their item count, then conv_direct_pixel and
  // conv_direct_qc the chain.
  if (rows) {
    HSCHED_RETURN_IF_ERROR(check_cl(kernel.setArg(13, chain), "setArg of conv_rows"));
    return detail::launch_range(queue, kernel, cl::NDRange(static_cast<size_t>(count) * 64),
                                cl::NDRange(64), wait, name);
  }
  HSCHED_RETURN_IF_ERROR(
      check_cl(kernel.setArg(13, static_cast<cl_int>(count)), "setArg of conv_direct"));
  if (per_pixel || s.chained) {
    HSCHED_RETURN_IF_ERROR(check_cl(kernel.setArg(14, chain), "setArg of conv_direct"));
  }
  if (per_pixel) {  // work groups of positions by channel slices
    const auto groups = static_cast<size_t>((count + kPixelLanes - 1) / kPixelLanes);
    return detail::launch_range(queue, kernel, cl::NDRange(groups * kPixelGroup),
                                cl::NDRange(kPixelGroup), wait, name);
  }
  return launch(queue, kernel, count, wait, name);
}

Result<cl::Event> enqueue_conv_pair(const OpKernels& ops, cl::CommandQueue& queue,
                                    const cl::Buffer& x, const Shape& x_shape,
                                    const ConvPart& first, const ConvPart& second, cl::Buffer& y,
                                    const Events& wait) {
  std::array<ConvShape, 2> s{};
  for (size_t i = 0; i < 2; ++i) {
    const ConvPart& part = i == 0 ? first : second;
    const ConvParams& p = part.params;
    HSCHED_ASSIGN_OR_RETURN(s[i],
                            conv_shape(x_shape, part.w_shape, part.y_shape, p, false, "Conv"));
    if (p.group != 1 || p.residual || p.input_scale || p.read_from || p.quantized ||
        p.quantize_output || p.carried || element_count(part.y_shape) == 0) {
      return invalid_argument("ops: a pair of Convs takes group 1 and no fused operand");
    }
  }
  const Activation act = first.params.activation.value_or(Activation{});
  const Activation other = second.params.activation.value_or(Activation{});
  if (s[0].oh != s[1].oh || s[0].ow != s[1].ow || s[0].y_channels != s[1].y_channels ||
      s[0].y_step != s[1].y_step ||
      first.params.activation.has_value() != second.params.activation.has_value() ||
      act.op != other.op || act.alpha != other.alpha || act.beta != other.beta) {
    return invalid_argument("ops: a pair of Convs needs one output size, tensor and activation");
  }
  const int64_t cols = int64_t{s[0].n} * s[0].oh * s[0].ow;
  const int64_t m = std::max(s[0].oc, s[1].oc);
  const int64_t k =
      std::max(int64_t{s[0].c} * s[0].kh * s[0].kw, int64_t{s[1].c} * s[1].kh * s[1].kw);
  const int64_t tile = detail::gemm_tiling(m, cols, k, 2, detail::KSplit::kNever).tile;
  const char* name = tile == 64   ? "conv_gemm_pair_64"
                     : tile == 32 ? "conv_gemm_pair_32"
                                  : "conv_gemm_pair_16";
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, name));
  const cl_int op = first.params.activation ? static_cast<cl_int>(act.op) : cl_int{-1};
  const cl::Buffer& none = detail::or_null(nullptr);
  HSCHED_RETURN_IF_ERROR(
      set_args(kernel, name, x, none, *first.w, none, detail::or_null(first.bias),
               static_cast<cl_int>(first.bias != nullptr), none, cl_int{0}, y, none, s[0],
               static_cast<cl_int>(k), op, act.alpha, act.beta, none, RowCopy{}, *second.w,
               detail::or_null(second.bias), static_cast<cl_int>(second.bias != nullptr), s[1]));
  const auto groups = [tile](int64_t extent) {
    return static_cast<size_t>((extent + tile - 1) / tile);
  };
  return detail::launch_range(queue, kernel, cl::NDRange(groups(cols) * 16, groups(m) * 16, 2),
                              cl::NDRange(16, 16, 1), wait, name);
}

Result<cl::Event> enqueue_conv_transpose(const OpKernels& ops, cl::CommandQueue& queue,
                                         const cl::Buffer& x, const Shape& x_shape,
                                         const cl::Buffer& w, const Shape& w_shape,
                                         const cl::Buffer* bias, const ConvParams& params,
                                         cl::Buffer& y, const Shape& y_shape, const Events& wait) {
  if (params.activation || params.residual) {
    return invalid_argument("ops: ConvTranspose takes no fused activation or residual");
  }
  HSCHED_ASSIGN_OR_RETURN(ConvShape s,
                          conv_shape(x_shape, w_shape, y_shape, params, true, "ConvTranspose"));
  const int64_t count = element_count(y_shape);
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, "conv_transpose"));
  HSCHED_RETURN_IF_ERROR(set_args(kernel, "conv_transpose", x, w, detail::or_null(bias),
                                  static_cast<cl_int>(bias != nullptr), y, s,
                                  static_cast<cl_int>(count)));
  return launch(queue, kernel, count, wait, "conv_transpose");
}

}  // namespace hsched::opencl
