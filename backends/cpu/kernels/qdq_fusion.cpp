// The QDQ fusion pass (see qdq_fusion.h).
#include "backends/cpu/kernels/qdq_fusion.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "backends/cpu/kernels/elementwise.h"
#include "backends/cpu/kernels/kernel.h"
#include "backends/cpu/kernels/qlinear_arith.h"
#include "backends/cpu/kernels/quant_util.h"
#include "backends/cpu/kernels/step_uses.h"
#include "graph/qdq_scalar.h"

namespace hsched::cpu {
namespace {

bool is_byte(DType dtype) { return dtype == DType::kU8 || dtype == DType::kI8; }

// A constant of `count` values (count 1: any shape of one element; else 1-D [count]).
bool constant_of(const Value& v, DType dtype, int64_t count) {
  if (!v.is_constant() || v.dtype != dtype || v.constant->elements() != count) return false;
  return count == 1 || v.shape.rank() == 1;
}

// The scale and zero-point inputs of a DequantizeLinear or QuantizeLinear node with constant
// parameters: `count` scales (1 or one per channel), zero points absent or constants of `data`'s
// dtype. `zero`: the zero points must all be 0.
bool constant_params(const Graph& graph, const Node& node, DType data, int64_t count, bool zero) {
  if (node.inputs.size() < 2 || node.inputs[1] == kNoValue ||
      !constant_of(graph.value(node.inputs[1]), DType::kF32, count)) {
    return false;
  }
  if (node.inputs.size() < 3 || node.inputs[2] == kNoValue) return true;
  const Value& zp = graph.value(node.inputs[2]);
  if (!constant_of(zp, data, count)) return false;
  if (!zero) return true;
  if (data == DType::kI32) {
    for (int32_t v : zp.constant->values<int32_t>()) {
      if (v != 0) return false;
    }
  } else {
    for (int8_t v : zp.constant->values<int8_t>()) {  // u8 and i8 alike: 0 is the 0 byte
      if (v != 0) return false;
    }
  }
  return true;
}

ValueId input_or_none(const Node& node, size_t i) {
  return i < node.inputs.size() ? node.inputs[i] : kNoValue;
}

// The DequantizeLinear making `v`, found through Identity nodes, or nullptr.
const Node* dequantization_of(const Graph& graph, ValueId v) {
  const Node* node = nullptr;
  for (;;) {
    const NodeId id = graph.value(v).producer;
    if (id == kNoNode) return nullptr;
    node = &graph.node(id);
    if (node->op_type != "Identity" || node->inputs.empty()) break;
    v = node->inputs[0];
  }
  if (node->op_type != "DequantizeLinear" || node->inputs.empty() || node->inputs[0] == kNoValue) {
    return nullptr;
  }
  return node;
}

}  // namespace

// The program folds such a DequantizeLinear; a fused op reads its data instead.
const Node* constant_byte_dequantization(const Graph& graph, ValueId v) {
  const Node* node = dequantization_of(graph, v);
  if (node == nullptr) return nullptr;
  const Value& data = graph.value(node->inputs[0]);
  if (!data.is_constant() || !is_byte(data.dtype) ||
      !constant_params(graph, *node, data.dtype, 1, false)) {
    return nullptr;
  }
  return node;
}

namespace {

// A constant's dequantization: the graph's DequantizeLinear (found through Identity nodes) whose
// data is a constant of `dtype`, with `count` scales along axis `axis` of a rank-`rank` tensor
// and zero points 0. The program folded it (its output is a float constant, or marked as one in
// the step analysis); the fused op reads its integer data instead.
const Node* constant_dequantization(const Graph& graph, ValueId v, DType dtype, int64_t count,
                                    int64_t axis) {
  const Node* node = dequantization_of(graph, v);
  if (node == nullptr) return nullptr;
  const Value& data = graph.value(node->inputs[0]);
  if (!data.is_constant() || data.dtype != dtype ||
      !constant_params(graph, *node, dtype, count, true)) {
    return nullptr;
  }
  if (count > 1) {  // per channel: along `axis` (opset 13's attribute, default 1)
    const int64_t rank = data.shape.rank();
    int64_t a = node->attr_int("axis", 1);
    if (a < 0) a += rank;
    if (a != axis || a >= rank || data.shape.dims[static_cast<size_t>(a)] != count) return nullptr;
  }
  return node;
}

class QdqFuser {
 public:
  QdqFuser(Graph& graph, const std::vector<Node*>& nodes, std::vector<bool>& absorbed)
      : graph_(graph), nodes_(nodes), absorbed_(absorbed), uses_(graph, nodes, absorbed) {}

