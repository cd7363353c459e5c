#include "graph/inference_guards.h"

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

#include <mutex>
#include <set>
#include <string>
#include <utility>

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
  });
}

}  // namespace hsched
