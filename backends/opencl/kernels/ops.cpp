// OpKernels, elementwise ops and the reductions (Softmax, LayerNormalization, GlobalAveragePool).
#include "backends/opencl/kernels/ops.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include <CL/cl_half.h>

#include "backends/opencl/kernels/kernel_sources.h"
#include "backends/opencl/kernels/kernel_sources_conv.h"
#include "backends/opencl/kernels/kernel_sources_index.h"
#include "backends/opencl/kernels/kernel_sources_integer.h"
#include "backends/opencl/kernels/kernel_sources_matmul.h"
#include "backends/opencl/kernels/kernel_sources_quant.h"
#include "backends/opencl/kernels/kernel_sources_sample.h"
#include "backends/opencl/kernels/kernel_sources_spatial.h"
#include "backends/opencl/kernels/ops_scratch.h"
#include "backends/opencl/kernels/ops_util.h"

namespace hsched::opencl {
namespace detail {

Status check_cl(cl_int error, const std::string& what) {
  if (error == CL_SUCCESS) return Status::ok();
  return internal_error("ops: " + what + " failed (cl error " + std::to_string(error) + ")");
}

int64_t element_count(const Shape& shape) {
  int64_t count = 1;
  for (int64_t dim : shape) count *= dim;
  return count;
}

Result<size_t> normalize_axis(int64_t axis, size_t rank, const char* op) {
  const auto r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r) {
    return invalid_argument(std::string("ops: ") + op + " axis " + std::to_string(axis) +
                            " out of range for rank " + std::to_string(rank));
  }
  return static_cast<size_t>(axis < 0 ? axis + r : axis);
}

Status check_int_range(int64_t count, const std::string& what) {
  if (count >= 0 && count < (int64_t{1} << 31)) return Status::ok();
  return invalid_argument("ops: " + what + " has " + std::to_string(count) +
                          " elements; the kernels index with int (< 2^31)");
}

Result<cl::Event> launch(cl::CommandQueue& queue, const cl::Kernel& kernel, int64_t count,
                         const Events& wait, const char* name) {
  constexpr int64_t kGroup = 64;
  if (count == 0) {  // nothing to compute; still give the caller an event to chain on
    cl::Event event;
    HSCHED_RETURN_IF_ERROR(check_cl(queue.enqueueMarkerWithWaitList(&wait, &event),
                                    std::string("marker for ") + name));
    return event;
  }
  const auto global = static_cast<size_t>((count + kGroup - 1) / kGroup * kGroup);
  return launch_range(queue, kernel, cl::NDRange(global), cl::NDRange(static_cast<size_t>(kGroup)),
                      wait, name);
}

Result<cl::Event> launch_range(cl::CommandQueue& queue, const cl::Kernel& kernel,
                               const cl::NDRange& global, const cl::NDRange& local,
                               const Events& wait, const char* name) {
  cl::Event event;
  HSCHED_RETURN_IF_ERROR(
      check_cl(queue.enqueueNDRangeKernel(kernel, cl::NullRange, global, local, &wait, &event),
               std::string("enqueue of ") + name));
  if (Recording* r = recording()) {
    const bool again = std::any_of(r->launches.begin(), r->launches.end(),
                                   [&](const RecordedLaunch& l) { return l.kernel() == kernel(); });
    if (again) r->replayable = false;  // its arguments changed in between
    r->launches.push_back({kernel, global, local});
  }
  return event;
}

namespace {
thread_local Recording* current_recording = nullptr;
}  // namespace

RecordScope::RecordScope(Recording& recording) : previous_(current_recording) {
  current_recording = &recording;
}
RecordScope::~RecordScope() { current_recording = previous_; }

Recording* recording() { return current_recording; }

void not_replayable() {
  if (current_recording != nullptr) current_recording->replayable = false;
}

GemmTiling gemm_tiling(int64_t m, int64_t cols, int64_t k, int64_t batch, KSplit split,
                       int64_t target_groups) {
  constexpr int64_t kMinSplitK = 128;  // K elements per split at least (8 steps of 16)
  auto tiles = [&](int64_t tile) {
    return ((m + tile - 1) / tile) * ((cols + tile - 1) / tile) * batch;
  };
  if (split == KSplit::kUnderHalf) {
    // Fewer than 4 chunks of K gain less than their reduction launch costs.
    const GemmTiling whole = gemm_tiling(m, cols, k, batch, KSplit::kNever, target_groups);
    if (tiles(whole.tile) >= target_groups / 2 || k / kMinSplitK < 4) return whole;
  }
  // Wider tiles do more work per local-memory read (64: four times 32's): the widest whose
  // groups, K split as far as it goes, make up half the target; else the narrowest, 32 for a
  // MatMul whose K splits (16-wide tiles with K split ran a transformer's [197, 768] x [768, 192]
  // 40% slower on the H200: measured, docs/benchmarks.md).
  const int64_t max_splits = split == KSplit::kNever ? 1 : std::max<int64_t>(1, k / kMinSplitK);
  const int64_t narrowest = split == KSplit::kUnderHalf ? 32 : 16;
  GemmTiling t;
  for (t.tile = 64; t.tile > narrowest && tiles(t.tile) * max_splits < target_groups / 2;) {
    t.tile /= 2;
  }
  const int64_t wanted = std::clamp<int64_t>(target_groups / tiles(t.tile), 1, max_splits);
  t.k_chunk = ((k + wanted - 1) / wanted + 15) / 16 * 16;
  t.splits = (k + t.k_chunk - 1) / t.k_chunk;
  return t;
}

}  // namespace detail

