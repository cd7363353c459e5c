// ONNX's recurrent ops LSTM, GRU and RNN (opsets 7 and 14, inference): the node's validation and
// the kernel choice. oneDNN's RNN primitives run the configurations they compute exactly
// (rnn_dnnl.cpp); plain loops run the rest (rnn_loops.cpp): clip, other activations, uneven
// sequence_lens.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include "backends/cpu/kernels/layout_util.h"
#include "backends/cpu/kernels/rnn_util.h"

namespace hsched::cpu {
namespace {

using Kind = RnnActivation::Kind;

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

template <typename T>
const T* attr_of(const Node& node, const std::string& key) {
  auto it = node.attributes.find(key);
  return it == node.attributes.end() ? nullptr : std::get_if<T>(&it->second);
}

struct ActivationName {
  const char* name;
  Kind kind;
  int params;         // how many of (alpha, beta) it takes
  float alpha, beta;  // ONNX's defaults (those of the op of the same name)
};

constexpr ActivationName kActivations[] = {
    {"sigmoid", Kind::kSigmoid, 0, 0, 0},
    {"tanh", Kind::kTanh, 0, 0, 0},
    {"relu", Kind::kRelu, 0, 0, 0},
    {"affine", Kind::kAffine, 2, 1.0f, 0.0f},
    {"leakyrelu", Kind::kLeakyRelu, 1, 0.01f, 0},
    {"thresholdedrelu", Kind::kThresholdedRelu, 1, 1.0f, 0},
    {"scaledtanh", Kind::kScaledTanh, 2, 1.0f, 1.0f},
    {"hardsigmoid", Kind::kHardSigmoid, 2, 0.2f, 0.5f},
    {"elu", Kind::kElu, 1, 1.0f, 0},
    {"softsign", Kind::kSoftsign, 0, 0, 0},
    {"softplus", Kind::kSoftplus, 0, 0, 0},
};

// activations / activation_alpha / activation_beta -> one list per direction. alpha and beta are
// consumed in order by the functions that take them; past the list's end, ONNX's defaults.
Result<std::vector<std::vector<RnnActivation>>> parse_activations(const KernelSpec& spec,
                                                                  RnnCell cell,
                                                                  int64_t directions) {
  const size_t per_direction = cell == RnnCell::kLstm ? 3 : cell == RnnCell::kGru ? 2 : 1;
  std::vector<std::string> names;
  if (const auto* given = attr_of<std::vector<std::string>>(spec.node, "activations")) {
    names = *given;
  } else if (const auto* one = attr_of<std::string>(spec.node, "activations")) {
    names = {*one};
  }
  if (names.empty()) {
    const std::vector<std::string> defaults =
        cell == RnnCell::kLstm  ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
        : cell == RnnCell::kGru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                : std::vector<std::string>{"Tanh"};
    for (int64_t d = 0; d < directions; ++d)
      names.insert(names.end(), defaults.begin(), defaults.end());
  }
  // One set for both directions: parsed once (taking activation_alpha and activation_beta from
  // the start of their lists) and copied, parameters included.
  const bool shared = names.size() == per_direction && directions == 2;
  if (names.size() != per_direction * static_cast<size_t>(shared ? 1 : directions)) {
    return invalid_node(spec, "activations lists " + std::to_string(names.size()) +
                                  " functions; this op takes " + std::to_string(per_direction) +
                                  " per direction for " + std::to_string(directions) +
                                  " direction(s)");
  }
  std::vector<float> alphas, betas;
  if (const auto* a = attr_of<std::vector<float>>(spec.node, "activation_alpha")) alphas = *a;
  if (const auto* b = attr_of<std::vector<float>>(spec.node, "activation_beta")) betas = *b;
  size_t next_alpha = 0, next_beta = 0;
  std::vector<std::vector<RnnActivation>> result(static_cast<size_t>(directions));
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string name = lower(names[i]);
    const auto* found = std::find_if(std::begin(kActivations), std::end(kActivations),
                                     [&](const ActivationName& a) { return name == a.name; });
    if (found == std::end(kActivations)) {
      return unsupported(spec, "activation function '" + names[i] + "' is not supported");
    }
    RnnActivation act{found->kind, found->alpha, found->beta};
    if (found->params >= 1 && next_alpha < alphas.size()) act.alpha = alphas[next_alpha++];
    if (found->params >= 2 && next_beta < betas.size()) act.beta = betas[next_beta++];
    result[i / per_direction].push_back(act);
  }
  if (shared) result[1] = result[0];
  return result;
}

// The input's dims, required present, static and of `dtype`.
Status check_input(const KernelSpec& spec, size_t index, const char* what, bool is_int,
                   const std::vector<int64_t>* expected) {
  const Value* v = spec.inputs[index];
  if (!v->shape.is_static()) return unsupported(spec, std::string(what) + " has a dynamic shape");
  const bool ok_dtype =
      is_int ? (v->dtype == DType::kI32 || v->dtype == DType::kI64) : v->dtype == DType::kF32;
  if (!ok_dtype) {
    return unsupported(spec, std::string(what) + " is " + std::string(dtype_name(v->dtype)) +
                                 (is_int ? "; sequence_lens must be int32 or int64"
                                         : "; only float32 is supported"));
  }
  if (expected != nullptr && v->shape.dims != *expected) {
    return invalid_node(spec, std::string(what) + " has shape " + v->shape.to_string() +
                                  "; expected " + dims_text(*expected));
  }
  return Status::ok();
}

Status check_output(const KernelSpec& spec, size_t index, const char* what,
                    const std::vector<int64_t>& expected) {
  if (index >= spec.outputs.size() || spec.outputs[index] == nullptr) return Status::ok();
  const Value* v = spec.outputs[index];
  if (v->dtype != DType::kF32) {
    return unsupported(spec, std::string(what) + " is " + std::string(dtype_name(v->dtype)) +
                                 "; only float32 is supported");
  }
  if (!v->shape.is_static() || v->shape.dims != expected) {
    return invalid_node(spec, std::string(what) + " has shape " + v->shape.to_string() +
                                  "; the inputs give " + dims_text(expected));
  }
  return Status::ok();
}

Result<std::unique_ptr<Kernel>> make_rnn_kernel(const KernelSpec& spec, RnnCell cell) {
  HSCHED_ASSIGN_OR_RETURN(RnnConfig config, parse_rnn_config(spec, cell));
  HSCHED_ASSIGN_OR_RETURN(auto dnnl_kernel, make_dnnl_rnn_kernel(spec, config));
  if (dnnl_kernel) return dnnl_kernel;
  return make_kernel(
      [config](std::span<const Tensor* const> inputs, std::span<Tensor* const> outputs) {
        return run_rnn_loops(config, inputs, outputs);
      });
}

}  // namespace

