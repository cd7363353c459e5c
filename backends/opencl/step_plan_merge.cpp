// The passes over a ClProgram's planned steps that merge several steps into one
// (group_sibling_products, merge_attention, merge_layer_norm, merge_squeeze_excitation,
// carry_concat_copies, pair_sibling_convs: step_plan.h), and concat_slices and write_in_place, by
// which plan_kernels writes Convs into a Concat in place.
#include <algorithm>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <variant>

#include "backends/opencl/kernels/node_ops.h"
#include "backends/opencl/kernels/node_ops_util.h"
#include "backends/opencl/kernels/ops_spatial.h"
#include "backends/opencl/step_plan.h"

namespace hsched::opencl::detail {
namespace {

// `steps` but those `merged` into others.
std::vector<PlannedStep> without_merged(std::vector<PlannedStep> steps,
                                        const std::vector<bool>& merged) {
  std::vector<PlannedStep> kept;
  for (size_t i = 0; i < steps.size(); ++i) {
    if (!merged[i]) kept.push_back(std::move(steps[i]));
  }
  return kept;
}

// What MatMul step `step` shares with its siblings (group_sibling_products): its A, A's view
// and factor, B's shape and whether it has a bias; nullopt unless it can join a group (a constant
// f32 B of rank 2, a dense result without residual or activation, a tiled product).
std::optional<std::string> sibling_key(const Graph& graph, const PlannedStep& step) {
  const Node& op = step.op;
  if (step.view || op.op_type != "MatMul" || !op.domain.empty() || op.outputs.size() != 1 ||
      op.inputs.size() < 2 || op.inputs.size() > 3) {
    return std::nullopt;
  }
  for (const auto& [name, value] : op.attributes) {
    if (name != kMatMulViewAttrs[0] && name != kMatMulAlphaAttr) return std::nullopt;
  }
  const Value& a = graph.value(op.inputs[0]);
  const Value& b = graph.value(op.inputs[1]);
  const std::vector<int64_t> view = op.attr_ints(kMatMulViewAttrs[0]);
  const auto a_view = view.empty() ? std::nullopt : decode_view(view);
  const Shape a_shape = a_view ? a_view->dims : a.shape.dims;
  if (!b.is_constant() || b.dtype != DType::kF32 || b.shape.rank() != 2 || a_shape.size() < 2 ||
      graph.value(op.outputs[0]).dtype != DType::kF32 || !tiled_matmul(a_shape, b.shape.dims)) {
    return std::nullopt;
  }
  std::string key = std::to_string(op.inputs[0]) + "|" + b.shape.to_string() + "|" +
                    std::to_string(op.attr_float(kMatMulAlphaAttr, 1.0f)) + "|" +
                    std::to_string(op.inputs.size() == 3 && op.inputs[2] != kNoValue);
  for (int64_t v : view) key += "," + std::to_string(v);
  return key;
}

// Whether `op` has only attributes named in `allowed`.
bool only_attributes(const Node& op, std::initializer_list<const char*> allowed) {
  return std::all_of(op.attributes.begin(), op.attributes.end(), [&](const auto& attr) {
    return std::any_of(allowed.begin(), allowed.end(),
                       [&](const char* name) { return attr.first == name; });
  });
}

bool is_step_of(const PlannedStep& step, const char* op_type) {
  return !step.view && step.op.op_type == op_type && step.op.domain.empty() &&
         step.op.outputs.size() == 1;
}

// The only reader of `value` (a static f32 that is no graph output), else kNoNode.
NodeId sole_reader(const Graph& graph, ValueId value) {
  const Value& v = graph.value(value);
  const auto& outputs = graph.outputs();
  if (v.consumers.size() != 1 || v.dtype != DType::kF32 || !v.shape.is_static() ||
      std::find(outputs.begin(), outputs.end(), value) != outputs.end()) {
    return kNoNode;
  }
  return v.consumers[0];
}

// A merging pass's steps: the step that alone reads a value, and the steps merged into others.
class Merging {
 public:
  Merging(const Graph& graph, std::vector<PlannedStep>& steps)
      : graph_(graph), steps_(steps), merged_(steps.size(), false) {
    for (size_t i = 0; i < steps.size(); ++i) index_[steps[i].node] = i;
  }
  // The step whose node alone reads `value` (sole_reader), else nullptr.
  PlannedStep* reading(ValueId value) {
    NodeId reader = value == kNoValue ? kNoNode : sole_reader(graph_, value);
    // 8-bit integers: the step reading them in place of their one DequantizeLinear.
    NodeId dq_id = kNoNode;
    const DType dtype = value == kNoValue ? DType::kF32 : graph_.value(value).dtype;
    const Node* dq = dtype == DType::kU8 || dtype == DType::kI8
                         ? node_detail::only_reader(graph_, value, &dq_id)
                         : nullptr;
    if (dq != nullptr && dq->op_type == "DequantizeLinear" && dq->outputs.size() == 1) {
      reader = sole_reader(graph_, dq->outputs[0]);
    }
    const auto it = reader == kNoNode ? index_.end() : index_.find(reader);
    return it == index_.end() ? nullptr : &steps_[it->second];
  }
  bool merged(size_t i) const { return merged_[i]; }
  // `part` runs in `into` from now on: absorbed by it (with `grouped`, in its launch with its
  // compute kept: PlannedStep::grouped), the nodes it absorbed too, dropped by kept().
  void merge(const PlannedStep& part, PlannedStep& into, bool grouped = false) {
    (grouped ? into.grouped : into.absorbed).push_back(part.node);
    into.absorbed.insert(into.absorbed.end(), part.absorbed.begin(), part.absorbed.end());
    merged_[index_.at(part.node)] = true;
  }
  std::vector<PlannedStep> kept() { return without_merged(std::move(steps_), merged_); }

