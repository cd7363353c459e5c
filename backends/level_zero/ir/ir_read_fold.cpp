#include "backends/level_zero/ir/ir_read_fold.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

namespace hsched::ir::detail {
namespace {

class Folder {
 public:
  explicit Folder(const Graph& graph) : in_(graph), skip_(graph.nodes().size(), false) {
    out_.name = graph.name;
    out_.opset = graph.opset;
    map_.assign(graph.values().size(), kNoValue);
    for (ValueId id : graph.outputs()) is_output_.push_back(id);
    find_aliases();
  }

  Graph run() {
    for (ValueId id : in_.inputs()) out_.add_input(copy(id));
    for (size_t i = 0; i < in_.nodes().size(); ++i) {
      if (skip_[i]) continue;
      Node node = in_.nodes()[i];
      fixed_inputs_.clear();
      fold(node);
      for (size_t j = 0; j < node.inputs.size(); ++j) {
        const auto fixed = std::find_if(fixed_inputs_.begin(), fixed_inputs_.end(),
                                        [j](const auto& f) { return f.first == j; });
        node.inputs[j] = fixed != fixed_inputs_.end() ? fixed->second : copy(node.inputs[j]);
      }
      for (ValueId& v : node.outputs) v = copy(v);
      out_.add_node(std::move(node));
    }
    for (ValueId id : in_.outputs()) out_.add_output(copy(id));
    return std::move(out_);
  }

 private:
  bool is_output(ValueId id) const {
    return std::find(is_output_.begin(), is_output_.end(), id) != is_output_.end();
  }

  // Values write_ir only re-expressed: an Identity or Reshape of a constant is that constant (a
  // QDQ model's shared bias, a [C] bias seen as [1, C, 1...]), and Reshapes back to the dims the
  // first of them read are that value (a grouped Conv's weights).
  void find_aliases() {
    for (size_t i = 0; i < in_.nodes().size(); ++i) {
      const Node& node = in_.nodes()[i];
      if ((node.op_type != "Identity" && node.op_type != "Reshape") || node.inputs.empty() ||
          node.outputs.size() != 1 || is_output(node.outputs[0])) {
        continue;
      }
      const ValueId out = node.outputs[0];
      const std::vector<int64_t>& dims = in_.value(out).shape.dims;
      ValueId source = resolved(node.inputs[0]);
      if (const Tensor* t = constant(source)) {
        folded_.emplace(out, t->reshaped(dims));
        skip_[i] = true;
        continue;
      }
      if (node.op_type != "Reshape") continue;
      std::vector<NodeId> chain = {static_cast<NodeId>(i)};
      while (in_.value(source).producer != kNoNode && !is_output(source) &&
             in_.value(source).consumers.size() == 1) {
        const Node& before = in_.node(in_.value(source).producer);
        if (before.op_type != "Reshape") break;
        chain.push_back(in_.value(source).producer);
        source = resolved(before.inputs[0]);
      }
      if (in_.value(source).shape.dims != dims) continue;
      aliases_[out] = source;
      for (NodeId id : chain) skip_[static_cast<size_t>(id)] = true;
    }
  }

  ValueId resolved(ValueId id) const {
    const auto it = aliases_.find(id);
    return it == aliases_.end() ? id : it->second;
  }

  // The data of a constant of the graph or one find_aliases made, else null.
  const Tensor* constant(ValueId id) const {
    const auto it = folded_.find(id);
    if (it != folded_.end()) return &it->second;
    const Value& v = in_.value(id);
    return v.constant ? &*v.constant : nullptr;
  }

  // The value in the new graph (created on first use; values nobody uses any more are dropped).
  ValueId copy(ValueId id) {
    if (id == kNoValue) return kNoValue;
    id = resolved(id);
    ValueId& mapped = map_.at(static_cast<size_t>(id));
    if (mapped == kNoValue) {
      const Value& v = in_.value(id);
      const Tensor* t = constant(id);
      mapped = t ? out_.add_constant(v.name, *t) : out_.add_value(v.name, v.dtype, v.shape);
    }
    return mapped;
  }

  // A name no value of either graph has.
  std::string unique_name(const std::string& base) const {
    std::string name = base;
    for (int n = 1; in_.find_value(name) || out_.find_value(name); ++n) {
      name = base + "#" + std::to_string(n);
    }
    return name;
  }

