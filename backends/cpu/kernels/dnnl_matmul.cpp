// Gemm and MatMul through oneDNN's matmul primitive, created once per compiled program. Constant
// right-hand sides (the weights of linear layers) are reordered once into the primitive's
// preferred format. Gemm's alpha, beta and C become post-ops or the bias.
#include "backends/cpu/kernels/dnnl_int8.h"
#include "backends/cpu/kernels/dnnl_util.h"
#include "backends/cpu/kernels/layout_util.h"

namespace hsched::cpu {
namespace {

// The node's output must be f32 with exactly the dims the inputs give: the primitive writes
// those, whatever the graph declares.
Status check_output(const KernelSpec& spec, const std::vector<int64_t>& expected) {
  if (spec.outputs.empty() || spec.outputs[0] == nullptr) {
    return invalid_node(spec, "needs output 0");
  }
  if (spec.outputs[0]->dtype != DType::kF32) {
    return invalid_node(spec, "output is " + std::string(dtype_name(spec.outputs[0]->dtype)) +
                                  ", the inputs are f32");
  }
  if (spec.out_dims(0) != expected) {
    return invalid_node(spec, "output shape " + spec.outputs[0]->shape.to_string() +
                                  " does not match the inputs, which give " + dims_text(expected));
  }
  return Status::ok();
}

memory::desc strided_desc(const memory::dims& dims, const memory::dims& strides) {
  return memory::desc(dims, memory::data_type::f32, strides);
}

class MatMulKernel final : public Kernel {
 public:
  explicit MatMulKernel(const KernelSpec& spec) : spec_(spec), int8_(computes_in_int8(spec.node)) {}

  Status build_matmul() {
    auto a = spec_.in_dims(0);
    auto b = spec_.in_dims(1);
    const bool transposed_b = matmul_transposes_b(spec_.node);
    if (transposed_b) {
      // Input 1 holds B with its last two axes swapped: B itself is a strided view of it.
      if (b.size() < 2) return unsupported(spec_, "a fused transpose needs B of rank 2 or more");
      std::swap(b[b.size() - 1], b[b.size() - 2]);
    }
    if (a.empty() || b.empty()) return unsupported(spec_, "scalar operands are not supported");
    const bool a_vector = a.size() == 1, b_vector = b.size() == 1;
    if (a_vector) a.insert(a.begin(), 1);
    if (b_vector) b.push_back(1);
    // ONNX MatMul: K agrees, batch axes broadcast, 1-D operands lose their inserted axis.
    if (a.back() != b[b.size() - 2]) {
      return invalid_node(spec_, "A " + spec_.inputs[0]->shape.to_string() + " and B " +
                                     dims_text(b) + " disagree on K (" + std::to_string(a.back()) +
                                     " vs " + std::to_string(b[b.size() - 2]) + ")");
    }
    {
      const size_t rank = std::max(a.size(), b.size());
      std::vector<int64_t> expected;
      for (size_t i = 0; i + 2 < rank; ++i) {
        const int64_t da = i + a.size() < rank ? 1 : a[i + a.size() - rank];
        const int64_t db = i + b.size() < rank ? 1 : b[i + b.size() - rank];
        if (da != db && da != 1 && db != 1) {
          return invalid_node(spec_, "batch axes of A " + spec_.inputs[0]->shape.to_string() +
                                         " and B " + dims_text(b) + " do not broadcast");
        }
        expected.push_back(da == 1 ? db : da);
      }
      if (!a_vector) expected.push_back(a[a.size() - 2]);
      if (!b_vector) expected.push_back(b.back());
      HSCHED_RETURN_IF_ERROR(check_output(spec_, expected));
    }
    memory::dims src, wei, dst;
    if (b.size() == 2) {
      // [..., M, K] x [K, N]: the batch folds into M, one large GEMM.
      int64_t rows = 1;
      for (size_t i = 0; i + 1 < a.size(); ++i) rows *= a[i];
      src = {rows, a.back()};
      wei = {b[0], b[1]};
      dst = {rows, b[1]};
    } else {
      const size_t rank = std::max(a.size(), b.size());
      a.insert(a.begin(), rank - a.size(), 1);
      b.insert(b.begin(), rank - b.size(), 1);
      src = to_dnnl_dims(a);
      wei = to_dnnl_dims(b);
      dst = src;
      for (size_t i = 0; i + 2 < rank; ++i) dst[i] = std::max(a[i], b[i]);
      dst[rank - 1] = b[rank - 1];
    }
    const auto row_major = [](const memory::dims& d) {
      return memory::desc(d, memory::data_type::f32, plain_tag(d.size()));
    };
    memory::desc wei_md = row_major(wei);
    if (transposed_b) {
      memory::dims stored = wei;  // the bytes are [..., N, K]
      std::swap(stored[stored.size() - 1], stored[stored.size() - 2]);
      memory::dims strides(stored.size(), 1);
      for (size_t i = stored.size() - 1; i-- > 0;) strides[i] = strides[i + 1] * stored[i + 1];
      std::swap(strides[strides.size() - 1], strides[strides.size() - 2]);
      wei_md = strided_desc(wei, strides);
    }
    b_transposed_ = transposed_b;
    return create(row_major(src), wei_md, row_major(dst), memory::desc(), own_chain(dst.size()));
  }

