// The normalization fusion passes (see norm_fusion.h for the patterns).
#include "backends/cpu/kernels/norm_fusion.h"

#include <algorithm>
#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "backends/cpu/kernels/qdq_fusion.h"
#include "backends/cpu/kernels/qlinear_arith.h"
#include "backends/cpu/kernels/quant_util.h"

namespace hsched::cpu {

std::optional<std::vector<float>> per_channel_constant(const Value& v, int64_t channels,
                                                       size_t rank) {
  if (!v.is_constant() || v.dtype != DType::kF32) return std::nullopt;
  const auto values = v.constant->values<float>();
  if (values.size() == 1) return std::vector<float>(static_cast<size_t>(channels), values[0]);
  const auto& dims = v.shape.dims;
  if (static_cast<int64_t>(values.size()) != channels || dims.size() > rank ||
      dims.size() + 1 < rank) {
    return std::nullopt;
  }
  // Right-aligned broadcasting: the channel axis is dims[dims.size() - (rank - 1)].
  const size_t channel_axis = dims.size() - (rank - 1);
  for (size_t a = 0; a < dims.size(); ++a) {
    if (dims[a] != (a == channel_axis ? channels : 1)) return std::nullopt;
  }
  return std::vector<float>(values.begin(), values.end());
}

namespace {

// The values of a constant f32 tensor of exactly `count` elements (InstanceNormalization's scale
// and bias, one per group).
std::optional<std::vector<float>> constant_floats(const Value& v, int64_t count) {
  if (!v.is_constant() || v.dtype != DType::kF32 || v.shape.elements() != count)
    return std::nullopt;
  const auto values = v.constant->values<float>();
  return std::vector<float>(values.begin(), values.end());
}

// A stage after a QDQ GroupNorm's quantization: DequantizeLinear, a Mul (or Add) by a per-channel
// constant k, QuantizeLinear. Where k is a DequantizeLinear of 8-bit data of the stage's type
// (`k_bytes`, one per channel, `k_params`), ONNX Runtime's QLinearMul / QLinearAdd arithmetic
// (`k_first`: k the graph's first operand); else the kernels' float operations on k.
struct RequantStage {
  bool mul = true;
  std::vector<float> k;
  QuantScale dq, q;
  std::vector<int32_t> k_bytes;
  QuantScale k_params;
  bool k_first = false;
};

// One stage on one value of the stage's 8-bit type (`value` its integer), channel c.
int32_t through_stage(const RequantStage& stage, int64_t c, int32_t value, DType type) {
  if (!stage.k_bytes.empty()) {
    const QLinearBinary op{!stage.mul, stage.k_first, stage.dq, stage.k_params, stage.q};
    int32_t out = 0;
    dispatch_quantized(type, [&](auto tag) {
      using Q = decltype(tag);
      const Q a = static_cast<Q>(value), b = static_cast<Q>(stage.k_bytes[static_cast<size_t>(c)]);
      Q y{};
      qlinear_binary(op, &a, &b, &y, 0, 1, 1);
      out = y;
    });
    return out;
  }
  const float v = static_cast<float>(value - stage.dq.zero_point) * stage.dq.scale;
  const float k = stage.k[static_cast<size_t>(c)];
  const float r = (stage.mul ? v * k : v + k) / stage.q.scale;
  return type == DType::kU8 ? int32_t{saturate_round<uint8_t>(r, stage.q.zero_point)}
                            : int32_t{saturate_round<int8_t>(r, stage.q.zero_point)};
}

// The [C, 256] table of `type` from each value of the normalization's quantization (by its byte:
// i8 values as their two's complement) through `stages`.
Tensor stage_table(const std::vector<RequantStage>& stages, int64_t channels, DType type) {
  Tensor table = Tensor::uninitialized(type, {channels, 256});
  for (int64_t c = 0; c < channels; ++c) {
    for (int32_t i = 0; i < 256; ++i) {
      int32_t value = type == DType::kU8 ? i : int32_t{static_cast<int8_t>(i)};
      for (const RequantStage& stage : stages) value = through_stage(stage, c, value, type);
      const size_t at = static_cast<size_t>(c * 256 + i);
      if (type == DType::kU8) {
        table.values<uint8_t>()[at] = static_cast<uint8_t>(value);
      } else {
        table.values<int8_t>()[at] = static_cast<int8_t>(value);
      }
    }
  }
  return table;
}

class Matcher {
 public:
  Matcher(Graph& graph, const std::vector<Node*>& nodes) : graph_(graph), nodes_(nodes) {
    consumers_.resize(graph.values().size());
    for (size_t i = 0; i < nodes.size(); ++i) {
      for (ValueId v : nodes[i]->inputs) {
        if (v != kNoValue) consumers_[static_cast<size_t>(v)].push_back(i);
      }
    }
    outputs_.insert(graph.outputs().begin(), graph.outputs().end());
  }