  int run() {
    int fused = 0;
    for (size_t s = 0; s < nodes_.size(); ++s) {
      if (absorbed_[s]) continue;
      if (fuse_root(s) || fuse_table(s) || fuse_elementwise(s) || drop_pairs(s)) ++fused;
    }
    return fused;
  }

 private:
  // The step of the DequantizeLinear producing activation `v` (8-bit data, one constant scale
  // and zero point). It stays a step while others read it (a residual Add).
  std::optional<size_t> activation_dequantization(ValueId v) const {
    const int at = uses_.produced_at[static_cast<size_t>(v)];
    if (at < 0 || absorbed_[static_cast<size_t>(at)]) return std::nullopt;
    const Node& dq = *nodes_[static_cast<size_t>(at)];
    if (dq.op_type != "DequantizeLinear" || dq.inputs.empty() || dq.inputs[0] == kNoValue) {
      return std::nullopt;
    }
    const DType dtype = graph_.value(dq.inputs[0]).dtype;
    if (!is_byte(dtype) || !constant_params(graph_, dq, dtype, 1, false)) return std::nullopt;
    return static_cast<size_t>(at);
  }

  // The QuantizeLinear step reading the root's output alone, with one constant scale and
  // zero point and no attribute but `axis`.
  std::optional<size_t> output_quantization(ValueId v) const {
    const auto q = uses_.sole_consumer(v);
    if (!q || absorbed_[*q]) return std::nullopt;
    const Node& node = *nodes_[*q];
    if (node.op_type != "QuantizeLinear" || node.inputs.empty() || node.inputs[0] != v ||
        node.outputs.size() != 1 || node.outputs[0] == kNoValue) {
      return std::nullopt;
    }
    for (const auto& [key, attr] : node.attributes) {
      if (key != "axis") return std::nullopt;
    }
    const DType dtype = graph_.value(node.outputs[0]).dtype;
    if (!is_byte(dtype) || !constant_params(graph_, node, dtype, 1, false)) return std::nullopt;
    return *q;
  }

