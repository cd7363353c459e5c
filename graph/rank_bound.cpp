#include "graph/rank_bound.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <unordered_map>

#include <onnx/onnx_pb.h>

#include "hsched/shape.h"
#include "graph/onnx_validate.h"

namespace hsched {
namespace {

constexpr int kUnknown = -1;

// The output rank of an Einsum: the letters its equation keeps, plus the broadcast dims an
// ellipsis stands for (at most the largest input rank).
int einsum_rank(const std::string& equation, int max_input_rank) {
  const size_t arrow = equation.find("->");
  const std::string kept = arrow == std::string::npos ? equation : equation.substr(arrow + 2);
  std::set<char> letters;
  for (char c : kept) {
    if (std::isalpha(static_cast<unsigned char>(c))) letters.insert(c);
  }
  const bool ellipsis = kept.find("...") != std::string::npos;
  return static_cast<int>(letters.size()) + (ellipsis ? std::max(max_input_rank, 0) : 0);
}

class RankBounds {
 public:
  explicit RankBounds(const onnx::GraphProto& graph) {
    auto declare = [&](const onnx::ValueInfoProto& info) {
      const auto& type = info.type().tensor_type();
      if (info.type().has_tensor_type() && type.has_shape()) {
        rank_[info.name()] = type.shape().dim_size();
      }
    };
    for (const auto& info : graph.input()) declare(info);
    for (const auto& info : graph.value_info()) declare(info);
    for (const auto& info : graph.output()) declare(info);
    for (const auto& init : graph.initializer()) {
      rank_[init.name()] = init.dims_size();
      if (init.dims_size() == 1) length_[init.name()] = init.dims(0);
    }
  }

  int rank(const std::string& name) const {
    auto it = rank_.find(name);
    return name.empty() || it == rank_.end() ? kUnknown : it->second;
  }

  // The length of a 1-D initializer (a shape or axes input); kUnknown for anything else.
  int64_t initializer_length(const onnx::NodeProto& node, int input) const {
    if (node.input_size() <= input) return kUnknown;
    auto it = length_.find(node.input(input));
    return it == length_.end() ? kUnknown : it->second;
  }

  // A bound on the rank of the outputs of `node`, as libonnx would infer them.
  int64_t bound(const onnx::NodeProto& node) const {
    int max_in = kUnknown;
    for (const auto& in : node.input()) max_in = std::max(max_in, rank(in));
    const int r0 = node.input_size() > 0 ? rank(node.input(0)) : kUnknown;
    const int r1 = node.input_size() > 1 ? rank(node.input(1)) : kUnknown;
    const std::string& op = node.op_type();
    auto ints_size = [&](const char* name) -> int64_t {
      for (const auto& attr : node.attribute()) {
        if (attr.name() == name) return attr.ints_size();
      }
      return kUnknown;
    };
    // ConstantOfShape and Expand take their rank from the length of a computed shape input:
    // check_shape_input_lengths() refuses it when libonnx knows it is longer than kMaxRank.
    auto shape_length = [&](int input) -> int64_t {
      const int64_t length = initializer_length(node, input);
      return length == kUnknown ? static_cast<int64_t>(kMaxRank) : length;
    };
    // Unsqueeze (opset 13 on) and Reshape read the values of their second input: libonnx infers
    // nothing when it is computed.
    if (op == "Unsqueeze") {
      const int64_t axes = ints_size("axes");
      const int64_t added = axes != kUnknown ? axes : initializer_length(node, 1);
      return r0 == kUnknown || added == kUnknown ? kUnknown : r0 + added;
    }
    if (op == "Gather" || op == "GatherND") {
      return r0 == kUnknown || r1 == kUnknown ? kUnknown : r0 + r1 - 1;
    }
    if (op == "OneHot") return r0 == kUnknown ? kUnknown : r0 + 1;
    if (op == "ConcatFromSequence") return max_in == kUnknown ? kUnknown : max_in + 1;
    if (op == "ConstantOfShape") return shape_length(0);
    if (op == "Reshape") return initializer_length(node, 1);
    if (op == "Expand") return std::max<int64_t>(r0, shape_length(1));
    if (op == "RandomNormal" || op == "RandomUniform") return ints_size("shape");
    if (op == "Einsum") {
      for (const auto& attr : node.attribute()) {
        if (attr.name() == "equation") return einsum_rank(attr.s(), max_in);
      }
      return kUnknown;
    }
    if (op == "Shape" || op == "Range" || op == "Unique") return 1;
    if (op == "Size") return 0;
    if (op == "NonZero" || op == "EyeLike" || op == "Flatten" || op == "NonMaxSuppression") {
      return 2;
    }
    // Every other ONNX operator gives outputs no higher in rank than its inputs (loosely: a
    // reduction or Squeeze is counted at its input's rank).
    return max_in;
  }

  Status visit(const onnx::NodeProto& node, int index) {
    int64_t out = kUnknown;
    if (node.domain().empty() || node.domain() == "ai.onnx") out = bound(node);
    if (out > kMaxRankBound) {
      return invalid_argument(node_description(node, index) + ": its output could reach rank " +
                              std::to_string(out) + ", more than the " +
                              std::to_string(kMaxRankBound) + " hsched bounds shape inference by");
    }
    for (const auto& name : node.output()) {
      if (name.empty()) continue;
      if (out != kUnknown) {
        rank_[name] = static_cast<int>(out);
      }
      // else: a rank declared by the model stays (libonnx starts from it too).
    }
    return Status::ok();
  }

 private:
  std::unordered_map<std::string, int> rank_;
  std::unordered_map<std::string, int64_t> length_;
};

}  // namespace

Status check_rank_bounds(const onnx::GraphProto& graph) {
  RankBounds bounds(graph);
  for (int i = 0; i < graph.node_size(); ++i) {
    HSCHED_RETURN_IF_ERROR(bounds.visit(graph.node(i), i));
  }
  return Status::ok();
}

}  // namespace hsched
