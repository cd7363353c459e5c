// Conv, ConvTranspose, MaxPool and AveragePool through oneDNN primitives, created once per
// compiled program. Convolutions compute channels-last (NHWC), which oneDNN 2.6 runs fastest on
// AVX-512 (brgconv, brdgmm for depthwise); values the program keeps plain are reordered at the
// boundary, so the program's layout pass decides how many reorders remain.
#include "backends/cpu/kernels/dnnl_int8.h"
#include "backends/cpu/kernels/dnnl_util.h"
#include "backends/cpu/kernels/layout_util.h"

namespace hsched::cpu {

// plain_max_pool.cpp: MaxPool with Indices or of i8/u8, which this file's oneDNN kernel lacks.
bool needs_plain_max_pool(const KernelSpec& spec);
Result<std::unique_ptr<Kernel>> make_plain_max_pool(const KernelSpec& spec);

namespace {

using dnnl::algorithm;
using dnnl::prop_kind;

std::vector<int64_t> kernel_shape(const KernelSpec& spec, size_t weight_input) {
  auto kernel = spec.node.attr_ints("kernel_shape");
  if (kernel.empty() && spec.has_input(weight_input)) {
    const auto& w = spec.in_dims(weight_input);
    kernel.assign(w.begin() + 2, w.end());
  }
  return kernel;
}

// Everything the primitive and the compile-time weight reorder read, checked against the real
// shapes: X [N, C_in, s...], Y [N, C_out, s'...], W [C_out, C_in/g, k...] (Conv) or
// [C_in, C_out/g, k...] (ConvTranspose), kernel_shape = k, B [C_out], the output f32.
Status check_conv_shapes(const KernelSpec& spec, bool transposed, int64_t group) {
  const auto& x = spec.in_dims(0);
  const auto& y = spec.out_dims(0);
  const auto& w = spec.in_dims(1);
  if (spec.outputs[0]->dtype != DType::kF32) {
    return invalid_node(spec, "output is " + std::string(dtype_name(spec.outputs[0]->dtype)) +
                                  ", the inputs are f32");
  }
  if (y.size() != x.size() || y[0] != x[0]) {
    return invalid_node(spec, "output " + dims_text(y) + " does not match input " + dims_text(x));
  }
  if (group < 1) return invalid_node(spec, "group " + std::to_string(group) + " must be >= 1");
  if (w.size() != x.size()) {
    return invalid_node(spec, "weights " + dims_text(w) + " do not have the input's rank " +
                                  std::to_string(x.size()));
  }
  const int64_t in_c = x[1], out_c = y[1];
  // Conv: w[0] = C_out, w[1] * g = C_in; ConvTranspose: w[0] = C_in, w[1] * g = C_out.
  const int64_t w_outer = transposed ? in_c : out_c, w_inner = transposed ? out_c : in_c;
  if (in_c % group != 0 || out_c % group != 0 || w[0] != w_outer || w[1] * group != w_inner) {
    return invalid_node(spec, "weights " + dims_text(w) + " do not match input channels " +
                                  std::to_string(in_c) + ", output channels " +
                                  std::to_string(out_c) + " and group " + std::to_string(group));
  }
  for (size_t i = 2; i < w.size(); ++i) {
    if (w[i] < 1) return invalid_node(spec, "weights " + dims_text(w) + " have an empty kernel");
  }
  const auto declared = spec.node.attr_ints("kernel_shape");
  if (!declared.empty() && !std::equal(declared.begin(), declared.end(), w.begin() + 2, w.end())) {
    return invalid_node(
        spec, "kernel_shape " + dims_text(declared) + " does not match weights " + dims_text(w));
  }
  if (spec.has_input(2) && !is_post_op_input(post_ops_of(spec.node), 2) &&
      spec.in_dims(2) != std::vector<int64_t>{out_c}) {
    return invalid_node(spec, "bias " + spec.inputs[2]->shape.to_string() + " is not [" +
                                  std::to_string(out_c) + "]");
  }
  return Status::ok();
}

class ConvKernel final : public Kernel {
 public:
  ConvKernel(const KernelSpec& spec, bool transposed) : spec_(spec), transposed_(transposed) {}

