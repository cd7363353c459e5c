// The graph extension ("ZE_extension_graph" 1.4) of the simulated NPU driver.
//
// pfnCreate: NGRAPH_LITE (ir.h's payload: OpenVINO IR) or NATIVE (native_blob.h) -> read_ir ->
// NPU numerics (npu_numerics.h) -> a CPU program. Arguments are the graph's inputs then outputs
// (the IR's Parameters and Results, in its order).
//
// Strict by default: it behaves as Intel's driver (intel/linux-npu-driver) and compiler do where
// that is known, each behaviour beside its source below:
//   - an output argument is named after the layer feeding its Result, an input after its
//     Parameter (the compiler's IE importer, createPrimaryNameAttr);
//   - driver releases before 1.10 refuse a graph without build flags; flags given are parsed
//     and checked against the IR's arguments (the compiler's option parser);
//   - at most 255 graphs per context (the driver's command queues);
//   - Gelu-7 with approximation_mode TANH is computed as the erf form (the compiler's Gelu
//     conversion); BF16 anywhere in the IR is refused (the NPU computes FP16 and INT8);
//   - pfnQueryNetworkCreate answers which layers the compiler's op table takes;
//   - pfnBuildLogGetString returns the reason of the latest failed build.
// HSCHED_ZE_SIM_FAULTS=lenient=1 names outputs after their values, lifts the graph limit and
// computes Gelu's tanh form as written (faults.h). pfnSetArgumentValue binds memory of the
// graph's context; pfnAppendGraphExecute records the arguments bound at that moment, and runs when
// the command list runs on a queue (queue.cpp). The extension's functions are called directly,
// not through the loader or its validation layer, so each checks everything itself.
//
// Diagnostics: with HSCHED_ZE_SIM_LOG=1 a failing pfnCreate writes its reason (the IR layer,
// the op) as one line on stderr; the 1.0 extension has no build log.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <optional>
#include <thread>

#include "backends/cpu/program.h"
#include "backends/level_zero/ir/ir.h"
#include "backends/level_zero/ir/ir_format.h"
#include "backends/level_zero/sim/api.h"
#include "backends/level_zero/sim/native_blob.h"
#include "backends/level_zero/sim/npu_numerics.h"
#include "backends/level_zero/sim/sim.h"

