// Model-local functions (ModelProto.functions): every call is replaced by the function's body
// before anything else looks at the model, so that hsched's validation checks the called nodes
// like any other and libonnx's checker and shape inference never see a function (libonnx 1.12
// recurses without end through a function that calls itself, and skips hsched's attribute
// guards inside function bodies).
#pragma once

#include "hsched/status.h"

namespace onnx {
class GraphProto;
class ModelProto;
}  // namespace onnx

namespace hsched {

// How deep model-local functions may call one another (a call from a graph is level 1).
inline constexpr int kMaxFunctionDepth = 8;
// How many nodes inlining may add in all: a model of a few KB could otherwise expand to millions.
inline constexpr int64_t kMaxInlinedNodes = int64_t{1} << 18;

// Checks the model's functions (names, inputs and outputs, what their nodes read, opsets, no
// subgraphs), refuses a call cycle among them (naming it) and calls nested deeper than
// kMaxFunctionDepth, then inlines every call in the main graph and in If branches: the body's
// nodes take the call's place, their names and the values they define renamed under a prefix that
// clashes with no other name of the model, the call's inputs and outputs wired to the body's,
// attribute references (ref_attr_name) replaced by the call's attributes; more than
// kMaxInlinedNodes new nodes are refused before any is added. Finally clears model.functions().
// `opset` is the model's default-domain version: a function importing another is refused.
Status inline_model_functions(onnx::ModelProto& model, int64_t opset);

// Ops of the default domain that hsched runs as the function body their ONNX schema gives
// (NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss, MeanVarianceNormalization, Celu, CastLike,
// the window functions): each such node of `graph` whose input types are known is replaced by
// the body for `opset` (built for those types when the schema's body depends on them), renamed
// under a prefix as above, the call's attributes (or the schema's defaults) in place of the
// body's references. Bodies that call such ops again are expanded on a later call, after shape
// inference has typed their values. Returns how many nodes were expanded; `budget` is the number
// of nodes expansions may still add (kMaxInlinedNodes for a model), lowered by what they add.
Result<int> expand_function_ops(onnx::GraphProto& graph, int64_t opset, int64_t& budget);

}  // namespace hsched
