// The OpenCL backend's first kernels: elementwise (unary, broadcasting binary), Softmax,
// LayerNormalization, GlobalAveragePool, and MatMul/Gemm through CLBlast.
//
// OpKernels holds the three built programs ("elementwise", "reduce", "spatial": convolutions,
// pools, Resize, data movement; see ops_spatial.h) for one device and one storage type; the
// enqueue_* functions take it, a queue of that device and buffers, enqueue the work and return the
// event of its last command. Shapes are static, in elements; buffers hold the storage type densely
// in row-major order. Nothing is read back: callers wait on the event or read with a blocking read.
// Queues must be in-order (the default): the GEMM path chains commands on it.
//
// Ownership: OpKernels owns its programs; the enqueue functions keep no reference to the caller's
// buffers after returning. Their temporaries (fp16 GEMM copies, CLBlast's temporary) are per-queue
// scratch buffers (ops_scratch.h), reused by later commands of the same in-order queue.
// Threading: an OpKernels may be shared by threads. Kernel objects and temporaries are kept per
// queue (ops_scratch.h), and clSetKernelArg is not thread-safe on a shared cl_kernel: use one
// queue per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/opencl/compiler.h"
#include "backends/opencl/opencl.h"
#include "core/qlinear.h"
#include "hsched/status.h"

namespace hsched::opencl {

enum class Storage { kFloat32, kFloat16 };
// Bytes per element of `storage`.
size_t storage_bytes(Storage storage);

// Values are the op codes of kernel_sources.h.
enum class UnaryOp : int {
  kRelu = 0,
  kLeakyRelu,  // alpha
  kSigmoid,
  kTanh,
  kErf,
  kGelu,  // erf form
  kExp,
  kLog,
  kSqrt,
  kNeg,
  kAbs,
  kClip,         // alpha = min, beta = max
  kHardSigmoid,  // alpha, beta
  kHardSwish,
  kReciprocal,
  kGeluTanh,  // Gelu with approximate = "tanh"
  kIsNaN,     // 1 where NaN, else 0: the backend holds bool tensors as 1 and 0 in its storage
  kNot,       // 1 where 0, else 0
  kNonZero,   // 1 where not 0, else 0 (Cast to bool)
  kSin,
  kCos,
  kTan,
  kAsin,
  kAcos,
  kAtan,
  kSinh,
  kCosh,
  kAsinh,
  kAcosh,
  kAtanh,
  kFloor,
  kCeil,
  kRound,  // half to even
  kSign,
  kSoftplus,
  kSoftsign,
  kElu,              // alpha
  kSelu,             // alpha, beta = gamma
  kThresholdedRelu,  // alpha
  kShrink,           // alpha = lambd, beta = bias
  kIsInf,            // alpha, beta: detect_negative, detect_positive (1 or 0)
  kScale,            // alpha * x (Mean's division, a copy with alpha 1)
  kSilu,             // x * sigmoid(x) (an exported SiLU's two nodes, node_ops.h)
  kNanTo,            // alpha where x is NaN, else x (Where(IsNaN(x), alpha, x))
};
// The comparisons and the logic ops give bools as 1 or 0; the logic ops read nonzero as true.
enum class BinaryOp : int {
  kAdd = 0,
  kSub,
  kMul,
  kDiv,
  kPow,
  kMax,
  kMin,
  kEqual,
  kLess,
  kLessOrEqual,
  kGreater,
  kGreaterOrEqual,
  kAnd,
  kOr,
  kXor,
  kPRelu,      // a >= 0 ? a : b * a (b the slope)
  kFmod,       // Mod with fmod = 1: the remainder with a's sign
  kShiftLeft,  // BitShift (integer kernels only, ops_integer.h)
  kShiftRight,
};

// The op for an ONNX op type ("Relu", "Add"...); InvalidArgument naming it when not supported.
Result<UnaryOp> unary_op_from_onnx(const std::string& op_type);
Result<BinaryOp> binary_op_from_onnx(const std::string& op_type);

class OpKernels {
 public:
  // Builds the programs for `device` (one device of `context`) through `compiler` (so cached).
  // Errors: the compiler's (compile_timeout, build_failed).
  static Result<std::unique_ptr<OpKernels>> create(const cl::Context& context,
                                                   const cl::Device& device, Storage storage,
                                                   Compiler& compiler,
                                                   int64_t deadline_ms = kDefaultCompileDeadlineMs);

