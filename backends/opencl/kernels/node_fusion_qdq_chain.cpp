// The QDQ chains of the program's fusions (node_ops.h): elementwise ops on one 8-bit tensor
// through Q/DQ pairs, as one qdq_chain kernel or a quantized MatMul's operand read
// (fusable_qdq_chain, fusable_operand_chain). Graph analysis only; enqueue_node runs what they
// produce.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "backends/opencl/kernels/node_fusion_quant.h"
#include "backends/opencl/kernels/node_ops.h"
#include "backends/opencl/kernels/node_ops_util.h"
#include "graph/qdq_scalar.h"

namespace hsched::opencl {

using qdq_detail::constant_params;
using qdq_detail::ConstantParams;
using qdq_detail::is_byte;
using qdq_detail::kQdqActivations;
using qdq_detail::made_by;

namespace {

// fusable_qdq_chain's walk over the chain from x, building its kQdqChainAttr.
class ChainWalk {
 public:
  ChainWalk(const Graph& graph, ValueId x, size_t min_ops)
      : graph_(graph), x_(x), min_ops_(min_ops) {}

  std::optional<QdqChainFusion> walk() {
    const Value& x = graph_.value(x_);
    if (!is_byte(x.dtype) || x.is_constant() || !x.shape.is_static()) return std::nullopt;
    for (NodeId r : x.consumers) {  // x's DequantizeLinears of the first one's parameters
      const Node& dq = graph_.node(r);
      if (dq.op_type != "DequantizeLinear" || !dq.domain.empty() || dq.inputs[0] != x_ ||
          dq.outputs.size() != 1 || dq.outputs[0] == kNoValue) {
        continue;
      }
      const auto p = constant_params(graph_, dq, x.dtype, 1, false);
      if (!p || (!dequantizations_.empty() &&
                 (p->scales != x_params_.scales || p->zero != x_params_.zero))) {
        continue;
      }
      x_params_ = *p;
      dequantizations_.push_back(r);
      dequantized_.insert(dq.outputs[0]);
    }
    // The first op reads x (and constants) alone; the others read the op before them too.
    NodeId current = kNoNode;
    for (ValueId d : dequantized_) {
      for (NodeId r : graph_.value(d).consumers) {
        if (r == current || !instruction(graph_.node(r), kNoValue)) continue;
        if (current != kNoNode) return std::nullopt;
        current = r;
      }
    }
    std::optional<QdqChainFusion> longest;
    ValueId v = kNoValue;
    for (size_t ops = 1; current != kNoNode; ++ops) {
      const Node& node = graph_.node(current);
      const auto op = instruction(node, v);
      if (!op || program_.size() == kQdqChainOps) break;
      program_.push_back(*op);
      nodes_.push_back(current);
      if ((*op)[0] == 0.0f && (*op)[1] == static_cast<float>(UnaryOp::kNanTo)) {  // its IsNaN
        nodes_.push_back(graph_.value(node.inputs[0]).producer);
      }
      v = node.outputs[0];
      NodeId next_id = kNoNode;
      const Node* next = node_detail::only_reader(graph_, v, &next_id);
      const auto q = next ? fusable_output_quantization(graph_, *next) : std::nullopt;
      current = next ? next_id : kNoNode;
      if (!q || next->inputs[0] != v) continue;
      if (ops >= min_ops_) longest = fusion(next_id, *q);
      // On through the QuantizeLinear's DequantizeLinear, of its parameters, to the next op.
      const ValueId stored = next->outputs[0];
      NodeId dq_id = kNoNode;
      const Node* dq = node_detail::only_reader(graph_, stored, &dq_id);
      const bool dequantizes = dq != nullptr && dq->op_type == "DequantizeLinear" &&
                               dq->domain.empty() && dq->outputs.size() == 1 &&
                               dq->inputs[0] == stored;
      const auto p = dequantizes
                         ? constant_params(graph_, *dq, graph_.value(stored).dtype, 1, false)
                         : std::nullopt;
      if (!p || p->scales[0] != q->scale || p->zero != q->zero || program_.size() == kQdqChainOps) {
        break;
      }
      program_.push_back({2.0f, 0.0f, 0.0f, 0.0f, q->scale, static_cast<float>(q->zero),
                          static_cast<float>(q->lo), static_cast<float>(q->hi)});
      nodes_.insert(nodes_.end(), {next_id, dq_id});
      v = dq->outputs[0];
      next = node_detail::only_reader(graph_, v, &next_id);
      current = next ? next_id : kNoNode;
    }
    return longest;
  }

