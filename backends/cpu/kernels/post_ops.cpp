#include "backends/cpu/kernels/post_ops.h"

#include <algorithm>

namespace hsched::cpu {
namespace {

constexpr const char* kKinds = "_post_kinds";
constexpr const char* kAlphas = "_post_alphas";
constexpr const char* kBetas = "_post_betas";
constexpr const char* kInputs = "_post_inputs";

bool flag_at(const Node& node, const char* key, size_t index) {
  const auto flags = node.attr_ints(key);
  return index < flags.size() && flags[index] != 0;
}

}  // namespace

std::vector<PostOp> post_ops_of(const Node& node) {
  const auto kinds = node.attr_ints(kKinds);
  const auto inputs = node.attr_ints(kInputs);
  std::vector<float> alphas, betas;
  if (auto it = node.attributes.find(kAlphas); it != node.attributes.end()) {
    alphas = std::get<std::vector<float>>(it->second);
  }
  if (auto it = node.attributes.find(kBetas); it != node.attributes.end()) {
    betas = std::get<std::vector<float>>(it->second);
  }
  std::vector<PostOp> ops;
  for (size_t i = 0; i < kinds.size(); ++i) {
    ops.push_back(PostOp{static_cast<PostOp::Kind>(kinds[i]), alphas.at(i), betas.at(i),
                         static_cast<int>(inputs.at(i))});
  }
  return ops;
}

bool is_post_op_input(const std::vector<PostOp>& ops, size_t index) {
  return std::any_of(ops.begin(), ops.end(),
                     [&](const PostOp& op) { return op.input == static_cast<int>(index); });
}

void set_post_ops(Node& node, const std::vector<PostOp>& ops) {
  std::vector<int64_t> kinds, inputs;
  std::vector<float> alphas, betas;
  for (const auto& op : ops) {
    kinds.push_back(static_cast<int64_t>(op.kind));
    inputs.push_back(op.input);
    alphas.push_back(op.alpha);
    betas.push_back(op.beta);
  }
  node.attributes[kKinds] = kinds;
  node.attributes[kInputs] = inputs;
  node.attributes[kAlphas] = alphas;
  node.attributes[kBetas] = betas;
}

const char* post_op_name(PostOp::Kind kind) {
  switch (kind) {
    case PostOp::Kind::kRelu: return "Relu";
    case PostOp::Kind::kLeakyRelu: return "LeakyRelu";
    case PostOp::Kind::kClip: return "Clip";
    case PostOp::Kind::kSigmoid: return "Sigmoid";
    case PostOp::Kind::kHardSwish: return "HardSwish";
    case PostOp::Kind::kHardSigmoid: return "HardSigmoid";
    case PostOp::Kind::kSwish: return "SiLU";
    case PostOp::Kind::kGeluErf: return "Gelu";
    case PostOp::Kind::kTanh: return "Tanh";
    case PostOp::Kind::kAdd: return "Add";
    case PostOp::Kind::kScale: return "Mul";
  }
  return "?";
}

bool input_channels_last(const Node& node, size_t input) {
  return flag_at(node, "_in_layouts", input);
}

bool output_channels_last(const Node& node, size_t output) {
  return flag_at(node, "_out_layouts", output);
}

void set_layouts(Node& node, const std::vector<int64_t>& inputs,
                 const std::vector<int64_t>& outputs) {
  node.attributes["_in_layouts"] = inputs;
  node.attributes["_out_layouts"] = outputs;
}

bool matmul_transposes_b(const Node& node) { return node.attr_int("_transpose_b", 0) != 0; }

void set_matmul_transposes_b(Node& node) { node.attributes["_transpose_b"] = int64_t{1}; }

bool computes_in_bf16(const Node& node) { return node.attr_int("_bf16", 0) != 0; }

void mark_bf16(Node& node) { node.attributes["_bf16"] = int64_t{1}; }

bool computes_in_int8(const Node& node) { return node.attr_int("_int8", 0) != 0; }

void mark_int8(Node& node) { node.attributes["_int8"] = int64_t{1}; }

std::vector<int64_t> channels_last_dims(const std::vector<int64_t>& dims) {
  return {dims.at(0), dims.at(2), dims.at(3), dims.at(1)};
}

int64_t channels_last_axis(int64_t axis) {
  static constexpr int64_t kPhysical[4] = {0, 3, 1, 2};
  return kPhysical[axis];
}

}  // namespace hsched::cpu
