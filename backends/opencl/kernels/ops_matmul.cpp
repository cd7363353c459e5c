// MatMul and Gemm: products up to kTiledMaxMacs multiply-adds in the spatial program's
// matmul_tiled kernels (one launch reading the storage type, replayed like any kernel), larger
// ones through CLBlast's fp32 GEMM. With fp16 storage CLBlast's operands are converted to fp32
// temporaries around it (neither PoCL nor NVIDIA's driver reports cl_khr_fp16, which CLBlast's
// half GEMM needs).
//
// CLBlast takes no wait list, so `wait` becomes a barrier on the (in-order) queue first.
#include <clblast.h>

#include <cmath>
#include <string>

#include "backends/opencl/kernels/ops.h"
#include "backends/opencl/kernels/ops_scratch.h"
#include "backends/opencl/kernels/ops_util.h"

namespace hsched::opencl {
namespace {

using detail::check_cl;
using detail::check_int_range;
using detail::element_count;

// An fp32 view of an operand: the buffer itself with fp32 storage, else a converted temporary.
struct FloatOperand {
  cl::Buffer buffer;
  cl::Event ready;  // null when nothing was enqueued
};

using detail::as_float;
using detail::float_scratch;

// Products of up to this many multiply-adds (a transformer's projections and attention at batch
// 1, 197 x 768 x 192 in ViT-Tiny: 29 M) run in matmul_tiled: each CLBlast call costs 25-29 us of
// host time on NVIDIA's driver and is enqueued anew every run, a replayed kernel 7-9 us. Larger
// ones in CLBlast, whose tuned kernels win there.
constexpr int64_t kTiledMaxMacs = int64_t{1} << 27;
// matmul_tiled's arguments; matmul_group's products and matmul_qdq's chain follow them.
constexpr cl_uint kMatMulArgs = 10;
// Mirrors MatMulShape in kernel_sources_matmul.h.
struct MatMulShape {
  cl_int m, n, k, a_row, a_col, a_batch, a_offset, b_row, b_col, b_batch, b_offset;
  cl_int y_row, y_batch, res_batch, batches, splits, k_chunk, has_bias, has_res, op;
  cl_float alpha, act_alpha, act_beta;
  cl_float a_zero, b_zero;  // MatMulFusion::quantized
  cl_int b_scales;
  cl_float y_scale, y_zero, y_lo, y_hi;  // MatMulFusion::quantize_output
  cl_int norm;                           // bit 0: A normalized, bit 1: with a bias
  cl_float norm_epsilon;
  QdqRow norm_q;     // MatMulFusion::norm_q
  cl_int late_bias;  // MatMulFusion::late_bias
  QdqRow late;
  cl_float late_b_scale, late_b_zero;
  LateAdd late_add;
  cl_int late_res;  // MatMulFusion::late_residual
  QdqRow late_r;
  cl_float late_r_scale, late_r_zero;
  LateAdd late_r_add;
  cl_int chained;  // bits 0-2: MatMulFusion::chain, a_chain, b_chain (their own argument)
};
// One matmul_tiled launch (and a matmul_split_reduce where K is split): `batch` products
// y[m, n] = act(alpha A B (+ bias[n]) (+ residual[m, n])); A[i][p] of batch b at element
// a_offset + b * a_batch + i * a_row + p * a_col (B alike). Every index fits an int (the callers
// check).
struct TiledCall {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  int64_t a_row = 0, a_col = 1, a_batch = 0, a_offset = 0;
  int64_t b_row = 0, b_col = 1, b_batch = 0, b_offset = 0;
  // Where y[b][i, j] (and the residual's) is: b * y_batch + i * y_row + j; 0s for dense.
  int64_t y_row = 0, y_batch = 0;
  MatMulFusion fusion{};
};

// With `group` (2 to kMaxGroupedProducts products, c.batch their count, b and y product 0's), one
// matmul_group launch whose batch p is product p: K whole, no residual.
Result<cl::Event> matmul_tiled(const OpKernels& ops, cl::CommandQueue& queue, const cl::Buffer& a,
                               const cl::Buffer& b, cl::Buffer& y, const TiledCall& c,
                               const Events& wait,
                               const std::vector<GroupedProduct>* group = nullptr) {
  // One row by B whose K axis is contiguous (a classifier's head): matmul_row, a work group per
  // output, K whole.
  const bool row = group == nullptr && c.m == 1 && c.batch == 1 && c.b_row == 1 &&
                   c.fusion.norm_scale == nullptr && c.fusion.a_chain.count == 0 &&
                   c.fusion.b_chain.count == 0;
  const auto [tile, k_chunk, splits] =
      row ? detail::GemmTiling{16, c.k, 1}
          : detail::gemm_tiling(c.m, c.n, c.k, c.batch,
                                group == nullptr && c.fusion.norm_scale == nullptr
                                    ? detail::KSplit::kUnderHalf
                                    : detail::KSplit::kNever,
                                detail::kMatMulTargetGroups);
  if (group != nullptr &&
      (c.fusion.residual != nullptr || group->size() != static_cast<size_t>(c.batch))) {
    return internal_error("ops: a MatMul group takes no residual");
  }
  const int64_t count = c.batch * c.m * c.n;
  HSCHED_RETURN_IF_ERROR(check_int_range(splits * count, "MatMul split-K partial sums"));
  cl::Buffer partial;  // null with one split
  if (splits > 1) {
    HSCHED_ASSIGN_OR_RETURN(
        partial, float_scratch(ops, queue, detail::ScratchSlot::kGemmPartial, splits * count));
  }
  const MatMulFusion& e = c.fusion;
  const cl::Buffer& bias = detail::or_null(e.bias);
  const cl::Buffer& residual = detail::or_null(e.residual);
  const Activation act = e.activation.value_or(Activation{});
  const cl_int op = e.activation ? static_cast<cl_int>(act.op) : cl_int{-1};
  const auto i32 = [](int64_t v) { return static_cast<cl_int>(v); };
  const int64_t y_row = c.y_row == 0 ? c.n : c.y_row;
  const int64_t y_batch = c.y_row == 0 ? c.m * c.n : c.y_batch;
  const int64_t res_batch = e.residual_shared ? 0 : y_batch;
  const bool quantized = e.quantized();
  if (group != nullptr && quantized) return internal_error("ops: a MatMul group is not quantized");
  const LateBias late = e.late_bias.value_or(LateBias{});
  if (e.late_bias && (e.bias == nullptr || !(e.y_scale > 0.0f) || !requantizes(late.q) ||
                      !std::isfinite(late.bias_scale) || !std::isfinite(late.bias_zero))) {
    return invalid_argument("ops: a MatMul's bias after its quantization needs both");
  }
  const LateBias late_res = e.late_residual.value_or(LateBias{});
  if (e.late_residual &&
      (e.residual == nullptr || !(e.y_scale > 0.0f) || !requantizes(late_res.q) ||
       !(late_res.bias_scale > 0.0f) || !std::isfinite(late_res.bias_scale) ||
       !std::isfinite(late_res.bias_zero))) {
    return invalid_argument("ops: a MatMul's residual after its quantization needs both");
  }
  if (e.chain.count > 0 && !(e.y_scale > 0.0f)) {
    return invalid_argument("ops: a MatMul's chain of quantized ops needs its quantization");
  }
  // matmul_group_T, matmul_tiled_T or matmul_qdq_T of tile T, the last two with _n where A is
  // normalized, matmul_qdq with _t where operands are read through chains (matmul_qdq_nt_T both).
  const bool norm = group == nullptr && e.norm_scale != nullptr;
  const bool tables = quantized && (e.a_chain.count > 0 || e.b_chain.count > 0);
  std::string kernel_name = group != nullptr ? "matmul_group"
                            : quantized      ? "matmul_qdq"
                                             : "matmul_tiled";
  if (norm || tables) kernel_name += std::string("_") + (norm ? "n" : "") + (tables ? "t" : "");
  kernel_name += "_" + std::to_string(tile);
  const char* name = row ? "matmul_row" : kernel_name.c_str();
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, name));
  const MatMulShape shape{i32(c.m),
                          i32(c.n),
                          i32(c.k),
                          i32(c.a_row),
                          i32(c.a_col),
                          i32(c.a_batch),
                          i32(c.a_offset),
                          i32(c.b_row),
                          i32(c.b_col),
                          i32(c.b_batch),
                          i32(c.b_offset),
                          i32(y_row),
                          i32(y_batch),
                          i32(res_batch),
                          i32(c.batch),
                          i32(splits),
                          i32(k_chunk),
                          i32(e.bias != nullptr),
                          i32(e.residual != nullptr),
                          op,
                          e.alpha,
                          act.alpha,
                          act.beta,
                          e.a_zero,
                          e.b_zero,
                          i32(e.b_scale != nullptr),
                          e.y_scale,
                          e.y_zero,
                          e.y_lo,
                          e.y_hi,
                          i32(e.norm_scale == nullptr  ? 0
                              : e.norm_bias == nullptr ? 1
                                                       : 3),
                          e.norm_epsilon,
                          e.norm_q,
                          i32(e.late_bias.has_value()),
                          late.q,
                          late.bias_scale,
                          late.bias_zero,
                          late.add,
                          i32(e.late_residual.has_value()),
                          late_res.q,
                          late_res.bias_scale,
                          late_res.bias_zero,
                          late_res.add,
                          i32((e.chain.count > 0 ? 1 : 0) | (e.a_chain.count > 0 ? 2 : 0) |
                              (e.b_chain.count > 0 ? 4 : 0))};
  const cl::Buffer& b_scale = detail::or_null(e.b_scale);
  cl::Buffer chain;  // the result's chain, then A's and B's where they have one
  if (shape.chained != 0) {
    const QdqChain chains[3] = {e.chain, e.a_chain, e.b_chain};
    const size_t count = shape.chained > 1 ? 3 : 1;
    HSCHED_ASSIGN_OR_RETURN(chain,
                            detail::constant_buffer(ops, queue, chains, count * sizeof(QdqChain)));
  }
  if (row) {
    HSCHED_RETURN_IF_ERROR(
        detail::set_args(kernel, name, a, b, b_scale, bias, residual, y, chain, shape));
    return detail::launch(queue, kernel, c.n * 64, wait, name);
  }
  HSCHED_RETURN_IF_ERROR(detail::set_args(kernel, name, a, b, b_scale, bias, residual, y, partial,
                                          detail::or_null(e.norm_scale),
                                          detail::or_null(e.norm_bias), shape));
  if (quantized) {  // matmul_qdq's chain after the common arguments
    HSCHED_RETURN_IF_ERROR(detail::set_args_from(kernel, name, kMatMulArgs, chain));
  }
  if (group != nullptr) {
    // Products 1-3 after the common arguments (the last one's again where fewer).
    const auto product = [&](size_t p) { return (*group)[std::min(p, group->size() - 1)]; };
    const auto bias_of = [&](size_t p) -> const cl::Buffer& {
      return detail::or_null(product(p).bias);
    };
    HSCHED_RETURN_IF_ERROR(detail::set_args_from(
        kernel, name, kMatMulArgs, *product(1).b, *product(2).b, *product(3).b, bias_of(1),
        bias_of(2), bias_of(3), *product(1).y, *product(2).y, *product(3).y));
  }
  const auto groups = [tile = tile](int64_t extent) {  // clang 14 captures no structured binding
    return static_cast<size_t>((extent + tile - 1) / tile);
  };
  HSCHED_ASSIGN_OR_RETURN(cl::Event event,
                          detail::launch_range(queue, kernel,
                                               cl::NDRange(groups(c.n) * 16, groups(c.m) * 16,
                                                           static_cast<size_t>(c.batch * splits)),
                                               cl::NDRange(16, 16, 1), wait, name));
  if (splits == 1) return event;
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel reduce,
                          detail::queue_kernel(ops, queue, "matmul_split_reduce"));
  HSCHED_RETURN_IF_ERROR(detail::set_args(reduce, "matmul_split_reduce", partial, b_scale, bias,
                                          residual, y, chain, shape, i32(count)));
  return detail::launch(queue, reduce, count, {}, "matmul_split_reduce");
}