  Status build() {
    const Node& node = spec_.node;
    CpuContext& ctx = *spec_.context;
    const auto& x = spec_.in_dims(0);
    const auto& y = spec_.out_dims(0);
    if (x.size() < 3 || x.size() > 5) return unsupported(spec_, "only 1-D to 3-D convolutions");
    const size_t spatial = x.size() - 2;
    const int64_t group = node.attr_int("group", 1);
    if (!spec_.has_input(1)) return invalid_node(spec_, "needs weights (input 1)");
    HSCHED_RETURN_IF_ERROR(check_conv_shapes(spec_, transposed_, group));
    const auto& w = spec_.in_dims(1);
    HSCHED_ASSIGN_OR_RETURN(SpatialParams p,
                            spatial_params(spec_, kernel_shape(spec_, 1), spatial, transposed_));

    // ONNX weights: Conv [OC, IC/g, k...]; ConvTranspose [IC, OC/g, k...]. oneDNN wants
    // [g, OC/g, IC/g, k...]: the same bytes for Conv; transposed "io" order for ConvTranspose.
    const int64_t oc = y[1], ic = x[1];
    memory::dims wdims{group, oc / group, ic / group};
    wdims.insert(wdims.end(), w.begin() + 2, w.end());
    memory::format_tag wtag;
    using tag = memory::format_tag;
    if (transposed_) {
      wtag = spatial == 1 ? tag::acbd : spatial == 2 ? tag::acbde : tag::acbdef;  // g,i,o,k
    } else {
      wtag = spatial == 1 ? tag::goiw : spatial == 2 ? tag::goihw : tag::goidhw;
    }
    if (group == 1) {
      wdims.erase(wdims.begin());
      if (transposed_)
        wtag = spatial == 1 ? tag::bac : spatial == 2 ? tag::bacd : tag::bacde;
      else
        wtag = plain_tag(wdims.size());
    }
    // bf16 (the plan's choice): activations and weights reordered to bf16 on the way in, sums
    // and the output in f32, so post-ops and the next op see f32 as always. int8: weights
    // quantized here, the activation at each run (dnnl_int8.h), the output f32 as well.
    int8_ = computes_in_int8(node);
    if (int8_ && (transposed_ || spec_.constant(1) == nullptr)) {
      return unsupported(spec_, "int8 needs a Conv with constant weights");
    }
    using dt = memory::data_type;
    const dt compute = computes_in_bf16(node) ? dt::bf16 : dt::f32;
    const memory::desc user_w(wdims, int8_ ? dt::s8 : dt::f32, wtag);
    const memory::desc any_w(wdims, int8_ ? dt::s8 : compute, tag::any);
    const memory::desc src_md = f32_desc(x, true, int8_ ? dt::u8 : compute);
    Int8Weights quantized;
    if (int8_) {
      const Tensor& wt = *spec_.constant(1);
      quantized = quantize_weights(wt.values<float>(), oc, wt.elements() / oc);
    }
    const memory::desc dst_md = f32_desc(y, true);
    post_ops_ = post_ops_of(node);
    has_bias_ = spec_.has_input(2) && !is_post_op_input(post_ops_, 2);
    const memory::desc bias_md =
        has_bias_ ? memory::desc({oc}, memory::data_type::f32, tag::a) : memory::desc();

    std::vector<memory::desc> add_mds;
    for (const auto& op : post_ops_) {
      if (op.kind != PostOp::Kind::kAdd) continue;
      const auto input = static_cast<size_t>(op.input);
      if (spec_.in_dims(input) != y) {
        return unsupported(spec_, "a fused Add must have the output's shape");
      }
      // A residual added first, stored like the output (NHWC on both sides, where no reorder
      // stands between the primitive and the output buffer): copied into the output before the
      // primitive runs, then added as a `sum` post-op.
      if (&op == &post_ops_.front() && !int8_ && output_channels_last(node, 0) &&
          input_channels_last(node, input) && y.size() == 4) {
        sum_input_ = static_cast<int>(input);
        add_mds.emplace_back();
        add_ports_.emplace_back();
        continue;
      }
      add_mds.push_back(dst_md);
      add_ports_.emplace_back(*ctx.engine,
                              f32_desc(y, input_channels_last(node, static_cast<size_t>(op.input))),
                              dst_md, true);
    }
    // Creates the primitive with the post-ops before `tail_from_`; returns its implementation.
    auto create = [&]() -> std::string {
      const std::vector<PostOp> head(post_ops_.begin(),
                                     post_ops_.begin() + static_cast<std::ptrdiff_t>(tail_from_));
      dnnl::post_ops chain;
      if (int8_) append_int8_scale(chain, static_cast<int>(y.size()));
      dnnl::primitive_attr attr = make_post_op_attr(head, add_mds, chain);
      if (int8_) set_int8_params(attr, quantized.scales, 1);
      if (transposed_) {
        dnnl::deconvolution_forward::desc d(prop_kind::forward_inference,
                                            algorithm::deconvolution_direct, src_md, any_w, bias_md,
                                            dst_md, p.strides, p.dilation, p.pad_l, p.pad_r);
        auto pd = dnnl::deconvolution_forward::primitive_desc(d, attr, *ctx.engine);
        primitive_ = dnnl::deconvolution_forward(pd);
        weights_desc_ = pd.weights_desc();
        return pd.impl_info_str();
      }
      dnnl::convolution_forward::desc d(prop_kind::forward_inference, algorithm::convolution_direct,
                                        src_md, any_w, bias_md, dst_md, p.strides, p.dilation,
                                        p.pad_l, p.pad_r);
      auto pd = dnnl::convolution_forward::primitive_desc(d, attr, *ctx.engine);
      primitive_ = dnnl::convolution_forward(pd);
      weights_desc_ = pd.weights_desc();
      return pd.impl_info_str();
    };
    tail_from_ = post_ops_.size();
    const std::string impl = create();
    // oneDNN 2.6's gemm convolution (chosen for strides it has no JIT kernel for) adds a binary
    // post-op's tensor at the wrong elements after an eltwise post-op: Conv(strides [1, 2]) ->
    // Relu -> Add(x) differed by up to 1.6. There the chain stops before its first binary add,
    // and a binary primitive, run in place on the output, does that add and the rest.
    size_t add = 0, first_binary = post_ops_.size();
    for (size_t i = 0; i < post_ops_.size() && first_binary == post_ops_.size(); ++i) {
      if (post_ops_[i].kind == PostOp::Kind::kAdd && !add_mds[add++].is_zero()) first_binary = i;
    }
    if (impl.find("gemm") != std::string::npos && first_binary < post_ops_.size()) {
      tail_from_ = first_binary;
      create();
      const size_t head_adds = static_cast<size_t>(std::count_if(
          post_ops_.begin(), post_ops_.begin() + static_cast<std::ptrdiff_t>(first_binary),
          [](const PostOp& op) { return op.kind == PostOp::Kind::kAdd; }));
      const std::vector<PostOp> rest(
          post_ops_.begin() + static_cast<std::ptrdiff_t>(first_binary) + 1, post_ops_.end());
      const std::vector<memory::desc> rest_mds(
          add_mds.begin() + static_cast<std::ptrdiff_t>(head_adds) + 1, add_mds.end());
      dnnl::binary::desc d(algorithm::binary_add, dst_md, add_mds[head_adds], dst_md);
      tail_ = dnnl::binary(
          dnnl::binary::primitive_desc(d, make_post_op_attr(rest, rest_mds), *ctx.engine));
    }
    weights_port_ = ActivationPort(*ctx.engine, user_w, weights_desc_, true);
    if (const Tensor* wt = spec_.constant(1)) {
      // Weights are reordered once, here, into the primitive's preferred format.
      weights_ = dnnl::memory(weights_desc_, *ctx.engine);
      const void* data = int8_ ? static_cast<const void*>(quantized.data.data()) : wt->raw();
      dnnl::memory user(user_w, *ctx.engine, const_cast<void*>(data));
      dnnl::reorder(user, *weights_).execute(*ctx.stream, user, *weights_);
      ctx.stream->wait();
    }
    bias_ = dnnl::memory(bias_md, *ctx.engine, DNNL_MEMORY_NONE);
    const memory::desc user_src = f32_desc(x, input_channels_last(node, 0));
    if (int8_) {
      weight_scales_ = std::move(quantized.scales);
      if (has_bias_) scaled_bias_.resize(static_cast<size_t>(oc));
      int8_src_ = DynamicInt8Input(*ctx.engine, user_src, src_md, spec_.inputs[0]->shape.elements(),
                                   static_cast<int>(y.size()));
    } else {
      src_port_ = ActivationPort(*ctx.engine, user_src, src_md, true);
    }
    dst_port_ =
        ActivationPort(*ctx.engine, f32_desc(y, output_channels_last(node, 0)), dst_md, false);
    return Status::ok();
  }