  bool fuse_root(size_t s) {
    Node& root = *nodes_[s];
    const std::string& op = root.op_type;
    if ((op != "Conv" && op != "MatMul" && op != "Gemm") || root.inputs.size() < 2 ||
        root.outputs.size() != 1 || root.outputs[0] == kNoValue || root.inputs[1] == kNoValue) {
      return false;
    }
    const auto a_dq = activation_dequantization(root.inputs[0]);
    const auto q = output_quantization(root.outputs[0]);
    if (!a_dq || !q) return false;
    const Value& w = graph_.value(root.inputs[1]);
    const int64_t w_rank = w.shape.rank();
    const bool trans_b = op == "Gemm" && root.attr_int("transB", 0) != 0;
    if (op == "Conv") {
      if (root.attr_string("auto_pad", "NOTSET") != "NOTSET" || w_rank < 3) return false;
    } else if (w_rank != 2 && !(op == "MatMul" && activation_dequantization(root.inputs[1]))) {
      return false;
    }
    if (op == "Gemm" &&
        (root.attr_int("transA", 0) != 0 || root.attr_float("alpha", 1.0f) != 1.0f ||
         graph_.value(root.inputs[0]).shape.rank() != 2)) {
      return false;
    }
    if (op == "MatMul") {  // B from a DequantizeLinear step: an activation
      if (const auto b_dq = activation_dequantization(root.inputs[1])) {
        return fuse_activation_matmul(root, *a_dq, *b_dq, *q);
      }
    }
    // Output channels: Conv's weights [M, C/g, ...], MatMul's B [K, N], Gemm's B [K, N] or [N, K].
    const int64_t channel_axis = op == "Conv" || trans_b ? 0 : 1;
    const int64_t channels = w.shape.dims[static_cast<size_t>(channel_axis)];
    const Node* w_dq = constant_dequantization(graph_, root.inputs[1], DType::kI8, 1, channel_axis);
    if (w_dq == nullptr) {
      w_dq = constant_dequantization(graph_, root.inputs[1], DType::kI8, channels, channel_axis);
    }
    if (w_dq == nullptr || graph_.value(w_dq->inputs[0]).shape.dims != w.shape.dims) return false;
    // The bias: int32 quantized with scale a_scale * w_scale (as the QDQ format writes it), so
    // that the integer sum can take it as it is; a zero needs no scale (quantizers share one
    // zero bias between layers).
    const ValueId bias = input_or_none(root, 2);
    ValueId bias_data = kNoValue;
    if (bias != kNoValue) {
      if (op == "Gemm" && root.attr_float("beta", 1.0f) != 1.0f) return false;
      const Node* b_dq = constant_dequantization(graph_, bias, DType::kI32, channels, 0);
      if (b_dq == nullptr && channels != 1) {
        b_dq = constant_dequantization(graph_, bias, DType::kI32, 1, 0);
      }
      if (b_dq == nullptr ||
          graph_.value(b_dq->inputs[0]).shape.dims != std::vector<int64_t>{channels}) {
        return false;
      }
      const float a_scale = scalar(nodes_[*a_dq]->inputs[1]);
      const auto w_scales = graph_.value(w_dq->inputs[1]).constant->values<float>();
      const auto b_scales = graph_.value(b_dq->inputs[1]).constant->values<float>();
      const auto b_values = graph_.value(b_dq->inputs[0]).constant->values<int32_t>();
      for (int64_t c = 0; c < channels; ++c) {
        const float w_scale = w_scales[w_scales.size() == 1 ? 0 : static_cast<size_t>(c)];
        const float b_scale = b_scales[b_scales.size() == 1 ? 0 : static_cast<size_t>(c)];
        if (b_values[static_cast<size_t>(c)] != 0 && b_scale != a_scale * w_scale) return false;
      }
      bias_data = b_dq->inputs[0];
    }
    const Node& a_node = *nodes_[*a_dq];
    const Node& q_node = *nodes_[*q];
    ValueId w_data = w_dq->inputs[0];
    if (trans_b) w_data = transposed(w_data, root.name);
    root.inputs = {a_node.inputs[0], a_node.inputs[1],        input_or_none(a_node, 2),
                   w_data,           w_dq->inputs[1],         input_or_none(*w_dq, 2),
                   q_node.inputs[1], input_or_none(q_node, 2)};
    if (bias_data != kNoValue) root.inputs.push_back(bias_data);
    root.outputs = {q_node.outputs[0]};
    if (op == "Conv") {
      root.op_type = "QLinearConv";
    } else {
      root.op_type = "QLinearMatMul";
      root.attributes.clear();  // Gemm's transB, alpha, beta: settled above
    }
    stop_reading(*a_dq);
    absorbed_[*q] = true;
    return true;
  }

  // A MatMul of two 8-bit activations (attention's products), each from a DequantizeLinear of
  // one scale and zero point, into a QuantizeLinear: a QLinearMatMul of the bytes, as ONNX
  // Runtime runs it.
  bool fuse_activation_matmul(Node& root, size_t a_dq, size_t b_dq, size_t q) {
    if (graph_.value(root.inputs[0]).shape.rank() < 2 ||
        graph_.value(root.inputs[1]).shape.rank() < 2) {
      return false;
    }
    const Node& a_node = *nodes_[a_dq];
    const Node& b_node = *nodes_[b_dq];
    const Node& q_node = *nodes_[q];
    root.inputs = {a_node.inputs[0], a_node.inputs[1],        input_or_none(a_node, 2),
                   b_node.inputs[0], b_node.inputs[1],        input_or_none(b_node, 2),
                   q_node.inputs[1], input_or_none(q_node, 2)};
    root.outputs = {q_node.outputs[0]};
    root.op_type = "QLinearMatMul";
    stop_reading(a_dq);
    stop_reading(b_dq);
    absorbed_[q] = true;
    return true;
  }