  // A constant of the new graph, under a name no value of either graph has.
  ValueId new_constant(const std::string& base, Tensor tensor) {
    return out_.add_constant(unique_name(base), std::move(tensor));
  }

  // The node that alone reads `value` (not a graph output), or null.
  const Node* sole_reader(ValueId value, NodeId* id = nullptr) const {
    const Value& v = in_.value(value);
    if (v.consumers.size() != 1 || is_output(value)) return nullptr;
    if (id) *id = v.consumers[0];
    return &in_.node(v.consumers[0]);
  }

  // For a binary `op` node reading `value` and an f32 Const: the Const.
  const Tensor* other_constant(const Node& node, const std::string& op, ValueId value) const {
    if (node.op_type != op || node.inputs.size() != 2 || node.outputs.size() != 1) return nullptr;
    const ValueId other = node.inputs[0] == value ? node.inputs[1] : node.inputs[0];
    if (node.inputs[0] != value && node.inputs[1] != value) return nullptr;
    if (other == value) return nullptr;
    const Tensor* t = constant(resolved(other));
    if (!t || t->dtype() != DType::kF32) return nullptr;
    // The result must keep the value's dims (no broadcasting past them).
    if (in_.value(node.outputs[0]).shape != in_.value(value).shape) return nullptr;
    return t;
  }

  static bool is_channel_shaped(const Tensor& t, size_t rank, int64_t channels) {
    if (t.dims().size() != rank || rank < 2 || t.dims()[1] != channels) return false;
    for (size_t i = 0; i < rank; ++i) {
      if (i != 1 && t.dims()[i] != 1) return false;
    }
    return true;
  }

  bool all_equal(ValueId id, float x) const {
    const Tensor* t = constant(resolved(id));
    if (!t || t->dtype() != DType::kF32) return false;
    const auto values = t->values<float>();
    return std::all_of(values.begin(), values.end(), [x](float y) { return y == x; });
  }

  // `t` broadcast to `dims` (the normalized axes of a tensor of rank `rank` starting at `axis`),
  // when it varies along those axes only; nullopt otherwise.
  static std::optional<Tensor> over_normalized_axes(const Tensor& t, const std::vector<int64_t>& x,
                                                    size_t axis) {
    const auto& k = t.dims();
    if (k.size() > x.size()) return std::nullopt;
    const size_t lead = x.size() - k.size();
    for (size_t q = 0; q < k.size(); ++q) {
      if (q + lead < axis && k[q] != 1) return std::nullopt;
    }
    const std::vector<int64_t> dims(x.begin() + static_cast<std::ptrdiff_t>(axis), x.end());
    Tensor out(DType::kF32, dims);
    auto dst = out.values<float>();
    const auto src = t.values<float>();
    std::vector<int64_t> index(dims.size(), 0);
    for (size_t flat = 0; flat < dst.size(); ++flat) {
      int64_t offset = 0;
      for (size_t q = 0; q < k.size(); ++q) {
        const size_t pos = q + lead;  // position in x
        const int64_t coordinate = pos >= axis && k[q] != 1 ? index[pos - axis] : 0;
        offset = offset * k[q] + coordinate;
      }
      dst[flat] = src[static_cast<size_t>(offset)];
      for (size_t j = dims.size(); j-- > 0;) {
        if (++index[j] < dims[j]) break;
        index[j] = 0;
      }
    }
    return out;
  }

  void fold(Node& node) {
    if (node.op_type == "QuantizeLinear") {
      fold_quantize(node);
    } else if (node.op_type == "Cast") {
      fold_dequantize(node);
    } else if ((node.op_type == "Conv" || node.op_type == "ConvTranspose") &&
               node.inputs.size() == 2) {
      fold_conv_bias(node);
    } else if ((node.op_type == "Gemm" && node.inputs.size() == 2) || node.op_type == "MatMul") {
      fold_gemm_bias(node);
    } else if (node.op_type == "InstanceNormalization" || node.op_type == "LayerNormalization") {
      fold_norm_affine(node);
    }
  }

