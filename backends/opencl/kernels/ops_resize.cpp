// Resize: the host-side plan (ops_resize.h) and enqueue_resize (ops_spatial.h).
#include "backends/opencl/kernels/ops_resize.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "backends/opencl/kernels/ops_scratch.h"
#include "backends/opencl/kernels/ops_util.h"

namespace hsched::opencl {
namespace {

constexpr size_t kMaxRank = 6;

// Mirrors ResizeShape in kernel_sources_spatial.h.
struct ResizeShape {
  std::array<cl_int, kMaxRank> dims;
  std::array<cl_int, kMaxRank> strides;
  std::array<cl_int, kMaxRank> offset;
};

// Axis a's scale: the `scales` input's, else out / in. InvalidArgument for an empty input axis
// with a non-empty output one, or a scale that is not positive.
Result<float> axis_scale(const ResizeMode& mode, size_t a, int64_t n_in, int64_t n_out) {
  if (n_out > 0 && n_in <= 0) return invalid_argument("ops: Resize of an empty input axis");
  float scale = n_in == 0 ? 1.0f : static_cast<float>(n_out) / static_cast<float>(n_in);
  if (!mode.scales.empty()) scale = mode.scales[a];
  if (!(scale > 0)) return invalid_argument("ops: Resize scales must be positive");
  return scale;
}

}  // namespace

Result<ResizeTables> resize_plan(const ResizeMode& mode, const Shape& in, const Shape& out) {
  const size_t rank = in.size();
  if (out.size() != rank || rank == 0 || rank > kMaxRank ||
      (!mode.scales.empty() && mode.scales.size() != rank)) {
    return invalid_argument("ops: Resize needs input and output (and scales) of one rank <= 6");
  }
  ResizeTables tables;
  tables.i0.resize(rank);
  tables.i1.resize(rank);
  tables.w1.resize(rank);
  for (size_t a = 0; a < rank; ++a) {
    const int64_t n_in = in[a], n_out = out[a];
    HSCHED_ASSIGN_OR_RETURN(const float scale, axis_scale(mode, a, n_in, n_out));
    for (int64_t o = 0; o < n_out; ++o) {
      float x = resize::original_coordinate(mode.coord, static_cast<float>(o), scale, n_in, n_out);
      int64_t i0 = 0, i1 = 0;
      float w1 = 0;
      if (mode.linear) {
        x = std::clamp(x, 0.0f, static_cast<float>(n_in - 1));
        i0 = std::min(static_cast<int64_t>(x), n_in - 1);
        i1 = std::min(i0 + 1, n_in - 1);
        w1 = i1 == i0 ? 0.0f : x - static_cast<float>(i0);
      } else {
        i0 = i1 =
            std::clamp<int64_t>(resize::nearest_index(mode.nearest, x, scale < 1), 0, n_in - 1);
      }
      if (w1 != 0 && a + 2 < rank) {
        return invalid_argument("ops: Resize interpolates only along the last two axes (axis " +
                                std::to_string(a) + " of rank " + std::to_string(rank) + ")");
      }
      tables.i0[a].push_back(static_cast<int32_t>(i0));
      tables.i1[a].push_back(static_cast<int32_t>(i1));
      tables.w1[a].push_back(w1);
    }
  }
  return tables;
}

Result<std::vector<CubicPass>> resize_cubic_plan(const ResizeMode& mode, const Shape& in,
                                                 const Shape& out) {
  const size_t rank = in.size();
  if (out.size() != rank || rank == 0 || rank > kMaxRank ||
      (!mode.scales.empty() && mode.scales.size() != rank) || !std::isfinite(mode.cubic_a)) {
    return invalid_argument(
        "ops: cubic Resize needs input and output (and scales) of one rank "
        "<= 6 and a finite cubic_coeff_a");
  }
  std::vector<CubicPass> passes;
  for (size_t a = 0; a < rank; ++a) {
    const int64_t n_in = in[a], n_out = out[a];
    HSCHED_ASSIGN_OR_RETURN(const float scale, axis_scale(mode, a, n_in, n_out));
    CubicPass pass{a, {}};
    bool identity = n_in == n_out;
    for (int64_t o = 0; o < n_out; ++o) {
      const float x =
          resize::original_coordinate(mode.coord, static_cast<float>(o), scale, n_in, n_out);
      if (std::isnan(x)) return invalid_argument("ops: Resize scales give no input coordinate");
      identity =
          pass.taps.add(x, n_in, mode.cubic_a, mode.exclude_outside).value_or(-1) == o && identity;
    }
    if (!identity && n_out > 0) passes.push_back(std::move(pass));
  }
  // Shrinking axes first: every later pass then works on fewer elements.
  std::stable_sort(passes.begin(), passes.end(), [&](const CubicPass& p, const CubicPass& q) {
    return out[p.axis] * in[q.axis] < out[q.axis] * in[p.axis];
  });
  return passes;
}

Result<cl::Event> enqueue_resize_cubic(const OpKernels& ops, cl::CommandQueue& queue,
                                       const cl::Buffer& x, const Shape& x_shape,
                                       const std::vector<CubicPass>& passes, cl::Buffer& y,
                                       const Shape& y_shape, const Events& wait) {
  HSCHED_RETURN_IF_ERROR(detail::check_int_range(
      std::max(detail::element_count(y_shape), detail::element_count(x_shape)), "Resize operand"));
  const int64_t count = detail::element_count(y_shape);
  if (passes.empty() || count == 0) {  // no axis changes: a copy
    detail::not_replayable();
    cl::Event event;
    const auto bytes = static_cast<size_t>(count) * storage_bytes(ops.storage());
    HSCHED_RETURN_IF_ERROR(
        detail::check_cl(bytes == 0 ? queue.enqueueMarkerWithWaitList(&wait, &event)
                                    : queue.enqueueCopyBuffer(x, y, 0, 0, bytes, &wait, &event),
                         "copy for Resize"));
    return event;
  }
  Shape dims = x_shape;
  const cl::Buffer* src = &x;
  cl::Buffer scratch[2];
  Events after = wait;
  cl::Event event;
  for (size_t k = 0; k < passes.size(); ++k) {
    const CubicPass& pass = passes[k];
    const size_t a = pass.axis;
    if (a >= dims.size() || pass.taps.index.size() != 4 * static_cast<size_t>(y_shape[a])) {
      return invalid_argument("ops: cubic Resize taps do not match the output");
    }
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < a; ++d) outer *= dims[d];
    for (size_t d = a + 1; d < dims.size(); ++d) inner *= dims[d];
    const int64_t n_in = dims[a];
    dims[a] = y_shape[a];
    const int64_t elements = outer * dims[a] * inner;
    cl::Buffer* dst = &y;
    if (k + 1 < passes.size()) {
      const auto slot = k % 2 == 0 ? detail::ScratchSlot::kResizeA : detail::ScratchSlot::kResizeB;
      HSCHED_ASSIGN_OR_RETURN(
          scratch[k % 2],
          detail::scratch_buffer(ops, queue, slot,
                                 static_cast<size_t>(elements) * storage_bytes(ops.storage())));
      dst = &scratch[k % 2];
    }
    std::vector<cl_int> index(pass.taps.index.begin(), pass.taps.index.end());
    HSCHED_ASSIGN_OR_RETURN(
        cl::Buffer index_buffer,
        detail::constant_buffer(ops, queue, index.data(), index.size() * sizeof(cl_int)));
    HSCHED_ASSIGN_OR_RETURN(cl::Buffer weight_buffer,
                            detail::constant_buffer(ops, queue, pass.taps.weight.data(),
                                                    pass.taps.weight.size() * sizeof(float)));
    HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel,
                            detail::queue_kernel(ops, queue, "resize_cubic_axis"));
    HSCHED_RETURN_IF_ERROR(detail::set_args(
        kernel, "resize_cubic_axis", *src, *dst, index_buffer, weight_buffer,
        static_cast<cl_int>(n_in), static_cast<cl_int>(dims[a]),
        static_cast<cl_int>(std::max<int64_t>(inner, 1)), static_cast<cl_int>(elements)));
    HSCHED_ASSIGN_OR_RETURN(event,
                            detail::launch(queue, kernel, elements, after, "resize_cubic_axis"));
    after = {event};
    src = dst;
  }
  return event;
}