 private:
  const Graph& graph_;
  std::vector<PlannedStep>& steps_;
  std::vector<bool> merged_;
  std::map<NodeId, size_t> index_;  // a step's node -> its index
};

// A MatMul operand's logical shape: its view's dims, else its value's.
Shape operand_dims(const Graph& graph, const Node& matmul, size_t i) {
  const std::vector<int64_t> view = matmul.attr_ints(kMatMulViewAttrs[i]);
  if (const auto decoded = view.empty() ? std::nullopt : decode_view(view)) return decoded->dims;
  return graph.value(matmul.inputs[i]).shape.dims;
}

// The kAttentionOp node of scores, weights and result steps (merge_attention), or nullopt.
std::optional<Node> attention_of(const Graph& graph, const PlannedStep& scores,
                                 const PlannedStep& weights, const PlannedStep& result) {
  const Node& s = scores.op;
  const Node& w = weights.op;
  const Node& r = result.op;
  const bool bare_scores =
      s.inputs.size() == 2 || (s.inputs.size() == kResidualInput + 1 && s.inputs[2] == kNoValue);
  if (!bare_scores || r.inputs.size() != 2 || w.inputs.size() != 1 || r.inputs[0] != w.outputs[0] ||
      w.inputs[0] != s.outputs[0] || graph.value(r.outputs[0]).dtype != DType::kF32 ||
      !only_attributes(s, {kMatMulViewAttrs[0], kMatMulViewAttrs[1], kMatMulAlphaAttr}) ||
      !only_attributes(w, {"axis", kNanToAttr}) ||
      !only_attributes(r, {kMatMulViewAttrs[1], kMatMulAlphaAttr, kMatMulResultPermAttr})) {
    return std::nullopt;
  }
  const Shape& score_dims = graph.value(s.outputs[0]).shape.dims;
  const int64_t rank = static_cast<int64_t>(score_dims.size());
  int64_t axis = w.attr_int("axis", graph.opset > 0 && graph.opset < 13 ? 1 : -1);
  if (axis < 0) axis += rank;
  const Shape q = operand_dims(graph, s, 0), k = operand_dims(graph, s, 1);
  const Shape v = operand_dims(graph, r, 1);
  if (axis != rank - 1 || !fused_attention_fits(q, k, v)) return std::nullopt;
  Node op{r.name, kAttentionOp, "", {s.inputs[0], s.inputs[1], r.inputs[1], kNoValue}, r.outputs,
          {}};
  if (s.inputs.size() > kResidualInput) op.inputs[3] = s.inputs[kResidualInput];
  for (size_t i = 0; i < 2; ++i) {
    if (s.has_attr(kMatMulViewAttrs[i])) {
      op.attributes[kAttentionViewAttrs[i]] = s.attributes.at(kMatMulViewAttrs[i]);
    }
  }
  if (r.has_attr(kMatMulViewAttrs[1])) {
    op.attributes[kAttentionViewAttrs[2]] = r.attributes.at(kMatMulViewAttrs[1]);
  }
  op.attributes[kMatMulAlphaAttr] = s.attr_float(kMatMulAlphaAttr, 1.0f);
  op.attributes[kAttentionOutAlphaAttr] = r.attr_float(kMatMulAlphaAttr, 1.0f);
  if (r.has_attr(kMatMulResultPermAttr)) {
    op.attributes[kMatMulResultPermAttr] = r.attributes.at(kMatMulResultPermAttr);
  }
  if (w.has_attr(kNanToAttr)) op.attributes[kNanToAttr] = w.attributes.at(kNanToAttr);
  return op;
}

// Whether LayerNormalization step `ln` can run in MatMul step `product` reading its output
// (merge_layer_norm).
bool norm_merges(const Graph& graph, const PlannedStep& ln, const PlannedStep& product) {
  const Node& n = ln.op;
  const Node& p = product.op;
  // A quantized one: 8-bit in and out, into a quantized product.
  const auto row = n.attributes.find(kQdqRowAttr);
  const auto* q =
      row == n.attributes.end() ? nullptr : std::get_if<std::vector<float>>(&row->second);
  const bool quantized = q != nullptr && q->size() == 6 && (*q)[0] > 0.0f && (*q)[2] > 0.0f;
  if (ln.view || n.op_type != "LayerNormalization" || !n.domain.empty() || n.inputs.size() < 2 ||
      n.inputs[0] == kNoValue || n.inputs[1] == kNoValue || n.outputs.empty() ||
      std::any_of(n.outputs.begin() + 1, n.outputs.end(),
                  [](ValueId v) { return v != kNoValue; }) ||
      !only_attributes(n, {"axis", "epsilon", "stash_type", kQdqRowAttr}) ||
      n.attr_int("stash_type", 1) != 1 || (n.has_attr(kQdqRowAttr) && !quantized) ||
      !is_step_of(product, "MatMul") || p.inputs.size() < 2 || p.inputs.size() > kNormScaleInput ||
      p.inputs[0] != n.outputs[0] || p.has_attr(kMatMulViewAttrs[0]) ||
      p.has_attr(kMatMulOperandChainAttrs[0]) || p.has_attr(kMatMulQuantizedAttr) != quantized) {
    return false;
  }
  const Value& x = graph.value(n.inputs[0]);
  const int64_t rank = static_cast<int64_t>(x.shape.rank());
  const int64_t axis = n.attr_int("axis", -1);
  const Shape a = operand_dims(graph, p, 0), b = operand_dims(graph, p, 1);
  const bool eight_bit = x.dtype == DType::kU8 || x.dtype == DType::kI8;
  return (quantized ? eight_bit : x.dtype == DType::kF32) && x.shape.is_static() && rank >= 2 &&
         (axis == -1 || axis == rank - 1) && a == x.shape.dims && tiled_matmul(a, b);
}

// The weights' shape of Conv step `step` when it can be one of a squeeze-and-excitation's 1x1
// Convs (merge_squeeze_excitation): f32 [N, C, 1, 1] by constant f32 weights [out, C, 1, 1] into
// [N, out, 1, 1], group 1, an f32 bias or none, nothing fused but an activation.
std::optional<Shape> excitation_weights(const Graph& graph, const PlannedStep& step) {
  const Node& op = step.op;
  if (!is_step_of(step, "Conv") || op.inputs.size() < 2 || op.inputs.size() > 3 ||
      op.attr_int("group", 1) != 1 ||
      !only_attributes(op, {"kernel_shape", "strides", "pads", "dilations", "group", "auto_pad",
                            kFusedActivationAttr, kFusedAlphaAttr, kFusedBetaAttr})) {
    return std::nullopt;
  }
  const Value& x = graph.value(op.inputs[0]);
  const Value& w = graph.value(op.inputs[1]);
  const bool bias = op.inputs.size() == 3 && op.inputs[2] != kNoValue;
  if (x.dtype != DType::kF32 || !w.is_constant() || w.dtype != DType::kF32 ||
      (bias && graph.value(op.inputs[2]).dtype != DType::kF32)) {
    return std::nullopt;
  }
  const Shape &xd = x.shape.dims, &wd = w.shape.dims;
  if (xd.size() != 4 || xd[2] != 1 || xd[3] != 1 || wd.size() != 4 || wd[1] != xd[1] ||
      wd[2] != 1 || wd[3] != 1 ||
      graph.value(op.outputs[0]).shape.dims != Shape{xd[0], wd[0], 1, 1}) {
    return std::nullopt;
  }
  return wd;
}

}  // namespace

std::optional<std::vector<ConcatInput>> concat_slices(
    const Graph& graph, const Node& concat, const std::map<ValueId, size_t>& conv_step_of) {
  if (concat.outputs.size() != 1 || concat.inputs.empty()) return std::nullopt;
  const Value& out = graph.value(concat.outputs[0]);
  const auto rank = static_cast<int64_t>(out.shape.rank());
  int64_t axis = concat.attr_int("axis", 0);
  if (axis < 0) axis += rank;
  if (axis != 1 || (rank != 3 && rank != 4) || out.dtype != DType::kF32 || !out.shape.is_static()) {
    return std::nullopt;
  }
  const auto& outputs = graph.outputs();
  std::vector<ConcatInput> inputs;
  std::set<ValueId> seen;
  bool any_conv = false;
  for (ValueId v : concat.inputs) {
    if (v == kNoValue || !seen.insert(v).second) return std::nullopt;
    const Value& value = graph.value(v);
    if (value.dtype != DType::kF32 || !value.shape.is_static() ||
        value.shape.rank() != out.shape.rank()) {
      return std::nullopt;
    }
    ConcatInput input{std::nullopt, value.shape.dims[1]};
    const auto step = conv_step_of.find(v);
    if (step != conv_step_of.end() && value.consumers.size() == 1 &&
        std::find(outputs.begin(), outputs.end(), v) == outputs.end()) {
      input.conv_step = step->second;
      any_conv = true;
    }
    inputs.push_back(input);
  }
  if (!any_conv) return std::nullopt;
  return inputs;
}

bool write_in_place(const Graph& graph, const std::vector<ConcatInput>& inputs, int64_t groups,
                    PlannedStep& step, std::vector<PlannedStep>& steps) {
  const ValueId out = step.op.outputs[0];
  int64_t first = 0;
  std::vector<int64_t> channels;
  std::optional<size_t> last_conv;
  for (size_t i = 0; i < inputs.size(); ++i) {
    channels.push_back(inputs[i].channels);
    if (const auto index = inputs[i].conv_step) {
      PlannedStep& conv = steps[*index];
      std::vector<int64_t> stored{graph.value(out).shape.dims[1], first};
      if (groups > 1) stored = {stored[0], static_cast<int64_t>(i), groups};
      conv.op.attributes[kConvStoredInAttr] = std::move(stored);
      conv.op.outputs[0] = out;
      step.op.inputs[i] = kNoValue;
      last_conv = index;
    }
    first += inputs[i].channels;
  }
  const bool all = std::all_of(inputs.begin(), inputs.end(),
                               [](const ConcatInput& in) { return in.conv_step.has_value(); });
  if (all) {
    std::vector<NodeId>& absorbed = steps[*last_conv].absorbed;
    absorbed.push_back(step.node);
    absorbed.insert(absorbed.end(), step.absorbed.begin(), step.absorbed.end());
    return true;
  }
  step.op.attributes[kConcatChannelsAttr] = std::move(channels);
  return false;
}

std::vector<PlannedStep> group_sibling_products(const Graph& graph,
                                                std::vector<PlannedStep> steps) {
  std::map<std::string, std::vector<size_t>> siblings;  // by key, step indices in order
  for (size_t i = 0; i < steps.size(); ++i) {
    if (const auto key = sibling_key(graph, steps[i])) siblings[*key].push_back(i);
  }
  std::vector<bool> merged(steps.size(), false);
  for (const auto& [key, indices] : siblings) {
    for (size_t first = 0; first + 1 < indices.size(); first += kMaxGroupedProducts) {
      const size_t count = std::min(kMaxGroupedProducts, indices.size() - first);
      PlannedStep& group = steps[indices[first]];
      Node op{group.op.name, kMatMulGroupOp, "", {group.op.inputs[0]}, {}, group.op.attributes};
      for (size_t j = first; j < first + count; ++j) {
        PlannedStep& member = steps[indices[j]];
        op.inputs.push_back(member.op.inputs[1]);
        op.inputs.push_back(member.op.inputs.size() == 3 ? member.op.inputs[2] : kNoValue);
        op.outputs.push_back(member.op.outputs[0]);
        if (j == first) continue;
        group.grouped.push_back(member.node);
        group.absorbed.insert(group.absorbed.end(), member.absorbed.begin(), member.absorbed.end());
        merged[indices[j]] = true;
      }
      group.op = std::move(op);
    }
  }
  return without_merged(std::move(steps), merged);
}

std::vector<PlannedStep> merge_attention(const Graph& graph, std::vector<PlannedStep> steps) {
  Merging merging(graph, steps);
  for (size_t i = 0; i < steps.size(); ++i) {
    PlannedStep& scores = steps[i];
    if (merging.merged(i) || !is_step_of(scores, "MatMul")) continue;
    PlannedStep* weights = merging.reading(scores.op.outputs[0]);
    if (weights == nullptr || !is_step_of(*weights, "Softmax")) continue;
    PlannedStep* result = merging.reading(weights->op.outputs[0]);
    if (result == nullptr || !is_step_of(*result, "MatMul")) continue;
    auto op = attention_of(graph, scores, *weights, *result);
    if (!op) continue;
    result->op = std::move(*op);
    merging.merge(scores, *result);
    merging.merge(*weights, *result);
  }
  return merging.kept();
}

std::vector<PlannedStep> merge_layer_norm(const Graph& graph, std::vector<PlannedStep> steps) {
  Merging merging(graph, steps);
  for (PlannedStep& ln : steps) {
    if (ln.op.outputs.empty()) continue;
    PlannedStep* product = merging.reading(ln.op.outputs[0]);
    if (product == nullptr || !norm_merges(graph, ln, *product)) continue;
    Node& op = product->op;
    op.inputs[0] = ln.op.inputs[0];
    op.inputs.resize(kNormBiasInput + 1, kNoValue);
    op.inputs[kNormScaleInput] = ln.op.inputs[1];
    if (ln.op.inputs.size() > 2) op.inputs[kNormBiasInput] = ln.op.inputs[2];
    op.attributes[kMatMulNormAttr] = ln.op.attr_float("epsilon", 1e-5f);
    if (ln.op.has_attr(kQdqRowAttr))
      op.attributes[kMatMulNormQdqAttr] = ln.op.attributes.at(kQdqRowAttr);
    merging.merge(ln, *product);
  }
  return merging.kept();
}

std::vector<PlannedStep> merge_squeeze_excitation(const Graph& graph,
                                                  std::vector<PlannedStep> steps) {
  Merging merging(graph, steps);
  const auto bias_of = [](const Node& conv) {
    return conv.inputs.size() > 2 ? conv.inputs[2] : kNoValue;
  };
  for (const PlannedStep& first : steps) {
    const auto w1 = excitation_weights(graph, first);
    if (!w1 || (*w1)[1] > kMaxExcitedChannels || (*w1)[0] > kMaxExcitationHidden) continue;
    PlannedStep* second = merging.reading(first.op.outputs[0]);
    const auto w2 = second != nullptr ? excitation_weights(graph, *second) : std::nullopt;
    if (!w2 || second->op.inputs[0] != first.op.outputs[0] || (*w2)[1] != (*w1)[0]) continue;
    Node op{second->op.name,
            kSqueezeExcitationOp,
            "",
            {first.op.inputs[0], first.op.inputs[1], bias_of(first.op), second->op.inputs[1],
             bias_of(second->op)},
            second->op.outputs,
            {}};
    const char* const fused[3] = {kFusedActivationAttr, kFusedAlphaAttr, kFusedBetaAttr};
    for (size_t a = 0; a < 3; ++a) {
      if (second->op.has_attr(fused[a])) {
        op.attributes[fused[a]] = second->op.attributes.at(fused[a]);
      }
      if (first.op.has_attr(fused[a])) {
        op.attributes[kInnerActivationAttrs[a]] = first.op.attributes.at(fused[a]);
      }
    }
    second->op = std::move(op);
    merging.merge(first, *second);
  }
  return merging.kept();
}

std::vector<PlannedStep> carry_concat_copies(const Graph& graph, std::vector<PlannedStep> steps) {
  Merging merging(graph, steps);
  for (size_t c = 0; c < steps.size(); ++c) {
    const PlannedStep& concat = steps[c];
    const std::vector<int64_t> channels = concat.op.attr_ints(kConcatChannelsAttr);
    const std::vector<ValueId>& inputs = concat.op.inputs;
    const auto copied_at = [&](auto from) {
      return std::find_if(from, inputs.end(), [](ValueId v) { return v != kNoValue; });
    };
    const auto at = copied_at(inputs.begin());
    if (!is_step_of(concat, "Concat") || channels.size() != inputs.size() || at == inputs.end() ||
        copied_at(at + 1) != inputs.end()) {  // one input copied, the others written in place
      continue;
    }
    const auto i = static_cast<size_t>(at - inputs.begin());
    const ValueId out = concat.op.outputs[0], copied = concat.op.inputs[i];
    // The last Conv writing in place, and the step making what the Concat copies.
    std::optional<size_t> conv, made;
    for (size_t j = 0; j < c; ++j) {
      const PlannedStep& step = steps[j];
      if (merging.merged(j)) continue;
      if (is_step_of(step, "Conv") && step.op.outputs[0] == out &&
          step.op.has_attr(kConvStoredInAttr)) {
        conv = j;
      }
      const auto& outs = step.op.outputs;
      if (std::find(outs.begin(), outs.end(), copied) != outs.end()) made = j;
    }
    const bool ready = graph.value(copied).producer == kNoNode || (made && conv && *made < *conv);
    const Value& y = graph.value(out);
    if (!conv || !ready || !y.shape.is_static() || y.shape.rank() < 2) continue;
    std::vector<Shape> shapes(channels.size(), y.shape.dims);
    for (size_t k = 0; k < channels.size(); ++k) shapes[k][1] = channels[k];
    std::vector<std::pair<int64_t, int64_t>> sources(channels.size(), {0, 0});
    const std::vector<int64_t> read_from = concat.op.attr_ints(kConcatReadFromAttr);
    if (read_from.size() == 3 * channels.size())
      sources[i] = {read_from[3 * i], read_from[3 * i + 1]};
    const auto copies = concat_copies(shapes, concat.op.attr_int("axis", 0), sources,
                                      concat.op.attr_int(kConcatShuffleAttr, 1));
    if (!copies.is_ok()) continue;
    const RowCopy& r = (*copies)[i];
    PlannedStep& carrier = steps[*conv];
    carrier.op.inputs.resize(std::max(carrier.op.inputs.size(), kCarriedInput + 1), kNoValue);
    carrier.op.inputs[kCarriedInput] = copied;
    carrier.op.attributes[kConvCarriesAttr] = std::vector<int64_t>{
        r.x_inner, r.x_offset, r.inner, r.y_inner, r.offset, r.plane, r.y_step, r.count};
    merging.merge(concat, carrier);
  }
  return merging.kept();
}

namespace {

// The window and first stored channel of Conv step `conv` that pair_sibling_convs can pair
// (kConvPairFirstAttr's nine values), or nullopt.
std::optional<std::vector<int64_t>> pairable_conv(const Graph& graph, const PlannedStep& conv) {
  const Node& op = conv.op;
  const std::vector<int64_t> stored = op.attr_ints(kConvStoredInAttr);
  if (!is_step_of(conv, "Conv") || op.inputs.size() < 2 || op.inputs.size() > 3 ||
      stored.size() != 2 || op.attr_int("group", 1) != 1 ||
      op.attr_string("auto_pad", "NOTSET") != "NOTSET" ||
      !only_attributes(
          op, {"kernel_shape", "pads", "strides", "dilations", "group", "auto_pad",
               kConvStoredInAttr, kFusedActivationAttr, kFusedAlphaAttr, kFusedBetaAttr})) {
    return std::nullopt;
  }
  const Value& x = graph.value(op.inputs[0]);
  const Value& w = graph.value(op.inputs[1]);
  const Value& y = graph.value(graph.node(conv.node).outputs[0]);
  if (x.shape.rank() != 4 || !x.shape.is_static() || w.shape.rank() != 4 || !w.shape.is_static() ||
      !y.shape.is_static() || x.dtype != DType::kF32) {
    return std::nullopt;
  }
  const auto window = node_detail::window_of(op, x.shape.dims, y.shape.dims, &w.shape.dims, false);
  if (!window.is_ok()) return std::nullopt;
  const auto two = [](const std::vector<int64_t>& v, int64_t fill) {
    return v.empty() ? std::vector<int64_t>{fill, fill} : v;
  };
  std::vector<int64_t> first = window->kernel;
  for (const auto& v :
       {two(window->strides, 1), two(window->dilations, 1), two(window->pads_begin, 0)}) {
    first.insert(first.end(), v.begin(), v.end());
  }
  first.push_back(stored[1]);
  return first.size() == 9 ? std::optional(first) : std::nullopt;
}

}  // namespace

std::vector<PlannedStep> pair_sibling_convs(const Graph& graph, std::vector<PlannedStep> steps) {
  Merging merging(graph, steps);
  const auto same_activation = [](const Node& a, const Node& b) {
    return a.attr_int(kFusedActivationAttr, -1) == b.attr_int(kFusedActivationAttr, -1) &&
           a.attr_float(kFusedAlphaAttr, 0.0f) == b.attr_float(kFusedAlphaAttr, 0.0f) &&
           a.attr_float(kFusedBetaAttr, 0.0f) == b.attr_float(kFusedBetaAttr, 0.0f);
  };
  std::vector<std::optional<std::vector<int64_t>>> pairable;
  for (const PlannedStep& step : steps) pairable.push_back(pairable_conv(graph, step));
  for (size_t i = 0; i < steps.size(); ++i) {
    const auto& first = pairable[i];
    if (!first || merging.merged(i)) continue;
    const Node& a = steps[i].op;
    for (size_t j = i + 1; j < steps.size(); ++j) {
      PlannedStep& later = steps[j];
      const Node& b = later.op;
      // (One Concat's output: the same channels and plane.)
      if (merging.merged(j) || !pairable[j] || b.inputs[0] != a.inputs[0] ||
          b.outputs[0] != a.outputs[0] || !same_activation(a, b)) {
        continue;
      }
      Node pair = b;
      pair.op_type = kConvPairOp;
      pair.inputs = {a.inputs[0], a.inputs[1], a.inputs.size() > 2 ? a.inputs[2] : kNoValue,
                     b.inputs[1], b.inputs.size() > 2 ? b.inputs[2] : kNoValue};
      pair.attributes[kConvPairFirstAttr] = *first;
      later.op = std::move(pair);
      merging.merge(steps[i], later, true);
      pairable[j].reset();  // a pair pairs no further
      break;
    }
  }
  return merging.kept();
}

}  // namespace hsched::opencl::detail
