#include "backends/cpu/kernels/dnnl_util.h"

#include <string>

#include "backends/cpu/kernels/layout_util.h"

namespace hsched::cpu {

memory::dims to_dnnl_dims(const std::vector<int64_t>& dims) {
  return memory::dims(dims.begin(), dims.end());
}

memory::format_tag plain_tag(size_t rank) {
  using tag = memory::format_tag;
  static const tag kTags[] = {tag::undef, tag::a, tag::ab, tag::abc, tag::abcd, tag::abcde,
                              tag::abcdef};
  return rank < std::size(kTags) ? kTags[rank] : tag::undef;
}

memory::format_tag channels_last_tag(size_t rank) {
  using tag = memory::format_tag;
  switch (rank) {
    case 3: return tag::acb;
    case 4: return tag::acdb;
    case 5: return tag::acdeb;
    default: return plain_tag(rank);
  }
}

memory::desc f32_desc(const std::vector<int64_t>& dims, bool channels_last,
                      memory::data_type type) {
  const size_t rank = dims.size();
  return memory::desc(to_dnnl_dims(dims), type,
                      channels_last ? channels_last_tag(rank) : plain_tag(rank));
}

Result<SpatialParams> spatial_params(const KernelSpec& spec, const std::vector<int64_t>& kernel,
                                     size_t spatial_rank, bool transposed) {
  const Node& node = spec.node;
  const auto& in = spec.in_dims(0);
  const auto& out = spec.out_dims(0);
  if (kernel.size() != spatial_rank || in.size() != spatial_rank + 2 ||
      out.size() != spatial_rank + 2) {
    return unsupported(spec, "kernel rank does not match the input's spatial rank");
  }
  auto strides = node.attr_ints("strides");
  auto dilations = node.attr_ints("dilations");
  auto pads = node.attr_ints("pads");
  if (strides.empty()) strides.assign(spatial_rank, 1);
  if (dilations.empty()) dilations.assign(spatial_rank, 1);
  if (pads.empty()) pads.assign(2 * spatial_rank, 0);
  if (strides.size() != spatial_rank || dilations.size() != spatial_rank ||
      pads.size() != 2 * spatial_rank) {
    return unsupported(spec, "strides, dilations or pads do not match the spatial rank");
  }
  // Models are untrusted: every size is bounded by kMaxDim, so that the sums below stay far
  // from int64's limit; the products are checked.
  const auto check_range = [&](const std::vector<int64_t>& values, const char* name,
                               int64_t lowest) -> Status {
    for (int64_t v : values) {
      if (v < lowest || v > kMaxDim) {
        return invalid_node(spec, "attribute '" + std::string(name) + "' has the value " +
                                      std::to_string(v) + ", out of [" + std::to_string(lowest) +
                                      ", " + std::to_string(kMaxDim) + "]");
      }
    }
    return Status::ok();
  };
  HSCHED_RETURN_IF_ERROR(check_range(kernel, "kernel_shape", 1));
  HSCHED_RETURN_IF_ERROR(check_range(strides, "strides", 1));
  HSCHED_RETURN_IF_ERROR(check_range(dilations, "dilations", 1));
  HSCHED_RETURN_IF_ERROR(check_range(pads, "pads", 0));
  const std::string auto_pad = node.attr_string("auto_pad", "NOTSET");
  SpatialParams p;
  for (size_t i = 0; i < spatial_rank; ++i) {
    const int64_t k = kernel[i], s = strides[i], d = dilations[i];
    int64_t extent = 0;
    if (__builtin_mul_overflow(k - 1, d, &extent) || extent >= kMaxDim) {
      return invalid_node(spec, "attribute 'kernel_shape' " + std::to_string(k) +
                                    " with 'dilations' " + std::to_string(d) +
                                    " spans more than " + std::to_string(kMaxDim));
    }
    ++extent;
    // The input and output sizes along this axis, seen from the direct convolution's side.
    const int64_t small = transposed ? in[i + 2] : out[i + 2];
    const int64_t large = transposed ? out[i + 2] : in[i + 2];
    // (small - 1) * s, the offset of the last window; it cannot exceed large + both pads (and a
    // ConvTranspose's output_padding, each at most kMaxDim) when the sizes follow from the
    // attributes.
    int64_t last = 0;
    if (__builtin_mul_overflow(small - 1, s, &last) || last > 4 * kMaxDim) {
      return unsupported(spec, "output size " + std::to_string(out[i + 2]) +
                                   " does not follow from the attributes");
    }
    int64_t pl = pads[i], pr = pads[i + spatial_rank];
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const int64_t total = std::max<int64_t>(0, last + extent - large);
      pl = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pr = total - pl;
    } else if (auto_pad == "VALID") {
      pl = pr = 0;
    } else if (auto_pad != "NOTSET") {
      return unsupported(spec, "auto_pad '" + auto_pad + "' is not supported");
    }
    p.declared_pad_r.push_back(pr);
    if (transposed) {
      // oneDNN's deconvolution size is exact: out = (in - 1) * s + extent - pl - pr, so the
      // right pad absorbs output_padding and output_shape. It goes negative where
      // output_padding exceeds the end pad: oneDNN then appends outputs no tap reaches (bias
      // and post-ops only), which is ONNX's definition (checked in tests/backends/cpu/dnnl_test).
      pr = last + extent - large - pl;
    } else {
      // ceil_mode (pools) needs more room on the right than the pads give.
      pr = std::max(pr, last + extent - large - pl);
    }
    if ((large + pl + pr - extent) / s + 1 != small) {
      return unsupported(spec, "output size " + std::to_string(out[i + 2]) +
                                   " does not follow from the attributes");
    }
    p.kernel.push_back(k);
    p.strides.push_back(s);
    p.dilation.push_back(d - 1);
    p.pad_l.push_back(pl);
    p.pad_r.push_back(pr);
  }
  return p;
}