  // The node reading `v` when it is the only reader (and `v` no graph output) and has `op`.
  std::optional<size_t> sole(ValueId v, const char* op) const {
    const auto& c = consumers_[static_cast<size_t>(v)];
    if (c.size() != 1 || outputs_.count(v) || nodes_[c[0]]->op_type != op) return std::nullopt;
    return c[0];
  }

  // `v`'s readers are exactly Sigmoid(v) and Mul(v, Sigmoid(v)): returns {sigmoid, mul}.
  std::optional<std::pair<size_t, size_t>> silu(ValueId v) const {
    const auto& c = consumers_[static_cast<size_t>(v)];
    if (c.size() != 2 || outputs_.count(v)) return std::nullopt;
    size_t sig = c[0], mul = c[1];
    if (nodes_[sig]->op_type != "Sigmoid") std::swap(sig, mul);
    const Node& s = *nodes_[sig];
    const Node& m = *nodes_[mul];
    if (s.op_type != "Sigmoid" || m.op_type != "Mul" || m.inputs.size() != 2) return std::nullopt;
    const ValueId other = m.inputs[0] == v ? m.inputs[1] : m.inputs[0];
    if (other != s.outputs[0] || !sole(s.outputs[0], "Mul")) return std::nullopt;
    return std::make_pair(sig, mul);
  }

  // A QuantizeLinear or DequantizeLinear of one scale (f32) and zero point (u8 or i8, or none),
  // both constants.
  bool one_value_params(const Node& node) const {
    const auto single_constant = [&](size_t i, std::initializer_list<DType> dtypes) {
      if (i >= node.inputs.size() || node.inputs[i] == kNoValue) return false;
      const Value& v = graph_.value(node.inputs[i]);
      return v.is_constant() && v.shape.elements() == 1 &&
             std::find(dtypes.begin(), dtypes.end(), v.dtype) != dtypes.end();
    };
    return single_constant(1, {DType::kF32}) &&
           (node.inputs.size() < 3 || node.inputs[2] == kNoValue ||
            single_constant(2, {DType::kU8, DType::kI8}));
  }

  // The scale and zero point of a (de)quantization that one_value_params takes.
  QuantScale quant_params(const Node& node) const {
    const float scale = graph_.value(node.inputs[1]).constant->values<float>()[0];
    if (node.inputs.size() < 3 || node.inputs[2] == kNoValue) return {scale, 0};
    const Tensor& zp = *graph_.value(node.inputs[2]).constant;
    return {scale, zp.dtype() == DType::kU8 ? int32_t{zp.values<uint8_t>()[0]}
                                            : int32_t{zp.values<int8_t>()[0]}};
  }

