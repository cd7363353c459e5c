#include "graph/cost.h"

#include <algorithm>
#include <initializer_list>
#include <limits>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace hsched {
namespace {

constexpr int64_t kSaturated = std::numeric_limits<int64_t>::max();

// Counts are non-negative; they saturate at INT64_MAX instead of overflowing (a bounded model
// can still multiply past 2^63: 2^34 output elements times a large reduction).
int64_t sat_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? kSaturated : r;
}

int64_t sat_add(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? kSaturated : r;
}

int64_t sat_product(const std::vector<int64_t>& dims, size_t first, size_t last) {
  int64_t n = 1;
  for (size_t i = first; i < last && i < dims.size(); ++i) n = sat_mul(n, dims[i]);
  return n;
}

// How many FLOP per output element an elementwise op costs. Most are one instruction; ops
// written as a short sequence of instructions count that sequence, so that ranking devices by
// FLOP stays sensible. The exact figures are estimates, chosen as:
//   LeakyRelu, Clip, PRelu, Mod, Shrink: compare + select or multiply = 2
//   HardSigmoid: multiply, add, clamp = 3; HardSwish: HardSigmoid + multiply = 4
//   Sigmoid: negate, exp, add, divide = 4; Tanh: about as much as Sigmoid = 4
//   Erf: a polynomial approximation of ~8 terms = 8; Gelu: Erf + scale, add, multiply = 8
//   Softplus log(1+exp) = 3, Elu/Selu/Celu ~ exp + select/scale = 4-5, Mish = 8
//   the inverse trigonometric and hyperbolic functions and Tan: libm calls, counted as Erf = 8
//   QuantizeLinear/DequantizeLinear: scale + zero point (+ round/saturate) = 2;
//   DynamicQuantizeLinear: min, max, then QuantizeLinear = 4
// and 1 for the ops below, one instruction per element.
// clang-format off
constexpr std::string_view kOneFlopOps[] = {
    "Add", "Sub", "Mul", "Div", "Pow", "Sqrt", "Exp", "Log", "Reciprocal", "Neg", "Abs", "Sign",
    "Floor", "Ceil", "Round", "Relu", "Min", "Max", "Where", "Equal", "Less", "LessOrEqual",
    "Greater", "GreaterOrEqual", "And", "Or", "Xor", "Not", "IsNaN", "IsInf", "Cast", "CastLike",
    "BitShift", "ThresholdedRelu", "Sin", "Cos",
};
// clang-format on

const std::unordered_map<std::string_view, int64_t>& elementwise_factors() {
  static const auto kFactors = [] {
    std::unordered_map<std::string_view, int64_t> factors;
    const auto add = [&](int64_t factor, std::initializer_list<std::string_view> ops) {
      for (std::string_view op : ops) factors.emplace(op, factor);
    };
    for (std::string_view op : kOneFlopOps) factors.emplace(op, 1);
    add(2, {"LeakyRelu", "Clip", "PRelu", "Mod", "QuantizeLinear", "DequantizeLinear", "Shrink"});
    add(3, {"HardSigmoid", "Softplus", "Softsign"});
    add(4, {"HardSwish", "Sigmoid", "Tanh", "Elu", "Celu", "DynamicQuantizeLinear"});
    add(5, {"Selu"});
    add(8, {"Erf", "Gelu", "Mish", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh",
            "Atanh"});
    return factors;
  }();
  return kFactors;
}

// Per output element of a normalization: mean and variance are taken over the normalized axes
// (a subtract, square and two sums), then normalize, scale and shift.
const std::unordered_map<std::string_view, int64_t>& normalization_factors() {
  static const std::unordered_map<std::string_view, int64_t> kFactors{
      {"Softmax", 5},  // max, subtract, exp, sum, divide
      {"LogSoftmax", 5},
      {"Hardmax", 2},
      {"LayerNormalization", 8},
      {"SimplifiedLayerNormalization", 6},
      {"BatchNormalization", 4},  // inference: (x - mean) / sqrt(var + eps) * scale + bias
      {"InstanceNormalization", 5},
      {"GroupNormalization", 5},
      {"MeanVarianceNormalization", 5},
      {"LpNormalization", 3},
      {"LRN", 4},
  };
  return kFactors;
}