Status check_clblast(clblast::StatusCode code, const char* op) {
  if (code == clblast::StatusCode::kSuccess) return Status::ok();
  return internal_error(std::string("ops: CLBlast GEMM for ") + op + " failed (status " +
                        std::to_string(static_cast<int>(code)) + ")");
}

// One row-major GEMM: c[m, n] (+)= alpha * op(a) op(b), a and b at element offsets.
struct GemmCall {
  bool trans_a = false;
  bool trans_b = false;
  size_t m = 0, n = 0, k = 0;
  size_t a_offset = 0, b_offset = 0, c_offset = 0;
  float alpha = 1.0f;
};

// CLBlast's temporary for a single GEMM of `call` (padded or transposed copies on its indirect
// path), as per-queue scratch: left to itself CLBlast creates and releases one per call, which
// stalls the host on NVIDIA (ops_scratch.h). Null when its direct kernel needs none.
Result<cl_mem> gemm_temp(const OpKernels& ops, cl::CommandQueue& queue, const GemmCall& call,
                         clblast::Transpose trans_a, clblast::Transpose trans_b, size_t lda,
                         size_t ldb, const char* op) {
  cl_command_queue raw_queue = queue();
  size_t bytes = 0;
  HSCHED_RETURN_IF_ERROR(check_clblast(
      clblast::GemmTempBufferSize<float>(clblast::Layout::kRowMajor, trans_a, trans_b, call.m,
                                         call.n, call.k, call.a_offset, lda, call.b_offset, ldb,
                                         call.c_offset, call.n, &raw_queue, bytes),
      op));
  if (bytes == 0) return static_cast<cl_mem>(nullptr);
  HSCHED_ASSIGN_OR_RETURN(
      cl::Buffer temp, detail::scratch_buffer(ops, queue, detail::ScratchSlot::kGemmTemp, bytes));
  return temp();  // the cache keeps the buffer alive
}

