// The simulated NPU driver's state: one driver, one device (an NPU 3720), and every object the
// application creates (contexts, queues, lists, event pools, events, fences, graphs).
//
// Handles are the addresses of these objects. Every entry point looks a handle up in the registry
// (Sim::find) before touching it, so a stale, foreign or wrong-kind handle is an error, never a
// dereference. The driver and device handles are the addresses of two tags inside Sim.
//
// Threading: Sim::mutex guards the registry and all mutable object state (allocations, closed
// flags, recorded commands, event and fence states, queue backlogs); Sim::cv is notified on every
// state change that a waiter may wait for (event/fence signalled, batch done, device lost).
// Nothing runs a graph or sleeps while holding the mutex.
//
// Lifetime: the Sim is created on first use and deliberately never destroyed, so that queue worker
// threads and graph builds still running at process exit never meet destroyed state; the library
// is linked with -z nodelete for the same reason (the loader dlcloses drivers at exit).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <level_zero/ze_api.h>

#include "backends/level_zero/sim/faults.h"
#include "backends/level_zero/ze_graph_ext.h"
#include "hsched/dtype.h"

namespace hsched::cpu {
class CpuProgram;
}

namespace hsched::zesim {

// Identity and figures of the simulated device (configs/targets/core-ultra-7-155h.yaml, npu0).
inline constexpr uint32_t kVendorId = 0x8086;
inline constexpr uint32_t kDeviceId = 0x7D1D;
inline constexpr const char* kDeviceName = "Intel(R) AI Boost NPU 3720 (simulated by hsched)";
inline constexpr uint32_t kCoreClockMhz = 1400;
inline constexpr uint32_t kTiles = 2;                   // reported as slices
inline constexpr uint64_t kMemoryBytes = 8ull << 30;    // memory_gib: 8
inline constexpr uint64_t kMaxAllocBytes = 4ull << 30;  // half of it per allocation
inline constexpr uint32_t kMemoryClockMhz = 3733;       // LPDDR5x-7467, 128-bit: 120 GB/s
inline constexpr uint32_t kMemoryBusWidth = 128;
inline constexpr uint32_t kScratchpadBytes = 4u << 20;  // on-chip memory, as shared memory
// The graph compiler version the simulated driver reports and accepts in NGRAPH_LITE payloads
// (major must match) and the highest OpenVINO opset it takes.
inline constexpr uint16_t kCompilerMajor = 1;
inline constexpr uint16_t kCompilerMinor = 0;
inline constexpr uint32_t kMaxOpset = 13;
// Graphs one context holds: Intel's driver gives each graph a command queue of its own and has
// 255 per context; the 256th pfnCreate fails with ZE_RESULT_ERROR_UNINITIALIZED.
inline constexpr int64_t kMaxGraphsPerContext = 255;

enum class Kind : uint8_t {
  kContext,
  kCommandQueue,
  kCommandList,
  kEventPool,
  kEvent,
  kFence,
  kGraph,
  kQueryNetwork
};

struct Object {
  explicit Object(Kind k) : kind(k) {}
  virtual ~Object() = default;
  Object(const Object&) = delete;
  Object& operator=(const Object&) = delete;
  const Kind kind;
};

struct FreeDeleter {
  void operator()(void* p) const;
};

struct Allocation {
  std::unique_ptr<std::byte, FreeDeleter> memory;
  size_t size = 0;
  ze_memory_type_t type = ZE_MEMORY_TYPE_UNKNOWN;
  uint64_t id = 0;
};

struct Context : Object {
  Context() : Object(Kind::kContext) {}
  ~Context() override;                          // frees what the application left allocated
  std::map<uintptr_t, Allocation> allocations;  // by base address
  int64_t graphs = 0;                           // live graphs created in it
};

// The argument of a graph as the host sees it: inputs first, then outputs.
struct GraphArg {
  std::string name;
  ze_graph_argument_type_t type = ZE_GRAPH_ARGUMENT_TYPE_INPUT;
  DType dtype = DType::kF32;
  std::vector<int64_t> dims;
  size_t bytes = 0;
};

// What pfnCreate builds; shared with the commands that run it, so that destroying a graph with
// executions still queued is safe.
struct GraphCore {
  std::unique_ptr<cpu::CpuProgram> program;
  std::vector<GraphArg> args;
  std::vector<uint8_t> native_binary;  // native_blob.h
  ~GraphCore();
};

struct Graph : Object {
  Graph() : Object(Kind::kGraph) {}
  Context* context = nullptr;
  std::shared_ptr<GraphCore> core;
  std::vector<void*> bound;          // per argument; nullptr until pfnSetArgumentValue
  bool initialize_appended = false;  // pfnAppendGraphInitialize seen for this graph
};

// A query of supported layers (extension 1.3): the answer, "<name><name>...".
struct QueryNetwork : Object {
  QueryNetwork() : Object(Kind::kQueryNetwork) {}
  std::string supported;
};

enum class CommandType : uint8_t {
  kBarrier,
  kMemoryCopy,
  kSignalEvent,
  kWaitEvents,
  kResetEvent,
  kGraphInitialize,
  kGraphExecute
};

// One recorded command. Events are kept as handles and looked up when used.
struct Command {
  CommandType type = CommandType::kBarrier;
  ze_event_handle_t signal = nullptr;
  std::vector<ze_event_handle_t> waits;
  ze_event_handle_t reset = nullptr;  // kResetEvent
  std::shared_ptr<GraphCore> graph;   // graph commands
  std::vector<void*> args;            // kGraphExecute: the bound arguments when appended
  void* dst = nullptr;                // kMemoryCopy
  const void* src = nullptr;
  size_t size = 0;
};

struct CommandList : Object {
  CommandList() : Object(Kind::kCommandList) {}
  Context* context = nullptr;
  bool closed = false;
  std::vector<Command> commands;
};

struct EventPool : Object {
  EventPool() : Object(Kind::kEventPool) {}
  Context* context = nullptr;
  uint32_t count = 0;
};

struct Event : Object {
  Event() : Object(Kind::kEvent) {}
  EventPool* pool = nullptr;
  uint32_t index = 0;
  bool signalled = false;
};

class CommandQueue;

struct Fence : Object {
  Fence() : Object(Kind::kFence) {}
  CommandQueue* queue = nullptr;
  bool signalled = false;
};

// A batch of command lists submitted by one zeCommandQueueExecuteCommandLists.
struct Batch {
  std::vector<Command> commands;
  ze_fence_handle_t fence = nullptr;
};

// An in-order queue: a worker thread runs its batches one after the other.
class CommandQueue : public Object {
 public:
  CommandQueue(Context* context, ze_command_queue_mode_t mode);
  ~CommandQueue() override;  // stops the worker: the running batch is cut short, the rest dropped