float RnnActivation::apply(float x) const {
  switch (kind) {
    case Kind::kSigmoid:
      return 1.0f / (1.0f + std::exp(-x));
    case Kind::kTanh:
      return std::tanh(x);
    case Kind::kRelu:
      return std::max(x, 0.0f);
    case Kind::kAffine:
      return alpha * x + beta;
    case Kind::kLeakyRelu:
      return x >= 0.0f ? x : alpha * x;
    case Kind::kThresholdedRelu:
      return x > alpha ? x : 0.0f;
    case Kind::kScaledTanh:
      return alpha * std::tanh(beta * x);
    case Kind::kHardSigmoid:
      return std::clamp(alpha * x + beta, 0.0f, 1.0f);
    case Kind::kElu:
      return x >= 0.0f ? x : alpha * (std::exp(x) - 1.0f);
    case Kind::kSoftsign:
      return x / (1.0f + std::fabs(x));
    case Kind::kSoftplus:
      return std::log1p(std::exp(x));
  }
  return x;
}

Result<RnnConfig> parse_rnn_config(const KernelSpec& spec, RnnCell cell) {
  const Node& node = spec.node;
  if (spec.opset < 7) {
    // LSTM-1, GRU-1/3 and RNN-1 differ (GRU-3's reset gate, LSTM-1's output_sequence...).
    return unsupported(spec, "opset " + std::to_string(spec.opset) +
                                 " of this op is not supported (from opset 7)");
  }
  RnnConfig c;
  c.cell = cell;
  c.gates = cell == RnnCell::kLstm ? 4 : cell == RnnCell::kGru ? 3 : 1;
  const size_t max_inputs = cell == RnnCell::kLstm ? 8 : 6;
  const size_t max_outputs = cell == RnnCell::kLstm ? 3 : 2;
  if (spec.inputs.size() < 3 || spec.inputs.size() > max_inputs || !spec.has_input(kRnnX) ||
      !spec.has_input(kRnnW) || !spec.has_input(kRnnR)) {
    return invalid_node(spec,
                        "needs X, W and R and at most " + std::to_string(max_inputs) + " inputs");
  }
  if (spec.outputs.size() > max_outputs) {
    return invalid_node(spec, "has " + std::to_string(spec.outputs.size()) + " outputs; at most " +
                                  std::to_string(max_outputs));
  }
  if (cell == RnnCell::kLstm && node.attr_int("input_forget", 0) != 0) {
    return unsupported(spec, "input_forget=1 (coupled input and forget gates) is not supported");
  }
  const std::string direction = node.attr_string("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional") {
    return invalid_node(spec,
                        "direction '" + direction + "' is not forward, reverse or bidirectional");
  }
  c.directions = direction == "bidirectional" ? 2 : 1;
  c.reverse = direction == "reverse";
  const int64_t layout = node.attr_int("layout", 0);
  if (layout != 0 && layout != 1) {
    return invalid_node(spec, "layout " + std::to_string(layout) + " is not 0 or 1");
  }
  c.batch_first = layout == 1;
  c.linear_before_reset = cell == RnnCell::kGru && node.attr_int("linear_before_reset", 0) != 0;
  if (node.has_attr("clip")) {
    const float clip = node.attr_float("clip", 0.0f);
    if (!(clip > 0.0f)) return invalid_node(spec, "clip must be positive");
    c.clip = clip;
  }

  HSCHED_RETURN_IF_ERROR(check_input(spec, kRnnX, "X", false, nullptr));
  HSCHED_RETURN_IF_ERROR(check_input(spec, kRnnR, "R", false, nullptr));
  const auto& x = spec.in_dims(kRnnX);
  if (x.size() != 3) return invalid_node(spec, "X has shape " + dims_text(x) + "; expected rank 3");
  c.seq_length = c.batch_first ? x[1] : x[0];
  c.batch = c.batch_first ? x[0] : x[1];
  c.input_size = x[2];
  // hidden_size: the attribute, else R's last dim; R's shape is checked against it below.
  const auto& r = spec.in_dims(kRnnR);
  c.hidden = node.attr_int("hidden_size", r.size() == 3 ? r[2] : -1);
  constexpr int64_t kMaxDim = int64_t{1} << 24;  // keeps every product below within int64
  if (c.hidden <= 0 || c.hidden > kMaxDim) {
    return invalid_node(spec, "hidden_size " + std::to_string(c.hidden) + " is out of range");
  }
  for (int64_t d : x) {
    if (d > kMaxDim) return invalid_node(spec, "X has shape " + dims_text(x) + "; too large");
  }
  const int64_t D = c.directions, H = c.hidden, GH = c.gates * c.hidden;
  const std::vector<int64_t> w_dims{D, GH, c.input_size}, r_dims{D, GH, H};
  HSCHED_RETURN_IF_ERROR(check_input(spec, kRnnW, "W", false, &w_dims));
  HSCHED_RETURN_IF_ERROR(check_input(spec, kRnnR, "R", false, &r_dims));
  const std::vector<int64_t> b_dims{D, 2 * GH};
  c.has_bias = spec.has_input(kRnnB);
  if (c.has_bias) HSCHED_RETURN_IF_ERROR(check_input(spec, kRnnB, "B", false, &b_dims));
  const std::vector<int64_t> state_dims =
      c.batch_first ? std::vector<int64_t>{c.batch, D, H} : std::vector<int64_t>{D, c.batch, H};
  c.has_seq_lens = spec.has_input(kRnnSeqLens);
  if (c.has_seq_lens) {
    const std::vector<int64_t> lens_dims{c.batch};
    HSCHED_RETURN_IF_ERROR(check_input(spec, kRnnSeqLens, "sequence_lens", true, &lens_dims));
    if (const Tensor* lens = spec.constant(kRnnSeqLens)) {
      auto values = read_seq_lens(c, *lens);
      if (!values.is_ok()) return invalid_node(spec, values.status().message());
      c.constant_seq_lens = *values;
    }
  }
  c.has_initial_h = spec.has_input(kRnnInitialH);
  if (c.has_initial_h) {
    HSCHED_RETURN_IF_ERROR(check_input(spec, kRnnInitialH, "initial_h", false, &state_dims));
  }
  c.has_initial_c = cell == RnnCell::kLstm && spec.has_input(kRnnInitialC);
  if (c.has_initial_c) {
    HSCHED_RETURN_IF_ERROR(check_input(spec, kRnnInitialC, "initial_c", false, &state_dims));
  }
  c.has_peephole = cell == RnnCell::kLstm && spec.has_input(kRnnP);
  if (c.has_peephole) {
    const std::vector<int64_t> p_dims{D, 3 * H};
    HSCHED_RETURN_IF_ERROR(check_input(spec, kRnnP, "P", false, &p_dims));
  }
  const std::vector<int64_t> y_dims = c.batch_first
                                          ? std::vector<int64_t>{c.batch, c.seq_length, D, H}
                                          : std::vector<int64_t>{c.seq_length, D, c.batch, H};
  HSCHED_RETURN_IF_ERROR(check_output(spec, kRnnY, "Y", y_dims));
  HSCHED_RETURN_IF_ERROR(check_output(spec, kRnnYh, "Y_h", state_dims));
  HSCHED_RETURN_IF_ERROR(check_output(spec, kRnnYc, "Y_c", state_dims));
  HSCHED_ASSIGN_OR_RETURN(c.activations, parse_activations(spec, cell, D));
  return c;
}

Result<std::vector<int64_t>> read_seq_lens(const RnnConfig& config, const Tensor& seq_lens) {
  HSCHED_ASSIGN_OR_RETURN(std::vector<int64_t> lens, read_ints(seq_lens, "sequence_lens"));
  if (static_cast<int64_t>(lens.size()) != config.batch) {
    return invalid_argument("sequence_lens has " + std::to_string(lens.size()) +
                            " values for a batch of " + std::to_string(config.batch));
  }
  for (int64_t len : lens) {
    if (len < 0 || len > config.seq_length) {
      return invalid_argument("sequence_lens value " + std::to_string(len) + " is outside [0, " +
                              std::to_string(config.seq_length) + "]");
    }
  }
  return lens;
}

void register_rnn_kernels(KernelRegistry& registry) {
  registry.add("RNN", [](const KernelSpec& spec) { return make_rnn_kernel(spec, RnnCell::kRnn); });
  registry.add("GRU", [](const KernelSpec& spec) { return make_rnn_kernel(spec, RnnCell::kGru); });
  registry.add("LSTM",
               [](const KernelSpec& spec) { return make_rnn_kernel(spec, RnnCell::kLstm); });
}

}  // namespace hsched::cpu
