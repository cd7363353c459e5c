// QLinearConv and ConvInteger (ONNX opset 10), 1-D to 3-D: u8/i8 input and weights minus their
// zero points (padding contributes nothing, as if filled with x's zero point), products summed
// in 32 bits (wrapping), then written as i32 (ConvInteger) or, with the i32 bias added,
// requantized: y = saturate(round_half_even(acc * x_scale * w_scale[m] / y_scale) + y_zero_point).
// Weight zero points and scales per tensor or per output channel. A direct loop over TBB,
// parallel over (image, output channel) planes: oneDNN 2.6's int8 convolution takes no weight
// zero points and rounds its own way.
#include <algorithm>
#include <string>
#include <vector>

#include "backends/cpu/kernels/dnnl_util.h"
#include "backends/cpu/kernels/layout_util.h"
#include "backends/cpu/kernels/parallel.h"
#include "backends/cpu/kernels/post_ops.h"
#include "backends/cpu/kernels/quant_util.h"

namespace hsched::cpu {
namespace {

// Inputs of each op, and the geometry fixed at creation with spatial axes padded to 3 (size 1,
// kernel 1, stride 1, no padding on the added leading axes).
struct QuantConvPlan {
  size_t x = 0, x_zp = 2, w = 1, w_zp = 3;
  bool requantize = false;  // QLinearConv
  size_t x_scale = 0, w_scale = 0, y_scale = 0, y_zp = 0, bias = 0;
  DType y_dtype = DType::kI32;
  int64_t batch = 0, in_c = 0, out_c = 0, group = 1;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, kernel[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1}, dilation[3] = {1, 1, 1}, pad[3] = {0, 0, 0};
};

Status check_conv_geometry(const KernelSpec& spec, QuantConvPlan& plan) {
  for (size_t i : {plan.x, plan.w}) {
    if (!spec.has_input(i)) return invalid_node(spec, "needs input " + std::to_string(i));
    if (!is_quantized_dtype(spec.inputs[i]->dtype)) {
      return unsupported(spec, "input " + std::to_string(i) + " is " +
                                   std::string(dtype_name(spec.inputs[i]->dtype)) +
                                   " (supported: u8, i8)");
    }
  }
  const auto& x = spec.in_dims(plan.x);
  const auto& w = spec.in_dims(plan.w);
  const auto& y = spec.out_dims(0);
  if (x.size() < 3 || x.size() > 5) return unsupported(spec, "only 1-D to 3-D convolutions");
  if (w.size() != x.size() || y.size() != x.size() || y[0] != x[0]) {
    return invalid_node(spec, "input " + dims_text(x) + ", weights " + dims_text(w) +
                                  " and output " + dims_text(y) + " do not fit together");
  }
  plan.group = spec.node.attr_int("group", 1);
  const int64_t g = plan.group;
  if (g < 1 || x[1] % g != 0 || y[1] % g != 0 || w[0] != y[1] || w[1] * g != x[1]) {
    return invalid_node(spec, "weights " + dims_text(w) + " do not match input channels " +
                                  std::to_string(x[1]) + ", output channels " +
                                  std::to_string(y[1]) + " and group " + std::to_string(g));
  }
  const std::vector<int64_t> kernel(w.begin() + 2, w.end());
  for (int64_t k : kernel) {
    if (k < 1) return invalid_node(spec, "weights " + dims_text(w) + " have an empty kernel");
  }
  const auto declared = spec.node.attr_ints("kernel_shape");
  if (!declared.empty() && declared != kernel) {
    return invalid_node(
        spec, "kernel_shape " + dims_text(declared) + " does not match weights " + dims_text(w));
  }
  // spatial_params reads input 0 and output 0, as here, and checks that the output size follows.
  HSCHED_ASSIGN_OR_RETURN(SpatialParams p, spatial_params(spec, kernel, x.size() - 2, false));
  // spatial_params lets the trailing pad grow (a pool's ceil_mode); a convolution's output size
  // follows from the declared pads exactly.
  for (size_t i = 0; i < kernel.size(); ++i) {
    const int64_t span =
        x[i + 2] + p.pad_l[i] + p.declared_pad_r[i] - (kernel[i] - 1) * (p.dilation[i] + 1) - 1;
    if (span < 0 || span / p.strides[i] + 1 != y[i + 2]) {
      return invalid_node(spec, "output size " + std::to_string(y[i + 2]) +
                                    " does not follow from the input, kernel and attributes");
    }
  }
  plan.batch = x[0];
  plan.in_c = x[1];
  plan.out_c = y[1];
  const size_t lead = 3 - kernel.size();
  for (size_t i = 0; i < kernel.size(); ++i) {
    plan.in[lead + i] = x[i + 2];
    plan.out[lead + i] = y[i + 2];
    plan.kernel[lead + i] = kernel[i];
    plan.stride[lead + i] = p.strides[i];
    plan.dilation[lead + i] = p.dilation[i] + 1;  // oneDNN's form is d - 1
    plan.pad[lead + i] = p.pad_l[i];
  }
  return Status::ok();
}

// [first, last) of the outputs along one axis whose tap at `offset` (kernel index times dilation
// minus the leading pad) lands inside the input.
std::pair<int64_t, int64_t> valid_outputs(int64_t offset, int64_t stride, int64_t in, int64_t out) {
  const int64_t first = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  const int64_t last = in - 1 - offset < 0 ? 0 : (in - 1 - offset) / stride + 1;
  return {std::min(first, out), std::min(last, out)};
}

// Sums one output plane (image n, output channel m) into acc (unsigned: int32 arithmetic wraps).
void accumulate_plane(const QuantConvPlan& p, const int16_t* x, const int16_t* w, int64_t n,
                      int64_t m, std::vector<uint32_t>& acc) {
  const int64_t group_in = p.in_c / p.group;
  const int64_t first_c = m / (p.out_c / p.group) * group_in;
  const int64_t in_plane = p.in[0] * p.in[1] * p.in[2];
  const int64_t taps = p.kernel[0] * p.kernel[1] * p.kernel[2];
  std::fill(acc.begin(), acc.end(), 0u);
  for (int64_t ic = 0; ic < group_in; ++ic) {
    const int16_t* x_plane = x + (n * p.in_c + first_c + ic) * in_plane;
    const int16_t* w_taps = w + (m * group_in + ic) * taps;
    for (int64_t kd = 0; kd < p.kernel[0]; ++kd) {
      const auto [d0, d1] =
          valid_outputs(kd * p.dilation[0] - p.pad[0], p.stride[0], p.in[0], p.out[0]);
      for (int64_t kh = 0; kh < p.kernel[1]; ++kh) {
        const auto [h0, h1] =
            valid_outputs(kh * p.dilation[1] - p.pad[1], p.stride[1], p.in[1], p.out[1]);
        for (int64_t kw = 0; kw < p.kernel[2]; ++kw) {
          const int32_t wv = w_taps[(kd * p.kernel[1] + kh) * p.kernel[2] + kw];
          if (wv == 0) continue;
          const int64_t w_offset = kw * p.dilation[2] - p.pad[2];
          const auto [w0, w1] = valid_outputs(w_offset, p.stride[2], p.in[2], p.out[2]);
          for (int64_t od = d0; od < d1; ++od) {
            const int64_t id = od * p.stride[0] + kd * p.dilation[0] - p.pad[0];
            for (int64_t oh = h0; oh < h1; ++oh) {
              const int64_t ih = oh * p.stride[1] + kh * p.dilation[1] - p.pad[1];
              const int16_t* x_row = x_plane + (id * p.in[1] + ih) * p.in[2];
              uint32_t* acc_row = acc.data() + (od * p.out[1] + oh) * p.out[2];
              for (int64_t ow = w0; ow < w1; ++ow) {
                acc_row[ow] += static_cast<uint32_t>(wv * x_row[ow * p.stride[2] + w_offset]);
              }
            }
          }
        }
      }
    }
  }
}

Status run_quant_conv(const QuantConvPlan& p, std::span<const Tensor* const> in,
                      std::span<Tensor* const> out) {
  const auto input = [&](size_t i) { return optional_input(in, i); };
  const Tensor* w_zp = input(p.w_zp);
  std::vector<int16_t> x, w;
  subtract_zero_point(*in[p.x], read_zero_points(input(p.x_zp), 1), 1, x);
  const int64_t w_block = p.out_c == 0 ? 1 : in[p.w]->elements() / p.out_c;
  subtract_zero_point(*in[p.w], read_zero_points(w_zp, w_zp ? w_zp->elements() : 1), w_block, w);
  std::vector<float> multipliers(static_cast<size_t>(p.out_c), 1.0f);
  std::vector<int32_t> bias(static_cast<size_t>(p.out_c), 0);
  int32_t y_zp = 0;
  if (p.requantize) {
    const float x_scale = read_scales(*in[p.x_scale])[0];
    const float y_scale = read_scales(*in[p.y_scale])[0];
    const std::vector<float> w_scales = read_scales(*in[p.w_scale]);
    for (size_t m = 0; m < multipliers.size(); ++m) {
      multipliers[m] = x_scale * w_scales[w_scales.size() == 1 ? 0 : m] / y_scale;
    }
    y_zp = read_zero_points(input(p.y_zp), 1)[0];
    if (const Tensor* b = input(p.bias)) {
      const auto values = b->values<int32_t>();
      bias.assign(values.begin(), values.end());
    }
  }
  const int64_t points = p.out[0] * p.out[1] * p.out[2];
  const int64_t work = points * (p.in_c / p.group) * p.kernel[0] * p.kernel[1] * p.kernel[2];
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, work));
  std::byte* y_raw = out[0]->raw();
  parallel_range(
      p.batch * p.out_c,
      [&](int64_t begin, int64_t end) {
        std::vector<uint32_t> acc(static_cast<size_t>(points));
        for (int64_t plane = begin; plane < end; ++plane) {
          const int64_t n = plane / p.out_c, m = plane % p.out_c;
          accumulate_plane(p, x.data(), w.data(), n, m, acc);
          if (!p.requantize) {
            int32_t* y = reinterpret_cast<int32_t*>(y_raw) + plane * points;
            for (int64_t i = 0; i < points; ++i) y[i] = static_cast<int32_t>(acc[i]);
            continue;
          }
          const uint32_t b = static_cast<uint32_t>(bias[static_cast<size_t>(m)]);
          const float multiplier = multipliers[static_cast<size_t>(m)];
          dispatch_quantized(p.y_dtype, [&](auto tag) {
            using Q = decltype(tag);
            Q* y = reinterpret_cast<Q*>(y_raw) + plane * points;
            for (int64_t i = 0; i < points; ++i) {
              const auto sum = static_cast<int32_t>(acc[i] + b);
              y[i] = saturate_round<Q>(static_cast<float>(sum) * multiplier, y_zp);
            }
          });
        }
      },
      grain);
  return Status::ok();
}