  // read_fake_quantize's QuantizeLinear onto u8 levels, its DequantizeLinear onto the integer
  // grid (scale 1) and the Convert to u8 or i8 after it: the QuantizeLinear write_ir came from.
  void fold_quantize(Node& node) {
    if (node.inputs.size() != 3 || node.outputs.size() != 1) return;
    NodeId dq_id = kNoNode, cast_id = kNoNode;
    const Node* dq = sole_reader(node.outputs[0], &dq_id);
    if (!dq || dq->op_type != "DequantizeLinear" || dq->inputs.size() != 3) return;
    const Node* cast = sole_reader(dq->outputs[0], &cast_id);
    if (!cast || cast->op_type != "Cast" || !all_equal(dq->inputs[1], 1.0f)) return;
    const DType to = in_.value(cast->outputs[0]).dtype;
    const Value& grid_zero = in_.value(dq->inputs[2]);
    const Value& zero = in_.value(node.inputs[2]);
    if ((to != DType::kU8 && to != DType::kI8) || !grid_zero.constant ||
        grid_zero.constant->elements() != 1 || !zero.constant || zero.dtype != DType::kU8) {
      return;
    }
    const int shift = grid_zero.constant->values<uint8_t>()[0];
    if (shift != (to == DType::kI8 ? 128 : 0)) return;
    const auto levels = zero.constant->values<uint8_t>();
    Tensor typed(to, zero.constant->dims());
    for (size_t i = 0; i < levels.size(); ++i) {
      if (to == DType::kI8) {
        typed.values<int8_t>()[i] = static_cast<int8_t>(levels[i] - shift);
      } else {
        typed.values<uint8_t>()[i] = levels[i];
      }
    }
    skip_[static_cast<size_t>(dq_id)] = true;
    skip_[static_cast<size_t>(cast_id)] = true;
    node.outputs = cast->outputs;
    fixed_inputs_ = {{2, new_constant(node.name + "/zero_point", std::move(typed))}};
  }

  // A per-tensor constant, or one varying along a single axis of data of `rank`: its values and
  // that axis (-1: one value).
  static std::optional<std::pair<std::vector<float>, int64_t>> axis_values(const Tensor& t,
                                                                           size_t rank) {
    const auto values = t.values<float>();
    if (values.size() == 1) return std::make_pair(std::vector<float>{values[0]}, int64_t{-1});
    if (t.dims().size() != rank) return std::nullopt;
    int64_t axis = -1;
    for (size_t i = 0; i < rank; ++i) {
      if (t.dims()[i] == 1) continue;
      if (axis >= 0) return std::nullopt;
      axis = static_cast<int64_t>(i);
    }
    return std::make_pair(std::vector<float>(values.begin(), values.end()), axis);
  }

  // write_ir's dequantization, Convert of 8-bit data to float, Subtract of a zero point (when not
  // 0) and Multiply by the scale: the DequantizeLinear it came from.
  void fold_dequantize(Node& node) {
    const ValueId x = node.inputs.empty() ? kNoValue : node.inputs[0];
    if (x == kNoValue || node.outputs.size() != 1) return;
    const DType from = in_.value(x).dtype;
    const size_t rank = in_.value(x).shape.dims.size();
    if ((from != DType::kU8 && from != DType::kI8) ||
        in_.value(node.outputs[0]).dtype != DType::kF32) {
      return;
    }
    NodeId sub_id = kNoNode, mul_id = kNoNode;
    ValueId at = node.outputs[0];
    const Node* next = sole_reader(at, &mul_id);
    const Tensor* zero_t = next ? other_constant(*next, "Sub", at) : nullptr;
    if (zero_t != nullptr) {
      if (next->inputs[0] != at) return;
      sub_id = mul_id;
      at = next->outputs[0];
      next = sole_reader(at, &mul_id);
    }
    const Tensor* scale_t = next ? other_constant(*next, "Mul", at) : nullptr;
    if (scale_t == nullptr) return;
    auto scale = axis_values(*scale_t, rank);
    auto zero = zero_t ? axis_values(*zero_t, rank)
                       : std::make_optional(std::make_pair(std::vector<float>{0.0f}, int64_t{-1}));
    if (!scale || !zero ||
        (scale->second >= 0 && zero->second >= 0 && scale->second != zero->second)) {
      return;
    }
    const int64_t axis = std::max(scale->second, zero->second);
    const size_t count = std::max(scale->first.size(), zero->first.size());
    scale->first.resize(count, scale->first[0]);
    zero->first.resize(count, zero->first[0]);
    const float lo = from == DType::kI8 ? -128.0f : 0.0f;
    Tensor zero_typed(from, axis >= 0 ? std::vector<int64_t>{static_cast<int64_t>(count)}
                                      : std::vector<int64_t>{});
    for (size_t c = 0; c < count; ++c) {
      const float z = zero->first[c];
      if (!(z >= lo && z <= lo + 255.0f) || z != std::nearbyint(z)) return;
      if (from == DType::kI8) {
        zero_typed.values<int8_t>()[c] = static_cast<int8_t>(z);
      } else {
        zero_typed.values<uint8_t>()[c] = static_cast<uint8_t>(z);
      }
    }
    const std::vector<int64_t> param_dims = zero_typed.dims();
    const std::vector<float>& scales = scale->first;
    if (sub_id != kNoNode) skip_[static_cast<size_t>(sub_id)] = true;
    skip_[static_cast<size_t>(mul_id)] = true;
    node.op_type = "DequantizeLinear";
    node.attributes = {};
    if (axis >= 0) node.attributes["axis"] = axis;
    node.outputs = next->outputs;
    node.inputs.resize(3, kNoValue);
    fixed_inputs_ = {{1, new_constant(node.name + "/scale",
                                      Tensor::from_vector(DType::kF32, param_dims, scales))},
                     {2, new_constant(node.name + "/zero_point", std::move(zero_typed))}};
    dequantized_[next->outputs[0]] = Dequantized{scales, axis};
  }

