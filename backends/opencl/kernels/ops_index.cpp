#include "backends/opencl/kernels/ops_index.h"

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "backends/opencl/kernels/ops_integer.h"
#include "backends/opencl/kernels/ops_scratch.h"
#include "backends/opencl/kernels/ops_util.h"

namespace hsched::opencl {
namespace {

using detail::kMaxRank;

// Mirrors IndexMap in kernel_sources_index.h.
struct IndexMap {
  std::array<cl_int, kMaxRank> dims;
  std::array<cl_int, kMaxRank> in_dims;
  std::array<cl_int, kMaxRank> in_strides;
  std::array<cl_int, kMaxRank> begin;
};

// Mirrors ElementsMap and NdMap in kernel_sources_index.h.
struct ElementsMap {
  std::array<cl_int, kMaxRank> dims;
  std::array<cl_int, kMaxRank> x_strides;
  cl_int axis;
  cl_int axis_dim;
};
struct NdMap {
  std::array<cl_int, kMaxRank> x_dims;
  std::array<cl_int, kMaxRank> x_strides;
  cl_int k;
  cl_int batch_dims;
  cl_int slice;
  cl_int rows_per_batch;
  cl_int batch_stride;
};

// `base` for `dtype`: base (the storage type), base_i32 or base_i64.
std::string kernel_for(const char* base, DType dtype) {
  if (!integer_dtype(dtype)) return base;
  return std::string(base) + (dtype == DType::kI32 ? "_i32" : "_i64");
}

std::vector<int64_t> row_major_strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

Status check_ranks(const Shape& a, const Shape& b, const char* op) {
  if (a.size() > kMaxRank || b.size() > kMaxRank) {
    return invalid_argument(std::string("ops: ") + op + " of rank > 6");
  }
  HSCHED_RETURN_IF_ERROR(detail::check_int_range(detail::element_count(a), op));
  return detail::check_int_range(detail::element_count(b), op);
}

// GatherElements/ScatterElements' map over the indices' shape. Adjacent axes off the gather
// axis merge where the inner one is as long in the indices as in the data (a rank-7 loss's
// trailing axes), so that ranks past 6 may still fit the kernel.
Result<ElementsMap> elements_map(const Shape& x_shape, const Shape& idx_shape, int64_t axis,
                                 const char* op) {
  HSCHED_ASSIGN_OR_RETURN(size_t a, detail::normalize_axis(axis, x_shape.size(), op));
  if (idx_shape.size() != x_shape.size()) {
    return invalid_argument(std::string("ops: ") + op + " indices of another rank than the data");
  }
  HSCHED_RETURN_IF_ERROR(detail::check_int_range(detail::element_count(x_shape), op));
  HSCHED_RETURN_IF_ERROR(detail::check_int_range(detail::element_count(idx_shape), op));
  // (data dim, indices dim) per merged axis, outermost first, and where the gather axis went.
  std::vector<std::pair<int64_t, int64_t>> dims;
  size_t merged_axis = 0;
  for (size_t d = 0; d < x_shape.size(); ++d) {
    const bool mergeable = !dims.empty() && d != a && d - 1 != a && x_shape[d] == idx_shape[d];
    if (mergeable) {
      dims.back() = {dims.back().first * x_shape[d], dims.back().second * idx_shape[d]};
      continue;
    }
    if (d == a) merged_axis = dims.size();
    dims.emplace_back(x_shape[d], idx_shape[d]);
  }
  const size_t rank = dims.size();
  if (rank > kMaxRank) return invalid_argument(std::string("ops: ") + op + " of rank > 6");
  ElementsMap map{};
  map.dims.fill(1);
  map.x_strides.fill(0);
  const size_t pad = kMaxRank - rank;
  int64_t stride = 1;
  for (size_t d = rank; d-- > 0;) {
    map.dims[pad + d] = static_cast<cl_int>(dims[d].second);
    map.x_strides[pad + d] = static_cast<cl_int>(stride);
    stride *= dims[d].first;
  }
  map.axis = static_cast<cl_int>(pad + merged_axis);
  map.axis_dim = static_cast<cl_int>(x_shape[a]);
  return map;
}

// GatherND/ScatterND's map: k index axes after `batch_dims` batch axes.
Result<NdMap> nd_map(const Shape& x_shape, const Shape& idx_shape, int64_t batch_dims,
                     const char* op) {
  HSCHED_RETURN_IF_ERROR(check_ranks(x_shape, idx_shape, op));
  if (idx_shape.empty() || batch_dims < 0 || static_cast<size_t>(batch_dims) >= idx_shape.size() ||
      static_cast<size_t>(batch_dims) + static_cast<size_t>(idx_shape.back()) > x_shape.size()) {
    return invalid_argument(std::string("ops: ") + op + " indices do not fit the data");
  }
  NdMap map{};
  const std::vector<int64_t> strides = row_major_strides(x_shape);
  for (size_t d = 0; d < x_shape.size(); ++d) {
    map.x_dims[d] = static_cast<cl_int>(x_shape[d]);
    map.x_strides[d] = static_cast<cl_int>(strides[d]);
  }
  const auto b = static_cast<size_t>(batch_dims);
  map.k = static_cast<cl_int>(idx_shape.back());
  map.batch_dims = static_cast<cl_int>(b);
  int64_t slice = 1, batches = 1, rows = 1;
  for (size_t d = b + static_cast<size_t>(map.k); d < x_shape.size(); ++d) slice *= x_shape[d];
  for (size_t d = 0; d < b; ++d) batches *= x_shape[d];
  for (size_t d = 0; d + 1 < idx_shape.size(); ++d) rows *= idx_shape[d];
  map.slice = static_cast<cl_int>(slice);
  map.rows_per_batch = static_cast<cl_int>(batches > 0 ? std::max<int64_t>(rows / batches, 1) : 1);
  map.batch_stride = static_cast<cl_int>(b > 0 ? strides[b - 1] : 0);
  return map;
}

// y = x (a copy on the queue), for the scatters.
Result<cl::Event> copy_into(const OpKernels& ops, cl::CommandQueue& queue, DType dtype,
                            const cl::Buffer& x, const Shape& shape, cl::Buffer& y,
                            const Events& wait) {
  detail::not_replayable();  // a copy
  cl::Event event;
  const auto bytes =
      static_cast<size_t>(detail::element_count(shape)) * held_bytes(ops.storage(), dtype);
  const cl_int error = bytes == 0 ? queue.enqueueMarkerWithWaitList(&wait, &event)
                                  : queue.enqueueCopyBuffer(x, y, 0, 0, bytes, &wait, &event);
  HSCHED_RETURN_IF_ERROR(detail::check_cl(error, "copy before a scatter"));
  return event;
}

}  // namespace

bool elements_fit(const Shape& x_shape, const Shape& idx_shape, int64_t axis) {
  return elements_map(x_shape, idx_shape, axis, "GatherElements").is_ok();
}

Result<cl::Event> enqueue_gather_by(const OpKernels& ops, cl::CommandQueue& queue,
                                    const cl::Buffer& x, const Shape& shape, int64_t axis,
                                    const cl::Buffer& idx, DType idx_dtype, int64_t idx_count,
                                    const cl::Buffer& error, cl::Buffer& y, const Events& wait) {
  HSCHED_ASSIGN_OR_RETURN(size_t a, detail::normalize_axis(axis, shape.size(), "Gather"));
  if (idx_dtype != DType::kI32 && idx_dtype != DType::kI64) {
    return invalid_argument("ops: Gather indices of " + std::string(dtype_name(idx_dtype)));
  }
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < a; ++d) outer *= shape[d];
  for (size_t d = a + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t count = outer * idx_count * inner;
  HSCHED_RETURN_IF_ERROR(
      detail::check_int_range(std::max(count, detail::element_count(shape)), "Gather operand"));
  const char* name = idx_dtype == DType::kI32 ? "gather_rows_by_i32" : "gather_rows_by_i64";
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, name));
  HSCHED_RETURN_IF_ERROR(detail::set_args(kernel, name, x, y, idx, static_cast<cl_int>(idx_count),
                                          static_cast<cl_int>(inner), static_cast<cl_int>(shape[a]),
                                          error, static_cast<cl_int>(count)));
  return detail::launch(queue, kernel, count, wait, name);
}