// QLinearConv with constant int8 weights, as the QDQ fusion makes for convolutions: weight zero
// points 0, every other parameter a constant (w_scale one or per output channel, the bias too).
// oneDNN's int8 convolution sums in int32, exactly on VNNI hardware, with x's zero point as its
// source zero point (padding included), and requantizes in its epilogue as the reference loop
// does: (acc + bias) x x_scale x w_scale[m] / y_scale in fp32, rounded to nearest even, plus y's
// zero point, saturated. One pass writes y (no int32 plane in memory).
class OneDnnQLinearConv final : public Kernel {
 public:
  // nullptr (the reference loop runs) when the node is not of that form or oneDNN has no such
  // primitive here.
  static std::unique_ptr<Kernel> make(const KernelSpec& spec, const QuantConvPlan& plan) {
    if (!plan.requantize || !int8_weights_path(spec, plan.w, plan.w_zp,
                                               {plan.x_scale, plan.x_zp, plan.w_scale, plan.y_scale,
                                                plan.y_zp, plan.bias})) {
      return nullptr;
    }
    auto kernel = std::unique_ptr<OneDnnQLinearConv>(new OneDnnQLinearConv());
    if (!dnnl_builds([&] { kernel->build(spec, plan, *spec.constant(plan.w)); })) return nullptr;
    return kernel;
  }