  Status build_gemm() {
    const Node& node = spec_.node;
    const auto& a = spec_.in_dims(0);
    const auto& b = spec_.in_dims(1);
    if (a.size() != 2 || b.size() != 2) return unsupported(spec_, "Gemm needs 2-D A and B");
    const bool trans_a = node.attr_int("transA", 0) != 0;
    const bool trans_b = node.attr_int("transB", 0) != 0;
    const int64_t m = trans_a ? a[1] : a[0], k = trans_a ? a[0] : a[1];
    const int64_t n = trans_b ? b[0] : b[1], k_b = trans_b ? b[1] : b[0];
    if (k != k_b) {
      return invalid_node(spec_, "A " + dims_text(a) + (trans_a ? " (transposed)" : "") +
                                     " and B " + dims_text(b) + (trans_b ? " (transposed)" : "") +
                                     " disagree on K (" + std::to_string(k) + " vs " +
                                     std::to_string(k_b) + ")");
    }
    HSCHED_RETURN_IF_ERROR(check_output(spec_, {m, n}));
    const float alpha = node.attr_float("alpha", 1.0f);
    const float beta = node.attr_float("beta", 1.0f);
    const memory::desc src =
        strided_desc({m, k}, trans_a ? memory::dims{1, m} : memory::dims{k, 1});
    const memory::desc wei =
        strided_desc({k, n}, trans_b ? memory::dims{1, k} : memory::dims{n, 1});
    const memory::desc dst({m, n}, memory::data_type::f32, memory::format_tag::ab);
    dnnl::post_ops chain = own_chain(2);
    memory::desc bias;
    if (alpha != 1.0f) chain.append_eltwise(1.0f, dnnl::algorithm::eltwise_linear, alpha, 0.0f);
    if (spec_.has_input(2) && !is_post_op_input(post_ops_of(node), 2) && beta != 0.0f) {
      auto c = spec_.in_dims(2);
      // C broadcasts to [M, N] (unidirectionally): rank <= 2, each axis 1 or the output's.
      bool broadcasts = c.size() <= 2;
      c.insert(c.begin(), 2 - std::min<size_t>(c.size(), 2), 1);
      broadcasts = broadcasts && (c[0] == 1 || c[0] == m) && (c[1] == 1 || c[1] == n);
      if (!broadcasts) {
        return invalid_node(spec_, "C " + spec_.inputs[2]->shape.to_string() +
                                       " does not broadcast to the output " + dims_text({m, n}));
      }
      const memory::desc c_md({c[0], c[1]}, memory::data_type::f32, memory::format_tag::ab);
      const Tensor* ct = spec_.constant(2);
      if (beta != 1.0f && ct != nullptr) {
        scaled_c_ = ct->clone();
        for (float& v : scaled_c_->values<float>()) v *= beta;
      } else if (beta != 1.0f) {
        // C arrives at run time: run() writes beta C into run_time_c_, read like a constant C.
        // (Neither alpha / beta as an output scale, which overflows for a tiny beta, nor a
        // second eltwise_linear: two in one chain are wrong in oneDNN 2.6's brgemm matmul.)
        c_beta_ = beta;
        run_time_c_.resize(static_cast<size_t>(c[0] * c[1]));
      }
      // (int8 adds C after the output scales, as a post-op; oneDNN's bias comes before them.)
      if (alpha == 1.0f && c[0] == 1 && !computes_in_int8(node)) {
        bias = c_md;  // a row vector: oneDNN's bias, the cheapest way
      } else {
        chain.append_binary(dnnl::algorithm::binary_add, c_md);
        c_post_op_ = chain.len() - 1;
      }
      c_md_ = c_md;
    }
    b_transposed_ = trans_b;
    return create(src, wei, dst, bias, chain);
  }