using detail::check_cl;
using detail::check_int_range;
using detail::element_count;
using detail::launch;
using detail::normalize_axis;
using detail::set_args;

size_t storage_bytes(Storage storage) { return storage == Storage::kFloat16 ? 2 : 4; }

Result<UnaryOp> unary_op_from_onnx(const std::string& op_type) {
  static const std::map<std::string, UnaryOp> kOps = {
      {"Relu", UnaryOp::kRelu},
      {"LeakyRelu", UnaryOp::kLeakyRelu},
      {"Sigmoid", UnaryOp::kSigmoid},
      {"Tanh", UnaryOp::kTanh},
      {"Erf", UnaryOp::kErf},
      {"Gelu", UnaryOp::kGelu},
      {"Exp", UnaryOp::kExp},
      {"Log", UnaryOp::kLog},
      {"Sqrt", UnaryOp::kSqrt},
      {"Neg", UnaryOp::kNeg},
      {"Abs", UnaryOp::kAbs},
      {"Clip", UnaryOp::kClip},
      {"HardSigmoid", UnaryOp::kHardSigmoid},
      {"HardSwish", UnaryOp::kHardSwish},
      {"Reciprocal", UnaryOp::kReciprocal},
      {"IsNaN", UnaryOp::kIsNaN},
      {"Not", UnaryOp::kNot},
      {"Sin", UnaryOp::kSin},
      {"Cos", UnaryOp::kCos},
      {"Tan", UnaryOp::kTan},
      {"Asin", UnaryOp::kAsin},
      {"Acos", UnaryOp::kAcos},
      {"Atan", UnaryOp::kAtan},
      {"Sinh", UnaryOp::kSinh},
      {"Cosh", UnaryOp::kCosh},
      {"Asinh", UnaryOp::kAsinh},
      {"Acosh", UnaryOp::kAcosh},
      {"Atanh", UnaryOp::kAtanh},
      {"Floor", UnaryOp::kFloor},
      {"Ceil", UnaryOp::kCeil},
      {"Round", UnaryOp::kRound},
      {"Sign", UnaryOp::kSign},
      {"Softplus", UnaryOp::kSoftplus},
      {"Softsign", UnaryOp::kSoftsign},
      {"Elu", UnaryOp::kElu},
      {"Selu", UnaryOp::kSelu},
      {"ThresholdedRelu", UnaryOp::kThresholdedRelu},
      {"Shrink", UnaryOp::kShrink},
      {"IsInf", UnaryOp::kIsInf}};
  auto it = kOps.find(op_type);
  if (it == kOps.end()) return invalid_argument("ops: no OpenCL unary kernel for op " + op_type);
  return it->second;
}