  Status run(std::span<const Tensor* const> in, std::span<Tensor* const> out) override {
    dnnl::stream& stream = *stream_;
    primitive_.execute(stream, {{DNNL_ARG_SRC, src_.prepare(stream, in[0]->raw())},
                                {DNNL_ARG_WEIGHTS, weights_},
                                {DNNL_ARG_BIAS, bias_},
                                {DNNL_ARG_DST, dst_.prepare(stream, out[0]->raw())},
                                {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, x_zero_point_},
                                {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST, y_zero_point_}});
    dst_.finish(stream);
    stream.wait();
    return Status::ok();
  }

 private:
  OneDnnQLinearConv() = default;

  void build(const KernelSpec& spec, const QuantConvPlan& plan, const Tensor& w) {
    const float x_scale = spec.constant(plan.x_scale)->values<float>()[0];
    const float y_scale = spec.constant(plan.y_scale)->values<float>()[0];
    const auto w_scales = spec.constant(plan.w_scale)->values<float>();
    std::vector<float> multipliers(w_scales.size());
    for (size_t m = 0; m < multipliers.size(); ++m) {
      multipliers[m] = x_scale * w_scales[m] / y_scale;
    }
    std::vector<int32_t> bias(static_cast<size_t>(plan.out_c), 0);
    if (const Tensor* b = spec.constant(plan.bias)) {
      const auto values = b->values<int32_t>();
      bias.assign(values.begin(), values.end());
    }
    // oneDNN's geometry, in the node's own spatial rank.
    const size_t spatial = spec.in_dims(plan.x).size() - 2, lead = 3 - spatial;
    memory::dims strides, dilation, pad_l, pad_r;
    for (size_t i = lead; i < 3; ++i) {
      strides.push_back(plan.stride[i]);
      dilation.push_back(plan.dilation[i] - 1);
      pad_l.push_back(plan.pad[i]);
      // The trailing pad the last output reaches into; negative (inputs no window reaches)
      // gives the same output size as 0 under oneDNN's floor division.
      const int64_t extent = (plan.kernel[i] - 1) * plan.dilation[i] + 1;
      pad_r.push_back(std::max<int64_t>(
          0, (plan.out[i] - 1) * plan.stride[i] + extent - plan.in[i] - plan.pad[i]));
    }
    const auto int8_type = [](DType t) {
      return t == DType::kU8 ? memory::data_type::u8 : memory::data_type::s8;
    };
    const auto x_type = int8_type(spec.inputs[plan.x]->dtype);
    const auto y_type = int8_type(plan.y_dtype);
    const memory::dims x_dims = to_dnnl_dims(spec.in_dims(plan.x));
    const memory::dims y_dims = to_dnnl_dims(spec.out_dims(0));
    memory::dims w_dims = to_dnnl_dims(w.dims());
    if (plan.group > 1) {
      w_dims[0] /= plan.group;
      w_dims.insert(w_dims.begin(), plan.group);
    }
    // The program may keep a 4-D activation channels-last (program.cpp, assign_layouts).
    const auto layout = [&](bool channels_last) {
      return channels_last ? memory::format_tag::nhwc : plain_tag(x_dims.size());
    };
    const auto w_tag = plain_tag(w_dims.size());
    const auto any = memory::format_tag::any;
    const memory::desc x_user(x_dims, x_type, layout(input_channels_last(spec.node, 0)));
    const memory::desc y_user(y_dims, y_type, layout(output_channels_last(spec.node, 0)));
    const memory::desc w_user(w_dims, memory::data_type::s8, w_tag);
    const memory::desc bias_desc({plan.out_c}, memory::data_type::s32, memory::format_tag::x);
    // (acc + bias) x multiplier, rounded to nearest even, plus y's zero point, saturated: the
    // reference loop's requantization (ONNX Runtime's), in oneDNN's epilogue (round_post_op).
    dnnl::primitive_attr attr;
    attr.set_output_scales(multipliers.size() == 1 ? 0 : 1 << 1, multipliers);
    attr.set_post_ops(round_post_op());
    attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
    attr.set_zero_points(DNNL_ARG_DST, 0, {DNNL_RUNTIME_S32_VAL});
    const dnnl::engine& engine = *spec.context->engine;
    stream_ = spec.context->stream;
    const dnnl::convolution_forward::desc desc(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
        memory::desc(x_dims, x_type, any), memory::desc(w_dims, memory::data_type::s8, any),
        bias_desc, memory::desc(y_dims, y_type, any), strides, dilation, pad_l, pad_r);
    const dnnl::convolution_forward::primitive_desc pd(desc, attr, engine);
    primitive_ = dnnl::convolution_forward(pd);
    weights_ = dnnl::memory(pd.weights_desc(), engine);
    dnnl::memory user(w_user, engine, const_cast<std::byte*>(w.raw()));
    dnnl::reorder(user, weights_).execute(*stream_, user, weights_);
    stream_->wait();
    bias_ = dnnl::memory(bias_desc, engine);
    std::copy(bias.begin(), bias.end(), static_cast<int32_t*>(bias_.get_data_handle()));
    src_ = ActivationPort(engine, x_user, pd.src_desc(), true);
    dst_ = ActivationPort(engine, y_user, pd.dst_desc(), false);
    const auto zero_point = [&](size_t input) {
      dnnl::memory zp({{1}, memory::data_type::s32, memory::format_tag::x}, engine);
      *static_cast<int32_t*>(zp.get_data_handle()) = constant_zero_point(spec, input);
      return zp;
    };
    x_zero_point_ = zero_point(plan.x_zp);
    y_zero_point_ = zero_point(plan.y_zp);
  }

