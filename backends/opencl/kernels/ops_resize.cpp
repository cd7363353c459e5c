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
    if (n_out > 0 && n_in <= 0) return invalid_argument("ops: Resize of an empty input axis");
    float scale = n_in == 0 ? 1.0f : static_cast<float>(n_out) / static_cast<float>(n_in);
    if (!mode.scales.empty()) scale = mode.scales[a];
    if (!(scale > 0)) return invalid_argument("ops: Resize scales must be positive");
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
        i0 = i1 = std::clamp<int64_t>(resize::nearest_index(mode.nearest, x, false), 0, n_in - 1);
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