Result<BinaryOp> binary_op_from_onnx(const std::string& op_type) {
  static const std::map<std::string, BinaryOp> kOps = {
      {"Add", BinaryOp::kAdd},         {"Sub", BinaryOp::kSub},
      {"Mul", BinaryOp::kMul},         {"Div", BinaryOp::kDiv},
      {"Pow", BinaryOp::kPow},         {"Max", BinaryOp::kMax},
      {"Min", BinaryOp::kMin},         {"Equal", BinaryOp::kEqual},
      {"Less", BinaryOp::kLess},       {"LessOrEqual", BinaryOp::kLessOrEqual},
      {"Greater", BinaryOp::kGreater}, {"GreaterOrEqual", BinaryOp::kGreaterOrEqual},
      {"And", BinaryOp::kAnd},         {"Or", BinaryOp::kOr},
      {"Xor", BinaryOp::kXor},         {"PRelu", BinaryOp::kPRelu},
      {"Mod", BinaryOp::kFmod}};
  auto it = kOps.find(op_type);
  if (it == kOps.end()) return invalid_argument("ops: no OpenCL binary kernel for op " + op_type);
  return it->second;
}

OpKernels::OpKernels(cl::Context context, Storage storage, bool ordered_sums,
                     cl::Program elementwise, cl::Program reduce, cl::Program spatial)
    : context_(std::move(context)),
      storage_(storage),
      ordered_sums_(ordered_sums),
      elementwise_(std::move(elementwise)),
      reduce_(std::move(reduce)),
      spatial_(std::move(spatial)) {}

Result<std::unique_ptr<OpKernels>> OpKernels::create(const cl::Context& context,
                                                     const cl::Device& device, Storage storage,
                                                     Compiler& compiler, int64_t deadline_ms) {
  // Divisions and square roots correctly rounded where the device offers it (NVIDIA's default
  // division is within 2.5 ulp): a quotient then rounds to the integer the CPU's does, as
  // QuantizeLinear and DynamicQuantizeLinear need (one of six elements differed on an H200).
  cl_device_fp_config fp_config = 0;
  device.getInfo(CL_DEVICE_SINGLE_FP_CONFIG, &fp_config);
  const bool rounded = (fp_config & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) != 0;
  const std::string options = std::string("-cl-std=CL1.2") +
                              (storage == Storage::kFloat16 ? " -DSTORAGE_HALF" : "") +
                              (rounded ? " -cl-fp32-correctly-rounded-divide-sqrt" : "");
  const std::string prelude = kStoragePrelude;
  HSCHED_ASSIGN_OR_RETURN(cl::Program elementwise,
                          compiler.build(context, device,
                                         prelude + kUnaryFunctionSource + kElementwiseSource +
                                             kIntegerSource + kIndexSource + kQuantSource,
                                         options, deadline_ms));
  HSCHED_ASSIGN_OR_RETURN(
      cl::Program reduce,
      compiler.build(context, device, prelude + kReduceSource, options, deadline_ms));
  HSCHED_ASSIGN_OR_RETURN(cl::Program spatial,
                          compiler.build(context, device,
                                         prelude + kUnaryFunctionSource + kMatMulSource +
                                             kConvSource + kSpatialSource + kSampleSource,
                                         options, deadline_ms));
  cl_device_type type = 0;
  device.getInfo(CL_DEVICE_TYPE, &type);
  return std::unique_ptr<OpKernels>(
      new OpKernels(context, storage, (type & CL_DEVICE_TYPE_CPU) != 0, std::move(elementwise),
                    std::move(reduce), std::move(spatial)));
}

