#include "backends/opencl/runtime.h"

#include <chrono>

namespace hsched::opencl {
namespace {

// CLBlast builds a routine's program inside its first call on a context: a 2x2x2 MatMul (its
// GEMM) and a batch of two (its strided-batched GEMM), finished.
Status warm_up_gemm(const OpKernels& ops, const cl::Context& context, const cl::Device& device) {
  cl_int error = CL_SUCCESS;
  cl::CommandQueue queue(context, device, 0, &error);
  if (error != CL_SUCCESS) return internal_error("opencl: clCreateCommandQueue failed for warm-up");
  const size_t bytes = 8 * storage_bytes(ops.storage());
  cl::Buffer a(context, CL_MEM_READ_WRITE, bytes, nullptr, &error);
  cl::Buffer b(context, CL_MEM_READ_WRITE, bytes, nullptr, &error);
  cl::Buffer y(context, CL_MEM_READ_WRITE, bytes, nullptr, &error);
  if (error != CL_SUCCESS) return internal_error("opencl: buffers for the GEMM warm-up failed");
  HSCHED_RETURN_IF_ERROR(enqueue_matmul(ops, queue, a, {2, 2}, b, {2, 2}, y).status());
  HSCHED_RETURN_IF_ERROR(enqueue_matmul(ops, queue, a, {2, 2, 2}, b, {2, 2, 2}, y).status());
  if (queue.finish() != CL_SUCCESS) return internal_error("opencl: GEMM warm-up failed");
  return Status::ok();
}

}  // namespace

DeviceRuntime::DeviceRuntime(DeviceInfo info, cl::Context context,
                             std::shared_ptr<ProgramCache> cache)
    : info_(std::move(info)),
      context_(std::move(context)),
      compiler_(std::move(cache)),
      pinned_(PinnedPool::create(context_, info_.device, kPinnedLimitBytes)) {}

Result<std::shared_ptr<DeviceRuntime>> DeviceRuntime::open(const DeviceInfo& info,
                                                           std::shared_ptr<ProgramCache> cache) {
  cl_int error = CL_SUCCESS;
  cl::Context context(info.device, nullptr, nullptr, nullptr, &error);
  if (error != CL_SUCCESS) {
    return internal_error("opencl: cannot create a context on " + info.name + " (cl error " +
                          std::to_string(error) + ")");
  }
  return std::shared_ptr<DeviceRuntime>(
      new DeviceRuntime(info, std::move(context), std::move(cache)));
}

Result<const OpKernels*> DeviceRuntime::kernels(Storage storage, int64_t deadline_ms) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = kernels_.find(storage);
  if (found == kernels_.end()) {
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    auto remaining = [&] {
      const auto spent =
          std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
      return std::max<int64_t>(0, deadline_ms - spent);
    };
    Result<std::shared_ptr<OpKernels>> built = [&]() -> Result<std::shared_ptr<OpKernels>> {
      HSCHED_ASSIGN_OR_RETURN(
          std::unique_ptr<OpKernels> ops,
          OpKernels::create(context_, info_.device, storage, compiler_, remaining()));
      std::shared_ptr<OpKernels> shared = std::move(ops);
      HSCHED_RETURN_IF_ERROR(run_with_deadline<bool>(
                                 [shared, context = context_, device = info_.device]() -> Result<bool> {
                                   HSCHED_RETURN_IF_ERROR(warm_up_gemm(*shared, context, device));
                                   return true;
                                 },
                                 remaining(), "CLBlast's first GEMM (its kernel build) on " + info_.name)
                                 .status());
      return shared;
    }();
    found = kernels_.emplace(storage, std::move(built)).first;
  }
  if (!found->second.is_ok()) return found->second.status();
  return static_cast<const OpKernels*>(found->second.value().get());
}

}  // namespace hsched::opencl
