#include "graph/inference_guards.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

#include "graph/onnx_import.h"

namespace hsched {
namespace {

// The count of a list attribute, or -1 when the node does not give it.
int list_length(onnx::InferenceContext& ctx, const char* name) {
  const onnx::AttributeProto* attr = ctx.getAttribute(name);
  return attr == nullptr ? -1 : attr->ints_size();
}

// Fails the node's inference (libonnx's InferenceError) when its ranks disagree.
void check_ranks(onnx::InferenceContext& ctx, bool has_weight) {
  if (!onnx::hasInputShape(ctx, 0)) return;
  const int rank = ctx.getInputType(0)->tensor_type().shape().dim_size();
  if (rank < 3) {
    fail_shape_inference("input X has rank ", rank, "; it needs a batch, a channel and ",
                         "at least one spatial axis");
  }
  if (has_weight && ctx.getNumInputs() > 1 && onnx::hasInputShape(ctx, 1)) {
    const int weight_rank = ctx.getInputType(1)->tensor_type().shape().dim_size();
    if (weight_rank != rank) {
      fail_shape_inference("weight W has rank ", weight_rank, ", input X rank ", rank);
    }
  }
  const int spatial = rank - 2;
  for (const char* name : {"kernel_shape", "strides", "dilations"}) {
    const int n = list_length(ctx, name);
    if (n >= 0 && n != spatial) {
      fail_shape_inference("attribute ", name, " has ", n, " values for ", spatial,
                           " spatial axes");
    }
  }
  const int pads = list_length(ctx, "pads");
  if (pads >= 0 && pads != 2 * spatial) {
    fail_shape_inference("attribute pads has ", pads, " values for ", spatial, " spatial axes");
  }
}

// The output dims of Einsum `equation` on inputs of static `dims` (numpy's rules: an implicit
// output keeps the letters that appear once, in order, after the ellipsis' dims); nullopt when
// the equation does not fit them (the kernel refuses it with its reason).
std::optional<std::vector<int64_t>> einsum_dims(std::string equation,
                                                const std::vector<std::vector<int64_t>>& dims) {
  equation.erase(std::remove(equation.begin(), equation.end(), ' '), equation.end());
  const size_t arrow = equation.find("->");
  const std::string lhs = equation.substr(0, arrow);
  std::vector<std::string> terms(1);
  for (char c : lhs) {
    if (c == ',') {
      terms.emplace_back();
    } else {
      terms.back() += c;
    }
  }
  if (terms.size() != dims.size()) return std::nullopt;
  std::map<char, int64_t> size;
  std::map<char, int> count;
  std::vector<int64_t> broadcast;  // the ellipsis' dims, right-aligned across the inputs
  const auto merge = [](int64_t& into, int64_t d) {
    if (into == 1 || into == d) {
      into = d;
      return true;
    }
    return d == 1;
  };
  for (size_t t = 0; t < terms.size(); ++t) {
    std::string term = terms[t];
    const size_t dots = term.find("...");
    const bool has_dots = dots != std::string::npos;
    if (has_dots) term.erase(dots, 3);
    if (!std::all_of(term.begin(), term.end(),
                     [](char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; })) {
      return std::nullopt;
    }
    const auto rank = static_cast<int64_t>(dims[t].size());
    const int64_t spread = rank - static_cast<int64_t>(term.size());
    if (spread < 0 || (!has_dots && spread != 0)) return std::nullopt;
    for (size_t k = 0, axis = 0; k < term.size(); ++k, ++axis) {
      if (has_dots && k == dots) axis += static_cast<size_t>(spread);
      const int64_t d = dims[t][axis];
      auto [it, added] = size.emplace(term[k], d);
      if (!added && !merge(it->second, d)) return std::nullopt;
      ++count[term[k]];
    }
    if (static_cast<int64_t>(broadcast.size()) < spread) {
      broadcast.insert(broadcast.begin(), static_cast<size_t>(spread) - broadcast.size(), 1);
    }
    for (int64_t k = 0; k < spread; ++k) {
      int64_t& into = broadcast[broadcast.size() - static_cast<size_t>(spread - k)];
      if (!merge(into, dims[t][static_cast<size_t>(dots + static_cast<size_t>(k))])) {
        return std::nullopt;
      }
    }
  }
  std::string out;
  if (arrow != std::string::npos) {
    out = equation.substr(arrow + 2);
  } else {
    out = "...";
    for (const auto& [letter, n] : count) {
      if (n == 1) out += letter;
    }
  }
  std::vector<int64_t> result;
  const size_t dots = out.find("...");
  for (size_t k = 0; k < out.size(); ++k) {
    if (k == dots) {
      result.insert(result.end(), broadcast.begin(), broadcast.end());
      k += 2;
      continue;
    }
    auto it = size.find(out[k]);
    if (it == size.end()) return std::nullopt;
    result.push_back(it->second);
  }
  return result;
}

// Einsum's output dims where every input's are known: libonnx 1.12 infers only its rank.
void infer_einsum_dims(onnx::InferenceContext& ctx) {
  const onnx::AttributeProto* equation = ctx.getAttribute("equation");
  if (equation == nullptr || ctx.getNumOutputs() != 1) return;
  std::vector<std::vector<int64_t>> dims;
  for (size_t i = 0; i < ctx.getNumInputs(); ++i) {
    if (!onnx::hasInputShape(ctx, i)) return;
    auto& in = dims.emplace_back();
    for (const auto& d : ctx.getInputType(i)->tensor_type().shape().dim()) {
      if (!d.has_dim_value()) return;
      in.push_back(d.dim_value());
    }
  }
  const auto out = einsum_dims(equation->s(), dims);
  if (!out) return;
  auto* shape = ctx.getOutputType(0)->mutable_tensor_type()->mutable_shape();
  shape->clear_dim();
  for (int64_t d : *out) shape->add_dim()->set_dim_value(d);
}

}  // namespace

void install_inference_guards() {
  static std::once_flag installed;
  std::call_once(installed, [] {
    const std::set<std::string> with_weight = {"Conv", "ConvTranspose", "ConvInteger"};
    std::set<const onnx::OpSchema*> wrapped;
    for (const char* op : {"Conv", "ConvTranspose", "ConvInteger", "QLinearConv", "MaxPool",
                           "AveragePool", "LpPool", "MaxUnpool"}) {
      for (int version = 1; version <= static_cast<int>(kMaxOpset); ++version) {
        const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(op, version, "");
        if (schema == nullptr || !wrapped.insert(schema).second) continue;
        onnx::InferenceFunction original = schema->GetTypeAndShapeInferenceFunction();
        if (!original) continue;
        const bool has_weight = with_weight.count(op) > 0;
        // The registry's schemas are not const objects; libonnx offers no other way in.
        const_cast<onnx::OpSchema*>(schema)->TypeAndShapeInferenceFunction(
            [original = std::move(original), has_weight](onnx::InferenceContext& ctx) {
              check_ranks(ctx, has_weight);
              original(ctx);
            });
      }
    }
    const onnx::OpSchema* einsum = onnx::OpSchemaRegistry::Schema("Einsum", 12, "");
    if (einsum != nullptr && einsum->GetTypeAndShapeInferenceFunction()) {
      onnx::InferenceFunction original = einsum->GetTypeAndShapeInferenceFunction();
      const_cast<onnx::OpSchema*>(einsum)->TypeAndShapeInferenceFunction(
          [original = std::move(original)](onnx::InferenceContext& ctx) {
            original(ctx);
            infer_einsum_dims(ctx);
          });
    }
  });
}

}  // namespace hsched
