#include "backends/level_zero/program.h"

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <system_error>
#include <thread>
#include <utility>

#include "backends/level_zero/ir/ir.h"
#include "backends/level_zero/ir/ir_format.h"
#include "core/deadline.h"

namespace hsched::level_zero {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kArgumentAlignment = 64;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::optional<DType> dtype_of(ze_graph_argument_precision_t precision) {
  switch (precision) {
    case ZE_GRAPH_ARGUMENT_PRECISION_FP32:
      return DType::kF32;
    case ZE_GRAPH_ARGUMENT_PRECISION_FP16:
      return DType::kF16;
    case ZE_GRAPH_ARGUMENT_PRECISION_BF16:
      return DType::kBF16;
    case ZE_GRAPH_ARGUMENT_PRECISION_INT8:
      return DType::kI8;
    case ZE_GRAPH_ARGUMENT_PRECISION_UINT8:
      return DType::kU8;
    case ZE_GRAPH_ARGUMENT_PRECISION_INT32:
      return DType::kI32;
    case ZE_GRAPH_ARGUMENT_PRECISION_INT64:
      return DType::kI64;
    case ZE_GRAPH_ARGUMENT_PRECISION_BOOLEAN:
      return DType::kBool;
    default:
      return std::nullopt;
  }
}

std::string bounded_name(const char* text, size_t capacity) {
  return std::string(text, strnlen(text, capacity));
}

// The layout a plugin of the OpenVINO 2.0 API states for a tensor of `rank` (a default: the
// compiler keeps the IR's order).
const char* flag_layout(size_t rank) {
  static const char* const kLayouts[] = {"SCALAR", "C", "NC", "CHW", "NCHW", "NCDHW"};
  return rank < std::size(kLayouts) ? kLayouts[rank] : "BLOCKED";
}

}  // namespace

Result<std::string> build_flags(const Graph& graph, const ir::IrModel& model,
                                ze_graph_compiler_version_info_t compiler) {
  // Compilers from 5.9 on take argument indices; older ones the arguments' names, which the
  // flags' syntax (space-separated NAME:VALUE inside quotes) cannot hold with a space or a quote.
  const bool indices = compiler.major > 5 || (compiler.major == 5 && compiler.minor >= 9);
  std::string flags;
  const auto add = [&](const char* option, const std::vector<ValueId>& values,
                       const std::vector<std::string>& names, bool layouts) -> Status {
    flags += std::string(flags.empty() ? "" : " ") + option + "=\"";
    for (size_t k = 0; k < values.size(); ++k) {
      const std::string key = indices ? std::to_string(k) : names.at(k);
      if (key.empty() || key.find_first_of(" \t\n\r\"") != std::string::npos) {
        return unimplemented("argument '" + key + "' cannot be named in the NPU compiler's " +
                             "build flags (compiler " + std::to_string(compiler.major) + "." +
                             std::to_string(compiler.minor) + " takes names, not indices)");
      }
      const Value& value = graph.value(values[k]);
      flags += (k > 0 ? " " : "") + key + ":" +
               (layouts ? std::string(flag_layout(value.shape.rank()))
                        : std::string(ir::detail::port_precision_name(value.dtype)));
    }
    flags += "\"";
    return Status::ok();
  };
  if (model.input_names.size() != graph.inputs().size() ||
      model.output_names.size() != graph.outputs().size()) {
    return internal_error("build_flags: the IR's arguments are not the graph's");
  }
  HSCHED_RETURN_IF_ERROR(add("--inputs_precisions", graph.inputs(), model.input_names, false));
  HSCHED_RETURN_IF_ERROR(add("--inputs_layouts", graph.inputs(), model.input_names, true));
  HSCHED_RETURN_IF_ERROR(add("--outputs_precisions", graph.outputs(), model.output_names, false));
  HSCHED_RETURN_IF_ERROR(add("--outputs_layouts", graph.outputs(), model.output_names, true));
  return flags;
}

