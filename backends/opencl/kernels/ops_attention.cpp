// Attention in one launch (enqueue_attention, ops.h): the spatial program's attention_rows.
#include <algorithm>
#include <optional>
#include <string>

#include "backends/opencl/kernels/ops.h"
#include "backends/opencl/kernels/ops_scratch.h"
#include "backends/opencl/kernels/ops_util.h"

namespace hsched::opencl {
namespace {

using detail::element_count;

// Mirrors AttentionShape in kernel_sources_matmul.h.
struct AttentionShape {
  cl_int m, n, d, dv;
  cl_int q_row, q_col, q_batch, q_offset, k_row, k_col, k_batch, k_offset;
  cl_int v_row, v_col, v_batch, v_offset, y_row, y_batch, mask_batch, has_mask, replace_nan;
  cl_float alpha, out_alpha, nan_value;
};
constexpr int64_t kRowsPerGroup = 4;  // ATT_ROWS
constexpr size_t kGroupItems = 256;   // ATT_GROUP

Shape batch_dims(const Shape& shape) { return Shape(shape.begin(), shape.end() - 2); }

// The strides of an operand of logical shape `logical`: through its view of a buffer of shape
// `buffer`, or dense; batch stride 0 where one matrix serves every batch.
Result<OperandStrides> strides_of(const std::optional<StridedView>& view, const Shape& logical,
                                  const Shape& buffer) {
  HSCHED_ASSIGN_OR_RETURN(const auto viewed, detail::viewed_operand(view, buffer));
  const int64_t rows = logical[logical.size() - 2], cols = logical.back();
  OperandStrides s = viewed.value_or(OperandStrides{.batch = rows * cols, .row = cols});
  if (!view && element_count(buffer) != element_count(logical)) {
    return invalid_argument("ops: an attention operand's buffer does not match its shape");
  }
  if (element_count(batch_dims(logical)) == 1) s.batch = 0;
  return s;
}

}  // namespace

bool fused_attention_fits(const Shape& q_shape, const Shape& k_shape, const Shape& v_shape) {
  if (!tiled_matmul(q_shape, k_shape) || v_shape.size() < 2) return false;
  const auto batch = broadcast_shape(batch_dims(q_shape), batch_dims(k_shape));
  if (!batch.is_ok()) return false;
  Shape weights = *batch;
  weights.insert(weights.end(), {q_shape[q_shape.size() - 2], k_shape.back()});
  const auto both = broadcast_shape(*batch, batch_dims(v_shape));
  return tiled_matmul(weights, v_shape) && both.is_ok() && *both == *batch &&
         k_shape.back() <= kMaxAttentionKeys && q_shape.back() <= kMaxAttentionDepth;
}

Result<cl::Event> enqueue_attention(const OpKernels& ops, cl::CommandQueue& queue,
                                    const cl::Buffer& q, const Shape& q_shape, const cl::Buffer& k,
                                    const Shape& k_shape, const cl::Buffer& v, const Shape& v_shape,
                                    cl::Buffer& y, const AttentionFusion& fusion,
                                    const Events& wait) {
  const Shape ql = fusion.q_view ? fusion.q_view->dims : q_shape;
  const Shape kl = fusion.k_view ? fusion.k_view->dims : k_shape;
  const Shape vl = fusion.v_view ? fusion.v_view->dims : v_shape;
  if (!fused_attention_fits(ql, kl, vl)) {
    return invalid_argument("ops: these attention shapes need its MatMuls and Softmax apart");
  }
  HSCHED_ASSIGN_OR_RETURN(const OperandStrides qs, strides_of(fusion.q_view, ql, q_shape));
  HSCHED_ASSIGN_OR_RETURN(const OperandStrides ks, strides_of(fusion.k_view, kl, k_shape));
  HSCHED_ASSIGN_OR_RETURN(const OperandStrides vs, strides_of(fusion.v_view, vl, v_shape));
  HSCHED_ASSIGN_OR_RETURN(Shape y_logical, broadcast_shape(batch_dims(ql), batch_dims(kl)));
  const int64_t batches = element_count(y_logical);
  const int64_t m = ql[ql.size() - 2], d = ql.back(), n = kl.back(), dv = vl.back();
  y_logical.insert(y_logical.end(), {m, dv});
  OperandStrides ys{.batch = m * dv, .row = dv};
  if (!fusion.y_perm.empty()) {
    const auto stored = transposed_result(y_logical, fusion.y_perm);
    if (!stored) return invalid_argument("ops: attention cannot store this result transposed");
    ys = *stored;
  }
  HSCHED_RETURN_IF_ERROR(detail::check_int_range(batches * m * std::max(n, dv), "attention"));
  const int64_t mask_count = fusion.mask ? element_count(fusion.mask_shape) : 0;
  if (fusion.mask != nullptr && mask_count != m * n && mask_count != batches * m * n) {
    return invalid_argument("ops: an attention mask of " + std::to_string(mask_count) +
                            " elements for scores of " + std::to_string(batches * m * n));
  }
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, "attention_rows"));
  const auto i32 = [](int64_t value) { return static_cast<cl_int>(value); };
  const AttentionShape shape{i32(m),
                             i32(n),
                             i32(d),
                             i32(dv),
                             i32(qs.row),
                             i32(qs.col),
                             i32(qs.batch),
                             i32(fusion.q_view ? fusion.q_view->offset : 0),
                             i32(ks.row),
                             i32(ks.col),
                             i32(ks.batch),
                             i32(fusion.k_view ? fusion.k_view->offset : 0),
                             i32(vs.row),
                             i32(vs.col),
                             i32(vs.batch),
                             i32(fusion.v_view ? fusion.v_view->offset : 0),
                             i32(ys.row),
                             i32(ys.batch),
                             i32(mask_count == batches * m * n ? m * n : 0),
                             i32(fusion.mask != nullptr),
                             i32(fusion.nan_to.has_value()),
                             fusion.alpha,
                             fusion.out_alpha,
                             fusion.nan_to.value_or(0.0f)};
  HSCHED_RETURN_IF_ERROR(
      detail::set_args(kernel, "attention_rows", q, k, v, detail::or_null(fusion.mask), y, shape));
  const auto row_groups = static_cast<size_t>((m + kRowsPerGroup - 1) / kRowsPerGroup);
  return detail::launch_range(queue, kernel,
                              cl::NDRange(row_groups * kGroupItems, static_cast<size_t>(batches)),
                              cl::NDRange(kGroupItems, 1), wait, "attention_rows");
}

}  // namespace hsched::opencl
