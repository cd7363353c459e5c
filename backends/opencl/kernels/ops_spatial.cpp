// Pools, InstanceNormalization, Gather and Transpose (ops_spatial.h); Conv is in ops_conv.cpp,
// Concat and Split in ops_concat.cpp, Resize in ops_resize.cpp.
#include "backends/opencl/kernels/ops_spatial.h"

#include <algorithm>
#include <array>
#include <map>
#include <numeric>

#include "backends/opencl/kernels/ops_scratch.h"
#include "backends/opencl/kernels/ops_util.h"

namespace hsched::opencl {
namespace {

using detail::check_int_range;
using detail::element_count;
using detail::launch;
using detail::normalize_axis;
using detail::set_args;

constexpr size_t kMaxRank = 6;

// Mirrors PoolShape in kernel_sources_spatial.h.
struct PoolShape {
  cl_int rows, h, w, oh, ow;
  cl_int kh, kw, sh, sw, dh, dw, ph, pw;
  cl_int end_h, end_w;
};

// Mirrors TransposeShape in kernel_sources_spatial.h.
struct TransposeShape {
  std::array<cl_int, kMaxRank> dims;
  std::array<cl_int, kMaxRank> strides;
};

// values[i] of the spatial axis i, or `fallback` when `values` is empty.
int64_t at_or(const std::vector<int64_t>& values, size_t i, int64_t fallback) {
  return values.empty() ? fallback : values[i];
}

// InstanceNormalization runs one work group per row, unless there are fewer rows than this
// (too few groups to fill a GPU: GroupNorm as exported runs over [1, groups, C / groups * H * W])
// and they are longer than kLongRow: then rows are split into chunks of kNormChunk. On a CPU
// device it sums in ONNX Runtime's order instead (instance_norm_ordered).
constexpr int64_t kLongRowsBelow = 256;
constexpr int64_t kLongRow = 8192;
constexpr int64_t kNormChunk = 4096;

// Sets the NORM_EPILOGUE_ARGS of `kernel` from argument `first` on (x stands in for absent
// buffers).
Status set_norm_epilogue(cl::Kernel& kernel, cl_uint first, const NormEpilogue& e,
                         const cl::Buffer& x) {
  const Activation act = e.activation.value_or(Activation{});
  const cl_int op = e.activation ? static_cast<cl_int>(act.op) : cl_int{-1};
  const auto arg = [&](cl_uint i, const auto& value) {
    return detail::check_cl(kernel.setArg(first + i, value),
                            "argument of a normalisation epilogue");
  };
  HSCHED_RETURN_IF_ERROR(arg(0, e.gamma != nullptr ? *e.gamma : x));
  HSCHED_RETURN_IF_ERROR(arg(1, e.beta != nullptr ? *e.beta : x));
  HSCHED_RETURN_IF_ERROR(arg(2, static_cast<cl_int>(e.gamma != nullptr)));
  HSCHED_RETURN_IF_ERROR(arg(3, static_cast<cl_int>(e.beta != nullptr)));
  HSCHED_RETURN_IF_ERROR(arg(4, static_cast<cl_int>(std::max<int64_t>(e.plane, 1))));
  HSCHED_RETURN_IF_ERROR(arg(5, static_cast<cl_int>(std::max<int64_t>(e.channels, 1))));
  HSCHED_RETURN_IF_ERROR(arg(6, op));
  HSCHED_RETURN_IF_ERROR(arg(7, act.alpha));
  return arg(8, act.beta);
}

// y = x * a + b with each row's affine map (a, b), then the epilogue.
Result<cl::Event> instance_norm_apply(const OpKernels& ops, cl::CommandQueue& queue,
                                      const cl::Buffer& x, const cl::Buffer& affine, int64_t rows,
                                      int64_t size, cl::Buffer& y, const NormEpilogue& epilogue) {
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel apply,
                          detail::queue_kernel(ops, queue, "instance_norm_apply"));
  HSCHED_RETURN_IF_ERROR(set_args(apply, "instance_norm_apply", x, affine, y,
                                  static_cast<cl_int>(size), static_cast<cl_int>(rows * size)));
  HSCHED_RETURN_IF_ERROR(set_norm_epilogue(apply, 5, epilogue, x));
  return launch(queue, apply, rows * size, {}, "instance_norm_apply");
}

Result<cl::Event> instance_norm_long_rows(const OpKernels& ops, cl::CommandQueue& queue,
                                          const cl::Buffer& x, int64_t rows, int64_t channels,
                                          int64_t size, const cl::Buffer& scale,
                                          const cl::Buffer& bias, float epsilon, cl::Buffer& y,
                                          const Events& wait, const NormEpilogue& epilogue) {
  const int64_t chunks = (size + kNormChunk - 1) / kNormChunk;
  using detail::ScratchSlot;
  HSCHED_ASSIGN_OR_RETURN(cl::Buffer stats,
                          detail::scratch_buffer(ops, queue, ScratchSlot::kNormStats,
                                                 static_cast<size_t>(rows * chunks) * 8));
  HSCHED_ASSIGN_OR_RETURN(
      cl::Buffer affine,
      detail::scratch_buffer(ops, queue, ScratchSlot::kNormAffine, static_cast<size_t>(rows) * 8));
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel partial,
                          detail::queue_kernel(ops, queue, "instance_norm_chunks"));
  HSCHED_RETURN_IF_ERROR(set_args(partial, "instance_norm_chunks", x, stats,
                                  static_cast<cl_int>(size), static_cast<cl_int>(kNormChunk),
                                  static_cast<cl_int>(chunks)));
  HSCHED_RETURN_IF_ERROR(
      launch(queue, partial, rows * chunks * 64, wait, "instance_norm_chunks").status());
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel merge,
                          detail::queue_kernel(ops, queue, "instance_norm_merge"));
  HSCHED_RETURN_IF_ERROR(set_args(merge, "instance_norm_merge", stats, affine, scale, bias,
                                  static_cast<cl_int>(rows), static_cast<cl_int>(channels),
                                  static_cast<cl_int>(size), static_cast<cl_int>(kNormChunk),
                                  static_cast<cl_int>(chunks), epsilon));
  HSCHED_RETURN_IF_ERROR(detail::launch_range(queue, merge, cl::NDRange(rows * 64), cl::NDRange(64),
                                              {}, "instance_norm_merge")
                             .status());
  return instance_norm_apply(ops, queue, x, affine, rows, size, y, epilogue);
}