  // An Add or Mul whose operand of the output's shape comes from a DequantizeLinear, whose other
  // operand is 8-bit data from one too or any f32 tensor broadcasting as qdq_broadcasts says, and
  // whose output only a QuantizeLinear reads: one kQdqBinaryOp step.
  bool fuse_elementwise(size_t s) {
    Node& node = *nodes_[s];
    if ((node.op_type != "Add" && node.op_type != "Mul") || node.inputs.size() != 2 ||
        node.outputs.size() != 1 || node.outputs[0] == kNoValue || node.inputs[0] == kNoValue ||
        node.inputs[1] == kNoValue) {
      return false;
    }
    const auto q = output_quantization(node.outputs[0]);
    if (!q) return false;
    // Both ops commute (in float too): the operand of the output's shape first.
    ValueId a = node.inputs[0], b = node.inputs[1];
    const std::vector<int64_t>& dims = graph_.value(node.outputs[0]).shape.dims;
    const bool swapped = graph_.value(a).shape.dims != dims;
    if (swapped) std::swap(a, b);
    if (graph_.value(a).shape.dims != dims || graph_.value(b).dtype != DType::kF32 ||
        !qdq_broadcasts(dims, graph_.value(b).shape.dims)) {
      return false;
    }
    const auto a_dq = activation_dequantization(a);
    if (!a_dq) return false;
    const auto b_dq = activation_dequantization(b);
    const Node* b_constant = b_dq ? nullptr : constant_byte_dequantization(graph_, b);
    const Node& a_node = *nodes_[*a_dq];
    const Node& q_node = *nodes_[*q];
    const std::string op = node.op_type;
    node.op_type = kQdqBinaryOp;
    node.attributes = {{"op", op}, {"swapped", int64_t{swapped}}};
    node.inputs = {a_node.inputs[0], a_node.inputs[1], input_or_none(a_node, 2)};
    if (b_dq || b_constant) {
      const Node& b_node = b_dq ? *nodes_[*b_dq] : *b_constant;
      node.inputs.insert(node.inputs.end(),
                         {b_node.inputs[0], b_node.inputs[1], input_or_none(b_node, 2)});
    } else {
      node.inputs.insert(node.inputs.end(), {b, kNoValue, kNoValue});
    }
    node.inputs.insert(node.inputs.end(), {q_node.inputs[1], input_or_none(q_node, 2)});
    node.outputs = {q_node.outputs[0]};
    stop_reading(*a_dq);
    if (b_dq) stop_reading(*b_dq);
    absorbed_[*q] = true;
    return true;
  }