// A one-row product by B [N, K] (trans_b: a classifier's head, a PyTorch Linear): the gemv_rows
// kernel, a work group per output reading its row of B coalesced; CLBlast took 0.14 ms for
// MobileNet-V2's 1x1280 by 1000x1280 head on the H200 through its GEMM and its GEMV alike (5 MB of
// weights: 36 GB/s). `bias` (n values, times `beta`) may be null.
Result<cl::Event> gemv_rows(const OpKernels& ops, cl::CommandQueue& queue, const GemmCall& call,
                            const cl::Buffer& a, const cl::Buffer& b, cl::Buffer& c,
                            const cl::Buffer* bias = nullptr, float beta = 0.0f,
                            const Events& wait = {}) {
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, "gemv_rows"));
  HSCHED_RETURN_IF_ERROR(
      detail::set_args(kernel, "gemv_rows", a, static_cast<cl_int>(call.a_offset), b,
                       static_cast<cl_int>(call.b_offset), c, static_cast<cl_int>(call.c_offset),
                       static_cast<cl_int>(call.k), call.alpha, detail::or_null(bias),
                       static_cast<cl_int>(bias != nullptr), beta));
  return detail::launch(queue, kernel, static_cast<int64_t>(call.n) * 64, wait, "gemv_rows");
}