  // Tries the GroupNorm chain starting at nodes_[start]; on success rewrites it and returns
  // the absorbed node indices.
  std::optional<std::vector<size_t>> match_group_norm(size_t start) {
    Node& reshape = *nodes_[start];
    if (reshape.op_type != "Reshape" || reshape.outputs.size() != 1) return std::nullopt;
    const ValueId x = reshape.inputs[0];
    const Value& xv = graph_.value(x);
    const auto& dims = xv.shape.dims;
    const auto& grouped = graph_.value(reshape.outputs[0]).shape.dims;
    if (dims.size() < 3 || grouped.size() < 3 || grouped[0] != dims[0]) return std::nullopt;
    if (xv.dtype == DType::kU8 || xv.dtype == DType::kI8) return match_quantized_group_norm(start);
    if (xv.dtype != DType::kF32) return std::nullopt;
    const int64_t channels = dims[1], groups = grouped[1];
    if (groups < 1 || channels % groups != 0) return std::nullopt;
    const auto norm = sole(reshape.outputs[0], "InstanceNormalization");
    if (!norm) return std::nullopt;
    const Node& nn = *nodes_[*norm];
    // Malformed norms (scale or B left out) are not fused: the kernel refuses them, named.
    if (nn.inputs.size() != 3 || nn.inputs[1] == kNoValue || nn.inputs[2] == kNoValue) {
      return std::nullopt;
    }
    const auto a = constant_floats(graph_.value(nn.inputs[1]), groups);
    const auto b = constant_floats(graph_.value(nn.inputs[2]), groups);
    const auto back = sole(nn.outputs[0], "Reshape");
    if (!a || !b || !back || graph_.value(nodes_[*back]->outputs[0]).shape.dims != dims) {
      return std::nullopt;
    }
    std::vector<size_t> absorbed{*norm, *back};
    // gamma_c = a_g * m_c and beta_c = b_g * m_c + d_c, for the optional Mul m and Add d.
    std::vector<float> gamma(static_cast<size_t>(channels)), beta(gamma.size());
    const int64_t per_group = channels / groups;
    for (int64_t c = 0; c < channels; ++c) {
      gamma[static_cast<size_t>(c)] = (*a)[static_cast<size_t>(c / per_group)];
      beta[static_cast<size_t>(c)] = (*b)[static_cast<size_t>(c / per_group)];
    }
    ValueId current = nodes_[*back]->outputs[0];
    for (const char* op : {"Mul", "Add"}) {
      const auto step = sole(current, op);
      if (!step) continue;
      const Node& sn = *nodes_[*step];
      const ValueId other = sn.inputs[0] == current ? sn.inputs[1] : sn.inputs[0];
      const auto k = per_channel_constant(graph_.value(other), channels, dims.size());
      if (!k || graph_.value(sn.outputs[0]).shape.dims != dims) break;
      for (size_t c = 0; c < gamma.size(); ++c) {
        if (op[0] == 'M') {
          gamma[c] *= (*k)[c];
          beta[c] *= (*k)[c];
        } else {
          beta[c] += (*k)[c];
        }
      }
      absorbed.push_back(*step);
      current = sn.outputs[0];
    }
    int64_t with_silu = 0;
    if (const auto act = silu(current)) {
      absorbed.push_back(act->first);
      absorbed.push_back(act->second);
      current = nodes_[act->second]->outputs[0];
      with_silu = 1;
    }
    Node fused;
    fused.name = nn.name;
    fused.op_type = kGroupNormOp;
    fused.attributes["num_groups"] = groups;
    fused.attributes["epsilon"] = nn.attr_float("epsilon", 1e-5f);
    fused.attributes["silu"] = with_silu;
    const std::string prefix = nn.name + "/group_norm_";
    const ValueId gamma_id =
        graph_.add_constant(prefix + "gamma", Tensor::from_vector(DType::kF32, {channels}, gamma));
    const ValueId beta_id =
        graph_.add_constant(prefix + "beta", Tensor::from_vector(DType::kF32, {channels}, beta));
    fused.inputs = {x, gamma_id, beta_id};
    fused.outputs = {current};
    reshape = std::move(fused);
    return absorbed;
  }

