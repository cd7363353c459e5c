// Per-queue scratch buffers and kernel objects (ops_scratch.h).
#include "backends/opencl/kernels/ops_scratch.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include <CL/cl_half.h>

#include "backends/opencl/kernels/ops_util.h"

namespace hsched::opencl::detail {
namespace {

struct QueueScratch {
  cl::CommandQueue queue;
  std::map<int, std::pair<cl::Buffer, size_t>> buffers;
  std::map<std::string, cl::Buffer> constants;  // by content
  std::map<std::string, cl::Buffer> derived;    // by derived_constant's key
  // Keyed by the OpKernels' address and storage: a later OpKernels at the same address with the
  // same storage built the same source, so a kernel kept from its predecessor computes the same.
  std::map<std::tuple<const OpKernels*, Storage, std::string>, cl::Kernel> kernels;
};

struct ScratchCache {
  std::mutex mutex;
  std::vector<std::unique_ptr<QueueScratch>> queues;
};

ScratchCache& cache() {
  static ScratchCache* instance = new ScratchCache();  // never destroyed (see the header)
  return *instance;
}

// The entry of `queue`, created (after dropping entries of queues no one else holds) when new.
// Called with the cache's mutex held.
QueueScratch& entry_for(ScratchCache& c, cl::CommandQueue& queue) {
  for (auto& entry : c.queues) {
    if (entry->queue() == queue()) return *entry;
  }
  std::erase_if(c.queues, [](const std::unique_ptr<QueueScratch>& entry) {
    cl_uint references = 0;
    return entry->queue.getInfo(CL_QUEUE_REFERENCE_COUNT, &references) != CL_SUCCESS ||
           references <= 1;
  });
  c.queues.push_back(std::make_unique<QueueScratch>());
  c.queues.back()->queue = queue;
  return *c.queues.back();
}

// A read-only buffer of `bytes` bytes of `data`, zero-padded to 4 (OpenCL has no empty buffers).
Result<cl::Buffer> read_only_copy(const OpKernels& ops, const void* data, size_t bytes,
                                  const char* what) {
  std::string padded(static_cast<const char*>(data), bytes);
  padded.resize(std::max<size_t>(bytes, 4));
  cl_int error = CL_SUCCESS;
  cl::Buffer buffer(ops.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, padded.size(),
                    padded.data(), &error);
  HSCHED_RETURN_IF_ERROR(
      check_cl(error, std::string(what) + " of " + std::to_string(bytes) + " bytes"));
  return buffer;
}

}  // namespace

Result<cl::Buffer> scratch_buffer(const OpKernels& ops, cl::CommandQueue& queue, ScratchSlot slot,
                                  size_t bytes) {
  ScratchCache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  auto& held = entry_for(c, queue).buffers[static_cast<int>(slot)];
  if (held.second < bytes || held.first() == nullptr) {
    not_replayable();  // a recorded kernel would keep the buffer this one replaces
    cl_int error = CL_SUCCESS;
    cl::Buffer buffer(ops.context(), CL_MEM_READ_WRITE, std::max<size_t>(bytes, 4), nullptr,
                      &error);
    HSCHED_RETURN_IF_ERROR(
        check_cl(error, "scratch buffer of " + std::to_string(bytes) + " bytes"));
    held = {std::move(buffer), std::max<size_t>(bytes, 4)};
  }
  return held.first;
}

Result<cl::Buffer> constant_buffer(const OpKernels& ops, cl::CommandQueue& queue, const void* data,
                                   size_t bytes) {
  ScratchCache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  auto& constants = entry_for(c, queue).constants;
  std::string key(static_cast<const char*>(data), bytes);
  auto it = constants.find(key);
  if (it == constants.end()) {
    HSCHED_ASSIGN_OR_RETURN(cl::Buffer buffer, read_only_copy(ops, data, bytes, "constant buffer"));
    it = constants.emplace(std::move(key), std::move(buffer)).first;
  }
  return it->second;
}

Result<cl::Buffer> derived_constant(const OpKernels& ops, cl::CommandQueue& queue,
                                    const std::string& key,
                                    const std::function<std::vector<float>()>& make) {
  ScratchCache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  auto& derived = entry_for(c, queue).derived;
  auto it = derived.find(key);
  if (it == derived.end()) {
    const std::vector<float> values = make();
    cl::Buffer buffer;
    if (ops.storage() == Storage::kFloat16) {
      std::vector<cl_half> halves;
      halves.reserve(values.size());
      for (float v : values) halves.push_back(cl_half_from_float(v, CL_HALF_RTE));
      HSCHED_ASSIGN_OR_RETURN(
          buffer,
          read_only_copy(ops, halves.data(), halves.size() * sizeof(cl_half), "derived constant"));
    } else {
      HSCHED_ASSIGN_OR_RETURN(
          buffer,
          read_only_copy(ops, values.data(), values.size() * sizeof(float), "derived constant"));
    }
    it = derived.emplace(key, std::move(buffer)).first;
  }
  return it->second;
}

Result<cl::Kernel> queue_kernel(const OpKernels& ops, cl::CommandQueue& queue, const char* name) {
  if (recording() != nullptr) return ops.kernel(name);  // its arguments must stay as set
  ScratchCache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  auto& kernels = entry_for(c, queue).kernels;
  const auto key = std::make_tuple(&ops, ops.storage(), std::string(name));
  auto it = kernels.find(key);
  if (it == kernels.end()) {
    HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, ops.kernel(name));
    it = kernels.emplace(key, std::move(kernel)).first;
  }
  return it->second;
}

Result<cl::Buffer> float_scratch(const OpKernels& ops, cl::CommandQueue& queue, ScratchSlot slot,
                                 int64_t count) {
  return scratch_buffer(ops, queue, slot,
                        static_cast<size_t>(std::max<int64_t>(count, 1)) * sizeof(float));
}

Result<cl::Event> enqueue_convert(const OpKernels& ops, cl::CommandQueue& queue,
                                  const cl::Buffer& from, const cl::Buffer& to, int64_t count,
                                  bool to_storage) {
  const char* name = to_storage ? "float_to_storage" : "storage_to_float";
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, queue_kernel(ops, queue, name));
  HSCHED_RETURN_IF_ERROR(set_args(kernel, name, from, to, static_cast<cl_int>(count)));
  return launch(queue, kernel, count, {}, name);
}

Result<cl::Buffer> as_float(const OpKernels& ops, cl::CommandQueue& queue, const cl::Buffer& x,
                            int64_t count, ScratchSlot slot) {
  if (ops.storage() == Storage::kFloat32) return x;
  HSCHED_ASSIGN_OR_RETURN(cl::Buffer converted, float_scratch(ops, queue, slot, count));
  HSCHED_RETURN_IF_ERROR(enqueue_convert(ops, queue, x, converted, count, false).status());
  return converted;
}

}  // namespace hsched::opencl::detail
