// LSTM (with peepholes), GRU (linear_before_reset 0 or 1) and RNN through oneDNN's RNN primitives,
// for the configurations oneDNN computes exactly as ONNX defines them: default activations (RNN:
// Tanh, Relu or Sigmoid), no clip, every sequence of full length. The weights are re-laid out from
// ONNX's [D, gates*H, I] to oneDNN's ldigo (gate order LSTM i f c o, GRU u r o = ONNX's z r h)
// and reordered to the primitive's format: once at creation when they are constants, else on
// every run.
#include <algorithm>

#include <oneapi/dnnl/dnnl.hpp>

#include "backends/cpu/kernels/dnnl_util.h"
#include "backends/cpu/kernels/rnn_util.h"

namespace hsched::cpu {
namespace {

using tag = memory::format_tag;
constexpr auto kF32 = memory::data_type::f32;
using Kind = RnnActivation::Kind;

bool is_kind(const RnnActivation& a, Kind kind) { return a.kind == kind; }

// True when oneDNN computes this configuration exactly.
bool dnnl_fits(const RnnConfig& c) {
  if (c.clip || c.seq_length == 0 || c.batch == 0 || c.input_size == 0) return false;
  for (int64_t len : c.constant_seq_lens) {
    if (len != c.seq_length) return false;
  }
  for (const auto& acts : c.activations) {
    switch (c.cell) {
      case RnnCell::kLstm:
        if (!is_kind(acts[0], Kind::kSigmoid) || !is_kind(acts[1], Kind::kTanh) ||
            !is_kind(acts[2], Kind::kTanh)) {
          return false;
        }
        break;
      case RnnCell::kGru:
        if (!is_kind(acts[0], Kind::kSigmoid) || !is_kind(acts[1], Kind::kTanh)) return false;
        break;
      case RnnCell::kRnn:
        if (acts[0].kind != c.activations[0][0].kind) return false;  // one algorithm for both
        if (!is_kind(acts[0], Kind::kTanh) && !is_kind(acts[0], Kind::kRelu) &&
            !is_kind(acts[0], Kind::kSigmoid)) {
          return false;
        }
        break;
    }
  }
  return true;
}

// A weight held in oneDNN's plain layout (`plain`), reordered into the primitive's format when
// that differs.
struct RnnWeight {
  std::vector<float> plain;
  dnnl::memory user, inner;
  std::optional<dnnl::reorder> reorder;

  void init(const dnnl::engine& engine, const memory::desc& plain_md, const memory::desc& want) {
    plain.assign(plain_md.get_size() / sizeof(float), 0.0f);
    user = dnnl::memory(plain_md, engine, plain.data());
    if (want == plain_md) {
      inner = user;
    } else {
      inner = dnnl::memory(want, engine);
      reorder.emplace(user, inner);
    }
  }
  void commit(dnnl::stream& stream) {
    if (reorder) reorder->execute(stream, user, inner);
  }
};

class DnnlRnnKernel final : public Kernel {
 public:
  DnnlRnnKernel(const KernelSpec& spec, RnnConfig config)
      : config_(std::move(config)), context_(*spec.context) {}