Result<cl::Event> enqueue_gather_elements(const OpKernels& ops, cl::CommandQueue& queue,
                                          DType dtype, const cl::Buffer& x, const Shape& x_shape,
                                          const cl::Buffer& idx, const Shape& idx_shape,
                                          int64_t axis, const cl::Buffer& error, cl::Buffer& y,
                                          const Events& wait) {
  HSCHED_ASSIGN_OR_RETURN(ElementsMap map,
                          elements_map(x_shape, idx_shape, axis, "GatherElements"));
  const std::string name = kernel_for("gather_elements", dtype);
  const int64_t count = detail::element_count(idx_shape);
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, name.c_str()));
  HSCHED_RETURN_IF_ERROR(
      detail::set_args(kernel, name.c_str(), x, idx, y, map, error, static_cast<cl_int>(count)));
  return detail::launch(queue, kernel, count, wait, name.c_str());
}

Result<cl::Event> enqueue_scatter_elements(const OpKernels& ops, cl::CommandQueue& queue,
                                           DType dtype, const cl::Buffer& x, const Shape& x_shape,
                                           const cl::Buffer& idx, const Shape& idx_shape,
                                           const cl::Buffer& updates, int64_t axis,
                                           ScatterReduction reduction, const cl::Buffer& error,
                                           cl::Buffer& y, const Events& wait) {
  HSCHED_ASSIGN_OR_RETURN(ElementsMap map,
                          elements_map(x_shape, idx_shape, axis, "ScatterElements"));
  HSCHED_ASSIGN_OR_RETURN(cl::Event copied, copy_into(ops, queue, dtype, x, x_shape, y, wait));
  const std::string name = kernel_for("scatter_elements", dtype);
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, name.c_str()));
  HSCHED_RETURN_IF_ERROR(
      detail::set_args(kernel, name.c_str(), y, idx, updates, map, static_cast<cl_int>(reduction),
                       error, static_cast<cl_int>(detail::element_count(idx_shape)), cl_int{1}));
  return detail::launch(queue, kernel, 1, {copied}, name.c_str());
}