// Ops that only move, select or describe data: 0 FLOP (their bytes still count).
bool is_data_movement(std::string_view op) {
  static const std::unordered_set<std::string_view> kOps{
      "Reshape",         "Transpose",    "Concat",   "Split",           "Slice",     "Gather",
      "GatherElements",  "GatherND",     "Scatter",  "ScatterElements", "ScatterND", "Flatten",
      "Squeeze",         "Unsqueeze",    "Expand",   "Identity",        "Pad",       "Tile",
      "Shape",           "Size",         "Constant", "ConstantOfShape", "Range",     "Dropout",
      "DepthToSpace",    "SpaceToDepth", "OneHot",   "EyeLike",         "NonZero",   "Trilu",
      "ReverseSequence", "Compress",
  };
  return kOps.count(op) != 0;
}

bool is_reduction(std::string_view op) {
  return op.starts_with("Reduce") || op == "ArgMax" || op == "ArgMin" || op == "CumSum" ||
         op == "TopK" || op == "GlobalAveragePool" || op == "GlobalMaxPool" || op == "GlobalLpPool";
}

// The shapes a count needs; `ok` turns false when one of them is missing or not static.
class ShapeAccess {
 public:
  ShapeAccess(const Graph& graph, const Node& node) : graph_(graph), node_(node) {}

  const std::vector<int64_t>* input(size_t index) { return dims_of(node_.inputs, index); }
  const std::vector<int64_t>* output(size_t index) { return dims_of(node_.outputs, index); }
  bool has_input(size_t index) const {
    return index < node_.inputs.size() && node_.inputs[index] != kNoValue;
  }
  int64_t output_elements(size_t index = 0) {
    const auto* dims = output(index);
    return dims ? sat_product(*dims, 0, dims->size()) : 0;
  }
  int64_t input_elements(size_t index = 0) {
    const auto* dims = input(index);
    return dims ? sat_product(*dims, 0, dims->size()) : 0;
  }
  bool ok() const { return ok_; }
  void fail() { ok_ = false; }

 private:
  const std::vector<int64_t>* dims_of(const std::vector<ValueId>& ids, size_t index) {
    if (index >= ids.size() || ids[index] == kNoValue) {
      ok_ = false;
      return nullptr;
    }
    const Shape& shape = graph_.value(ids[index]).shape;
    if (!shape.is_static()) {
      ok_ = false;
      return nullptr;
    }
    return &shape.dims;
  }

  const Graph& graph_;
  const Node& node_;
  bool ok_ = true;
};

// Marks the count unknown; the caller reports 0 FLOP with known = false.
int64_t unknown(ShapeAccess& s) {
  s.fail();
  return 0;
}

// Y = conv(X, W) + B: X [N, Cin, spatial...], W [Cout, Cin/group, kernel...] (inputs 1 and 2;
// QLinearConv's are 3 and 8).
int64_t conv_flop(ShapeAccess& s, size_t weight = 1, size_t bias = 2) {
  const auto* w = s.input(weight);
  const auto* y = s.output(0);
  if (!w || !y || w->size() < 2 || y->size() < 2) return unknown(s);
  const int64_t macs_per_output = sat_product(*w, 1, w->size());  // (Cin/group) * prod(kernel)
  const int64_t outputs = sat_product(*y, 0, y->size());          // N * Cout * prod(out spatial)
  int64_t flop = sat_mul(2, sat_mul(outputs, macs_per_output));
  if (s.has_input(bias)) flop = sat_add(flop, outputs);
  return flop;
}

// Each input element scatters into (Cout/group) * prod(kernel) outputs: X [N, Cin, spatial...],
// W [Cin, Cout/group, kernel...].
int64_t conv_transpose_flop(ShapeAccess& s) {
  const auto* x = s.input(0);
  const auto* w = s.input(1);
  if (!x || !w || w->size() < 2) return unknown(s);
  const int64_t inputs = sat_product(*x, 0, x->size());
  int64_t flop = sat_mul(2, sat_mul(inputs, sat_product(*w, 1, w->size())));
  if (s.has_input(2)) flop = sat_add(flop, s.output_elements());
  return flop;
}