  Status run(std::span<const Tensor* const> inputs, std::span<Tensor* const> outputs) override {
    dnnl::stream& stream = *spec_.context->stream;
    std::unordered_map<int, dnnl::memory> args;
    args[DNNL_ARG_WEIGHTS] = weights_ ? *weights_ : weights_port_.prepare(stream, inputs[1]->raw());
    const void* bias = has_bias_ ? inputs[2]->raw() : nullptr;
    if (int8_) {
      args[DNNL_ARG_SRC] = int8_src_.prepare(stream, inputs[0]->raw());
      args[DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC] = int8_src_.zero_point();
      args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1] = int8_src_.scale_memory();
      // oneDNN 2.6 adds the bias before the output scales: in the sums' units.
      if (has_bias_) {
        const auto given = inputs[2]->values<float>();
        const float scale = int8_src_.scale();
        for (size_t c = 0; c < scaled_bias_.size(); ++c) {
          scaled_bias_[c] = given[c] / (scale * weight_scales_[c]);
        }
        bias = scaled_bias_.data();
      }
    } else {
      args[DNNL_ARG_SRC] = src_port_.prepare(stream, inputs[0]->raw());
    }
    if (has_bias_) {
      bias_.set_data_handle(const_cast<void*>(bias));
      args[DNNL_ARG_BIAS] = bias_;
    }
    if (sum_input_ >= 0) {
      const Tensor& residual = *inputs[static_cast<size_t>(sum_input_)];
      if (residual.raw() != outputs[0]->raw()) {
        parallel_copy(outputs[0]->raw(), residual.raw(), residual.byte_size());
      }
    }
    // Post-ops from tail_from_ on belong to tail_: its src_1 first, then its own chain's.
    std::unordered_map<int, dnnl::memory> tail_args;
    size_t add = 0;
    for (size_t i = 0; i < post_ops_.size(); ++i) {
      if (post_ops_[i].kind != PostOp::Kind::kAdd) continue;
      if (static_cast<int>(i) == 0 && sum_input_ >= 0) {
        ++add;
        continue;
      }
      const dnnl::memory m =
          add_ports_[add++].prepare(stream, inputs[static_cast<size_t>(post_ops_[i].input)]->raw());
      if (i < tail_from_) {
        const int index = (int8_ ? 1 : 0) + dnnl_post_op_index(post_ops_, i);  // after the scale
        args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(index) | DNNL_ARG_SRC_1] = m;
      } else if (i == tail_from_) {
        tail_args[DNNL_ARG_SRC_1] = m;
      } else {
        const int index =
            dnnl_post_op_index(post_ops_, i) - dnnl_post_op_index(post_ops_, tail_from_ + 1);
        tail_args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(index) | DNNL_ARG_SRC_1] = m;
      }
    }
    args[DNNL_ARG_DST] = dst_port_.prepare(stream, outputs[0]->raw());
    primitive_.execute(stream, args);
    if (tail_) {
      tail_args[DNNL_ARG_SRC_0] = args[DNNL_ARG_DST];
      tail_args[DNNL_ARG_DST] = args[DNNL_ARG_DST];
      tail_->execute(stream, tail_args);
    }
    dst_port_.finish(stream);
    stream.wait();
    return Status::ok();
  }

 private:
  KernelSpec spec_;
  bool transposed_;
  bool int8_ = false;
  bool has_bias_ = false;
  int sum_input_ = -1;  // input added as a `sum` post-op (copied into the output first), or -1
  std::vector<PostOp> post_ops_;
  size_t tail_from_ = 0;  // post_ops_ from here on run in tail_ (see build)
  dnnl::primitive primitive_;
  std::optional<dnnl::primitive> tail_;
  memory::desc weights_desc_;
  std::optional<dnnl::memory> weights_;
  dnnl::memory bias_;
  ActivationPort weights_port_, src_port_, dst_port_;
  std::vector<ActivationPort> add_ports_;
  DynamicInt8Input int8_src_;         // int8: the activation, quantized at each run
  std::vector<float> weight_scales_;  // int8: per output channel
  std::vector<float> scaled_bias_;    // int8: the bias in the int32 sums' units, each run
};