// instance_norm_ordered's statistics (ONNX Runtime's order, 8 items a row), then
// instance_norm_apply.
Result<cl::Event> instance_norm_ordered(const OpKernels& ops, cl::CommandQueue& queue,
                                        const cl::Buffer& x, int64_t rows, int64_t channels,
                                        int64_t size, const cl::Buffer& scale,
                                        const cl::Buffer& bias, float epsilon, cl::Buffer& y,
                                        const Events& wait, const NormEpilogue& epilogue) {
  HSCHED_ASSIGN_OR_RETURN(cl::Buffer affine,
                          detail::scratch_buffer(ops, queue, detail::ScratchSlot::kNormAffine,
                                                 static_cast<size_t>(rows) * 8));
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel stats,
                          detail::queue_kernel(ops, queue, "instance_norm_ordered"));
  HSCHED_RETURN_IF_ERROR(set_args(stats, "instance_norm_ordered", x, affine, scale, bias,
                                  static_cast<cl_int>(channels), static_cast<cl_int>(size),
                                  epsilon));
  HSCHED_RETURN_IF_ERROR(detail::launch_range(queue, stats, cl::NDRange(rows * 8), cl::NDRange(8),
                                              wait, "instance_norm_ordered")
                             .status());
  return instance_norm_apply(ops, queue, x, affine, rows, size, y, epilogue);
}

}  // namespace

