// Helpers of the simulated driver's tests (sim_test.cpp, sim_fault_test.cpp): the driver through
// the loader with its validation layer, a small graph and its CPU reference, a session (driver,
// device, context, queue, graph extension) and one graph run, and running a scenario in a fresh
// process with faults.
#pragma once

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <level_zero/ze_api.h>

#include "backends/cpu/program.h"
#include "backends/level_zero/ir/ir.h"
#include "backends/level_zero/sim/faults.h"
#include "backends/level_zero/sim/native_blob.h"
#include "backends/level_zero/sim/npu_numerics.h"
#include "backends/level_zero/ze_graph_ext.h"
#include "core/float16.h"
#include "graph/graph.h"

namespace hsched::zesim {

// --- helpers ----------------------------------------------------------------------------------

inline void use_simulated_driver() {
  setenv("ZE_ENABLE_ALT_DRIVERS", HSCHED_ZE_SIM_PATH, 0);
  setenv("ZE_ENABLE_VALIDATION_LAYER", "1", 0);
  setenv("ZE_ENABLE_PARAMETER_VALIDATION", "1", 0);
}

inline std::string failed(const char* call, ze_result_t result) {
  std::ostringstream s;
  s << call << " returned 0x" << std::hex << static_cast<uint32_t>(result);
  return s.str();
}

// In functions returning std::string ("" = fine): returns the failing call.
#define ZE_CHECK(call)                                                                 \
  do {                                                                                 \
    const ze_result_t ze_check_result_ = (call);                                       \
    if (ze_check_result_ != ZE_RESULT_SUCCESS) return failed(#call, ze_check_result_); \
  } while (0)
#define ZE_EXPECT_RESULT(expected, call)                                        \
  do {                                                                          \
    const ze_result_t ze_check_result_ = (call);                                \
    if (ze_check_result_ != (expected)) return failed(#call, ze_check_result_); \
  } while (0)
#define CHECK_THAT(condition, message)             \
  do {                                             \
    if (!(condition)) return std::string(message); \
  } while (0)

// float -> nearest fp16 -> float.
inline float round_fp16(float x) { return half_to_float(float_to_half(x)); }

// The small graph the tests run: y = Relu(Conv(x, W, B) + s), z = GlobalAveragePool(y).
// Arguments: x [1,3,8,8], s [1,4,1,1] (inputs), y [1,4,8,8], z [1,4,1,1] (outputs).
inline Graph test_graph() {
  Graph g;
  g.name = "sim_test";
  g.opset = 17;
  const ValueId x = g.add_value("x", DType::kF32, Shape({1, 3, 8, 8}));
  const ValueId s = g.add_value("s", DType::kF32, Shape({1, 4, 1, 1}));
  g.add_input(x);
  g.add_input(s);
  std::vector<float> w(4 * 3 * 3 * 3), b(4);
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = 0.1f * std::sin(1.3f * static_cast<float>(i)) + 0.0123f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = 0.05f * static_cast<float>(i) - 0.01f;
  const ValueId wv = g.add_constant("W", Tensor::from_vector(DType::kF32, {4, 3, 3, 3}, w));
  const ValueId bv = g.add_constant("B", Tensor::from_vector(DType::kF32, {4}, b));
  const ValueId conv = g.add_value("conv", DType::kF32, Shape({1, 4, 8, 8}));
  const ValueId sum = g.add_value("sum", DType::kF32, Shape({1, 4, 8, 8}));
  const ValueId y = g.add_value("y", DType::kF32, Shape({1, 4, 8, 8}));
  const ValueId z = g.add_value("z", DType::kF32, Shape({1, 4, 1, 1}));
  Node c;
  c.name = "conv";
  c.op_type = "Conv";
  c.inputs = {x, wv, bv};
  c.outputs = {conv};
  c.attributes["kernel_shape"] = std::vector<int64_t>{3, 3};
  c.attributes["pads"] = std::vector<int64_t>{1, 1, 1, 1};
  g.add_node(std::move(c));
  Node add{"add", "Add", "", {conv, s}, {sum}, {}};
  g.add_node(std::move(add));
  Node relu{"relu", "Relu", "", {sum}, {y}, {}};
  g.add_node(std::move(relu));
  Node pool{"pool", "GlobalAveragePool", "", {y}, {z}, {}};
  g.add_node(std::move(pool));
  g.add_output(y);
  g.add_output(z);
  return g;
}

// Inputs whose values fp16 cannot hold exactly, so that NPU numerics show.
inline std::vector<std::vector<float>> test_inputs() {
  std::vector<float> x(3 * 8 * 8), s(4);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * static_cast<float>(i)) + 1e-4f;
  for (size_t i = 0; i < s.size(); ++i) s[i] = 0.3333f * static_cast<float>(i) - 0.5f;
  return {x, s};
}

inline std::vector<uint8_t> test_payload() {
  auto model = ir::write_ir(test_graph(), Precision::kFp16);
  EXPECT_TRUE(model.is_ok()) << model.status().message();
  if (!model.is_ok()) return {};
  return ir::pack_ngraph_lite(*model, 1, 0);
}

// The graph's outputs on the CPU backend in fp32.
inline std::vector<std::vector<float>> cpu_reference() {
  auto program = cpu::CpuProgram::compile(test_graph(), cpu::CpuOptions{});
  EXPECT_TRUE(program.is_ok()) << program.status().message();
  if (!program.is_ok()) return {};
  const auto in = test_inputs();
  auto out = (*program)->run({Tensor::from_vector(DType::kF32, {1, 3, 8, 8}, in[0]),
                              Tensor::from_vector(DType::kF32, {1, 4, 1, 1}, in[1])});
  EXPECT_TRUE(out.is_ok()) << out.status().message();
  if (!out.is_ok()) return {};
  std::vector<std::vector<float>> result;
  for (const Tensor& t : *out)
    result.emplace_back(t.values<float>().begin(), t.values<float>().end());
  return result;
}

// Worst |a-b| - (atol + rtol*|b|) over all elements (<= 0: within tolerance).
inline double worst_excess(const std::vector<float>& a, const std::vector<float>& b, double atol,
                    double rtol) {
  double worst = a.size() == b.size() ? -INFINITY : INFINITY;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    const double diff = std::abs(static_cast<double>(a[i]) - b[i]);
    worst = std::max(worst, std::isnan(diff) ? INFINITY : diff - (atol + rtol * std::abs(b[i])));
  }
  return worst;
}

// The simulated driver through the loader: driver, device, context, queue, graph extension.
class Session {
 public:
  Session() = default;
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session() {
    if (queue != nullptr) zeCommandQueueDestroy(queue);
    if (context != nullptr) zeContextDestroy(context);
  }