// One GEMM of `call`, or with `batch` > 1 a strided batch of them: A and B advance by their
// strides (0: the same matrix for every batch), C by m * n. The batched routine takes no
// temporary; its indirect path (only for large matrices: m * n * k at least CLBlast's
// XGEMM_MIN_INDIRECT_SIZE cubed) still allocates its own. One row by B [N, K] goes to gemv_rows().
Status gemm(const OpKernels& ops, cl::CommandQueue& queue, const GemmCall& call,
            const cl::Buffer& a, const cl::Buffer& b, cl::Buffer& c, cl::Event* event,
            const char* op, size_t batch = 1, size_t a_stride = 0, size_t b_stride = 0) {
  using clblast::Transpose;
  if (batch == 1 && call.m == 1 && call.trans_b) {
    HSCHED_ASSIGN_OR_RETURN(*event, gemv_rows(ops, queue, call, a, b, c));
    return Status::ok();
  }
  detail::not_replayable();  // CLBlast enqueues its own kernels
  cl_command_queue raw_queue = queue();
  cl_event raw_event = nullptr;
  const Transpose trans_a = call.trans_a ? Transpose::kYes : Transpose::kNo;
  const Transpose trans_b = call.trans_b ? Transpose::kYes : Transpose::kNo;
  // Row-major leading dimensions are the stored row lengths.
  const size_t lda = call.trans_a ? call.m : call.k;
  const size_t ldb = call.trans_b ? call.k : call.n;
  clblast::StatusCode code;
  if (batch == 1) {
    HSCHED_ASSIGN_OR_RETURN(cl_mem temp,
                            gemm_temp(ops, queue, call, trans_a, trans_b, lda, ldb, op));
    code =
        clblast::Gemm<float>(clblast::Layout::kRowMajor, trans_a, trans_b, call.m, call.n, call.k,
                             call.alpha, a(), call.a_offset, lda, b(), call.b_offset, ldb, 0.0f,
                             c(), call.c_offset, call.n, &raw_queue, &raw_event, temp);
  } else {
    code = clblast::GemmStridedBatched<float>(
        clblast::Layout::kRowMajor, trans_a, trans_b, call.m, call.n, call.k, call.alpha, a(),
        call.a_offset, lda, a_stride, b(), call.b_offset, ldb, b_stride, 0.0f, c(), call.c_offset,
        call.n, call.m * call.n, batch, &raw_queue, &raw_event);
  }
  HSCHED_RETURN_IF_ERROR(check_clblast(code, op));
  *event = cl::Event(raw_event);  // takes CLBlast's reference
  return Status::ok();
}

// The fp32 result buffer of `count` elements: y itself with fp32 storage, else per-queue scratch.
// Not zero-filled: every call passes beta 0, and CLBlast's GEMM kernels (direct, indirect and
// batched) then write alpha * AB without reading C, so stale contents (NaNs included) never
// reach the result (ops_test's outputs start as NaN).
Result<cl::Buffer> float_result(const OpKernels& ops, cl::CommandQueue& queue, cl::Buffer& y,
                                int64_t count) {
  if (ops.storage() == Storage::kFloat32) return y;
  return float_scratch(ops, queue, detail::ScratchSlot::kGemmResult, count);
}

// Converts an fp32 result back to storage (fp16 only) and returns the last event.
Result<cl::Event> finish(const OpKernels& ops, cl::CommandQueue& queue, const cl::Buffer& result,
                         cl::Buffer& y, int64_t count, cl::Event last) {
  if (ops.storage() == Storage::kFloat32) return last;
  return detail::enqueue_convert(ops, queue, result, y, count, true);
}

// y = 0 after `wait`: the product when there is nothing to sum (K = 0) or no output, which
// CLBlast refuses (zero sizes are invalid dimensions to it). All-zero bits are 0 in fp32 and fp16.
Result<cl::Event> zeros(const OpKernels& ops, cl::CommandQueue& queue, cl::Buffer& y, int64_t count,
                        const Events& wait) {
  detail::not_replayable();
  cl::Event event;
  const size_t bytes = static_cast<size_t>(count) * storage_bytes(ops.storage());
  const cl_int error = bytes == 0
                           ? queue.enqueueMarkerWithWaitList(&wait, &event)
                           : queue.enqueueFillBuffer(y, cl_uchar{0}, 0, bytes, &wait, &event);
  HSCHED_RETURN_IF_ERROR(check_cl(error, "zero fill of an empty product"));
  return event;
}

