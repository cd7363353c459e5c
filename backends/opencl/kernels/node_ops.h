// The OpenCL backend's node level: which graph nodes it can run (check_node, the backend's
// capability rules) and running one (enqueue_node). The program (program.h) maps a partition's
// nodes onto these; the op layer (ops.h) does the work.
//
// Data: every non-constant value a node reads or writes is float32, bool or 8-bit quantized
// (u8/i8: QuantizeLinear's output, DequantizeLinear's input, the moves between them and the ops
// that choose among their inputs' values) in the graph and held on the device in the OpKernels'
// storage type (fp32, or fp16 through vload_half/vstore_half; bools as 1 and 0, 8-bit data as
// its integer values), or int32/int64, held as such (ops_integer.h: arithmetic, comparisons,
// Where, Trilu, Cast and the views; ArgMax/ArgMin write int64). Inputs the kernels read on the
// host (shapes, axes, constant Gather indices, Split sizes, Resize scales, constant Clip bounds)
// come from Operand::constant: a graph constant, or a tensor the program is given per run
// (host_input_per_run); those of dtypes the device does not hold have no buffer. Threading: as
// ops.h (no shared kernel objects; one queue per thread).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backends/backend.h"
#include "backends/opencl/kernels/ops.h"
#include "backends/opencl/kernels/ops_spatial.h"
#include "graph/graph.h"
#include "hsched/plan.h"