  std::string open() {
    use_simulated_driver();
    ZE_CHECK(zeInit(0));
    uint32_t count = 1;
    ZE_CHECK(zeDriverGet(&count, &driver));
    count = 1;
    ZE_CHECK(zeDeviceGet(driver, &count, &device));
    ze_context_desc_t context_desc{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
    ZE_CHECK(zeContextCreate(driver, &context_desc, &context));
    ze_command_queue_desc_t queue_desc{
        ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, nullptr, 0, 0, 0, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
        ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ZE_CHECK(zeCommandQueueCreate(context, device, &queue_desc, &queue));
    void* table = nullptr;
    ZE_CHECK(zeDriverGetExtensionFunctionAddress(driver, ZE_GRAPH_EXT_NAME, &table));
    graph = static_cast<const ze_graph_dditable_ext_t*>(table);
    CHECK_THAT(graph != nullptr, "no graph extension table");
    return "";
  }

  ze_result_t create_graph(ze_graph_format_t format, const std::vector<uint8_t>& input,
                           ze_graph_handle_t* handle, const char* build_flags = nullptr) const {
    ze_graph_desc_t desc{ZE_STRUCTURE_TYPE_GRAPH_DESC_PROPERTIES,
                         nullptr,
                         format,
                         input.size(),
                         input.data(),
                         build_flags};
    return graph->pfnCreate(context, device, &desc, handle);
  }

  ze_driver_handle_t driver = nullptr;
  ze_device_handle_t device = nullptr;
  ze_context_handle_t context = nullptr;
  ze_command_queue_handle_t queue = nullptr;
  const ze_graph_dditable_ext_t* graph = nullptr;
};

// One graph with host memory bound to its arguments, an initialize list run once, and an execute
// list that signals an event, submitted with a fence.
class GraphRun {
 public:
  explicit GraphRun(Session& session) : s_(session) {}
  GraphRun(const GraphRun&) = delete;
  GraphRun& operator=(const GraphRun&) = delete;
  ~GraphRun() {
    if (list_ != nullptr) zeCommandListDestroy(list_);
    if (fence_ != nullptr) zeFenceDestroy(fence_);
    if (event_ != nullptr) zeEventDestroy(event_);
    if (pool_ != nullptr) zeEventPoolDestroy(pool_);
    if (graph_ != nullptr) s_.graph->pfnDestroy(graph_);
    for (void* memory : memory_) zeMemFree(s_.context, memory);
  }

  std::string create(ze_graph_format_t format, const std::vector<uint8_t>& input) {
    ZE_CHECK(s_.create_graph(format, input, &graph_));
    return prepare();
  }

  // Copies `inputs` in, executes once and waits; `outputs` receives every output argument.
  std::string run(const std::vector<std::vector<float>>& inputs,
                  std::vector<std::vector<float>>* outputs,
                  ze_result_t expected_sync = ZE_RESULT_SUCCESS) {
    size_t next_input = 0;
    for (size_t i = 0; i < args_.size(); ++i) {
      if (args_[i].type != ZE_GRAPH_ARGUMENT_TYPE_INPUT) continue;
      CHECK_THAT(next_input < inputs.size() && inputs[next_input].size() * 4 == bytes_[i],
                 "input " + std::to_string(i) + " has the wrong size");
      std::memcpy(memory_[i], inputs[next_input++].data(), bytes_[i]);
    }
    ZE_CHECK(zeFenceReset(fence_));
    ZE_CHECK(zeEventHostReset(event_));
    ZE_CHECK(zeCommandQueueExecuteCommandLists(s_.queue, 1, &list_, fence_));
    ZE_EXPECT_RESULT(expected_sync, zeFenceHostSynchronize(fence_, UINT64_MAX));
    if (expected_sync != ZE_RESULT_SUCCESS) return "";
    ZE_CHECK(zeEventQueryStatus(event_));
    outputs->clear();
    for (size_t i = 0; i < args_.size(); ++i) {
      if (args_[i].type != ZE_GRAPH_ARGUMENT_TYPE_OUTPUT) continue;
      const auto* values = static_cast<const float*>(memory_[i]);
      outputs->emplace_back(values, values + bytes_[i] / 4);
    }
    return "";
  }

  ze_graph_handle_t graph() const { return graph_; }
  const std::vector<ze_graph_argument_properties_t>& args() const { return args_; }

 private:
  std::string prepare() {
    ze_graph_properties_t properties{ZE_STRUCTURE_TYPE_GRAPH_PROPERTIES, nullptr, 0};
    ZE_CHECK(s_.graph->pfnGetProperties(graph_, &properties));
    for (uint32_t i = 0; i < properties.numGraphArgs; ++i) {
      ze_graph_argument_properties_t arg{};
      arg.stype = ZE_STRUCTURE_TYPE_GRAPH_ARGUMENT_PROPERTIES;
      ZE_CHECK(s_.graph->pfnGetArgumentProperties(graph_, i, &arg));
      CHECK_THAT(arg.networkPrecision == ZE_GRAPH_ARGUMENT_PRECISION_FP32, "argument not f32");
      size_t bytes = 4;
      for (uint32_t d : arg.dims) bytes *= d;
      ze_host_mem_alloc_desc_t host_desc{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
      void* memory = nullptr;
      ZE_CHECK(zeMemAllocHost(s_.context, &host_desc, bytes, 64, &memory));
      memory_.push_back(memory);
      ZE_CHECK(s_.graph->pfnSetArgumentValue(graph_, i, memory));
      args_.push_back(arg);
      bytes_.push_back(bytes);
    }
    ze_event_pool_desc_t pool_desc{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr,
                                   ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 1};
    ZE_CHECK(zeEventPoolCreate(s_.context, &pool_desc, 1, &s_.device, &pool_));
    ze_event_desc_t event_desc{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, 0, ZE_EVENT_SCOPE_FLAG_HOST,
                               ZE_EVENT_SCOPE_FLAG_HOST};
    ZE_CHECK(zeEventCreate(pool_, &event_desc, &event_));
    ze_fence_desc_t fence_desc{ZE_STRUCTURE_TYPE_FENCE_DESC, nullptr, 0};
    ZE_CHECK(zeFenceCreate(s_.queue, &fence_desc, &fence_));
    ze_command_list_desc_t list_desc{ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, nullptr, 0, 0};
    // Initialize: its own list, run once and waited for.
    ZE_CHECK(zeCommandListCreate(s_.context, s_.device, &list_desc, &list_));
    ZE_CHECK(s_.graph->pfnAppendGraphInitialize(list_, graph_, nullptr, 0, nullptr));
    ZE_CHECK(zeCommandListClose(list_));
    ZE_CHECK(zeCommandQueueExecuteCommandLists(s_.queue, 1, &list_, nullptr));
    ZE_CHECK(zeCommandQueueSynchronize(s_.queue, UINT64_MAX));
    ZE_CHECK(zeCommandListReset(list_));
    ZE_CHECK(s_.graph->pfnAppendGraphExecute(list_, graph_, nullptr, event_, 0, nullptr));
    ZE_CHECK(zeCommandListClose(list_));
    return "";
  }

  Session& s_;
  ze_graph_handle_t graph_ = nullptr;
  std::vector<ze_graph_argument_properties_t> args_;
  std::vector<size_t> bytes_;
  std::vector<void*> memory_;
  ze_event_pool_handle_t pool_ = nullptr;
  ze_event_handle_t event_ = nullptr;
  ze_fence_handle_t fence_ = nullptr;
  ze_command_list_handle_t list_ = nullptr;
};

// Runs `scenario` in a fresh process with HSCHED_ZE_SIM_FAULTS=`faults` (the driver reads it at
// its first zeInit); the process exits 0 when the scenario returned "".
template <typename Scenario>
[[noreturn]] void run_with_faults(const char* faults, Scenario scenario) {
  setenv(kFaultsEnv, faults, 1);
  const std::string problem = scenario();
  if (!problem.empty()) std::cerr << "scenario failed: " << problem << std::endl;
  std::_Exit(problem.empty() ? 0 : 1);  // no teardown: the process ends here, as checked
}

class SimFaultTest : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }  // a fresh exec
};

}  // namespace hsched::zesim