  dnnl::convolution_forward primitive_;
  dnnl::memory weights_, bias_, x_zero_point_, y_zero_point_;
  ActivationPort src_, dst_;
  dnnl::stream* stream_ = nullptr;
};

// Inputs: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B (i32 [M],
// optional).
Result<std::unique_ptr<Kernel>> make_qlinear_conv(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_static_shapes(spec, false));
  QuantConvPlan plan;
  plan.x_zp = 2;
  plan.w = 3;
  plan.w_zp = 5;
  plan.requantize = true;
  plan.x_scale = 1;
  plan.w_scale = 4;
  plan.y_scale = 6;
  plan.y_zp = 7;
  plan.bias = 8;
  HSCHED_RETURN_IF_ERROR(check_conv_geometry(spec, plan));
  HSCHED_RETURN_IF_ERROR(check_quant_param(spec, 1, 2, spec.inputs[0]->dtype, "x", -1).status());
  HSCHED_RETURN_IF_ERROR(
      check_quant_param(spec, 4, 5, spec.inputs[3]->dtype, "w", plan.out_c).status());
  plan.y_dtype = spec.has_input(7) ? spec.inputs[7]->dtype : DType::kU8;
  if (!is_quantized_dtype(plan.y_dtype) || spec.outputs[0]->dtype != plan.y_dtype) {
    return invalid_node(spec, "output is " + std::string(dtype_name(spec.outputs[0]->dtype)) +
                                  ", y_zero_point " + std::string(dtype_name(plan.y_dtype)) +
                                  " (both u8 or both i8)");
  }
  HSCHED_RETURN_IF_ERROR(check_quant_param(spec, 6, 7, plan.y_dtype, "y", -1).status());
  if (spec.has_input(8) && (spec.inputs[8]->dtype != DType::kI32 ||
                            spec.in_dims(8) != std::vector<int64_t>{plan.out_c})) {
    return invalid_node(spec, "B is " + std::string(dtype_name(spec.inputs[8]->dtype)) + " " +
                                  spec.inputs[8]->shape.to_string() + ", expected i32 " +
                                  std::to_string(plan.out_c));
  }
  if (auto fast = OneDnnQLinearConv::make(spec, plan)) return fast;
  const bool x_last = input_channels_last(spec.node, 0), y_last = output_channels_last(spec.node, 0);
  if (!x_last && !y_last) {
    return make_kernel([plan](std::span<const Tensor* const> in, std::span<Tensor* const> out) {
      return run_quant_conv(plan, in, out);
    });
  }
  // The reference loop reads and writes NCHW: a channels-last side goes through a transposed
  // copy.
  const std::vector<int64_t> x_dims = spec.in_dims(0), y_dims = spec.out_dims(0);
  const auto x_view = transpose_view(channels_last_dims(x_dims), {0, 3, 1, 2}, 1).simplified();
  const auto y_view = transpose_view(y_dims, {0, 2, 3, 1}, 1).simplified();
  const DType x_dtype = spec.inputs[0]->dtype;
  return make_kernel([=](std::span<const Tensor* const> in, std::span<Tensor* const> out) {
    std::vector<const Tensor*> inputs(in.begin(), in.end());
    Tensor x_nchw;
    if (x_last) {
      x_nchw = Tensor::uninitialized(x_dtype, x_dims);
      copy_strided(x_view, in[0]->raw(), x_nchw.raw());
      inputs[0] = &x_nchw;
    }
    Tensor y_nchw = y_last ? Tensor::uninitialized(plan.y_dtype, y_dims) : Tensor();
    Tensor* y = y_last ? &y_nchw : out[0];
    HSCHED_RETURN_IF_ERROR(run_quant_conv(plan, inputs, std::span<Tensor* const>(&y, 1)));
    if (y_last) copy_strided(y_view, y_nchw.raw(), out[0]->raw());
    return Status::ok();
  });
}