 private:
  using Instruction = std::array<float, 8>;

  // Operand code of `v` for an op after the running value `running`: 0 that value, 1 x, 2 one
  // value made from constants (in `c`: qdq_constant_scalar).
  std::optional<float> operand(ValueId v, ValueId running, float* c) const {
    if (v == kNoValue) return std::nullopt;
    if (v == running) return 0.0f;
    if (dequantized_.count(v)) return 1.0f;
    const auto value = qdq_constant_scalar(graph_, v);
    if (!value) return std::nullopt;
    *c = *value;
    return 2.0f;
  }

  // `node`'s op reading `running` (kNoValue: none yet), x or constants, with x's shape out.
  std::optional<Instruction> instruction(const Node& node, ValueId running) const {
    if (!node.domain.empty() || node.outputs.size() != 1 || node.outputs[0] == kNoValue ||
        graph_.value(node.outputs[0]).dtype != DType::kF32 ||
        graph_.value(node.outputs[0]).shape.dims != graph_.value(x_).shape.dims) {
      return std::nullopt;
    }
    float c = 0.0f;
    if (kQdqActivations.count(node.op_type) && node.inputs.size() == 1) {
      const auto a = operand(node.inputs[0], running, &c);
      const auto act = node_detail::unary_of(node, {});
      if (!a || *a == 2.0f || !act.is_ok()) return std::nullopt;
      return Instruction{0.0f, static_cast<float>(act->op), *a, 0.0f, 0.0f, act->alpha, act->beta,
                         0.0f};
    }
    if (node.op_type == "Where" && node.inputs.size() == 3) return nan_guard(node, running);
    static const std::set<std::string> kBinary = {"Add", "Sub", "Mul", "Div"};
    if (!kBinary.count(node.op_type) || node.inputs.size() != 2) return std::nullopt;
    const auto a = operand(node.inputs[0], running, &c);
    const auto b = operand(node.inputs[1], running, &c);
    const auto op = binary_op_from_onnx(node.op_type);
    if (!a || !b || (*a == 2.0f && *b == 2.0f) || !op.is_ok()) return std::nullopt;
    return Instruction{1.0f, static_cast<float>(*op), *a, *b, c, 0.0f, 0.0f, 0.0f};
  }

  // A NaN guard, Where(IsNaN(v), c, v) of the running value or x (v) and a constant c, the IsNaN
  // read by the Where alone (walk() takes it too).
  std::optional<Instruction> nan_guard(const Node& where, ValueId running) const {
    NodeId id = kNoNode;
    const Node* isnan = made_by(graph_, where.inputs[0], "IsNaN", &id);
    NodeId reader = kNoNode;
    if (isnan == nullptr || isnan->inputs.size() != 1 || isnan->inputs[0] != where.inputs[2] ||
        node_detail::only_reader(graph_, where.inputs[0], &reader) == nullptr) {
      return std::nullopt;
    }
    float c = 0.0f, unused = 0.0f;
    const std::optional<float> v = operand(where.inputs[2], running, &unused);
    const std::optional<float> k = operand(where.inputs[1], running, &c);
    if (!v.has_value() || v.value() == 2.0f || !k.has_value() || k.value() != 2.0f) {
      return std::nullopt;
    }
    return Instruction{0.0f, static_cast<float>(UnaryOp::kNanTo), v.value(), 0.0f, 0.0f, c, 0.0f,
                       0.0f};
  }