  // A chain of elementwise fp32 ops from a DequantizeLinear of 8-bit x to a QuantizeLinear,
  // starting at step s: each op reads the op before it (x first), x again (a DequantizeLinear of
  // x of the same parameters: a GELU's product by x, a SiLU's) or constants of one value; a
  // QuantizeLinear and DequantizeLinear of the same parameters may come between two ops (ONNX
  // Runtime's quantizer writes a GELU so); each value in between is read by the next step alone.
  // The longest such chain is one kQdqTableOp step, its table computed by the chain's kernels.
  bool fuse_table(size_t s) {
    constexpr size_t kMaxChain = 16;
    const Node& first = *nodes_[s];
    const auto data = std::find_if(first.inputs.begin(), first.inputs.end(), [&](ValueId v) {
      return v != kNoValue && !qdq_constant_scalar(graph_, v);
    });
    const auto dq = data == first.inputs.end() ? std::nullopt : activation_dequantization(*data);
    if (!dq) return false;
    std::vector<size_t> chain, longest;  // op steps, and QuantizeLinear, DequantizeLinear pairs
    std::optional<size_t> q;
    ValueId running = kNoValue;
    for (std::optional<size_t> step = s; step && !absorbed_[*step] && chain.size() < kMaxChain;) {
      if (!table_takes(*nodes_[*step], running, *dq)) break;
      chain.push_back(*step);
      running = nodes_[*step]->outputs[0];
      step = uses_.sole_consumer(running);
      const auto quantize = output_quantization(running);
      if (!quantize) continue;
      longest = chain;
      q = quantize;
      // On through its DequantizeLinear of the same parameters, which the next op alone reads.
      const ValueId stored = nodes_[*quantize]->outputs[0];
      const auto d = uses_.sole_consumer(stored);
      if (!d || absorbed_[*d] || nodes_[*d]->op_type != "DequantizeLinear" ||
          !same_params(*nodes_[*d], *nodes_[*quantize])) {
        break;
      }
      chain.insert(chain.end(), {*quantize, *d});
      running = nodes_[*d]->outputs[0];
      step = uses_.sole_consumer(running);
    }
    if (!q) return false;
    std::optional<Tensor> table = chain_table(longest, *dq, *nodes_[*q]);
    if (!table) return false;
    for (size_t step : longest) {  // the ops' reads of x go
      if (nodes_[step]->op_type == "DequantizeLinear") continue;
      for (ValueId v : nodes_[step]->inputs) {
        if (v != kNoValue && is_x(v, *dq)) stop_reading(*activation_dequantization(v));
      }
    }
    Node& node = *nodes_[s];
    node.op_type = kQdqTableOp;
    node.attributes = {{"table", std::move(*table)}};
    node.inputs = {nodes_[*dq]->inputs[0]};
    node.outputs = {nodes_[*q]->outputs[0]};
    for (size_t i = 1; i < longest.size(); ++i) absorbed_[longest[i]] = true;
    absorbed_[*q] = true;
    return true;
  }

  // Whether `v` is x: the output of DequantizeLinear step `dq`, or of another of the same 8-bit
  // data and parameters.
  bool is_x(ValueId v, size_t dq) const {
    const auto d = activation_dequantization(v);
    if (!d) return false;
    const Node& a = *nodes_[*d];
    const Node& b = *nodes_[dq];
    const DType dtype = graph_.value(b.inputs[0]).dtype;
    return a.inputs[0] == b.inputs[0] && scalar(a.inputs[1]) == scalar(b.inputs[1]) &&
           zero_point(a, dtype) == zero_point(b, dtype);
  }

  // Whether a table takes elementwise fp32 `node` after `running`, the chain's value before it
  // (kNoValue: the first, which reads x, DequantizeLinear step `dq`'s): a unary op of it, or an
  // arithmetic op of it and x or one value made from constants (qdq_constant_scalar: the
  // program folds it, nodes_without_steps only marks it folded), with x's shape out.
  bool table_takes(const Node& node, ValueId running, size_t dq) const {
    static const std::set<std::string> binary = {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min"};
    const bool is_unary = is_elementwise_unary(node.op_type);
    if ((!is_unary && !binary.count(node.op_type)) || node.outputs.size() != 1 ||
        node.outputs[0] == kNoValue || !node.domain.empty() || node.inputs.empty() ||
        (!is_unary && node.inputs.size() != 2)) {
      return false;
    }
    bool reads = false;  // the running value (x for the first op)
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const ValueId v = node.inputs[i];
      if (v == kNoValue) continue;
      const Value& value = graph_.value(v);
      if (value.dtype != DType::kF32) return false;
      const bool x = is_x(v, dq);
      if (v == running || (running == kNoValue && x)) {
        reads = true;
      } else if ((is_unary && i == 0) || (!x && !qdq_constant_scalar(graph_, v))) {
        return false;
      }
    }
    const Value& out = graph_.value(node.outputs[0]);
    return reads && out.dtype == DType::kF32 &&
           out.shape.dims == graph_.value(nodes_[dq]->outputs[0]).shape.dims;
  }

  // The 8-bit integers behind a chain value with their parameters: x, a QuantizeLinear and
  // DequantizeLinear pair's output (256 values, one per x byte) or a constant's DequantizeLinear
  // (one value).
  struct Stored {
    std::vector<int32_t> values;
    QuantScale params;
    DType dtype = DType::kU8;
  };