class PoolKernel final : public Kernel {
 public:
  explicit PoolKernel(const KernelSpec& spec) : spec_(spec) {}

  Status build() {
    const Node& node = spec_.node;
    CpuContext& ctx = *spec_.context;
    const auto& x = spec_.in_dims(0);
    const auto& y = spec_.out_dims(0);
    if (x.size() < 3 || x.size() > 5) return unsupported(spec_, "only 1-D to 3-D pooling");
    if (spec_.outputs[0]->dtype != DType::kF32 || y.size() != x.size() || y[0] != x[0] ||
        y[1] != x[1]) {
      return invalid_node(spec_, "output " + std::string(dtype_name(spec_.outputs[0]->dtype)) +
                                     " " + dims_text(y) + " does not match input f32 " +
                                     dims_text(x));
    }
    if (spec_.outputs.size() > 1 && spec_.outputs[1] != nullptr) {
      return unsupported(spec_, "the Indices output of MaxPool is not supported");
    }
    // storage_order only numbers the Indices output, which plain_max_pool.cpp serves.
    HSCHED_ASSIGN_OR_RETURN(SpatialParams p, spatial_params(spec_, node.attr_ints("kernel_shape"),
                                                            x.size() - 2, false));
    algorithm alg = algorithm::pooling_max;
    if (node.op_type == "AveragePool") {
      alg = node.attr_int("count_include_pad", 0) ? algorithm::pooling_avg_include_padding
                                                  : algorithm::pooling_avg_exclude_padding;
    }
    if (alg == algorithm::pooling_avg_include_padding) plan_divisor_fix(p, x, y);
    const memory::desc src_md = f32_desc(x, true);
    const memory::desc dst_md = f32_desc(y, true);
    dnnl::pooling_v2_forward::desc d(prop_kind::forward_inference, alg, src_md, dst_md, p.strides,
                                     p.kernel, p.dilation, p.pad_l, p.pad_r);
    auto pd = dnnl::pooling_v2_forward::primitive_desc(d, *ctx.engine);
    primitive_ = dnnl::pooling_v2_forward(pd);
    src_port_ =
        ActivationPort(*ctx.engine, f32_desc(x, input_channels_last(node, 0)), src_md, true);
    dst_port_ =
        ActivationPort(*ctx.engine, f32_desc(y, output_channels_last(node, 0)), dst_md, false);
    return Status::ok();
  }