Result<cl::Event> enqueue_pool(const OpKernels& ops, cl::CommandQueue& queue, PoolKind kind,
                               const cl::Buffer& x, const Shape& x_shape, const Window& window,
                               bool count_include_pad, cl::Buffer& y, const Shape& y_shape,
                               const Events& wait, cl::Buffer* indices, int64_t storage_order) {
  if (x_shape.size() < 3 || x_shape.size() > 4 || y_shape.size() != x_shape.size() ||
      y_shape[0] != x_shape[0] || y_shape[1] != x_shape[1]) {
    return invalid_argument("ops: pools need 1-D or 2-D NCHW input and output of equal N, C");
  }
  const size_t spatial = x_shape.size() - 2;
  auto sized = [&](const std::vector<int64_t>& v) { return v.empty() || v.size() == spatial; };
  if (window.kernel.size() != spatial || !sized(window.strides) || !sized(window.dilations) ||
      !sized(window.pads_begin) || !sized(window.pads_end)) {
    return invalid_argument("ops: pool window does not match the spatial rank");
  }
  HSCHED_RETURN_IF_ERROR(
      check_int_range(std::max(element_count(x_shape), element_count(y_shape)), "pool operand"));
  // The (h, w) pair of spatial axis values; 1-D pools are 2-D ones of height 1.
  auto hw = [&](const std::vector<int64_t>& v, int64_t fallback, int64_t one_d) {
    if (spatial == 1) return std::pair<cl_int, cl_int>(one_d, at_or(v, 0, fallback));
    return std::pair<cl_int, cl_int>(at_or(v, 0, fallback), at_or(v, 1, fallback));
  };
  PoolShape s{};
  s.rows = static_cast<cl_int>(x_shape[0] * x_shape[1]);
  s.h = spatial == 1 ? 1 : static_cast<cl_int>(x_shape[2]);
  s.w = static_cast<cl_int>(x_shape.back());
  s.oh = spatial == 1 ? 1 : static_cast<cl_int>(y_shape[2]);
  s.ow = static_cast<cl_int>(y_shape.back());
  std::tie(s.kh, s.kw) = hw(window.kernel, 1, 1);
  std::tie(s.sh, s.sw) = hw(window.strides, 1, 1);
  std::tie(s.dh, s.dw) = hw(window.dilations, 1, 1);
  std::tie(s.ph, s.pw) = hw(window.pads_begin, 0, 0);
  const auto [eh, ew] = hw(window.pads_end, 0, 0);
  s.end_h = s.h + eh;
  s.end_w = s.w + ew;
  if (s.kh < 1 || s.kw < 1 || s.sh < 1 || s.sw < 1 || s.dh < 1 || s.dw < 1 || s.ph < 0 ||
      s.pw < 0) {
    return invalid_argument("ops: pool kernel, strides and dilations must be >= 1, pads >= 0");
  }
  const int64_t count = element_count(y_shape);
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, "pool"));
  HSCHED_RETURN_IF_ERROR(set_args(kernel, "pool", x, y, s,
                                  static_cast<cl_int>(kind == PoolKind::kMax),
                                  static_cast<cl_int>(count_include_pad), detail::or_null(indices),
                                  static_cast<cl_int>(indices != nullptr),
                                  static_cast<cl_int>(storage_order), static_cast<cl_int>(count)));
  return launch(queue, kernel, count, wait, "pool");
}

int64_t instance_norm_kernels(const Shape& shape, bool ordered_sums) {
  if (shape.size() < 3) return 1;
  if (ordered_sums) return 2;
  const int64_t rows = shape[0] * shape[1];
  const int64_t size = element_count(shape) / std::max<int64_t>(rows, 1);
  return rows < kLongRowsBelow && size > kLongRow ? 3 : 1;
}

Result<cl::Event> enqueue_instance_norm(const OpKernels& ops, cl::CommandQueue& queue,
                                        const cl::Buffer& x, const Shape& shape,
                                        const cl::Buffer& scale, const cl::Buffer& bias,
                                        float epsilon, cl::Buffer& y, const Events& wait,
                                        const NormEpilogue& epilogue) {
  if (shape.size() < 3) {
    return invalid_argument("ops: InstanceNormalization needs [N, C, spatial...], got rank " +
                            std::to_string(shape.size()));
  }
  HSCHED_RETURN_IF_ERROR(check_int_range(element_count(shape) + 64, "InstanceNormalization input"));
  const int64_t rows = shape[0] * shape[1];
  const int64_t size = element_count(shape) / std::max<int64_t>(rows, 1);
  if (ops.ordered_sums())
    return instance_norm_ordered(ops, queue, x, rows, shape[1], size, scale, bias, epsilon, y, wait,
                                 epilogue);
  if (instance_norm_kernels(shape, false) > 1) {
    return instance_norm_long_rows(ops, queue, x, rows, shape[1], size, scale, bias, epsilon, y,
                                   wait, epilogue);
  }
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, "instance_norm"));
  HSCHED_RETURN_IF_ERROR(set_args(kernel, "instance_norm", x, scale, bias, y,
                                  static_cast<cl_int>(shape[1]), static_cast<cl_int>(size),
                                  epsilon));
  HSCHED_RETURN_IF_ERROR(set_norm_epilogue(kernel, 7, epilogue, x));
  // One work group of 64 per row.
  return launch(queue, kernel, rows * 64, wait, "instance_norm");
}