  // The 256 outputs of Q(chain(DQ(x))) by x's byte, DequantizeLinear step `dq` making x: the
  // DequantizeLinear's and QuantizeLinear's formulas (quant_kernels.cpp) around the chain's
  // kernels run on the 256 values, so the bytes the unfused steps give; except that an Add or Mul
  // of two 8-bit values of one type into a QuantizeLinear of that type takes ONNX Runtime's
  // QLinearAdd / QLinearMul arithmetic, as kQdqBinaryOp does. nullopt when a kernel refuses.
  std::optional<Tensor> chain_table(const std::vector<size_t>& chain, size_t dq,
                                    const Node& q) const {
    static const KernelRegistry registry = make_cpu_kernel_registry();
    constexpr int64_t kCount = 256;
    const DType in_dtype = graph_.value(nodes_[dq]->inputs[0]).dtype;
    Stored x_stored{{}, params_of(*nodes_[dq], in_dtype), in_dtype};
    std::vector<float> bytes(kCount);
    for (int64_t b = 0; b < kCount; ++b) {
      const int32_t v =
          in_dtype == DType::kU8 ? static_cast<int32_t>(b) : int32_t{static_cast<int8_t>(b)};
      x_stored.values.push_back(v);
      bytes[static_cast<size_t>(b)] = dequantized(v, x_stored.params);
    }
    const Tensor x = Tensor::from_vector(DType::kF32, {kCount}, bytes);
    Tensor current = x.clone();
    ValueId running = kNoValue;
    std::optional<Stored> running_stored = x_stored;
    const Value data{"", DType::kF32, Shape({kCount}), kNoNode, {}, std::nullopt};
    CpuContext context;
    context.threads = 1;
    for (size_t i = 0; i < chain.size(); ++i) {
      const Node& node = *nodes_[chain[i]];
      if (node.op_type == "QuantizeLinear") {  // and the DequantizeLinear after it
        const DType dtype = graph_.value(node.outputs[0]).dtype;
        Stored stored{{}, params_of(node, dtype), dtype};
        for (float& v : current.values<float>()) {
          stored.values.push_back(quantized(v, stored.params, dtype));
          v = dequantized(stored.values.back(), stored.params);
        }
        running_stored = std::move(stored);
        continue;
      }
      if (node.op_type == "DequantizeLinear") {
        running = node.outputs[0];
        continue;
      }
      const Node& requantize = i + 1 < chain.size() ? *nodes_[chain[i + 1]] : q;
      if (auto result = qlinear_step(node, running, running_stored, x_stored, dq, requantize)) {
        for (size_t b = 0; b < static_cast<size_t>(kCount); ++b) {
          current.values<float>()[b] = dequantized(result->values[b], result->params);
        }
        running_stored = std::move(result);
        running = node.outputs[0];
        continue;
      }
      // The operands of one value as scalars: the op then broadcasts nothing onto the 256.
      std::vector<Value> scalars(node.inputs.size());
      KernelSpec spec{node, {}, {&data}, graph_.opset, &context};
      std::vector<const Tensor*> in;
      for (size_t k = 0; k < node.inputs.size(); ++k) {
        const ValueId v = node.inputs[k];
        const auto constant = qdq_constant_scalar(graph_, v);
        if (!constant) {
          const bool previous = v == running || (running == kNoValue && v != kNoValue);
          spec.inputs.push_back(v == kNoValue ? nullptr : &data);
          in.push_back(v == kNoValue ? nullptr : previous ? &current : &x);
          continue;
        }
        Tensor one = Tensor::uninitialized(DType::kF32, {});
        one.values<float>()[0] = *constant;
        scalars[k] =
            Value{"", DType::kF32, Shape(std::vector<int64_t>{}), kNoNode, {}, std::move(one)};
        spec.inputs.push_back(&scalars[k]);
        in.push_back(&*scalars[k].constant);
      }
      auto kernel = registry.create(spec);
      if (!kernel.is_ok()) return std::nullopt;
      Tensor next = Tensor::uninitialized(DType::kF32, {kCount});
      Tensor* out = &next;
      if (!(*kernel)->run(in, std::span<Tensor* const>(&out, 1)).is_ok()) return std::nullopt;
      current = std::move(next);
      running = node.outputs[0];
      running_stored.reset();
    }
    const DType out_dtype = graph_.value(q.outputs[0]).dtype;
    const QuantScale y = params_of(q, out_dtype);
    Tensor table = Tensor::uninitialized(out_dtype, {kCount});
    const auto values = current.values<float>();
    for (size_t b = 0; b < static_cast<size_t>(kCount); ++b) {
      const int32_t v = quantized(values[b], y, out_dtype);
      if (out_dtype == DType::kU8) {
        table.values<uint8_t>()[b] = static_cast<uint8_t>(v);
      } else {
        table.values<int8_t>()[b] = static_cast<int8_t>(v);
      }
    }
    return table;
  }