Result<cl::Event> enqueue_gather_nd(const OpKernels& ops, cl::CommandQueue& queue, DType dtype,
                                    const cl::Buffer& x, const Shape& x_shape,
                                    const cl::Buffer& idx, const Shape& idx_shape,
                                    int64_t batch_dims, const cl::Buffer& error, cl::Buffer& y,
                                    const Shape& y_shape, const Events& wait) {
  HSCHED_ASSIGN_OR_RETURN(NdMap map, nd_map(x_shape, idx_shape, batch_dims, "GatherND"));
  const int64_t count = detail::element_count(y_shape);
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < idx_shape.size(); ++d) rows *= idx_shape[d];
  if (count != rows * map.slice) {
    return invalid_argument("ops: GatherND output does not hold the gathered slices");
  }
  const std::string name = kernel_for("gather_nd", dtype);
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, name.c_str()));
  HSCHED_RETURN_IF_ERROR(
      detail::set_args(kernel, name.c_str(), x, idx, y, map, error, static_cast<cl_int>(count)));
  return detail::launch(queue, kernel, count, wait, name.c_str());
}

Result<cl::Event> enqueue_scatter_nd(const OpKernels& ops, cl::CommandQueue& queue, DType dtype,
                                     const cl::Buffer& x, const Shape& x_shape,
                                     const cl::Buffer& idx, const Shape& idx_shape,
                                     const cl::Buffer& updates, ScatterReduction reduction,
                                     const cl::Buffer& error, cl::Buffer& y, const Events& wait) {
  HSCHED_ASSIGN_OR_RETURN(NdMap map, nd_map(x_shape, idx_shape, 0, "ScatterND"));
  HSCHED_ASSIGN_OR_RETURN(cl::Event copied, copy_into(ops, queue, dtype, x, x_shape, y, wait));
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < idx_shape.size(); ++d) rows *= idx_shape[d];
  const std::string name = kernel_for("scatter_nd", dtype);
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, name.c_str()));
  HSCHED_RETURN_IF_ERROR(detail::set_args(kernel, name.c_str(), y, idx, updates, map,
                                          static_cast<cl_int>(reduction), error,
                                          static_cast<cl_int>(rows), cl_int{1}));
  return detail::launch(queue, kernel, 1, {copied}, name.c_str());
}