Status barrier(cl::CommandQueue& queue, const Events& wait) {
  if (wait.empty()) return Status::ok();
  detail::not_replayable();
  return check_cl(queue.enqueueBarrierWithWaitList(&wait), "barrier before GEMM");
}

// Gemm's y = alpha * A' B' (no C term) for non-empty sizes.
Result<cl::Event> gemm_product(const OpKernels& ops, cl::CommandQueue& queue, const cl::Buffer& a,
                               const cl::Buffer& b, const GemmParams& params, int64_t m, int64_t n,
                               int64_t k, cl::Buffer& y, const Events& wait) {
  HSCHED_RETURN_IF_ERROR(barrier(queue, wait));
  HSCHED_ASSIGN_OR_RETURN(cl::Buffer a32,
                          as_float(ops, queue, a, m * k, detail::ScratchSlot::kGemmA));
  HSCHED_ASSIGN_OR_RETURN(cl::Buffer b32,
                          as_float(ops, queue, b, k * n, detail::ScratchSlot::kGemmB));
  HSCHED_ASSIGN_OR_RETURN(cl::Buffer y32, float_result(ops, queue, y, m * n));
  const GemmCall call{.trans_a = params.trans_a,
                      .trans_b = params.trans_b,
                      .m = static_cast<size_t>(m),
                      .n = static_cast<size_t>(n),
                      .k = static_cast<size_t>(k),
                      .alpha = params.alpha};
  cl::Event last;
  HSCHED_RETURN_IF_ERROR(gemm(ops, queue, call, a32, b32, y32, &last, "Gemm"));
  return finish(ops, queue, y32, y, m * n, last);
}

// The batch broadcast of MatMul operands of (logical) shapes a [..., M, K] and b [..., K, N].
struct BatchLayout {
  Shape batch, a_full, b_full;  // the broadcast batch dims; each operand's, padded to its rank
  int64_t batches = 1;
  bool a_shared = false, b_shared = false;  // one matrix for every batch
  // Each operand either has every batch (stride: one matrix) or one matrix for all (stride 0):
  // one strided-batched product (attention's [B, H, M, K] x [B, H, K, N]), not a call per batch.
  bool regular = false;
};
Result<BatchLayout> batch_layout(const Shape& a_shape, const Shape& b_shape) {
  const Shape a_batch(a_shape.begin(), a_shape.end() - 2);
  const Shape b_batch(b_shape.begin(), b_shape.end() - 2);
  BatchLayout l;
  HSCHED_ASSIGN_OR_RETURN(l.batch, broadcast_shape(a_batch, b_batch));
  l.batches = element_count(l.batch);
  const size_t rank = l.batch.size();
  l.a_full.assign(rank - a_batch.size(), 1);
  l.b_full.assign(rank - b_batch.size(), 1);
  l.a_full.insert(l.a_full.end(), a_batch.begin(), a_batch.end());
  l.b_full.insert(l.b_full.end(), b_batch.begin(), b_batch.end());
  l.a_shared = element_count(a_batch) == 1;
  l.b_shared = element_count(b_batch) == 1;
  l.regular = (l.a_full == l.batch || l.a_shared) && (l.b_full == l.batch || l.b_shared);
  return l;
}

}  // namespace

bool tiled_matmul(const Shape& a_shape, const Shape& b_shape) {
  if (a_shape.size() < 2 || b_shape.size() < 2) return false;
  const int64_t m = a_shape[a_shape.size() - 2], k = a_shape.back(), n = b_shape.back();
  const auto layout = batch_layout(a_shape, b_shape);
  return b_shape[b_shape.size() - 2] == k && layout.is_ok() && layout->regular && m > 0 && n > 0 &&
         k > 0 && layout->batches > 0 && layout->batches * m * n * k <= kTiledMaxMacs;
}

