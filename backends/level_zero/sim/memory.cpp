// zeMemAlloc*/zeMemFree of the simulated NPU driver. The NPU shares the host's memory, so every
// allocation (host, shared or device) is host memory that the graphs read and write in place;
// device and shared allocations count against the device's memory size and fail under the oom
// fault.
#include <bit>
#include <cstdlib>
#include <cstring>

#include "backends/level_zero/sim/api.h"
#include "backends/level_zero/sim/sim.h"

namespace hsched::zesim {
namespace {

constexpr size_t kMinAlignment = 64;
constexpr uint64_t kPageSize = 4096;

bool valid_host_desc(const ze_host_mem_alloc_desc_t* desc) {
  return desc->stype == ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC;
}
bool valid_device_desc(const ze_device_mem_alloc_desc_t* desc) {
  return desc->stype == ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC && desc->ordinal == 0;
}

ze_result_t allocate(ze_context_handle_t handle, ze_memory_type_t type, size_t size,
                     size_t alignment, void** ptr) {
  Sim& sim = Sim::get();
  if (sim.device_lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  if (size == 0 || size > kMaxAllocBytes) return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
  if (alignment != 0 && !std::has_single_bit(alignment))
    return ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT;
  const size_t align = std::max(alignment, kMinAlignment);
  const bool on_device = type != ZE_MEMORY_TYPE_HOST;
  if (on_device && sim.faults.oom) return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
  {
    std::lock_guard lock(sim.mutex);
    if (sim.find_locked<Context>(handle) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (on_device && sim.device_bytes + size > kMemoryBytes)
      return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
  }
  const size_t rounded = (size + align - 1) / align * align;
  void* memory = std::aligned_alloc(align, rounded);
  if (memory == nullptr)
    return on_device ? ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY : ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  std::memset(memory, 0, rounded);
  Allocation allocation;
  allocation.memory.reset(static_cast<std::byte*>(memory));
  allocation.size = size;
  allocation.type = type;
  allocation.id = sim.next_allocation_id++;

  std::lock_guard lock(sim.mutex);
  Context* context = sim.find_locked<Context>(handle);
  if (context == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;  // destroyed meanwhile
  if (on_device) {
    if (sim.device_bytes + size > kMemoryBytes) return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
    sim.device_bytes += size;
  }
  context->allocations.emplace(reinterpret_cast<uintptr_t>(memory), std::move(allocation));
  *ptr = memory;
  return ZE_RESULT_SUCCESS;
}

// The allocation of `context` that contains `ptr` (mutex held).
const Allocation* containing(const Context& context, const void* ptr, uintptr_t* base) {
  const auto address = reinterpret_cast<uintptr_t>(ptr);
  auto it = context.allocations.upper_bound(address);
  if (it == context.allocations.begin()) return nullptr;
  --it;
  if (address - it->first >= it->second.size) return nullptr;
  if (base) *base = it->first;
  return &it->second;
}

}  // namespace

const Allocation* find_allocation_locked(const Context& context, const void* ptr, size_t bytes) {
  uintptr_t base = 0;
  const Allocation* allocation = containing(context, ptr, &base);
  if (allocation == nullptr) return nullptr;
  const uintptr_t offset = reinterpret_cast<uintptr_t>(ptr) - base;
  return bytes <= allocation->size - offset ? allocation : nullptr;
}

ze_result_t mem_alloc_shared(ze_context_handle_t context,
                             const ze_device_mem_alloc_desc_t* device_desc,
                             const ze_host_mem_alloc_desc_t* host_desc, size_t size,
                             size_t alignment, ze_device_handle_t device, void** ptr) {
  if (device_desc == nullptr || host_desc == nullptr || ptr == nullptr)
    return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (device != nullptr && !is_device(device)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!valid_device_desc(device_desc) || !valid_host_desc(host_desc))
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  return allocate(context, ZE_MEMORY_TYPE_SHARED, size, alignment, ptr);
}

ze_result_t mem_alloc_device(ze_context_handle_t context, const ze_device_mem_alloc_desc_t* desc,
                             size_t size, size_t alignment, ze_device_handle_t device, void** ptr) {
  if (!is_device(device)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (desc == nullptr || ptr == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (!valid_device_desc(desc)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  return allocate(context, ZE_MEMORY_TYPE_DEVICE, size, alignment, ptr);
}

ze_result_t mem_alloc_host(ze_context_handle_t context, const ze_host_mem_alloc_desc_t* desc,
                           size_t size, size_t alignment, void** ptr) {
  if (desc == nullptr || ptr == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (!valid_host_desc(desc)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  return allocate(context, ZE_MEMORY_TYPE_HOST, size, alignment, ptr);
}

ze_result_t mem_free(ze_context_handle_t handle, void* ptr) {
  if (ptr == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  Sim& sim = Sim::get();
  Allocation freed;  // released after the mutex
  std::lock_guard lock(sim.mutex);
  Context* context = sim.find_locked<Context>(handle);
  if (context == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  const auto it = context->allocations.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == context->allocations.end()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  freed = std::move(it->second);
  context->allocations.erase(it);
  if (freed.type != ZE_MEMORY_TYPE_HOST) sim.device_bytes -= std::min(sim.device_bytes, freed.size);
  return ZE_RESULT_SUCCESS;
}

ze_result_t mem_get_alloc_properties(ze_context_handle_t handle, const void* ptr,
                                     ze_memory_allocation_properties_t* properties,
                                     ze_device_handle_t* device) {
  if (ptr == nullptr || properties == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  Sim& sim = Sim::get();
  if (sim.device_lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  std::lock_guard lock(sim.mutex);
  Context* context = sim.find_locked<Context>(handle);
  if (context == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  const Allocation* allocation = containing(*context, ptr, nullptr);
  properties->type = allocation ? allocation->type : ZE_MEMORY_TYPE_UNKNOWN;
  properties->id = allocation ? allocation->id : 0;
  properties->pageSize = allocation ? kPageSize : 0;
  if (device != nullptr) {
    const bool on_device = allocation && allocation->type != ZE_MEMORY_TYPE_HOST;
    *device = on_device ? sim.device_handle() : nullptr;
  }
  return ZE_RESULT_SUCCESS;
}

ze_result_t mem_get_address_range(ze_context_handle_t handle, const void* ptr, void** base,
                                  size_t* size) {
  if (ptr == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  Sim& sim = Sim::get();
  if (sim.device_lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  std::lock_guard lock(sim.mutex);
  Context* context = sim.find_locked<Context>(handle);
  if (context == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  uintptr_t start = 0;
  const Allocation* allocation = containing(*context, ptr, &start);
  if (allocation == nullptr) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  if (base != nullptr) *base = reinterpret_cast<void*>(start);
  if (size != nullptr) *size = allocation->size;
  return ZE_RESULT_SUCCESS;
}

}  // namespace hsched::zesim