Result<cl::Event> enqueue_top_k(const OpKernels& ops, cl::CommandQueue& queue, const cl::Buffer& x,
                                const Shape& x_shape, int64_t axis, int64_t k, bool largest,
                                cl::Buffer& values, cl::Buffer& indices, const Events& wait) {
  HSCHED_ASSIGN_OR_RETURN(size_t a, detail::normalize_axis(axis, x_shape.size(), "TopK"));
  HSCHED_RETURN_IF_ERROR(detail::check_int_range(detail::element_count(x_shape), "TopK input"));
  const int64_t n = x_shape[a];
  if (k < 0 || k > n) return invalid_argument("ops: TopK k out of range");
  int64_t inner = 1, outer = 1;
  for (size_t d = a + 1; d < x_shape.size(); ++d) inner *= x_shape[d];
  for (size_t d = 0; d < a; ++d) outer *= x_shape[d];
  const int64_t count = outer * inner;
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, "top_k"));
  HSCHED_RETURN_IF_ERROR(
      detail::set_args(kernel, "top_k", x, values, indices, static_cast<cl_int>(n),
                       static_cast<cl_int>(std::max<int64_t>(inner, 1)), static_cast<cl_int>(k),
                       static_cast<cl_int>(largest), static_cast<cl_int>(count)));
  return detail::launch(queue, kernel, count, wait, "top_k");
}

Result<cl::Event> enqueue_fill_value(const OpKernels& ops, cl::CommandQueue& queue, DType dtype,
                                     PadFill value, cl::Buffer& y, int64_t count,
                                     const Events& wait) {
  if (!integer_dtype(dtype)) {
    return enqueue_fill(ops, queue, static_cast<float>(value.real), y, count, wait);
  }
  detail::not_replayable();  // a fill
  cl::Event event;
  const auto bytes = static_cast<size_t>(count) * held_bytes(ops.storage(), dtype);
  const cl_int error =
      bytes == 0 ? queue.enqueueMarkerWithWaitList(&wait, &event)
      : dtype == DType::kI32
          ? queue.enqueueFillBuffer(y, static_cast<cl_int>(value.integer), 0, bytes, &wait, &event)
          : queue.enqueueFillBuffer(y, static_cast<cl_long>(value.integer), 0, bytes, &wait,
                                    &event);
  HSCHED_RETURN_IF_ERROR(detail::check_cl(error, "fill"));
  return event;
}

Result<cl::Event> enqueue_range(const OpKernels& ops, cl::CommandQueue& queue, DType dtype,
                                PadFill start, PadFill delta, cl::Buffer& y, int64_t count,
                                const Events& wait) {
  HSCHED_RETURN_IF_ERROR(detail::check_int_range(count, "Range output"));
  const std::string name = integer_dtype(dtype) ? kernel_for("int_range", dtype) : "range_values";
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, name.c_str()));
  if (integer_dtype(dtype)) {
    HSCHED_RETURN_IF_ERROR(
        detail::set_args(kernel, name.c_str(), y, static_cast<cl_long>(start.integer),
                         static_cast<cl_long>(delta.integer), static_cast<cl_int>(count)));
  } else {
    HSCHED_RETURN_IF_ERROR(detail::set_args(kernel, name.c_str(), y, static_cast<float>(start.real),
                                            static_cast<float>(delta.real),
                                            static_cast<cl_int>(count)));
  }
  return detail::launch(queue, kernel, count, wait, name.c_str());
}

Result<cl::Event> enqueue_eye(const OpKernels& ops, cl::CommandQueue& queue, DType dtype,
                              int64_t width, int64_t k, cl::Buffer& y, int64_t count,
                              const Events& wait) {
  HSCHED_RETURN_IF_ERROR(detail::check_int_range(count, "EyeLike output"));
  const std::string name = integer_dtype(dtype) ? kernel_for("int_eye", dtype) : "eye";
  const int64_t reach = count + 1;  // past it no element is on the diagonal
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, name.c_str()));
  HSCHED_RETURN_IF_ERROR(detail::set_args(
      kernel, name.c_str(), y, static_cast<cl_int>(std::max<int64_t>(width, 1)),
      static_cast<cl_int>(std::clamp(k, -reach, reach)), static_cast<cl_int>(count)));
  return detail::launch(queue, kernel, count, wait, name.c_str());
}

Result<cl::Event> enqueue_one_hot(const OpKernels& ops, cl::CommandQueue& queue, DType dtype,
                                  const cl::Buffer& idx, const cl::Buffer& values, int64_t outer,
                                  int64_t depth, int64_t inner, cl::Buffer& y, const Events& wait) {
  const int64_t count = outer * depth * inner;
  HSCHED_RETURN_IF_ERROR(detail::check_int_range(count, "OneHot output"));
  const std::string name = integer_dtype(dtype) ? kernel_for("int_one_hot", dtype) : "one_hot";
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, name.c_str()));
  HSCHED_RETURN_IF_ERROR(detail::set_args(
      kernel, name.c_str(), idx, values, y, static_cast<cl_int>(std::max<int64_t>(depth, 1)),
      static_cast<cl_int>(std::max<int64_t>(inner, 1)), static_cast<cl_int>(count)));
  return detail::launch(queue, kernel, count, wait, name.c_str());
}

