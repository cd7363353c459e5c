// A graph (one partition of a plan) compiled for an NPU through the Level Zero graph extension.
//
// compile(): the partition is serialized as OpenVINO IR (ir::write_ir in the requested
// precision) and packed as an NGRAPH_LITE payload for the device's graph compiler version. A
// native binary cached for (driver, device, payload) is created with ZE_GRAPH_FORMAT_NATIVE on
// the calling thread. Otherwise the driver compiles the payload (pfnCreate NGRAPH_LITE) on a
// detached thread and the caller waits at most the deadline: past it the caller gets
// DeadlineExceeded "compile_timeout: ..." and the build goes on alone, holding (shared_ptr) the
// runtime it uses; when it finishes it stores the native binary for the next process. Nobody
// waits for it, the process at exit included (once the process exits it touches no Level Zero
// object: level_zero::process_exiting()).
//
// The graph's arguments (inputs, then outputs) are bound once to host allocations of the
// context; a command list initializes the graph once at compile time, and a second one holds
// the graph's execution with a signal event.
//
// run(): copies the inputs into the argument memory, executes the command list on the queue with
// a fence, waits for the fence (at most the run timeout) and the event, copies the outputs out.
// Errors (status_from in device.h): device lost -> Unavailable "device_lost: ...", out of memory
// -> ResourceExhausted "memory_exceeded: ...", a run past the timeout -> Unavailable
// "device_lost: ... did not finish", anything else Internal; inputs that do not fit the graph ->
// InvalidArgument.
//
// Threading: concurrent run() calls are serialized; programs of one runtime share its queue
// (submissions serialized by the runtime).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "backends/level_zero/cache.h"
#include "backends/level_zero/device.h"
#include "backends/level_zero/ir/ir.h"
#include "backends/level_zero/ze_graph_ext.h"
#include "core/deadline.h"
#include "graph/graph.h"

namespace hsched::level_zero {

inline constexpr int64_t kDefaultRunTimeoutMs = 60000;

// One NPU opened for graphs: a context, the graph extension's function table and one command
// queue. Programs and abandoned builds hold it by shared_ptr; it is released with the last.
class NpuRuntime {
 public:
  // Errors: Unavailable when the driver lacks the graph extension or has no compute queue;
  // the status_from mapping for failed calls.
  static Result<std::shared_ptr<NpuRuntime>> open(const DeviceInfo& info,
                                                  std::shared_ptr<NativeCache> cache);
  ~NpuRuntime();
  NpuRuntime(const NpuRuntime&) = delete;
  NpuRuntime& operator=(const NpuRuntime&) = delete;

  const DeviceInfo& info() const { return info_; }
  ze_context_handle_t context() const { return context_; }
  ze_command_queue_handle_t queue() const { return queue_; }
  uint32_t queue_ordinal() const { return queue_ordinal_; }
  const ze_graph_dditable_ext_t& graph_api() const { return *graph_api_; }
  const ze_device_graph_properties_t& graph_properties() const { return graph_properties_; }
  // The graph extension version both the driver and the device report (the lower).
  uint32_t graph_extension_version() const;
  // Whether the driver answers queries of supported layers (extension 1.3).
  bool can_query() const;
  NativeCache& cache() const { return *cache_; }
  // Graphs of this runtime alive now (built, loaded or being built), at most
  // kMaxGraphsPerContext.
  std::atomic<int64_t>& live_graphs() { return live_graphs_; }
  // Held while a command list is submitted and its fence waited for.
  std::mutex& queue_mutex() { return queue_mutex_; }

 private:
  NpuRuntime(DeviceInfo info, std::shared_ptr<NativeCache> cache);