Result<cl::Event> enqueue_resize(const OpKernels& ops, cl::CommandQueue& queue, const cl::Buffer& x,
                                 const Shape& x_shape, const ResizeTables& tables, cl::Buffer& y,
                                 const Shape& y_shape, const Events& wait) {
  const size_t rank = x_shape.size();
  if (y_shape.size() != rank || rank == 0 || rank > kMaxRank || tables.i0.size() != rank ||
      tables.i1.size() != rank || tables.w1.size() != rank) {
    return invalid_argument("ops: Resize tables do not match the shapes");
  }
  const int64_t count = detail::element_count(y_shape);
  HSCHED_RETURN_IF_ERROR(
      detail::check_int_range(std::max(count, detail::element_count(x_shape)), "Resize operand"));
  // Flattened tables, leading (padding) axes reading index 0: one entry at offset 0.
  std::vector<cl_int> i0(1, 0), i1(1, 0);
  std::vector<float> w1(1, 0.0f);
  ResizeShape s{};
  s.dims.fill(1);
  s.strides.fill(0);
  s.offset.fill(0);
  int64_t stride = 1;
  for (size_t a = rank; a-- > 0;) {
    const size_t d = kMaxRank - rank + a;
    if (static_cast<int64_t>(tables.i0[a].size()) != y_shape[a] ||
        tables.i1[a].size() != tables.i0[a].size() || tables.w1[a].size() != tables.i0[a].size()) {
      return invalid_argument("ops: Resize table of axis " + std::to_string(a) +
                              " does not match the output");
    }
    s.dims[d] = static_cast<cl_int>(y_shape[a]);
    s.strides[d] = static_cast<cl_int>(stride);
    s.offset[d] = static_cast<cl_int>(i0.size());
    i0.insert(i0.end(), tables.i0[a].begin(), tables.i0[a].end());
    i1.insert(i1.end(), tables.i1[a].begin(), tables.i1[a].end());
    w1.insert(w1.end(), tables.w1[a].begin(), tables.w1[a].end());
    stride *= x_shape[a];
  }
  // The tables are small (the sum of the output dims) and the same on every run of a node: kept
  // per queue by content (ops_scratch.h), so nothing is written or released per call.
  HSCHED_ASSIGN_OR_RETURN(
      cl::Buffer i0_buffer,
      detail::constant_buffer(ops, queue, i0.data(), i0.size() * sizeof(cl_int)));
  HSCHED_ASSIGN_OR_RETURN(
      cl::Buffer i1_buffer,
      detail::constant_buffer(ops, queue, i1.data(), i1.size() * sizeof(cl_int)));
  HSCHED_ASSIGN_OR_RETURN(cl::Buffer w1_buffer, detail::constant_buffer(ops, queue, w1.data(),
                                                                        w1.size() * sizeof(float)));
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, "resize"));
  HSCHED_RETURN_IF_ERROR(detail::set_args(kernel, "resize", x, y, i0_buffer, i1_buffer, w1_buffer,
                                          s, static_cast<cl_int>(count)));
  return detail::launch(queue, kernel, count, wait, "resize");
}

}  // namespace hsched::opencl
