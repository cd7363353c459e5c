// Concat and Split (ops_spatial.h): copies of rows between an input and an output, the RowCopy a
// Conv can carry for a Concat among them.
#include <algorithm>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "backends/opencl/kernels/ops_scratch.h"
#include "backends/opencl/kernels/ops_spatial.h"
#include "backends/opencl/kernels/ops_util.h"

namespace hsched::opencl {

using detail::check_int_range;
using detail::element_count;
using detail::launch;
using detail::normalize_axis;
using detail::set_args;

namespace {

// The extent of `shapes` together along axis `a`, each equal to `like` off that axis (a Concat's
// inputs, a Split's outputs: `what`).
Result<int64_t> extent_along(const std::vector<Shape>& shapes, const Shape& like, size_t a,
                             const std::string& what) {
  int64_t total = 0;
  for (const Shape& shape : shapes) {
    bool same = shape.size() == like.size();
    for (size_t d = 0; same && d < shape.size(); ++d) same = d == a || shape[d] == like[d];
    if (!same) return invalid_argument("ops: " + what + " differ off the axis");
    total += shape[a];
  }
  return total;
}

}  // namespace

Result<std::vector<RowCopy>> concat_copies(const std::vector<Shape>& shapes, int64_t axis,
                                           const std::vector<std::pair<int64_t, int64_t>>& sources,
                                           int64_t groups) {
  if (shapes.empty() || (!sources.empty() && sources.size() != shapes.size())) {
    return invalid_argument("ops: Concat needs one shape per input, and an input");
  }
  if (groups < 1 || (groups > 1 && static_cast<size_t>(groups) != shapes.size())) {
    return invalid_argument("ops: a shuffled Concat needs one input per group");
  }
  const Shape& first = shapes.front();
  HSCHED_ASSIGN_OR_RETURN(size_t a, normalize_axis(axis, first.size(), "Concat"));
  HSCHED_ASSIGN_OR_RETURN(const int64_t total, extent_along(shapes, first, a, "Concat inputs"));
  for (const Shape& shape : shapes) {
    if (groups > 1 && shape[a] != first[a]) {
      return invalid_argument("ops: a shuffled Concat's inputs differ along the axis");
    }
  }
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < a; ++d) outer *= first[d];
  for (size_t d = a + 1; d < first.size(); ++d) inner *= first[d];
  HSCHED_RETURN_IF_ERROR(check_int_range(outer * total * inner, "Concat output"));
  std::vector<RowCopy> copies;
  int64_t offset = 0;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const int64_t rows_inner = shapes[i][a] * inner;
    // Where a Slice is read in place: its rows in the buffer, and its first element in a row.
    int64_t x_inner = rows_inner, x_offset = 0;
    if (!sources.empty() && sources[i].first != 0) {
      const auto [extent, from] = sources[i];
      if (from < 0 || extent < from + shapes[i][a]) {
        return invalid_argument("ops: a Concat input's slice does not fit its buffer");
      }
      HSCHED_RETURN_IF_ERROR(check_int_range(outer * extent * inner, "Concat input"));
      x_inner = extent * inner;
      x_offset = from * inner;
    }
    // Shuffled, each of the input's planes along the axis goes `groups` planes after the last.
    const int64_t plane = groups > 1 ? inner : rows_inner, y_step = groups * inner;
    const auto as_int = [](int64_t v) { return static_cast<cl_int>(v); };
    copies.push_back(RowCopy{as_int(x_inner), as_int(x_offset), as_int(rows_inner),
                             as_int(total * inner), as_int(offset), as_int(plane), as_int(y_step),
                             as_int(outer * rows_inner)});
    offset += groups > 1 ? inner : rows_inner;
  }
  return copies;
}

bool row_copy_fits(const RowCopy& copy, int64_t x_elements, int64_t y_elements) {
  if (copy.count == 0) return true;
  if (copy.count < 0 || copy.inner <= 0 || copy.plane <= 0 || copy.count % copy.inner != 0 ||
      copy.inner % copy.plane != 0 || copy.x_offset < 0 || copy.offset < 0 || copy.x_inner < 0 ||
      copy.y_inner < 0 || copy.y_step < 0) {
    return false;
  }
  // Whole rows of whole planes: the last row's last element is the furthest each side reaches.
  const int64_t rows = copy.count / copy.inner, last = copy.inner - 1;
  const int64_t x_end = (rows - 1) * copy.x_inner + copy.x_offset + last;
  const int64_t y_end =
      (rows - 1) * copy.y_inner + copy.offset + last / copy.plane * copy.y_step + last % copy.plane;
  const int64_t int_max = std::numeric_limits<cl_int>::max();
  return x_end < std::min(x_elements, int_max) && y_end < std::min(y_elements, int_max);
}