  Status run(std::span<const Tensor* const> inputs, std::span<Tensor* const> outputs) override {
    dnnl::stream& stream = *spec_.context->stream;
    std::unordered_map<int, dnnl::memory> args;
    args[DNNL_ARG_SRC] = src_port_.prepare(stream, inputs[0]->raw());
    args[DNNL_ARG_DST] = dst_port_.prepare(stream, outputs[0]->raw());
    primitive_.execute(stream, args);
    dst_port_.finish(stream);
    stream.wait();
    if (!divisor_fix_.empty()) fix_divisors(*outputs[0]);
    return Status::ok();
  }

 private:
  // AveragePool with count_include_pad divides by the window clipped to the padded input (the
  // declared pads), as ONNX Runtime and PyTorch do. oneDNN divides every window by the whole
  // kernel, which differs only where ceil_mode makes a window reach past the declared trailing
  // pad. For those outputs this keeps, per spatial axis, kernel / clipped extent; run() scales
  // them after oneDNN (nothing to do, and nothing kept, otherwise).
  void plan_divisor_fix(const SpatialParams& p, const std::vector<int64_t>& x,
                        const std::vector<int64_t>& y) {
    bool needed = false;
    std::vector<std::vector<float>> scales(p.kernel.size());
    for (size_t i = 0; i < p.kernel.size(); ++i) {
      const int64_t in = x[i + 2], k = p.kernel[i], s = p.strides[i];
      const int64_t low = -p.pad_l[i], high = in + p.declared_pad_r[i];
      for (int64_t o = 0; o < y[i + 2]; ++o) {
        const int64_t start = o * s - p.pad_l[i];
        const int64_t extent = std::min(start + k, high) - std::max(start, low);
        scales[i].push_back(static_cast<float>(k) /
                            static_cast<float>(std::max<int64_t>(extent, 1)));
        needed |= extent != k;
      }
    }
    if (needed) divisor_fix_ = std::move(scales);
  }

