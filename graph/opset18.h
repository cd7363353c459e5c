// Models of opset 18. hsched's ONNX library (libonnx 1.12: checker, schemas, shape inference)
// knows opsets up to 17, so an opset-18 model is read by rewriting each node that opset 18
// changed into its opset-17 form, after which it imports opset 17 and goes through the same
// validation, inference and kernels as any other model.
#pragma once

#include <cstdint>

#include "hsched/status.h"

namespace onnx {
class ModelProto;
}  // namespace onnx

namespace hsched {

// The newest opset hsched reads (the ones above kMaxOpset through lower_opset18).
inline constexpr int64_t kNewestOpset = 18;

// The newest IR version hsched reads (the ones above libonnx 1.12's 8 through read_as_ir8).
inline constexpr int64_t kNewestIrVersion = 10;

// Reads a model of IR version 9 or 10 (ONNX 1.13 to 1.16; the exporters of today write them for
// opsets hsched reads) as IR 8, libonnx 1.12's, and sets its ir_version to 8. What those versions
// add: float8 and 4-bit element types, which validation refuses as any type it does not know, and
// fields libonnx 1.12 keeps as unknown ones: metadata of nodes, graphs, values and functions
// (ignored) and function overloads, refused with one line naming the node or function (functions
// are inlined by domain and name alone).
Status read_as_ir8(onnx::ModelProto& model);

// Rewrites the nodes of the default domain in the main graph and in If branches (model-local
// functions are inlined before this runs) into their opset-17 forms, then sets the model's
// default-domain import to 17:
// - Reduce{L1,L2,LogSum,LogSumExp,Max,Mean,Min,Prod,SumSquare}: the constant 'axes' input becomes
//   the attribute; noop_with_empty_axes is dropped (refused when it would apply);
// - Split: num_outputs is dropped when it equals the node's output count;
// - Pad without 'axes', Resize with antialias 0, no 'axes' and keep_aspect_ratio_policy
//   'stretch', LpPool with ceil_mode 0: the new inputs and attributes are dropped;
// - ScatterElements and ScatterND with reduction 'max' or 'min', and the ops new in opset 18,
//   are refused.
// Runs on an unvalidated model: it reads only node names, inputs and attributes, and constant
// int64 vectors through the checked tensor reader. Errors are one line naming the node.
Status lower_opset18(onnx::ModelProto& model);

}  // namespace hsched