Result<cl::Kernel> OpKernels::kernel(const char* name) const {
  cl_int error = CL_SUCCESS;
  static const std::map<std::string, int> kProgramOf = {{"softmax", 1},
                                                        {"softmax_rows", 1},
                                                        {"softmax_rows_q", 1},
                                                        {"row_mean_rows", 1},
                                                        {"layer_norm", 1},
                                                        {"row_mean", 1},
                                                        {"im2col", 2},
                                                        {"conv_epilogue", 2},
                                                        {"conv_direct", 2},
                                                        {"conv_direct_q", 2},
                                                        {"conv_direct_qc", 2},
                                                        {"conv_direct_pixel", 2},
                                                        {"conv_rows", 2},
                                                        {"conv_transpose", 2},
                                                        {"pool", 2},
                                                        {"instance_norm", 2},
                                                        {"resize", 2},
                                                        {"transpose", 2},
                                                        {"reduce_axes", 2},
                                                        {"copy_rows", 2},
                                                        {"conv_gemm_64", 2},
                                                        {"conv_gemm_32", 2},
                                                        {"conv_gemm_16", 2},
                                                        {"conv_gemm_64_1x1", 2},
                                                        {"conv_gemm_32_1x1", 2},
                                                        {"conv_gemm_16_1x1", 2},
                                                        {"conv_gemm_q_64", 2},
                                                        {"conv_gemm_q_32", 2},
                                                        {"conv_gemm_q_16", 2},
                                                        {"conv_gemm_q_64_1x1", 2},
                                                        {"conv_gemm_q_32_1x1", 2},
                                                        {"conv_gemm_q_16_1x1", 2},
                                                        {"conv_gemm_qc_64", 2},
                                                        {"conv_gemm_qc_32", 2},
                                                        {"conv_gemm_qc_16", 2},
                                                        {"conv_gemm_qc_64_1x1", 2},
                                                        {"conv_gemm_qc_32_1x1", 2},
                                                        {"conv_gemm_qc_16_1x1", 2},
                                                        {"conv_gemm_pair_64", 2},
                                                        {"conv_gemm_pair_32", 2},
                                                        {"conv_gemm_pair_16", 2},
                                                        {"conv_split_reduce", 2},
                                                        {"winograd_input", 2},
                                                        {"winograd_output", 2},
                                                        {"matmul_tiled_64", 2},
                                                        {"matmul_tiled_32", 2},
                                                        {"matmul_tiled_16", 2},
                                                        {"matmul_tiled_n_64", 2},
                                                        {"matmul_tiled_n_32", 2},
                                                        {"matmul_tiled_n_16", 2},
                                                        {"matmul_qdq_64", 2},
                                                        {"matmul_qdq_32", 2},
                                                        {"matmul_qdq_16", 2},
                                                        {"matmul_qdq_n_64", 2},
                                                        {"matmul_qdq_n_32", 2},
                                                        {"matmul_qdq_n_16", 2},
                                                        {"matmul_qdq_t_64", 2},
                                                        {"matmul_qdq_t_32", 2},
                                                        {"matmul_qdq_t_16", 2},
                                                        {"matmul_qdq_nt_64", 2},
                                                        {"matmul_qdq_nt_32", 2},
                                                        {"matmul_qdq_nt_16", 2},
                                                        {"matmul_split_reduce", 2},
                                                        {"attention_rows", 2},
                                                        {"se_gate", 2},
                                                        {"matmul_group_64", 2},
                                                        {"matmul_group_32", 2},
                                                        {"matmul_group_16", 2},
                                                        {"slice_rows", 2},
                                                        {"gather_rows", 2},
                                                        {"arg_reduce", 2},
                                                        {"trilu", 2},
                                                        {"lrn", 2},
                                                        {"resize_cubic_axis", 2},
                                                        {"grid_sample", 2},
                                                        {"dft", 2},
                                                        {"det", 2},
                                                        {"stft", 2},
                                                        {"instance_norm_chunks", 2},
                                                        {"instance_norm_merge", 2},
                                                        {"instance_norm_apply", 2},
                                                        {"instance_norm_ordered", 2},
                                                        {"layer_norm_rows", 2},
                                                        {"layer_norm_rows_q", 2},
                                                        {"gemv_rows", 2},
                                                        {"matmul_row", 2}};
  const auto it = kProgramOf.find(name);
  const int which = it == kProgramOf.end() ? 0 : it->second;
  const cl::Program& program = which == 1 ? reduce_ : which == 2 ? spatial_ : elementwise_;
  cl::Kernel kernel(program, name, &error);
  HSCHED_RETURN_IF_ERROR(check_cl(error, std::string("clCreateKernel ") + name));
  return kernel;
}

