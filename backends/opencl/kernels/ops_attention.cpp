// Attention's two products and Softmax in one launch (enqueue_attention, ops.h): the spatial
// program's attention_rows kernel (kernel_sources_matmul.h), each operand read where
// enqueue_matmul's launch would read it (tiled_call).
#include "backends/opencl/kernels/ops.h"
#include "backends/opencl/kernels/ops_matmul.h"
#include "backends/opencl/kernels/ops_scratch.h"
#include "backends/opencl/kernels/ops_util.h"

namespace hsched::opencl {
namespace {

using detail::element_count;
using detail::TiledCall;

// attention_rows' ATTN_ROWS, ATTN_MAX_DEPTH and ATTN_MAX_KEYS: a work group's query rows, and
// the depths and keys its local memory holds (18 KB).
constexpr int64_t kAttentionRows = 4;
constexpr int64_t kAttentionMaxDepth = 128;
constexpr int64_t kAttentionMaxKeys = 512;

// Mirrors AttentionShape in kernel_sources_matmul.h.
struct AttentionShape {
  cl_int sq, sk, d, dv;
  cl_int q_row, q_col, q_batch, q_offset, k_row, k_col, k_batch, k_offset;
  cl_int v_row, v_col, v_batch, v_offset, y_row, y_batch, mask_batch, has_mask, replace_nan;
  cl_float alpha, nan_value;
};

// The scores' launch (Q K^T, the mask as its residual) and the output's (P V) as enqueue_matmul
// would make them: nullopt unless each is one matmul_tiled launch, over the same batches, with Sq
// rows each (no batch folded into M), P read dense, within the kernel's limits.
struct AttentionPlan {
  TiledCall scores, output;
  bool mask_shared = false;
};

std::optional<AttentionPlan> plan_attention(const Shape& q_shape, const Shape& k_shape,
                                            const Shape& v_shape, const AttentionFusion& f) {
  const Shape& s = f.scores_shape;
  if (s.size() < 2) return std::nullopt;
  const int64_t sq = s[s.size() - 2], sk = s.back(), count = element_count(s);
  AttentionPlan plan;
  plan.mask_shared = f.mask_shape && element_count(*f.mask_shape) != count;
  if (f.mask_shape && plan.mask_shared && element_count(*f.mask_shape) != sq * sk) {
    return std::nullopt;
  }
  const auto scores = detail::tiled_call(q_shape, k_shape,
                                         {.a_view = f.q_view,
                                          .b_view = f.k_view,
                                          .alpha = f.alpha,
                                          .residual_shared = plan.mask_shared});
  const auto output = detail::tiled_call(s, v_shape, {.b_view = f.v_view, .y_perm = f.y_perm});
  if (!scores || !output || scores->m != sq || scores->n != sk ||
      scores->batch * sq * sk != count || output->batch != scores->batch || output->m != sq ||
      output->k != sk || output->a_row != sk || output->a_col != 1 || output->a_offset != 0 ||
      (output->batch > 1 && output->a_batch != sq * sk) || scores->k > kAttentionMaxDepth ||
      output->n > kAttentionMaxDepth || sk > kAttentionMaxKeys) {
    return std::nullopt;
  }
  plan.scores = *scores;
  plan.output = *output;
  return plan;
}

}  // namespace

bool fits_attention(const Shape& q_shape, const Shape& k_shape, const Shape& v_shape,
                    const AttentionFusion& fusion) {
  return plan_attention(q_shape, k_shape, v_shape, fusion).has_value();
}

Result<cl::Event> enqueue_attention(const OpKernels& ops, cl::CommandQueue& queue,
                                    const cl::Buffer& q, const Shape& q_shape, const cl::Buffer& k,
                                    const Shape& k_shape, const cl::Buffer& v, const Shape& v_shape,
                                    cl::Buffer& y, const AttentionFusion& fusion,
                                    const Events& wait) {
  const auto plan = plan_attention(q_shape, k_shape, v_shape, fusion);
  if (!plan || fusion.mask_shape.has_value() != (fusion.mask != nullptr)) {
    return invalid_argument("ops: attention of these operands needs its products apart");
  }
  const TiledCall& s = plan->scores;
  const TiledCall& o = plan->output;
  const auto i32 = [](int64_t value) { return static_cast<cl_int>(value); };
  const AttentionShape shape{i32(s.m),
                             i32(s.n),
                             i32(s.k),
                             i32(o.n),
                             i32(s.a_row),
                             i32(s.a_col),
                             i32(s.a_batch),
                             i32(s.a_offset),
                             i32(s.b_row),
                             i32(s.b_col),
                             i32(s.b_batch),
                             i32(s.b_offset),
                             i32(o.b_row),
                             i32(o.b_col),
                             i32(o.b_batch),
                             i32(o.b_offset),
                             i32(o.y_row),
                             i32(o.y_batch),
                             i32(plan->mask_shared ? 0 : s.m * s.n),
                             i32(fusion.mask != nullptr),
                             i32(fusion.nan_to.has_value()),
                             fusion.alpha,
                             fusion.nan_to.value_or(0.0f)};
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, "attention_rows"));
  HSCHED_RETURN_IF_ERROR(
      detail::set_args(kernel, "attention_rows", q, k, detail::or_null(fusion.mask), v, y, shape));
  const auto blocks = static_cast<size_t>((s.m + kAttentionRows - 1) / kAttentionRows);
  return detail::launch_range(queue, kernel,
                              cl::NDRange(blocks * 256, static_cast<size_t>(s.batch)),
                              cl::NDRange(256, 1), wait, "attention_rows");
}

}  // namespace hsched::opencl