  // The QDQ form of the GroupNorm chain after fuse_qdq (its Reshapes on the 8-bit data): Reshape
  // -> DequantizeLinear -> InstanceNormalization -> QuantizeLinear -> Reshape back, then up to
  // [DequantizeLinear -> Mul(per-channel constant) -> QuantizeLinear] and [DequantizeLinear ->
  // Add(per-channel constant) -> QuantizeLinear], every (de)quantization of one constant scale
  // and zero point. The stages after the normalization's quantization map its 256 values to the
  // chain's output per channel: that map is computed here with the kernels' float operations, a
  // [C, 256] table of the output's type.
  std::optional<std::vector<size_t>> match_quantized_group_norm(size_t start) {
    Node& reshape = *nodes_[start];
    const ValueId x = reshape.inputs[0];
    const auto& dims = graph_.value(x).shape.dims;
    const int64_t channels = dims[1], groups = graph_.value(reshape.outputs[0]).shape.dims[1];
    if (groups < 1 || channels % groups != 0) return std::nullopt;
    std::vector<size_t> absorbed;
    // The sole reader of `v` when it is `op` (a (de)quantization of one value each): absorbed.
    const auto step = [&](ValueId v, const std::string& op) -> std::optional<size_t> {
      const auto s = sole(v, op.c_str());
      if (!s || (op.ends_with("Linear") && !one_value_params(*nodes_[*s]))) return std::nullopt;
      absorbed.push_back(*s);
      return s;
    };
    const auto dq = step(reshape.outputs[0], "DequantizeLinear");
    const auto norm = dq ? step(nodes_[*dq]->outputs[0], "InstanceNormalization") : std::nullopt;
    if (!norm) return std::nullopt;
    const Node& nn = *nodes_[*norm];
    if (nn.inputs.size() != 3 || nn.inputs[1] == kNoValue || nn.inputs[2] == kNoValue ||
        !constant_floats(graph_.value(nn.inputs[1]), groups) ||
        !constant_floats(graph_.value(nn.inputs[2]), groups)) {
      return std::nullopt;
    }
    const auto q = step(nn.outputs[0], "QuantizeLinear");
    const auto back = q ? step(nodes_[*q]->outputs[0], "Reshape") : std::nullopt;
    if (!back || graph_.value(nodes_[*back]->outputs[0]).shape.dims != dims) return std::nullopt;
    const DType q_type = graph_.value(nodes_[*q]->outputs[0]).dtype;
    if (q_type != DType::kU8 && q_type != DType::kI8) return std::nullopt;
    std::vector<RequantStage> stages;
    ValueId current = nodes_[*back]->outputs[0];
    for (const char* op : {"Mul", "Add"}) {
      const auto d = sole(current, "DequantizeLinear");
      const auto s = d ? sole(nodes_[*d]->outputs[0], op) : std::nullopt;
      if (!s || !one_value_params(*nodes_[*d]) || nodes_[*s]->inputs.size() != 2) continue;
      const Node& sn = *nodes_[*s];
      const ValueId other = sn.inputs[0] == nodes_[*d]->outputs[0] ? sn.inputs[1] : sn.inputs[0];
      const auto k = per_channel_constant(graph_.value(other), channels, dims.size());
      const auto r = k ? sole(sn.outputs[0], "QuantizeLinear") : std::nullopt;
      if (!r || !one_value_params(*nodes_[*r]) ||
          graph_.value(nodes_[*r]->outputs[0]).dtype != q_type) {
        continue;
      }
      RequantStage stage;
      stage.mul = op[0] == 'M';
      stage.k = *k;
      stage.dq = quant_params(*nodes_[*d]);
      stage.q = quant_params(*nodes_[*r]);
      if (const Node* kd = constant_byte_dequantization(graph_, other)) {
        const Tensor& data = *graph_.value(kd->inputs[0]).constant;
        if (data.dtype() == q_type && data.elements() == channels) {
          for (int64_t c = 0; c < channels; ++c) {
            stage.k_bytes.push_back(q_type == DType::kU8
                                        ? int32_t{data.values<uint8_t>()[static_cast<size_t>(c)]}
                                        : int32_t{data.values<int8_t>()[static_cast<size_t>(c)]});
          }
          stage.k_params = quant_params(*kd);
          stage.k_first = sn.inputs[0] == other;
        }
      }
      stages.push_back(std::move(stage));
      absorbed.insert(absorbed.end(), {*d, *s, *r});
      current = nodes_[*r]->outputs[0];
    }
    const Node& dqn = *nodes_[*dq];
    const Node& qn = *nodes_[*q];
    Node fused;
    fused.name = nn.name;
    fused.op_type = kGroupNormOp;
    fused.attributes["num_groups"] = groups;
    fused.attributes["epsilon"] = nn.attr_float("epsilon", 1e-5f);
    fused.attributes["silu"] = int64_t{0};
    const ValueId table_id =
        graph_.add_constant(nn.name + "/group_norm_table", stage_table(stages, channels, q_type));
    const auto zero_point = [](const Node& node) {
      return node.inputs.size() > 2 ? node.inputs[2] : kNoValue;
    };
    fused.inputs = {x,
                    nn.inputs[1],
                    nn.inputs[2],
                    dqn.inputs[1],
                    zero_point(dqn),
                    qn.inputs[1],
                    zero_point(qn),
                    table_id};
    fused.outputs = {current};
    reshape = std::move(fused);
    return absorbed;
  }