Result<cl::Event> enqueue_fill(const OpKernels& ops, cl::CommandQueue& queue, float value,
                               cl::Buffer& y, int64_t count, const Events& wait) {
  detail::not_replayable();  // a fill
  cl::Event event;
  const auto bytes = static_cast<size_t>(count) * storage_bytes(ops.storage());
  const cl_int error = bytes == 0 ? queue.enqueueMarkerWithWaitList(&wait, &event)
                       : ops.storage() == Storage::kFloat32
                           ? queue.enqueueFillBuffer(y, value, 0, bytes, &wait, &event)
                           : queue.enqueueFillBuffer(y, cl_half_from_float(value, CL_HALF_RTE), 0,
                                                     bytes, &wait, &event);
  HSCHED_RETURN_IF_ERROR(check_cl(error, "fill"));
  return event;
}

Result<cl::Event> enqueue_unary(const OpKernels& ops, cl::CommandQueue& queue, UnaryOp op,
                                float alpha, float beta, const cl::Buffer& x, cl::Buffer& y,
                                int64_t count, const Events& wait,
                                const std::optional<QdqRow>& quantized) {
  HSCHED_RETURN_IF_ERROR(check_int_range(count, "unary input"));
  const char* name = quantized ? "unary_q" : "unary";
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, name));
  HSCHED_RETURN_IF_ERROR(set_args(kernel, name, x, y, static_cast<cl_int>(op), alpha, beta,
                                  static_cast<cl_int>(count)));
  if (quantized)
    HSCHED_RETURN_IF_ERROR(check_cl(kernel.setArg(6, *quantized), "setArg of unary_q"));
  return launch(queue, kernel, count, wait, name);
}

Result<cl::Event> enqueue_quantize_linear(const OpKernels& ops, cl::CommandQueue& queue,
                                          const QuantizeParams& params, const cl::Buffer& x,
                                          const cl::Buffer& scale, const cl::Buffer* zero,
                                          cl::Buffer& y, int64_t count, const Events& wait) {
  HSCHED_RETURN_IF_ERROR(check_int_range(count, "quantize_linear input"));
  if (params.int32) {
    HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, "dequantize_i32"));
    HSCHED_RETURN_IF_ERROR(set_args(kernel, "dequantize_i32", x, scale, detail::or_null(zero), y,
                                    static_cast<cl_int>(zero != nullptr ? 1 : 0),
                                    static_cast<cl_int>(params.channels),
                                    static_cast<cl_int>(params.inner), static_cast<cl_int>(count)));
    return launch(queue, kernel, count, wait, "dequantize_i32");
  }
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, "quantize_linear"));
  HSCHED_RETURN_IF_ERROR(set_args(kernel, "quantize_linear", x, scale, detail::or_null(zero), y,
                                  static_cast<cl_int>(params.quantize ? 1 : 0),
                                  static_cast<cl_int>(zero != nullptr ? 1 : 0), params.lo,
                                  params.hi, static_cast<cl_int>(params.channels),
                                  static_cast<cl_int>(params.inner), static_cast<cl_int>(count)));
  return launch(queue, kernel, count, wait, "quantize_linear");
}

Result<cl::Event> enqueue_batch_norm(const OpKernels& ops, cl::CommandQueue& queue,
                                     const cl::Buffer& x, const Shape& shape,
                                     const cl::Buffer& scale, const cl::Buffer& bias,
                                     const cl::Buffer& mean, const cl::Buffer& var, float epsilon,
                                     cl::Buffer& y, const Events& wait) {
  const int64_t count = detail::element_count(shape);
  HSCHED_RETURN_IF_ERROR(check_int_range(count, "batch_norm input"));
  if (shape.size() < 2) return invalid_argument("ops: batch_norm input of rank below 2");
  int64_t inner = 1;
  for (size_t i = 2; i < shape.size(); ++i) inner *= shape[i];
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, "batch_norm"));
  HSCHED_RETURN_IF_ERROR(set_args(kernel, "batch_norm", x, scale, bias, mean, var, y, epsilon,
                                  static_cast<cl_int>(shape[1]), static_cast<cl_int>(inner),
                                  static_cast<cl_int>(count)));
  return launch(queue, kernel, count, wait, "batch_norm");
}