namespace {

// One copy_rows launch of `copy` (count > 0), checked by its caller.
Result<cl::Event> launch_row_copy(const OpKernels& ops, cl::CommandQueue& queue,
                                  const cl::Buffer& x, cl::Buffer& y, const RowCopy& copy,
                                  const Events& wait, const QdqRow& q = {}) {
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, "copy_rows"));
  HSCHED_RETURN_IF_ERROR(set_args(kernel, "copy_rows", x, y, copy, q));
  return launch(queue, kernel, copy.count, wait, "copy_rows");
}

}  // namespace

Result<cl::Event> enqueue_row_copy(const OpKernels& ops, cl::CommandQueue& queue,
                                   const cl::Buffer& x, int64_t x_elements, cl::Buffer& y,
                                   int64_t y_elements, const RowCopy& copy, const Events& wait) {
  if (!row_copy_fits(copy, x_elements, y_elements)) {
    return invalid_argument("ops: a copy of rows reaches past its buffers");
  }
  if (copy.count == 0) {
    cl::Event event;
    HSCHED_RETURN_IF_ERROR(detail::check_cl(queue.enqueueMarkerWithWaitList(&wait, &event),
                                            "marker for an empty copy"));
    return event;
  }
  return launch_row_copy(ops, queue, x, y, copy, wait);
}

Result<cl::Event> enqueue_concat(const OpKernels& ops, cl::CommandQueue& queue,
                                 const std::vector<const cl::Buffer*>& inputs,
                                 const std::vector<Shape>& shapes, int64_t axis, cl::Buffer& y,
                                 const Events& wait,
                                 const std::vector<std::pair<int64_t, int64_t>>& sources,
                                 int64_t groups, const std::vector<QdqRow>& quantized) {
  if (inputs.size() != shapes.size() || (!quantized.empty() && quantized.size() != shapes.size())) {
    return invalid_argument("ops: Concat needs one shape per input (and its quantization)");
  }
  HSCHED_ASSIGN_OR_RETURN(const std::vector<RowCopy> copies,
                          concat_copies(shapes, axis, sources, groups));
  // Each input's copy waits for `wait`; the marker joins them (they touch disjoint elements).
  Events done_copies;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (copies[i].count == 0 || inputs[i] == nullptr) continue;  // (null: already in place)
    HSCHED_ASSIGN_OR_RETURN(cl::Event event,
                            launch_row_copy(ops, queue, *inputs[i], y, copies[i], wait,
                                            quantized.empty() ? QdqRow{} : quantized[i]));
    done_copies.push_back(std::move(event));
  }
  if (done_copies.empty()) done_copies = wait;
  cl::Event done;
  HSCHED_RETURN_IF_ERROR(detail::check_cl(queue.enqueueMarkerWithWaitList(&done_copies, &done),
                                          "marker after Concat"));
  return done;
}

Result<cl::Event> enqueue_split(const OpKernels& ops, cl::CommandQueue& queue, const cl::Buffer& x,
                                const Shape& shape, int64_t axis,
                                const std::vector<cl::Buffer*>& outputs,
                                const std::vector<Shape>& shapes, const Events& wait) {
  if (outputs.empty() || outputs.size() != shapes.size()) {
    return invalid_argument("ops: Split needs one shape per output, and an output");
  }
  HSCHED_ASSIGN_OR_RETURN(size_t a, normalize_axis(axis, shape.size(), "Split"));
  HSCHED_ASSIGN_OR_RETURN(const int64_t total,
                          extent_along(shapes, shape, a, "Split outputs and input"));
  if (total != shape[a]) {
    return invalid_argument("ops: Split outputs add up to " + std::to_string(total) + " of " +
                            std::to_string(shape[a]) + " along the axis");
  }
  HSCHED_RETURN_IF_ERROR(check_int_range(element_count(shape), "Split input"));
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < a; ++d) outer *= shape[d];
  for (size_t d = a + 1; d < shape.size(); ++d) inner *= shape[d];
  // Each output's copy waits for `wait`; the marker joins them.
  Events copies;
  int64_t offset = 0;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const int64_t rows_inner = shapes[i][a] * inner;
    const int64_t count = outer * rows_inner;
    if (count > 0 && outputs[i] != nullptr) {
      HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, "slice_rows"));
      HSCHED_RETURN_IF_ERROR(set_args(kernel, "slice_rows", x, *outputs[i],
                                      static_cast<cl_int>(rows_inner),
                                      static_cast<cl_int>(shape[a] * inner),
                                      static_cast<cl_int>(offset), static_cast<cl_int>(count)));
      HSCHED_ASSIGN_OR_RETURN(cl::Event event, launch(queue, kernel, count, wait, "slice_rows"));
      copies.push_back(std::move(event));
    }
    offset += rows_inner;
  }
  if (copies.empty()) copies = wait;
  cl::Event done;
  HSCHED_RETURN_IF_ERROR(
      detail::check_cl(queue.enqueueMarkerWithWaitList(&copies, &done), "marker after Split"));
  return done;
}

}  // namespace hsched::opencl