Result<cl::Event> enqueue_layer_norm_rows(const OpKernels& ops, cl::CommandQueue& queue,
                                          const cl::Buffer& x, const Shape& shape, int64_t axis,
                                          const cl::Buffer& scale, const cl::Buffer* bias,
                                          float epsilon, cl::Buffer& y, cl::Buffer* mean,
                                          cl::Buffer* inv_std_dev, const Events& wait,
                                          const std::optional<QdqRow>& quantized) {
  HSCHED_ASSIGN_OR_RETURN(size_t a, normalize_axis(axis, shape.size(), "LayerNormalization"));
  HSCHED_RETURN_IF_ERROR(check_int_range(element_count(shape), "LayerNormalization input"));
  int64_t rows = 1, size = 1;
  for (size_t d = 0; d < shape.size(); ++d) (d < a ? rows : size) *= shape[d];
  const char* name = quantized ? "layer_norm_rows_q" : "layer_norm_rows";
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, name));
  // Without bias the kernel never reads its bias argument, nor writes absent statistics.
  const cl_int stats = (mean ? 1 : 0) | (inv_std_dev ? 2 : 0);
  HSCHED_RETURN_IF_ERROR(set_args(kernel, name, x, scale, detail::or_null(bias),
                                  static_cast<cl_int>(bias != nullptr), y,
                                  static_cast<cl_int>(size), cl_int{1}, epsilon,
                                  detail::or_null(mean), detail::or_null(inv_std_dev), stats));
  if (quantized) {
    HSCHED_RETURN_IF_ERROR(
        detail::check_cl(kernel.setArg(11, *quantized), "setArg of layer_norm_rows_q"));
  }
  return launch(queue, kernel, rows * 64, wait, name);  // a group of 64 per row
}

Result<cl::Event> enqueue_channel_layer_norm(const OpKernels& ops, cl::CommandQueue& queue,
                                             const cl::Buffer& x, const Shape& shape,
                                             const cl::Buffer& scale, const cl::Buffer* bias,
                                             float epsilon, cl::Buffer& y, const Events& wait) {
  if (shape.size() < 2)
    return invalid_argument("ops: a channel LayerNormalization needs rank >= 2");
  HSCHED_RETURN_IF_ERROR(check_int_range(element_count(shape), "LayerNormalization input"));
  int64_t plane = 1;
  for (size_t d = 2; d < shape.size(); ++d) plane *= shape[d];
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, "layer_norm_rows"));
  // A row per pixel: the channels, `plane` apart; no statistics.
  HSCHED_RETURN_IF_ERROR(set_args(kernel, "layer_norm_rows", x, scale, detail::or_null(bias),
                                  static_cast<cl_int>(bias != nullptr), y,
                                  static_cast<cl_int>(shape[1]), static_cast<cl_int>(plane),
                                  epsilon, detail::or_null(nullptr), detail::or_null(nullptr),
                                  cl_int{0}));
  return launch(queue, kernel, shape[0] * plane * 64, wait, "layer_norm_rows");
}

Result<cl::Event> enqueue_gather(const OpKernels& ops, cl::CommandQueue& queue, const cl::Buffer& x,
                                 const Shape& shape, int64_t axis,
                                 const std::vector<int64_t>& indices, cl::Buffer& y,
                                 const Events& wait) {
  HSCHED_ASSIGN_OR_RETURN(size_t a, normalize_axis(axis, shape.size(), "Gather"));
  const int64_t extent = shape[a];
  std::vector<cl_int> rows;
  for (int64_t index : indices) {
    if (index < -extent || index >= extent) {
      return invalid_argument("ops: Gather index " + std::to_string(index) +
                              " out of range for axis size " + std::to_string(extent));
    }
    rows.push_back(static_cast<cl_int>(index < 0 ? index + extent : index));
  }
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < a; ++d) outer *= shape[d];
  for (size_t d = a + 1; d < shape.size(); ++d) inner *= shape[d];
  const auto q = static_cast<int64_t>(rows.size());
  const int64_t count = outer * q * inner;
  HSCHED_RETURN_IF_ERROR(check_int_range(std::max(count, element_count(shape)), "Gather operand"));
  HSCHED_ASSIGN_OR_RETURN(
      cl::Buffer index_buffer,
      detail::constant_buffer(ops, queue, rows.data(), rows.size() * sizeof(cl_int)));
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, "gather_rows"));
  HSCHED_RETURN_IF_ERROR(set_args(kernel, "gather_rows", x, y, index_buffer, static_cast<cl_int>(q),
                                  static_cast<cl_int>(inner), static_cast<cl_int>(extent),
                                  static_cast<cl_int>(count)));
  return launch(queue, kernel, count, wait, "gather_rows");
}