  // Tries Transpose(0,2,3,1) -> LayerNormalization(last axis) -> Transpose(0,3,1,2) at start; for
  // 8-bit x (a QDQ model's transposes, run on the 8-bit data) Transpose -> DequantizeLinear ->
  // LayerNormalization -> QuantizeLinear -> Transpose, each quantization of one value.
  std::optional<std::vector<size_t>> match_channel_layer_norm(size_t start) {
    Node& to_last = *nodes_[start];
    if (to_last.op_type != "Transpose" || to_last.attr_ints("perm") != kToLast) return std::nullopt;
    const ValueId x = to_last.inputs[0];
    const DType x_type = graph_.value(x).dtype;
    const bool quantized = x_type == DType::kU8 || x_type == DType::kI8;
    if ((x_type != DType::kF32 && !quantized) || graph_.value(x).shape.rank() != 4) {
      return std::nullopt;
    }
    const int64_t channels = graph_.value(x).shape.dims[1];
    std::vector<size_t> absorbed, quantizations;
    // Through the (de)quantization `op` reading `v` when x is 8-bit: the value it writes.
    const auto through = [&](ValueId v, const char* op) -> std::optional<ValueId> {
      if (!quantized) return v;
      const auto step = sole(v, op);
      if (!step || !one_value_params(*nodes_[*step])) return std::nullopt;
      absorbed.push_back(*step);
      quantizations.push_back(*step);
      return nodes_[*step]->outputs[0];
    };
    const auto normalized_in = through(to_last.outputs[0], "DequantizeLinear");
    const auto norm = normalized_in ? sole(*normalized_in, "LayerNormalization") : std::nullopt;
    if (!norm) return std::nullopt;
    const Node& nn = *nodes_[*norm];
    const int64_t axis = nn.attr_int("axis", -1);
    const bool only_y = nn.outputs.size() == 1 ||
                        std::all_of(nn.outputs.begin() + 1, nn.outputs.end(), [&](ValueId v) {
                          return v == kNoValue ||
                                 (consumers_[static_cast<size_t>(v)].empty() && !outputs_.count(v));
                        });
    const auto per_channel = [&](size_t i) {
      return i >= nn.inputs.size() || nn.inputs[i] == kNoValue ||
             graph_.value(nn.inputs[i]).shape.elements() == channels;
    };
    // The fused kernel runs in the Transpose's place: its scale and bias must be ready there.
    if ((axis != -1 && axis != 3) || !only_y || !per_channel(1) || !per_channel(2) ||
        !ready_before(nn, 1, start) || !ready_before(nn, 2, start)) {
      return std::nullopt;
    }
    absorbed.push_back(*norm);
    const auto normalized = through(nn.outputs[0], "QuantizeLinear");
    const auto back = normalized ? sole(*normalized, "Transpose") : std::nullopt;
    if (!back || nodes_[*back]->attr_ints("perm") != kToFirst) return std::nullopt;
    absorbed.push_back(*back);
    Node fused;
    fused.name = nn.name;
    fused.op_type = kChannelLayerNormOp;
    fused.attributes["epsilon"] = nn.attr_float("epsilon", 1e-5f);
    fused.inputs = nn.inputs;
    fused.inputs[0] = x;
    if (quantized) {
      fused.inputs.resize(3, kNoValue);
      for (size_t step : quantizations) {  // the DequantizeLinear's, then the QuantizeLinear's
        const Node& q = *nodes_[step];
        fused.inputs.push_back(q.inputs[1]);
        fused.inputs.push_back(q.inputs.size() > 2 ? q.inputs[2] : kNoValue);
      }
    }
    fused.outputs = {nodes_[*back]->outputs[0]};
    to_last = std::move(fused);
    return absorbed;
  }

