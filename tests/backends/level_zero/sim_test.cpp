// The simulated NPU driver (libze_hsched_sim.so) through the real Level Zero loader with its
// validation layer (ZE_ENABLE_ALT_DRIVERS, ZE_ENABLE_VALIDATION_LAYER=1,
// ZE_ENABLE_PARAMETER_VALIDATION=1, set by CTest and here when absent): the device it reports, a
// graph created from IR and run through command lists, events and a fence with NPU numerics, the
// native binary round trip, plus the driver's own pieces (fault parsing, native blob, the fp16
// rewrite) as units; the faults themselves: sim_fault_test.cpp. Every Level Zero call must succeed unless the test expects a
// given error, so a call the validation layer refuses fails the test.
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "backends/level_zero/sim/faults.h"
#include "backends/level_zero/sim/native_blob.h"
#include "backends/level_zero/sim/npu_numerics.h"
#include "sim_test_util.h"

namespace hsched::zesim {
namespace {

// --- units: faults, native blob, fp16 rewrite ---------------------------------------------------

TEST(SimFaults, ParsesEveryKey) {
  std::ostringstream errors;
  const Faults f =
      parse_faults("build_delay_s=1.5, device_lost_after=3,oom=1,corrupt_output=1", errors);
  EXPECT_EQ(errors.str(), "");
  EXPECT_DOUBLE_EQ(f.build_delay_s, 1.5);
  ASSERT_TRUE(f.device_lost_after.has_value());
  EXPECT_EQ(*f.device_lost_after, 3);
  EXPECT_TRUE(f.oom);
  EXPECT_TRUE(f.corrupt_output);
  const Faults none = parse_faults("", errors);
  EXPECT_EQ(none.build_delay_s, 0);
  EXPECT_FALSE(none.device_lost_after.has_value());
  EXPECT_FALSE(none.oom || none.corrupt_output);
}

TEST(SimFaults, BadValuesAreIgnoredWithOneLineNamingTheKey) {
  std::ostringstream errors;
  const Faults f = parse_faults(
      "build_delay_s=-1,device_lost_after=two,oom=yes,corrupt_output=1,speed=9,build_delay_s=nan",
      errors);
  EXPECT_EQ(f.build_delay_s, 0);
  EXPECT_FALSE(f.device_lost_after.has_value());
  EXPECT_FALSE(f.oom);
  EXPECT_TRUE(f.corrupt_output);  // the good key still applies
  std::vector<std::string> lines;
  std::istringstream in(errors.str());
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 5u) << errors.str();
  EXPECT_NE(lines[0].find("key 'build_delay_s'"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find("key 'device_lost_after'"), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find("key 'oom'"), std::string::npos) << lines[2];
  EXPECT_NE(lines[3].find("key 'speed'"), std::string::npos) << lines[3];
  EXPECT_NE(lines[4].find("key 'build_delay_s'"), std::string::npos) << lines[4];
}

TEST(SimNativeBlob, RoundTripsAndRejectsDamage) {
  const std::vector<uint8_t> payload = {1, 2, 3, 4, 5, 250};
  const std::vector<uint8_t> blob = make_native_blob(payload);
  ASSERT_EQ(blob.size(), kNativeBlobHeaderBytes + payload.size());
  EXPECT_EQ(std::string(blob.begin(), blob.begin() + 12), "HSCHEDSIMNPU");
  const auto parsed = parse_native_blob(blob);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(std::vector<uint8_t>(parsed->begin(), parsed->end()), payload);
  for (size_t i = 0; i < blob.size(); ++i) {  // any flipped byte is caught
    std::vector<uint8_t> damaged = blob;
    damaged[i] ^= 0x10;
    EXPECT_FALSE(parse_native_blob(damaged).has_value()) << "byte " << i;
  }
  std::vector<uint8_t> truncated(blob.begin(), blob.end() - 1);
  EXPECT_FALSE(parse_native_blob(truncated).has_value());
  EXPECT_FALSE(parse_native_blob(std::span<const uint8_t>()).has_value());
}

TEST(SimNpuNumerics, RoundsInputsWeightsAndEveryNodeOutputToFp16) {
  // out = (a * w) + a, w a constant: each value is rounded, so the result is
  // h(h(h(a) * h(w)) + h(a)) with h = round to fp16.
  Graph g;
  g.opset = 17;
  const ValueId a = g.add_value("a", DType::kF32, Shape({4}));
  g.add_input(a);
  const std::vector<float> w = {0.1f, 3.14159f, -2.71828f, 1000.3f};
  const ValueId wv = g.add_constant("w", Tensor::from_vector(DType::kF32, {4}, w));
  const ValueId m = g.add_value("m", DType::kF32, Shape({4}));
  const ValueId out = g.add_value("out", DType::kF32, Shape({4}));
  g.add_node(Node{"mul", "Mul", "", {a, wv}, {m}, {}});
  g.add_node(Node{"add", "Add", "", {m, a}, {out}, {}});
  g.add_output(out);

  auto rewritten = with_fp16_numerics(g);
  ASSERT_TRUE(rewritten.is_ok()) << rewritten.status().message();
  ASSERT_EQ(rewritten->inputs().size(), 1u);
  ASSERT_EQ(rewritten->outputs().size(), 1u);
  EXPECT_EQ(rewritten->value(rewritten->inputs()[0]).name, "a");
  EXPECT_EQ(rewritten->value(rewritten->outputs()[0]).name, "out");
  auto program = cpu::CpuProgram::compile(*rewritten, cpu::CpuOptions{});
  ASSERT_TRUE(program.is_ok()) << program.status().message();
  const std::vector<float> in = {0.3f, 1.0001f, -7.77f, 12.345f};
  auto result = (*program)->run({Tensor::from_vector(DType::kF32, {4}, in)});
  ASSERT_TRUE(result.is_ok()) << result.status().message();
  const auto values = (*result)[0].values<float>();
  for (size_t i = 0; i < in.size(); ++i) {
    const float h_a = round_fp16(in[i]);
    const float expected = round_fp16(round_fp16(h_a * round_fp16(w[i])) + h_a);
    EXPECT_EQ(values[i], expected) << "element " << i;
  }
  EXPECT_NE(values[1], in[1] * w[1] + in[1]);  // not the fp32 result
}

TEST(SimNpuNumerics, IntegerLayersAndQuantizationConstantsStayExact) {
  // x -> Q -> DQ -> Add(DQ of a u8 constant) -> Q -> DQ -> Erf -> Q -> DQ -> out: the Add between
  // DequantizeLinear and QuantizeLinear is an int8 layer (its sum and the scales exact); Erf is
  // a float layer, reading its dequantized input rounded to fp16 and rounded after.
  Graph g;
  g.opset = 17;
  const Shape shape({8});
  const auto scale = [&](const std::string& name, float v) {
    return g.add_constant(name, Tensor::from_vector(DType::kF32, {}, std::vector<float>{v}));
  };
  const auto zero = [&](const std::string& name, uint8_t v) {
    return g.add_constant(name, Tensor::from_vector(DType::kU8, {}, std::vector<uint8_t>{v}));
  };
  const auto value = [&](const std::string& name, DType dtype) {
    return g.add_value(name, dtype, shape);
  };
  const ValueId x = value("x", DType::kF32);
  g.add_input(x);
  const ValueId sx = scale("sx", 0.0123457f), zx = zero("zx", 128);
  const ValueId sy = scale("sy", 0.0234567f), zy = zero("zy", 100);
  const ValueId sz = scale("sz", 1.0f / 255), zz = zero("zz", 128);
  const ValueId c = g.add_constant(
      "c", Tensor::from_vector(DType::kU8, {8},
                               std::vector<uint8_t>{1, 50, 99, 128, 130, 200, 240, 255}));
  const ValueId xq = value("xq", DType::kU8), xd = value("xd", DType::kF32);
  const ValueId cd = value("cd", DType::kF32), sum = value("sum", DType::kF32);
  const ValueId yq = value("yq", DType::kU8), yd = value("yd", DType::kF32);
  const ValueId e = value("e", DType::kF32), eq = value("eq", DType::kU8);
  const ValueId out = value("out", DType::kF32);
  g.add_node(Node{"qx", "QuantizeLinear", "", {x, sx, zx}, {xq}, {}});
  g.add_node(Node{"dx", "DequantizeLinear", "", {xq, sx, zx}, {xd}, {}});
  g.add_node(Node{"dc", "DequantizeLinear", "", {c, sy, zy}, {cd}, {}});
  g.add_node(Node{"add", "Add", "", {xd, cd}, {sum}, {}});
  g.add_node(Node{"qy", "QuantizeLinear", "", {sum, sy, zy}, {yq}, {}});
  g.add_node(Node{"dy", "DequantizeLinear", "", {yq, sy, zy}, {yd}, {}});
  g.add_node(Node{"erf", "Erf", "", {yd}, {e}, {}});
  g.add_node(Node{"qe", "QuantizeLinear", "", {e, sz, zz}, {eq}, {}});
  g.add_node(Node{"de", "DequantizeLinear", "", {eq, sz, zz}, {out}, {}});
  g.add_output(out);

  auto rewritten = with_fp16_numerics(g);
  ASSERT_TRUE(rewritten.is_ok()) << rewritten.status().message();
  const Graph& r = *rewritten;
  const auto producer = [&](const std::string& name) -> const Node& {
    return r.node(r.value(*r.find_value(name)).producer);
  };
  // The scales keep their f32 values; the sum goes from the Add straight to its QuantizeLinear.
  EXPECT_EQ(r.value(*r.find_value("sx")).constant->values<float>()[0], 0.0123457f);
  EXPECT_EQ(producer("sum").op_type, "Add");
  EXPECT_EQ(r.value(producer("yq").inputs[0]).name, "sum");
  for (ValueId in : producer("sum").inputs) {
    EXPECT_EQ(r.node(r.value(in).producer).op_type, "DequantizeLinear") << r.value(in).name;
  }
  // Erf's output is rounded to fp16 (Erf -> Cast -> Cast), and so is what it reads; the output
  // the host reads is fp16 too.
  const Node& to_f32 = producer("e");
  const Node& to_f16 = r.node(r.value(to_f32.inputs[0]).producer);
  const Node& erf = r.node(r.value(to_f16.inputs[0]).producer);
  EXPECT_EQ(to_f32.op_type, "Cast");
  EXPECT_EQ(to_f16.op_type, "Cast");
  ASSERT_EQ(erf.op_type, "Erf");
  EXPECT_EQ(r.node(r.value(erf.inputs[0]).producer).op_type, "Cast");
  EXPECT_EQ(producer("out").op_type, "Cast");
  auto program = cpu::CpuProgram::compile(r, cpu::CpuOptions{});
  ASSERT_TRUE(program.is_ok()) << program.status().message();
  const std::vector<float> in = {-1.5f, -0.4f, -0.01f, 0.0f, 0.02f, 0.33f, 0.9f, 1.4f};
  auto result = (*program)->run({Tensor::from_vector(DType::kF32, {8}, in)});
  ASSERT_TRUE(result.is_ok()) << result.status().message();
  for (float v : (*result)[0].values<float>()) EXPECT_EQ(v, round_fp16(v));
}

// --- through the loader -----------------------------------------------------------------------

TEST(SimDriver, OneVpuDeviceWithTheNpu3720Profile) {
  Session s;
  ASSERT_EQ(s.open(), "");
  uint32_t drivers = 0;
  ASSERT_EQ(zeDriverGet(&drivers, nullptr), ZE_RESULT_SUCCESS);
  EXPECT_EQ(drivers, 1u);
  uint32_t devices = 0;
  ASSERT_EQ(zeDeviceGet(s.driver, &devices, nullptr), ZE_RESULT_SUCCESS);
  EXPECT_EQ(devices, 1u);

  ze_device_properties_t p{};
  p.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
  ASSERT_EQ(zeDeviceGetProperties(s.device, &p), ZE_RESULT_SUCCESS);
  EXPECT_EQ(p.type, ZE_DEVICE_TYPE_VPU);
  EXPECT_EQ(p.vendorId, 0x8086u);
  EXPECT_EQ(p.deviceId, 0x7D1Du);
  EXPECT_STREQ(p.name, "Intel(R) AI Boost NPU 3720 (simulated by hsched)");
  EXPECT_TRUE(p.flags & ZE_DEVICE_PROPERTY_FLAG_INTEGRATED);
  EXPECT_EQ(p.coreClockRate, 1400u);
  EXPECT_EQ(p.numSlices, 2u);

  ze_device_compute_properties_t compute{};
  compute.stype = ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES;
  EXPECT_EQ(zeDeviceGetComputeProperties(s.device, &compute), ZE_RESULT_SUCCESS);
  ze_device_module_properties_t module{};
  module.stype = ZE_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES;
  ASSERT_EQ(zeDeviceGetModuleProperties(s.device, &module), ZE_RESULT_SUCCESS);
  EXPECT_TRUE(module.flags & ZE_DEVICE_MODULE_FLAG_FP16);
  EXPECT_TRUE(module.flags & ZE_DEVICE_MODULE_FLAG_DP4A);
  uint32_t memories = 0;
  ASSERT_EQ(zeDeviceGetMemoryProperties(s.device, &memories, nullptr), ZE_RESULT_SUCCESS);
  ASSERT_EQ(memories, 1u);
  ze_device_memory_properties_t memory{};
  memory.stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES;
  ASSERT_EQ(zeDeviceGetMemoryProperties(s.device, &memories, &memory), ZE_RESULT_SUCCESS);
  EXPECT_EQ(memory.totalSize, 8ull << 30);
  uint32_t groups = 0;
  ASSERT_EQ(zeDeviceGetCommandQueueGroupProperties(s.device, &groups, nullptr), ZE_RESULT_SUCCESS);
  EXPECT_EQ(groups, 1u);
  uint32_t subdevices = 5;
  ASSERT_EQ(zeDeviceGetSubDevices(s.device, &subdevices, nullptr), ZE_RESULT_SUCCESS);
  EXPECT_EQ(subdevices, 0u);

  uint32_t extensions = 0;
  ASSERT_EQ(zeDriverGetExtensionProperties(s.driver, &extensions, nullptr), ZE_RESULT_SUCCESS);
  ASSERT_EQ(extensions, 1u);
  ze_driver_extension_properties_t extension{};
  ASSERT_EQ(zeDriverGetExtensionProperties(s.driver, &extensions, &extension), ZE_RESULT_SUCCESS);
  EXPECT_STREQ(extension.name, "ZE_extension_graph");
  EXPECT_EQ(extension.version, static_cast<uint32_t>(ZE_GRAPH_EXT_VERSION_1_4));
  void* other = nullptr;
  EXPECT_EQ(zeDriverGetExtensionFunctionAddress(s.driver, "ZE_extension_other", &other),
            ZE_RESULT_ERROR_INVALID_ARGUMENT);

  ze_device_graph_properties_t graph_properties{};
  graph_properties.stype = ZE_STRUCTURE_TYPE_DEVICE_GRAPH_PROPERTIES;
  ASSERT_EQ(s.graph->pfnDeviceGetGraphProperties(s.device, &graph_properties), ZE_RESULT_SUCCESS);
  EXPECT_EQ(graph_properties.graphExtensionVersion, ZE_GRAPH_EXT_VERSION_1_4);
  EXPECT_TRUE(graph_properties.graphFormatsSupported & ZE_GRAPH_FORMAT_NGRAPH_LITE);
  EXPECT_TRUE(graph_properties.graphFormatsSupported & ZE_GRAPH_FORMAT_NATIVE);

  // What the driver does not implement says so.
  ze_module_desc_t module_desc{};
  module_desc.stype = ZE_STRUCTURE_TYPE_MODULE_DESC;
  module_desc.format = ZE_MODULE_FORMAT_IL_SPIRV;
  const uint8_t spirv[4] = {0x03, 0x02, 0x23, 0x07};
  module_desc.inputSize = sizeof(spirv);
  module_desc.pInputModule = spirv;
  ze_module_handle_t module_handle = nullptr;
  EXPECT_EQ(zeModuleCreate(s.context, s.device, &module_desc, &module_handle, nullptr),
            ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
}

TEST(SimDriver, MemoryIsTrackedPerContext) {
  Session s;
  ASSERT_EQ(s.open(), "");
  ze_host_mem_alloc_desc_t host_desc{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
  ze_device_mem_alloc_desc_t device_desc{ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, nullptr, 0, 0};
  void* host = nullptr;
  void* device = nullptr;
  void* shared = nullptr;
  ASSERT_EQ(zeMemAllocHost(s.context, &host_desc, 1000, 64, &host), ZE_RESULT_SUCCESS);
  ASSERT_EQ(zeMemAllocDevice(s.context, &device_desc, 1000, 0, s.device, &device),
            ZE_RESULT_SUCCESS);
  ASSERT_EQ(zeMemAllocShared(s.context, &device_desc, &host_desc, 1000, 0, s.device, &shared),
            ZE_RESULT_SUCCESS);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(host) % 64, 0u);
  ze_memory_allocation_properties_t props{};
  props.stype = ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES;
  ze_device_handle_t owner = nullptr;
  ASSERT_EQ(zeMemGetAllocProperties(s.context, static_cast<char*>(host) + 999, &props, &owner),
            ZE_RESULT_SUCCESS);
  EXPECT_EQ(props.type, ZE_MEMORY_TYPE_HOST);
  ASSERT_EQ(zeMemGetAllocProperties(s.context, device, &props, &owner), ZE_RESULT_SUCCESS);
  EXPECT_EQ(props.type, ZE_MEMORY_TYPE_DEVICE);
  EXPECT_EQ(owner, s.device);
  ASSERT_EQ(zeMemGetAllocProperties(s.context, shared, &props, nullptr), ZE_RESULT_SUCCESS);
  EXPECT_EQ(props.type, ZE_MEMORY_TYPE_SHARED);
  int on_stack = 0;
  ASSERT_EQ(zeMemGetAllocProperties(s.context, &on_stack, &props, nullptr), ZE_RESULT_SUCCESS);
  EXPECT_EQ(props.type, ZE_MEMORY_TYPE_UNKNOWN);
  EXPECT_EQ(zeMemFree(s.context, &on_stack), ZE_RESULT_ERROR_INVALID_ARGUMENT);
  void* too_big = nullptr;
  EXPECT_EQ(zeMemAllocDevice(s.context, &device_desc, size_t{5} << 30, 0, s.device, &too_big),
            ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
  EXPECT_EQ(zeMemFree(s.context, host), ZE_RESULT_SUCCESS);
  EXPECT_EQ(zeMemFree(s.context, device), ZE_RESULT_SUCCESS);
  EXPECT_EQ(zeMemFree(s.context, shared), ZE_RESULT_SUCCESS);
  EXPECT_EQ(zeMemFree(s.context, host), ZE_RESULT_ERROR_INVALID_ARGUMENT);  // already freed
}

TEST(SimDriver, GraphFromIrRunsWithNpuNumericsAndMatchesTheCpu) {
  Session s;
  ASSERT_EQ(s.open(), "");
  const std::vector<uint8_t> payload = test_payload();
  ASSERT_FALSE(payload.empty());
  GraphRun run(s);
  ASSERT_EQ(run.create(ZE_GRAPH_FORMAT_NGRAPH_LITE, payload), "");

  ASSERT_EQ(run.args().size(), 4u);
  // Outputs are named after the layer feeding their Result (fp16 IR: the Converts to f32).
  const char* names[] = {"x", "s", "y/to_f32", "z/to_f32"};
  const ze_graph_argument_type_t types[] = {
      ZE_GRAPH_ARGUMENT_TYPE_INPUT, ZE_GRAPH_ARGUMENT_TYPE_INPUT, ZE_GRAPH_ARGUMENT_TYPE_OUTPUT,
      ZE_GRAPH_ARGUMENT_TYPE_OUTPUT};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_STREQ(run.args()[i].name, names[i]);
    EXPECT_EQ(run.args()[i].type, types[i]);
    EXPECT_EQ(run.args()[i].devicePrecision, ZE_GRAPH_ARGUMENT_PRECISION_FP32);
  }
  EXPECT_EQ(run.args()[0].dims[1], 3u);
  EXPECT_EQ(run.args()[2].dims[1], 4u);
  EXPECT_EQ(run.args()[2].dims[3], 8u);

  const auto expected = cpu_reference();
  ASSERT_EQ(expected.size(), 2u);
  std::vector<std::vector<float>> outputs;
  for (int repeat = 0; repeat < 3; ++repeat) {  // the same list, executed again
    ASSERT_EQ(run.run(test_inputs(), &outputs), "");
    ASSERT_EQ(outputs.size(), 2u);
    for (size_t o = 0; o < 2; ++o) {
      EXPECT_LE(worst_excess(outputs[o], expected[o], 5e-2, 5e-2), 0.0) << "output " << o;
    }
  }
  // fp16 numerics: close to fp32, not equal to it.
  EXPECT_GT(worst_excess(outputs[0], expected[0], 0, 0), 0.0);
}

TEST(SimDriver, NativeBinaryRoundTrip) {
  Session s;
  ASSERT_EQ(s.open(), "");
  const std::vector<uint8_t> payload = test_payload();
  GraphRun built(s);
  ASSERT_EQ(built.create(ZE_GRAPH_FORMAT_NGRAPH_LITE, payload), "");
  size_t size = 0;
  ASSERT_EQ(s.graph->pfnGetNativeBinary(built.graph(), &size, nullptr), ZE_RESULT_SUCCESS);
  ASSERT_GT(size, payload.size());
  std::vector<uint8_t> blob(size);
  size_t small = size - 1;
  EXPECT_EQ(s.graph->pfnGetNativeBinary(built.graph(), &small, blob.data()),
            ZE_RESULT_ERROR_INVALID_SIZE);
  ASSERT_EQ(s.graph->pfnGetNativeBinary(built.graph(), &size, blob.data()), ZE_RESULT_SUCCESS);
  EXPECT_EQ(std::string(blob.begin(), blob.begin() + 12), "HSCHEDSIMNPU");

  GraphRun loaded(s);
  ASSERT_EQ(loaded.create(ZE_GRAPH_FORMAT_NATIVE, blob), "");
  std::vector<std::vector<float>> a, b;
  ASSERT_EQ(built.run(test_inputs(), &a), "");
  ASSERT_EQ(loaded.run(test_inputs(), &b), "");
  EXPECT_EQ(a, b);

  // Damaged or foreign binaries are refused; so is NGRAPH_LITE passed as NATIVE.
  std::vector<uint8_t> damaged = blob;
  damaged[blob.size() / 2] ^= 1;
  ze_graph_handle_t handle = nullptr;
  EXPECT_EQ(s.create_graph(ZE_GRAPH_FORMAT_NATIVE, damaged, &handle),
            ZE_RESULT_ERROR_INVALID_NATIVE_BINARY);
  EXPECT_EQ(s.create_graph(ZE_GRAPH_FORMAT_NATIVE, payload, &handle),
            ZE_RESULT_ERROR_INVALID_NATIVE_BINARY);
  EXPECT_EQ(handle, nullptr);
}

TEST(SimDriver, RefusesBadGraphInputAndMisuse) {
  Session s;
  ASSERT_EQ(s.open(), "");
  ze_graph_handle_t handle = nullptr;
  const std::vector<uint8_t> garbage = {1, 0, 0, 0, 2, 0, 0, 0, 9};
  EXPECT_EQ(s.create_graph(ZE_GRAPH_FORMAT_NGRAPH_LITE, garbage, &handle),
            ZE_RESULT_ERROR_INVALID_ARGUMENT);
  std::vector<uint8_t> other_compiler = test_payload();
  other_compiler[0] = 7;  // compiler major 7
  EXPECT_EQ(s.create_graph(ZE_GRAPH_FORMAT_NGRAPH_LITE, other_compiler, &handle),
            ZE_RESULT_ERROR_UNSUPPORTED_VERSION);
  EXPECT_EQ(s.create_graph(ZE_GRAPH_FORMAT_NGRAPH_LITE, {}, &handle),
            ZE_RESULT_ERROR_INVALID_NULL_POINTER);

  ASSERT_EQ(s.create_graph(ZE_GRAPH_FORMAT_NGRAPH_LITE, test_payload(), &handle),
            ZE_RESULT_SUCCESS);
  ze_graph_argument_properties_t arg{};
  arg.stype = ZE_STRUCTURE_TYPE_GRAPH_ARGUMENT_PROPERTIES;
  EXPECT_EQ(s.graph->pfnGetArgumentProperties(handle, 4, &arg), ZE_RESULT_ERROR_INVALID_ARGUMENT);
  int not_device_memory[4] = {};
  EXPECT_EQ(s.graph->pfnSetArgumentValue(handle, 0, not_device_memory),
            ZE_RESULT_ERROR_INVALID_ARGUMENT);
  ze_host_mem_alloc_desc_t host_desc{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
  void* small = nullptr;
  ASSERT_EQ(zeMemAllocHost(s.context, &host_desc, 16, 0, &small), ZE_RESULT_SUCCESS);
  EXPECT_EQ(s.graph->pfnSetArgumentValue(handle, 0, small),
            ZE_RESULT_ERROR_INVALID_ARGUMENT);  // too small

  ze_command_list_desc_t list_desc{ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, nullptr, 0, 0};
  ze_command_list_handle_t list = nullptr;
  ASSERT_EQ(zeCommandListCreate(s.context, s.device, &list_desc, &list), ZE_RESULT_SUCCESS);
  // Execute before any initialize, and with arguments unset, is refused.
  EXPECT_EQ(s.graph->pfnAppendGraphExecute(list, handle, nullptr, nullptr, 0, nullptr),
            ZE_RESULT_ERROR_UNINITIALIZED);
  EXPECT_EQ(s.graph->pfnAppendGraphInitialize(list, handle, nullptr, 0, nullptr),
            ZE_RESULT_SUCCESS);
  EXPECT_EQ(s.graph->pfnAppendGraphExecute(list, handle, nullptr, nullptr, 0, nullptr),
            ZE_RESULT_ERROR_INVALID_ARGUMENT);
  // A context with a live graph cannot be destroyed.
  EXPECT_EQ(zeContextDestroy(s.context), ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
  EXPECT_EQ(zeCommandListDestroy(list), ZE_RESULT_SUCCESS);
  EXPECT_EQ(s.graph->pfnDestroy(handle), ZE_RESULT_SUCCESS);
  EXPECT_EQ(s.graph->pfnDestroy(handle), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT_EQ(zeMemFree(s.context, small), ZE_RESULT_SUCCESS);
}

}  // namespace
}  // namespace hsched::zesim
