// Models of opsets 18 to 22. hsched's ONNX library (libonnx 1.12: checker, schemas, shape
// inference) knows opsets up to 17, so a newer model is read by rewriting each node those opsets
// changed into its opset-17 form, after which it imports opset 17 and goes through the same
// validation, inference and kernels as any other model.
#pragma once

#include <cstdint>

#include "hsched/status.h"

namespace onnx {
class ModelProto;
}  // namespace onnx

namespace hsched {

// The newest opset hsched reads (the ones above kMaxOpset through lower_newer_opsets).
inline constexpr int64_t kNewestOpset = 22;

// The newest IR version hsched reads (the ones above libonnx 1.12's 8 through read_as_ir8).
inline constexpr int64_t kNewestIrVersion = 10;

// Reads a model of IR version 9 or 10 (ONNX 1.13 to 1.16; the exporters of today write them for
// opsets hsched reads) as IR 8, libonnx 1.12's, and sets its ir_version to 8. What those versions
// add: float8 and 4-bit element types, which validation refuses as any type it does not know, and
// fields libonnx 1.12 keeps as unknown ones: metadata of nodes, graphs, values and functions
// (ignored) and function overloads, refused with one line naming the node or function (functions
// are inlined by domain and name alone).
Status read_as_ir8(onnx::ModelProto& model);

// Rewrites the nodes of the default domain of a model of `opset` (18 to kNewestOpset) in the main
// graph and in If branches (model-local functions are inlined before this runs) into their
// opset-17 forms, then sets the model's default-domain import to 17. What opsets 18 to 22 changed
// beyond element types (float8, 4- and 16-bit integers: validation refuses them as any type it
// does not know):
// - Reduce{L1,L2,LogSum,LogSumExp,Max,Mean,Min,Prod,SumSquare}: the constant 'axes' input becomes
//   the attribute; noop_with_empty_axes is dropped (refused when it would apply);
// - Split: num_outputs is dropped when it equals the node's output count;
// - Pad without 'axes' and mode 'wrap', Resize with antialias 0, no 'axes',
//   keep_aspect_ratio_policy 'stretch' and no 'half_pixel_symmetric' coordinates, LpPool with
//   ceil_mode 0, AveragePool with dilations 1: the new inputs and attributes are dropped;
// - Cast's, CastLike's and QuantizeLinear's saturate (float8 only) is dropped; QuantizeLinear's
//   and DequantizeLinear's block_size must be 0 (no blocked quantization); QuantizeLinear's
//   output_dtype int8 without a zero point gets an int8 zero point of 0;
// - Gelu (opset 20) becomes its formula in the ops torch.onnx wrote it in before (Div, Erf, Add,
//   Mul; Tanh for approximate 'tanh'), which the backends fuse back;
// - GridSample (opset 20): modes linear and cubic are opset 16's bilinear and bicubic;
// - ScatterElements and ScatterND with reduction 'max' or 'min', DFT of opset 20 and the ops new
//   in opsets 18 to 20 are refused.
// Runs on an unvalidated model: it reads only node names, inputs and attributes, and constant
// int64 vectors through the checked tensor reader. Errors are one line naming the node.
Status lower_newer_opsets(onnx::ModelProto& model, int64_t opset);

}  // namespace hsched
