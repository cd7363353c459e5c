// Attribute decoding shared by check_node (node_ops.cpp) and enqueue_node (node_ops_enqueue.cpp),
// so that what the check accepts is exactly what the enqueue runs. Not a public interface.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "backends/opencl/kernels/node_ops.h"
#include "backends/opencl/kernels/ops_index.h"
#include "backends/opencl/kernels/ops_resize.h"

namespace hsched::opencl::node_detail {

// Conv/ConvTranspose/pool window of `node` for input x and output y (spatial rank 1 or 2):
// kernel_shape (else the weights' dims, `w` may be null for pools), strides, dilations, and
// pads with auto_pad resolved as ONNX says (SAME_UPPER puts the odd pad at the end).
// InvalidArgument naming the attribute when it does not fit. A ConvTranspose's output shape is
// the output's (output_shape and output_padding only size it).
Result<Window> window_of(const Node& node, const Shape& x, const Shape& y, const Shape* w,
                         bool transposed);

// Clip's bounds: inputs 1 and 2 (host constants, opset 11+) or attributes min/max (before);
// absent bounds are -/+FLT_MAX. `constants` holds the host tensors of inputs 1 and 2 (null when
// omitted). InvalidArgument when a bound is not a scalar float.
Result<std::pair<float, float>> clip_bounds(const Node& node,
                                            const std::vector<const Tensor*>& constants);

// Whether `v` is one of the graph's outputs; the node that alone reads `v` (not a graph output),
// its id in `id`, or nullptr.
bool is_graph_output(const Graph& graph, ValueId v);
const Node* only_reader(const Graph& graph, ValueId v, NodeId* id);

// The host tensors of `node`'s inputs [first, first + count) (null when omitted or not a
// constant).
std::vector<const Tensor*> constants_of(const Graph& graph, const Node& node, size_t first,
                                        size_t count);

// The unary op and its alpha/beta for an elementwise activation node (Clip's bounds from
// clip_bounds; Gelu's approximate attribute; LeakyRelu/HardSigmoid defaults).
Result<Activation> unary_of(const Node& node, const std::vector<const Tensor*>& constants);

// Resize (opset 11+) of input `in` to `out`: mode, coordinates, and the scales input (a host
// constant; null or empty when sizes is given) expanded over the `axes` attribute.
Result<ResizeMode> resize_mode_of(const Node& node, const Tensor* scales, const Shape& in);

// QuantizeLinear / DequantizeLinear of data x with a scale of shape `scale`, a zero point of
// shape `zero` (null when omitted) and quantized data of type `packed` (u8 or i8; i32 too for
// DequantizeLinear): the clamp range and the scale's layout (per tensor, or one value per index
// of `axis`). InvalidArgument when the node does not fit.
Result<QuantizeParams> quantize_params(const Node& node, const Shape& x, const Shape& scale,
                                       const Shape* zero, DType packed);

// Sum and Mean, and Max and Min of other than two inputs: the inputs folded into the output in
// turn (Max and Min of two are binary ops).
bool is_variadic(const Node& node);

// Float values of a host tensor (f32 or 8-bit data; f16 not supported) or integers (i64/i32),
// for attributes given as inputs. InvalidArgument on another dtype.
Result<std::vector<float>> float_values(const Tensor& tensor);
Result<std::vector<int64_t>> int_values(const Tensor& tensor);

// DepthToSpace and SpaceToDepth as a Transpose of a rank-6 view of their rank-4 input (the
// output is the transposed view, reshaped). InvalidArgument for a blocksize that does not fit.
struct TransposeView {
  Shape view;
  std::vector<int64_t> perm;
};
Result<TransposeView> depth_space_view(const Node& node, const Shape& x);

// A Slice node's axes over its input of `dims`: attributes before opset 10, else the constant
// inputs 1-4 (`params`: starts, ends, axes, steps; null when omitted), checked against the
// output's dims. InvalidArgument when they do not fit.
Result<std::vector<SliceAxis>> slice_of(const Node& node, int64_t opset,
                                        const std::vector<const Tensor*>& params,
                                        const Shape& dims, const Shape& out);

// The axes a Reduce* node reduces, one flag per axis of its rank-`rank` input: attribute `axes`
// or the constant input (`axes_input`, null when absent); none given: every axis, or none with
// noop_with_empty_axes. InvalidArgument for an axis out of range or given twice.
// Pad (pads, constant_value and axes from inputs 1-3 from opset 11, attributes before; modes
// constant, edge, reflect, wrap) or Tile (repeats, input 1) of x into y: where the input starts
// along each axis, the mode and the fill. `host`: the host tensors of inputs 1-3 (null where
// omitted). InvalidArgument when they do not give y's shape.
struct IndexMapOf {
  std::vector<int64_t> begin;
  PadMode mode = PadMode::kConstant;
  PadFill fill;
};
Result<IndexMapOf> index_map_of(const Node& node, int64_t opset,
                                const std::vector<const Tensor*>& host, const Shape& x,
                                const Shape& y);

// ConstantOfShape's value (attribute `value`, one element; 0.0f when absent) as a fill of its
// dtype; InvalidArgument for another element count.
Result<std::pair<DType, PadFill>> constant_of_shape_value(const Node& node);
// A one-element host tensor as a fill (int32/int64 into `integer`, float or bool into `real`).
Result<PadFill> scalar_fill(const Tensor& tensor);

// GridSample's mode (0 bilinear, 1 nearest, 2 bicubic) and padding (0 zeros, 1 border,
// 2 reflection) from its attributes; nullopt for other values.
std::optional<std::pair<int, int>> grid_sample_mode(const Node& node);

// DFT (opset 17: axis attribute, dft_length input 1): the axis, the length n (dft_length, else
// the axis' size) and the output bins along the axis (n, or n / 2 + 1 onesided), checked
// against y's shape. `length` is input 1's host tensor or null. InvalidArgument otherwise, and
// for onesided with inverse or a complex input.
struct DftOf {
  size_t axis = 0;
  int64_t n = 0, bins = 0;
  bool inverse = false;
};
Result<DftOf> dft_of(const Node& node, int64_t opset, const Tensor* length, const Shape& x,
                     const Shape& y);

// STFT (opset 17): frame_step (input 1), frame_length (input 3, else the window's length, else
// the signal's), onesided (default 1; needs a real signal), checked against y
// [batch, frames, bins, 2]. `step` and `length` are the host tensors of inputs 1 and 3 (null
// where omitted); `window` the window's shape (null without one).
struct StftOf {
  int64_t step = 1, n = 1, bins = 1;
};
Result<StftOf> stft_of(const Node& node, const Tensor* step, const Shape* window,
                       const Tensor* length, const Shape& x, const Shape& y);

// check_node's shared helpers (node_ops_check.cpp): a refusal, a value's dims, whether input i
// is given.
Refusal reject(ReasonCode reason, std::string detail);
const Shape& dims_of(const Graph& graph, ValueId id);
bool has_input(const Node& node, size_t i);
// check_node's rules for GatherElements, ScatterElements/Scatter, GatherND, ScatterND and TopK;
// ConstantOfShape, Range, EyeLike, OneHot, ReverseSequence and LRN; MatMulInteger, ConvInteger,
// QLinearMatMul and QLinearConv (node_ops_check.cpp). nullopt for other ops; a nullopt inside
// for accepted.
std::optional<std::optional<Refusal>> check_gather_scatter(const Graph& graph, const Node& node);
std::optional<std::optional<Refusal>> check_generator(const Graph& graph, const Node& node);
std::optional<std::optional<Refusal>> check_quant(const Graph& graph, const Node& node);

Result<std::vector<bool>> reduce_mask(const Node& node, const Tensor* axes_input, size_t rank);

}  // namespace hsched::opencl::node_detail