  Status run(std::span<const Tensor* const> inputs, std::span<Tensor* const> outputs) override {
    dnnl::stream& stream = *spec_.context->stream;
    std::unordered_map<int, dnnl::memory> args;
    if (int8_) {
      args[DNNL_ARG_SRC] = int8_src_.prepare(stream, inputs[0]->raw());
      args[DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC] = int8_src_.zero_point();
      args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1] = int8_src_.scale_memory();
    } else {
      args[DNNL_ARG_SRC] = src_port_.prepare(stream, inputs[0]->raw());
    }
    args[DNNL_ARG_WEIGHTS] = weights_ ? *weights_ : weights_port_.prepare(stream, inputs[1]->raw());
    if (!c_md_.is_zero()) {
      const void* c = scaled_c_ ? scaled_c_->raw() : inputs[2]->raw();
      if (!run_time_c_.empty()) {
        const auto given = inputs[2]->values<float>();
        for (size_t i = 0; i < run_time_c_.size(); ++i) run_time_c_[i] = c_beta_ * given[i];
        c = run_time_c_.data();
      }
      c_.set_data_handle(const_cast<void*>(c));
      args[c_post_op_ >= 0 ? DNNL_ARG_ATTR_MULTIPLE_POST_OP(c_post_op_) | DNNL_ARG_SRC_1
                           : DNNL_ARG_BIAS] = c_;
    }
    for (size_t i = 0; i < post_ops_.size(); ++i) {
      if (post_ops_[i].kind != PostOp::Kind::kAdd) continue;
      dnnl::memory& m = adds_[i];
      m.set_data_handle(
          const_cast<std::byte*>(inputs[static_cast<size_t>(post_ops_[i].input)]->raw()));
      args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(prefix_ + dnnl_post_op_index(post_ops_, i)) |
           DNNL_ARG_SRC_1] = m;
    }
    dst_.set_data_handle(outputs[0]->raw());
    args[DNNL_ARG_DST] = dst_;
    primitive_.execute(stream, args);
    stream.wait();
    return Status::ok();
  }

 private:
  // The kernel's post-ops before the node's fused ones: the activation's scale for int8.
  dnnl::post_ops own_chain(size_t dst_rank) const {
    dnnl::post_ops chain;
    if (int8_) append_int8_scale(chain, static_cast<int>(dst_rank));
    return chain;
  }