  // A chain's Add or Mul as ONNX Runtime's QLinearAdd / QLinearMul: its operands the running
  // value and x or a constant, each 8-bit (`running_stored`, `x_stored`, qdq_constant_byte) of
  // the type `requantize` (the QuantizeLinear after it) writes. nullopt for any other op.
  std::optional<Stored> qlinear_step(const Node& node, ValueId running,
                                     const std::optional<Stored>& running_stored,
                                     const Stored& x_stored, size_t dq,
                                     const Node& requantize) const {
    if ((node.op_type != "Add" && node.op_type != "Mul") || node.inputs.size() != 2 ||
        requantize.op_type != "QuantizeLinear" || !running_stored) {
      return std::nullopt;
    }
    const DType dtype = graph_.value(requantize.outputs[0]).dtype;
    std::optional<Stored> operands[2];
    for (size_t k = 0; k < 2; ++k) {
      const ValueId v = node.inputs[k];
      if (v == running || (running == kNoValue && is_x(v, dq))) {
        operands[k] = running_stored;
      } else if (const auto c = qdq_constant_byte(graph_, v)) {
        operands[k] = Stored{{c->stored}, {c->scale, c->zero}, c->dtype};
      } else if (is_x(v, dq)) {
        operands[k] = x_stored;
      }
      if (!operands[k] || operands[k]->dtype != dtype) return std::nullopt;
    }
    // a: an operand of 256 values; b the other (256 or one).
    const bool swapped = operands[0]->values.size() == 1;
    const Stored& a = *operands[swapped ? 1 : 0];
    const Stored& b = *operands[swapped ? 0 : 1];
    QLinearBinary op{node.op_type == "Add", swapped, a.params, b.params,
                     params_of(requantize, dtype)};
    Stored result{std::vector<int32_t>(a.values.size()), op.y, dtype};
    dispatch_quantized(dtype, [&](auto tag) {
      using Q = decltype(tag);
      const std::vector<Q> av(a.values.begin(), a.values.end()),
          bv(b.values.begin(), b.values.end());
      std::vector<Q> y(av.size());
      qlinear_binary(op, av.data(), bv.data(), y.data(), 0, static_cast<int64_t>(av.size()),
                     static_cast<int64_t>(bv.size()));
      std::copy(y.begin(), y.end(), result.values.begin());
    });
    return result;
  }

  QuantScale params_of(const Node& node, DType dtype) const {
    return {scalar(node.inputs[1]), zero_point(node, dtype)};
  }
  static float dequantized(int32_t stored, const QuantScale& p) {
    return static_cast<float>(stored - p.zero_point) * p.scale;
  }
  static int32_t quantized(float v, const QuantScale& p, DType dtype) {
    return dtype == DType::kU8 ? int32_t{saturate_round<uint8_t>(v / p.scale, p.zero_point)}
                               : int32_t{saturate_round<int8_t>(v / p.scale, p.zero_point)};
  }

  // A DequantizeLinear's or QuantizeLinear's zero point (of `dtype` data; omitted: 0).
  int32_t zero_point(const Node& node, DType dtype) const {
    const ValueId zp = input_or_none(node, 2);
    if (zp == kNoValue) return 0;
    const Tensor& t = *graph_.value(zp).constant;
    return dtype == DType::kU8 ? int32_t{t.values<uint8_t>()[0]} : int32_t{t.values<int8_t>()[0]};
  }