dnnl::post_ops round_post_op() {
  dnnl::post_ops round;
  round.append_eltwise(1.0f, dnnl::algorithm::eltwise_round, 0.0f, 0.0f);
  return round;
}

dnnl::primitive_attr make_post_op_attr(const std::vector<PostOp>& ops,
                                       const std::vector<memory::desc>& add_mds,
                                       dnnl::post_ops chain) {
  size_t add = 0;
  using alg = dnnl::algorithm;
  for (const auto& op : ops) {
    switch (op.kind) {
      case PostOp::Kind::kRelu: chain.append_eltwise(1.f, alg::eltwise_relu, 0.f, 0.f); break;
      case PostOp::Kind::kLeakyRelu:
        chain.append_eltwise(1.f, alg::eltwise_relu, op.alpha, 0.f);
        break;
      case PostOp::Kind::kClip:
        chain.append_eltwise(1.f, alg::eltwise_clip, op.alpha, op.beta);
        break;
      case PostOp::Kind::kSigmoid: chain.append_eltwise(1.f, alg::eltwise_logistic, 0.f, 0.f); break;
      case PostOp::Kind::kHardSwish:
        chain.append_eltwise(1.f, alg::eltwise_hardswish, 0.f, 0.f);
        break;
      case PostOp::Kind::kHardSigmoid:
        // max(0, min(1, alpha*x + beta)) as linear then clip.
        chain.append_eltwise(1.f, alg::eltwise_linear, op.alpha, op.beta);
        chain.append_eltwise(1.f, alg::eltwise_clip, 0.f, 1.f);
        break;
      case PostOp::Kind::kSwish: chain.append_eltwise(1.f, alg::eltwise_swish, 1.f, 0.f); break;
      case PostOp::Kind::kGeluErf: chain.append_eltwise(1.f, alg::eltwise_gelu_erf, 0.f, 0.f); break;
      case PostOp::Kind::kTanh: chain.append_eltwise(1.f, alg::eltwise_tanh, 0.f, 0.f); break;
      case PostOp::Kind::kScale:
        chain.append_eltwise(1.f, alg::eltwise_linear, op.alpha, 0.f);
        break;
      case PostOp::Kind::kAdd: {
        const memory::desc& md = add_mds.at(add++);
        if (md.is_zero()) chain.append_sum(1.f);
        else chain.append_binary(alg::binary_add, md);
        break;
      }
    }
  }
  dnnl::primitive_attr attr;
  attr.set_post_ops(chain);
  return attr;
}

int dnnl_post_op_index(const std::vector<PostOp>& ops, size_t i) {
  int index = 0;
  for (size_t k = 0; k < i && k < ops.size(); ++k) {
    index += ops[k].kind == PostOp::Kind::kHardSigmoid ? 2 : 1;
  }
  return index;
}

ActivationPort::ActivationPort(const dnnl::engine& engine, const memory::desc& user,
                               const memory::desc& inner, bool is_input)
    : user_(user, engine, DNNL_MEMORY_NONE), is_input_(is_input) {
  if (user == inner) return;
  inner_ = dnnl::memory(inner, engine);
  reorder_ = is_input ? dnnl::reorder(user_, inner_) : dnnl::reorder(inner_, user_);
}

dnnl::memory& ActivationPort::prepare(dnnl::stream& stream, const void* user_data) {
  user_.set_data_handle(const_cast<void*>(user_data));
  if (!reorder_) return user_;
  if (is_input_) reorder_->execute(stream, user_, inner_);
  return inner_;
}

void ActivationPort::finish(dnnl::stream& stream) {
  if (reorder_ && !is_input_) reorder_->execute(stream, inner_, user_);
}

}  // namespace hsched::cpu