  DeviceInfo info_;
  std::shared_ptr<NativeCache> cache_;
  ze_context_handle_t context_ = nullptr;
  ze_command_queue_handle_t queue_ = nullptr;
  uint32_t queue_ordinal_ = 0;
  const ze_graph_dditable_ext_t* graph_api_ = nullptr;  // owned by the driver
  ze_device_graph_properties_t graph_properties_{};
  std::mutex queue_mutex_;
  std::atomic<int64_t> live_graphs_{0};
};

// The build flags the driver is given with an IR (pBuildFlags): each argument's precision and
// layout, in the format of OpenVINO's NPU plugin (`--inputs_precisions="0:FP32" --inputs_layouts=
// "0:NCHW" --outputs_precisions=... --outputs_layouts=...`), arguments named by index for
// compilers from 5.9 on and by name before. Intel's driver up to 1.8 refuses a graph without
// flags. Unimplemented when an older compiler would need a name the syntax cannot hold.
Result<std::string> build_flags(const Graph& graph, const ir::IrModel& model,
                                ze_graph_compiler_version_info_t compiler);

// What a partition's graph is built from: its IR (write_ir in `precision`) as an NGRAPH_LITE
// payload for the device's compiler, the build flags, its key in the native cache, and the IR's
// layer names. Errors: the IR writer's and build_flags'.
struct PreparedGraph {
  std::shared_ptr<const std::vector<uint8_t>> payload;
  std::string flags;
  std::string cache_key;  // NativeKey::bytes(): stored in the entry, compared on load
  std::string digest;
  std::vector<std::string> layers;  // every layer of the IR, in its order
};
Result<PreparedGraph> prepare_graph(const Graph& graph, const NpuRuntime& runtime,
                                    Precision precision);

// The layers of a prepared graph the driver's compiler supports (pfnQueryNetworkCreate,
// extension 1.3; OpenVINO's NPU plugin parses the same "<name><name>" answer), asked under
// `deadline_ms`. Not asked when the driver offers no query, nor when the native cache holds the
// graph (the driver built it before).
struct LayerQuery {
  std::string not_asked;  // why the driver was not asked; empty when it answered
  std::set<std::string> supported;
  std::vector<std::string> layers;  // every layer of the IR, in its order
};
Result<LayerQuery> query_layers(const PreparedGraph& prepared,
                                const std::shared_ptr<NpuRuntime>& runtime, int64_t deadline_ms);

struct NpuCompileOptions {
  Precision precision = Precision::kFp16;  // what write_ir serializes (fp16 or fp32)
  int64_t deadline_ms = kDefaultCompileDeadlineMs;
  int64_t run_timeout_ms = kDefaultRunTimeoutMs;
};

class NpuProgram {
 public:
  // `graph`: static shapes, every node accepted by ir::ir_supports; `prepared`: its
  // prepare_graph in options.precision when the caller has it (the driver's query made it), else
  // made here. Errors: compile_timeout (DeadlineExceeded), the IR writer's, the status_from
  // mapping of the driver's answers.
  static Result<std::unique_ptr<NpuProgram>> compile(const Graph& graph,
                                                     std::shared_ptr<NpuRuntime> runtime,
                                                     const NpuCompileOptions& options,
                                                     std::optional<PreparedGraph> prepared = {});
  ~NpuProgram();
  NpuProgram(const NpuProgram&) = delete;
  NpuProgram& operator=(const NpuProgram&) = delete;

  // Inputs in the order of graph().inputs(); outputs likewise.
  Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs,
                                  CopyRecord* copies = nullptr);

  const Graph& graph() const { return graph_; }
  // Whether the graph came from the native cache (true) or was compiled from IR (false).
  bool loaded_from_cache() const { return loaded_from_cache_; }

 private:
  struct GraphObject;
  struct Argument;
  NpuProgram(const Graph& graph, std::shared_ptr<NpuRuntime> runtime, int64_t run_timeout_ms);
  Status bind_arguments();
  Status create_commands();
  Status submit_and_wait(ze_command_list_handle_t list, const char* what);

  Graph graph_;
  std::shared_ptr<NpuRuntime> runtime_;
  std::shared_ptr<GraphObject> graph_object_;
  std::vector<Argument> arguments_;  // per graph input, then per graph output
  ze_event_pool_handle_t event_pool_ = nullptr;
  ze_event_handle_t done_event_ = nullptr;
  ze_fence_handle_t fence_ = nullptr;
  ze_command_list_handle_t execute_list_ = nullptr;
  int64_t run_timeout_ms_;
  bool loaded_from_cache_ = false;
  std::mutex run_mutex_;
};

}  // namespace hsched::level_zero