namespace hsched::opencl {

// One input of a node as the program holds it.
struct Operand {
  const cl::Buffer* buffer = nullptr;  // null for an omitted optional input or a non-float constant
  Shape shape;
  // The host tensor: a graph constant, or the run's tensor of a host input (host_input_per_run).
  const Tensor* constant = nullptr;
  DType dtype = DType::kUndefined;  // the graph value's (bool and 8-bit data are held as floats)
};

struct NodeOperands {
  std::vector<Operand> inputs;       // as node.inputs (an omitted input: null buffer, no constant)
  std::vector<cl::Buffer*> outputs;  // as node.outputs (null for an omitted optional output)
  std::vector<Shape> output_shapes;
  // The graph's default-domain opset (Graph::opset): Softmax before 13 flattens to 2-D around
  // its axis. 0 means the latest semantics.
  int64_t opset = 0;
  // One int whose RunError bits (ops.h) the kernels set that check values on the device; the
  // program reads it after the run. Needed by the nodes run_errors_of names only.
  const cl::Buffer* error_flag = nullptr;
};

// nullopt when enqueue_node can run `node` of `graph` (op, dtypes, attributes, static shapes,
// constant inputs where the kernel needs them on the host); the reason otherwise. Pure, cheap.
std::optional<Refusal> check_node(const Graph& graph, const Node& node);

// Whether input `index` of `node` is read on the host and is not a graph constant: the program
// passes each run's tensor, checked when the node is enqueued, and never replays the node's
// kernels. check_node accepts one only where it reaches the device from the host: a dtype the
// device does not hold (no device node makes one) or an input of the graph.
bool host_input_per_run(const Graph& graph, const Node& node, size_t index);

// The RunError bits (ops.h) `node` may set: integer Div and Mod, the gathers and scatters of
// indices given on the device (a Gather's when not constant). 0 for any other node.
cl_int run_errors_of(const Graph& graph, const Node& node);

// The dtypes a value can have on the device: float32, bool held as 1 or 0 (the kernels read a
// condition as storage != 0), and u8/i8 held as their integer values (exact in fp16 storage too);
// the program converts bool and 8-bit tensors at its boundary.
bool held_on_device(DType dtype);

// Conv/MatMul -> activation fusion: the program may fold an activation node into the Conv or
// MatMul before it (whose result only it reads) by calling attach_activation on its node copy;
// enqueue_node then runs the pair as one kernel sequence. fusable_activation says whether (and
// as what) an activation node can be folded: Relu, LeakyRelu, Sigmoid, Tanh, HardSigmoid,
// HardSwish, and Clip with constant (or attribute) bounds. Attributes: kFusedActivationAttr (the
// UnaryOp code), kFusedAlphaAttr, kFusedBetaAttr.
inline constexpr const char* kFusedActivationAttr = "hsched_fused_activation";
inline constexpr const char* kFusedAlphaAttr = "hsched_fused_alpha";
inline constexpr const char* kFusedBetaAttr = "hsched_fused_beta";
std::optional<Activation> fusable_activation(const Graph& graph, const Node& node);
// For tests and benchmarks: a Conv node's int attribute kConvAlgorithmAttr forces a ConvAlgorithm
// (ops_spatial.h) instead of kAuto's choice.
inline constexpr const char* kConvAlgorithmAttr = "hsched_conv_algorithm";
void attach_activation(Node& conv, const Activation& activation);
// MatMul -> Add fusion: the bias `add` puts on every row of `matmul`'s output (its only reader),
// when that is a constant f32 of the output's last dim ([N] or [1, ..., N]) and both operands
// have rank 2 or more; nullopt otherwise.
// The program appends it to its MatMul copy as input 2, which enqueue_node adds in the product's
// kernel.
std::optional<ValueId> fusable_bias(const Graph& graph, const Node& matmul, const Node& add);
// Conv -> Concat fusion: in a Concat over the channels (axis 1, rank 3 or 4) of f32 values, each
// made by a Conv step and read only by the Concat is stored in place: the Conv stores its output
// in the Concat's, attribute kConvStoredInAttr {channels of the Concat's output, its first
// channel}, its node copy's output the Concat's; with every input so, the Concat runs no kernel.
inline constexpr const char* kConvStoredInAttr = "hsched_conv_stored_in";
// Where only some inputs of such a Concat are Conv outputs, the Concat copies the others: its
// node copy has kNoValue for the inputs written in place and each input's channels in
// attribute kConcatChannelsAttr.
inline constexpr const char* kConcatChannelsAttr = "hsched_concat_channels";
// Where such a Concat copies one input alone, made before the last of those Convs, that Conv
// copies it (ShuffleNet's branch passed through): the input (or what its Slice reads) as the
// Conv's input kCarriedInput, the copy (RowCopy's eight fields, concat_copies) as attribute
// kConvCarriesAttr; the Concat runs no kernel, and the implicit GEMM's launch makes the copy too.
inline constexpr size_t kCarriedInput = 7;
inline constexpr const char* kConvCarriesAttr = "hsched_conv_carries";
// Slice -> Conv fusion: a Conv (not transposed) whose input 0, f32 [N, C, ...], is a Slice of
// consecutive channels (axis 1, step 1, constant parameters, no other axis cut) of x that only
// this Conv reads (ShuffleNet's channel split): x, its channels and the first one read, and the
// Slice. The program reads x instead, attribute kConvReadFromAttr {channels of x, first}.
inline constexpr const char* kConvReadFromAttr = "hsched_conv_read_from";
struct SlicedConvInput {
  ValueId x = kNoValue;
  int64_t channels = 0, first = 0;
  NodeId slice = kNoNode;
};
std::optional<SlicedConvInput> fusable_input_slice(const Graph& graph, const Node& conv);
// The same Slice making `sliced`, read by one node alone (a Concat's input: the Concat copies it
// from x in place, attribute kConcatReadFromAttr {x's channels, first, count} per input, zeros
// for inputs read as they are).
std::optional<SlicedConvInput> fusable_channel_slice(const Graph& graph, ValueId sliced);
inline constexpr const char* kConcatReadFromAttr = "hsched_concat_read_from";
// Concat -> channel shuffle fusion: a Concat over the channels of G inputs of C / G channels each
// (f32, static, rank 3 or 4) whose output only a Reshape to [N, G, C / G, ...] reads, whose
// output only a Transpose swapping those two axes reads, whose output only a Reshape back to
// [N, C, ...] reads (ShuffleNet's channel shuffle): the last Reshape's output and the three
// nodes. The program's Concat writes that output, input i's channel c as channel c * G + i
// (attribute kConcatShuffleAttr G; Convs writing in place get a third kConvStoredInAttr entry,
// their step G).
struct ChannelShuffle {
  int64_t groups = 0;
  ValueId y = kNoValue;
  std::vector<NodeId> nodes;
};
std::optional<ChannelShuffle> fusable_channel_shuffle(const Graph& graph, const Node& concat);
inline constexpr const char* kConcatShuffleAttr = "hsched_concat_shuffle";
// Mul -> Conv fusion: the Mul making a Conv's input 0 (only that Conv reads it) multiplies an f32
// x [N, C, H, W] (or [N, C, W]) by factors per channel of shape [N or 1, C, 1, 1] (a
// squeeze-and-excitation gate): x and the factors. The program reads x instead, the factors as
// input kInputScaleInput (4; the bias and residual slots kNoValue where absent).
inline constexpr size_t kInputScaleInput = 4;
struct ScaledConvInput {
  ValueId x = kNoValue;
  ValueId factors = kNoValue;
  NodeId mul = kNoNode;
};
std::optional<ScaledConvInput> fusable_input_scale(const Graph& graph, const Node& conv);
// Conv -> Mul fusion: `mul`, the only reader of a Conv's f32 `result` (before any residual or
// activation), multiplying it by per-output-channel f32 constants ([C, 1, ...] or [1, C, 1, ...]:
// ConvNeXt's layer scale) where the Conv's weights and bias (if any) are f32 constants: the
// factors. The program sets them as the Conv's input kOutputScaleInput (the slots between
// kNoValue where absent); enqueue_node scales the weights and bias by them on the host, once
// (derived_constant), so every convolution kernel runs unchanged.
inline constexpr size_t kOutputScaleInput = 6;
std::optional<ValueId> fusable_output_scale(const Graph& graph, const Node& conv, ValueId result,
                                            const Node& mul);
// DequantizeLinear -> Conv fusion (the QDQ format's convolution): a Conv whose input 0 is 8-bit x
// dequantized per tensor and whose weights are 8-bit constants dequantized with zero points 0,
// per tensor or per output channel (axis 0), every parameter a constant: x, its scale and zero
// point, the weights' integers and scales (weight_scales of them), the DequantizeLinear nodes.
// The program's Conv reads x and the weights' integers (attach_quantized_conv: attributes
// kConvInputZeroAttr and kConvInputScaleAttr, the scales as input kWeightScaleInput), sums
// (x - zero) * w exactly and scales the sum (ConvParams::quantized); a DequantizeLinear only such
// Convs read runs no kernel. `integer_bias` (attribute kConvIntegerBiasAttr): the bias is absent
// or int32 constants below 2^20 dequantized with zero point 0 and scale x_scale * w_scale (the
// QDQ format's bias), so that its integers join the sum (ConvParams::QuantizedOperands).
inline constexpr size_t kWeightScaleInput = 5;
inline constexpr const char* kConvInputZeroAttr = "hsched_conv_x_zero";
inline constexpr const char* kConvInputScaleAttr = "hsched_conv_x_scale";
inline constexpr const char* kConvIntegerBiasAttr = "hsched_conv_integer_bias";
struct QuantizedConvOperands {
  ValueId x = kNoValue, w = kNoValue, w_scale = kNoValue;
  float x_scale = 1.0f;
  int64_t x_zero = 0, weight_scales = 1;
  bool integer_bias = false;
  NodeId x_dequantize = kNoNode, w_dequantize = kNoNode;
};
std::optional<QuantizedConvOperands> fusable_quantized_conv(const Graph& graph, const Node& conv);
void attach_quantized_conv(Node& conv, const QuantizedConvOperands& q);
// DequantizeLinear -> MatMul fusion: a MatMul (a tiled product, tiled_matmul), or a Gemm the
// program runs as one (gemm_as_matmul), of 8-bit a dequantized per tensor by 8-bit b dequantized
// per tensor, or a 2-D constant b with zero points 0 and scales per column (a MatMul's axis 1, a
// transposed Gemm B's axis 0), every parameter a constant. The program's MatMul reads a and b
// (attach_quantized_matmul: attribute kMatMulQuantizedAttr {a_scale, a_zero, b_scale, b_zero},
// b_scale 1 where per column, those scales as input kWeightScaleInput) and sums (a - a_zero) x
// (b - b_zero) (MatMulFusion's quantized operands).
inline constexpr const char* kMatMulQuantizedAttr = "hsched_matmul_quantized";
struct QuantizedMatMulOperands {
  ValueId a = kNoValue, b = kNoValue, b_scales = kNoValue;  // b_scales: per column, else none
  std::vector<float> params;                                // kMatMulQuantizedAttr's
  NodeId a_dequantize = kNoNode, b_dequantize = kNoNode;
};
std::optional<QuantizedMatMulOperands> fusable_quantized_matmul(const Graph& graph,
                                                                const Node& matmul);
void attach_quantized_matmul(Node& matmul, const QuantizedMatMulOperands& q);
// A Gemm as the MatMul step computing it: A [M, K] (transA 0) by B [K, N], or [N, K] with transB
// read through a transposed view (kMatMulViewAttrs[1]), C absent or one row of N added with beta
// 1: a MatMul of inputs {A, B, C} with alpha as kMatMulAlphaAttr. nullopt for any other Gemm.
std::optional<Node> gemm_as_matmul(const Graph& graph, const Node& gemm);
// Conv/MatMul -> QuantizeLinear fusion: `quantize`, the only reader of a Conv's or MatMul's f32
// result (after its epilogue), to u8 or i8 per tensor by constants: its scale, zero point and
// range. The product stores the 8-bit integers (attach_output_quantization: attributes
// kQuantizeOutputAttr {zero, lo, hi} and kQuantizeOutputScaleAttr).
inline constexpr const char* kQuantizeOutputAttr = "hsched_quantize_y";
inline constexpr const char* kQuantizeOutputScaleAttr = "hsched_quantize_y_scale";
struct QuantizedOutput {
  float scale = 1.0f;
  int64_t zero = 0, lo = 0, hi = 255;
};
std::optional<QuantizedOutput> fusable_output_quantization(const Graph& graph,
                                                           const Node& quantize);
void attach_output_quantization(Node& product, const QuantizedOutput& q);
// Conv -> QuantizeLinear -> DequantizeLinear -> activation -> QuantizeLinear fusion: a Conv's
// quantized result `q` read only by a DequantizeLinear that only a fusable activation reads,
// which only a QuantizeLinear reads (the activation between them as fusable_qdq_elementwise
// runs it): the activation's node, its QuantizeLinear and output, and the parameters
// {op, alpha, beta, x_scale, x_zero, y_scale, y_zero, lo, hi} the Conv takes as attribute
// kConvRequantizedActivationAttr (ConvParams::requantized_activation: it stores that
// QuantizeLinear's integers).
inline constexpr const char* kConvRequantizedActivationAttr = "hsched_conv_requantized_activation";
struct RequantizedStep {
  NodeId node = kNoNode, quantization = kNoNode;
  ValueId output = kNoValue, bias = kNoValue;  // bias: fusable_requantized_bias's
  ValueId residual = kNoValue;                 // fusable_requantized_residual's
  std::vector<float> params;
};
std::optional<RequantizedStep> fusable_requantized_activation(const Graph& graph, ValueId q);
// MatMul -> QuantizeLinear -> DequantizeLinear -> bias Add -> QuantizeLinear fusion (the QDQ
// format's Linear: the bias quantized apart): a MatMul's quantized result `q` of N columns read
// only by a DequantizeLinear that only an Add of a row of N (f32, or 8-bit dequantized) reads,
// which only a QuantizeLinear reads: the Add's node, its QuantizeLinear, output and bias row, and
// {x_scale, x_zero, y_scale, y_zero, lo, hi, row_scale, row_zero, product_side, one_type}
// (row_scale 0: f32; product_side 0 or 1: the product's place among the Add's inputs; one_type
// 1: both operands and the sum 8-bit of one type, ONNX Runtime's QLinearAdd) the MatMul takes as
// attribute kMatMulLateBiasAttr with the row as its bias (MatMulFusion::late_bias).
inline constexpr const char* kMatMulLateBiasAttr = "hsched_matmul_late_bias";
std::optional<RequantizedStep> fusable_requantized_bias(const Graph& graph, ValueId q);
// The same for an Add of a tensor of the result's shape (or one [M, N] for every batch: an
// attention mask), 8-bit dequantized per tensor (a residual connection after a quantized Linear,
// a mask after attention's scores): the Add's node, its QuantizeLinear, output and
// that 8-bit residual, and {x_scale, x_zero, y_scale, y_zero, lo, hi, residual_scale,
// residual_zero, product_side, one_type} the MatMul takes as attribute kMatMulLateResidualAttr with
// the residual as its input kResidualInput (MatMulFusion::late_residual), after any late bias.
inline constexpr const char* kMatMulLateResidualAttr = "hsched_matmul_late_residual";
std::optional<RequantizedStep> fusable_requantized_residual(const Graph& graph, ValueId q);
// DequantizeLinear -> move -> QuantizeLinear fusion: a node that only moves or selects values
// (Reshape, Flatten, Squeeze, Unsqueeze, Identity, Transpose, Split, Gather's data, MaxPool)
// whose input 0 is 8-bit x dequantized per tensor by constants and each of whose outputs only a
// QuantizeLinear of the same dtype, scale and zero point reads: the same values as the node run
// on x. The node's copy reading x and writing the QuantizeLinears' outputs, the DequantizeLinear
// and the QuantizeLinears.
struct QuantizedMove {
  Node op;
  NodeId dequantize = kNoNode;
  std::vector<NodeId> quantizations;
};
std::optional<QuantizedMove> fusable_quantized_move(const Graph& graph, NodeId id);
// DequantizeLinear -> op -> QuantizeLinear fusion: a binary Add, Sub, Mul or Div of f32 values, a
// LayerNormalization or GlobalAveragePool of an f32 input, a Softmax or LogSoftmax that runs by
// rows (softmax_by_rows), or a Concat (every input and its output so), each input (a row op's
// x) perhaps 8-bit x dequantized per tensor by constants (not a constant's: that runs once),
// its output perhaps read only by a QuantizeLinear per tensor by constants, one of them at
// least: the node's copy reading those x and writing the QuantizeLinear's output, attribute
// kQdqBinaryAttr {a_scale, a_zero, b_scale, b_zero, y_scale, y_zero, lo, hi}
// (enqueue_qdq_binary) or kQdqRowAttr {x_scale, x_zero, y_scale, y_zero, lo, hi} (ops.h
// QdqRow), a scale 0 where not quantized; the DequantizeLinear nodes and the QuantizeLinear.
inline constexpr const char* kQdqBinaryAttr = "hsched_qdq_binary";
inline constexpr const char* kQdqRowAttr = "hsched_qdq_row";
// On a quantized Softmax of one 8-bit type over the last axis: y's scale, for ONNX Runtime's
// QLinearSoftmax (node_fusion_quant.cpp qlinear_softmax_scale).
inline constexpr const char* kQLinearSoftmaxAttr = "hsched_qlinear_softmax";
// The same for a float activation (Erf, Sigmoid, Tanh, Exp, Log, Sqrt, Gelu, ...: the op codes of
// enqueue_unary), its parameters in kQdqUnaryAttr as in kQdqRowAttr (unary_q).
inline constexpr const char* kQdqUnaryAttr = "hsched_qdq_unary";
// The same for a Concat, {scale, zero} per input then {y_scale, y_zero, lo, hi} in kQdqConcatAttr:
// each input's copy requantized (copy_rows).
inline constexpr const char* kQdqConcatAttr = "hsched_qdq_concat";
struct QdqFusion {
  Node op;
  std::vector<NodeId> dequantizations;
  std::optional<NodeId> quantization;
};
std::optional<QdqFusion> fusable_qdq_elementwise(const Graph& graph, NodeId id);
// A chain of elementwise ops on one 8-bit tensor: non-constant 8-bit `x` through its
// DequantizeLinears (per tensor, constants: "x"), then `min_ops` or more activations (as
// fusable_qdq_elementwise's), Add, Sub, Mul, Div of f32 values of x's shape or, first, a NaN
// guard Where(IsNaN(v), c, v) (kNanTo; the IsNaN read by it alone), each reading the
// op before it (or x first), x or a constant of one value, a QuantizeLinear and DequantizeLinear
// of the same parameters perhaps between two, each value read by the next op alone, ending in a
// QuantizeLinear (a GELU or SiLU as ONNX Runtime's quantizer writes it): one kQdqChainOp step
// in its first op's place, reading x and writing that QuantizeLinear's output, attribute
// kQdqChainAttr {x_scale, x_zero, y_scale, y_zero, lo, hi, count, 0} then {kind, op, a, b, c,
// p0, p1, p2} per op as kernel_sources.h's QdqChain, at most kQdqChainOps; it absorbs the
// chain's other nodes and reads x in place of the DequantizeLinears of x its nodes read
// ({DequantizeLinear, reader} in `reads`; `alone`: x is read only by DequantizeLinears that only
// the chain reads). The longest such chain. A MatMul whose quantized result is x, which the
// chain alone reads, runs it in its epilogue (kQdqChainAttr on the MatMul: MatMulFusion::chain),
// one op or more.
inline constexpr const char* kQdqChainOp = "hsched.QdqChain";
inline constexpr const char* kQdqChainAttr = "hsched_qdq_chain";
struct QdqChainFusion {
  NodeId first = kNoNode;
  Node op;
  std::vector<NodeId> absorbed;
  std::vector<std::pair<NodeId, NodeId>> reads;
  bool alone = false;
};
std::optional<QdqChainFusion> fusable_qdq_chain(const Graph& graph, ValueId x, size_t min_ops = 2);
// Conv/MatMul -> Add fusion: `add`, the only reader of a Conv's or MatMul's f32 result `product`
// (after its bias), adding a tensor of the same shape and dtype (a residual connection) or, with
// `shared` (a MatMul), one [M, N] for every batch of the product (an attention mask): that
// tensor. The program sets it as its node copy's input kResidualInput (input 2, the bias, then
// kNoValue where absent) when it is made before the product (or can be: hoisted), and the
// kernels add it after the bias, before a fused activation.
inline constexpr size_t kResidualInput = 3;
std::optional<ValueId> fusable_residual(const Graph& graph, ValueId product, const Node& add,
                                        bool shared = false);
// MatMul <- Mul fusion: input `i` of `matmul` made by a Mul of a value by a one-element f32
// constant that only this MatMul reads (attention's q * scale): that value and the factor. The
// program reads the value instead and multiplies the product by the factor
// (kMatMulAlphaAttr, the product of both inputs' factors).
inline constexpr const char* kMatMulAlphaAttr = "hsched_matmul_alpha";
// MatMul <- views fusion: input `i` of `matmul` (`operand`, what it reads once a scale is fused:
// fusable_scale's value) made from `base` by Transposes, Splits and view ops that change only
// axes of length 1, each value between read by the next alone (attention's heads split off, q,
// k and v split apart, K transposed), when the MatMul can read it in place (operand_strides,
// tiled_matmul in ops.h; static shapes, f32): `base`, the view and those nodes, at least one a
// Transpose or Split. With `through_splits` false the walk stops at a Split's output. The
// program reads `base` through the view (attribute kMatMulViewAttrs[i], encode_view) when every
// output of each Split on the way is read so too; nodes reading a value the program marks
// absorbed (already fused elsewhere) end the walk through `absorbed`.
inline constexpr const char* kMatMulViewAttrs[2] = {"hsched_matmul_a_view", "hsched_matmul_b_view"};
struct OperandView {
  ValueId base = kNoValue;
  StridedView view;
  std::vector<NodeId> through;  // from the MatMul's side
};
std::optional<OperandView> fusable_operand_view(const Graph& graph, const Node& matmul, size_t i,
                                                ValueId operand, bool through_splits,
                                                const std::vector<bool>& absorbed);
// The same for a quantized MatMul's 8-bit operand (fusable_quantized_matmul's a or b): made from
// 8-bit `base` by quantized moves (fusable_quantized_move: a Transpose, Split or view op between
// a DequantizeLinear and QuantizeLinears of the same parameters, so the integers move unchanged),
// each 8-bit value between read by one DequantizeLinear that only the next node reads. `through`
// lists the moves.
std::optional<OperandView> fusable_quantized_operand_view(const Graph& graph, const Node& matmul,
                                                          size_t i, ValueId operand,
                                                          bool through_splits,
                                                          const std::vector<bool>& absorbed);
// MatMul <- quantized chain fusion: a quantized MatMul's 8-bit operand `i` the output of a chain
// of ops on 8-bit x (fusable_qdq_chain, one op or more: attention's q or k scaled and quantized
// again) that x's DequantizeLinears feed alone, the operand read by one DequantizeLinear only
// the MatMul reads. The program reads x (or its view) through the chain: attribute
// kMatMulOperandChainAttrs[i], kQdqChainAttr's layout, its eighth float x's lowest integer (0 or
// -128: the kernel tabulates the chain's 256 results; MatMulFusion::a_chain, b_chain).
inline constexpr const char* kMatMulOperandChainAttrs[2] = {"hsched_matmul_a_chain",
                                                            "hsched_matmul_b_chain"};
std::optional<QdqChainFusion> fusable_operand_chain(const Graph& graph, const Node& matmul,
                                                    ValueId operand);
// Whether `node` leaves its first input's bytes as they are though its op is no view op, so its
// step aliases that input (a view step): a Cast to the input's own dtype, an Expand to the
// input's own shape, a Gather along an axis of n elements of constant indices that are 0, 1, ...,
// n - 1 in order (of any shape: the data reshaped). A transformer's mask preamble has all three.
bool leaves_input_as_is(const Graph& graph, const Node& node);
// A view as an attribute's ints (offset, dims, strides) and back; nullopt for a malformed one.
std::vector<int64_t> encode_view(const StridedView& view);
std::optional<StridedView> decode_view(const std::vector<int64_t>& ints);
// Sibling MatMuls (attention's Q, K and V projections): 2 to kMaxGroupedProducts MatMul steps
// reading one A (the same view and factor), each by a constant B of one 2-D shape and with its
// bias (all or none), storing dense results: one step kMatMulGroupOp, inputs A then each
// product's B and bias (kNoValue without), outputs the products', attributes a MatMul's
// kMatMulViewAttrs[0] and kMatMulAlphaAttr. enqueue_node runs it as enqueue_matmul_group.
inline constexpr const char* kMatMulGroupOp = "hsched.MatMulGroup";
// Attention (merge_attention, step_plan.h): a MatMul step of Q by K (their views, a factor, a
// mask as its residual), the Softmax over the last axis that alone reads it (its NaN guard), and
// the MatMul of that by V that alone reads the Softmax (V's view, a transposed result): one step
// kAttentionOp, inputs Q, K, V and the mask (kNoValue without), the last MatMul's output,
// attributes kAttentionViewAttrs (Q's, K's, V's, each where there is one), kMatMulAlphaAttr (the
// first product's), kAttentionOutAlphaAttr (the second's), kMatMulResultPermAttr, kNanToAttr.
// enqueue_node runs it as enqueue_attention.
inline constexpr const char* kAttentionOp = "hsched.Attention";
inline constexpr const char* kAttentionViewAttrs[3] = {
    "hsched_attention_q_view", "hsched_attention_k_view", "hsched_attention_v_view"};
inline constexpr const char* kAttentionOutAlphaAttr = "hsched_attention_out_alpha";
// LayerNormalization -> MatMul (merge_layer_norm, step_plan.h): a LayerNormalization step over
// the last axis whose output only a MatMul step reads, as its A, dense and unquantized, in a
// tiled product (tiled_matmul): the MatMul reads the LayerNormalization's input, its scale and
// bias as inputs kNormScaleInput and kNormBiasInput (kNoValue without a bias; kNoValue fills the
// inputs between), its epsilon as attribute kMatMulNormAttr, and normalizes A's rows as it loads
// them (MatMulFusion::norm_scale). A quantized LayerNormalization (kQdqRowAttr: 8-bit in and out)
// merges so into a quantized MatMul, its QdqRow as attribute kMatMulNormQdqAttr
// (MatMulFusion::norm_q): A's integers dequantized, normalized and quantized again as it loads
// them, the row statistics summed in the LayerNormalization kernel's order (the same integers).
inline constexpr size_t kNormScaleInput = 6;
inline constexpr size_t kNormBiasInput = 7;
inline constexpr const char* kMatMulNormAttr = "hsched_matmul_norm_epsilon";
inline constexpr const char* kMatMulNormQdqAttr = "hsched_matmul_norm_qdq";
// Squeeze-and-excitation (merge_squeeze_excitation, step_plan.h): a Conv step of a pooled
// [N, C, 1, 1] by constant f32 weights [mid, C, 1, 1] (its bias, its activation), whose result only
// a second such Conv step reads (weights [c_out, mid, 1, 1], its bias and activation), within
// kMaxExcitedChannels and kMaxExcitationHidden: one step kSqueezeExcitationOp, inputs the pooled
// means, w1, b1, w2, b2 (kNoValue for an absent bias), the second's output, the second's
// activation as attach_activation's attributes, the first's as kInnerActivationAttrs.
// enqueue_node runs it as enqueue_squeeze_excitation.
inline constexpr const char* kSqueezeExcitationOp = "hsched.SqueezeExcitation";
// Two Convs of one input storing their outputs in one Concat's (kConvStoredInAttr), 2-D, group 1,
// each with a bias or none and the same activation (a fire module's expand Convs): one step
// kConvPairOp, inputs {x, first's weights, its bias, second's weights, its bias}, the second's
// attributes, and the first's window and first channel as kConvPairFirstAttr {kernel (2), strides
// (2), dilations (2), leading pads (2), first channel}; enqueue_node runs enqueue_conv_pair.
inline constexpr const char* kConvPairOp = "hsched.ConvPair";
inline constexpr const char* kConvPairFirstAttr = "hsched_conv_pair_first";
inline constexpr const char* kInnerActivationAttrs[3] = {"hsched_inner_activation",
                                                         "hsched_inner_alpha", "hsched_inner_beta"};
// MatMul -> Transpose fusion: `transpose`, the only reader of the MatMul's f32 `result` (after any
// bias and activation, no residual), when the MatMul can store its result so permuted
// (transposed_result, tiled_matmul): its permutation, which the program puts in attribute
// kMatMulResultPermAttr, the Transpose's output becoming the MatMul's.
inline constexpr const char* kMatMulResultPermAttr = "hsched_matmul_result_perm";
std::optional<std::vector<int64_t>> fusable_result_transpose(const Graph& graph, const Node& matmul,
                                                             ValueId result, const Node& transpose);
// A Transpose's permutation of an input of rank `rank` (ONNX's default, the axes reversed, when
// the attribute is absent).
std::vector<int64_t> transpose_perm(const Node& transpose, size_t rank);
struct ScaledInput {
  ValueId value = kNoValue;
  NodeId mul = kNoNode;
  float factor = 1.0f;
};
std::optional<ScaledInput> fusable_scale(const Graph& graph, const Node& matmul, size_t i);
// MatMul -> Mul fusion: `node`, the only reader of a MatMul's f32 `result`, multiplying it by a
// one-element f32 constant, or dividing it by a non-zero one (attention's scores scaled after
// the product): the factor, which the program multiplies into kMatMulAlphaAttr.
std::optional<float> fusable_result_scale(const Graph& graph, ValueId result, const Node& node);
// An activation exported as several nodes, found from its anchor `id`, every value between read
// only by the chain: an erf GELU around its Erf (x / sqrt(2) or x * 1/sqrt(2) -> Erf -> + 1,
// times x and 0.5 in any order) and a SiLU from its Sigmoid (x * Sigmoid(x)). The program runs it
// as one unary step (`op_type`: "Gelu" or kSiluOp), or as the epilogue of the Conv that makes x.
// `last` is the chain's final node (its output the activation's), `nodes` all of it.
inline constexpr const char* kSiluOp = "hsched.Silu";
struct ActivationChain {
  ValueId x = kNoValue;
  NodeId last = kNoNode;
  std::vector<NodeId> nodes;
  UnaryOp op = UnaryOp::kGelu;
  const char* op_type = "Gelu";
};
std::optional<ActivationChain> activation_chain(const Graph& graph, NodeId id);
// Transpose(0, 2, 3, 1) -> LayerNormalization(last axis) -> Transpose(0, 3, 1, 2) around the
// LayerNormalization `id` (ConvNeXt's channels-first LayerNorm), every value between read only by
// the chain: one kChannelLayerNormOp step (inputs x [N, C, H, W], scale, bias; attribute
// epsilon) in the LayerNormalization's place, the two Transposes absorbed.
inline constexpr const char* kChannelLayerNormOp = "hsched.ChannelLayerNorm";
struct FusedNode {
  Node op;
  std::vector<NodeId> absorbed;
};
std::optional<FusedNode> channel_layer_norm(const Graph& graph, NodeId id);
// InstanceNormalization `id` over groups, reshaped back to [N, C, spatial...] and multiplied by
// (then added to) per-channel f32 constants ([C, 1, ...] or [1, C, 1, ...]; GroupNorm as
// exported), then at most one activation (a node or a chain: a SiLU), every value between read
// by the next alone: the node with inputs 3 and 4 gamma and beta (kNoValue where absent) and
// attribute kNormChannelsAttr = {C, spatial size} in its place, writing the last node's output,
// the activation attached (attach_activation), the rest absorbed.
inline constexpr const char* kNormChannelsAttr = "hsched_norm_channels";
std::optional<FusedNode> group_norm_epilogue(const Graph& graph, NodeId id);
// Softmax or LogSoftmax `id` whose result only an IsNaN and a Where(IsNaN's, c, result) read, c a
// one-element f32 constant (PyTorch's exported guard of fully masked attention rows): the node
// with attribute kNanToAttr = c in its place, writing the Where's output, the two absorbed.
inline constexpr const char* kNanToAttr = "hsched_nan_to";
std::optional<FusedNode> softmax_nan_guard(const Graph& graph, NodeId id);

// Enqueues `node` after `wait` and returns the event of its last command. `node` must have passed
// check_node. Errors: InvalidArgument for shapes the kernels cannot take; the op layer's.
Result<cl::Event> enqueue_node(const OpKernels& ops, cl::CommandQueue& queue, const Node& node,
                               const NodeOperands& operands, const Events& wait);

}  // namespace hsched::opencl