Result<cl::Event> enqueue_grid_sample(const OpKernels& ops, cl::CommandQueue& queue,
                                      const cl::Buffer& x, const Shape& x_shape,
                                      const cl::Buffer& grid, const Shape& grid_shape, int mode,
                                      int padding, bool align_corners, cl::Buffer& y,
                                      const Events& wait) {
  if (x_shape.size() != 4 || grid_shape.size() != 4 || grid_shape[0] != x_shape[0] ||
      grid_shape[3] != 2) {
    return invalid_argument("ops: GridSample needs x [N, C, H, W] and grid [N, Ho, Wo, 2]");
  }
  const int64_t count = x_shape[0] * x_shape[1] * grid_shape[1] * grid_shape[2];
  if (count > 0 && (x_shape[2] == 0 || x_shape[3] == 0)) {
    return invalid_argument("ops: GridSample of an empty plane");
  }
  HSCHED_RETURN_IF_ERROR(check_int_range(count, "GridSample output"));
  HSCHED_RETURN_IF_ERROR(check_int_range(element_count(x_shape), "GridSample input"));
  HSCHED_RETURN_IF_ERROR(check_int_range(element_count(grid_shape), "GridSample grid"));
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, "grid_sample"));
  HSCHED_RETURN_IF_ERROR(
      set_args(kernel, "grid_sample", x, grid, y, static_cast<cl_int>(x_shape[1]),
               static_cast<cl_int>(x_shape[2]), static_cast<cl_int>(x_shape[3]),
               static_cast<cl_int>(grid_shape[1]), static_cast<cl_int>(grid_shape[2]),
               static_cast<cl_int>(mode), static_cast<cl_int>(padding),
               static_cast<cl_int>(align_corners), static_cast<cl_int>(count)));
  return launch(queue, kernel, count, wait, "grid_sample");
}

Result<cl::Event> enqueue_dft(const OpKernels& ops, cl::CommandQueue& queue, const cl::Buffer& x,
                              const Shape& x_shape, size_t axis, int64_t n, int64_t bins,
                              bool inverse, cl::Buffer& y, const Events& wait) {
  if (x_shape.size() < 2 || axis + 1 >= x_shape.size() || n < 1 || bins < 1 || bins > n ||
      (x_shape.back() != 1 && x_shape.back() != 2)) {
    return invalid_argument("ops: DFT operands do not fit");
  }
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= x_shape[d];
  for (size_t d = axis + 1; d + 1 < x_shape.size(); ++d) inner *= x_shape[d];
  const int64_t count = outer * bins * inner;
  HSCHED_RETURN_IF_ERROR(check_int_range(count * 2, "DFT output"));
  HSCHED_RETURN_IF_ERROR(check_int_range(element_count(x_shape), "DFT input"));
  HSCHED_RETURN_IF_ERROR(check_int_range(n * n, "DFT length squared"));
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, "dft"));
  HSCHED_RETURN_IF_ERROR(set_args(kernel, "dft", x, y, static_cast<cl_int>(x_shape[axis]),
                                  static_cast<cl_int>(std::max<int64_t>(inner, 1)),
                                  static_cast<cl_int>(x_shape.back()), static_cast<cl_int>(n),
                                  static_cast<cl_int>(bins), static_cast<cl_int>(inverse),
                                  static_cast<cl_int>(count)));
  return launch(queue, kernel, count, wait, "dft");
}

Result<cl::Event> enqueue_stft(const OpKernels& ops, cl::CommandQueue& queue, const cl::Buffer& x,
                               const Shape& x_shape, const cl::Buffer* window, int64_t step,
                               int64_t n, int64_t bins, cl::Buffer& y, const Events& wait) {
  if (x_shape.size() != 3 || (x_shape[2] != 1 && x_shape[2] != 2) || step < 1 || n < 1 ||
      n > x_shape[1] || bins < 1 || bins > n) {
    return invalid_argument("ops: STFT operands do not fit");
  }
  const int64_t frames = (x_shape[1] - n) / step + 1;
  const int64_t count = x_shape[0] * frames * bins;
  HSCHED_RETURN_IF_ERROR(check_int_range(count * 2, "STFT output"));
  HSCHED_RETURN_IF_ERROR(check_int_range(element_count(x_shape), "STFT input"));
  HSCHED_RETURN_IF_ERROR(check_int_range(n * n, "STFT frame length squared"));
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, "stft"));
  HSCHED_RETURN_IF_ERROR(
      set_args(kernel, "stft", x, detail::or_null(window), static_cast<cl_int>(window != nullptr),
               y, static_cast<cl_int>(x_shape[1]), static_cast<cl_int>(x_shape[2]),
               static_cast<cl_int>(step), static_cast<cl_int>(n), static_cast<cl_int>(frames),
               static_cast<cl_int>(bins), static_cast<cl_int>(count)));
  return launch(queue, kernel, count, wait, "stft");
}

