// Helpers shared by the op layer's files (ops.cpp, ops_matmul.cpp); not a public interface.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "backends/opencl/kernels/ops.h"

namespace hsched::opencl::detail {

// Internal "ops: <what> failed (cl error N)" unless `error` is CL_SUCCESS.
Status check_cl(cl_int error, const std::string& what);

int64_t element_count(const Shape& shape);
// InvalidArgument naming `what` unless 0 <= count < 2^31 (the kernels index with int).
Status check_int_range(int64_t count, const std::string& what);

// `axis` in [-rank, rank) made non-negative; InvalidArgument naming `op` otherwise.
Result<size_t> normalize_axis(int64_t axis, size_t rank, const char* op);

// Enqueues `kernel` over `count` work items (rounded up to a multiple of 64) after `wait`.
Result<cl::Event> launch(cl::CommandQueue& queue, const cl::Kernel& kernel, int64_t count,
                         const Events& wait, const char* name);
// Enqueues `kernel` over `global` in work groups of `local` after `wait`; every kernel of the op
// layer is enqueued here (through `launch` or directly), so that a recording sees it.
Result<cl::Event> launch_range(cl::CommandQueue& queue, const cl::Kernel& kernel,
                               const cl::NDRange& global, const cl::NDRange& local,
                               const Events& wait, const char* name);

// Recording, for ClProgram's replay (program.h): one node's kernel launches, kept with their
// arguments as set, so that enqueuing the same kernels again repeats the node without the op
// layer's host work (finding the kernel, setting each argument, making an event).
struct RecordedLaunch {
  cl::Kernel kernel;
  cl::NDRange global;
  cl::NDRange local;
};
struct Recording {
  std::vector<RecordedLaunch> launches;
  // False once the node enqueued anything but a kernel launch of its own (a CLBlast call, a
  // fill, a copy, a barrier, a scratch buffer that had to grow, one kernel launched twice):
  // its launches alone would not repeat it.
  bool replayable = true;
};
// While alive, the op layer on this thread records into `recording`: queue_kernel creates a
// kernel for each call (arguments set on a shared one would be overwritten by the next node),
// launch_range keeps each launch, and not_replayable() marks it. Commands are enqueued as usual.
class RecordScope {
 public:
  explicit RecordScope(Recording& recording);
  ~RecordScope();
  RecordScope(const RecordScope&) = delete;
  RecordScope& operator=(const RecordScope&) = delete;