namespace {

// A MatMul as enqueue_matmul runs it: its sizes, batch layout and, where one matmul_tiled launch
// runs it, that launch.
struct ProductPlan {
  int64_t m = 0, n = 0, k = 0, a_count = 0, b_count = 0, y_count = 0;
  BatchLayout layout;
  std::optional<TiledCall> tiled;
};

Result<ProductPlan> plan_product(const Shape& a_shape, const Shape& b_shape,
                                 const MatMulFusion& fusion) {
  // Operands read in place through views of their buffers: their shapes and strides.
  HSCHED_ASSIGN_OR_RETURN(const auto a_strides, detail::viewed_operand(fusion.a_view, a_shape));
  HSCHED_ASSIGN_OR_RETURN(const auto b_strides, detail::viewed_operand(fusion.b_view, b_shape));
  const Shape a_logical = fusion.a_view ? fusion.a_view->dims : a_shape;
  const Shape b_logical = fusion.b_view ? fusion.b_view->dims : b_shape;
  if (a_logical.size() < 2 || b_logical.size() < 2) {
    return invalid_argument("ops: MatMul needs operands of rank >= 2");
  }
  ProductPlan p;
  p.m = a_logical[a_logical.size() - 2];
  p.k = a_logical.back();
  p.n = b_logical.back();
  const int64_t m = p.m, n = p.n, k = p.k;
  if (b_logical[b_logical.size() - 2] != k) {
    return invalid_argument("ops: MatMul inner dims differ (" + std::to_string(k) + " vs " +
                            std::to_string(b_logical[b_logical.size() - 2]) + ")");
  }
  HSCHED_ASSIGN_OR_RETURN(p.layout, batch_layout(a_logical, b_logical));
  const int64_t batches = p.layout.batches;
  p.a_count = element_count(a_shape);
  p.b_count = element_count(b_shape);
  p.y_count = batches * m * n;
  HSCHED_RETURN_IF_ERROR(
      check_int_range(std::max({p.a_count, p.b_count, p.y_count}), "MatMul operand"));
  const bool a_shared = p.layout.a_shared, b_shared = p.layout.b_shared;
  const bool tiled = p.layout.regular && p.y_count * k <= kTiledMaxMacs;
  std::optional<OperandStrides> y_strides;
  if (!fusion.y_perm.empty()) {
    Shape y_logical = p.layout.batch;
    y_logical.insert(y_logical.end(), {m, n});
    y_strides = transposed_result(y_logical, fusion.y_perm);
    if (!y_strides) return invalid_argument("ops: MatMul cannot store this result transposed");
  }
  if ((a_strides || b_strides || y_strides) && !tiled && p.y_count * k > 0) {
    return invalid_argument("ops: a transposed MatMul operand or result needs the tiled kernel");
  }
  if ((fusion.quantized() || fusion.norm_scale != nullptr) && !tiled && p.y_count * k > 0) {
    return invalid_argument("ops: a quantized or normalizing MatMul needs the tiled kernel");
  }
  const bool norm_quantized = fusion.norm_q.x_scale > 0.0f;
  if (fusion.norm_scale != nullptr &&
      (fusion.a_view || fusion.a_chain.count > 0 || fusion.quantized() != norm_quantized ||
       (norm_quantized && !requantizes(fusion.norm_q)))) {
    return invalid_argument(
        "ops: a normalizing MatMul reads a dense A, quantized as its normalization is");
  }
  if (!tiled || p.y_count == 0 || k == 0) return p;
  const OperandStrides as = a_strides.value_or(OperandStrides{.batch = m * k, .row = k});
  const OperandStrides bs = b_strides.value_or(OperandStrides{.batch = k * n, .row = n});
  TiledCall call{.m = m,
                 .n = n,
                 .k = k,
                 .batch = batches,
                 .a_row = as.row,
                 .a_col = as.col,
                 .a_batch = a_shared ? 0 : as.batch,
                 .a_offset = fusion.a_view ? fusion.a_view->offset : 0,
                 .b_row = bs.row,
                 .b_col = bs.col,
                 .b_batch = b_shared ? 0 : bs.batch,
                 .b_offset = fusion.b_view ? fusion.b_view->offset : 0,
                 .y_row = y_strides ? y_strides->row : n,
                 .y_batch = y_strides ? y_strides->batch : m * n,
                 .fusion = fusion};
  // Shared B (weights): the batch folds into M where A's and y's rows run on across batches
  // (and a residual's).
  if (b_shared && !a_shared && as.batch == m * as.row && call.y_batch == m * call.y_row &&
      !fusion.residual_shared) {
    call.m = batches * m;
    call.batch = 1;
  }
  p.tiled = call;
  return p;
}

}  // namespace

namespace detail {

Result<cl::Event> enqueue_batched_product(const OpKernels& ops, cl::CommandQueue& queue,
                                          const cl::Buffer& a, const cl::Buffer& b, cl::Buffer& y,
                                          int64_t batch, int64_t m, int64_t n, int64_t k,
                                          const Events& wait) {
  HSCHED_RETURN_IF_ERROR(
      check_int_range(batch * std::max({m * k, k * n, m * n}), "batched product operand"));
  const TiledCall call{.m = m,
                       .n = n,
                       .k = k,
                       .batch = batch,
                       .a_row = k,
                       .a_batch = m * k,
                       .b_row = n,
                       .b_batch = k * n};
  return matmul_tiled(ops, queue, a, b, y, call, wait);
}

}  // namespace detail