Result<Shape> broadcast_shape(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      return invalid_argument("ops: shapes do not broadcast at axis " + std::to_string(i) + " (" +
                              std::to_string(da) + " vs " + std::to_string(db) + ")");
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

namespace {

using detail::broadcast_strides;
using detail::BroadcastShape;
using detail::kMaxRank;
using detail::padded_dims;

// The binary kernel into y of shape `out`, which a_shape and b_shape broadcast to.
Result<cl::Event> launch_binary(const OpKernels& ops, cl::CommandQueue& queue, BinaryOp op,
                                const cl::Buffer& a, const Shape& a_shape, const cl::Buffer& b,
                                const Shape& b_shape, float b_scale, const Shape& out,
                                cl::Buffer& y, const Events& wait) {
  if (a_shape.size() > kMaxRank || b_shape.size() > kMaxRank || out.size() > kMaxRank) {
    return invalid_argument("ops: binary op inputs of rank > 6 are not supported");
  }
  const int64_t count = element_count(out);
  HSCHED_RETURN_IF_ERROR(check_int_range(count, "binary output"));
  BroadcastShape shape{};
  shape.dims = padded_dims(out);
  shape.a_strides = broadcast_strides(a_shape);
  shape.b_strides = broadcast_strides(b_shape);
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, "binary"));
  HSCHED_RETURN_IF_ERROR(set_args(kernel, "binary", a, b, y, static_cast<cl_int>(op), b_scale,
                                  shape, static_cast<cl_int>(count)));
  return launch(queue, kernel, count, wait, "binary");
}

}  // namespace

std::array<cl_int, detail::kMaxRank> detail::padded_dims(const Shape& out) {
  std::array<cl_int, kMaxRank> dims;
  dims.fill(1);
  for (size_t i = 0; i < out.size(); ++i) {
    dims[kMaxRank - out.size() + i] = static_cast<cl_int>(out[i]);
  }
  return dims;
}

std::array<cl_int, detail::kMaxRank> detail::broadcast_strides(const Shape& shape) {
  std::array<cl_int, kMaxRank> strides{};
  int64_t stride = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    const size_t src = shape.size() - 1 - i;
    const size_t dst = kMaxRank - 1 - i;
    strides[dst] = shape[src] == 1 ? 0 : static_cast<cl_int>(stride);
    stride *= shape[src];
  }
  return strides;
}

Result<detail::Broadcast> detail::broadcast_of(const Shape& a, const Shape& b,
                                               const std::string& what) {
  if (a.size() > kMaxRank || b.size() > kMaxRank) {
    return invalid_argument("ops: " + what + " inputs of rank > 6 are not supported");
  }
  HSCHED_ASSIGN_OR_RETURN(Shape out, broadcast_shape(a, b));
  Broadcast broadcast;
  broadcast.count = element_count(out);
  HSCHED_RETURN_IF_ERROR(check_int_range(broadcast.count, what + " output"));
  broadcast.shape.dims = padded_dims(out);
  broadcast.shape.a_strides = broadcast_strides(a);
  broadcast.shape.b_strides = broadcast_strides(b);
  return broadcast;
}

Result<detail::SelectBroadcast> detail::select_broadcast_of(const Shape& cond, const Shape& a,
                                                            const Shape& b) {
  if (cond.size() > kMaxRank || a.size() > kMaxRank || b.size() > kMaxRank) {
    return invalid_argument("ops: Where inputs of rank > 6 are not supported");
  }
  HSCHED_ASSIGN_OR_RETURN(Shape values, broadcast_shape(a, b));
  HSCHED_ASSIGN_OR_RETURN(Shape out, broadcast_shape(cond, values));
  SelectBroadcast broadcast;
  broadcast.count = element_count(out);
  HSCHED_RETURN_IF_ERROR(check_int_range(broadcast.count, "Where output"));
  broadcast.shape.dims = padded_dims(out);
  broadcast.shape.cond_strides = broadcast_strides(cond);
  broadcast.shape.a_strides = broadcast_strides(a);
  broadcast.shape.b_strides = broadcast_strides(b);
  return broadcast;
}

