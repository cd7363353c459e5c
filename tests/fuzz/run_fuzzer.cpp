// libFuzzer target for the whole run path of `hsched run`: model bytes -> import -> schedule() for
// the CPU and hsched's simulated NPU (through the Level Zero loader) -> compile() -> one run on
// small deterministic inputs. Any bytes must end in outputs or a Status, never a crash, a
// sanitizer report, a leak or a hang. A model past the fuzz budget below is refused before it is
// planned (no hsched option bounds a run's work, so the budget lives here).
//
// The devices: the host CPU and the simulated NPU only (ZE_ENABLE_ALT_DRIVERS is set to the
// driver built beside this program unless already set); OpenCL (PoCL) is left out, too slow per
// input. The plan varies with the input's size, so that one corpus covers three shapes of plan:
// npu-offload; npu-offload split every 2 nodes with verification against the CPU; CPU only.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backends/cpu/device.h"
#include "graph/cost.h"
#include "graph/onnx_import.h"
#include "scheduler/runtime/compile.h"
#include "scheduler/planner/schedule.h"
#include "hsched/config.h"
#include "scheduler/config/discover.h"

namespace {

using namespace hsched;

// The fuzz budget: a model whose static shapes add up to more is refused (not a finding).
constexpr int64_t kMaxNodes = 256;
constexpr int64_t kMaxValueElements = int64_t{1} << 16;  // any one value, weights included
constexpr int64_t kMaxTotalElements = int64_t{1} << 18;  // all values together
constexpr int64_t kMaxFlop = int64_t{1} << 22;           // node_cost() summed over nodes

struct Setup {
  Target target;    // cpu0 and npu0
  Policy offload;   // configs/policies/npu-offload.yaml
  Policy cpu_only;  // every node on the CPU in fp32
};

const Setup& setup() {
  static const Setup* const kSetup = [] {
    auto* s = new Setup;
    s->target = config::discover_target(
        {[] { return std::vector<DeviceProfile>{cpu::cpu_profile(cpu::probe_cpu())}; },
         [] { return config::backends().find(DeviceApi::kLevelZero)->discover(); }});
    bool npu = false;
    for (const DeviceProfile& device : s->target.devices)
      npu |= device.api == DeviceApi::kLevelZero;
    Result<Policy> offload = resolve_policy("npu-offload");
    if (!npu || !offload.is_ok()) {
      std::fprintf(stderr, "run_fuzzer: set-up failed: %s\n",
                   npu ? offload.status().message().c_str()
                       : "no simulated NPU (ZE_ENABLE_ALT_DRIVERS, the loader)");
      std::abort();
    }
    s->offload = std::move(offload).value();
    s->cpu_only = devices_policy("cpu", Precision::kFp32);
    return s;
  }();
  return *kSetup;
}

// Dims of graph inputs that are not static: 1. nullopt when an input's rank is unknown.
std::optional<ImportOptions> fixed_input_shapes(const Graph& graph) {
  ImportOptions options;
  for (ValueId id : graph.inputs()) {
    const Value& value = graph.value(id);
    if (!value.shape.rank_known) return std::nullopt;
    if (value.shape.is_static()) continue;
    std::vector<int64_t> dims = value.shape.dims;
    for (int64_t& dim : dims) dim = dim < 0 ? 1 : dim;
    options.input_shapes[value.name] = dims;
  }
  return options;
}

bool within_budget(const Graph& graph) {
  if (static_cast<int64_t>(graph.nodes().size()) > kMaxNodes) return false;
  int64_t total = 0;
  for (const Value& value : graph.values()) {
    if (!value.shape.rank_known || !value.shape.is_static()) return false;
    const Result<int64_t> elements = checked_elements(value.shape.dims);
    if (!elements.is_ok() || *elements > kMaxValueElements) return false;
    total += *elements;
    if (total > kMaxTotalElements) return false;
  }
  int64_t flop = 0;
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    const NodeCost cost = node_cost(graph, static_cast<NodeId>(n));
    if (!cost.known || cost.flop < 0 || cost.flop > kMaxFlop) return false;
    flop += cost.flop;
    if (flop > kMaxFlop) return false;
  }
  return true;
}