Result<cl::Event> enqueue_det(const OpKernels& ops, cl::CommandQueue& queue, const cl::Buffer& x,
                              const Shape& x_shape, cl::Buffer& y, const Events& wait) {
  if (x_shape.size() < 2 || x_shape.back() != x_shape[x_shape.size() - 2]) {
    return invalid_argument("ops: Det needs square matrices");
  }
  const int64_t n = x_shape.back();
  const int64_t elements = element_count(x_shape);
  const int64_t count = n == 0 ? element_count(x_shape) : elements / (n * n);
  HSCHED_RETURN_IF_ERROR(check_int_range(elements, "Det input"));
  HSCHED_ASSIGN_OR_RETURN(
      cl::Buffer work,
      detail::scratch_buffer(ops, queue, detail::ScratchSlot::kDeterminant,
                             static_cast<size_t>(std::max<int64_t>(elements, 1)) * sizeof(float)));
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, "det"));
  HSCHED_RETURN_IF_ERROR(
      set_args(kernel, "det", x, work, y, static_cast<cl_int>(n), static_cast<cl_int>(count)));
  return launch(queue, kernel, count, wait, "det");
}

Result<cl::Event> enqueue_lrn(const OpKernels& ops, cl::CommandQueue& queue, const cl::Buffer& x,
                              const Shape& shape, int64_t size, float alpha, float beta, float bias,
                              cl::Buffer& y, const Events& wait) {
  if (shape.size() < 2 || size < 1) return invalid_argument("ops: LRN needs N, C... and size >= 1");
  const int64_t count = element_count(shape);
  HSCHED_RETURN_IF_ERROR(check_int_range(count, "LRN input"));
  int64_t inner = 1;
  for (size_t d = 2; d < shape.size(); ++d) inner *= shape[d];
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, "lrn"));
  HSCHED_RETURN_IF_ERROR(set_args(kernel, "lrn", x, y,
                                  static_cast<cl_int>(std::max<int64_t>(shape[1], 1)),
                                  static_cast<cl_int>(std::max<int64_t>(inner, 1)),
                                  static_cast<cl_int>(std::min<int64_t>(size, INT32_MAX)), alpha,
                                  beta, bias, static_cast<cl_int>(count)));
  return launch(queue, kernel, count, wait, "lrn");
}

Result<cl::Event> enqueue_arg_reduce(const OpKernels& ops, cl::CommandQueue& queue,
                                     const cl::Buffer& x, const Shape& shape, int64_t axis,
                                     bool max, bool select_last, cl::Buffer& y,
                                     const Events& wait) {
  HSCHED_ASSIGN_OR_RETURN(size_t a, normalize_axis(axis, shape.size(), "ArgMax/ArgMin"));
  const int64_t n = shape[a];
  if (n == 0) return invalid_argument("ops: ArgMax/ArgMin over an empty axis");
  HSCHED_RETURN_IF_ERROR(check_int_range(element_count(shape), "ArgMax/ArgMin input"));
  int64_t inner = 1;
  for (size_t d = a + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t count = element_count(shape) / n;
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, "arg_reduce"));
  HSCHED_RETURN_IF_ERROR(set_args(kernel, "arg_reduce", x, y, static_cast<cl_int>(n),
                                  static_cast<cl_int>(std::max<int64_t>(inner, 1)),
                                  static_cast<cl_int>(max), static_cast<cl_int>(select_last),
                                  static_cast<cl_int>(count)));
  return launch(queue, kernel, count, wait, "arg_reduce");
}

