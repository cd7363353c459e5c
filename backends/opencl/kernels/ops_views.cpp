// Operands and results read or written in place through strided views (ops.h transposed_view,
// operand_strides, transposed_result; ops_util.h viewed_operand): MatMul's and attention's.
#include "backends/opencl/kernels/ops.h"
#include "backends/opencl/kernels/ops_util.h"

namespace hsched::opencl {
namespace {

Shape permuted(const Shape& shape, const std::vector<int64_t>& perm) {
  if (perm.empty()) return shape;
  Shape out;
  for (int64_t axis : perm) out.push_back(shape[static_cast<size_t>(axis)]);
  return out;
}

}  // namespace

std::optional<StridedView> transposed_view(const Shape& x_shape, const std::vector<int64_t>& perm) {
  const size_t rank = perm.size();
  if (x_shape.size() != rank) return std::nullopt;
  std::vector<int64_t> dense(rank, 1);  // x's strides
  for (size_t d = rank; d-- > 1;) dense[d - 1] = dense[d] * x_shape[d];
  StridedView view;
  std::vector<bool> seen(rank, false);
  for (int64_t axis : perm) {
    if (axis < 0 || axis >= static_cast<int64_t>(rank) || seen[static_cast<size_t>(axis)]) {
      return std::nullopt;
    }
    seen[static_cast<size_t>(axis)] = true;
    view.dims.push_back(x_shape[static_cast<size_t>(axis)]);
    view.strides.push_back(dense[static_cast<size_t>(axis)]);
  }
  return view;
}

std::optional<OperandStrides> operand_strides(const StridedView& view) {
  const size_t rank = view.dims.size();
  if (rank < 2 || view.strides.size() != rank) return std::nullopt;
  OperandStrides s{.batch = 0, .row = view.strides[rank - 2], .col = view.strides[rank - 1]};
  int64_t span = 1;  // batches the stride covers so far
  for (size_t d = rank - 2; d-- > 0;) {
    if (view.dims[d] == 1) continue;
    if (s.batch == 0) {
      s.batch = view.strides[d];
    } else if (view.strides[d] != s.batch * span) {
      return std::nullopt;
    }
    span *= view.dims[d];
  }
  return s;
}

std::optional<OperandStrides> transposed_result(const Shape& y_shape,
                                                const std::vector<int64_t>& perm) {
  if (perm.size() != y_shape.size() || perm.size() < 2) return std::nullopt;
  // y is Transpose(stored, inverse) read in place.
  std::vector<int64_t> inverse(perm.size(), -1);
  for (size_t d = 0; d < perm.size(); ++d) {
    if (perm[d] < 0 || perm[d] >= static_cast<int64_t>(perm.size()) ||
        inverse[static_cast<size_t>(perm[d])] != -1) {
      return std::nullopt;
    }
    inverse[static_cast<size_t>(perm[d])] = static_cast<int64_t>(d);
  }
  const auto view = transposed_view(permuted(y_shape, perm), inverse);
  const auto strides = view ? operand_strides(*view) : std::nullopt;
  if (!strides || strides->col != 1) return std::nullopt;
  return strides;
}

namespace detail {

Result<std::optional<OperandStrides>> viewed_operand(const std::optional<StridedView>& view,
                                                     const Shape& buffer) {
  if (!view) return std::optional<OperandStrides>();
  const auto strides = operand_strides(*view);
  int64_t last = view->offset;  // the view's last element
  bool inside = strides.has_value() && view->offset >= 0;
  for (size_t d = 0; inside && d < view->dims.size(); ++d) {
    inside = view->dims[d] > 0 && view->strides[d] >= 0;
    if (inside) last += (view->dims[d] - 1) * view->strides[d];
  }
  if (!inside || last >= element_count(buffer)) {
    return invalid_argument(
        "ops: MatMul cannot read an operand in place through this view of a "
        "buffer of " +
        std::to_string(element_count(buffer)) + " elements");
  }
  return strides;
}

}  // namespace detail

}  // namespace hsched::opencl
