// Command lists and the in-order command queue of the simulated NPU driver.
//
// A command list records commands; zeCommandQueueExecuteCommandLists copies the commands of the
// (closed) lists into a batch, and the queue's worker thread runs the batches in submission
// order: each command waits for its wait events, runs, then signals its event; the batch's fence
// is signalled when all its commands ran. A graph execution that loses the device (fault
// device_lost_after) ends the batch: nothing after it runs or is signalled, and the waits on its
// events and fence answer ZE_RESULT_ERROR_DEVICE_LOST.
#include <cstring>
#include <iostream>

#include "backends/level_zero/sim/api.h"
#include "backends/level_zero/sim/sim.h"

namespace hsched::zesim {
namespace {

bool events_signalled_locked(Sim& sim, const std::vector<ze_event_handle_t>& events) {
  for (ze_event_handle_t handle : events) {
    const Event* event = sim.find_locked<Event>(handle);
    if (event != nullptr && !event->signalled) return false;  // a destroyed event never blocks
  }
  return true;
}

void set_event_locked(Sim& sim, ze_event_handle_t handle, bool signalled) {
  if (Event* event = sim.find_locked<Event>(handle)) event->signalled = signalled;
}

// Checks the event handles a command list may use (mutex held).
ze_result_t check_events_locked(Sim& sim, const CommandList& list, const Command& command,
                                uint32_t wait_count, const ze_event_handle_t* waits) {
  if (wait_count > 0 && waits == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  const auto check = [&](ze_event_handle_t handle) {
    const Event* event = sim.find_locked<Event>(handle);
    return event != nullptr && event->pool->context == list.context;
  };
  if (command.signal != nullptr && !check(command.signal))
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (command.reset != nullptr && !check(command.reset)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  for (uint32_t i = 0; i < wait_count; ++i)
    if (!check(waits[i])) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return ZE_RESULT_SUCCESS;
}

// Appends `command` to an open list after checking its events.
ze_result_t append(ze_command_list_handle_t handle, Command command, uint32_t wait_count,
                   const ze_event_handle_t* waits) {
  Sim& sim = Sim::get();
  if (sim.device_lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  std::lock_guard lock(sim.mutex);
  CommandList* list = sim.find_locked<CommandList>(handle);
  if (list == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (list->closed) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  const ze_result_t events = check_events_locked(sim, *list, command, wait_count, waits);
  if (events != ZE_RESULT_SUCCESS) return events;
  command.waits.assign(waits, waits + wait_count);
  list->commands.push_back(std::move(command));
  return ZE_RESULT_SUCCESS;
}

}  // namespace

// --- the queue and its worker ---------------------------------------------------------------

CommandQueue::CommandQueue(Context* context, ze_command_queue_mode_t mode)
    : Object(Kind::kCommandQueue), context_(context), mode_(mode), worker_([this] { work(); }) {}

CommandQueue::~CommandQueue() {
  Sim& sim = Sim::get();
  {
    std::lock_guard lock(sim.mutex);
    stopping_ = true;
  }
  sim.cv.notify_all();
  worker_.join();
}

void CommandQueue::submit_locked(Batch batch) {
  backlog_.push_back(std::move(batch));
  ++submitted_;
}

void CommandQueue::work() {
  Sim& sim = Sim::get();
  std::unique_lock lock(sim.mutex);
  for (;;) {
    sim.cv.wait(lock, [&] { return stopping_ || !backlog_.empty(); });
    if (stopping_) return;
    Batch& batch = backlog_.front();  // stays in the backlog while it runs: the queue is busy
    lock.unlock();
    const bool finished = run(batch);
    lock.lock();
    if (finished && batch.fence != nullptr) {
      if (Fence* fence = sim.find_locked<Fence>(batch.fence)) fence->signalled = true;
    }
    backlog_.pop_front();
    ++completed_;
    sim.cv.notify_all();
  }
}

bool CommandQueue::run(Batch& batch) {
  Sim& sim = Sim::get();
  std::unique_lock lock(sim.mutex);
  for (Command& command : batch.commands) {
    sim.cv.wait(lock, [&] {
      return stopping_ || sim.device_lost || events_signalled_locked(sim, command.waits);
    });
    if (stopping_ || sim.device_lost) return false;
    if (!run_command(command, lock)) return false;
    if (command.signal != nullptr) set_event_locked(sim, command.signal, true);
    sim.cv.notify_all();
  }
  return true;
}

bool CommandQueue::run_command(Command& command, std::unique_lock<std::mutex>& lock) {
  Sim& sim = Sim::get();
  switch (command.type) {
    case CommandType::kBarrier:
    case CommandType::kWaitEvents:
      return true;  // in order already; the waits were waited for
    case CommandType::kSignalEvent:
      return true;  // command.signal is set by the caller
    case CommandType::kResetEvent:
      set_event_locked(sim, command.reset, false);
      return true;
    case CommandType::kMemoryCopy:
      lock.unlock();
      std::memmove(command.dst, command.src, command.size);
      lock.lock();
      return true;
    case CommandType::kGraphInitialize:
      return true;  // weights are already in place (pfnCreate)
    case CommandType::kGraphExecute: {
      lock.unlock();
      const bool ran = execute_graph(*command.graph, command.args);
      lock.lock();
      if (!ran) {
        sim.device_lost = true;
        sim.cv.notify_all();
      }
      return ran;
    }
  }
  return false;
}

// --- entry points -----------------------------------------------------------------------------

ze_result_t command_queue_create(ze_context_handle_t context_handle, ze_device_handle_t device,
                                 const ze_command_queue_desc_t* desc,
                                 ze_command_queue_handle_t* queue) {
  if (!is_device(device)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (desc == nullptr || queue == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (desc->stype != ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC || desc->ordinal != 0 || desc->index != 0)
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  if (desc->mode > ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS ||
      desc->priority > ZE_COMMAND_QUEUE_PRIORITY_PRIORITY_HIGH)
    return ZE_RESULT_ERROR_INVALID_ENUMERATION;
  Sim& sim = Sim::get();
  if (sim.device_lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  Context* context = sim.find<Context>(context_handle);
  if (context == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  auto created = std::make_unique<CommandQueue>(context, desc->mode);
  *queue = reinterpret_cast<ze_command_queue_handle_t>(sim.add(std::move(created)));
  return ZE_RESULT_SUCCESS;
}

ze_result_t command_queue_destroy(ze_command_queue_handle_t handle) {
  Sim& sim = Sim::get();
  std::unique_ptr<Object> taken;  // destroyed (worker joined) after the mutex is released
  {
    std::lock_guard lock(sim.mutex);
    CommandQueue* queue = sim.find_locked<CommandQueue>(handle);
    if (queue == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    const bool has_fences = sim.any_locked([&](const Object& o) {
      return o.kind == Kind::kFence && static_cast<const Fence&>(o).queue == queue;
    });
    if (has_fences) return ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE;
    taken = sim.take_locked(handle);
  }
  return ZE_RESULT_SUCCESS;
}

ze_result_t command_queue_execute_command_lists(ze_command_queue_handle_t handle, uint32_t count,
                                                ze_command_list_handle_t* lists,
                                                ze_fence_handle_t fence_handle) {
  if (count == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
  if (lists == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  Sim& sim = Sim::get();
  if (sim.device_lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  std::unique_lock lock(sim.mutex);
  CommandQueue* queue = sim.find_locked<CommandQueue>(handle);
  if (queue == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  Batch batch;
  if (fence_handle != nullptr) {
    Fence* fence = sim.find_locked<Fence>(fence_handle);
    if (fence == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (fence->queue != queue) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    batch.fence = fence_handle;
  }
  for (uint32_t i = 0; i < count; ++i) {
    const CommandList* list = sim.find_locked<CommandList>(lists[i]);
    if (list == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (!list->closed || list->context != queue->context()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    batch.commands.insert(batch.commands.end(), list->commands.begin(), list->commands.end());
  }
  queue->submit_locked(std::move(batch));
  const uint64_t ticket = queue->submitted_locked();
  sim.cv.notify_all();
  if (queue->mode() == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS) {
    sim.cv.wait(lock, [&] { return sim.device_lost || queue->completed_locked() >= ticket; });
    if (sim.device_lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  }
  return ZE_RESULT_SUCCESS;
}

ze_result_t command_queue_synchronize(ze_command_queue_handle_t handle, uint64_t timeout_ns) {
  Sim& sim = Sim::get();
  std::unique_lock lock(sim.mutex);
  CommandQueue* queue = sim.find_locked<CommandQueue>(handle);
  if (queue == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  const bool done = wait_for_ns(lock, timeout_ns, [&] {
    return sim.device_lost || sim.find_locked<CommandQueue>(handle) != queue ||
           queue->idle_locked();
  });
  if (sim.device_lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  if (sim.find_locked<CommandQueue>(handle) != queue) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return done ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

ze_result_t command_list_create(ze_context_handle_t context_handle, ze_device_handle_t device,
                                const ze_command_list_desc_t* desc,
                                ze_command_list_handle_t* list) {
  if (!is_device(device)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (desc == nullptr || list == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (desc->stype != ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC || desc->commandQueueGroupOrdinal != 0)
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  Sim& sim = Sim::get();
  if (sim.device_lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  std::lock_guard lock(sim.mutex);
  Context* context = sim.find_locked<Context>(context_handle);
  if (context == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  auto created = std::make_unique<CommandList>();
  created->context = context;
  *list = reinterpret_cast<ze_command_list_handle_t>(sim.add_locked(std::move(created)));
  return ZE_RESULT_SUCCESS;
}

ze_result_t command_list_destroy(ze_command_list_handle_t handle) {
  Sim& sim = Sim::get();
  std::unique_ptr<Object> taken;
  std::lock_guard lock(sim.mutex);
  if (sim.find_locked<CommandList>(handle) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  taken = sim.take_locked(handle);
  return ZE_RESULT_SUCCESS;
}

ze_result_t command_list_close(ze_command_list_handle_t handle) {
  Sim& sim = Sim::get();
  if (sim.device_lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  std::lock_guard lock(sim.mutex);
  CommandList* list = sim.find_locked<CommandList>(handle);
  if (list == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  list->closed = true;
  return ZE_RESULT_SUCCESS;
}

ze_result_t command_list_reset(ze_command_list_handle_t handle) {
  Sim& sim = Sim::get();
  if (sim.device_lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  std::vector<Command> dropped;  // graph references released after the mutex
  std::lock_guard lock(sim.mutex);
  CommandList* list = sim.find_locked<CommandList>(handle);
  if (list == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  dropped.swap(list->commands);
  list->closed = false;
  return ZE_RESULT_SUCCESS;
}

ze_result_t command_list_append_barrier(ze_command_list_handle_t list, ze_event_handle_t signal,
                                        uint32_t wait_count, ze_event_handle_t* waits) {
  Command command;
  command.type = CommandType::kBarrier;
  command.signal = signal;
  return append(list, std::move(command), wait_count, waits);
}

ze_result_t command_list_append_memory_copy(ze_command_list_handle_t list, void* dst,
                                            const void* src, size_t size, ze_event_handle_t signal,
                                            uint32_t wait_count, ze_event_handle_t* waits) {
  if (dst == nullptr || src == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  Command command;
  command.type = CommandType::kMemoryCopy;
  command.signal = signal;
  command.dst = dst;
  command.src = src;
  command.size = size;
  return append(list, std::move(command), wait_count, waits);
}

ze_result_t command_list_append_signal_event(ze_command_list_handle_t list,
                                             ze_event_handle_t event) {
  if (event == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  Command command;
  command.type = CommandType::kSignalEvent;
  command.signal = event;
  return append(list, std::move(command), 0, nullptr);
}

ze_result_t command_list_append_wait_on_events(ze_command_list_handle_t list, uint32_t count,
                                               ze_event_handle_t* events) {
  Command command;
  command.type = CommandType::kWaitEvents;
  return append(list, std::move(command), count, events);
}

ze_result_t command_list_append_event_reset(ze_command_list_handle_t list,
                                            ze_event_handle_t event) {
  if (event == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  Command command;
  command.type = CommandType::kResetEvent;
  command.reset = event;
  return append(list, std::move(command), 0, nullptr);
}

}  // namespace hsched::zesim
