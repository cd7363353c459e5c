// The post-op fusion pass (see post_op_fusion.h).
#include "backends/cpu/kernels/post_op_fusion.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <optional>
#include <string>

#include "backends/cpu/kernels/norm_fusion.h"
#include "backends/cpu/kernels/post_ops.h"
#include "backends/cpu/kernels/step_uses.h"

namespace hsched::cpu {
namespace {

bool is_fusion_root(const std::string& op) {
  return op == "Conv" || op == "ConvTranspose" || op == "Gemm" || op == "MatMul";
}

// The post-op an activation node becomes, if it can be one.
std::optional<PostOp> activation_post_op(const Graph& graph, const Node& node) {
  using K = PostOp::Kind;
  const std::string& op = node.op_type;
  if (op == "Relu") return PostOp{K::kRelu};
  if (op == "Sigmoid") return PostOp{K::kSigmoid};
  if (op == "HardSwish") return PostOp{K::kHardSwish};
  if (op == "Tanh") return PostOp{K::kTanh};
  if (op == "LeakyRelu") return PostOp{K::kLeakyRelu, node.attr_float("alpha", 0.01f)};
  if (op == "HardSigmoid") {
    return PostOp{K::kHardSigmoid, node.attr_float("alpha", 0.2f), node.attr_float("beta", 0.5f)};
  }
  if (op == "Clip") {
    float lo = node.attr_float("min", -FLT_MAX), hi = node.attr_float("max", FLT_MAX);
    for (size_t i = 1; i < node.inputs.size() && i < 3; ++i) {
      if (node.inputs[i] == kNoValue) continue;
      const Value& v = graph.value(node.inputs[i]);
      if (!v.is_constant() || v.dtype != DType::kF32 || v.constant->elements() != 1) {
        return std::nullopt;
      }
      (i == 1 ? lo : hi) = v.constant->values<float>()[0];
    }
    return PostOp{K::kClip, lo, hi};
  }
  return std::nullopt;
}

// The value of a one-element f32 constant, if `v` is one.
std::optional<float> scalar_constant(const Graph& graph, ValueId v) {
  if (v == kNoValue) return std::nullopt;
  const Value& value = graph.value(v);
  if (!value.is_constant() || value.dtype != DType::kF32 || value.constant->elements() != 1) {
    return std::nullopt;
  }
  return value.constant->values<float>()[0];
}

// A Transpose that swaps the last two axes and keeps the others in place.
bool swaps_last_two_axes(const Node& node) {
  if (node.op_type != "Transpose") return false;
  const auto perm = node.attr_ints("perm");
  const size_t rank = perm.size();
  if (rank < 2) return false;
  for (size_t i = 0; i + 2 < rank; ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return perm[rank - 2] == static_cast<int64_t>(rank - 1) &&
         perm[rank - 1] == static_cast<int64_t>(rank - 2);
}

// The input of a two-input node that is not `v`, or kNoValue.
ValueId other_input(const Node& node, ValueId v) {
  if (node.inputs.size() != 2) return kNoValue;
  if (node.inputs[0] == v) return node.inputs[1];
  if (node.inputs[1] == v) return node.inputs[0];
  return kNoValue;
}

// A Conv whose output is multiplied by a per-output-channel constant (ConvNeXt's layer scale)
// computes the product itself when its weights and bias are constants: both are scaled once,
// here, into new constants.
bool scale_into_weights(Graph& graph, Node& conv, const Node& mul, ValueId current) {
  if (conv.op_type != "Conv" || mul.inputs.size() != 2) return false;
  const Value& out = graph.value(current);
  const int64_t channels = out.shape.rank() >= 2 ? out.shape.dims[1] : 0;
  const auto scale =
      per_channel_constant(graph.value(other_input(mul, current)), channels, out.shape.rank());
  const Value& w = graph.value(conv.inputs[1]);
  const bool has_bias = conv.inputs.size() > 2 && conv.inputs[2] != kNoValue;
  // Scaled per block of values.size() / channels: the bias must hold exactly one per channel
  // (else the block is 0 or the scale index runs past the channels; the Conv kernel refuses it).
  if (!scale || channels < 1 || !w.is_constant() || w.dtype != DType::kF32 ||
      w.shape.dims.empty() || w.shape.dims[0] != channels ||
      (has_bias && (!graph.value(conv.inputs[2]).is_constant() ||
                    graph.value(conv.inputs[2]).dtype != DType::kF32 ||
                    graph.value(conv.inputs[2]).shape.elements() != channels))) {
    return false;
  }
  const auto scaled = [&](ValueId id) {
    Tensor t = graph.value(id).constant->clone();
    auto values = t.values<float>();
    const size_t block = values.size() / static_cast<size_t>(channels);
    for (size_t i = 0; i < values.size(); ++i) values[i] *= (*scale)[i / block];
    return graph.add_constant(conv.name + "/scaled_" + graph.value(id).name, std::move(t));
  };
  conv.inputs[1] = scaled(conv.inputs[1]);
  if (has_bias) conv.inputs[2] = scaled(conv.inputs[2]);
  return true;
}

class PostOpFuser {
 public:
  PostOpFuser(Graph& graph, const std::vector<Node*>& nodes, std::vector<bool>& absorbed)
      : graph_(graph), nodes_(nodes), absorbed_(absorbed), uses_(graph, nodes, absorbed) {}

  int run() {
    const auto before = std::count(absorbed_.begin(), absorbed_.end(), true);
    for (size_t s = 0; s < nodes_.size(); ++s) fuse_root(s);
    return static_cast<int>(std::count(absorbed_.begin(), absorbed_.end(), true) - before);
  }

 private:
  // Inputs of MatMul `s` scaled by a scalar constant (attention's q * s and k * s) are read
  // unscaled, the product of the factors returned for one scale post-op; a Transpose of B's last
  // two axes becomes strides. Each only where the MatMul is the sole reader.
  float absorb_matmul_inputs(size_t s) {
    Node& root = *nodes_[s];
    float scale = 1.0f;
    for (size_t i = 0; i < 2; ++i) {
      for (size_t reader = s;;) {  // the step that reads `in` in the original graph
        const ValueId in = root.inputs[i];
        const int at = uses_.produced_at[static_cast<size_t>(in)];
        if (at < 0 || absorbed_[static_cast<size_t>(at)] || uses_.sole_consumer(in) != reader) {
          break;
        }
        const Node& producer = *nodes_[static_cast<size_t>(at)];
        const auto factor = producer.op_type == "Mul" && producer.inputs.size() == 2
                                ? scalar_constant(graph_, producer.inputs[1])
                                : std::nullopt;
        if (factor && graph_.value(producer.inputs[0]).shape == graph_.value(in).shape) {
          scale *= *factor;
          root.inputs[i] = producer.inputs[0];
        } else if (i == 1 && swaps_last_two_axes(producer) && !matmul_transposes_b(root)) {
          root.inputs[1] = producer.inputs[0];
          set_matmul_transposes_b(root);
        } else {
          break;
        }
        absorbed_[static_cast<size_t>(at)] = true;
        reader = static_cast<size_t>(at);
      }
    }
    return scale;
  }

  // SiLU after `current`: x * Sigmoid(x), x read by exactly the Sigmoid and the Mul. Returns the
  // SiLU's output when it was absorbed.
  std::optional<ValueId> absorb_silu(ValueId current) {
    const auto& uses = uses_.consumers[static_cast<size_t>(current)];
    if (uses.size() != 2 || uses_.outputs.count(current)) return std::nullopt;
    size_t sig = uses[0], mul = uses[1];
    if (nodes_[sig]->op_type == "Mul") std::swap(sig, mul);
    const Node& sn = *nodes_[sig];
    const Node& mn = *nodes_[mul];
    const bool operands = mn.inputs.size() == 2 && sn.inputs[0] == current &&
                          ((mn.inputs[0] == current && mn.inputs[1] == sn.outputs[0]) ||
                           (mn.inputs[1] == current && mn.inputs[0] == sn.outputs[0]));
    if (sn.op_type != "Sigmoid" || mn.op_type != "Mul" || !operands ||
        uses_.sole_consumer(sn.outputs[0]) != mul) {
      return std::nullopt;
    }
    absorbed_[sig] = absorbed_[mul] = true;
    return mn.outputs[0];
  }

  // GELU as PyTorch exports it: Mul(Mul(x, Add(Erf(Div(x, sqrt 2)), 1)), 0.5). Returns its output
  // when it was absorbed.
  std::optional<ValueId> absorb_gelu(ValueId current) {
    const auto& uses = uses_.consumers[static_cast<size_t>(current)];
    if (uses.size() != 2 || uses_.outputs.count(current)) return std::nullopt;
    size_t div = uses[0], mul = uses[1];
    if (nodes_[div]->op_type != "Div") std::swap(div, mul);
    const Node& dn = *nodes_[div];
    const Node& mn = *nodes_[mul];
    const auto near = [&](ValueId v, float want) {
      const auto c = scalar_constant(graph_, v);
      return c && std::fabs(*c - want) < 1e-3f;
    };
    const auto step_of = [&](ValueId v, const char* op) -> std::optional<size_t> {
      auto step = uses_.sole_consumer(v);
      if (!step || nodes_[*step]->op_type != op) return std::nullopt;
      return step;
    };
    if (dn.op_type != "Div" || mn.op_type != "Mul" || dn.inputs[0] != current ||
        !near(dn.inputs[1], 1.41421356f)) {
      return std::nullopt;
    }
    const auto erf = step_of(dn.outputs[0], "Erf");
    const auto add = erf ? step_of(nodes_[*erf]->outputs[0], "Add") : std::nullopt;
    const Node* an = add ? nodes_[*add] : nullptr;
    const bool add_ok = an && near(other_input(*an, nodes_[*erf]->outputs[0]), 1.0f) &&
                        uses_.sole_consumer(an->outputs[0]) == mul &&
                        other_input(mn, an->outputs[0]) == current;
    const auto half = add_ok ? step_of(mn.outputs[0], "Mul") : std::nullopt;
    if (!half || !near(other_input(*nodes_[*half], mn.outputs[0]), 0.5f)) return std::nullopt;
    for (size_t step : {div, *erf, *add, mul, *half}) absorbed_[step] = true;
    return nodes_[*half]->outputs[0];
  }

  // Absorbs what follows root `s`, one node at a time, while it can be a post-op.
  void fuse_root(size_t s) {
    Node& root = *nodes_[s];
    if (absorbed_[s] || !is_fusion_root(root.op_type) || root.outputs.size() != 1) return;
    if (graph_.value(root.outputs[0]).dtype != DType::kF32) return;
    const bool matmul_like = root.op_type == "Gemm" || root.op_type == "MatMul";
    std::vector<PostOp> ops;
    if (root.op_type == "MatMul") {
      if (const float scale = absorb_matmul_inputs(s); scale != 1.0f) {
        ops.push_back(PostOp{PostOp::Kind::kScale, scale});
      }
    }
    // oneDNN 2.6's brgemm matmul misapplies a second eltwise_linear in one chain (the second
    // applies the first's factor): a Gemm or MatMul takes at most one. Gemm's alpha != 1 and a
    // MatMul's absorbed input scale are one already (dnnl_matmul.cpp); HardSigmoid adds one.
    bool has_linear =
        !ops.empty() || (root.op_type == "Gemm" && root.attr_float("alpha", 1.0f) != 1.0f);
    bool has_clip = false, has_relu = false;
    ValueId current = root.outputs[0];
    while (true) {
      auto next = uses_.sole_consumer(current);
      if (!next) {
        if (const auto out = absorb_silu(current)) {
          ops.push_back(PostOp{PostOp::Kind::kSwish});
          current = *out;
          continue;
        }
        if (const auto out = absorb_gelu(current)) {
          ops.push_back(PostOp{PostOp::Kind::kGeluErf});
          current = *out;
          continue;
        }
      }
      if (!next) break;
      const Node& node = *nodes_[*next];
      if (auto act = activation_post_op(graph_, node); act && node.inputs[0] == current) {
        const bool linear = act->kind == PostOp::Kind::kHardSigmoid;
        if (linear && matmul_like && has_linear) break;
        has_linear = has_linear || linear;
        // oneDNN 2.6 loses the second of two eltwise_clip post-ops in a chain (Clip is one,
        // HardSigmoid ends with one): a chain holds one. Two Clips in a row merge:
        // clip(clip(x, a, b), c, d) = clip(x, clamp(a, c, d), clamp(b, c, d)), a <= b, c <= d.
        const bool clips =
            act->kind == PostOp::Kind::kClip || act->kind == PostOp::Kind::kHardSigmoid;
        // The same for two eltwise_relu (Relu, LeakyRelu): LeakyRelu(0.3) -> LeakyRelu(0.01)
        // after a brgconv gave the first alone.
        const bool relus =
            act->kind == PostOp::Kind::kRelu || act->kind == PostOp::Kind::kLeakyRelu;
        if (relus && has_relu) break;
        has_relu = has_relu || relus;
        if (act->kind == PostOp::Kind::kClip && !ops.empty() &&
            ops.back().kind == PostOp::Kind::kClip) {
          PostOp& first = ops.back();
          if (!(first.alpha <= first.beta && act->alpha <= act->beta)) break;
          first.alpha = std::clamp(first.alpha, act->alpha, act->beta);
          first.beta = std::clamp(first.beta, act->alpha, act->beta);
        } else {
          if (clips && has_clip) break;
          has_clip = has_clip || clips;
          ops.push_back(*act);
        }
      } else if (ops.empty() && node.op_type == "Mul" &&
                 scale_into_weights(graph_, root, node, current)) {
        // folded: the Conv computes the scaled output itself
      } else if (node.op_type == "Add" && node.inputs.size() == 2) {
        const ValueId other = node.inputs[0] == current ? node.inputs[1] : node.inputs[0];
        const Value& ov = graph_.value(other);
        const int at = uses_.produced_at[static_cast<size_t>(other)];
        const bool ready = ov.is_constant() || at < static_cast<int>(s);
        const auto& out_dims = graph_.value(current).shape.dims;
        // Same shape always; a broadcast row (bias) only for Gemm/MatMul of matrices (a 1-D
        // MatMul operand makes the kernel's rows other than the output's last axis). The Add
        // must keep the chain's shape: [1, 3] + [1, 1, 3] is [1, 1, 3], not a post-op.
        const bool same = ov.shape.dims == out_dims;
        const bool matrices = matmul_like && graph_.value(root.inputs[0]).shape.rank() >= 2 &&
                              graph_.value(root.inputs[1]).shape.rank() >= 2;
        const bool row = matrices && !ov.shape.dims.empty() && !out_dims.empty() &&
                         ov.shape.dims.back() == out_dims.back() &&
                         ov.shape.elements() == ov.shape.dims.back();
        const bool keeps_shape = graph_.value(node.outputs[0]).shape.dims == out_dims;
        if (other == current || !ready || ov.dtype != DType::kF32 || !(same || row) ||
            !keeps_shape) {
          break;
        }
        root.inputs.push_back(other);
        ops.push_back(PostOp{PostOp::Kind::kAdd, 0, 0, static_cast<int>(root.inputs.size() - 1)});
      } else {
        break;
      }
      absorbed_[*next] = true;
      current = node.outputs[0];
    }
    // The root writes the chain's last output, also when the chain is only a scale folded into
    // its weights (no post-op): that Mul is absorbed, and its output may be a graph output.
    root.outputs[0] = current;
    if (!ops.empty()) set_post_ops(root, ops);
  }

  Graph& graph_;
  const std::vector<Node*>& nodes_;
  std::vector<bool>& absorbed_;
  StepUses uses_;
};

}  // namespace

int fuse_post_ops(Graph& graph, const std::vector<Node*>& nodes, std::vector<bool>& absorbed) {
  return PostOpFuser(graph, nodes, absorbed).run();
}

}  // namespace hsched::cpu