  // DequantizeLinear -> LayerNormalization over the last axis, or Softmax whose axis attribute
  // names the last, -> QuantizeLinear at start.
  std::optional<std::vector<size_t>> match_quantized_rows(size_t start) {
    Node& dq = *nodes_[start];
    if (dq.op_type != "DequantizeLinear" || dq.inputs.empty() || dq.outputs.empty() ||
        !one_value_params(dq)) {
      return std::nullopt;
    }
    const ValueId x = dq.inputs[0];
    const Value& xv = graph_.value(x);
    if ((xv.dtype != DType::kU8 && xv.dtype != DType::kI8) || !xv.shape.is_static() ||
        xv.shape.rank() < 1) {
      return std::nullopt;
    }
    const int64_t size = xv.shape.dims.back();
    const auto last = static_cast<int64_t>(xv.shape.rank()) - 1;
    // The op reading the DequantizeLinear; where others read it too, the DequantizeLinear stays a
    // step for them and the fused op reads x (ONNX Runtime gives each reader its own).
    std::optional<size_t> op;
    for (size_t c : consumers_[static_cast<size_t>(dq.outputs[0])]) {
      const std::string& type = nodes_[c]->op_type;
      if ((type == "LayerNormalization" || type == "Softmax") && nodes_[c]->domain.empty() &&
          !nodes_[c]->inputs.empty() && nodes_[c]->inputs[0] == dq.outputs[0]) {
        op = c;
        break;
      }
    }
    if (!op) return std::nullopt;
    const bool norm = nodes_[*op]->op_type == "LayerNormalization";
    const bool shared = consumers_[static_cast<size_t>(dq.outputs[0])].size() != 1 ||
                        outputs_.count(dq.outputs[0]) != 0;
    const Node& on = *nodes_[*op];
    // Softmax's default axis is 1 before opset 13 (the input flattened from it).
    const int64_t default_axis = norm || graph_.opset == 0 || graph_.opset >= 13 ? -1 : 1;
    const int64_t at = on.attr_int("axis", default_axis);
    const bool last_axis = at == -1 || at == last;
    const bool only_y = std::all_of(on.outputs.begin() + 1, on.outputs.end(), [&](ValueId v) {
      return v == kNoValue || (consumers_[static_cast<size_t>(v)].empty() && !outputs_.count(v));
    });
    const auto sized = [&](size_t i) {
      return i >= on.inputs.size() || on.inputs[i] == kNoValue ||
             graph_.value(on.inputs[i]).shape.elements() == size;
    };
    // Where the DequantizeLinear is the op's only reader, the fused kernel runs in its place: a
    // LayerNormalization's scale and bias must be ready there.
    const size_t place = shared ? *op : start;
    if (!last_axis || !only_y ||
        (norm && (on.inputs.size() < 2 || on.inputs[1] == kNoValue || !sized(1) || !sized(2) ||
                  !ready_before(on, 1, place) || !ready_before(on, 2, place)))) {
      return std::nullopt;
    }
    const auto q = sole(on.outputs[0], "QuantizeLinear");
    if (!q || !one_value_params(*nodes_[*q])) return std::nullopt;
    const Node& qn = *nodes_[*q];
    const DType y_type = graph_.value(qn.outputs[0]).dtype;
    // A Softmax runs ONNX Runtime's QLinearSoftmax arithmetic, of one 8-bit type.
    if ((y_type != DType::kU8 && y_type != DType::kI8) || (!norm && y_type != xv.dtype)) {
      return std::nullopt;
    }
    const auto input = [](const Node& node, size_t i) {
      return i < node.inputs.size() ? node.inputs[i] : kNoValue;
    };
    Node fused;
    fused.name = on.name;
    fused.op_type = norm ? kQdqLayerNormOp : kQdqSoftmaxOp;
    fused.inputs = {x};
    if (norm) {
      fused.attributes["epsilon"] = on.attr_float("epsilon", 1e-5f);
      fused.inputs.insert(fused.inputs.end(), {on.inputs[1], input(on, 2)});
    }
    fused.inputs.insert(fused.inputs.end(),
                        {dq.inputs[1], input(dq, 2), qn.inputs[1], input(qn, 2)});
    fused.outputs = {qn.outputs[0]};
    if (shared) {
      *nodes_[*op] = std::move(fused);
      return std::vector<size_t>{*q};
    }
    dq = std::move(fused);
    return std::vector<size_t>{*op, *q};
  }