  Context* context() const { return context_; }
  ze_command_queue_mode_t mode() const { return mode_; }
  // Called with Sim::mutex held.
  void submit_locked(Batch batch);
  bool idle_locked() const { return backlog_.empty(); }
  uint64_t submitted_locked() const { return submitted_; }
  uint64_t completed_locked() const { return completed_; }

 private:
  void work();
  // Runs one batch; false when it was cut short (device lost, queue stopping).
  bool run(Batch& batch);
  bool run_command(Command& command, std::unique_lock<std::mutex>& lock);

  Context* context_;
  ze_command_queue_mode_t mode_;
  std::deque<Batch> backlog_;  // front: the batch running now
  uint64_t submitted_ = 0;
  uint64_t completed_ = 0;
  bool stopping_ = false;
  std::thread worker_;
};

class Sim {
 public:
  static Sim& get();

  std::mutex mutex;
  std::condition_variable cv;

  // Read once, at the first zeInit.
  Faults faults;
  bool initialized = false;  // guarded by mutex
  std::atomic<bool> device_lost{false};
  std::atomic<bool> shutting_down{false};  // set while the process exits
  std::atomic<int64_t> graph_executions{0};
  std::atomic<uint64_t> next_allocation_id{1};
  uint64_t device_bytes = 0;  // device and shared allocations, guarded by mutex
  std::string build_log;      // the reason of the latest failed build, guarded by mutex