Result<cl::Event> detail::enqueue_scaled_binary(const OpKernels& ops, cl::CommandQueue& queue,
                                                BinaryOp op, const cl::Buffer& a,
                                                const Shape& a_shape, const cl::Buffer& b,
                                                const Shape& b_shape, float b_scale, cl::Buffer& y,
                                                const Events& wait) {
  HSCHED_ASSIGN_OR_RETURN(Shape out, broadcast_shape(a_shape, b_shape));
  return launch_binary(ops, queue, op, a, a_shape, b, b_shape, b_scale, out, y, wait);
}

Result<cl::Event> enqueue_expand(const OpKernels& ops, cl::CommandQueue& queue, const cl::Buffer& x,
                                 const Shape& x_shape, const Shape& y_shape, cl::Buffer& y,
                                 const Events& wait) {
  HSCHED_ASSIGN_OR_RETURN(Shape out, broadcast_shape(x_shape, y_shape));
  if (out != y_shape) return invalid_argument("ops: Expand input does not broadcast to its output");
  // max(x, x) is x (NaN and infinities included): the binary kernel's broadcast does the work.
  return launch_binary(ops, queue, BinaryOp::kMax, x, x_shape, x, x_shape, 1.0f, out, y, wait);
}

Result<cl::Event> enqueue_binary(const OpKernels& ops, cl::CommandQueue& queue, BinaryOp op,
                                 const cl::Buffer& a, const Shape& a_shape, const cl::Buffer& b,
                                 const Shape& b_shape, cl::Buffer& y, const Events& wait) {
  return detail::enqueue_scaled_binary(ops, queue, op, a, a_shape, b, b_shape, 1.0f, y, wait);
}

Result<cl::Event> enqueue_select(const OpKernels& ops, cl::CommandQueue& queue,
                                 const cl::Buffer& cond, const Shape& cond_shape,
                                 const cl::Buffer& a, const Shape& a_shape, const cl::Buffer& b,
                                 const Shape& b_shape, cl::Buffer& y, const Events& wait) {
  HSCHED_ASSIGN_OR_RETURN(const detail::SelectBroadcast where,
                          detail::select_broadcast_of(cond_shape, a_shape, b_shape));
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, "where_select"));
  HSCHED_RETURN_IF_ERROR(set_args(kernel, "where_select", cond, a, b, y, where.shape,
                                  static_cast<cl_int>(where.count)));
  return launch(queue, kernel, where.count, wait, "where_select");
}

namespace {

int64_t product(const Shape& shape, size_t begin, size_t end) {
  int64_t count = 1;
  for (size_t i = begin; i < end; ++i) count *= shape[i];
  return count;
}

// Contiguous rows at least this long get a work group of 64 each (kReduceSource's *_rows kernels):
// one work item per row reads rows apart from its neighbours (uncoalesced) and leaves most of a
// GPU idle for a few hundred rows (vit_tiny's softmax: 591 rows of 197). Shorter rows would leave
// most of each group idle.
constexpr int64_t kGroupPerRowFrom = 32;
constexpr int64_t kRowGroup = 64;  // the kernels' reqd_work_group_size

}  // namespace

bool requantizes(const QdqRow& q) {
  const auto finite = [](float v) { return std::isfinite(v); };
  return q.x_scale > 0.0f && q.y_scale > 0.0f && finite(q.x_scale) && finite(q.y_scale) &&
         finite(q.x_zero) && finite(q.y_zero) && q.lo >= -128.0f && q.hi <= 255.0f && q.lo <= q.hi;
}

bool softmax_by_rows(int64_t axis_size, int64_t inner, SoftmaxKind kind) {
  return inner == 1 && axis_size >= kGroupPerRowFrom && kind != SoftmaxKind::kHardmax;
}

