// Per-queue scratch for the op layer: temporary device buffers and kernel objects that outlive
// one enqueue call.
//
// Why: NVIDIA's driver blocks the host when a buffer still used by queued commands is released,
// so a temporary created and dropped per call (split-K partial sums, im2col columns) serialized
// the whole queue (measured on an H100: a 20 us conv took 120 us of host time). And
// clCreateKernel per call costs host time on every node.
//
// Safety: commands on one in-order queue run one after another, so a scratch buffer serves every
// enqueue on that queue in turn; ops.h already asks for one queue per thread, so a cached kernel
// object (whose arguments each call sets anew) is never set from two threads at once.
// Entries hold a reference to their queue; those whose queue nobody else holds any more are
// dropped when a new queue shows up. The cache lives until process exit (never destroyed: OpenCL
// objects released from static destructors can outlive the driver).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "backends/opencl/kernels/ops.h"

namespace hsched::opencl::detail {

enum class ScratchSlot : int {
  kConvPartial = 0,
  kConvColumns,
  kConvResult,
  kConvWeights,
  kConvInput,
  kNormStats,
  kNormAffine,
  kGemmA,  // fp32 copies around CLBlast with fp16 storage
  kGemmB,
  kGemmResult,
  kGemmTemp,     // CLBlast's padded/transposed copies (its indirect GEMM path)
  kGemmPartial,  // matmul_tiled's split-K partial sums
  kStaging,      // fp32 inputs and outputs of a program with fp16 storage (program.cpp)
  kResizeA,      // cubic Resize's passes before the last (ops_resize.h)
  kResizeB,
  kDeterminant,      // Det's LU copies (ops_spatial.h)
  kWinogradInput,    // Conv's transformed input tiles (ops_conv.cpp)
  kWinogradProduct,  // ... and their products by the transformed weights
};

// A buffer of at least `bytes` for `slot` on `queue` (grown, never shrunk). Its contents are
// undefined; the previous user of the slot on this queue is ordered before any new command. A
// recording (ops_util.h) stays replayable only where the buffer did not have to grow.
Result<cl::Buffer> scratch_buffer(const OpKernels& ops, cl::CommandQueue& queue, ScratchSlot slot,
                                  size_t bytes);

// An fp32 buffer of `count` elements (at least one) for `slot` on `queue`, as scratch_buffer.
Result<cl::Buffer> float_scratch(const OpKernels& ops, cl::CommandQueue& queue, ScratchSlot slot,
                                 int64_t count);
// Enqueues storage -> fp32 (or fp32 -> storage when `to_storage`) of `count` elements.
Result<cl::Event> enqueue_convert(const OpKernels& ops, cl::CommandQueue& queue,
                                  const cl::Buffer& from, const cl::Buffer& to, int64_t count,
                                  bool to_storage);
// `x` itself with fp32 storage; else an fp32 copy of its `count` elements (enqueued) in `slot`.
Result<cl::Buffer> as_float(const OpKernels& ops, cl::CommandQueue& queue, const cl::Buffer& x,
                            int64_t count, ScratchSlot slot);

// A read-only buffer holding exactly `bytes` bytes of `data` (e.g. Resize's index tables), kept
// per queue and content: the same tables on the next run reuse it, with no write enqueued.
Result<cl::Buffer> constant_buffer(const OpKernels& ops, cl::CommandQueue& queue, const void* data,
                                   size_t bytes);

// A read-only buffer of the floats `make` returns, in `ops`' storage type, kept per queue under
// `key`, which must determine them (e.g. a transform's name and the bytes it transforms): `make`
// runs only when no buffer is kept under it (Conv's Winograd weights, made on the host once).
Result<cl::Buffer> derived_constant(const OpKernels& ops, cl::CommandQueue& queue,
                                    const std::string& key,
                                    const std::function<std::vector<float>()>& make);

// The kernel `name` of `ops` for use on `queue` (created once per queue and OpKernels; a new one
// per call while recording, ops_util.h).
Result<cl::Kernel> queue_kernel(const OpKernels& ops, cl::CommandQueue& queue, const char* name);

}  // namespace hsched::opencl::detail