  ze_driver_handle_t driver_handle() { return reinterpret_cast<ze_driver_handle_t>(&driver_tag_); }
  ze_device_handle_t device_handle() { return reinterpret_cast<ze_device_handle_t>(&device_tag_); }

  // Takes ownership; the object's address is its handle.
  template <typename T>
  T* add(std::unique_ptr<T> object) {
    std::lock_guard lock(mutex);
    return add_locked(std::move(object));
  }
  template <typename T>
  T* add_locked(std::unique_ptr<T> object) {
    T* raw = object.get();
    objects_.emplace(static_cast<const void*>(raw), std::move(object));
    return raw;
  }
  // The live object of type T (kind_of<T>()) behind `handle`, or nullptr. find() locks;
  // find_locked() expects the mutex held.
  template <typename T>
  T* find(const void* handle) {
    std::lock_guard lock(mutex);
    return find_locked<T>(handle);
  }
  template <typename T>
  T* find_locked(const void* handle);
  // Removes `handle` from the registry; the caller destroys it after releasing the mutex.
  std::unique_ptr<Object> take_locked(const void* handle);
  // Whether any live object satisfies `pred` (mutex held).
  template <typename Pred>
  bool any_locked(Pred pred) const {
    for (const auto& [handle, object] : objects_)
      if (pred(*object)) return true;
    return false;
  }

 private:
  Sim() = default;
  std::unordered_map<const void*, std::unique_ptr<Object>> objects_;
  char driver_tag_ = 0;
  char device_tag_ = 0;
};

template <typename T>
constexpr Kind kind_of();
template <>
constexpr Kind kind_of<Context>() {
  return Kind::kContext;
}
template <>
constexpr Kind kind_of<CommandQueue>() {
  return Kind::kCommandQueue;
}
template <>
constexpr Kind kind_of<CommandList>() {
  return Kind::kCommandList;
}
template <>
constexpr Kind kind_of<EventPool>() {
  return Kind::kEventPool;
}
template <>
constexpr Kind kind_of<Event>() {
  return Kind::kEvent;
}
template <>
constexpr Kind kind_of<Fence>() {
  return Kind::kFence;
}
template <>
constexpr Kind kind_of<Graph>() {
  return Kind::kGraph;
}
template <>
constexpr Kind kind_of<QueryNetwork>() {
  return Kind::kQueryNetwork;
}

template <typename T>
T* Sim::find_locked(const void* handle) {
  if (handle == nullptr) return nullptr;
  const auto it = objects_.find(handle);
  if (it == objects_.end() || it->second->kind != kind_of<T>()) return nullptr;
  return static_cast<T*>(it->second.get());
}

// Waits on Sim::cv until `done()` or the timeout (ns; UINT64_MAX: forever). Returns done().
template <typename Pred>
bool wait_for_ns(std::unique_lock<std::mutex>& lock, uint64_t timeout_ns, Pred done) {
  Sim& sim = Sim::get();
  if (timeout_ns == UINT64_MAX) {
    sim.cv.wait(lock, done);
    return true;
  }
  const auto capped = std::min<uint64_t>(timeout_ns, uint64_t{1} << 60);
  return sim.cv.wait_for(lock, std::chrono::nanoseconds(static_cast<int64_t>(capped)), done);
}

// Common checks of the entry points.
inline bool is_driver(ze_driver_handle_t h) {
  return h != nullptr && h == Sim::get().driver_handle();
}
inline bool is_device(ze_device_handle_t h) {
  return h != nullptr && h == Sim::get().device_handle();
}

// The address range [ptr, ptr + bytes) inside one allocation of `context` (mutex held).
const Allocation* find_allocation_locked(const Context& context, const void* ptr, size_t bytes);

// Runs a graph execution (graph_ext.cpp): false when the device was lost on it.
bool execute_graph(const GraphCore& graph, const std::vector<void*>& args);

}  // namespace hsched::zesim