// HSCHED_FUZZ_VERBOSE=1: one line per input on stderr saying where it stopped (checking that
// seeds get as far as a run).
void note(const char* stage, const std::string& detail = {}) {
  static const bool kVerbose = std::getenv("HSCHED_FUZZ_VERBOSE") != nullptr;
  if (kVerbose)
    std::fprintf(stderr, "run_fuzzer: %s%s%s\n", stage, detail.empty() ? "" : ": ", detail.c_str());
}

// A fixed pattern: floats in {-0.75, -0.5, ..., 0.75}, integers and bools 0 or 1 (valid indices
// for any non-empty axis), other types zero bytes.
std::vector<Tensor> pattern_inputs(const Graph& graph) {
  std::vector<Tensor> inputs;
  for (ValueId id : graph.inputs()) {
    const Value& value = graph.value(id);
    Tensor t(value.dtype, value.shape.dims);
    if (t.byte_size() > 0) {
      switch (value.dtype) {
        case DType::kF32: {
          int64_t i = 0;
          for (float& v : t.values<float>()) v = static_cast<float>(i++ % 7 - 3) * 0.25f;
          break;
        }
        case DType::kI64: {
          int64_t i = 0;
          for (int64_t& v : t.values<int64_t>()) v = i++ % 2;
          break;
        }
        case DType::kI32: {
          int32_t i = 0;
          for (int32_t& v : t.values<int32_t>()) v = i++ % 2;
          break;
        }
        case DType::kBool: {
          int i = 0;
          for (uint8_t& v : t.values<uint8_t>()) v = static_cast<uint8_t>(i++ % 2);
          break;
        }
        default:
          std::memset(t.raw(), 0, t.byte_size());
          break;
      }
    }
    inputs.push_back(std::move(t));
  }
  return inputs;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  // Before anything initializes the loader: the simulated NPU, never a real one.
  ::setenv("ZE_ENABLE_ALT_DRIVERS", HSCHED_ZE_SIM_PATH, 0);
  setup();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Setup& s = setup();
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  // An empty base_dir refuses external data, so the fuzzer never reads files beside it.
  Result<Graph> graph = import_onnx_bytes(bytes, {}, "fuzz-input", {});
  if (!graph.is_ok()) return note("refused by the importer", graph.status().message()), 0;
  if (const std::optional<ImportOptions> options = fixed_input_shapes(*graph); !options) {
    return note("an input of unknown rank"), 0;
  } else if (!options->input_shapes.empty()) {
    graph = import_onnx_bytes(bytes, *options, "fuzz-input", {});
    if (!graph.is_ok()) return note("refused with fixed input dims", graph.status().message()), 0;
  }
  if (!within_budget(*graph)) return note("past the fuzz budget"), 0;

  const size_t variant = size % 3;
  Policy policy = variant == 2 ? s.cpu_only : s.offload;
  ExecutorOptions options;
  options.cache_dir = "/dev/null/hsched-fuzz";  // uncreatable: the native-graph cache is off
  options.compile_timeout_ms = 10000;
  options.cpu_threads = 1;
  if (variant == 1) {
    policy.split_every = 2;
    options.verify = true;
  }
  Result<Plan> plan = schedule(*graph, s.target, policy);
  if (!plan.is_ok()) return note("refused by schedule()", plan.status().message()), 0;
  auto executable = compile(*graph, *plan, options);
  if (!executable.is_ok()) return note("refused by compile()", executable.status().message()), 0;
  const auto outputs = (*executable)->run(pattern_inputs(*graph));
  if (!outputs.is_ok()) return note("the run failed", outputs.status().message()), 0;
  // The outputs are what the plan promised: a difference means the kernels and shape inference
  // disagree about a buffer's size.
  bool promised = outputs->size() == graph->outputs().size();
  for (size_t k = 0; promised && k < outputs->size(); ++k) {
    const Value& value = graph->value(graph->outputs()[k]);
    promised = (*outputs)[k].dtype() == value.dtype && (*outputs)[k].dims() == value.shape.dims;
  }
  if (!promised) {
    std::fprintf(stderr,
                 "run_fuzzer: the outputs differ from the graph's outputs in number, "
                 "dtype or shape\n");
    std::abort();
  }
  std::string devices;
  for (const Partition& partition : (*executable)->plan().partitions) {
    devices += (devices.empty() ? "" : ",") + partition.device;
  }
  note("ran", "variant " + std::to_string(variant) + ", partitions on " + devices);
  return 0;
}