// Inputs: x, w, x_zero_point (optional, one value), w_zero_point (optional, one value or one per
// output channel); output i32.
Result<std::unique_ptr<Kernel>> make_conv_integer(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_static_shapes(spec, false));
  QuantConvPlan plan;
  HSCHED_RETURN_IF_ERROR(check_conv_geometry(spec, plan));
  if (spec.outputs[0]->dtype != DType::kI32) {
    return invalid_node(spec, "output is " + std::string(dtype_name(spec.outputs[0]->dtype)) +
                                  " (ConvInteger gives i32)");
  }
  const auto check_zp = [&](size_t i, const char* what, int64_t channels) -> Status {
    if (!spec.has_input(i)) return Status::ok();
    const Value& zp = *spec.inputs[i];
    const Value& data = *spec.inputs[i - 2];
    const int64_t count = zp.shape.elements();
    if (zp.dtype != data.dtype || zp.shape.rank() > 1 || (count != 1 && count != channels)) {
      return invalid_node(spec, std::string(what) + " is " + std::string(dtype_name(zp.dtype)) +
                                    " " + zp.shape.to_string() + "; expected " +
                                    std::string(dtype_name(data.dtype)) + " of one value" +
                                    (channels > 1 ? " or " + std::to_string(channels) : ""));
    }
    return Status::ok();
  };
  HSCHED_RETURN_IF_ERROR(check_zp(2, "x_zero_point", 1));
  HSCHED_RETURN_IF_ERROR(check_zp(3, "w_zero_point", plan.out_c));
  return make_kernel([plan](std::span<const Tensor* const> in, std::span<Tensor* const> out) {
    return run_quant_conv(plan, in, out);
  });
}

}  // namespace

void register_quant_conv_kernels(KernelRegistry& registry) {
  registry.add("QLinearConv", make_qlinear_conv);
  registry.add("ConvInteger", make_conv_integer);
}

}  // namespace hsched::cpu
