// One OpenCL device opened for running partitions: its context, the compiler (with the on-disk
// program cache) and the op programs per storage type, built on first use under a deadline.
//
// Ownership: programs (program.h) hold a shared_ptr to their DeviceRuntime. A build abandoned at
// its deadline owns what it touches and may outlive the runtime.
// Threading: kernels() may be called from several threads; the first caller per storage builds,
// the others wait for it (each still bounded by the deadline of the one building).
#pragma once

#include <map>
#include <memory>
#include <mutex>

#include "backends/opencl/compiler.h"
#include "backends/opencl/device.h"
#include "backends/opencl/kernels/ops.h"
#include "backends/opencl/pinned_pool.h"

namespace hsched::opencl {

// The most page-locked host memory a device's pool holds (PinnedPool): the inputs and outputs of
// a few requests of large models; beyond it, tensors live in ordinary memory.
inline constexpr size_t kPinnedLimitBytes = size_t{256} << 20;

class DeviceRuntime {
 public:
  // A context on `info`'s device. Internal naming the device when OpenCL refuses one.
  static Result<std::shared_ptr<DeviceRuntime>> open(const DeviceInfo& info,
                                                     std::shared_ptr<ProgramCache> cache);

  // The op programs for `storage`: hsched's programs through the compiler (cached on disk), then
  // a first tiny CLBlast GEMM, inside which CLBlast builds its kernels; all of it within
  // `deadline_ms` of wall time. A failure (compile_timeout, build_failed) is kept: later calls for
  // that storage return it at once, so one slow build costs one deadline per run of hsched, and
  // the abandoned build still fills the cache in the background.
  Result<const OpKernels*> kernels(Storage storage, int64_t deadline_ms);

  const DeviceInfo& info() const { return info_; }
  const cl::Context& context() const { return context_; }
  ProgramCache& cache() const { return *compiler_.cache(); }
  // Page-locked host memory for the tensors copied to and from this device (at most
  // kPinnedLimitBytes of it).
  PinnedPool& pinned() const { return *pinned_; }

 private:
  DeviceRuntime(DeviceInfo info, cl::Context context, std::shared_ptr<ProgramCache> cache);

  DeviceInfo info_;
  cl::Context context_;
  Compiler compiler_;
  std::shared_ptr<PinnedPool> pinned_;
  std::mutex mutex_;  // guards kernels_, held while building
  std::map<Storage, Result<std::shared_ptr<OpKernels>>> kernels_;
};

}  // namespace hsched::opencl