  // Throws dnnl::error when oneDNN refuses the descriptors.
  void build(const KernelSpec& spec) {
    const RnnConfig& c = config_;
    const dnnl::engine& engine = *context_.engine;
    const int64_t T = c.seq_length, N = c.batch, I = c.input_size, H = c.hidden, D = c.directions;
    const bool lstm = c.cell == RnnCell::kLstm;
    const bool lbr = c.cell == RnnCell::kGru && c.linear_before_reset;
    const memory::dim G = c.gates, bias_gates = lbr ? 4 : c.gates;
    const tag layer_tag = c.batch_first ? tag::ntc : tag::tnc;
    const memory::desc src_layer({T, N, I}, kF32, layer_tag);
    const memory::desc dst_layer({T, N, D * H}, kF32, layer_tag);
    const memory::desc iter({1, D, N, H}, kF32, tag::ldnc);
    const memory::desc wl_plain({1, D, I, G, H}, kF32, tag::ldigo);
    const memory::desc wi_plain({1, D, H, G, H}, kF32, tag::ldigo);
    const memory::desc wl_any({1, D, I, G, H}, kF32, tag::any);
    const memory::desc wi_any({1, D, H, G, H}, kF32, tag::any);
    const memory::desc bias({1, D, bias_gates, H}, kF32, tag::ldgo);
    const memory::desc peephole =
        c.has_peephole ? memory::desc({1, D, 3, H}, kF32, tag::ldgo) : memory::desc();
    const auto direction = D == 2      ? dnnl::rnn_direction::bidirectional_concat
                           : c.reverse ? dnnl::rnn_direction::unidirectional_right2left
                                       : dnnl::rnn_direction::unidirectional_left2right;
    const auto prop = dnnl::prop_kind::forward_inference;
    // The scratchpad is the kernel's own: oneDNN's library mode keeps it in a thread_local of
    // the thread that created the primitive and frees it on the thread that destroys it, so a
    // kernel created on a worker thread and destroyed on another leaked it.
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    memory::desc wl_want, wi_want, scratchpad_want;
    if (lstm) {
      dnnl::lstm_forward::desc d(prop, direction, src_layer, iter, iter, wl_any, wi_any, peephole,
                                 bias, dst_layer, iter, iter);
      dnnl::lstm_forward::primitive_desc pd(d, attr, engine);
      wl_want = pd.weights_layer_desc();
      wi_want = pd.weights_iter_desc();
      scratchpad_want = pd.scratchpad_desc();
      primitive_ = dnnl::lstm_forward(pd);
    } else if (lbr) {
      dnnl::lbr_gru_forward::desc d(prop, direction, src_layer, iter, wl_any, wi_any, bias,
                                    dst_layer, iter);
      dnnl::lbr_gru_forward::primitive_desc pd(d, attr, engine);
      wl_want = pd.weights_layer_desc();
      wi_want = pd.weights_iter_desc();
      scratchpad_want = pd.scratchpad_desc();
      primitive_ = dnnl::lbr_gru_forward(pd);
    } else if (c.cell == RnnCell::kGru) {
      dnnl::gru_forward::desc d(prop, direction, src_layer, iter, wl_any, wi_any, bias, dst_layer,
                                iter);
      dnnl::gru_forward::primitive_desc pd(d, attr, engine);
      wl_want = pd.weights_layer_desc();
      wi_want = pd.weights_iter_desc();
      scratchpad_want = pd.scratchpad_desc();
      primitive_ = dnnl::gru_forward(pd);
    } else {
      const Kind kind = c.activations[0][0].kind;
      const auto algorithm = kind == Kind::kTanh   ? dnnl::algorithm::eltwise_tanh
                             : kind == Kind::kRelu ? dnnl::algorithm::eltwise_relu
                                                   : dnnl::algorithm::eltwise_logistic;
      dnnl::vanilla_rnn_forward::desc d(prop, algorithm, direction, src_layer, iter, wl_any, wi_any,
                                        bias, dst_layer, iter);
      dnnl::vanilla_rnn_forward::primitive_desc pd(d, attr, engine);
      wl_want = pd.weights_layer_desc();
      wi_want = pd.weights_iter_desc();
      scratchpad_want = pd.scratchpad_desc();
      primitive_ = dnnl::vanilla_rnn_forward(pd);
    }
    scratchpad_ = dnnl::memory(scratchpad_want, engine);
    weights_layer_.init(engine, wl_plain, wl_want);
    weights_iter_.init(engine, wi_plain, wi_want);
    bias_.init(engine, bias, bias);
    if (c.has_peephole) peephole_.init(engine, peephole, peephole);

    // States and outputs: the user's buffer where its layout is oneDNN's, else one of ours.
    const size_t state_elems = static_cast<size_t>(D * N * H);
    src_layer_ = dnnl::memory(src_layer, engine, nullptr);
    dst_layer_ = dnnl::memory(dst_layer, engine, nullptr);
    for (dnnl::memory* m : {&src_iter_, &src_iter_c_, &dst_iter_, &dst_iter_c_}) {
      *m = dnnl::memory(iter, engine, nullptr);
    }
    zero_state_.assign(state_elems, 0.0f);
    for (auto* buffer : {&src_iter_buf_, &src_iter_c_buf_, &dst_iter_buf_, &dst_iter_c_buf_}) {
      buffer->assign(state_elems, 0.0f);
    }
    const bool y_direct = c.batch_first || D == 1;
    if (!y_direct || spec.outputs.empty() || spec.outputs[kRnnY] == nullptr) {
      dst_layer_buf_.assign(static_cast<size_t>(T * N * D * H), 0.0f);
    }
    constant_weights_ = spec.constant(kRnnW) && spec.constant(kRnnR) &&
                        (!c.has_bias || spec.constant(kRnnB)) &&
                        (!c.has_peephole || spec.constant(kRnnP));
    if (constant_weights_) {
      relayout(spec.constant(kRnnW)->values<float>().data(),
               spec.constant(kRnnR)->values<float>().data(),
               c.has_bias ? spec.constant(kRnnB)->values<float>().data() : nullptr,
               c.has_peephole ? spec.constant(kRnnP)->values<float>().data() : nullptr);
    }
  }