Result<cl::Event> enqueue_matmul(const OpKernels& ops, cl::CommandQueue& queue, const cl::Buffer& a,
                                 const Shape& a_shape, const cl::Buffer& b, const Shape& b_shape,
                                 cl::Buffer& y, const Events& wait, const MatMulFusion& fusion) {
  HSCHED_ASSIGN_OR_RETURN(const ProductPlan p, plan_product(a_shape, b_shape, fusion));
  const int64_t m = p.m, n = p.n, k = p.k, a_count = p.a_count, b_count = p.b_count;
  const int64_t y_count = p.y_count, batches = p.layout.batches;
  const BatchLayout& layout = p.layout;
  const bool a_shared = layout.a_shared, b_shared = layout.b_shared;
  cl::Event last;
  if (y_count == 0 || k == 0) {
    HSCHED_ASSIGN_OR_RETURN(last, zeros(ops, queue, y, y_count, wait));
  } else if (p.tiled) {
    return matmul_tiled(ops, queue, a, b, y, *p.tiled, wait);
  } else {
    HSCHED_RETURN_IF_ERROR(barrier(queue, wait));
    HSCHED_ASSIGN_OR_RETURN(cl::Buffer a32,
                            as_float(ops, queue, a, a_count, detail::ScratchSlot::kGemmA));
    HSCHED_ASSIGN_OR_RETURN(cl::Buffer b32,
                            as_float(ops, queue, b, b_count, detail::ScratchSlot::kGemmB));
    HSCHED_ASSIGN_OR_RETURN(cl::Buffer y32, float_result(ops, queue, y, y_count));
    GemmCall call{.m = static_cast<size_t>(m),
                  .n = static_cast<size_t>(n),
                  .k = static_cast<size_t>(k),
                  .alpha = fusion.alpha};
    if (b_shared && element_count(layout.a_full) == batches) {
      // Shared B (weights): the batch folds into M, one GEMM.
      call.m = static_cast<size_t>(batches * m);
      HSCHED_RETURN_IF_ERROR(gemm(ops, queue, call, a32, b32, y32, &last, "MatMul"));
    } else if (layout.regular) {
      const size_t a_stride = a_shared ? 0 : static_cast<size_t>(m * k);
      const size_t b_stride = b_shared ? 0 : static_cast<size_t>(k * n);
      HSCHED_RETURN_IF_ERROR(gemm(ops, queue, call, a32, b32, y32, &last, "MatMul",
                                  static_cast<size_t>(batches), a_stride, b_stride));
    } else {
      // General batch broadcasting: one GEMM per output batch, at broadcast offsets.
      for (int64_t index = 0; index < batches; ++index) {
        int64_t rest = index, a_index = 0, b_index = 0, a_stride = 1, b_stride = 1;
        for (size_t d = layout.batch.size(); d-- > 0;) {
          const int64_t coord = rest % layout.batch[d];
          rest /= layout.batch[d];
          if (layout.a_full[d] != 1) a_index += coord * a_stride;
          if (layout.b_full[d] != 1) b_index += coord * b_stride;
          a_stride *= layout.a_full[d];
          b_stride *= layout.b_full[d];
        }
        call.a_offset = static_cast<size_t>(a_index * m * k);
        call.b_offset = static_cast<size_t>(b_index * k * n);
        call.c_offset = static_cast<size_t>(index * m * n);
        HSCHED_RETURN_IF_ERROR(gemm(ops, queue, call, a32, b32, y32, &last, "MatMul"));
      }
    }
    HSCHED_ASSIGN_OR_RETURN(last, finish(ops, queue, y32, y, y_count, last));
  }
  // The rest of the epilogue in place (each work item reads only its own y element).
  if (fusion.bias != nullptr) {
    HSCHED_ASSIGN_OR_RETURN(
        last, detail::enqueue_scaled_binary(ops, queue, BinaryOp::kAdd, y,
                                            {y_count / std::max<int64_t>(n, 1), n}, *fusion.bias,
                                            {n}, 1.0f, y, {last}));
  }
  if (fusion.residual != nullptr) {
    const Shape per_batch{y_count / std::max<int64_t>(m * n, 1), m * n};
    HSCHED_ASSIGN_OR_RETURN(
        last, detail::enqueue_scaled_binary(
                  ops, queue, BinaryOp::kAdd, y, per_batch, *fusion.residual,
                  fusion.residual_shared ? Shape{m * n} : per_batch, 1.0f, y, {last}));
  }
  if (!fusion.activation) return last;
  const Activation& act = *fusion.activation;
  return enqueue_unary(ops, queue, act.op, act.alpha, act.beta, y, y, y_count, {last});
}