  // An op that only moves or selects elements between a DequantizeLinear and QuantizeLinear
  // nodes of the same scale and zero point runs on the 8-bit data itself: Q(op(DQ(x))) is op(x),
  // as Q(DQ(x)) is x. ONNX Runtime drops such pairs too.
  bool drop_pairs(size_t s) {
    Node& node = *nodes_[s];
    // (Not MaxPool: its u8 kernel is a plain loop, ~10x oneDNN's f32 pooling.)
    static const std::set<std::string> moves = {"Reshape",   "Transpose", "Squeeze",
                                                "Unsqueeze", "Flatten",   "Identity",
                                                "Split",     "Slice",     "Gather"};
    if (!moves.count(node.op_type) || node.inputs.empty() || node.inputs[0] == kNoValue) {
      return false;
    }
    const auto dq = activation_dequantization(node.inputs[0]);
    if (!dq) return false;
    const Node& d = *nodes_[*dq];
    std::vector<size_t> quantizations;
    for (ValueId out : node.outputs) {
      const auto q = out == kNoValue ? std::nullopt : output_quantization(out);
      if (!q || !same_params(d, *nodes_[*q])) return false;
      quantizations.push_back(*q);
    }
    stop_reading(*dq);
    node.inputs[0] = d.inputs[0];
    for (size_t i = 0; i < quantizations.size(); ++i) {
      node.outputs[i] = nodes_[quantizations[i]]->outputs[0];
      absorbed_[quantizations[i]] = true;
    }
    return true;
  }

  // The same data dtype, scale and zero point (an omitted zero point is 0).
  bool same_params(const Node& dq, const Node& q) const {
    const DType dtype = graph_.value(dq.inputs[0]).dtype;
    if (graph_.value(q.outputs[0]).dtype != dtype || scalar(dq.inputs[1]) != scalar(q.inputs[1])) {
      return false;
    }
    return zero_point(dq, dtype) == zero_point(q, dtype);
  }

  // One reader of DequantizeLinear step `dq` reads its input instead: once none reads its output
  // (and it is no graph output), the step goes.
  void stop_reading(size_t dq) {
    const ValueId out = nodes_[dq]->outputs[0];
    if (++rewired_[dq] == uses_.consumers[static_cast<size_t>(out)].size() &&
        !uses_.outputs.count(out)) {
      absorbed_[dq] = true;
    }
  }

  float scalar(ValueId v) const { return graph_.value(v).constant->values<float>()[0]; }

  // A [N, K] int8 constant as a new [K, N] constant.
  ValueId transposed(ValueId v, const std::string& root_name) {
    const Tensor& t = *graph_.value(v).constant;
    const int64_t n = t.dims()[0], k = t.dims()[1];
    Tensor out = Tensor::uninitialized(DType::kI8, {k, n});
    const auto in = t.values<int8_t>();
    auto o = out.values<int8_t>();
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < k; ++j)
        o[static_cast<size_t>(j * n + i)] = in[static_cast<size_t>(i * k + j)];
    }
    return graph_.add_constant(root_name + "/qdq_weights_kn", std::move(out));
  }

  Graph& graph_;
  const std::vector<Node*>& nodes_;
  std::vector<bool>& absorbed_;
  StepUses uses_;
  std::map<size_t, size_t> rewired_;  // per DequantizeLinear step: readers rewired
};

}  // namespace

bool qdq_broadcasts(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  int64_t count = 1;
  for (int64_t d : b) count *= d;
  if (count == 1) return true;
  size_t lead = 0;  // b's leading 1s
  while (lead < b.size() && b[lead] == 1) ++lead;
  const size_t rank = b.size() - lead;
  return rank <= a.size() && std::equal(b.begin() + static_cast<std::ptrdiff_t>(lead), b.end(),
                                        a.end() - static_cast<std::ptrdiff_t>(rank));
}

int fuse_qdq(Graph& graph, const std::vector<Node*>& nodes, std::vector<bool>& absorbed) {
  return QdqFuser(graph, nodes, absorbed).run();
}

}  // namespace hsched::cpu