Result<cl::Event> enqueue_trilu(const OpKernels& ops, cl::CommandQueue& queue, const cl::Buffer& x,
                                const Shape& shape, int64_t k, bool upper, cl::Buffer& y,
                                const Events& wait) {
  if (shape.size() < 2) return invalid_argument("ops: Trilu of rank < 2");
  const int64_t count = element_count(shape);
  HSCHED_RETURN_IF_ERROR(check_int_range(count, "Trilu input"));
  const int64_t h = shape[shape.size() - 2], w = shape[shape.size() - 1];
  // Past h + w every element is on one side of the diagonal: the clamp keeps k an int.
  const int64_t bound = h + w + 1;
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, "trilu"));
  HSCHED_RETURN_IF_ERROR(set_args(kernel, "trilu", x, y,
                                  static_cast<cl_int>(std::max<int64_t>(h, 1)),
                                  static_cast<cl_int>(std::max<int64_t>(w, 1)),
                                  static_cast<cl_int>(std::clamp(k, -bound, bound)),
                                  static_cast<cl_int>(upper), static_cast<cl_int>(count)));
  return launch(queue, kernel, count, wait, "trilu");
}

Result<cl::Event> enqueue_transpose(const OpKernels& ops, cl::CommandQueue& queue,
                                    const cl::Buffer& x, const Shape& shape,
                                    const std::vector<int64_t>& perm, cl::Buffer& y,
                                    const Events& wait) {
  const size_t rank = shape.size();
  if (rank > kMaxRank) return invalid_argument("ops: Transpose of rank > 6 is not supported");
  std::vector<int64_t> order = perm;
  if (order.empty()) {
    order.resize(rank);
    std::iota(order.rbegin(), order.rend(), 0);
  }
  std::vector<bool> seen(rank, false);
  for (int64_t p : order) {
    if (p < 0 || p >= static_cast<int64_t>(rank) || seen[static_cast<size_t>(p)] ||
        order.size() != rank) {
      return invalid_argument("ops: Transpose perm is not a permutation of the axes");
    }
    seen[static_cast<size_t>(p)] = true;
  }
  const int64_t count = element_count(shape);
  HSCHED_RETURN_IF_ERROR(check_int_range(count, "Transpose input"));
  std::vector<int64_t> in_strides(rank, 1);
  for (size_t d = rank; d-- > 1;) in_strides[d - 1] = in_strides[d] * shape[d];
  TransposeShape s{};
  s.dims.fill(1);
  s.strides.fill(0);
  for (size_t i = 0; i < rank; ++i) {
    const auto from = static_cast<size_t>(order[i]);
    s.dims[kMaxRank - rank + i] = static_cast<cl_int>(shape[from]);
    s.strides[kMaxRank - rank + i] = static_cast<cl_int>(in_strides[from]);
  }
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, "transpose"));
  HSCHED_RETURN_IF_ERROR(
      set_args(kernel, "transpose", x, y, s, cl_int{0}, static_cast<cl_int>(count)));
  return launch(queue, kernel, count, wait, "transpose");
}

namespace {

// A Slice as a strided view: (count, input stride) per axis and the first element, with axes of
// one element dropped and adjacent axes merged where the outer one's stride spans the inner one
// (as a rank-7 loss's untouched trailing axes do), so that ranks past 6 may still fit the kernel.
struct SliceView {
  std::vector<std::pair<int64_t, int64_t>> axes;  // (count, stride), outermost first
  int64_t offset = 0, count = 1;
};

SliceView slice_view(const Shape& shape, const std::vector<SliceAxis>& axes) {
  const size_t rank = shape.size();
  std::vector<int64_t> in_strides(rank, 1);
  for (size_t d = rank; d-- > 1;) in_strides[d - 1] = in_strides[d] * shape[d];
  SliceView view;
  for (size_t d = 0; d < rank; ++d) {
    const SliceAxis& a = axes[d];
    if (a.count > 0) view.offset += a.begin * in_strides[d];
    view.count *= a.count;
    if (a.count == 1) continue;
    const int64_t stride = in_strides[d] * a.step;
    if (!view.axes.empty() && view.axes.back().second == a.count * stride) {
      view.axes.back() = {view.axes.back().first * a.count, stride};
    } else {
      view.axes.emplace_back(a.count, stride);
    }
  }
  return view;
}

}  // namespace

size_t slice_rank(const Shape& shape, const std::vector<SliceAxis>& axes) {
  return axes.size() == shape.size() ? slice_view(shape, axes).axes.size() : shape.size();
}