  Storage storage() const { return storage_; }
  const cl::Context& context() const { return context_; }
  // Whether InstanceNormalization sums its statistics in ONNX Runtime's order (a few work items
  // a row summing long runs in turn: enqueue_instance_norm): on a device of type CPU (PoCL), where
  // that costs what the CPU's own loops do. with_ordered_sums: a copy that does or does not,
  // whatever the device (both paths tested on one device).
  bool ordered_sums() const { return ordered_sums_; }
  OpKernels with_ordered_sums(bool ordered) const {
    OpKernels copy = *this;
    copy.ordered_sums_ = ordered;
    return copy;
  }
  // A new kernel object of the program defining `name`; Internal naming it on failure.
  Result<cl::Kernel> kernel(const char* name) const;

 private:
  OpKernels(cl::Context context, Storage storage, bool ordered_sums, cl::Program elementwise,
            cl::Program reduce, cl::Program spatial);

  cl::Context context_;
  Storage storage_;
  bool ordered_sums_;
  cl::Program elementwise_;
  cl::Program reduce_;
  cl::Program spatial_;
};

using Shape = std::vector<int64_t>;
using Events = std::vector<cl::Event>;  // commands an enqueue waits for

// Bits of the int a run's kernels set on what the host could not check before the run
// (NodeOperands::error_flag); the program fails the run naming the nodes that may set each.
enum RunError : cl_int { kDivisionByZero = 1, kIndexOutOfRange = 2 };

// An activation applied to a result before it is stored (a Conv's or MatMul's fused epilogue).
struct Activation {
  UnaryOp op = UnaryOp::kRelu;
  float alpha = 0.0f;  // as enqueue_unary's
  float beta = 0.0f;
};

// y = `value` over `count` elements, in the storage type.
Result<cl::Event> enqueue_fill(const OpKernels& ops, cl::CommandQueue& queue, float value,
                               cl::Buffer& y, int64_t count, const Events& wait = {});

// A one-input kernel's DequantizeLinear and QuantizeLinear fused in (unary_q, layer_norm_rows_q,
// softmax_rows_q): x holds 8-bit integers read as (x - x_zero) * x_scale and y receives
// QuantizeLinear's clamp(rint(v / y_scale) + y_zero, lo, hi) (a scale of 0: that side as it is;
// mirrors QdqRow in kernel_sources.h's prelude).
struct QdqRow {
  cl_float x_scale = 0, x_zero = 0, y_scale = 0, y_zero = 0, lo = 0, hi = 255;
};
// Whether `q` dequantizes and quantizes again: both scales positive and finite, finite zero
// points, an 8-bit range (a product's requantized epilogue).
bool requantizes(const QdqRow& q);
// A chain of elementwise ops on one 8-bit value (kQdqChainAttr, node_ops.h), as
// qdq_chain_apply in kernel_sources.h runs it; mirrors QdqChain in its prelude. count 0: none.
inline constexpr size_t kQdqChainOps = 12;
struct QdqChain {
  cl_float x_scale = 0, x_zero = 0, y_scale = 0, y_zero = 0, lo = 0, hi = 255, count = 0,
           unused = 0;
  cl_float ops[kQdqChainOps][8] = {};  // {kind, op, a, b, c, p0, p1, p2}
};

// y = op(x) over `count` elements; alpha/beta as UnaryOp says (Clip: min, max). With
// `quantized`, QdqRow's fused DequantizeLinear and QuantizeLinear.
Result<cl::Event> enqueue_unary(const OpKernels& ops, cl::CommandQueue& queue, UnaryOp op,
                                float alpha, float beta, const cl::Buffer& x, cl::Buffer& y,
                                int64_t count, const Events& wait = {},
                                const std::optional<QdqRow>& quantized = {});

// ONNX QuantizeLinear (`quantize`, y clamped to [lo, hi]) or DequantizeLinear of `count`
// elements with `channels` scale (and zero point) values, each for a run of `inner` elements
// (channels 1: per tensor). `zero` may be null. Quantized data is held as its integer values,
// int32 data (DequantizeLinear only, `int32`) in its own type.
struct QuantizeParams {
  bool quantize = true;
  bool int32 = false;
  float lo = 0;
  float hi = 255;
  int64_t channels = 1;
  int64_t inner = 1;
};
Result<cl::Event> enqueue_quantize_linear(const OpKernels& ops, cl::CommandQueue& queue,
                                          const QuantizeParams& params, const cl::Buffer& x,
                                          const cl::Buffer& scale, const cl::Buffer* zero,
                                          cl::Buffer& y, int64_t count, const Events& wait);

// BatchNormalization in inference mode over x [N, C, ...]: scale, bias, mean and var hold C
// values each.
Result<cl::Event> enqueue_batch_norm(const OpKernels& ops, cl::CommandQueue& queue,
                                     const cl::Buffer& x, const Shape& shape,
                                     const cl::Buffer& scale, const cl::Buffer& bias,
                                     const cl::Buffer& mean, const cl::Buffer& var, float epsilon,
                                     cl::Buffer& y, const Events& wait);

// y = op(a, b) with numpy broadcasting, ranks up to 6; y has the broadcast shape.
// Errors: InvalidArgument when the shapes do not broadcast or rank > 6.
Result<cl::Event> enqueue_binary(const OpKernels& ops, cl::CommandQueue& queue, BinaryOp op,
                                 const cl::Buffer& a, const Shape& a_shape, const cl::Buffer& b,
                                 const Shape& b_shape, cl::Buffer& y, const Events& wait = {});

// y = x broadcast (numpy rules) to `y_shape`, ranks up to 6 (ONNX Expand: y_shape is the
// broadcast of x's shape and the requested one). Errors: InvalidArgument when x does not
// broadcast to y_shape or rank > 6.
Result<cl::Event> enqueue_expand(const OpKernels& ops, cl::CommandQueue& queue, const cl::Buffer& x,
                                 const Shape& x_shape, const Shape& y_shape, cl::Buffer& y,
                                 const Events& wait = {});

// y = cond ? a : b (ONNX Where; cond a bool held as 1 or 0) with numpy broadcasting of the three,
// ranks up to 6. Errors: InvalidArgument when the shapes do not broadcast or rank > 6.
Result<cl::Event> enqueue_select(const OpKernels& ops, cl::CommandQueue& queue,
                                 const cl::Buffer& cond, const Shape& cond_shape,
                                 const cl::Buffer& a, const Shape& a_shape, const cl::Buffer& b,
                                 const Shape& b_shape, cl::Buffer& y, const Events& wait = {});

// The numpy broadcast of two shapes; InvalidArgument when they do not broadcast.
Result<Shape> broadcast_shape(const Shape& a, const Shape& b);

// Softmax, LogSoftmax or Hardmax (opset 13) along `axis` (negative counts from the end); with
// `nan_to` (Softmax and LogSoftmax), a NaN result is stored as that value instead. With
// `quantized` (only where softmax_by_rows), QdqRow's fused DequantizeLinear and QuantizeLinear.
enum class SoftmaxKind : cl_int { kSoftmax, kLogSoftmax, kHardmax };
Result<cl::Event> enqueue_softmax(const OpKernels& ops, cl::CommandQueue& queue,
                                  const cl::Buffer& x, const Shape& shape, int64_t axis,
                                  SoftmaxKind kind, cl::Buffer& y, const Events& wait = {},
                                  std::optional<float> nan_to = std::nullopt,
                                  const std::optional<QdqRow>& quantized = {});
// Whether enqueue_softmax runs a work group per row (softmax_rows): rows of `axis_size`
// contiguous elements (`inner` 1), long enough to fill a group, not Hardmax.
bool softmax_by_rows(int64_t axis_size, int64_t inner, SoftmaxKind kind);

// LayerNormalization over the axes from `axis` (negative counts from the end) to the last;
// scale and bias (bias may be null) hold the normalized shape's element count.
Result<cl::Event> enqueue_layer_norm(const OpKernels& ops, cl::CommandQueue& queue,
                                     const cl::Buffer& x, const Shape& shape, int64_t axis,
                                     const cl::Buffer& scale, const cl::Buffer* bias, float epsilon,
                                     cl::Buffer& y, const Events& wait = {});

// GlobalAveragePool of [N, C, spatial...] into [N, C, 1...]; with `quantized`, QdqRow's fused
// DequantizeLinear and QuantizeLinear.
Result<cl::Event> enqueue_global_average_pool(const OpKernels& ops, cl::CommandQueue& queue,
                                              const cl::Buffer& x, const Shape& shape,
                                              cl::Buffer& y, const Events& wait = {},
                                              const std::optional<QdqRow>& quantized = {});
// The mean of each of `rows` contiguous rows of `size` elements of x into y[rows] (a work group
// a row when rows are long): GlobalAveragePool, and ReduceMean over trailing axes.
Result<cl::Event> enqueue_row_means(const OpKernels& ops, cl::CommandQueue& queue,
                                    const cl::Buffer& x, int64_t rows, int64_t size, cl::Buffer& y,
                                    const Events& wait = {},
                                    const std::optional<QdqRow>& quantized = {});

// How a MatMul's Add after its quantization (LateBias) adds: form 0 in floats, dequantized and
// quantized again; 1 or 2 ONNX Runtime's QLinearAdd of one 8-bit type, the product the graph's
// first (1) or second (2) operand (core/qlinear.h's terms, three floats). Mirrors LateAdd in
// kernel_sources_matmul.h.
struct LateAdd {
  cl_int form = 0;
  QLinearAddTerms terms{};
};

// A MatMul operand read in place from a buffer: element (i_0, ..., i_r-1) of the operand, of
// shape `dims`, is the buffer's element offset + sum(i_d * strides[d]).
struct StridedView {
  Shape dims;
  std::vector<int64_t> strides;
  int64_t offset = 0;
};
// What the program fused into a MatMul. Its operands read in place through views of their
// buffers (a_view, b_view: Transposes, Splits, squeezed axes), its result stored as
// Transpose(result, y_perm) (transposed_result), either needing a product matmul_tiled takes
// (tiled_matmul()); and before storing the products, in this order: times `alpha`, plus `bias`
// ([N] in the storage type) on every row, plus `residual` (the stored shape, or with
// `residual_shared` one [M, N] for every batch: an attention mask), then `activation`.
struct LateBias {
  QdqRow q;
  float bias_scale = 0, bias_zero = 0;
  LateAdd add{};
};
struct MatMulFusion {
  std::optional<StridedView> a_view{}, b_view{};
  std::vector<int64_t> y_perm{};
  float alpha = 1.0f;
  const cl::Buffer* bias = nullptr;
  const cl::Buffer* residual = nullptr;
  bool residual_shared = false;
  std::optional<Activation> activation{};
  // 8-bit operands (a DequantizeLinear of each fused in): the product sums (a - a_zero) x
  // (b - b_zero), alpha holding their scales (B's per tensor) and b_scale B's scales per column
  // ([N]; null where per tensor). With y_scale > 0, y holds QuantizeLinear's clamp(rint(v /
  // y_scale) + y_zero, y_lo, y_hi) of the result. Tiled products only.
  float a_zero = 0, b_zero = 0;
  const cl::Buffer* b_scale = nullptr;
  float y_scale = 0, y_zero = 0, y_lo = 0, y_hi = 255;
  // With late_bias (and y_scale), the bias comes after that quantization: y holds late_bias.q's
  // QuantizeLinear of its DequantizeLinear of those integers plus the bias (8-bit integers
  // dequantized by bias_scale and bias_zero where bias_scale > 0): a DequantizeLinear -> bias
  // Add -> QuantizeLinear after the product's QuantizeLinear.
  std::optional<LateBias> late_bias{};
  // With late_residual (and y_scale), the residual (8-bit integers of y's shape, dequantized by
  // bias_scale and bias_zero) comes after that alike: a DequantizeLinear -> residual Add ->
  // QuantizeLinear after the product's (or its late bias's) QuantizeLinear.
  std::optional<LateBias> late_residual{};
  // With chain.count > 0 (and y_scale), y holds the chain's integers of those (a kQdqChainOp
  // after the product's QuantizeLinear).
  QdqChain chain{};
  // With a_chain.count > 0 (b_chain alike), each of A's 8-bit integers is read through that chain
  // (its x_scale and x_zero A's stored integers', its y_scale and y_zero those a_zero and alpha
  // then take; `unused` the lowest integer of A's type, 0 or -128): the chain of ops the graph
  // runs on A before the product.
  QdqChain a_chain{}, b_chain{};
  // With norm_scale ([K]), A's rows normalized first as LayerNormalization over its last axis
  // computes them (norm_epsilon; norm_bias [K] or null): the product of LayerNorm(A) by B. A
  // dense, unquantized A of a tiled product only.
  const cl::Buffer* norm_scale = nullptr;
  const cl::Buffer* norm_bias = nullptr;
  float norm_epsilon = 1e-5f;
  // With norm_q.x_scale > 0 (8-bit A of a quantized product), A's integers are dequantized before
  // that normalization and quantized again after it (a quantized LayerNormalization).
  QdqRow norm_q{};
  // Whether the product needs the quantized kernels (matmul_qdq_*).
  bool quantized() const {
    return a_zero != 0.0f || b_zero != 0.0f || b_scale != nullptr || y_scale > 0.0f ||
           a_chain.count > 0 || b_chain.count > 0;
  }
};
// MatMul of [..., M, K] by [..., K, N] (ranks >= 2, batch dims broadcast) into [..., M, N], with
// `fusion` (a_shape and b_shape are the buffers' shapes; a view's dims are the operand's).
Result<cl::Event> enqueue_matmul(const OpKernels& ops, cl::CommandQueue& queue, const cl::Buffer& a,
                                 const Shape& a_shape, const cl::Buffer& b, const Shape& b_shape,
                                 cl::Buffer& y, const Events& wait = {},
                                 const MatMulFusion& fusion = {});

// Products of one A by several B of one shape, y_i = alpha A B_i (+ bias_i, [N], may be null),
// each stored dense: one launch for all (matmul_tiled's kernels, the product chosen by the batch
// index, K whole) where they are tiled products (tiled_matmul) whose batch folds into M and all
// or none has a bias, else an enqueue_matmul each. Of `fusion`, only a_view and alpha.
struct GroupedProduct {
  const cl::Buffer* b = nullptr;
  const cl::Buffer* bias = nullptr;
  cl::Buffer* y = nullptr;
};
inline constexpr size_t kMaxGroupedProducts = 4;
Result<cl::Event> enqueue_matmul_group(const OpKernels& ops, cl::CommandQueue& queue,
                                       const cl::Buffer& a, const Shape& a_shape,
                                       const Shape& b_shape,
                                       const std::vector<GroupedProduct>& products,
                                       const Events& wait = {}, const MatMulFusion& fusion = {});

// Where element (batch b, row i, column p) of a MatMul operand is: b * batch + i * row + p * col.
struct OperandStrides {
  int64_t batch = 0, row = 0, col = 1;
};
// The view of Transpose(x, perm), x dense of shape x_shape: nullopt unless perm permutes x's axes.
std::optional<StridedView> transposed_view(const Shape& x_shape, const std::vector<int64_t>& perm);
// The strides of `view` as a MatMul operand: nullopt unless its rank is >= 2 and its batch axes
// longer than 1 collapse into one stride.
std::optional<OperandStrides> operand_strides(const StridedView& view);
// Where element (b, i, j) of a MatMul result y is stored when what is stored is Transpose(y, perm)
// (dense): nullopt unless perm permutes y's axes, keeps the last one last, and y's batch axes
// longer than 1 collapse into one stride there.
std::optional<OperandStrides> transposed_result(const Shape& y_shape,
                                                const std::vector<int64_t>& perm);
// Whether enqueue_matmul runs [..., M, K] x [..., K, N] (ranks >= 2) as one matmul_tiled launch:
// each operand holds every batch of the broadcast or one matrix for all, and the product is
// small enough. Only such products read operands through views.
bool tiled_matmul(const Shape& a_shape, const Shape& b_shape);

// Attention's two products and the softmax between them in one launch (attention_rows):
// y = out_alpha * softmax(alpha * Q K (+ mask)) V, the softmax over the last axis, Q
// [..., M, D], K [..., D, N] (the keys transposed, as the first MatMul's B), V [..., N, Dv], each
// read in place through its view (as MatMulFusion's), the result stored as Transpose(y, y_perm)
// where y_perm is set (transposed_result). The mask, of shape mask_shape, holds the scores'
// elements or one [M, N] for every batch. With nan_to, a NaN weight (a fully masked row) is
// that value. The scores and weights stay in local memory.
struct AttentionFusion {
  std::optional<StridedView> q_view{}, k_view{}, v_view{};
  std::vector<int64_t> y_perm{};
  float alpha = 1.0f, out_alpha = 1.0f;
  const cl::Buffer* mask = nullptr;
  Shape mask_shape{};
  std::optional<float> nan_to{};
};
// Whether enqueue_attention runs these (logical) shapes: both products tiled (tiled_matmul), the
// second one's batch the first one's, N <= kMaxAttentionKeys and D <= kMaxAttentionDepth (what
// one work group holds). Keys are bounded where the launch pays on the H200 (docs/benchmarks.md:
// faster than the three kernels with BERT-Mini's 128 keys, slower with ViT-Tiny's 197).
inline constexpr int64_t kMaxAttentionKeys = 128;
inline constexpr int64_t kMaxAttentionDepth = 128;
bool fused_attention_fits(const Shape& q_shape, const Shape& k_shape, const Shape& v_shape);
// q_shape, k_shape and v_shape are the buffers' shapes (a view's dims are the operand's).
Result<cl::Event> enqueue_attention(const OpKernels& ops, cl::CommandQueue& queue,
                                    const cl::Buffer& q, const Shape& q_shape, const cl::Buffer& k,
                                    const Shape& k_shape, const cl::Buffer& v, const Shape& v_shape,
                                    cl::Buffer& y, const AttentionFusion& fusion,
                                    const Events& wait = {});

struct GemmParams {
  bool trans_a = false;
  bool trans_b = false;
  float alpha = 1.0f;
  float beta = 1.0f;
};
// ONNX Gemm: y[M, N] = alpha * A' B' + beta * C, A and B rank 2, C (may be null) broadcasting to
// [M, N] with shape `c_shape`.
Result<cl::Event> enqueue_gemm(const OpKernels& ops, cl::CommandQueue& queue, const cl::Buffer& a,
                               const Shape& a_shape, const cl::Buffer& b, const Shape& b_shape,
                               const cl::Buffer* c, const Shape& c_shape, const GemmParams& params,
                               cl::Buffer& y, const Events& wait = {});

}  // namespace hsched::opencl
