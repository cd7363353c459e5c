#include "backends/level_zero/ir/ir_read_fold.h"

#include <algorithm>
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
  // The value in the new graph (created on first use; values nobody uses any more are dropped).
  ValueId copy(ValueId id) {
    if (id == kNoValue) return kNoValue;
    ValueId& mapped = map_.at(static_cast<size_t>(id));
    if (mapped == kNoValue) {
      const Value& v = in_.value(id);
      mapped = v.constant ? out_.add_constant(v.name, *v.constant)
                          : out_.add_value(v.name, v.dtype, v.shape);
    }
    return mapped;
  }

  // A constant of the new graph, under a name no value of either graph has.
  ValueId new_constant(const std::string& base, Tensor tensor) {
    std::string name = base;
    for (int n = 1; in_.find_value(name) || out_.find_value(name); ++n) {
      name = base + "#" + std::to_string(n);
    }
    return out_.add_constant(name, std::move(tensor));
  }

  // The node that alone reads `value` (not a graph output), or null.
  const Node* sole_reader(ValueId value, NodeId* id = nullptr) const {
    const Value& v = in_.value(value);
    if (v.consumers.size() != 1 ||
        std::find(is_output_.begin(), is_output_.end(), value) != is_output_.end()) {
      return nullptr;
    }
    if (id) *id = v.consumers[0];
    return &in_.node(v.consumers[0]);
  }

  // For a binary `op` node reading `value` and an f32 Const: the Const.
  const Tensor* other_constant(const Node& node, const std::string& op, ValueId value) const {
    if (node.op_type != op || node.inputs.size() != 2 || node.outputs.size() != 1) return nullptr;
    const ValueId other = node.inputs[0] == value ? node.inputs[1] : node.inputs[0];
    if (node.inputs[0] != value && node.inputs[1] != value) return nullptr;
    if (other == value) return nullptr;
    const Value& v = in_.value(other);
    if (!v.constant || v.dtype != DType::kF32) return nullptr;
    // The result must keep the value's dims (no broadcasting past them).
    if (in_.value(node.outputs[0]).shape != in_.value(value).shape) return nullptr;
    return &*v.constant;
  }

  static bool is_channel_shaped(const Tensor& t, size_t rank, int64_t channels) {
    if (t.dims().size() != rank || rank < 2 || t.dims()[1] != channels) return false;
    for (size_t i = 0; i < rank; ++i) {
      if (i != 1 && t.dims()[i] != 1) return false;
    }
    return true;
  }

  static bool all_equal(const Value& v, float x) {
    if (!v.constant || v.dtype != DType::kF32) return false;
    const auto values = v.constant->values<float>();
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
    if ((node.op_type == "Conv" || node.op_type == "ConvTranspose") && node.inputs.size() == 2) {
      fold_conv_bias(node);
    } else if ((node.op_type == "Gemm" && node.inputs.size() == 2) || node.op_type == "MatMul") {
      fold_gemm_bias(node);
    } else if (node.op_type == "InstanceNormalization" || node.op_type == "LayerNormalization") {
      fold_norm_affine(node);
    }
  }

  void fold_conv_bias(Node& node) {
    const ValueId y = node.outputs[0];
    NodeId add_id = kNoNode;
    const Node* add = sole_reader(y, &add_id);
    const Tensor* bias = add ? other_constant(*add, "Add", y) : nullptr;
    const Shape& shape = in_.value(y).shape;
    if (!bias || !is_channel_shaped(*bias, shape.rank(), shape.dims[1])) return;
    node.inputs.push_back(kNoValue);
    absorb_add(node, add_id, new_constant(node.name + "/bias", bias->reshaped({shape.dims[1]})));
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
    absorb_add(node, add_id, new_constant(node.name + "/c", *c));
  }

  void fold_norm_affine(Node& node) {
    const bool instance = node.op_type == "InstanceNormalization";
    if (node.inputs.size() < 2 || !all_equal(in_.value(node.inputs[1]), 1.0f)) return;
    if (node.inputs.size() > 2 && node.inputs[2] != kNoValue &&
        !all_equal(in_.value(node.inputs[2]), 0.0f)) {
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

  // The Add is absorbed: the node writes the Add's output and takes `bias` as its last input.
  void absorb_add(Node& node, NodeId add_id, ValueId bias) {
    skip_[static_cast<size_t>(add_id)] = true;
    node.outputs = in_.node(add_id).outputs;
    fixed_inputs_ = {{node.inputs.size() - 1, bias}};
  }

  const Graph& in_;
  Graph out_;
  std::vector<ValueId> map_;  // old value -> new value
  std::vector<ValueId> is_output_;
  std::vector<bool> skip_;  // nodes absorbed by an earlier fold
  // Inputs a fold set to values of the new graph already (copy() must leave them alone).
  std::vector<std::pair<size_t, ValueId>> fixed_inputs_;
};

}  // namespace

Graph fold_affine_tails(const Graph& graph) { return Folder(graph).run(); }

}  // namespace hsched::ir::detail