namespace {

// A graph descriptor over `input` (which, like `flags`, must outlive the driver call).
ze_graph_desc_t graph_desc(ze_graph_format_t format, const std::vector<uint8_t>& input,
                           const std::string& flags) {
  ze_graph_desc_t desc{};
  desc.stype = ZE_STRUCTURE_TYPE_GRAPH_DESC_PROPERTIES;
  desc.format = format;
  desc.inputSize = input.size();
  desc.pInput = input.data();
  desc.pBuildFlags = flags.c_str();
  return desc;
}

// The compiler's log of the latest failed build, when the driver keeps one (extension 1.4):
// appended to the error as "; compiler log: ...", at most 2,000 characters.
std::string build_log_suffix(const NpuRuntime& runtime) {
  const ze_graph_dditable_ext_t& api = runtime.graph_api();
  if (runtime.graph_extension_version() < ZE_GRAPH_EXT_VERSION_1_4 ||
      api.pfnBuildLogGetString == nullptr) {
    return {};
  }
  uint32_t size = 0;
  if (api.pfnBuildLogGetString(nullptr, &size, nullptr) != ZE_RESULT_SUCCESS || size <= 1) {
    return {};
  }
  std::string log(std::min<uint32_t>(size, 1u << 20), '\0');
  uint32_t got = static_cast<uint32_t>(log.size());
  if (api.pfnBuildLogGetString(nullptr, &got, log.data()) != ZE_RESULT_SUCCESS) return {};
  log.resize(strnlen(log.data(), std::min<size_t>(got, log.size())));
  for (char& c : log) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  if (log.size() > 2000) log = log.substr(0, 2000) + "...";
  return log.empty() ? std::string() : "; compiler log: " + log;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// NpuRuntime

NpuRuntime::NpuRuntime(DeviceInfo info, std::shared_ptr<NativeCache> cache)
    : info_(std::move(info)), cache_(std::move(cache)) {}

NpuRuntime::~NpuRuntime() {
  if (process_exiting()) return;  // the loader is being torn down: leak, never call into it
  if (queue_ != nullptr) zeCommandQueueDestroy(queue_);
  if (context_ != nullptr) zeContextDestroy(context_);
}

uint32_t NpuRuntime::graph_extension_version() const {
  return std::min<uint32_t>(info_.graph_extension,
                            static_cast<uint32_t>(graph_properties_.graphExtensionVersion));
}

bool NpuRuntime::can_query() const {
  const ze_graph_dditable_ext_t& api = *graph_api_;
  return graph_extension_version() >= ZE_GRAPH_EXT_VERSION_1_3 &&
         api.pfnQueryNetworkCreate != nullptr && api.pfnQueryNetworkDestroy != nullptr &&
         api.pfnQueryNetworkGetSupportedLayers != nullptr;
}

Result<std::shared_ptr<NpuRuntime>> NpuRuntime::open(const DeviceInfo& info,
                                                     std::shared_ptr<NativeCache> cache) {
  std::shared_ptr<NpuRuntime> runtime(new NpuRuntime(info, std::move(cache)));
  const std::string& name = info.name;
  if (info.graph_extension == 0) {
    return Status(ErrorCode::kUnavailable,
                  "level_zero: the driver of " + name + " does not offer " ZE_GRAPH_EXT_NAME);
  }
  void* table = nullptr;
  ze_result_t result = zeDriverGetExtensionFunctionAddress(info.driver, ZE_GRAPH_EXT_NAME, &table);
  if (result != ZE_RESULT_SUCCESS || table == nullptr) {
    return Status(ErrorCode::kUnavailable,
                  "level_zero: zeDriverGetExtensionFunctionAddress(" ZE_GRAPH_EXT_NAME ") on " +
                      name + ": " + result_name(result));
  }
  runtime->graph_api_ = static_cast<const ze_graph_dditable_ext_t*>(table);
  const ze_graph_dditable_ext_t& api = *runtime->graph_api_;
  if (api.pfnCreate == nullptr || api.pfnDestroy == nullptr || api.pfnGetProperties == nullptr ||
      api.pfnGetArgumentProperties == nullptr || api.pfnSetArgumentValue == nullptr ||
      api.pfnAppendGraphInitialize == nullptr || api.pfnAppendGraphExecute == nullptr ||
      api.pfnGetNativeBinary == nullptr || api.pfnDeviceGetGraphProperties == nullptr) {
    return Status(ErrorCode::kUnavailable,
                  "level_zero: the graph extension of " + name + " lacks an entry hsched uses");
  }
  runtime->graph_properties_.stype = ZE_STRUCTURE_TYPE_DEVICE_GRAPH_PROPERTIES;
  result = api.pfnDeviceGetGraphProperties(info.device, &runtime->graph_properties_);
  if (result != ZE_RESULT_SUCCESS) {
    return status_from(result, "pfnDeviceGetGraphProperties", name);
  }
  if ((runtime->graph_properties_.graphFormatsSupported & ZE_GRAPH_FORMAT_NGRAPH_LITE) == 0) {
    return Status(ErrorCode::kUnavailable,
                  "level_zero: the graph compiler of " + name + " does not take NGRAPH_LITE IR");
  }

  // A queue of the first group that computes (an NPU has one).
  uint32_t group_count = 0;
  result = zeDeviceGetCommandQueueGroupProperties(info.device, &group_count, nullptr);
  if (result != ZE_RESULT_SUCCESS) {
    return status_from(result, "zeDeviceGetCommandQueueGroupProperties", name);
  }
  std::vector<ze_command_queue_group_properties_t> groups(group_count);
  for (auto& group : groups) group.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES;
  if (group_count > 0) {
    result = zeDeviceGetCommandQueueGroupProperties(info.device, &group_count, groups.data());
    if (result != ZE_RESULT_SUCCESS) {
      return status_from(result, "zeDeviceGetCommandQueueGroupProperties", name);
    }
  }
  std::optional<uint32_t> ordinal;
  for (uint32_t g = 0; g < group_count && g < groups.size() && !ordinal; ++g) {
    if (groups[g].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE) ordinal = g;
  }
  if (!ordinal) {
    return Status(ErrorCode::kUnavailable, "level_zero: " + name + " has no compute queue group");
  }
  runtime->queue_ordinal_ = *ordinal;

  ze_context_desc_t context_desc{};
  context_desc.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC;
  result = zeContextCreate(info.driver, &context_desc, &runtime->context_);
  if (result != ZE_RESULT_SUCCESS) return status_from(result, "zeContextCreate", name);
  ze_command_queue_desc_t queue_desc{};
  queue_desc.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC;
  queue_desc.ordinal = runtime->queue_ordinal_;
  queue_desc.index = 0;
  queue_desc.mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS;
  queue_desc.priority = ZE_COMMAND_QUEUE_PRIORITY_NORMAL;
  result = zeCommandQueueCreate(runtime->context_, info.device, &queue_desc, &runtime->queue_);
  if (result != ZE_RESULT_SUCCESS) return status_from(result, "zeCommandQueueCreate", name);
  return runtime;
}

// ---------------------------------------------------------------------------------------------
// NpuProgram

// A graph object of the driver; destroyed with the last holder (a program, or a build abandoned
// past its deadline), never while the process exits. Counted in the runtime's live graphs from
// before the driver is asked to the destruction (GraphSlot).
struct NpuProgram::GraphObject {
  GraphObject(std::shared_ptr<NpuRuntime> owner, ze_graph_handle_t graph)
      : runtime(std::move(owner)), handle(graph) {}
  ~GraphObject() {
    if (handle != nullptr && !process_exiting()) runtime->graph_api().pfnDestroy(handle);
    --runtime->live_graphs();
  }
  GraphObject(const GraphObject&) = delete;
  GraphObject& operator=(const GraphObject&) = delete;

  std::shared_ptr<NpuRuntime> runtime;
  ze_graph_handle_t handle;
};

// One argument of the graph and the host memory bound to it.
struct NpuProgram::Argument {
  uint32_t index = 0;  // the graph's argument index
  bool input = true;
  size_t position = 0;  // in graph().inputs() or graph().outputs()
  DType dtype = DType::kF32;
  std::vector<int64_t> dims;  // the partition's value's
  size_t bytes = 0;
  void* memory = nullptr;  // zeMemAllocHost; freed by ~NpuProgram
};

NpuProgram::NpuProgram(const Graph& graph, std::shared_ptr<NpuRuntime> runtime,
                       int64_t run_timeout_ms)
    : graph_(graph), runtime_(std::move(runtime)), run_timeout_ms_(run_timeout_ms) {}

NpuProgram::~NpuProgram() {
  if (process_exiting()) return;
  if (execute_list_ != nullptr) zeCommandListDestroy(execute_list_);
  if (fence_ != nullptr) zeFenceDestroy(fence_);
  if (done_event_ != nullptr) zeEventDestroy(done_event_);
  if (event_pool_ != nullptr) zeEventPoolDestroy(event_pool_);
  graph_object_.reset();  // before the memory its arguments point at
  for (const Argument& argument : arguments_) {
    if (argument.memory != nullptr) zeMemFree(runtime_->context(), argument.memory);
  }
}

namespace {

// A graph object of the driver and whether it came from the on-disk cache.
template <typename GraphObject>
struct LoadedGraph {
  std::shared_ptr<GraphObject> graph;
  bool from_cache = false;
};

// The graph of `payload` on a worker thread (run_with_deadline): the cached native binary of
// `cache_key` (NativeKey::bytes()) when the driver takes it, else compiled from the IR and its
// native binary stored under `cache_key`. Both driver calls can block for long (a driver loads a
// native graph onto the device too), so both run under the caller's deadline. Owns everything it
// touches.
template <typename GraphObject>
Result<LoadedGraph<GraphObject>> load_or_build_graph(
    const std::shared_ptr<NpuRuntime>& runtime,
    const std::shared_ptr<const std::vector<uint8_t>>& payload, const std::string& cache_key,
    const std::string& flags) {
  const ze_graph_dditable_ext_t& api = runtime->graph_api();
  const DeviceInfo& info = runtime->info();
  // A slot among the context's graphs, taken before the driver is asked and handed to the graph
  // object (or given back on failure).
  if (++runtime->live_graphs() > kMaxGraphsPerContext) {
    --runtime->live_graphs();
    return Status(ErrorCode::kResourceExhausted, "device_limit: " + info.name + " holds at most " +
                                                     std::to_string(kMaxGraphsPerContext) +
                                                     " graphs per context");
  }
  struct Slot {
    NpuRuntime& runtime;
    bool held = true;
    ~Slot() {
      if (held) --runtime.live_graphs();
    }
  } slot{*runtime};
  const auto make = [&](ze_graph_handle_t handle) {
    slot.held = false;
    return std::make_shared<GraphObject>(runtime, handle);
  };
  if (const auto native = runtime->cache().load(cache_key)) {
    const ze_graph_desc_t desc = graph_desc(ZE_GRAPH_FORMAT_NATIVE, *native, flags);
    ze_graph_handle_t handle = nullptr;
    const ze_result_t result = api.pfnCreate(runtime->context(), info.device, &desc, &handle);
    if (process_exiting()) return internal_error("level_zero: graph load ended at process exit");
    if (result == ZE_RESULT_SUCCESS) {
      runtime->cache().record_loaded();
      return LoadedGraph<GraphObject>{make(handle), true};
    }
    if (result == ZE_RESULT_ERROR_DEVICE_LOST || result == ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY ||
        result == ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY) {
      return status_from(result, "graph load (pfnCreate, NATIVE)", info.name);
    }  // else a binary this driver no longer takes: compiled again below, and overwritten
  }
  const ze_graph_desc_t desc = graph_desc(ZE_GRAPH_FORMAT_NGRAPH_LITE, *payload, flags);
  ze_graph_handle_t handle = nullptr;
  const ze_result_t result = api.pfnCreate(runtime->context(), info.device, &desc, &handle);
  if (process_exiting()) return internal_error("level_zero: graph build ended at process exit");
  if (result != ZE_RESULT_SUCCESS) {
    const Status error = status_from(result, "graph build (pfnCreate, NGRAPH_LITE)", info.name);
    return Status(error.code(), error.message() + build_log_suffix(*runtime));
  }
  auto graph = make(handle);
  runtime->cache().record_built();
  size_t size = 0;
  if (api.pfnGetNativeBinary(handle, &size, nullptr) == ZE_RESULT_SUCCESS && size > 0) {
    NativeCache::Binary binary(size);
    if (api.pfnGetNativeBinary(handle, &size, binary.data()) == ZE_RESULT_SUCCESS &&
        size <= binary.size()) {
      binary.resize(size);
      runtime->cache().store(cache_key, binary);
    }
  }
  return LoadedGraph<GraphObject>{std::move(graph), false};
}

}  // namespace

Result<PreparedGraph> prepare_graph(const Graph& graph, const NpuRuntime& runtime,
                                    Precision precision) {
  const DeviceInfo& info = runtime.info();
  HSCHED_ASSIGN_OR_RETURN(ir::IrModel model, ir::write_ir(graph, precision));
  const ze_graph_compiler_version_info_t version = runtime.graph_properties().compilerVersion;
  PreparedGraph prepared;
  HSCHED_ASSIGN_OR_RETURN(prepared.flags, build_flags(graph, model, version));
  prepared.payload = std::make_shared<const std::vector<uint8_t>>(
      ir::pack_ngraph_lite(model, version.major, version.minor));
  prepared.layers = std::move(model.layers);
  NativeKey key;
  key.driver_uuid = info.driver_uuid;
  key.driver_version = info.driver_version;
  key.device_name = info.name;
  key.device_uuid = uuid_text(info.uuid);
  key.device_id = info.device_id;
  key.graph_extension_version =
      static_cast<uint32_t>(runtime.graph_properties().graphExtensionVersion);
  key.compiler_major = version.major;
  key.compiler_minor = version.minor;
  key.payload = *prepared.payload;
  key.build_flags = prepared.flags;
  prepared.cache_key = key.bytes();
  prepared.digest = key.digest();
  return prepared;
}

Result<std::unique_ptr<NpuProgram>> NpuProgram::compile(const Graph& graph,
                                                        std::shared_ptr<NpuRuntime> runtime,
                                                        const NpuCompileOptions& options,
                                                        std::optional<PreparedGraph> given) {
  const DeviceInfo& info = runtime->info();
  if (!given) {
    HSCHED_ASSIGN_OR_RETURN(given, prepare_graph(graph, *runtime, options.precision));
  }
  const PreparedGraph& prepared = *given;
  auto payload = prepared.payload;
  const std::string cache_key = prepared.cache_key;
  const std::string flags = prepared.flags;
  const std::string& digest = prepared.digest;

  std::unique_ptr<NpuProgram> program(new NpuProgram(graph, runtime, options.run_timeout_ms));
  HSCHED_ASSIGN_OR_RETURN(
      LoadedGraph<GraphObject> loaded,
      run_with_deadline<LoadedGraph<GraphObject>>(
          [runtime, payload, cache_key, flags] {
            return load_or_build_graph<GraphObject>(runtime, payload, cache_key, flags);
          },
          options.deadline_ms, "graph build on " + info.name + " (key " + digest + ")"));
  program->graph_object_ = std::move(loaded.graph);
  program->loaded_from_cache_ = loaded.from_cache;
  HSCHED_RETURN_IF_ERROR(program->bind_arguments());
  HSCHED_RETURN_IF_ERROR(program->create_commands());
  return program;
}

// Binds the graph's arguments to the partition's inputs and outputs by index: the driver lists
// the IR's Parameters, then its Results, each in the IR's order (OpenVINO's IR reader keeps both
// orders), which write_ir makes the graph's. Names are not compared: Intel's compiler names an
// output after the layer feeding its Result, not after the value. Element types and counts are
// checked; host memory is bound to each.
Status NpuProgram::bind_arguments() {
  const ze_graph_dditable_ext_t& api = runtime_->graph_api();
  const std::string& device = runtime_->info().name;
  const ze_graph_handle_t graph = graph_object_->handle;
  ze_graph_properties_t properties{};
  properties.stype = ZE_STRUCTURE_TYPE_GRAPH_PROPERTIES;
  ze_result_t result = api.pfnGetProperties(graph, &properties);
  if (result != ZE_RESULT_SUCCESS) return status_from(result, "pfnGetProperties", device);
  const size_t expected = graph_.inputs().size() + graph_.outputs().size();
  if (properties.numGraphArgs != expected) {
    return internal_error("level_zero: the compiled graph has " +
                          std::to_string(properties.numGraphArgs) + " arguments, the partition " +
                          std::to_string(expected) + " inputs and outputs");
  }
  size_t inputs_seen = 0;
  size_t outputs_seen = 0;
  for (uint32_t index = 0; index < properties.numGraphArgs; ++index) {
    ze_graph_argument_properties_t arg{};
    arg.stype = ZE_STRUCTURE_TYPE_GRAPH_ARGUMENT_PROPERTIES;
    result = api.pfnGetArgumentProperties(graph, index, &arg);
    if (result != ZE_RESULT_SUCCESS) {
      return status_from(result, "pfnGetArgumentProperties", device);
    }
    const std::string name = bounded_name(arg.name, sizeof(arg.name));
    const bool input = arg.type == ZE_GRAPH_ARGUMENT_TYPE_INPUT;
    if (input && outputs_seen > 0) {
      return internal_error("level_zero: the compiled graph lists input '" + name +
                            "' after its outputs");
    }
    const std::vector<ValueId>& values = input ? graph_.inputs() : graph_.outputs();
    const size_t position = input ? inputs_seen++ : outputs_seen++;
    if (position >= values.size()) {
      return internal_error("level_zero: the compiled graph has more " +
                            std::string(input ? "inputs" : "outputs") + " than the partition (" +
                            std::to_string(values.size()) + ")");
    }
    const Value& value = graph_.value(values[position]);
    const std::string what = std::string(input ? "input " : "output ") + std::to_string(position) +
                             " ('" + name + "', value '" + value.name + "')";
    const std::optional<DType> dtype = dtype_of(arg.devicePrecision);
    if (!dtype || *dtype != value.dtype) {
      return internal_error("level_zero: " + what + " has precision " +
                            std::to_string(static_cast<int>(arg.devicePrecision)) +
                            ", the value is " + std::string(dtype_name(value.dtype)));
    }
    HSCHED_ASSIGN_OR_RETURN(const int64_t elements, checked_elements(value.shape.dims));
    int64_t arg_elements = 1;
    for (uint32_t dim : arg.dims) arg_elements *= std::max<uint32_t>(dim, 1);
    if (arg_elements != elements) {
      return internal_error("level_zero: " + what + " holds " + std::to_string(arg_elements) +
                            " elements, the value " + std::to_string(elements));
    }
    Argument argument;
    argument.index = index;
    argument.input = input;
    argument.position = position;
    argument.dtype = value.dtype;
    argument.dims = value.shape.dims;
    argument.bytes = static_cast<size_t>(elements) * dtype_size(value.dtype);
    ze_host_mem_alloc_desc_t host_desc{};
    host_desc.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC;
    result = zeMemAllocHost(runtime_->context(), &host_desc, std::max<size_t>(argument.bytes, 1),
                            kArgumentAlignment, &argument.memory);
    if (result != ZE_RESULT_SUCCESS) return status_from(result, "zeMemAllocHost", device);
    arguments_.push_back(std::move(argument));  // freed by the destructor from now on
    result = api.pfnSetArgumentValue(graph, index, arguments_.back().memory);
    if (result != ZE_RESULT_SUCCESS) return status_from(result, "pfnSetArgumentValue", device);
  }
  return Status::ok();
}

// The event, fence and command lists; the graph initialized once (waited for here).
Status NpuProgram::create_commands() {
  const std::string& device = runtime_->info().name;
  const ze_context_handle_t context = runtime_->context();
  const ze_device_handle_t handle = runtime_->info().device;
  ze_event_pool_desc_t pool_desc{};
  pool_desc.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC;
  pool_desc.flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE;
  pool_desc.count = 1;
  ze_device_handle_t devices[] = {handle};
  ze_result_t result = zeEventPoolCreate(context, &pool_desc, 1, devices, &event_pool_);
  if (result != ZE_RESULT_SUCCESS) return status_from(result, "zeEventPoolCreate", device);
  ze_event_desc_t event_desc{};
  event_desc.stype = ZE_STRUCTURE_TYPE_EVENT_DESC;
  event_desc.index = 0;
  event_desc.signal = ZE_EVENT_SCOPE_FLAG_HOST;
  event_desc.wait = ZE_EVENT_SCOPE_FLAG_HOST;
  result = zeEventCreate(event_pool_, &event_desc, &done_event_);
  if (result != ZE_RESULT_SUCCESS) return status_from(result, "zeEventCreate", device);
  ze_fence_desc_t fence_desc{};
  fence_desc.stype = ZE_STRUCTURE_TYPE_FENCE_DESC;
  result = zeFenceCreate(runtime_->queue(), &fence_desc, &fence_);
  if (result != ZE_RESULT_SUCCESS) return status_from(result, "zeFenceCreate", device);

  ze_command_list_desc_t list_desc{};
  list_desc.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC;
  list_desc.commandQueueGroupOrdinal = runtime_->queue_ordinal();
  const ze_graph_dditable_ext_t& api = runtime_->graph_api();
  {
    // Initialization runs once; its list is not kept.
    ze_command_list_handle_t init_list = nullptr;
    result = zeCommandListCreate(context, handle, &list_desc, &init_list);
    if (result != ZE_RESULT_SUCCESS) return status_from(result, "zeCommandListCreate", device);
    struct ListGuard {
      ze_command_list_handle_t list;
      ~ListGuard() {
        if (!process_exiting()) zeCommandListDestroy(list);
      }
    } guard{init_list};
    result = api.pfnAppendGraphInitialize(init_list, graph_object_->handle, nullptr, 0, nullptr);
    if (result != ZE_RESULT_SUCCESS) {
      return status_from(result, "pfnAppendGraphInitialize", device);
    }
    result = zeCommandListClose(init_list);
    if (result != ZE_RESULT_SUCCESS) return status_from(result, "zeCommandListClose", device);
    HSCHED_RETURN_IF_ERROR(submit_and_wait(init_list, "graph initialization"));
  }
  result = zeCommandListCreate(context, handle, &list_desc, &execute_list_);
  if (result != ZE_RESULT_SUCCESS) return status_from(result, "zeCommandListCreate", device);
  result = api.pfnAppendGraphExecute(execute_list_, graph_object_->handle, nullptr, done_event_, 0,
                                     nullptr);
  if (result != ZE_RESULT_SUCCESS) return status_from(result, "pfnAppendGraphExecute", device);
  result = zeCommandListClose(execute_list_);
  if (result != ZE_RESULT_SUCCESS) return status_from(result, "zeCommandListClose", device);
  return Status::ok();
}

// Executes `list` on the runtime's queue and waits for the fence, at most the run timeout.
Status NpuProgram::submit_and_wait(ze_command_list_handle_t list, const char* what) {
  const std::string& device = runtime_->info().name;
  std::lock_guard<std::mutex> lock(runtime_->queue_mutex());
  ze_result_t result = zeFenceReset(fence_);
  if (result != ZE_RESULT_SUCCESS) return status_from(result, "zeFenceReset", device);
  result = zeCommandQueueExecuteCommandLists(runtime_->queue(), 1, &list, fence_);
  if (result != ZE_RESULT_SUCCESS) {
    return status_from(result, "zeCommandQueueExecuteCommandLists", device);
  }
  const uint64_t timeout_ns =
      static_cast<uint64_t>(std::max<int64_t>(1, run_timeout_ms_)) * 1000000;
  result = zeFenceHostSynchronize(fence_, timeout_ns);
  if (result == ZE_RESULT_NOT_READY) {
    return Status(ErrorCode::kUnavailable, std::string("device_lost: ") + what + " on " + device +
                                               " did not finish within " +
                                               std::to_string(run_timeout_ms_) + " ms");
  }
  if (result != ZE_RESULT_SUCCESS) return status_from(result, "zeFenceHostSynchronize", device);
  return Status::ok();
}

Result<std::vector<Tensor>> NpuProgram::run(const std::vector<Tensor>& inputs,
                                            CopyRecord* copies) {
  std::lock_guard<std::mutex> lock(run_mutex_);
  const std::string& device = runtime_->info().name;
  if (inputs.size() != graph_.inputs().size()) {
    return invalid_argument("level_zero: the graph takes " +
                            std::to_string(graph_.inputs().size()) + " inputs, got " +
                            std::to_string(inputs.size()));
  }
  CopyRecord local;
  auto start = Clock::now();
  for (const Argument& argument : arguments_) {
    if (!argument.input) continue;
    const Tensor& input = inputs[argument.position];
    if (input.dtype() != argument.dtype || input.byte_size() != argument.bytes) {
      return invalid_argument("level_zero: input '" +
                              graph_.value(graph_.inputs()[argument.position]).name +
                              "' does not have the graph's dtype and shape");
    }
    if (argument.bytes > 0) std::memcpy(argument.memory, input.raw(), argument.bytes);
    local.upload_bytes += static_cast<int64_t>(argument.bytes);
  }
  local.upload_ms = ms_since(start);
  ze_result_t result = zeEventHostReset(done_event_);
  if (result != ZE_RESULT_SUCCESS) return status_from(result, "zeEventHostReset", device);
  HSCHED_RETURN_IF_ERROR(submit_and_wait(execute_list_, "graph execution"));
  result = zeEventQueryStatus(done_event_);
  if (result != ZE_RESULT_SUCCESS) {
    // The fence signalled but the graph's event did not: the execution did not complete.
    return result == ZE_RESULT_NOT_READY
               ? Status(ErrorCode::kUnavailable,
                        "device_lost: graph execution on " + device + " signalled no completion")
               : status_from(result, "zeEventQueryStatus", device);
  }
  start = Clock::now();
  std::vector<Tensor> outputs(graph_.outputs().size());
  for (const Argument& argument : arguments_) {
    if (argument.input) continue;
    Tensor output(argument.dtype, argument.dims);
    if (argument.bytes > 0) std::memcpy(output.raw(), argument.memory, argument.bytes);
    local.download_bytes += static_cast<int64_t>(argument.bytes);
    outputs[argument.position] = std::move(output);
  }
  local.download_ms = ms_since(start);
  if (copies != nullptr) *copies = local;
  return outputs;
}

Result<LayerQuery> query_layers(const PreparedGraph& prepared,
                                const std::shared_ptr<NpuRuntime>& runtime, int64_t deadline_ms) {
  LayerQuery query;
  if (!runtime->can_query()) {
    query.not_asked = "not offered by the driver";
    return query;
  }
  std::error_code error;
  if (std::filesystem::exists(runtime->cache().entry_path(prepared.cache_key), error)) {
    query.not_asked = "not asked, the graph is cached";  // it was built: the driver took it
    return query;
  }
  query.layers = prepared.layers;
  auto payload = prepared.payload;
  const std::string flags = prepared.flags;
  const std::string name = runtime->info().name;
  HSCHED_ASSIGN_OR_RETURN(
      std::string answer,
      run_with_deadline<std::string>(
          [runtime, payload, flags]() -> Result<std::string> {
            const ze_graph_dditable_ext_t& api = runtime->graph_api();
            const std::string& device = runtime->info().name;
            const ze_graph_desc_t desc = graph_desc(ZE_GRAPH_FORMAT_NGRAPH_LITE, *payload, flags);
            ze_graph_query_network_handle_t handle = nullptr;
            ze_result_t result = api.pfnQueryNetworkCreate(runtime->context(),
                                                           runtime->info().device, &desc, &handle);
            if (process_exiting()) return internal_error("level_zero: query at process exit");
            if (result != ZE_RESULT_SUCCESS) {
              return status_from(result, "pfnQueryNetworkCreate", device);
            }
            struct Guard {
              const ze_graph_dditable_ext_t& api;
              ze_graph_query_network_handle_t handle;
              ~Guard() {
                if (!process_exiting()) api.pfnQueryNetworkDestroy(handle);
              }
            } guard{api, handle};
            size_t size = 0;
            result = api.pfnQueryNetworkGetSupportedLayers(handle, &size, nullptr);
            if (result != ZE_RESULT_SUCCESS) {
              return status_from(result, "pfnQueryNetworkGetSupportedLayers", device);
            }
            std::string text(std::min<size_t>(size, size_t{64} << 20), '\0');
            size_t got = text.size();
            result = api.pfnQueryNetworkGetSupportedLayers(handle, &got, text.data());
            if (result != ZE_RESULT_SUCCESS) {
              return status_from(result, "pfnQueryNetworkGetSupportedLayers", device);
            }
            text.resize(strnlen(text.data(), std::min(got, text.size())));
            return text;
          },
          deadline_ms, "query of supported layers on " + name));
  // "<name><name>...": a name runs from a '<' to the next '>'.
  for (size_t open = answer.find('<'); open != std::string::npos;
       open = answer.find('<', open + 1)) {
    const size_t close = answer.find('>', open + 1);
    if (close == std::string::npos) break;
    query.supported.insert(answer.substr(open + 1, close - open - 1));
    open = close;
  }
  return query;
}

}  // namespace hsched::level_zero