namespace hsched::zesim {

GraphCore::~GraphCore() = default;

namespace {

constexpr size_t kMaxInputBytes = size_t{2} << 30;  // an NGRAPH_LITE or native blob

bool log_enabled() {
  const char* value = std::getenv("HSCHED_ZE_SIM_LOG");
  return value != nullptr && std::strcmp(value, "1") == 0;
}

// Records `why` as the build log (pfnBuildLogGetString) and returns `result`.
ze_result_t fail(ze_result_t result, const std::string& why) {
  if (log_enabled()) std::cerr << "ze_hsched_sim: pfnCreate: " << why << "\n";
  Sim& sim = Sim::get();
  std::lock_guard lock(sim.mutex);
  sim.build_log = why;
  return result;
}

bool driver_before(int major, int minor) {
  const Faults& faults = Sim::get().faults;
  return faults.driver_major < major ||
         (faults.driver_major == major && faults.driver_minor < minor);
}

// Checks build flags against the graph's arguments the way the compiler's option parser reads
// them: --inputs_precisions="KEY:PREC ..." and --outputs_precisions (KEY: the argument's index
// or name; PREC its precision, case-insensitive), --inputs_layouts and --outputs_layouts of
// KEY:LAYOUT, then --config and its KEY="VALUE" pairs. An empty string when they fit.
std::string check_build_flags(std::string_view flags, const std::vector<GraphArg>& args) {
  const auto upper = [](std::string text) {
    for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return text;
  };
  size_t at = 0;
  while (at < flags.size()) {
    while (at < flags.size() && flags[at] == ' ') ++at;
    if (at >= flags.size()) break;
    if (flags.substr(at, 8) == "--config") break;  // the rest is the plugin's configuration
    const size_t eq = flags.find("=\"", at);
    const size_t close = eq == std::string_view::npos ? eq : flags.find('"', eq + 2);
    if (close == std::string_view::npos) return "malformed option at offset " + std::to_string(at);
    const std::string option(flags.substr(at, eq - at));
    const std::string_view list = flags.substr(eq + 2, close - eq - 2);
    at = close + 1;
    const bool inputs = option.rfind("--inputs_", 0) == 0;
    if (option != "--inputs_precisions" && option != "--outputs_precisions" &&
        option != "--inputs_layouts" && option != "--outputs_layouts") {
      return "unknown option '" + option.substr(0, 40) + "'";
    }
    std::vector<const GraphArg*> wanted;
    for (const GraphArg& arg : args) {
      if ((arg.type == ZE_GRAPH_ARGUMENT_TYPE_INPUT) == inputs) wanted.push_back(&arg);
    }
    size_t count = 0;
    for (size_t pos = 0; pos < list.size();) {
      while (pos < list.size() && list[pos] == ' ') ++pos;
      if (pos >= list.size()) break;
      size_t end = list.find(' ', pos);
      if (end == std::string_view::npos) end = list.size();
      const std::string_view entry = list.substr(pos, end - pos);
      pos = end;
      const size_t colon = entry.rfind(':');
      if (colon == std::string_view::npos)
        return option + ": no ':' in '" + std::string(entry) + "'";
      const std::string key(entry.substr(0, colon));
      const std::string value(entry.substr(colon + 1));
      if (count >= wanted.size()) return option + " lists more arguments than the IR has";
      const GraphArg& arg = *wanted[count];
      if (key != std::to_string(count) && key != arg.name) {
        return option + ": '" + key + "' is not argument " + std::to_string(count) + " ('" +
               arg.name + "')";
      }
      if (option.find("precisions") != std::string::npos &&
          upper(value) != ir::detail::port_precision_name(arg.dtype)) {
        return option + ": '" + key + "' is " +
               std::string(ir::detail::port_precision_name(arg.dtype)) + ", not " + value;
      }
      ++count;
    }
    if (count != wanted.size())
      return option + " lists " + std::to_string(count) + " of " + std::to_string(wanted.size()) +
             " arguments";
  }
  return {};
}

ze_result_t status_result(const Status& status) {
  return status.code() == ErrorCode::kUnimplemented ? ZE_RESULT_ERROR_UNSUPPORTED_FEATURE
                                                    : ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

// Sleeps `seconds` in short steps; false when the process started exiting meanwhile (the build
// is then abandoned: exit never waits for it, and nothing is compiled during teardown).
bool sleep_unless_exiting(double seconds) {
  using Clock = std::chrono::steady_clock;
  const auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(seconds));
  while (Clock::now() < end) {
    if (Sim::get().shutting_down) return false;
    const auto left = end - Clock::now();
    std::this_thread::sleep_for(std::min<Clock::duration>(left, std::chrono::milliseconds(20)));
  }
  return !Sim::get().shutting_down;
}

std::optional<ze_graph_argument_precision_t> precision_of(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return ZE_GRAPH_ARGUMENT_PRECISION_FP32;
    case DType::kF16:
      return ZE_GRAPH_ARGUMENT_PRECISION_FP16;
    case DType::kBF16:
      return ZE_GRAPH_ARGUMENT_PRECISION_BF16;
    case DType::kI8:
      return ZE_GRAPH_ARGUMENT_PRECISION_INT8;
    case DType::kU8:
      return ZE_GRAPH_ARGUMENT_PRECISION_UINT8;
    case DType::kI32:
      return ZE_GRAPH_ARGUMENT_PRECISION_INT32;
    case DType::kI64:
      return ZE_GRAPH_ARGUMENT_PRECISION_INT64;
    case DType::kBool:
      return ZE_GRAPH_ARGUMENT_PRECISION_BOOLEAN;
    // The simulated NPU takes none of these (ir_supports refuses them per node).
    case DType::kF64:
    case DType::kI16:
    case DType::kU16:
    case DType::kU32:
    case DType::kU64:
    case DType::kUndefined:
      break;
  }
  return std::nullopt;
}

ze_graph_argument_layout_t layout_of(size_t rank) {
  switch (rank) {
    case 1:
      return ZE_GRAPH_ARGUMENT_LAYOUT_C;
    case 2:
      return ZE_GRAPH_ARGUMENT_LAYOUT_NC;
    case 3:
      return ZE_GRAPH_ARGUMENT_LAYOUT_CHW;
    case 4:
      return ZE_GRAPH_ARGUMENT_LAYOUT_NCHW;
    case 5:
      return ZE_GRAPH_ARGUMENT_LAYOUT_NCDHW;
    default:
      return ZE_GRAPH_ARGUMENT_LAYOUT_ANY;
  }
}

Result<GraphArg> make_arg(const Value& value, ze_graph_argument_type_t type) {
  if (!value.shape.is_static())
    return invalid_argument("argument '" + value.name + "' has a dynamic shape");
  if (value.shape.rank() > ZE_MAX_GRAPH_ARGUMENT_DIMENSIONS_SIZE)
    return unimplemented("argument '" + value.name + "' has rank " +
                         std::to_string(value.shape.rank()) + " (at most 5)");
  if (!precision_of(value.dtype))
    return unimplemented("argument '" + value.name + "' has an undefined element type");
  for (int64_t d : value.shape.dims)
    if (d < 0 || d > int64_t{UINT32_MAX})
      return invalid_argument("argument '" + value.name + "' has a dimension out of range");
  GraphArg arg;
  arg.name = value.name;
  arg.type = type;
  arg.dtype = value.dtype;
  arg.dims = value.shape.dims;
  arg.bytes = static_cast<size_t>(value.byte_size());
  return arg;
}

// The IR of an NGRAPH_LITE payload for this compiler (ze_result_t and a reason on failure).
ze_result_t unpack(std::span<const uint8_t> payload, ir::IrModel& model) {
  // The payload starts with the compiler version it was made for: u16 major, u16 minor.
  if (payload.size() < 4) return fail(ZE_RESULT_ERROR_INVALID_ARGUMENT, "payload too short");
  const uint16_t major = static_cast<uint16_t>(payload[0] | (payload[1] << 8));
  if (major != kCompilerMajor)
    return fail(ZE_RESULT_ERROR_UNSUPPORTED_VERSION, "payload for compiler major version " +
                                                         std::to_string(major) + ", this is " +
                                                         std::to_string(kCompilerMajor));
  auto unpacked = ir::unpack_ngraph_lite(payload);
  if (!unpacked.is_ok()) return fail(ZE_RESULT_ERROR_INVALID_ARGUMENT, unpacked.status().message());
  model = std::move(unpacked).value();
  return ZE_RESULT_SUCCESS;
}

// Whether the simulated compiler's op table takes `layer`: read_ir's layer types, but those the
// fault unsupported_layers removes, nothing in BF16. Gelu's tanh form counts as supported: the
// compiler takes it (as erf).
bool in_op_table(const ir::IrLayerInfo& layer) {
  const std::vector<std::string>& removed = Sim::get().faults.unsupported_layers;
  return layer.readable && !layer.bf16 &&
         std::find(removed.begin(), removed.end(), layer.type) == removed.end();
}

// The names of the layers the simulated compiler's op table takes.
Result<std::vector<std::string>> supported_layers(const ir::IrModel& model) {
  HSCHED_ASSIGN_OR_RETURN(const std::vector<ir::IrLayerInfo> layers, ir::ir_layers(model.xml));
  std::vector<std::string> names;
  for (const ir::IrLayerInfo& layer : layers) {
    if (in_op_table(layer)) names.push_back(layer.name);
  }
  return names;
}

// Builds the graph from an NGRAPH_LITE payload (ze_result_t and a reason on failure).
ze_result_t build(std::span<const uint8_t> payload, const char* build_flags, GraphCore& core) {
  const bool lenient = Sim::get().faults.lenient;
  ir::IrModel model;
  if (const ze_result_t unpacked = unpack(payload, model); unpacked != ZE_RESULT_SUCCESS)
    return unpacked;
  // Intel's NPU computes FP16 and INT8; its plugin converts bf16 models to f16 before compiling.
  auto layers = ir::ir_layers(model.xml);
  if (!layers.is_ok()) return fail(status_result(layers.status()), layers.status().message());
  for (const ir::IrLayerInfo& layer : *layers) {
    if (layer.bf16)
      return fail(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE,
                  "layer '" + layer.name + "' is BF16: the NPU computes FP16 and INT8");
    if (!in_op_table(layer) && layer.readable)
      return fail(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE,
                  "layer '" + layer.name + "': type " + layer.type + " is not supported");
    const std::vector<std::string>& failing = Sim::get().faults.failing_layers;
    if (std::find(failing.begin(), failing.end(), layer.type) != failing.end())
      return fail(ZE_RESULT_ERROR_UNKNOWN,
                  "layer '" + layer.name + "' (" + layer.type + "): lowering failed (fault)");
  }
  const std::span<const uint8_t> weights(model.weights.data(), model.weights.size());
  std::vector<std::string> producers;
  auto graph = ir::read_ir(model.xml, weights, &producers);
  if (!graph.is_ok()) return fail(status_result(graph.status()), graph.status().message());
  for (ValueId id : graph->inputs()) {
    auto arg = make_arg(graph->value(id), ZE_GRAPH_ARGUMENT_TYPE_INPUT);
    if (!arg.is_ok()) return fail(status_result(arg.status()), arg.status().message());
    core.args.push_back(std::move(arg).value());
  }
  for (size_t k = 0; k < graph->outputs().size(); ++k) {
    auto arg = make_arg(graph->value(graph->outputs()[k]), ZE_GRAPH_ARGUMENT_TYPE_OUTPUT);
    if (!arg.is_ok()) return fail(status_result(arg.status()), arg.status().message());
    // The compiler names an output after the layer feeding its Result (createPrimaryNameAttr).
    if (!lenient) arg->name = producers.at(k);
    core.args.push_back(std::move(arg).value());
  }
  if (build_flags != nullptr && build_flags[0] != '\0') {
    const std::string wrong = check_build_flags(build_flags, core.args);
    if (!wrong.empty()) return fail(ZE_RESULT_ERROR_INVALID_ARGUMENT, "build flags: " + wrong);
  }
  // The compiler converts Gelu-7 to its erf form whatever its approximation_mode.
  auto npu_graph = with_fp16_numerics(*graph, /*gelu_as_erf=*/!lenient);
  if (!npu_graph.is_ok())
    return fail(status_result(npu_graph.status()), npu_graph.status().message());
  auto program = cpu::CpuProgram::compile(*npu_graph, cpu::CpuOptions{});
  if (!program.is_ok()) return fail(status_result(program.status()), program.status().message());
  core.program = std::move(program).value();
  core.native_binary = make_native_blob(payload);
  return ZE_RESULT_SUCCESS;
}

// --- the extension's entry points --------------------------------------------------------------

ze_result_t ZE_APICALL graph_create(ze_context_handle_t context_handle, ze_device_handle_t device,
                                    const ze_graph_desc_t* desc, ze_graph_handle_t* graph) {
  if (!is_device(device)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (desc == nullptr || graph == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (desc->stype != ZE_STRUCTURE_TYPE_GRAPH_DESC_PROPERTIES)
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  if (desc->format != ZE_GRAPH_FORMAT_NATIVE && desc->format != ZE_GRAPH_FORMAT_NGRAPH_LITE)
    return ZE_RESULT_ERROR_INVALID_ENUMERATION;
  if (desc->pInput == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (desc->inputSize == 0 || desc->inputSize > kMaxInputBytes) return ZE_RESULT_ERROR_INVALID_SIZE;
  Sim& sim = Sim::get();
  if (sim.device_lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  Context* context = sim.find<Context>(context_handle);
  if (context == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;

  // Intel's driver before 1.10 refuses a graph without flags ("Invalid pBuildFlags pointer!").
  if ((desc->pBuildFlags == nullptr || desc->pBuildFlags[0] == '\0') && driver_before(1, 10))
    return fail(ZE_RESULT_ERROR_INVALID_NULL_POINTER,
                "Invalid pBuildFlags pointer! (driver releases before 1.10 need build flags)");
  {
    std::lock_guard lock(sim.mutex);
    if (!sim.faults.lenient && context->graphs >= kMaxGraphsPerContext) {
      sim.build_log = "the context holds " + std::to_string(kMaxGraphsPerContext) + " graphs";
      return ZE_RESULT_ERROR_UNINITIALIZED;  // what Intel's driver answers, misleading as it is
    }
  }
  if (sim.faults.build_delay_s > 0 && !sleep_unless_exiting(sim.faults.build_delay_s))
    return ZE_RESULT_ERROR_UNINITIALIZED;
  if (sim.faults.oom) return fail(ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY, "fault oom=1");

  std::span<const uint8_t> input(desc->pInput, desc->inputSize);
  if (desc->format == ZE_GRAPH_FORMAT_NATIVE) {
    const auto payload = parse_native_blob(input);
    if (!payload)
      return fail(ZE_RESULT_ERROR_INVALID_NATIVE_BINARY, "not a native binary of this driver");
    input = *payload;
  }
  auto core = std::make_shared<GraphCore>();
  const ze_result_t built = build(input, desc->pBuildFlags, *core);
  if (built != ZE_RESULT_SUCCESS) return built;

  auto created = std::make_unique<Graph>();
  created->core = std::move(core);
  created->bound.assign(created->core->args.size(), nullptr);
  std::lock_guard lock(sim.mutex);
  created->context = sim.find_locked<Context>(context_handle);
  if (created->context == nullptr)
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;  // destroyed meanwhile
  if (!sim.faults.lenient && created->context->graphs >= kMaxGraphsPerContext)
    return ZE_RESULT_ERROR_UNINITIALIZED;  // others were created meanwhile
  ++created->context->graphs;
  *graph = reinterpret_cast<ze_graph_handle_t>(sim.add_locked(std::move(created)));
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL graph_destroy(ze_graph_handle_t handle) {
  Sim& sim = Sim::get();
  std::unique_ptr<Object> taken;  // the program may outlive it in queued commands
  std::lock_guard lock(sim.mutex);
  Graph* graph = sim.find_locked<Graph>(handle);
  if (graph == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (sim.find_locked<Context>(graph->context) != nullptr) --graph->context->graphs;
  taken = sim.take_locked(handle);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL graph_get_properties(ze_graph_handle_t handle,
                                            ze_graph_properties_t* properties) {
  if (properties == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (properties->stype != ZE_STRUCTURE_TYPE_GRAPH_PROPERTIES)
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  Sim& sim = Sim::get();
  if (sim.device_lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  std::lock_guard lock(sim.mutex);
  const Graph* graph = sim.find_locked<Graph>(handle);
  if (graph == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  properties->numGraphArgs = static_cast<uint32_t>(graph->core->args.size());
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL graph_get_argument_properties(ze_graph_handle_t handle, uint32_t index,
                                                     ze_graph_argument_properties_t* properties) {
  if (properties == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (properties->stype != ZE_STRUCTURE_TYPE_GRAPH_ARGUMENT_PROPERTIES)
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  Sim& sim = Sim::get();
  if (sim.device_lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  std::lock_guard lock(sim.mutex);
  const Graph* graph = sim.find_locked<Graph>(handle);
  if (graph == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (index >= graph->core->args.size()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  const GraphArg& arg = graph->core->args[index];
  std::memset(properties->name, 0, sizeof(properties->name));
  std::strncpy(properties->name, arg.name.c_str(), sizeof(properties->name) - 1);
  properties->type = arg.type;
  for (size_t i = 0; i < ZE_MAX_GRAPH_ARGUMENT_DIMENSIONS_SIZE; ++i)
    properties->dims[i] = i < arg.dims.size() ? static_cast<uint32_t>(arg.dims[i]) : 1u;
  properties->networkPrecision = *precision_of(arg.dtype);
  properties->devicePrecision = properties->networkPrecision;  // host memory holds the IR's type
  properties->networkLayout = layout_of(arg.dims.size());
  properties->deviceLayout = properties->networkLayout;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL graph_set_argument_value(ze_graph_handle_t handle, uint32_t index,
                                                const void* value) {
  if (value == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  Sim& sim = Sim::get();
  if (sim.device_lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  std::lock_guard lock(sim.mutex);
  Graph* graph = sim.find_locked<Graph>(handle);
  if (graph == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (index >= graph->core->args.size()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  // The argument's bytes must lie inside one allocation of the graph's context.
  if (find_allocation_locked(*graph->context, value, graph->core->args[index].bytes) == nullptr)
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  graph->bound[index] = const_cast<void*>(value);
  return ZE_RESULT_SUCCESS;
}

// Records a graph command after the checks both appends share (mutex held).
ze_result_t append_graph_command(ze_command_list_handle_t list_handle, ze_graph_handle_t handle,
                                 Command command, uint32_t wait_count,
                                 const ze_event_handle_t* waits) {
  if (wait_count > 0 && waits == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  Sim& sim = Sim::get();
  if (sim.device_lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  std::lock_guard lock(sim.mutex);
  CommandList* list = sim.find_locked<CommandList>(list_handle);
  Graph* graph = sim.find_locked<Graph>(handle);
  if (list == nullptr || graph == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (list->closed || list->context != graph->context) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  const auto valid_event = [&](ze_event_handle_t e) {
    const Event* event = sim.find_locked<Event>(e);
    return event != nullptr && event->pool->context == list->context;
  };
  if (command.signal != nullptr && !valid_event(command.signal))
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  for (uint32_t i = 0; i < wait_count; ++i)
    if (!valid_event(waits[i])) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (command.type == CommandType::kGraphInitialize) {
    graph->initialize_appended = true;
  } else {
    if (!graph->initialize_appended) return ZE_RESULT_ERROR_UNINITIALIZED;
    for (void* bound : graph->bound)
      if (bound == nullptr) return ZE_RESULT_ERROR_INVALID_ARGUMENT;  // an argument not set
    command.args = graph->bound;
  }
  command.graph = graph->core;
  command.waits.assign(waits, waits + wait_count);
  list->commands.push_back(std::move(command));
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL append_graph_initialize(ze_command_list_handle_t list,
                                               ze_graph_handle_t graph, ze_event_handle_t signal,
                                               uint32_t wait_count, ze_event_handle_t* waits) {
  Command command;
  command.type = CommandType::kGraphInitialize;
  command.signal = signal;
  return append_graph_command(list, graph, std::move(command), wait_count, waits);
}

ze_result_t ZE_APICALL append_graph_execute(ze_command_list_handle_t list, ze_graph_handle_t graph,
                                            ze_graph_profiling_query_handle_t profiling_query,
                                            ze_event_handle_t signal, uint32_t wait_count,
                                            ze_event_handle_t* waits) {
  if (profiling_query != nullptr) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
  Command command;
  command.type = CommandType::kGraphExecute;
  command.signal = signal;
  return append_graph_command(list, graph, std::move(command), wait_count, waits);
}

ze_result_t ZE_APICALL graph_get_native_binary(ze_graph_handle_t handle, size_t* size,
                                               uint8_t* binary) {
  if (size == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  Sim& sim = Sim::get();
  if (sim.device_lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  std::lock_guard lock(sim.mutex);
  const Graph* graph = sim.find_locked<Graph>(handle);
  if (graph == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  const std::vector<uint8_t>& blob = graph->core->native_binary;
  if (binary == nullptr) {  // first call: the size
    *size = blob.size();
    return ZE_RESULT_SUCCESS;
  }
  if (*size < blob.size()) return ZE_RESULT_ERROR_INVALID_SIZE;
  std::memcpy(binary, blob.data(), blob.size());
  *size = blob.size();
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL device_get_graph_properties(ze_device_handle_t device,
                                                   ze_device_graph_properties_t* properties) {
  if (!is_device(device)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (properties == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (properties->stype != ZE_STRUCTURE_TYPE_DEVICE_GRAPH_PROPERTIES)
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  if (Sim::get().device_lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  properties->graphExtensionVersion = ZE_GRAPH_EXT_VERSION_1_4;
  properties->compilerVersion.major = kCompilerMajor;
  properties->compilerVersion.minor = kCompilerMinor;
  properties->graphFormatsSupported =
      static_cast<ze_graph_format_t>(ZE_GRAPH_FORMAT_NATIVE | ZE_GRAPH_FORMAT_NGRAPH_LITE);
  properties->maxOVOpsetVersionSupported = kMaxOpset;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL query_network_create(ze_context_handle_t context_handle,
                                            ze_device_handle_t device, const ze_graph_desc_t* desc,
                                            ze_graph_query_network_handle_t* query) {
  if (!is_device(device)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (desc == nullptr || query == nullptr || desc->pInput == nullptr)
    return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (desc->stype != ZE_STRUCTURE_TYPE_GRAPH_DESC_PROPERTIES)
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  if (desc->format != ZE_GRAPH_FORMAT_NGRAPH_LITE) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
  if (desc->inputSize == 0 || desc->inputSize > kMaxInputBytes) return ZE_RESULT_ERROR_INVALID_SIZE;
  Sim& sim = Sim::get();
  if (sim.device_lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  if (sim.find<Context>(context_handle) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  ir::IrModel model;
  if (const ze_result_t unpacked = unpack({desc->pInput, desc->inputSize}, model);
      unpacked != ZE_RESULT_SUCCESS)
    return unpacked;
  auto names = supported_layers(model);
  if (!names.is_ok()) return fail(status_result(names.status()), names.status().message());
  auto created = std::make_unique<QueryNetwork>();
  for (const std::string& name : *names) created->supported += "<" + name + ">";
  *query = reinterpret_cast<ze_graph_query_network_handle_t>(sim.add(std::move(created)));
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL query_network_destroy(ze_graph_query_network_handle_t handle) {
  Sim& sim = Sim::get();
  std::unique_ptr<Object> taken;
  std::lock_guard lock(sim.mutex);
  if (sim.find_locked<QueryNetwork>(handle) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  taken = sim.take_locked(handle);
  return ZE_RESULT_SUCCESS;
}

// The two-call pattern of the extension's strings: size with a null buffer (the NUL included),
// then the text into a buffer of at least that size.
template <typename Size>
ze_result_t copy_out(const std::string& text, Size* size, char* buffer) {
  if (size == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (buffer == nullptr) {
    *size = static_cast<Size>(text.size() + 1);
    return ZE_RESULT_SUCCESS;
  }
  if (*size < text.size() + 1) return ZE_RESULT_ERROR_INVALID_SIZE;
  std::memcpy(buffer, text.c_str(), text.size() + 1);
  *size = static_cast<Size>(text.size() + 1);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL query_network_get_supported_layers(ze_graph_query_network_handle_t handle,
                                                          size_t* size, char* layers) {
  Sim& sim = Sim::get();
  std::lock_guard lock(sim.mutex);
  const QueryNetwork* query = sim.find_locked<QueryNetwork>(handle);
  if (query == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return copy_out(query->supported, size, layers);
}

ze_result_t ZE_APICALL build_log_get_string(ze_graph_handle_t /*graph*/, uint32_t* size,
                                            char* log) {
  Sim& sim = Sim::get();
  std::lock_guard lock(sim.mutex);
  return copy_out(sim.build_log, size, log);
}

// Perturbs every output element well past any fp16 tolerance (fault corrupt_output=1).
void corrupt(const GraphArg& arg, void* memory) {
  const size_t n = arg.dtype == DType::kUndefined ? 0 : arg.bytes / dtype_size(arg.dtype);
  if (arg.dtype == DType::kF32) {
    auto* values = static_cast<float*>(memory);
    for (size_t i = 0; i < n; ++i) values[i] = values[i] + 0.5f + 0.5f * std::abs(values[i]);
  } else {
    auto* bytes = static_cast<uint8_t*>(memory);
    for (size_t i = 0; i < arg.bytes; ++i) bytes[i] = static_cast<uint8_t>(bytes[i] ^ 0x5a);
  }
}

}  // namespace

bool execute_graph(const GraphCore& graph, const std::vector<void*>& args) {
  Sim& sim = Sim::get();
  const int64_t execution = ++sim.graph_executions;
  if (sim.faults.device_lost_after && execution > *sim.faults.device_lost_after) return false;
  std::vector<Tensor> inputs;
  size_t i = 0;
  for (; i < graph.args.size() && graph.args[i].type == ZE_GRAPH_ARGUMENT_TYPE_INPUT; ++i)
    inputs.push_back(Tensor::borrow(graph.args[i].dtype, graph.args[i].dims, args[i]));
  auto outputs = graph.program->run(inputs);
  if (!outputs.is_ok() || outputs->size() != graph.args.size() - i) {
    std::cerr << "ze_hsched_sim: graph execution failed: "
              << (outputs.is_ok() ? "wrong output count" : outputs.status().message()) << "\n";
    return false;  // reported as a lost device, as a hung NPU would be
  }
  for (size_t o = 0; o < outputs->size(); ++o, ++i) {
    const Tensor& out = (*outputs)[o];
    const GraphArg& arg = graph.args[i];
    if (out.byte_size() != arg.bytes || out.dtype() != arg.dtype) {
      std::cerr << "ze_hsched_sim: graph execution failed: output '" << arg.name
                << "' has the wrong size or type\n";
      return false;
    }
    if (arg.bytes != 0) std::memcpy(args[i], out.raw(), arg.bytes);
    if (sim.faults.corrupt_output) corrupt(arg, args[i]);
  }
  return true;
}

const ze_graph_dditable_ext_t& graph_table() {
  static const ze_graph_dditable_ext_t table = {
      graph_create,
      graph_destroy,
      graph_get_properties,
      graph_get_argument_properties,
      graph_set_argument_value,
      append_graph_initialize,
      append_graph_execute,
      graph_get_native_binary,
      device_get_graph_properties,
      nullptr,  // 1.1 and 1.2: argument metadata, not simulated
      nullptr,
      nullptr,
      query_network_create,
      query_network_destroy,
      query_network_get_supported_layers,
      build_log_get_string,
  };
  return table;
}

}  // namespace hsched::zesim