Result<cl::Event> enqueue_softmax(const OpKernels& ops, cl::CommandQueue& queue,
                                  const cl::Buffer& x, const Shape& shape, int64_t axis,
                                  SoftmaxKind kind, cl::Buffer& y, const Events& wait,
                                  std::optional<float> nan_to,
                                  const std::optional<QdqRow>& quantized) {
  HSCHED_ASSIGN_OR_RETURN(size_t a, normalize_axis(axis, shape.size(), "Softmax"));
  HSCHED_RETURN_IF_ERROR(check_int_range(element_count(shape), "Softmax input"));
  const auto outer = static_cast<cl_int>(product(shape, 0, a));
  const auto axis_size = static_cast<cl_int>(shape[a]);
  const auto inner = static_cast<cl_int>(product(shape, a + 1, shape.size()));
  const auto code = static_cast<cl_int>(kind);
  const auto replace_nan = static_cast<cl_int>(nan_to.has_value());
  const float nan_value = nan_to.value_or(0.0f);
  if (softmax_by_rows(axis_size, inner, kind)) {
    const char* name = quantized ? "softmax_rows_q" : "softmax_rows";
    HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, name));
    HSCHED_RETURN_IF_ERROR(set_args(kernel, name, x, y, axis_size, code, replace_nan, nan_value));
    if (quantized) {
      HSCHED_RETURN_IF_ERROR(check_cl(kernel.setArg(6, *quantized), "setArg of softmax_rows_q"));
    }
    return launch(queue, kernel, int64_t{outer} * kRowGroup, wait, name);
  }
  if (quantized) return internal_error("ops: a quantized Softmax runs by rows");
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, "softmax"));
  HSCHED_RETURN_IF_ERROR(
      set_args(kernel, "softmax", x, y, outer, axis_size, inner, code, replace_nan, nan_value));
  return launch(queue, kernel, int64_t{outer} * inner, wait, "softmax");
}

Result<cl::Event> enqueue_layer_norm(const OpKernels& ops, cl::CommandQueue& queue,
                                     const cl::Buffer& x, const Shape& shape, int64_t axis,
                                     const cl::Buffer& scale, const cl::Buffer* bias, float epsilon,
                                     cl::Buffer& y, const Events& wait) {
  HSCHED_ASSIGN_OR_RETURN(size_t a, normalize_axis(axis, shape.size(), "LayerNormalization"));
  HSCHED_RETURN_IF_ERROR(check_int_range(element_count(shape), "LayerNormalization input"));
  const auto rows = static_cast<cl_int>(product(shape, 0, a));
  const auto size = static_cast<cl_int>(product(shape, a, shape.size()));
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, "layer_norm"));
  // Without bias the kernel never reads its bias argument.
  HSCHED_RETURN_IF_ERROR(set_args(kernel, "layer_norm", x, scale, detail::or_null(bias),
                                  static_cast<cl_int>(bias != nullptr), y, rows, size, epsilon));
  return launch(queue, kernel, rows, wait, "layer_norm");
}

Result<cl::Event> enqueue_global_average_pool(const OpKernels& ops, cl::CommandQueue& queue,
                                              const cl::Buffer& x, const Shape& shape,
                                              cl::Buffer& y, const Events& wait,
                                              const std::optional<QdqRow>& quantized) {
  if (shape.size() < 3) {
    return invalid_argument("ops: GlobalAveragePool needs [N, C, spatial...], got rank " +
                            std::to_string(shape.size()));
  }
  HSCHED_RETURN_IF_ERROR(check_int_range(element_count(shape), "GlobalAveragePool input"));
  return enqueue_row_means(ops, queue, x, shape[0] * shape[1], product(shape, 2, shape.size()), y,
                           wait, quantized);
}

Result<cl::Event> enqueue_row_means(const OpKernels& ops, cl::CommandQueue& queue,
                                    const cl::Buffer& x, int64_t rows, int64_t size, cl::Buffer& y,
                                    const Events& wait, const std::optional<QdqRow>& quantized) {
  HSCHED_RETURN_IF_ERROR(check_int_range(rows * size, "row means input"));
  const QdqRow q = quantized.value_or(QdqRow{});
  if (size >= kGroupPerRowFrom) {
    HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, "row_mean_rows"));
    HSCHED_RETURN_IF_ERROR(set_args(kernel, "row_mean_rows", x, y, static_cast<cl_int>(size), q));
    return launch(queue, kernel, rows * kRowGroup, wait, "row_mean_rows");
  }
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, "row_mean"));
  HSCHED_RETURN_IF_ERROR(set_args(kernel, "row_mean", x, y, static_cast<cl_int>(rows),
                                  static_cast<cl_int>(size), q));
  return launch(queue, kernel, rows, wait, "row_mean");
}

}  // namespace hsched::opencl