 private:
  // Whether input i of `node` is ready before the node at `at` runs: absent, a constant, a graph
  // input, or written by a node before it (a partition may dequantize a LayerNormalization's
  // scale after its x).
  bool ready_before(const Node& node, size_t i, size_t at) const {
    if (i >= node.inputs.size() || node.inputs[i] == kNoValue) return true;
    const ValueId v = node.inputs[i];
    if (graph_.value(v).is_constant() || graph_.value(v).producer == kNoNode) return true;
    for (size_t k = 0; k < at; ++k) {
      const auto& outs = nodes_[k]->outputs;
      if (std::find(outs.begin(), outs.end(), v) != outs.end()) return true;
    }
    return false;
  }

  static inline const std::vector<int64_t> kToLast{0, 2, 3, 1}, kToFirst{0, 3, 1, 2};
  Graph& graph_;
  const std::vector<Node*>& nodes_;
  std::vector<std::vector<size_t>> consumers_;
  std::set<ValueId> outputs_;
};

// Runs `match` (a Matcher member) at every node not yet absorbed.
template <typename Match>
int fuse_all(Matcher& matcher, Match match, size_t count, std::vector<bool>& absorbed) {
  int fused = 0;
  for (size_t i = 0; i < count; ++i) {
    if (absorbed[i]) continue;
    const auto chain = (matcher.*match)(i);
    if (!chain) continue;
    for (size_t s : *chain) absorbed[s] = true;
    fused += static_cast<int>(chain->size());
  }
  return fused;
}

}  // namespace

int fuse_group_norms(Graph& graph, const std::vector<Node*>& nodes, std::vector<bool>& absorbed) {
  Matcher matcher(graph, nodes);
  return fuse_all(matcher, &Matcher::match_group_norm, nodes.size(), absorbed);
}

int fuse_channel_layer_norms(Graph& graph, const std::vector<Node*>& nodes,
                             std::vector<bool>& absorbed) {
  Matcher matcher(graph, nodes);
  return fuse_all(matcher, &Matcher::match_channel_layer_norm, nodes.size(), absorbed);
}

int fuse_quantized_row_ops(Graph& graph, const std::vector<Node*>& nodes,
                           std::vector<bool>& absorbed) {
  Matcher matcher(graph, nodes);
  return fuse_all(matcher, &Matcher::match_quantized_rows, nodes.size(), absorbed);
}

}  // namespace hsched::cpu