Result<cl::Event> enqueue_reverse_sequence(const OpKernels& ops, cl::CommandQueue& queue,
                                           DType dtype, const cl::Buffer& x, const Shape& shape,
                                           const cl::Buffer& lens, int64_t batch_axis,
                                           int64_t time_axis, const cl::Buffer& error,
                                           cl::Buffer& y, const Events& wait) {
  HSCHED_RETURN_IF_ERROR(check_ranks(shape, shape, "ReverseSequence"));
  HSCHED_ASSIGN_OR_RETURN(size_t b,
                          detail::normalize_axis(batch_axis, shape.size(), "ReverseSequence"));
  HSCHED_ASSIGN_OR_RETURN(size_t t,
                          detail::normalize_axis(time_axis, shape.size(), "ReverseSequence"));
  if (b == t) return invalid_argument("ops: ReverseSequence batch and time axes are one axis");
  IndexMap map{};
  map.dims = detail::padded_dims(shape);
  const std::vector<int64_t> strides = row_major_strides(shape);
  const size_t pad = kMaxRank - shape.size();
  for (size_t d = 0; d < shape.size(); ++d)
    map.in_strides[pad + d] = static_cast<cl_int>(strides[d]);
  const int64_t count = detail::element_count(shape);
  const std::string name = kernel_for("reverse_sequence", dtype);
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, name.c_str()));
  HSCHED_RETURN_IF_ERROR(
      detail::set_args(kernel, name.c_str(), x, lens, y, map, static_cast<cl_int>(pad + b),
                       static_cast<cl_int>(pad + t), error, static_cast<cl_int>(count)));
  return detail::launch(queue, kernel, count, wait, name.c_str());
}

Result<cl::Event> enqueue_index_map(const OpKernels& ops, cl::CommandQueue& queue, DType dtype,
                                    const cl::Buffer& x, const Shape& x_shape,
                                    const std::vector<int64_t>& begin, PadMode mode, PadFill fill,
                                    cl::Buffer& y, const Shape& y_shape, const Events& wait) {
  const size_t rank = x_shape.size();
  if (rank > kMaxRank || y_shape.size() != rank || begin.size() != rank) {
    return invalid_argument("ops: an index map of rank > 6 or of mismatched ranks");
  }
  const int64_t count = detail::element_count(y_shape);
  HSCHED_RETURN_IF_ERROR(detail::check_int_range(count, "index map output"));
  HSCHED_RETURN_IF_ERROR(
      detail::check_int_range(detail::element_count(x_shape), "index map input"));
  IndexMap map{};
  map.dims = detail::padded_dims(y_shape);
  map.in_dims = detail::padded_dims(x_shape);
  int64_t stride = 1;
  for (size_t i = rank; i-- > 0;) {
    const size_t at = kMaxRank - rank + i;
    if (x_shape[i] == 0 && y_shape[i] > 0 && mode != PadMode::kConstant) {
      return invalid_argument("ops: an empty axis cannot be padded but with a constant");
    }
    // Offsets past the output's reach gain nothing: clamp so that they stay ints.
    const int64_t reach = x_shape[i] + y_shape[i];
    map.begin[at] = static_cast<cl_int>(std::clamp(begin[i], -reach, reach));
    map.in_strides[at] = static_cast<cl_int>(stride);
    stride *= x_shape[i];
  }
  const char* name = "index_map";
  std::string integer_name;
  if (integer_dtype(dtype)) {
    integer_name = dtype == DType::kI32 ? "int_index_map_i32" : "int_index_map_i64";
    name = integer_name.c_str();
  }
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, name));
  if (integer_dtype(dtype)) {
    HSCHED_RETURN_IF_ERROR(detail::set_args(kernel, name, x, y, map, static_cast<cl_int>(mode),
                                            static_cast<cl_long>(fill.integer),
                                            static_cast<cl_int>(count)));
  } else {
    HSCHED_RETURN_IF_ERROR(detail::set_args(kernel, name, x, y, map, static_cast<cl_int>(mode),
                                            static_cast<float>(fill.real),
                                            static_cast<cl_int>(count)));
  }
  return detail::launch(queue, kernel, count, wait, name);
}

}  // namespace hsched::opencl