  // The chain so far, ending in QuantizeLinear `q_id`.
  QdqChainFusion fusion(NodeId q_id, const QuantizedOutput& q) const {
    std::vector<float> attr = {x_params_.scales[0],
                               static_cast<float>(x_params_.zero),
                               q.scale,
                               static_cast<float>(q.zero),
                               static_cast<float>(q.lo),
                               static_cast<float>(q.hi),
                               static_cast<float>(program_.size()),
                               0.0f};
    for (const Instruction& op : program_) attr.insert(attr.end(), op.begin(), op.end());
    const Node& first = graph_.node(nodes_[0]);
    QdqChainFusion f{nodes_[0],
                     Node{first.name, kQdqChainOp, "", {x_}, graph_.node(q_id).outputs, {}},
                     {nodes_.begin() + 1, nodes_.end()},
                     {}};
    f.op.attributes[kQdqChainAttr] = std::move(attr);
    f.absorbed.push_back(q_id);
    const auto in_chain = [&](NodeId n) {
      return std::find(nodes_.begin(), nodes_.end(), n) != nodes_.end();
    };
    f.alone = graph_.value(x_).consumers.size() == dequantizations_.size();
    for (NodeId dq : dequantizations_) {
      const ValueId out = graph_.node(dq).outputs[0];
      for (NodeId r : graph_.value(out).consumers) {
        if (in_chain(r)) f.reads.emplace_back(dq, r);
        f.alone = f.alone && in_chain(r) && !node_detail::is_graph_output(graph_, out);
      }
    }
    return f;
  }

  const Graph& graph_;
  const ValueId x_;
  const size_t min_ops_;
  ConstantParams x_params_;
  std::vector<NodeId> dequantizations_;
  std::set<ValueId> dequantized_;
  std::vector<Instruction> program_;
  std::vector<NodeId> nodes_;  // the chain's ops, QuantizeLinears and DequantizeLinears so far
};

}  // namespace

std::optional<QdqChainFusion> fusable_qdq_chain(const Graph& graph, ValueId x, size_t min_ops) {
  if (x == kNoValue) return std::nullopt;
  return ChainWalk(graph, x, min_ops).walk();
}

std::optional<QdqChainFusion> fusable_operand_chain(const Graph& graph, const Node& matmul,
                                                    ValueId operand) {
  NodeId id = kNoNode;
  const Node* dq = node_detail::only_reader(graph, operand, &id);
  if (dq == nullptr || dq->op_type != "DequantizeLinear" || dq->outputs.size() != 1 ||
      node_detail::only_reader(graph, dq->outputs[0], &id) != &matmul) {
    return std::nullopt;
  }
  const Node* q = made_by(graph, operand, "QuantizeLinear", &id);
  if (q == nullptr || q->inputs.empty()) return std::nullopt;
  // The chain's x is an 8-bit value some DequantizeLinear before the QuantizeLinear reads: each
  // one found walking back through the ops (and Q/DQ pairs between them) is tried, the chain of
  // the most ops ending at the operand taken.
  std::optional<QdqChainFusion> best;
  std::vector<ValueId> way{q->inputs[0]};
  std::set<ValueId> seen;
  for (size_t at = 0; at < way.size() && at < 4 * kQdqChainOps; ++at) {
    const ValueId v = way[at];
    if (v == kNoValue || !seen.insert(v).second || graph.value(v).producer == kNoNode) continue;
    const Node& node = graph.node(graph.value(v).producer);
    if (node.op_type != "DequantizeLinear") {
      way.insert(way.end(), node.inputs.begin(), node.inputs.end());
      continue;
    }
    const ValueId x = node.inputs.empty() ? kNoValue : node.inputs[0];
    if (x == kNoValue || graph.value(x).is_constant()) continue;
    auto chain = fusable_qdq_chain(graph, x, 1);
    if (chain && chain->alone && chain->op.outputs[0] == operand &&
        (!best || chain->absorbed.size() > best->absorbed.size())) {
      best = std::move(chain);
    }
    const Node* pair = made_by(graph, x, "QuantizeLinear", &id);
    if (pair != nullptr && !pair->inputs.empty()) way.push_back(pair->inputs[0]);
  }
  return best;
}

}  // namespace hsched::opencl