 private:
  Recording* previous_;
};
// This thread's recording, or nullptr.
Recording* recording();
// Marks this thread's recording, if any, as not replayable: the caller enqueues something that
// is not a kernel launch.
void not_replayable();

// How a tiled GEMM (conv_gemm_*, matmul_tiled_*) covers `batch` products t[m, cols] = A[m, k]
// B[k, cols]: square tiles of `tile` (64, 32 or 16), K in `splits` chunks of `k_chunk` (whole
// steps of 16), aiming for `target_groups` work groups: kConvTargetGroups, two per compute unit
// of a large GPU (an H100's 132 SMs), for the convolutions; kMatMulTargetGroups for the MatMuls
// and 1x1 convolutions, whose long-K products of few tiles (a transformer's [197, 768] x [768,
// 192]) otherwise leave most of such a GPU idle (measured, docs/benchmarks.md). K splits to fill
// that target (the convolutions), or only where the tiles alone fill less than half of it and K
// makes 4 chunks of 128 or more (the MatMuls: a reduction launch costs them more than a fuller
// device gains otherwise), or never (a MatMul group).
struct GemmTiling {
  int64_t tile = 0;
  int64_t k_chunk = 0;
  int64_t splits = 0;
};
enum class KSplit { kToFill, kUnderHalf, kNever };
constexpr int64_t kConvTargetGroups = 256;
constexpr int64_t kMatMulTargetGroups = 1024;
GemmTiling gemm_tiling(int64_t m, int64_t cols, int64_t k, int64_t batch = 1,
                       KSplit split = KSplit::kToFill, int64_t target_groups = kConvTargetGroups);

// y[i] = a[i] x b[i] for i < batch: dense row-major [batch, m, k] by [batch, k, n] into
// [batch, m, n] in one tiled launch (matmul_tiled_*, K split where it pays), any size whose
// elements an int indexes (Conv's Winograd products).
Result<cl::Event> enqueue_batched_product(const OpKernels& ops, cl::CommandQueue& queue,
                                          const cl::Buffer& a, const cl::Buffer& b, cl::Buffer& y,
                                          int64_t batch, int64_t m, int64_t n, int64_t k,
                                          const Events& wait);

// The strides of a MatMul operand read through `view` of a buffer of shape `buffer`, checked to
// stay inside it; nullopt without a view.
Result<std::optional<OperandStrides>> viewed_operand(const std::optional<StridedView>& view,
                                                     const Shape& buffer);

// y = op(a, b_scale * b) with broadcasting: enqueue_binary, and Gemm's beta * C term.
Result<cl::Event> enqueue_scaled_binary(const OpKernels& ops, cl::CommandQueue& queue, BinaryOp op,
                                        const cl::Buffer& a, const Shape& a_shape,
                                        const cl::Buffer& b, const Shape& b_shape, float b_scale,
                                        cl::Buffer& y, const Events& wait);

// Broadcasting for the elementwise kernels: shapes right-aligned to rank kMaxRank, mirroring
// BroadcastShape and SelectShape in kernel_sources.h (plain ints: one layout on host and device).
inline constexpr size_t kMaxRank = 6;
struct BroadcastShape {
  std::array<cl_int, kMaxRank> dims;
  std::array<cl_int, kMaxRank> a_strides;
  std::array<cl_int, kMaxRank> b_strides;
};
struct SelectShape {
  std::array<cl_int, kMaxRank> dims;
  std::array<cl_int, kMaxRank> cond_strides;
  std::array<cl_int, kMaxRank> a_strides;
  std::array<cl_int, kMaxRank> b_strides;
};
// `out` right-aligned to rank kMaxRank, leading 1s.
std::array<cl_int, kMaxRank> padded_dims(const Shape& out);
// Strides of `shape` right-aligned to rank kMaxRank, 0 along broadcast dims.
std::array<cl_int, kMaxRank> broadcast_strides(const Shape& shape);
// The broadcast of a and b (ranks <= 6): the output's element count, checked below 2^31 and
// named `what` in errors, and the kernels' BroadcastShape.
struct Broadcast {
  int64_t count = 0;
  BroadcastShape shape{};
};
Result<Broadcast> broadcast_of(const Shape& a, const Shape& b, const std::string& what);
// Where's broadcast of cond, a and b (ranks <= 6), likewise.
struct SelectBroadcast {
  int64_t count = 0;
  SelectShape shape{};
};
Result<SelectBroadcast> select_broadcast_of(const Shape& cond, const Shape& a, const Shape& b);

// A buffer argument the kernel does not read (an absent bias, residual, input scale): `buffer`,
// or a null cl_mem where it is null, which the kernel sees as a null pointer. Drivers take a
// null argument for nothing where every buffer costs each launch (NVIDIA's enqueue: about
// 0.4 us a buffer, docs/benchmarks.md), so a kernel is given no stand-in buffer.
inline const cl::Buffer& or_null(const cl::Buffer* buffer) {
  static const cl::Buffer kNull;
  return buffer != nullptr ? *buffer : kNull;
}

// Sets kernel arguments in order from argument `first`; the first failure is reported naming the
// kernel.
template <typename... Args>
Status set_args_from(cl::Kernel& kernel, const char* name, cl_uint first, const Args&... args) {
  cl_uint index = first;
  cl_int error = CL_SUCCESS;
  ((error = error == CL_SUCCESS ? kernel.setArg(index++, args) : error), ...);
  return check_cl(error, std::string("setArg of ") + name);
}
// The same from the first argument.
template <typename... Args>
Status set_args(cl::Kernel& kernel, const char* name, const Args&... args) {
  return set_args_from(kernel, name, 0, args...);
}

}  // namespace hsched::opencl::detail