// Y [M, N] = alpha * A' B' + beta * C, with K taken from A (transposed or not).
int64_t gemm_flop(ShapeAccess& s, const Node& node) {
  const auto* a = s.input(0);
  const auto* y = s.output(0);
  if (!a || !y || a->size() != 2) return unknown(s);
  const int64_t k = node.attr_int("transA", 0) != 0 ? (*a)[0] : (*a)[1];
  const int64_t mn = sat_product(*y, 0, y->size());
  int64_t flop = sat_mul(2, sat_mul(mn, k));
  if (s.has_input(2)) flop = sat_add(flop, mn);
  return flop;
}

// Every output element of a (batched, broadcast) matmul is a dot product over A's last dim;
// output elements already account for broadcast batch dims and 1-D operands.
int64_t matmul_flop(ShapeAccess& s) {
  const auto* a = s.input(0);
  if (!a || a->empty()) return unknown(s);
  return sat_mul(2, sat_mul(s.output_elements(), a->back()));
}

int64_t pool_flop(ShapeAccess& s, const Node& node) {
  const std::vector<int64_t> kernel = node.attr_ints("kernel_shape");
  if (kernel.empty()) return unknown(s);
  for (int64_t k : kernel) {
    if (k < 0) return unknown(s);
  }
  return sat_mul(s.output_elements(), sat_product(kernel, 0, kernel.size()));
}

// Nearest copies (1 per element); linear blends 2 taps per resized dim, cubic 4, each tap a
// multiply-add (2 FLOP). Only dims whose size changes are interpolated.
int64_t resize_flop(ShapeAccess& s, const Node& node) {
  const auto* x = s.input(0);
  const auto* y = s.output(0);
  if (!x || !y) return unknown(s);
  const std::string mode = node.attr_string("mode", "nearest");
  const int64_t outputs = sat_product(*y, 0, y->size());
  if (mode == "nearest") return outputs;
  const int64_t taps_per_dim = mode == "cubic" ? 4 : 2;
  int64_t taps = 1;
  for (size_t i = 0; i < x->size() && i < y->size(); ++i) {
    if ((*x)[i] != (*y)[i]) taps = sat_mul(taps, taps_per_dim);
  }
  return taps == 1 ? outputs : sat_mul(outputs, sat_mul(2, taps));
}

// Einsum: a multiply-add per output element and per combination of the summed letters (those
// the explicit output leaves out, or in implicit mode those written more than once). Letters
// after a '...' take their sizes from the end of the input's dims.
int64_t einsum_flop(ShapeAccess& s, const Node& node) {
  std::string eq;
  for (char c : node.attr_string("equation", "")) {
    if (c != ' ') eq += c;
  }
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  const std::string rhs = arrow == std::string::npos ? "" : eq.substr(arrow + 2);
  std::unordered_map<char, int64_t> size, uses;
  for (size_t begin = 0, input = 0; begin <= lhs.size(); ++input) {
    const size_t end = std::min(lhs.find(',', begin), lhs.size());
    const std::string term = lhs.substr(begin, end - begin);
    begin = end + 1;
    const auto* dims = s.input(input);
    if (!dims) return unknown(s);
    const size_t dots = term.find("...");
    for (size_t i = 0; i < term.size(); ++i) {
      if (term[i] == '.') continue;
      const size_t from_end = term.size() - i;  // letters after '...' align right
      if (dots != std::string::npos && i > dots && from_end > dims->size()) return unknown(s);
      const size_t axis = dots == std::string::npos || i < dots ? i : dims->size() - from_end;
      if (axis >= dims->size()) return unknown(s);
      size[term[i]] = std::max(size[term[i]], (*dims)[axis]);
      ++uses[term[i]];
    }
  }
  int64_t per_output = 1;
  for (const auto& [letter, n] : size) {
    const bool kept =
        arrow == std::string::npos ? uses[letter] == 1 : rhs.find(letter) != std::string::npos;
    if (!kept) per_output = sat_mul(per_output, n);
  }
  return sat_mul(2, sat_mul(s.output_elements(), per_output));
}

// LSTM, GRU, RNN: each of the T*N steps multiplies its input row by W and its state by R, both
// directions' blocks included: 2 * (|X| / I) * (|W| + |R|); gate arithmetic is left out.
int64_t recurrent_flop(ShapeAccess& s) {
  const auto* x = s.input(0);
  const auto* w = s.input(1);
  const auto* r = s.input(2);
  if (!x || !w || !r || x->size() != 3) return unknown(s);
  const int64_t steps = sat_product(*x, 0, 2);
  const int64_t macs = sat_add(sat_product(*w, 0, w->size()), sat_product(*r, 0, r->size()));
  return sat_mul(2, sat_mul(steps, macs));
}