  Status create(const memory::desc& src, const memory::desc& wei, const memory::desc& dst,
                const memory::desc& bias, const dnnl::post_ops& chain) {
    CpuContext& ctx = *spec_.context;
    prefix_ = chain.len();
    post_ops_ = post_ops_of(spec_.node);
    const Tensor* wt = spec_.constant(1);
    // bf16 (the plan's choice): A and B reordered to row-major bf16 on the way in, the sums and
    // the output in f32.
    const bool bf16 = computes_in_bf16(spec_.node);
    const memory::data_type compute = bf16 ? memory::data_type::bf16 : memory::data_type::f32;
    // int8: constant 2-D weights quantized here, A at each run (dnnl_int8.h).
    if (int8_ && (wt == nullptr || wei.dims().size() != 2)) {
      return unsupported(spec_, "int8 needs constant 2-D weights");
    }
    const auto row_major = [&](const memory::desc& md) {
      return memory::desc(md.dims(), compute, plain_tag(md.dims().size()));
    };
    const memory::desc wei_any(wei.dims(), compute, memory::format_tag::any);
    // A fused Add reads a tensor of the output's shape, or a row broadcast over the rows.
    std::vector<memory::desc> add_mds;
    adds_.resize(post_ops_.size());
    for (size_t i = 0; i < post_ops_.size(); ++i) {
      if (post_ops_[i].kind != PostOp::Kind::kAdd) continue;
      const Value* other = spec_.inputs.at(static_cast<size_t>(post_ops_[i].input));
      memory::dims dims(dst.dims().size(), 1);
      if (static_cast<size_t>(other->shape.elements()) * sizeof(float) == dst.get_size()) {
        dims = dst.dims();
      } else if (other->shape.elements() == dst.dims().back()) {
        dims.back() = dst.dims().back();
      } else {
        return invalid_node(spec_, "a fused Add reads " + other->shape.to_string() +
                                       ", neither the output's size nor one row of it");
      }
      add_mds.emplace_back(dims, memory::data_type::f32, plain_tag(dims.size()));
      adds_[i] = dnnl::memory(add_mds.back(), *ctx.engine, DNNL_MEMORY_NONE);
    }
    dnnl::primitive_attr attr = make_post_op_attr(post_ops_, add_mds, chain);
    using dt = memory::data_type;
    memory::desc src_in = bf16 ? row_major(src) : src;
    const memory::desc wei_in = bf16 ? row_major(wei) : wei;
    memory::desc user_wei = wei;
    Int8Weights quantized;
    if (int8_) {
      src_in = memory::desc(src.dims(), dt::u8, memory::format_tag::ab);
      // The weights' bytes: [K, N] row-major, or [N, K] for a transposed B.
      const int64_t k = wei.dims()[0], n = wei.dims()[1];
      quantized = quantize_weights(wt->values<float>(), n, b_transposed_ ? k : 1);
      user_wei =
          memory::desc(wei.dims(), dt::s8, b_transposed_ ? memory::dims{1, k} : memory::dims{n, 1});
      set_int8_params(attr, quantized.scales, 1);
    }
    const memory::desc wei_int8(wei.dims(), dt::s8, memory::format_tag::any);
    dnnl::matmul::desc d(src_in, int8_ ? wei_int8 : wt ? wei_any : wei_in, bias, dst);
    auto pd = dnnl::matmul::primitive_desc(d, attr, *ctx.engine);
    primitive_ = dnnl::matmul(pd);
    if (wt != nullptr) {
      weights_ = dnnl::memory(pd.weights_desc(), *ctx.engine);
      const void* data = int8_ ? static_cast<const void*>(quantized.data.data()) : wt->raw();
      dnnl::memory user(user_wei, *ctx.engine, const_cast<void*>(data));
      dnnl::reorder(user, *weights_).execute(*ctx.stream, user, *weights_);
      ctx.stream->wait();
    } else {
      weights_port_ = ActivationPort(*ctx.engine, wei, wei_in, true);
    }
    if (int8_) {
      int8_src_ = DynamicInt8Input(*ctx.engine, src, src_in,
                                   static_cast<int64_t>(src.get_size() / sizeof(float)), 2);
    } else {
      src_port_ = ActivationPort(*ctx.engine, src, src_in, true);
    }
    dst_ = dnnl::memory(dst, *ctx.engine, DNNL_MEMORY_NONE);
    if (!c_md_.is_zero()) c_ = dnnl::memory(c_md_, *ctx.engine, DNNL_MEMORY_NONE);
    return Status::ok();
  }

  KernelSpec spec_;
  dnnl::primitive primitive_;
  std::vector<PostOp> post_ops_;
  int prefix_ = 0;  // post-ops of the kernel's own before the fused ones
  std::optional<dnnl::memory> weights_;
  ActivationPort weights_port_, src_port_;  // reordered to bf16 for a bf16 node
  bool b_transposed_ = false;               // B's bytes are [N, K]
  bool int8_ = false;                       // computes_in_int8
  DynamicInt8Input int8_src_;               // int8: A, quantized at each run
  dnnl::memory dst_, c_;
  memory::desc c_md_;
  int c_post_op_ = -1;
  std::optional<Tensor> scaled_c_;  // beta C, for a constant C
  float c_beta_ = 1.0f;             // for a run-time C: run() writes c_beta_ C into run_time_c_
  std::vector<float> run_time_c_;
  std::vector<dnnl::memory> adds_;
};

Result<std::unique_ptr<Kernel>> make_matmul(const KernelSpec& spec, bool gemm) {
  for (const Value* v : spec.inputs) {
    if (v != nullptr && v->dtype != DType::kF32) {
      return unsupported(spec, "only f32 inputs are supported");
    }
  }
  if (!spec.has_input(0) || !spec.has_input(1) || spec.outputs.empty() ||
      spec.outputs[0] == nullptr) {
    return invalid_node(spec, "needs inputs A and B and output 0");
  }
  return dnnl_try(spec, [&]() -> Result<std::unique_ptr<Kernel>> {
    auto kernel = std::make_unique<MatMulKernel>(spec);
    HSCHED_RETURN_IF_ERROR(gemm ? kernel->build_gemm() : kernel->build_matmul());
    return std::unique_ptr<Kernel>(std::move(kernel));
  });
}

}  // namespace

void register_dnnl_matmul_kernels(KernelRegistry& registry) {
  registry.add("Gemm", [](const KernelSpec& spec) { return make_matmul(spec, true); });
  registry.add("MatMul", [](const KernelSpec& spec) { return make_matmul(spec, false); });
}

}  // namespace hsched::cpu