  void fold_conv_bias(Node& node) {
    const ValueId y = node.outputs[0];
    NodeId add_id = kNoNode;
    const Node* add = sole_reader(y, &add_id);
    const Tensor* bias = add ? other_constant(*add, "Add", y) : nullptr;
    const Shape& shape = in_.value(y).shape;
    if (!bias || !is_channel_shaped(*bias, shape.rank(), shape.dims[1])) return;
    node.inputs.push_back(kNoValue);
    const int64_t channel_axis = node.op_type == "Conv" ? 0 : -1;
    absorb_add(node, add_id, bias_value(node, bias->reshaped({shape.dims[1]}), channel_axis));
  }

  void fold_gemm_bias(Node& node) {
    const auto& a = in_.value(node.inputs[0]).shape.dims;
    const auto& b = in_.value(node.inputs[1]).shape.dims;
    if (a.size() != 2 || b.size() != 2) return;
    const ValueId y = node.outputs[0];
    NodeId add_id = kNoNode;
    const Node* add = sole_reader(y, &add_id);
    const Tensor* c = add ? other_constant(*add, "Add", y) : nullptr;
    if (!c) return;
    const auto& out = in_.value(y).shape.dims;
    const auto& cd = c->dims();
    const bool fits =
        cd == std::vector<int64_t>{out[1]} || cd == std::vector<int64_t>{1, out[1]} || cd == out;
    if (!fits) return;
    if (node.op_type == "MatMul") {
      node.op_type = "Gemm";
      node.attributes = {};
    }
    node.inputs.push_back(kNoValue);
    absorb_add(node, add_id,
               cd.size() == 2 && cd[0] != 1 ? new_constant(node.name + "/c", *c)
                                            : bias_value(node, c->reshaped({out[1]}), 1));
  }

  void fold_norm_affine(Node& node) {
    const bool instance = node.op_type == "InstanceNormalization";
    if (node.inputs.size() < 2 || !all_equal(node.inputs[1], 1.0f)) return;
    if (node.inputs.size() > 2 && node.inputs[2] != kNoValue && !all_equal(node.inputs[2], 0.0f)) {
      return;
    }
    const auto& x = in_.value(node.inputs[0]).shape.dims;
    const size_t rank = x.size();
    const auto axis = static_cast<size_t>(instance ? 2 : node.attr_int("axis", -1));
    if (rank < 2 || axis >= rank || (instance && rank < 3)) return;
    // Scale, then an optional bias, each folded when it has the right form.
    auto convert = [&](const Tensor& t) -> std::optional<Tensor> {
      if (instance) {
        if (!is_channel_shaped(t, rank, x[1])) return std::nullopt;
        return t.reshaped({x[1]});
      }
      return over_normalized_axes(t, x, axis);
    };
    NodeId mul_id = kNoNode;
    const Node* mul = sole_reader(node.outputs[0], &mul_id);
    const Tensor* k = mul ? other_constant(*mul, "Mul", node.outputs[0]) : nullptr;
    const auto scale = k ? convert(*k) : std::nullopt;
    if (!scale) return;
    NodeId add_id = kNoNode;
    const Node* add = sole_reader(mul->outputs[0], &add_id);
    const Tensor* b = add ? other_constant(*add, "Add", mul->outputs[0]) : nullptr;
    const auto bias = b ? convert(*b) : std::nullopt;
    const ValueId new_scale = new_constant(node.name + "/scale", *scale);
    ValueId new_bias = kNoValue;
    if (bias) {
      new_bias = new_constant(node.name + "/bias", *bias);
    } else if (instance) {
      new_bias = new_constant(node.name + "/bias", Tensor(DType::kF32, {x[1]}));
    }
    skip_[static_cast<size_t>(mul_id)] = true;
    node.outputs = mul->outputs;
    if (bias) {
      skip_[static_cast<size_t>(add_id)] = true;
      node.outputs = add->outputs;
    }
    node.inputs.resize(3, kNoValue);
    fixed_inputs_ = {{1, new_scale}, {2, new_bias}};
  }