  Status run(std::span<const Tensor* const> inputs, std::span<Tensor* const> outputs) override {
    const RnnConfig& c = config_;
    if (c.has_seq_lens && c.constant_seq_lens.empty()) {
      HSCHED_ASSIGN_OR_RETURN(auto lens, read_seq_lens(c, *inputs[kRnnSeqLens]));
      if (std::any_of(lens.begin(), lens.end(), [&](int64_t l) { return l != c.seq_length; })) {
        return run_rnn_loops(c, inputs, outputs);
      }
    }
    dnnl::stream& stream = *context_.stream;
    if (!constant_weights_) {
      relayout(inputs[kRnnW]->values<float>().data(), inputs[kRnnR]->values<float>().data(),
               c.has_bias ? inputs[kRnnB]->values<float>().data() : nullptr,
               c.has_peephole ? inputs[kRnnP]->values<float>().data() : nullptr);
    }
    const auto output = [&](size_t i) -> float* {
      return i < outputs.size() && outputs[i] ? outputs[i]->values<float>().data() : nullptr;
    };
    float* y = output(kRnnY);
    float* y_h = output(kRnnYh);
    float* y_c = c.cell == RnnCell::kLstm ? output(kRnnYc) : nullptr;
    src_layer_.set_data_handle(const_cast<float*>(inputs[kRnnX]->values<float>().data()));
    src_iter_.set_data_handle(
        state_in(c.has_initial_h ? inputs[kRnnInitialH] : nullptr, src_iter_buf_));
    src_iter_c_.set_data_handle(
        state_in(c.has_initial_c ? inputs[kRnnInitialC] : nullptr, src_iter_c_buf_));
    const bool y_direct = y != nullptr && dst_layer_buf_.empty();
    dst_layer_.set_data_handle(y_direct ? y : dst_layer_buf_.data());
    dst_iter_.set_data_handle(y_h && !c.batch_first ? y_h : dst_iter_buf_.data());
    dst_iter_c_.set_data_handle(y_c && !c.batch_first ? y_c : dst_iter_c_buf_.data());
    std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC_LAYER, src_layer_},
                                               {DNNL_ARG_SRC_ITER, src_iter_},
                                               {DNNL_ARG_WEIGHTS_LAYER, weights_layer_.inner},
                                               {DNNL_ARG_WEIGHTS_ITER, weights_iter_.inner},
                                               {DNNL_ARG_BIAS, bias_.inner},
                                               {DNNL_ARG_DST_LAYER, dst_layer_},
                                               {DNNL_ARG_DST_ITER, dst_iter_},
                                               {DNNL_ARG_SCRATCHPAD, scratchpad_}};
    if (c.cell == RnnCell::kLstm) {
      args[DNNL_ARG_SRC_ITER_C] = src_iter_c_;
      args[DNNL_ARG_DST_ITER_C] = dst_iter_c_;
      if (c.has_peephole) args[DNNL_ARG_WEIGHTS_PEEPHOLE] = peephole_.inner;
    }
    primitive_.execute(stream, args);
    stream.wait();
    const int64_t T = c.seq_length, N = c.batch, H = c.hidden, D = c.directions;
    if (y != nullptr && !y_direct) {
      // [T, N, D*H] -> Y [T, D, N, H] (seq-first, bidirectional).
      for (int64_t t = 0; t < T; ++t)
        for (int64_t n = 0; n < N; ++n)
          for (int64_t d = 0; d < D; ++d) {
            std::copy_n(dst_layer_buf_.data() + (t * N + n) * D * H + d * H, H,
                        y + c.y_offset(t, d, n));
          }
    }
    if (c.batch_first) {
      if (y_h) state_out(dst_iter_buf_, y_h);
      if (y_c) state_out(dst_iter_c_buf_, y_c);
    }
    return Status::ok();
  }

 private:
  // ONNX [D, G*H, K] (rows gate-major) -> ldigo [1, D, K, G, H] in oneDNN's gate order.
  void relayout_matrix(const float* onnx, int64_t K, const int* gate_of, RnnWeight& w) {
    const int64_t D = config_.directions, G = config_.gates, H = config_.hidden;
    float* out = w.plain.data();
    for (int64_t d = 0; d < D; ++d)
      for (int64_t k = 0; k < K; ++k)
        for (int64_t g = 0; g < G; ++g)
          for (int64_t h = 0; h < H; ++h) {
            out[((d * K + k) * G + g) * H + h] = onnx[(d * G * H + gate_of[g] * H + h) * K + k];
          }
  }

