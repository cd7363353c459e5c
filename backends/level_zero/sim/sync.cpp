// Event pools, events and fences of the simulated NPU driver. States live under Sim::mutex and
// every change notifies Sim::cv; host waits return ZE_RESULT_ERROR_DEVICE_LOST as soon as the
// device is lost, ZE_RESULT_NOT_READY when the timeout (ns) passes first.
#include "backends/level_zero/sim/api.h"
#include "backends/level_zero/sim/sim.h"

namespace hsched::zesim {
namespace {

constexpr ze_event_pool_flags_t kPoolFlags =
    ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_IPC | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP;

}  // namespace

ze_result_t event_pool_create(ze_context_handle_t context_handle, const ze_event_pool_desc_t* desc,
                              uint32_t device_count, ze_device_handle_t* devices,
                              ze_event_pool_handle_t* pool) {
  if (desc == nullptr || pool == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (device_count > 0 && devices == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (desc->stype != ZE_STRUCTURE_TYPE_EVENT_POOL_DESC) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  if (desc->flags & ~kPoolFlags) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
  if (desc->count == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
  for (uint32_t i = 0; i < device_count; ++i)
    if (!is_device(devices[i])) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  Sim& sim = Sim::get();
  if (sim.device_lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  std::lock_guard lock(sim.mutex);
  Context* context = sim.find_locked<Context>(context_handle);
  if (context == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  auto created = std::make_unique<EventPool>();
  created->context = context;
  created->count = desc->count;
  *pool = reinterpret_cast<ze_event_pool_handle_t>(sim.add_locked(std::move(created)));
  return ZE_RESULT_SUCCESS;
}

ze_result_t event_pool_destroy(ze_event_pool_handle_t handle) {
  Sim& sim = Sim::get();
  std::unique_ptr<Object> taken;
  std::lock_guard lock(sim.mutex);
  EventPool* pool = sim.find_locked<EventPool>(handle);
  if (pool == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  const bool has_events = sim.any_locked([&](const Object& o) {
    return o.kind == Kind::kEvent && static_cast<const Event&>(o).pool == pool;
  });
  if (has_events) return ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE;
  taken = sim.take_locked(handle);
  return ZE_RESULT_SUCCESS;
}

ze_result_t event_create(ze_event_pool_handle_t pool_handle, const ze_event_desc_t* desc,
                         ze_event_handle_t* event) {
  if (desc == nullptr || event == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (desc->stype != ZE_STRUCTURE_TYPE_EVENT_DESC) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  constexpr ze_event_scope_flags_t kScopes =
      ZE_EVENT_SCOPE_FLAG_SUBDEVICE | ZE_EVENT_SCOPE_FLAG_DEVICE | ZE_EVENT_SCOPE_FLAG_HOST;
  if ((desc->signal & ~kScopes) || (desc->wait & ~kScopes))
    return ZE_RESULT_ERROR_INVALID_ENUMERATION;
  Sim& sim = Sim::get();
  if (sim.device_lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  std::lock_guard lock(sim.mutex);
  EventPool* pool = sim.find_locked<EventPool>(pool_handle);
  if (pool == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (desc->index >= pool->count) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  auto created = std::make_unique<Event>();
  created->pool = pool;
  created->index = desc->index;
  *event = reinterpret_cast<ze_event_handle_t>(sim.add_locked(std::move(created)));
  return ZE_RESULT_SUCCESS;
}

ze_result_t event_destroy(ze_event_handle_t handle) {
  Sim& sim = Sim::get();
  std::unique_ptr<Object> taken;
  {
    std::lock_guard lock(sim.mutex);
    if (sim.find_locked<Event>(handle) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    taken = sim.take_locked(handle);
  }
  sim.cv.notify_all();  // a queue waiting on it stops waiting
  return ZE_RESULT_SUCCESS;
}

ze_result_t event_host_signal(ze_event_handle_t handle) {
  Sim& sim = Sim::get();
  if (sim.device_lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  {
    std::lock_guard lock(sim.mutex);
    Event* event = sim.find_locked<Event>(handle);
    if (event == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    event->signalled = true;
  }
  sim.cv.notify_all();
  return ZE_RESULT_SUCCESS;
}

ze_result_t event_host_synchronize(ze_event_handle_t handle, uint64_t timeout_ns) {
  Sim& sim = Sim::get();
  std::unique_lock lock(sim.mutex);
  Event* event = sim.find_locked<Event>(handle);
  if (event == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  wait_for_ns(lock, timeout_ns, [&] {
    return sim.device_lost || sim.find_locked<Event>(handle) != event || event->signalled;
  });
  if (sim.device_lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  if (sim.find_locked<Event>(handle) != event) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return event->signalled ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

ze_result_t event_query_status(ze_event_handle_t handle) {
  return event_host_synchronize(handle, 0);
}

ze_result_t event_host_reset(ze_event_handle_t handle) {
  Sim& sim = Sim::get();
  if (sim.device_lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  std::lock_guard lock(sim.mutex);
  Event* event = sim.find_locked<Event>(handle);
  if (event == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  event->signalled = false;
  return ZE_RESULT_SUCCESS;
}

ze_result_t fence_create(ze_command_queue_handle_t queue_handle, const ze_fence_desc_t* desc,
                         ze_fence_handle_t* fence) {
  if (desc == nullptr || fence == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (desc->stype != ZE_STRUCTURE_TYPE_FENCE_DESC) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  if (desc->flags & ~static_cast<ze_fence_flags_t>(ZE_FENCE_FLAG_SIGNALED))
    return ZE_RESULT_ERROR_INVALID_ENUMERATION;
  Sim& sim = Sim::get();
  if (sim.device_lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  std::lock_guard lock(sim.mutex);
  CommandQueue* queue = sim.find_locked<CommandQueue>(queue_handle);
  if (queue == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  auto created = std::make_unique<Fence>();
  created->queue = queue;
  created->signalled = (desc->flags & ZE_FENCE_FLAG_SIGNALED) != 0;
  *fence = reinterpret_cast<ze_fence_handle_t>(sim.add_locked(std::move(created)));
  return ZE_RESULT_SUCCESS;
}

ze_result_t fence_destroy(ze_fence_handle_t handle) {
  Sim& sim = Sim::get();
  std::unique_ptr<Object> taken;
  {
    std::lock_guard lock(sim.mutex);
    if (sim.find_locked<Fence>(handle) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    taken = sim.take_locked(handle);
  }
  sim.cv.notify_all();
  return ZE_RESULT_SUCCESS;
}

ze_result_t fence_host_synchronize(ze_fence_handle_t handle, uint64_t timeout_ns) {
  Sim& sim = Sim::get();
  std::unique_lock lock(sim.mutex);
  Fence* fence = sim.find_locked<Fence>(handle);
  if (fence == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  wait_for_ns(lock, timeout_ns, [&] {
    return sim.device_lost || sim.find_locked<Fence>(handle) != fence || fence->signalled;
  });
  if (sim.device_lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  if (sim.find_locked<Fence>(handle) != fence) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return fence->signalled ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

ze_result_t fence_query_status(ze_fence_handle_t handle) {
  return fence_host_synchronize(handle, 0);
}

ze_result_t fence_reset(ze_fence_handle_t handle) {
  Sim& sim = Sim::get();
  if (sim.device_lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  std::lock_guard lock(sim.mutex);
  Fence* fence = sim.find_locked<Fence>(handle);
  if (fence == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  fence->signalled = false;
  return ZE_RESULT_SUCCESS;
}

}  // namespace hsched::zesim