Result<cl::Event> enqueue_slice(const OpKernels& ops, cl::CommandQueue& queue, const cl::Buffer& x,
                                const Shape& shape, const std::vector<SliceAxis>& axes,
                                cl::Buffer& y, const Events& wait) {
  if (axes.size() != shape.size()) {
    return invalid_argument("ops: a Slice's axes do not fit its input");
  }
  const SliceView view = slice_view(shape, axes);
  const size_t rank = view.axes.size();
  if (rank > kMaxRank) return invalid_argument("ops: a Slice of rank > 6 after merging axes");
  HSCHED_RETURN_IF_ERROR(check_int_range(element_count(shape), "Slice input"));
  TransposeShape s{};
  s.dims.fill(1);
  s.strides.fill(0);
  for (size_t d = 0; d < rank; ++d) {
    s.dims[kMaxRank - rank + d] = static_cast<cl_int>(view.axes[d].first);
    s.strides[kMaxRank - rank + d] = static_cast<cl_int>(view.axes[d].second);
  }
  const int64_t offset = view.offset, count = view.count;
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, "transpose"));
  HSCHED_RETURN_IF_ERROR(set_args(kernel, "transpose", x, y, s, static_cast<cl_int>(offset),
                                  static_cast<cl_int>(count)));
  return launch(queue, kernel, count, wait, "slice");
}

std::optional<ReduceKind> reduce_kind(const std::string& op_type) {
  static const std::map<std::string, ReduceKind> kKinds = {
      {"ReduceSum", ReduceKind::kSum},       {"ReduceMean", ReduceKind::kMean},
      {"ReduceMax", ReduceKind::kMax},       {"ReduceMin", ReduceKind::kMin},
      {"ReduceProd", ReduceKind::kProd},     {"ReduceL1", ReduceKind::kL1},
      {"ReduceL2", ReduceKind::kL2},         {"ReduceSumSquare", ReduceKind::kSumSquare},
      {"ReduceLogSum", ReduceKind::kLogSum}, {"ReduceLogSumExp", ReduceKind::kLogSumExp}};
  const auto it = kKinds.find(op_type);
  if (it == kKinds.end()) return std::nullopt;
  return it->second;
}

Result<cl::Event> enqueue_reduce(const OpKernels& ops, cl::CommandQueue& queue, ReduceKind kind,
                                 const cl::Buffer& x, const Shape& shape,
                                 const std::vector<bool>& reduce, cl::Buffer& y,
                                 const Events& wait) {
  const size_t rank = shape.size();
  if (rank > kMaxRank || reduce.size() != rank) {
    return invalid_argument("ops: a reduction of rank > 6, or its axes do not fit its input");
  }
  std::vector<int64_t> strides(rank, 1);
  for (size_t d = rank; d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  // Each group of axes right-aligned in its TransposeShape, in input order.
  TransposeShape kept{}, reduced{};
  kept.dims.fill(1);
  kept.strides.fill(0);
  reduced.dims.fill(1);
  reduced.strides.fill(0);
  const auto reduced_axes = static_cast<size_t>(std::count(reduce.begin(), reduce.end(), true));
  size_t kept_at = kMaxRank - (rank - reduced_axes), reduced_at = kMaxRank - reduced_axes;
  int64_t count = 1, reduced_count = 1;
  for (size_t d = 0; d < rank; ++d) {
    TransposeShape& s = reduce[d] ? reduced : kept;
    size_t& at = reduce[d] ? reduced_at : kept_at;
    s.dims[at] = static_cast<cl_int>(shape[d]);
    s.strides[at] = static_cast<cl_int>(strides[d]);
    ++at;
    (reduce[d] ? reduced_count : count) *= shape[d];
  }
  if (reduced_count == 0) return invalid_argument("ops: a reduction over an empty axis");
  HSCHED_RETURN_IF_ERROR(check_int_range(count * reduced_count, "reduction input"));
  // A mean over the trailing axes (a global average pool as ReduceMean): contiguous rows.
  const auto first_reduced =
      static_cast<size_t>(std::find(reduce.begin(), reduce.end(), true) - reduce.begin());
  if (kind == ReduceKind::kMean && rank - first_reduced == reduced_axes) {
    return enqueue_row_means(ops, queue, x, count, reduced_count, y, wait);
  }
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, "reduce_axes"));
  HSCHED_RETURN_IF_ERROR(set_args(kernel, "reduce_axes", x, y, kept, reduced,
                                  static_cast<cl_int>(reduced_count), static_cast<cl_int>(kind),
                                  static_cast<cl_int>(count)));
  return launch(queue, kernel, count, wait, "reduce_axes");
}

}  // namespace hsched::opencl