  void relayout(const float* w, const float* r, const float* b, const float* p) {
    const RnnConfig& c = config_;
    const int64_t D = c.directions, G = c.gates, H = c.hidden;
    // oneDNN gate g reads ONNX's gate gate_of[g]: LSTM i f c o <- i o f c; GRU and RNN as is.
    static constexpr int kLstmGates[] = {0, 2, 3, 1};
    static constexpr int kSameGates[] = {0, 1, 2, 3};
    const int* gate_of = c.cell == RnnCell::kLstm ? kLstmGates : kSameGates;
    relayout_matrix(w, c.input_size, gate_of, weights_layer_);
    relayout_matrix(r, H, gate_of, weights_iter_);
    // Bias: Wb + Rb per gate; linear-before-reset GRU keeps Rbh apart as a fourth gate.
    const bool lbr = c.cell == RnnCell::kGru && c.linear_before_reset;
    const int64_t bias_gates = lbr ? 4 : G;
    float* out = bias_.plain.data();
    for (int64_t d = 0; d < D; ++d) {
      const float* wb = b ? b + d * 2 * G * H : nullptr;
      const float* rb = b ? wb + G * H : nullptr;
      for (int64_t g = 0; g < bias_gates; ++g)
        for (int64_t h = 0; h < H; ++h) {
          float v = 0.0f;
          if (b) {
            if (lbr && g == 2)
              v = wb[2 * H + h];
            else if (lbr && g == 3)
              v = rb[2 * H + h];
            else
              v = wb[gate_of[g] * H + h] + rb[gate_of[g] * H + h];
          }
          out[(d * bias_gates + g) * H + h] = v;
        }
    }
    if (p) {
      // oneDNN's peephole gates are i f o; ONNX's P holds i o f.
      static constexpr int kPeepholeGates[] = {0, 2, 1};
      float* pout = peephole_.plain.data();
      for (int64_t d = 0; d < D; ++d)
        for (int64_t g = 0; g < 3; ++g)
          std::copy_n(p + (d * 3 + kPeepholeGates[g]) * H, H, pout + (d * 3 + g) * H);
    }
    dnnl::stream& stream = *context_.stream;
    weights_layer_.commit(stream);
    weights_iter_.commit(stream);
    bias_.commit(stream);
    if (p) peephole_.commit(stream);
  }

  // An initial state as oneDNN's [1, D, N, H]: the input itself (seq-first), a transposed copy
  // (batch-first), or zeros.
  void* state_in(const Tensor* initial, std::vector<float>& buffer) {
    if (initial == nullptr) return zero_state_.data();
    const float* src = initial->values<float>().data();
    if (!config_.batch_first) return const_cast<float*>(src);
    const int64_t D = config_.directions, N = config_.batch, H = config_.hidden;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t d = 0; d < D; ++d)
        std::copy_n(src + (n * D + d) * H, H, buffer.data() + (d * N + n) * H);
    return buffer.data();
  }

  // oneDNN's [1, D, N, H] -> the batch-first [N, D, H].
  void state_out(const std::vector<float>& buffer, float* out) const {
    const int64_t D = config_.directions, N = config_.batch, H = config_.hidden;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t d = 0; d < D; ++d)
        std::copy_n(buffer.data() + (d * N + n) * H, H, out + (n * D + d) * H);
  }

  RnnConfig config_;
  CpuContext& context_;
  dnnl::primitive primitive_;
  RnnWeight weights_layer_, weights_iter_, bias_, peephole_;
  bool constant_weights_ = false;
  dnnl::memory src_layer_, src_iter_, src_iter_c_, dst_layer_, dst_iter_, dst_iter_c_, scratchpad_;
  std::vector<float> zero_state_, src_iter_buf_, src_iter_c_buf_, dst_iter_buf_, dst_iter_c_buf_,
      dst_layer_buf_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> make_dnnl_rnn_kernel(const KernelSpec& spec,
                                                     const RnnConfig& config) {
  if (spec.context == nullptr || spec.context->engine == nullptr || !dnnl_fits(config)) {
    return std::unique_ptr<Kernel>();
  }
  auto kernel = std::make_unique<DnnlRnnKernel>(spec, config);
  try {
    kernel->build(spec);
  } catch (const dnnl::error&) {
    // oneDNN refuses this configuration (an ISA or format it lacks): the loops compute it.
    return std::unique_ptr<Kernel>();
  }
  return std::unique_ptr<Kernel>(std::move(kernel));
}

}  // namespace hsched::cpu
