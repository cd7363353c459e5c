// The op layer's index kernels (kernel_sources_index.h): Pad (constant, edge, reflect, wrap;
// negative pads crop) and Tile as index maps, GatherElements, ScatterElements, GatherND and
// ScatterND by int64 indices, for data in the storage type and int32/int64 data; TopK of float
// data. Same conventions as ops.h.
#pragma once

#include "backends/opencl/kernels/ops.h"
#include "hsched/dtype.h"

namespace hsched::opencl {

enum class PadMode : cl_int { kConstant = 0, kEdge, kReflect, kWrap };

// The value outside the input with PadMode::kConstant: `real` for float data, `integer` for
// int32/int64 data.
struct PadFill {
  double real = 0;
  int64_t integer = 0;
};

// y [y_shape] from x [x_shape] (rank <= 6, equal ranks): along each axis output coordinate c reads
// input coordinate c - begin[axis], mapped by `mode` where it falls outside the input (constant:
// `fill`). `dtype` is x's: float and bool data in the storage type, or int32/int64.
// InvalidArgument for a non-constant mode over an empty axis.
Result<cl::Event> enqueue_index_map(const OpKernels& ops, cl::CommandQueue& queue, DType dtype,
                                    const cl::Buffer& x, const Shape& x_shape,
                                    const std::vector<int64_t>& begin, PadMode mode, PadFill fill,
                                    cl::Buffer& y, const Shape& y_shape, const Events& wait = {});

// Reductions of the scatters, in the kernels' order.
enum class ScatterReduction : cl_int { kNone = 0, kAdd, kMul, kMax, kMin };

// Whether GatherElements/ScatterElements of these shapes fit the kernels: rank <= 6 once the
// adjacent axes off `axis` that the indices span whole are merged.
bool elements_fit(const Shape& x_shape, const Shape& idx_shape, int64_t axis);

// Gather of x (held in the storage type) along `axis` by `idx_count` indices on the device, int32
// or int64 (`idx_dtype`; negative from the end): y [x[:axis], indices..., x[axis + 1:]]. An index
// out of range gives 0 and sets bit kIndexOutOfRange of the int at `error`.
Result<cl::Event> enqueue_gather_by(const OpKernels& ops, cl::CommandQueue& queue,
                                    const cl::Buffer& x, const Shape& shape, int64_t axis,
                                    const cl::Buffer& idx, DType idx_dtype, int64_t idx_count,
                                    const cl::Buffer& error, cl::Buffer& y,
                                    const Events& wait = {});

// GatherElements: y [idx_shape] takes x at each element's coordinates with the one along `axis`
// replaced by the index (int64, negative from the end). An index out of range gives 0 and sets
// bit kIndexOutOfRange of the int at `error`. `dtype` as for enqueue_index_map; ranks <= 6.
Result<cl::Event> enqueue_gather_elements(const OpKernels& ops, cl::CommandQueue& queue,
                                          DType dtype, const cl::Buffer& x, const Shape& x_shape,
                                          const cl::Buffer& idx, const Shape& idx_shape,
                                          int64_t axis, const cl::Buffer& error, cl::Buffer& y,
                                          const Events& wait = {});

// ScatterElements: y = x, then each update combined into y at its index's coordinates, in index
// order (one work item). Indices out of range are skipped and set kIndexOutOfRange.
Result<cl::Event> enqueue_scatter_elements(const OpKernels& ops, cl::CommandQueue& queue,
                                           DType dtype, const cl::Buffer& x, const Shape& x_shape,
                                           const cl::Buffer& idx, const Shape& idx_shape,
                                           const cl::Buffer& updates, int64_t axis,
                                           ScatterReduction reduction, const cl::Buffer& error,
                                           cl::Buffer& y, const Events& wait = {});

// GatherND with `batch_dims`: y [idx_shape[:-1], x_shape[batch_dims + k:]] (k = idx_shape[-1]).
// Indices out of range give 0 and set kIndexOutOfRange.
Result<cl::Event> enqueue_gather_nd(const OpKernels& ops, cl::CommandQueue& queue, DType dtype,
                                    const cl::Buffer& x, const Shape& x_shape,
                                    const cl::Buffer& idx, const Shape& idx_shape,
                                    int64_t batch_dims, const cl::Buffer& error, cl::Buffer& y,
                                    const Shape& y_shape, const Events& wait = {});

// ScatterND: y = x, then each update slice combined into y at its index row, in order (one work
// item). Rows out of range are skipped and set kIndexOutOfRange.
Result<cl::Event> enqueue_scatter_nd(const OpKernels& ops, cl::CommandQueue& queue, DType dtype,
                                     const cl::Buffer& x, const Shape& x_shape,
                                     const cl::Buffer& idx, const Shape& idx_shape,
                                     const cl::Buffer& updates, ScatterReduction reduction,
                                     const cl::Buffer& error, cl::Buffer& y,
                                     const Events& wait = {});

// TopK of float x along `axis`: the k largest (or smallest) values, NaN above every number, ties
// to the lower index, in order, and their int64 indices. 0 <= k <= the axis' size.
Result<cl::Event> enqueue_top_k(const OpKernels& ops, cl::CommandQueue& queue, const cl::Buffer& x,
                                const Shape& x_shape, int64_t axis, int64_t k, bool largest,
                                cl::Buffer& values, cl::Buffer& indices, const Events& wait = {});

// Generators into y of `count` elements of `dtype` (float or bool in the storage type, or
// int32/int64): a fill with `value` (ConstantOfShape), start + i * delta (Range; the integer
// fields for integers), and ones where column - row == k in rows of `width` (EyeLike).
Result<cl::Event> enqueue_fill_value(const OpKernels& ops, cl::CommandQueue& queue, DType dtype,
                                     PadFill value, cl::Buffer& y, int64_t count,
                                     const Events& wait = {});
Result<cl::Event> enqueue_range(const OpKernels& ops, cl::CommandQueue& queue, DType dtype,
                                PadFill start, PadFill delta, cl::Buffer& y, int64_t count,
                                const Events& wait = {});
Result<cl::Event> enqueue_eye(const OpKernels& ops, cl::CommandQueue& queue, DType dtype,
                              int64_t width, int64_t k, cl::Buffer& y, int64_t count,
                              const Events& wait = {});

// OneHot: y [outer, depth, inner] of `dtype` from int64 indices [outer, inner] and values
// [off, on] of `dtype`.
Result<cl::Event> enqueue_one_hot(const OpKernels& ops, cl::CommandQueue& queue, DType dtype,
                                  const cl::Buffer& idx, const cl::Buffer& values, int64_t outer,
                                  int64_t depth, int64_t inner, cl::Buffer& y,
                                  const Events& wait = {});

// ReverseSequence of x (rank 2..6) by int64 lengths per batch; a length outside [0, time] copies
// that sequence and sets kIndexOutOfRange.
Result<cl::Event> enqueue_reverse_sequence(const OpKernels& ops, cl::CommandQueue& queue,
                                           DType dtype, const cl::Buffer& x, const Shape& shape,
                                           const cl::Buffer& lens, int64_t batch_axis,
                                           int64_t time_axis, const cl::Buffer& error,
                                           cl::Buffer& y, const Events& wait = {});

}  // namespace hsched::opencl