int64_t arithmetic_flop(const Node& node, ShapeAccess& s) {
  const std::string_view op = node.op_type;
  if (op == "Conv" || op == "ConvInteger") return conv_flop(s);
  if (op == "QLinearConv") return conv_flop(s, 3, 8);
  if (op == "ConvTranspose") return conv_transpose_flop(s);
  if (op == "Gemm") return gemm_flop(s, node);
  if (op == "MatMul" || op == "MatMulInteger" || op == "QLinearMatMul") return matmul_flop(s);
  if (op == "MaxPool" || op == "AveragePool" || op == "LpPool") return pool_flop(s, node);
  if (op == "Resize" || op == "Upsample") return resize_flop(s, node);
  if (op == "Einsum") return einsum_flop(s, node);
  if (op == "GridSample" || op == "RoiAlign") return sat_mul(s.output_elements(), 8);  // 4 taps
  if (op == "LSTM" || op == "GRU" || op == "RNN") return recurrent_flop(s);
  if (op == "Det") {  // LU: ~n^3 FLOP per n x n matrix of n^2 elements
    const auto* x = s.input(0);
    return x && !x->empty() ? sat_mul(s.input_elements(), x->back()) : unknown(s);
  }
  if (is_reduction(op)) return s.input_elements();
  if (is_data_movement(op)) return 0;
  if (auto it = normalization_factors().find(op); it != normalization_factors().end()) {
    return sat_mul(s.output_elements(), it->second);
  }
  if (op == "Sum" || op == "Mean") {
    // k inputs: k-1 additions per element (+1 divide for Mean).
    int64_t present = 0;
    for (ValueId in : node.inputs) present += in != kNoValue ? 1 : 0;
    const int64_t per_element = std::max<int64_t>(1, present - 1) + (op == "Mean" ? 1 : 0);
    return sat_mul(s.output_elements(), per_element);
  }
  if (auto it = elementwise_factors().find(op); it != elementwise_factors().end()) {
    return sat_mul(s.output_elements(), it->second);
  }
  // An op not listed is counted as one operation per output element: a guess, but one that
  // keeps unknown ops from looking free. Nodes without outputs count nothing.
  if (node.outputs.empty() || node.outputs[0] == kNoValue) return 0;
  return s.output_elements();
}

// Adds the bytes of `ids`; false when one of them has no static shape or dtype.
bool sum_bytes(const Graph& graph, const std::vector<ValueId>& ids, int64_t& total) {
  bool known = true;
  for (ValueId id : ids) {
    if (id == kNoValue) continue;
    const Value& value = graph.value(id);
    if (!value.shape.is_static() || value.dtype == DType::kUndefined) {
      known = false;
      continue;
    }
    total = sat_add(total, value.byte_size());
  }
  return known;
}

}  // namespace

bool is_gather(const std::string& op_type) {
  return op_type == "Gather" || op_type == "GatherElements" || op_type == "GatherND";
}

NodeCost node_cost(const Graph& graph, NodeId id) {
  const Node& node = graph.node(id);
  NodeCost cost;
  ShapeAccess shapes(graph, node);
  cost.flop = arithmetic_flop(node, shapes);
  const bool read_known = sum_bytes(graph, node.inputs, cost.bytes_read);
  const bool written_known = sum_bytes(graph, node.outputs, cost.bytes_written);
  // A gather reads the rows it selects, not its whole table (an embedding of 8 MiB for 128
  // tokens): as many bytes of its data as it writes.
  if (is_gather(node.op_type) && read_known && written_known && !node.inputs.empty() &&
      node.inputs[0] != kNoValue) {
    const int64_t table = graph.value(node.inputs[0]).byte_size();
    cost.bytes_read -= table - std::min(table, cost.bytes_written);
  }
  cost.known = shapes.ok() && read_known && written_known;
  if (!shapes.ok()) cost.flop = 0;  // a partial count would mislead more than none
  return cost;
}

}  // namespace hsched
