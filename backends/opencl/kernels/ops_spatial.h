// The op layer's spatial ops (the program of kernel_sources_conv.h and kernel_sources_spatial.h):
// Conv and ConvTranspose, MaxPool/AveragePool, InstanceNormalization, Resize, Concat, Split,
// Gather, Transpose, Slice and the Reduce* ops.
// Conventions as ops.h: static shapes in elements, dense row-major buffers in the OpKernels'
// storage type, the event of the last command returned, in-order queues, no reference kept to
// buffers after returning.
//
// Spatial ops take NCHW (2-D) or NCW (1-D) tensors; output shapes are given by the caller (the
// graph's shape inference), and the kernels read only in-bounds input, so a window reaching past
// the input (padding, ceil_mode) reads zeros (Conv) or nothing (pools).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "backends/opencl/kernels/ops.h"
#include "graph/slice_semantics.h"

namespace hsched::opencl {

// Window geometry along the 1 or 2 spatial axes. pads_begin are ONNX's leading pads (auto_pad
// already resolved by the caller); the trailing ones follow from the output shape, except
// pads_end, which only AveragePool's count_include_pad divisor reads.
struct Window {
  std::vector<int64_t> kernel;
  std::vector<int64_t> strides;     // default 1s when empty
  std::vector<int64_t> dilations;   // default 1s when empty
  std::vector<int64_t> pads_begin;  // default 0s when empty
  std::vector<int64_t> pads_end;    // default 0s when empty
};

// A copy of rows, as a Concat copies an input into its output (kConvSource's RowCopy): element i
// of [count / inner, inner] read from x at (i / inner) * x_inner + x_offset + i % inner, stored
// at (i / inner) * y_inner + offset + (i % inner) / plane * y_step + (i % inner) % plane.
struct RowCopy {
  cl_int x_inner = 0, x_offset = 0, inner = 0, y_inner = 0, offset = 0, plane = 0, y_step = 0;
  cl_int count = 0;
};

// How enqueue_conv computes a convolution. kAuto picks by shape (see enqueue_conv); the others
// are for tests and benchmarks. kImplicitGemm and kIm2colGemm need group 1; kWinograd what
// conv_winograd and enqueue_conv say.
enum class ConvAlgorithm { kAuto, kImplicitGemm, kIm2colGemm, kDirect, kRows, kWinograd };

struct ConvParams {
  Window window;
  int64_t group = 1;
  std::optional<Activation> activation;            // Conv only
  ConvAlgorithm algorithm = ConvAlgorithm::kAuto;  // Conv only
  // Conv only: a tensor of y's shape added after the bias, before the activation (a residual
  // Add fused into the Conv).
  const cl::Buffer* residual = nullptr;
  // Conv only: y's buffer holds {channels, first}: output channel c goes to channel first + c *
  // stored_step of a tensor of y's shape but `channels` channels (a Concat's output, written in
  // place; a stored_step of G where a channel shuffle of G groups follows the Concat).
  std::optional<std::pair<int64_t, int64_t>> stored_in;
  int64_t stored_step = 1;
  // Conv only: x's channels are multiplied by these factors as the Conv reads them ([C], or [N, C]
  // with input_scale_per_batch): a Mul by a [N, C, 1, 1] tensor fused in.
  const cl::Buffer* input_scale = nullptr;
  bool input_scale_per_batch = false;
  // Conv only: x's buffer holds {channels, first}: the input is channels first.. of a tensor of
  // x's shape but `channels` channels (a Slice over the channels, read in place).
  std::optional<std::pair<int64_t, int64_t>> read_from;
  // Conv only: x and w hold 8-bit integers (a DequantizeLinear of x per tensor and one of
  // constant weights with zero points 0 fused in): the Conv sums (x - x_zero) * w and multiplies
  // the sum by x_scale and the output channel's weight scale (weight_scales: 1 or OC values).
  // With integer_bias the bias holds integers times x_scale * w_scale (or is absent): with a
  // quantized result and no residual or activation but a Relu the output range clamps, the
  // kernels requantize as ONNX Runtime's QLinearConv does, (sum + the bias's integers) times one
  // multiplier (x_scale * w_scale) / y_scale, rounded once.
  struct QuantizedOperands {
    float x_scale = 1.0f;
    int64_t x_zero = 0;
    const cl::Buffer* weight_scale = nullptr;
    int64_t weight_scales = 1;
    bool integer_bias = false;
  };
  std::optional<QuantizedOperands> quantized;
  // Conv only: y holds QuantizeLinear's integers of the result, clamp(rint(v / scale) + zero, lo,
  // hi) (a QuantizeLinear fused in).
  struct QuantizedOutput {
    float scale = 1.0f;
    int64_t zero = 0, lo = 0, hi = 255;
  };
  std::optional<QuantizedOutput> quantize_output;
  // Conv only, with quantize_output: y holds QdqRow's quantization of `activation` of its
  // dequantization of those integers (a DequantizeLinear -> activation -> QuantizeLinear that
  // alone reads the Conv's quantized result, fused in).
  struct RequantizedActivation {
    Activation activation;
    QdqRow qdq;
  };
  std::optional<RequantizedActivation> requantized_activation;
  // Conv only, with quantize_output and chain.count > 0: y holds the chain's integers of those
  // (after requantized_activation's, where it has one): the chain of elementwise ops that alone
  // reads the Conv's quantized result, fused in (a quantized SiLU or GELU).
  QdqChain chain{};
  // Conv only: the weights' fp32 values on the host ([OC, C / group, KH, KW]) where they are a
  // graph constant, for kWinograd, which transforms them there (once per queue and weights).
  const float* weights_on_host = nullptr;
  // Conv only: a copy into y's buffer made with the Conv (a Concat's input copied into the output
  // the Conv writes part of): in the Conv's launch where its kernel takes one, else after it.
  struct CarriedCopy {
    const cl::Buffer* x = nullptr;
    int64_t x_elements = 0;
    RowCopy copy;
  };
  std::optional<CarriedCopy> carried;
};

// Conv: x [N, C, (H,) W], w [OC, C / group, (KH,) KW], bias [OC] (may be null), y [N, OC, ...].
// group == 1 runs as a GEMM of the weights [OC, K] by the im2col matrix [K, N * P]:
// kImplicitGemm (kAuto's choice below kIm2colFlops) gathers that matrix inside one tiled kernel
// with the bias, residual and activation fused (split over K, plus a reduction kernel, when the
// output has too few tiles to fill the device); kIm2colGemm stores it and runs CLBlast's fp32 GEMM
// and an epilogue (a 1x1, stride-1, unpadded conv of batch 1 needs no im2col). Other groups run a
// direct kernel, as do Convs of at most 4 output channels (conv_direct_by_channels). A Conv of
// few outputs, each a long reduction (conv_by_rows: a squeeze-and-excitation block's), runs
// kRows, a work group per output, whatever its group. A 3x3 Conv that conv_winograd accepts runs
// kWinograd where its weights are on the host (weights_on_host) and it is neither quantized nor
// quantizing: Winograd's F(2x2, 3x3), the input's 4x4 tiles transformed (in the storage type),
// 16 products of the transformed weights by them (matmul_tiled, 2.25 times fewer multiply-adds
// than the implicit GEMM), the products transformed back with the bias, residual and activation
// fused; three launches. Errors:
// InvalidArgument for inconsistent shapes or group.
Result<cl::Event> enqueue_conv(const OpKernels& ops, cl::CommandQueue& queue, const cl::Buffer& x,
                               const Shape& x_shape, const cl::Buffer& w, const Shape& w_shape,
                               const cl::Buffer* bias, const ConvParams& params, cl::Buffer& y,
                               const Shape& y_shape, const Events& wait = {});

// Two Convs of x writing one tensor (a fire module's expand Convs storing their Concat in place:
// ConvParams::stored_in) in one launch (conv_gemm_pair_*: work-group dimension 2 picks the Conv,
// K whole): each of group 1 and no fused operand but a bias, one output size, one activation.
struct ConvPart {
  const cl::Buffer* w = nullptr;
  Shape w_shape;
  const cl::Buffer* bias = nullptr;  // may be null
  ConvParams params;
  Shape y_shape;  // the Conv's own output
};
Result<cl::Event> enqueue_conv_pair(const OpKernels& ops, cl::CommandQueue& queue,
                                    const cl::Buffer& x, const Shape& x_shape,
                                    const ConvPart& first, const ConvPart& second, cl::Buffer& y,
                                    const Events& wait = {});

// What enqueue_conv's kAuto choice computes for a group-1 Conv of `out_channels` outputs at
// `pixels` positions (N x OH x OW), each reducing `reduction` = C x KH x KW inputs (`pointwise`:
// a 1x1 kernel, tiled for its own target of work groups). With the
// implicit GEMM its tiles' padding counts (rows and columns to the tile's 16, 32 or 64, K to steps
// of 16), so that channels short of a tile cost a whole tile, and each split of K computes its
// own partial outputs; above kIm2colFlops and for the direct kernel's few channels, 2 x the
// multiply-adds over the outputs (CLBlast's tiling is its own). The cost model measures a GPU's
// Conv time against this.
struct ConvExecution {
  double flops = 0;    // multiply-adds x 2, padding included
  double outputs = 0;  // values the kernels compute in parallel: padded outputs x splits of K
};
// `winograd_tiles`: the 2x2 output tiles (N x ceil(OH / 2) x ceil(OW / 2)) of a 3x3 Conv of
// stride and dilation 1, 0 for any other; where conv_winograd accepts it, kWinograd's products
// with their tiles' padding.
ConvExecution conv_execution(int64_t out_channels, int64_t pixels, int64_t reduction,
                             bool pointwise, int64_t winograd_tiles = 0);
// Whether kAuto runs a group-1 3x3 Conv of stride and dilation 1 with `out_channels` and
// `in_channels` channels over `tiles` 2x2 output tiles as kWinograd (given weights on the host):
// enough channels and tiles that its three launches pay.
bool conv_winograd(int64_t out_channels, int64_t in_channels, int64_t tiles);
// Whether kAuto runs a Conv of `outputs` values (N x OC x OH x OW), each reducing `reduction`
// inputs (C / group x KH x KW), as kRows.
bool conv_by_rows(int64_t outputs, int64_t reduction);
// Whether kAuto runs a Conv of `out_channels` outputs per position as kDirect, whatever its group.
bool conv_direct_by_channels(int64_t out_channels);

// ConvTranspose: x [N, C, (H,) W], w [C, OC / group, (KH,) KW], bias [OC] (may be null),
// y [N, OC, ...] whose size carries output_padding. `params.activation` must be empty.
Result<cl::Event> enqueue_conv_transpose(const OpKernels& ops, cl::CommandQueue& queue,
                                         const cl::Buffer& x, const Shape& x_shape,
                                         const cl::Buffer& w, const Shape& w_shape,
                                         const cl::Buffer* bias, const ConvParams& params,
                                         cl::Buffer& y, const Shape& y_shape,
                                         const Events& wait = {});

enum class PoolKind { kMax, kAverage };
// MaxPool / AveragePool of x [N, C, (H,) W] into y [N, C, ...]. AveragePool divides by the
// window's in-bounds element count, or with count_include_pad by its extent clipped to the
// padded input (pads_end included), as ONNX Runtime and PyTorch do. MaxPool takes the first
// largest element of a window and, with `indices` (int64, y's shape), writes its index into x
// (row-major; H and W column-major with storage_order 1), as the CPU does.
Result<cl::Event> enqueue_pool(const OpKernels& ops, cl::CommandQueue& queue, PoolKind kind,
                               const cl::Buffer& x, const Shape& x_shape, const Window& window,
                               bool count_include_pad, cl::Buffer& y, const Shape& y_shape,
                               const Events& wait = {}, cl::Buffer* indices = nullptr,
                               int64_t storage_order = 0);

// The kernels enqueue_instance_norm runs for x of `shape` [N, C, spatial...] (N x C rows): with
// ordered_sums (OpKernels::ordered_sums, a CPU device) 2 (each row's statistics in ONNX Runtime's
// order: Eigen's sums of SSE packets, which its quantized models' references carry; the
// normalisation); else 3 (partial sums per
// chunk, their merge, the normalisation) when the rows are too few to fill a GPU and long, else
// 1. The cost model charges a launch per kernel.
int64_t instance_norm_kernels(const Shape& shape, bool ordered_sums);

// What the kernels of an InstanceNormalization apply to each normalised element i (GroupNorm as
// exported: the groups reshaped back to [N, channels, plane...]): times gamma[c] plus beta[c]
// (each may be absent) for the channel c = (i / plane) % channels, then the activation.
struct NormEpilogue {
  int64_t channels = 1, plane = 1;
  const cl::Buffer* gamma = nullptr;
  const cl::Buffer* beta = nullptr;
  std::optional<Activation> activation{};
};
// InstanceNormalization of x [N, C, spatial...] with scale and bias of C elements.
Result<cl::Event> enqueue_instance_norm(const OpKernels& ops, cl::CommandQueue& queue,
                                        const cl::Buffer& x, const Shape& shape,
                                        const cl::Buffer& scale, const cl::Buffer& bias,
                                        float epsilon, cl::Buffer& y, const Events& wait = {},
                                        const NormEpilogue& epilogue = {});

// LayerNormalization as ops.h's enqueue_layer_norm (same arguments and result), with one work
// group per row instead of one work item: the node level uses this one (on an H100 vit_tiny's
// 197 rows of 192 took 1.4 ms per run as single items). `mean` and `inv_std_dev` (each may be
// null) receive the optional outputs, one value per row.
// With `quantized`, its DequantizeLinear and QuantizeLinear fused in (ops.h QdqRow).
Result<cl::Event> enqueue_layer_norm_rows(const OpKernels& ops, cl::CommandQueue& queue,
                                          const cl::Buffer& x, const Shape& shape, int64_t axis,
                                          const cl::Buffer& scale, const cl::Buffer* bias,
                                          float epsilon, cl::Buffer& y, cl::Buffer* mean,
                                          cl::Buffer* inv_std_dev, const Events& wait = {},
                                          const std::optional<QdqRow>& quantized = {});

// LayerNormalization over axis 1 of x [N, C, spatial...] (rank >= 2) into y of x's shape; scale
// and bias (bias may be null) of C elements: layer_norm_rows with a row per pixel.
Result<cl::Event> enqueue_channel_layer_norm(const OpKernels& ops, cl::CommandQueue& queue,
                                             const cl::Buffer& x, const Shape& shape,
                                             const cl::Buffer& scale, const cl::Buffer* bias,
                                             float epsilon, cl::Buffer& y, const Events& wait = {});

// Resize's per-axis index tables (built on the host by resize_plan in ops_resize.h):
// output index o of axis d reads input i0[d][o] (and, interpolating, i1[d][o] with weight
// w1[d][o]). Only the last two axes may interpolate (w1 != 0). Rank <= 6.
struct ResizeTables {
  std::vector<std::vector<int32_t>> i0, i1;
  std::vector<std::vector<float>> w1;
};
Result<cl::Event> enqueue_resize(const OpKernels& ops, cl::CommandQueue& queue, const cl::Buffer& x,
                                 const Shape& x_shape, const ResizeTables& tables, cl::Buffer& y,
                                 const Shape& y_shape, const Events& wait = {});

// Concat of `inputs` (shapes equal but along `axis`, negative counts from the end) into y; a null
// input is already in place (written there by its producer): only its extent counts. With
// `sources`, input i's buffer may hold sources[i] = {extent, first} along the axis, the input
// being first.. of it (a Slice read in place; {0, 0}: as it is). With `groups` G > 1, a channel
// shuffle of G groups follows (a Reshape to [.., G, C / G, ..], the two swapped, a Reshape back):
// G inputs of C / G each along the axis, input i's index c stored at c * G + i. With `quantized`
// (one per input), each input's copy has its QdqRow's DequantizeLinear and QuantizeLinear fused in.
Result<cl::Event> enqueue_concat(const OpKernels& ops, cl::CommandQueue& queue,
                                 const std::vector<const cl::Buffer*>& inputs,
                                 const std::vector<Shape>& shapes, int64_t axis, cl::Buffer& y,
                                 const Events& wait = {},
                                 const std::vector<std::pair<int64_t, int64_t>>& sources = {},
                                 int64_t groups = 1, const std::vector<QdqRow>& quantized = {});

// The copy of each input enqueue_concat makes, from the same arguments (count 0: nothing to copy).
Result<std::vector<RowCopy>> concat_copies(
    const std::vector<Shape>& shapes, int64_t axis,
    const std::vector<std::pair<int64_t, int64_t>>& sources = {}, int64_t groups = 1);

// Copy `copy` from x (x_elements) into y (y_elements), after checking that it stays inside both.
Result<cl::Event> enqueue_row_copy(const OpKernels& ops, cl::CommandQueue& queue,
                                   const cl::Buffer& x, int64_t x_elements, cl::Buffer& y,
                                   int64_t y_elements, const RowCopy& copy,
                                   const Events& wait = {});
// Whether `copy` reads inside x_elements and writes inside y_elements.
bool row_copy_fits(const RowCopy& copy, int64_t x_elements, int64_t y_elements);

// Split of x along `axis` (negative counts from the end) into `outputs` of `shapes` (equal to x's
// off the axis, sizes along it adding up to x's).
Result<cl::Event> enqueue_split(const OpKernels& ops, cl::CommandQueue& queue, const cl::Buffer& x,
                                const Shape& shape, int64_t axis,
                                const std::vector<cl::Buffer*>& outputs,
                                const std::vector<Shape>& shapes, const Events& wait = {});

// Gather of x along `axis` at host-known `indices` (flattened; negative count from the end):
// y [x[:axis], indices..., x[axis + 1:]]. InvalidArgument for an index out of range.
Result<cl::Event> enqueue_gather(const OpKernels& ops, cl::CommandQueue& queue, const cl::Buffer& x,
                                 const Shape& shape, int64_t axis,
                                 const std::vector<int64_t>& indices, cl::Buffer& y,
                                 const Events& wait = {});

// GridSample of x [N, C, H, W] at grid [N, Ho, Wo, 2] (normalized x, y) into y [N, C, Ho, Wo]:
// `mode` 0 bilinear, 1 nearest, 2 bicubic; `padding` 0 zeros, 1 border, 2 reflection.
Result<cl::Event> enqueue_grid_sample(const OpKernels& ops, cl::CommandQueue& queue,
                                      const cl::Buffer& x, const Shape& x_shape,
                                      const cl::Buffer& grid, const Shape& grid_shape, int mode,
                                      int padding, bool align_corners, cl::Buffer& y,
                                      const Events& wait = {});

// DFT of x (rank >= 2, last dim 1 for real, 2 for complex data) along `axis` (not the last), cut
// or zero-padded to n, into y (the axis n or n / 2 + 1 `bins` long, last dim 2).
Result<cl::Event> enqueue_dft(const OpKernels& ops, cl::CommandQueue& queue, const cl::Buffer& x,
                              const Shape& x_shape, size_t axis, int64_t n, int64_t bins,
                              bool inverse, cl::Buffer& y, const Events& wait = {});

// STFT of signal [batch, length, 1 or 2] in frames of n every `step`, times `window` ([n], may
// be null), into y [batch, frames, bins, 2] (frames = (length - n) / step + 1).
Result<cl::Event> enqueue_stft(const OpKernels& ops, cl::CommandQueue& queue, const cl::Buffer& x,
                               const Shape& x_shape, const cl::Buffer* window, int64_t step,
                               int64_t n, int64_t bins, cl::Buffer& y, const Events& wait = {});

// Det of x [batch..., n, n] into y [batch...]: LU with partial pivoting in float, per matrix.
Result<cl::Event> enqueue_det(const OpKernels& ops, cl::CommandQueue& queue, const cl::Buffer& x,
                              const Shape& x_shape, cl::Buffer& y, const Events& wait = {});

// LRN of x [N, C, ...] across channels (ONNX's window: (size - 1) / 2 before, size / 2 after).
Result<cl::Event> enqueue_lrn(const OpKernels& ops, cl::CommandQueue& queue, const cl::Buffer& x,
                              const Shape& shape, int64_t size, float alpha, float beta, float bias,
                              cl::Buffer& y, const Events& wait = {});

// ArgMax (`max`) or ArgMin of x along `axis` (negative counts from the end) into y, int64
// indices: ties go to the first index, or the last with `select_last`. keepdims changes only the
// shape. InvalidArgument for an empty axis.
Result<cl::Event> enqueue_arg_reduce(const OpKernels& ops, cl::CommandQueue& queue,
                                     const cl::Buffer& x, const Shape& shape, int64_t axis,
                                     bool max, bool select_last, cl::Buffer& y,
                                     const Events& wait = {});

// Trilu of x (rank >= 2) over its last two axes: the upper (or lower) triangle from diagonal k
// kept, the rest zero.
Result<cl::Event> enqueue_trilu(const OpKernels& ops, cl::CommandQueue& queue, const cl::Buffer& x,
                                const Shape& shape, int64_t k, bool upper, cl::Buffer& y,
                                const Events& wait = {});

// Transpose of x by `perm` (output axis i is input axis perm[i]; empty: reversed), rank <= 6.
Result<cl::Event> enqueue_transpose(const OpKernels& ops, cl::CommandQueue& queue,
                                    const cl::Buffer& x, const Shape& shape,
                                    const std::vector<int64_t>& perm, cl::Buffer& y,
                                    const Events& wait = {});

// Slice of x by `axes` (graph/slice_semantics.h, one per axis of x) into y: a strided view of
// rank <= 6 once axes of one element are dropped and adjacent ones merged where their strides
// allow (slice_rank: that rank).
size_t slice_rank(const Shape& shape, const std::vector<SliceAxis>& axes);
Result<cl::Event> enqueue_slice(const OpKernels& ops, cl::CommandQueue& queue, const cl::Buffer& x,
                                const Shape& shape, const std::vector<SliceAxis>& axes,
                                cl::Buffer& y, const Events& wait = {});

// The Reduce* ops, in the kernel's order.
enum class ReduceKind : cl_int {
  kSum,
  kMean,
  kMax,
  kMin,
  kProd,
  kL1,
  kL2,
  kSumSquare,
  kLogSum,
  kLogSumExp
};

// The ReduceKind of an ONNX op type (ReduceSum...); nullopt for any other op.
std::optional<ReduceKind> reduce_kind(const std::string& op_type);

// Reduce* of x (rank <= 6) over the axes `reduce` marks (one flag per axis; none: each element
// alone, as noop_with_empty_axes gives) into y, the kept axes' elements in order (keepdims
// changes only the shape). InvalidArgument for an empty reduction.
Result<cl::Event> enqueue_reduce(const OpKernels& ops, cl::CommandQueue& queue, ReduceKind kind,
                                 const cl::Buffer& x, const Shape& shape,
                                 const std::vector<bool>& reduce, cl::Buffer& y,
                                 const Events& wait = {});

// A squeeze-and-excitation block's two 1x1 Convs on pooled means, in one launch: y [N, c_out] =
// act2(b2 + w2 act1(b1 + w1 m)) per sample, m [N, C] (batch * C values), w1 [mid, C], w2 [c_out,
// mid], the biases (null where absent) [mid] and [c_out]; C <= kMaxExcitedChannels, mid <=
// kMaxExcitationHidden (what one work group holds).
struct SqueezeExcitation {
  int64_t batch = 1, channels = 0, hidden = 0, out_channels = 0;
  const cl::Buffer* b1 = nullptr;
  const cl::Buffer* b2 = nullptr;
  std::optional<Activation> act1{}, act2{};
};
inline constexpr int64_t kMaxExcitedChannels = 4096;   // SE_MAX_C
inline constexpr int64_t kMaxExcitationHidden = 1024;  // SE_MAX_MID
Result<cl::Event> enqueue_squeeze_excitation(const OpKernels& ops, cl::CommandQueue& queue,
                                             const cl::Buffer& m, const cl::Buffer& w1,
                                             const cl::Buffer& w2, const SqueezeExcitation& se,
                                             cl::Buffer& y, const Events& wait = {});

}  // namespace hsched::opencl