  void fix_divisors(Tensor& y) const {
    const auto& dims = y.dims();
    const bool channels_last = output_channels_last(spec_.node, 0);
    const size_t spatial = dims.size() - 2;
    const int64_t channels = dims[1];
    int64_t points = 1;
    for (size_t i = 0; i < spatial; ++i) points *= dims[i + 2];
    float* data = y.values<float>().data();
    for (int64_t n = 0; n < dims[0]; ++n) {
      for (int64_t point = 0; point < points; ++point) {
        float scale = 1.0f;
        for (int64_t rest = point, i = static_cast<int64_t>(spatial) - 1; i >= 0; --i) {
          scale *= divisor_fix_[static_cast<size_t>(i)][static_cast<size_t>(rest % dims[i + 2])];
          rest /= dims[i + 2];
        }
        if (scale == 1.0f) continue;
        for (int64_t c = 0; c < channels; ++c) {
          const int64_t at = channels_last ? (n * points + point) * channels + c
                                           : (n * channels + c) * points + point;
          data[at] *= scale;
        }
      }
    }
  }

  KernelSpec spec_;
  dnnl::primitive primitive_;
  ActivationPort src_port_, dst_port_;
  std::vector<std::vector<float>> divisor_fix_;  // per spatial axis and output index
};

bool all_f32(const KernelSpec& spec) {
  for (const Value* v : spec.inputs) {
    if (v != nullptr && v->dtype != DType::kF32) return false;
  }
  return true;
}

template <typename K, typename... Args>
Result<std::unique_ptr<Kernel>> build_kernel(const KernelSpec& spec, Args... args) {
  if (!all_f32(spec)) return unsupported(spec, "only f32 inputs are supported");
  if (!spec.has_input(0) || spec.outputs.empty() || spec.outputs[0] == nullptr) {
    return invalid_node(spec, "needs input 0 and output 0");
  }
  return dnnl_try(spec, [&]() -> Result<std::unique_ptr<Kernel>> {
    auto kernel = std::make_unique<K>(spec, args...);
    HSCHED_RETURN_IF_ERROR(kernel->build());
    return std::unique_ptr<Kernel>(std::move(kernel));
  });
}

}  // namespace

void register_dnnl_conv_kernels(KernelRegistry& registry) {
  registry.add("Conv",
               [](const KernelSpec& spec) { return build_kernel<ConvKernel>(spec, false); });
  registry.add("ConvTranspose",
               [](const KernelSpec& spec) { return build_kernel<ConvKernel>(spec, true); });
  registry.add("MaxPool", [](const KernelSpec& spec) {
    return needs_plain_max_pool(spec) ? make_plain_max_pool(spec) : build_kernel<PoolKernel>(spec);
  });
  registry.add("AveragePool",
               [](const KernelSpec& spec) { return build_kernel<PoolKernel>(spec); });
}

}  // namespace hsched::cpu