Result<cl::Event> enqueue_matmul_group(const OpKernels& ops, cl::CommandQueue& queue,
                                       const cl::Buffer& a, const Shape& a_shape,
                                       const Shape& b_shape,
                                       const std::vector<GroupedProduct>& products,
                                       const Events& wait, const MatMulFusion& fusion) {
  if (products.empty() || products.size() > kMaxGroupedProducts || fusion.bias != nullptr ||
      fusion.residual != nullptr || fusion.activation || !fusion.y_perm.empty() || fusion.b_view ||
      fusion.norm_scale != nullptr) {
    return invalid_argument("ops: a MatMul group takes 1 to " +
                            std::to_string(kMaxGroupedProducts) +
                            " products of A's view and a factor alone");
  }
  for (const GroupedProduct& product : products) {
    if (product.b == nullptr || product.y == nullptr) {
      return invalid_argument("ops: a MatMul group's product lacks B or its result");
    }
  }
  HSCHED_ASSIGN_OR_RETURN(const ProductPlan p, plan_product(a_shape, b_shape, fusion));
  const bool biased = products[0].bias != nullptr;
  const bool one_launch =
      products.size() > 1 && p.tiled && p.tiled->batch == 1 &&
      std::all_of(products.begin(), products.end(),
                  [&](const GroupedProduct& q) { return (q.bias != nullptr) == biased; });
  if (one_launch) {
    TiledCall call = *p.tiled;
    call.batch = static_cast<int64_t>(products.size());
    call.a_batch = call.b_batch = call.y_batch = 0;
    call.fusion.bias = products[0].bias;
    return matmul_tiled(ops, queue, a, *products[0].b, *products[0].y, call, wait, &products);
  }
  // Else each alone; the in-order queue finishes them before the last one's event.
  cl::Event last;
  for (const GroupedProduct& product : products) {
    MatMulFusion each = fusion;
    each.bias = product.bias;
    HSCHED_ASSIGN_OR_RETURN(
        last, enqueue_matmul(ops, queue, a, a_shape, *product.b, b_shape, *product.y, wait, each));
  }
  return last;
}

Result<cl::Event> enqueue_gemm(const OpKernels& ops, cl::CommandQueue& queue, const cl::Buffer& a,
                               const Shape& a_shape, const cl::Buffer& b, const Shape& b_shape,
                               const cl::Buffer* c, const Shape& c_shape, const GemmParams& params,
                               cl::Buffer& y, const Events& wait) {
  if (a_shape.size() != 2 || b_shape.size() != 2) {
    return invalid_argument("ops: Gemm needs rank-2 A and B");
  }
  const int64_t m = params.trans_a ? a_shape[1] : a_shape[0];
  const int64_t k = params.trans_a ? a_shape[0] : a_shape[1];
  const int64_t kb = params.trans_b ? b_shape[1] : b_shape[0];
  const int64_t n = params.trans_b ? b_shape[0] : b_shape[1];
  if (k != kb) {
    return invalid_argument("ops: Gemm inner dims differ (" + std::to_string(k) + " vs " +
                            std::to_string(kb) + ")");
  }
  const int64_t a_count = m * k, b_count = k * n, y_count = m * n;
  HSCHED_RETURN_IF_ERROR(check_int_range(std::max({a_count, b_count, y_count}), "Gemm operand"));
  if (c) HSCHED_RETURN_IF_ERROR(broadcast_shape(c_shape, {m, n}).status());

  const bool bias_row = c && element_count(c_shape) == n &&
                        (c_shape.size() == 1 || (c_shape.size() == 2 && c_shape[0] == 1));
  cl::Event last;
  if (y_count == 0 || k == 0) {
    HSCHED_ASSIGN_OR_RETURN(last, zeros(ops, queue, y, y_count, wait));
  } else if (m == 1 && params.trans_b && ops.storage() == Storage::kFloat32) {
    // One row by B [N, K] (a classifier's head): gemv_rows, a bias row of C in it.
    const GemmCall call{.trans_a = params.trans_a,
                        .trans_b = true,
                        .m = 1,
                        .n = static_cast<size_t>(n),
                        .k = static_cast<size_t>(k),
                        .alpha = params.alpha};
    HSCHED_ASSIGN_OR_RETURN(
        last, gemv_rows(ops, queue, call, a, b, y, bias_row ? c : nullptr, params.beta, wait));
    if (bias_row) return last;
  } else if (m * n * k <= kTiledMaxMacs && !(m == 1 && params.trans_b)) {
    // (One row by B [N, K] stays with gemv_rows: a classifier's head.) Stored A is [m, k] or,
    // transposed, [k, m]; B [k, n] or [n, k]. A C of one row is the kernel's bias.
    TiledCall call{.m = m, .n = n, .k = k, .fusion = {.alpha = params.alpha}};
    call.a_row = params.trans_a ? 1 : k;
    call.a_col = params.trans_a ? m : 1;
    call.b_row = params.trans_b ? 1 : n;
    call.b_col = params.trans_b ? k : 1;
    const bool fused = bias_row && params.beta == 1.0f;
    if (fused) call.fusion.bias = c;
    HSCHED_ASSIGN_OR_RETURN(last, matmul_tiled(ops, queue, a, b, y, call, wait));
    if (fused) return last;
  } else {
    HSCHED_ASSIGN_OR_RETURN(last, gemm_product(ops, queue, a, b, params, m, n, k, y, wait));
  }
  if (!c || params.beta == 0.0f) return last;
  // y += beta * C in the storage type, in place (each work item reads only its own y element).
  return detail::enqueue_scaled_binary(ops, queue, BinaryOp::kAdd, y, {m, n}, *c, c_shape,
                                       params.beta, y, {last});
}

}  // namespace hsched::opencl