  // The bias of a product of two values fold_dequantize made (an activation of one scale, weights
  // of one scale or one per output channel, along `channel_axis` of the weights): a
  // DequantizeLinear of int32 values of scale activation scale * weight scale, when the bias is
  // such values (write_ir folds a QDQ model's int32 bias into floats); else the float constant.
  ValueId bias_value(const Node& node, const Tensor& bias, int64_t channel_axis) {
    const std::string name = node.name + "/bias";
    const auto a = dequantized_.find(resolved(node.inputs[0]));
    const auto w = dequantized_.find(resolved(node.inputs[1]));
    if (a == dequantized_.end() || w == dequantized_.end() || a->second.axis >= 0 ||
        (w->second.axis >= 0 && w->second.axis != channel_axis)) {
      return new_constant(name, bias);
    }
    const auto b = bias.values<float>();
    const std::vector<float>& w_scales = w->second.scales;
    if (w_scales.size() != 1 && w_scales.size() != b.size()) return new_constant(name, bias);
    std::vector<int32_t> q(b.size());
    std::vector<float> scales(b.size());
    for (size_t c = 0; c < b.size(); ++c) {
      scales[c] = a->second.scales[0] * w_scales[w_scales.size() == 1 ? 0 : c];
      const float r = std::nearbyint(b[c] / scales[c]);
      if (!(std::abs(r) < 0x1p24f) || r * scales[c] != b[c]) return new_constant(name, bias);
      q[c] = static_cast<int32_t>(r);
    }
    const std::vector<int64_t> dims = {static_cast<int64_t>(b.size())};
    Node dq;
    dq.name = unique_name(name + "/dequantize");
    dq.op_type = "DequantizeLinear";
    dq.attributes["axis"] = int64_t{0};
    dq.inputs = {new_constant(name + "/int32", Tensor::from_vector(DType::kI32, dims, q)),
                 new_constant(name + "/scale", Tensor::from_vector(DType::kF32, dims, scales))};
    dq.outputs = {out_.add_value(unique_name(name), DType::kF32, Shape{dims})};
    const ValueId value = dq.outputs[0];
    out_.add_node(std::move(dq));
    return value;
  }

  // The Add is absorbed: the node writes the Add's output and takes `bias` as its last input.
  void absorb_add(Node& node, NodeId add_id, ValueId bias) {
    skip_[static_cast<size_t>(add_id)] = true;
    node.outputs = in_.node(add_id).outputs;
    fixed_inputs_ = {{node.inputs.size() - 1, bias}};
  }

  // A value fold_dequantize made: its scales and their axis (-1: one scale).
  struct Dequantized {
    std::vector<float> scales;
    int64_t axis = -1;
  };

  const Graph& in_;
  Graph out_;
  std::map<ValueId, Dequantized> dequantized_;  // by value of in_
  std::map<ValueId, Tensor> folded_;            // values of in_ find_aliases made constants
  std::map<ValueId, ValueId> aliases_;          // values of in_ that are other values
  std::vector<ValueId> map_;  // old value -> new value
  std::vector<ValueId> is_output_;
  std::vector<bool> skip_;  // nodes absorbed by an earlier fold
  // Inputs a fold set to values of the new graph already (copy() must leave them alone).
  std::vector<std::pair<size_t, ValueId>> fixed_inputs_;
};

}  // namespace

Graph fold_affine_tails(const Graph& graph) { return Folder(graph).run(); }

}  // namespace hsched::ir::detail
