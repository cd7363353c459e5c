// The executor (hsched/executor.h): a plan's partitions compiled on their devices and run as a
// flow graph; OpenCL partitions on the first OpenCL device (PoCL in CI; those tests are skipped,
// not passed, without one); a compile past its deadline re-planned to the CPU; verification
// against the CPU; streams of requests and concurrent callers. The accuracy budget's re-plans:
// accuracy_budget_test.cpp.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <random>
#include <thread>

#include <gtest/gtest.h>

#include "backends/cpu/device.h"
#include "backends/cpu/program.h"
#include "backends/opencl/opencl_test_util.h"
#include "executor_test_util.h"
#include "hsched/config.h"
#include "scheduler/config/discover.h"
#include "scheduler/planner/schedule.h"
#include "scheduler/runtime/compile.h"
#include "scheduler/runtime/partition_program.h"
#include "support/temp_dir.h"

namespace hsched {
namespace {

using test::cpu_reference;
using test::ExecutorOpenClTest;
using test::expect_close;
using test::nodes_on_api;
using test::opencl_plan;
using test::random_tensor;
using test::split_graph;

TEST(ExecutorTest, CpuPlanGivesTheCpuProgramsOutputs) {
  const Graph graph = split_graph();
  auto target = restrict_devices(discover_target(), "cpu");
  ASSERT_TRUE(target.is_ok());
  auto plan = schedule(graph, *target, default_policy());
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  auto exe = compile(graph, *plan, ExecutorOptions{});
  ASSERT_TRUE(exe.is_ok()) << exe.status().message();
  const std::vector<Tensor> inputs = {random_tensor({1, 3, 8, 8}, 7)};
  auto outputs = (*exe)->run(inputs);
  ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
  expect_close((*outputs)[0], cpu_reference(graph, inputs)[0], 0, 0);
  EXPECT_EQ((*exe)->stats().programs_built, 0);
  EXPECT_EQ((*exe)->stats().replans, 0);
  auto wrong = (*exe)->run({});
  EXPECT_FALSE(wrong.is_ok());
  // No device reads the input: ordinary memory, zeroed, of the input's dtype and dims.
  auto input = (*exe)->allocate_input(0);
  ASSERT_TRUE(input.is_ok()) << input.status().message();
  EXPECT_EQ(input->dims(), (std::vector<int64_t>{1, 3, 8, 8}));
  for (float v : input->values<float>()) ASSERT_EQ(v, 0.0f);
}

TEST(ExecutorTest, PlanForAbsentDeviceIsRefused) {
  const Graph graph = split_graph();
  auto target = resolve_target("core-ultra-7-155h");
  ASSERT_TRUE(target.is_ok()) << target.status().message();
  auto plan = schedule(graph, *target, default_policy());
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  auto exe = compile(graph, *plan, ExecutorOptions{});
  ASSERT_FALSE(exe.is_ok());
  EXPECT_NE(exe.status().message().find("not present on this machine"), std::string::npos)
      << exe.status().message();
}

TEST_P(ExecutorOpenClTest, SplitPlanRunsAcrossDevicesAndMatchesTheCpu) {
  const Graph graph = split_graph();
  const Plan plan = opencl_plan(graph, GetParam());
  EXPECT_EQ(nodes_on_api(plan, DeviceApi::kOpenCl), 3);  // all but CumSum
  EXPECT_EQ(plan.partitions.size(), 3u);
  ExecutorOptions options;
  options.cache_dir = cache_dir_.path().string();
  options.compile_timeout_ms = 120000;
  auto exe = compile(graph, plan, options);
  ASSERT_TRUE(exe.is_ok()) << exe.status().message();
  const bool half = GetParam() == Precision::kFp16;
  for (uint32_t seed : {11u, 12u}) {  // twice: buffers are reused and must not leak between runs
    const std::vector<Tensor> inputs = {random_tensor({1, 3, 8, 8}, seed)};
    auto outputs = (*exe)->run(inputs);
    ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
    expect_close((*outputs)[0], cpu_reference(graph, inputs)[0], half ? 5e-2f : 1e-4f,
                 half ? 5e-2f : 1e-3f);
  }
  // A second compile in this process loads every program from the cache.
  auto again = compile(graph, plan, options);
  ASSERT_TRUE(again.is_ok()) << again.status().message();
  EXPECT_EQ((*again)->stats().programs_built, 0);
  EXPECT_GT((*again)->stats().programs_loaded, 0);
}

// allocate_input: the input an OpenCL partition reads comes in the device's page-locked memory
// (a pooled block: released, the same block comes back), zeroed; a run with it gives what a run
// with ordinary memory gives; the outputs the device wrote into its memory outlive the executable.
TEST_P(ExecutorOpenClTest, InputsInTheDevicesHostMemoryRunLikeAnyOther) {
  const Graph graph = split_graph();
  ExecutorOptions options;
  options.cache_dir = cache_dir_.path().string();
  options.compile_timeout_ms = 120000;
  auto exe = compile(graph, opencl_plan(graph, GetParam()), options);
  ASSERT_TRUE(exe.is_ok()) << exe.status().message();
  auto input = (*exe)->allocate_input(0);
  ASSERT_TRUE(input.is_ok()) << input.status().message();
  ASSERT_EQ(input->dims(), (std::vector<int64_t>{1, 3, 8, 8}));
  ASSERT_EQ(input->dtype(), DType::kF32);
  for (float v : input->values<float>()) ASSERT_EQ(v, 0.0f);
  const std::byte* block = input->raw();
  {
    auto second = (*exe)->allocate_input(0);
    ASSERT_TRUE(second.is_ok());
    EXPECT_NE(second->raw(), block);  // the first block is in use
  }
  EXPECT_FALSE((*exe)->allocate_input(1).is_ok());
  const Tensor ordinary = random_tensor({1, 3, 8, 8}, 31);
  std::memcpy(input->raw(), ordinary.raw(), ordinary.byte_size());
  auto pinned_outputs = (*exe)->run({*input});
  auto ordinary_outputs = (*exe)->run({ordinary});
  ASSERT_TRUE(pinned_outputs.is_ok()) << pinned_outputs.status().message();
  ASSERT_TRUE(ordinary_outputs.is_ok()) << ordinary_outputs.status().message();
  expect_close((*pinned_outputs)[0], (*ordinary_outputs)[0], 0, 0);
  const Tensor kept = (*pinned_outputs)[0];
  input = Tensor();
  exe->reset();
  const bool half = GetParam() == Precision::kFp16;
  expect_close(kept, cpu_reference(graph, {ordinary})[0], half ? 5e-2f : 1e-4f,
               half ? 5e-2f : 1e-3f);
}

// A plan of one device partition: run() computes it on the caller's thread (no hand-off to the
// flow graph and the device's thread and back); a stream still goes through the device's thread;
// both give the same outputs.
TEST_F(ExecutorOpenClTest, OnePartitionRunsOnTheCallersThread) {
  Graph graph;
  graph.name = "conv_relu";
  graph.opset = 17;
  const ValueId x = graph.add_value("x", DType::kF32, Shape({1, 3, 8, 8}));
  graph.add_input(x);
  const ValueId w = graph.add_constant("w", random_tensor({4, 3, 3, 3}, 1));
  const ValueId c = graph.add_value("c", DType::kF32, Shape({1, 4, 6, 6}));
  const ValueId y = graph.add_value("y", DType::kF32, Shape({1, 4, 6, 6}));
  graph.add_node(Node{"conv", "Conv", "", {x, w}, {c}, {}});
  graph.add_node(Node{"relu", "Relu", "", {c}, {y}, {}});
  graph.add_output(y);
  ExecutorOptions options;
  options.cache_dir = cache_dir_.path().string();
  options.compile_timeout_ms = 120000;
  std::mutex mutex;
  std::vector<std::thread::id> device_threads;
  const runtime::ScopedDeviceOutputHook hook([&](int, std::vector<Tensor>&) {
    std::lock_guard<std::mutex> lock(mutex);
    device_threads.push_back(std::this_thread::get_id());
    return Status::ok();
  });
  auto exe = compile(graph, opencl_plan(graph, Precision::kFp32), options);
  ASSERT_TRUE(exe.is_ok()) << exe.status().message();
  ASSERT_EQ((*exe)->plan().partitions.size(), 1u);
  const std::vector<Tensor> inputs = {random_tensor({1, 3, 8, 8}, 33)};
  auto alone = (*exe)->run(inputs);
  auto streamed = (*exe)->run_stream({inputs}, 1);
  ASSERT_TRUE(alone.is_ok()) << alone.status().message();
  ASSERT_TRUE(streamed.is_ok()) << streamed.status().message();
  expect_close((*alone)[0], (*streamed)[0][0], 0, 0);
  expect_close((*alone)[0], cpu_reference(graph, inputs)[0], 1e-4f, 1e-3f);
  ASSERT_EQ(device_threads.size(), 2u);
  EXPECT_EQ(device_threads[0], std::this_thread::get_id());
  EXPECT_NE(device_threads[1], std::this_thread::get_id());
}

// a[1,4,8,8] and b[1,4,8,8], each summed cumulatively over channels (CumSum: no OpenCL kernel),
// the two sums added on the device: the two independent sums share one CPU partition (a
// partition is a run of one device, connected or not), which must compute both.
TEST_F(ExecutorOpenClTest, APartitionOfIndependentNodesComputesThemAll) {
  Graph graph;
  graph.name = "two_sums";
  graph.opset = 17;
  const ValueId axis =
      graph.add_constant("axis", Tensor::from_vector(DType::kI64, {}, std::vector<int64_t>{1}));
  const ValueId y = graph.add_value("y", DType::kF32, Shape({1, 4, 8, 8}));
  std::vector<ValueId> sums;
  for (const std::string name : {"a", "b"}) {
    const ValueId x = graph.add_value(name, DType::kF32, Shape({1, 4, 8, 8}));
    graph.add_input(x);
    sums.push_back(graph.add_value("sum_" + name, DType::kF32, Shape({1, 4, 8, 8})));
    graph.add_node(Node{"sum_" + name, "CumSum", "", {x, axis}, {sums.back()}, {}});
  }
  graph.add_node(Node{"add", "Add", "", {sums[0], sums[1]}, {y}, {}});
  graph.add_output(y);
  const Plan plan = opencl_plan(graph, Precision::kFp32);
  ASSERT_EQ(plan.partitions.size(), 2u);
  EXPECT_EQ(plan.partitions[0].nodes.size(), 2u);
  EXPECT_EQ(plan.target.find(plan.partitions[1].device)->api, DeviceApi::kOpenCl);
  ExecutorOptions options;
  options.cache_dir = cache_dir_.path().string();
  options.compile_timeout_ms = 120000;
  auto exe = compile(graph, plan, options);
  ASSERT_TRUE(exe.is_ok()) << exe.status().message();
  const std::vector<Tensor> inputs = {random_tensor({1, 4, 8, 8}, 21),
                                      random_tensor({1, 4, 8, 8}, 22)};
  auto outputs = (*exe)->run(inputs);
  ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
  expect_close((*outputs)[0], cpu_reference(graph, inputs)[0], 1e-5f, 1e-4f);
}

INSTANTIATE_TEST_SUITE_P(Storage, ExecutorOpenClTest,
                         ::testing::Values(Precision::kFp32, Precision::kFp16),
                         [](const auto& info) { return std::string(precision_name(info.param)); });

// x[2,3,4] with NaNs, m[3,1] of int16: mask = Cast(m, bool) (int16 is not held on an OpenCL
// device: a CPU partition whose bool output goes to the device), nan = IsNaN(x), clean =
// Where(nan, 0, x), y = Where(mask, clean, -1); outputs y and the bool nan, read back from the
// device (fp32).
Graph bool_graph() {
  Graph g;
  g.name = "bools";
  g.opset = 17;
  const ValueId x = g.add_value("x", DType::kF32, Shape({2, 3, 4}));
  const ValueId m = g.add_value("m", DType::kI16, Shape({3, 1}));
  g.add_input(x);
  g.add_input(m);
  const auto scalar = [&](const std::string& name, float v) {
    return g.add_constant(name, Tensor::from_vector(DType::kF32, {}, std::vector<float>{v}));
  };
  const ValueId zero = scalar("zero", 0.0f);
  const ValueId minus_one = scalar("minus_one", -1.0f);
  const ValueId mask = g.add_value("mask", DType::kBool, Shape({3, 1}));
  const ValueId nan = g.add_value("nan", DType::kBool, Shape({2, 3, 4}));
  const ValueId clean = g.add_value("clean", DType::kF32, Shape({2, 3, 4}));
  const ValueId y = g.add_value("y", DType::kF32, Shape({2, 3, 4}));
  Node cast{"cast", "Cast", "", {m}, {mask}, {}};
  cast.attributes["to"] = Attribute(int64_t{9});  // BOOL
  g.add_node(cast);
  g.add_node(Node{"isnan", "IsNaN", "", {x}, {nan}, {}});
  g.add_node(Node{"clean", "Where", "", {nan, zero, x}, {clean}, {}});
  g.add_node(Node{"select", "Where", "", {mask, clean, minus_one}, {y}, {}});
  g.add_output(y);
  g.add_output(nan);
  return g;
}

TEST_P(ExecutorOpenClTest, BoolValuesCrossDevicesAsOnesAndZeros) {
  const Graph graph = bool_graph();
  const Plan plan = opencl_plan(graph, GetParam());
  // All but the Cast (the device reads its bool output); in fp16 plans IsNaN in fp32 there,
  // substituted (its bool output is not float data).
  EXPECT_EQ(nodes_on_api(plan, DeviceApi::kOpenCl), 3);
  ExecutorOptions options;
  options.cache_dir = cache_dir_.path().string();
  options.compile_timeout_ms = 120000;
  auto exe = compile(graph, plan, options);
  ASSERT_TRUE(exe.is_ok()) << exe.status().message();
  Tensor x = random_tensor({2, 3, 4}, 21);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (size_t i : {0u, 5u, 17u, 23u}) x.values<float>()[i] = nan;
  const std::vector<Tensor> inputs = {
      x, Tensor::from_vector(DType::kI16, {3, 1}, std::vector<int16_t>{1, 0, 2})};
  auto outputs = (*exe)->run(inputs);
  ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
  const std::vector<Tensor> want = cpu_reference(graph, inputs);
  const bool half = GetParam() == Precision::kFp16;
  expect_close((*outputs)[0], want[0], half ? 5e-3f : 0, half ? 5e-3f : 0);
  ASSERT_EQ((*outputs)[1].dtype(), DType::kBool);
  const auto got_nan = (*outputs)[1].values<uint8_t>();
  const auto want_nan = want[1].values<uint8_t>();
  EXPECT_TRUE(std::equal(got_nan.begin(), got_nan.end(), want_nan.begin(), want_nan.end()));
  EXPECT_EQ(std::count(got_nan.begin(), got_nan.end(), 1), 4);
}

// x[2,3,4] and y[3,4] of -1, 0 and 1 (so every comparison has both outcomes): the comparisons,
// the logic ops, Cast both ways and Expand, all on the device (fp32); outputs bool and float.
Graph logic_graph() {
  Graph g;
  g.name = "logic";
  g.opset = 17;
  const Shape xs({2, 3, 4});
  const ValueId x = g.add_value("x", DType::kF32, xs);
  const ValueId y = g.add_value("y", DType::kF32, Shape({3, 4}));
  g.add_input(x);
  g.add_input(y);
  int next = 0;
  const auto node = [&](const std::string& op, std::vector<ValueId> inputs, DType dtype,
                        const Shape& shape, AttributeMap attributes = {}) {
    const std::string name = op + std::to_string(next++);
    const ValueId out = g.add_value(name, dtype, shape);
    g.add_node(Node{name, op, "", std::move(inputs), {out}, std::move(attributes)});
    return out;
  };
  const AttributeMap to_bool = {{"to", Attribute(int64_t{9})}};
  const AttributeMap to_float = {{"to", Attribute(int64_t{1})}};
  const ValueId nonzero = node("Cast", {x}, DType::kBool, xs, to_bool);
  const ValueId gt = node("Greater", {x, y}, DType::kBool, xs);
  const ValueId ge = node("GreaterOrEqual", {x, y}, DType::kBool, xs);
  const ValueId lt = node("Less", {x, y}, DType::kBool, xs);
  const ValueId le = node("LessOrEqual", {x, y}, DType::kBool, xs);
  const ValueId eq = node("Equal", {x, y}, DType::kBool, xs);
  g.add_output(node("And", {gt, nonzero}, DType::kBool, xs));
  g.add_output(node("Or", {lt, eq}, DType::kBool, xs));
  g.add_output(node("Xor", {ge, nonzero}, DType::kBool, xs));
  const ValueId not_le = node("Not", {le}, DType::kBool, xs);
  g.add_output(node("Cast", {not_le}, DType::kF32, xs, to_float));
  const ValueId shape =
      g.add_constant("shape", Tensor::from_vector(DType::kI64, {3}, std::vector<int64_t>{2, 1, 4}));
  g.add_output(node("Expand", {y, shape}, DType::kF32, xs));
  return g;
}

TEST_F(ExecutorOpenClTest, ComparisonsLogicCastAndExpandRunOnTheDevice) {
  const Graph graph = logic_graph();
  const Plan plan = opencl_plan(graph, Precision::kFp32);
  EXPECT_EQ(nodes_on_api(plan, DeviceApi::kOpenCl), static_cast<int>(graph.nodes().size()));
  ExecutorOptions options;
  options.cache_dir = cache_dir_.path().string();
  options.compile_timeout_ms = 120000;
  auto exe = compile(graph, plan, options);
  ASSERT_TRUE(exe.is_ok()) << exe.status().message();
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> pick(-1, 1);
  std::vector<Tensor> inputs = {Tensor(DType::kF32, {2, 3, 4}), Tensor(DType::kF32, {3, 4})};
  for (Tensor& input : inputs) {
    for (float& v : input.values<float>()) v = static_cast<float>(pick(rng));
  }
  auto outputs = (*exe)->run(inputs);
  ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
  const std::vector<Tensor> want = cpu_reference(graph, inputs);
  ASSERT_EQ(outputs->size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("output " + std::to_string(i));
    ASSERT_EQ((*outputs)[i].dtype(), want[i].dtype());
    ASSERT_EQ((*outputs)[i].byte_size(), want[i].byte_size());
    EXPECT_EQ(std::memcmp((*outputs)[i].raw(), want[i].raw(), want[i].byte_size()), 0);
  }
  // Every bool output has both values.
  for (size_t i = 0; i < 3; ++i) {
    const auto bools = (*outputs)[i].values<uint8_t>();
    EXPECT_GT(std::count(bools.begin(), bools.end(), 1), 0) << i;
    EXPECT_GT(std::count(bools.begin(), bools.end(), 0), 0) << i;
  }
}

// Verification's comparison: floats within the tolerance pass, a flipped bool never does.
TEST(CompareOutputsTest, FloatsWithinTheToleranceAndBoolsExactly) {
  const Graph graph = bool_graph();
  const Tensor floats = Tensor::from_vector(DType::kF32, {2}, std::vector<float>{1.0f, 2.0f});
  const Tensor near = Tensor::from_vector(DType::kF32, {2}, std::vector<float>{1.0005f, 2.0f});
  const Tensor bools = Tensor::from_vector(DType::kBool, {2}, std::vector<uint8_t>{1, 0});
  const Tensor flipped = Tensor::from_vector(DType::kBool, {2}, std::vector<uint8_t>{1, 1});
  const Tolerance tolerance{1e-3, 1e-3};
  EXPECT_TRUE(runtime::compare_outputs(graph, {near, bools}, {floats, bools}, tolerance).within);
  const runtime::Deviation deviation =
      runtime::compare_outputs(graph, {floats, flipped}, {floats, bools}, tolerance);
  EXPECT_FALSE(deviation.within);
  EXPECT_EQ(deviation.max_abs, 1.0);
  EXPECT_NE(deviation.detail.find("output 'nan'[1]"), std::string::npos) << deviation.detail;
}

TEST_F(ExecutorOpenClTest, CompilePastTheDeadlineIsReplannedToTheCpu) {
  const Graph graph = split_graph();
  const Plan plan = opencl_plan(graph, Precision::kFp32);
  ASSERT_GT(nodes_on_api(plan, DeviceApi::kOpenCl), 0);
  ExecutorOptions options;
  options.cache_dir = cache_dir_.path().string();  // empty: every program builds from source
  options.compile_timeout_ms = 500;
  ::setenv("HSCHED_OPENCL_TEST_BUILD_DELAY_MS", "3000", 1);
  const auto start = std::chrono::steady_clock::now();
  auto exe = compile(graph, plan, options);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ::unsetenv("HSCHED_OPENCL_TEST_BUILD_DELAY_MS");
  ASSERT_TRUE(exe.is_ok()) << exe.status().message();
  EXPECT_LT(seconds, 2.5);  // one deadline, then the CPU: never the build's 3 s
  const Plan ran = (*exe)->plan();
  EXPECT_EQ(nodes_on_api(ran, DeviceApi::kOpenCl), 0);
  EXPECT_EQ((*exe)->stats().replans, 1);
  int timeouts = 0;
  for (const Rejection& rejection : ran.rejections) {
    timeouts += rejection.reason == ReasonCode::kCompileTimeout ? 1 : 0;
  }
  EXPECT_EQ(timeouts, 3);  // both OpenCL partitions in one round: the failed build is remembered
  const std::vector<Tensor> inputs = {random_tensor({1, 3, 8, 8}, 5)};
  auto outputs = (*exe)->run(inputs);
  ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
  expect_close((*outputs)[0], cpu_reference(graph, inputs)[0], 1e-5f, 1e-5f);
}

// A device partition whose weights and working set pass the device's memory is refused before
// its driver is asked (memory_exceeded), and the CPU takes it.
TEST_F(ExecutorOpenClTest, APartitionOverTheDevicesMemoryIsReplannedToTheCpu) {
  const Graph graph = split_graph();
  Plan plan = opencl_plan(graph, Precision::kFp32);
  ASSERT_GT(nodes_on_api(plan, DeviceApi::kOpenCl), 0);
  for (DeviceProfile& device : plan.target.devices) {
    if (device.api == DeviceApi::kOpenCl) device.memory_bytes = 64;  // planned with more
  }
  ExecutorOptions options;
  options.cache_dir = cache_dir_.path().string();
  auto exe = compile(graph, plan, options);
  ASSERT_TRUE(exe.is_ok()) << exe.status().message();
  const Plan ran = (*exe)->plan();
  EXPECT_EQ(nodes_on_api(ran, DeviceApi::kOpenCl), 0);
  EXPECT_EQ((*exe)->stats().programs_built + (*exe)->stats().programs_loaded, 0);
  int partition_refusals = 0;
  for (const Rejection& rejection : ran.rejections) {
    if (rejection.reason != ReasonCode::kMemoryExceeded) continue;
    partition_refusals +=
        rejection.detail.find("the partition needs at least") != std::string::npos;
  }
  EXPECT_GT(partition_refusals, 0);
  const std::vector<Tensor> inputs = {random_tensor({1, 3, 8, 8}, 6)};
  auto outputs = (*exe)->run(inputs);
  ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
  expect_close((*outputs)[0], cpu_reference(graph, inputs)[0], 1e-5f, 1e-5f);
}

// The OpenCL partitions of `plan`, by index.
std::vector<int> opencl_partitions(const Plan& plan) {
  std::vector<int> found;
  for (size_t p = 0; p < plan.partitions.size(); ++p) {
    if (plan.target.find(plan.partitions[p].device)->api == DeviceApi::kOpenCl) {
      found.push_back(static_cast<int>(p));
    }
  }
  return found;
}

TEST_F(ExecutorOpenClTest, VerificationQuarantinesAPlantedWrongResult) {
  const Graph graph = split_graph();
  const Plan plan = opencl_plan(graph, Precision::kFp32);
  const std::vector<int> device_partitions = opencl_partitions(plan);
  ASSERT_EQ(device_partitions.size(), 2u);
  const int planted = device_partitions[0];
  ExecutorOptions options;
  options.cache_dir = cache_dir_.path().string();
  options.compile_timeout_ms = 120000;
  options.verify = true;
  std::atomic<int> hook_calls{0};
  const runtime::ScopedDeviceOutputHook hook([&](int partition, std::vector<Tensor>& outputs) {
    if (partition != planted) return Status::ok();
    ++hook_calls;
    outputs[0].values<float>()[3] += 1.0f;  // one wrong element
    return Status::ok();
  });
  auto exe = compile(graph, plan, options);
  ASSERT_TRUE(exe.is_ok()) << exe.status().message();
  for (uint32_t seed : {21u, 22u}) {  // the first run quarantines; the second runs on the CPU
    const std::vector<Tensor> inputs = {random_tensor({1, 3, 8, 8}, seed)};
    RunRecord record;
    auto outputs = (*exe)->run(inputs, &record);
    ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
    expect_close((*outputs)[0], cpu_reference(graph, inputs)[0], 1e-4f, 1e-3f);
    EXPECT_EQ(record.partitions[static_cast<size_t>(planted)].device, "cpu0");
  }
  EXPECT_EQ(hook_calls.load(), 1);
  const std::vector<Quarantine> quarantines = (*exe)->quarantines();
  ASSERT_EQ(quarantines.size(), 1u);
  EXPECT_EQ(quarantines[0].partition, planted);
  EXPECT_NEAR(quarantines[0].max_abs, 1.0, 1e-3);
  EXPECT_GT(quarantines[0].mean_abs, 0.0);
  EXPECT_EQ((*exe)->stats().quarantined, 1);
  const Plan ran = (*exe)->plan();
  EXPECT_EQ(ran.partitions[static_cast<size_t>(planted)].device, "cpu0");
  int rejected = 0;
  for (const Rejection& rejection : ran.rejections) {
    if (rejection.reason != ReasonCode::kVerificationFailed) continue;
    ++rejected;
    EXPECT_NE(rejection.detail.find("max abs error"), std::string::npos) << rejection.detail;
    EXPECT_EQ(ran.nodes[rejection.node].device, "cpu0");
  }
  EXPECT_EQ(rejected, static_cast<int>(plan.partitions[static_cast<size_t>(planted)].nodes.size()));
}

TEST_F(ExecutorOpenClTest, FailingDeviceIsQuarantinedAndTheRunCompletesOnTheCpu) {
  const Graph graph = split_graph();
  const Plan plan = opencl_plan(graph, Precision::kFp32);
  ExecutorOptions options;
  options.cache_dir = cache_dir_.path().string();
  options.compile_timeout_ms = 120000;
  std::atomic<int> device_runs{0};
  const runtime::ScopedDeviceOutputHook hook([&](int, std::vector<Tensor>&) {
    // Both OpenCL partitions: the first run of each succeeds, then the device is "lost"; the
    // second is out of memory.
    const int run = device_runs++;
    if (run < 2) return Status::ok();
    return run == 2 ? Status(ErrorCode::kUnavailable, "device lost (planted)")
                    : Status(ErrorCode::kResourceExhausted, "out of device memory (planted)");
  });
  auto exe = compile(graph, plan, options);
  ASSERT_TRUE(exe.is_ok()) << exe.status().message();
  for (uint32_t seed : {41u, 42u, 43u}) {
    const std::vector<Tensor> inputs = {random_tensor({1, 3, 8, 8}, seed)};
    auto outputs = (*exe)->run(inputs);
    ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
    expect_close((*outputs)[0], cpu_reference(graph, inputs)[0], 1e-4f, 1e-3f);
  }
  EXPECT_EQ(device_runs.load(), 4);  // quarantined partitions no longer reach the device
  const std::vector<Quarantine> quarantines = (*exe)->quarantines();
  ASSERT_EQ(quarantines.size(), 2u);
  EXPECT_EQ(quarantines[0].reason, ReasonCode::kDeviceLost);
  EXPECT_NE(quarantines[0].detail.find("device lost"), std::string::npos);
  EXPECT_EQ(quarantines[1].reason, ReasonCode::kMemoryExceeded);
  EXPECT_EQ(nodes_on_api((*exe)->plan(), DeviceApi::kOpenCl), 0);
}

TEST_F(ExecutorOpenClTest, VerificationPassesCorrectDevicePartitions) {
  const Graph graph = split_graph();
  const Plan plan = opencl_plan(graph, Precision::kFp16);
  ExecutorOptions options;
  options.cache_dir = cache_dir_.path().string();
  options.compile_timeout_ms = 120000;
  options.verify = true;
  auto exe = compile(graph, plan, options);
  ASSERT_TRUE(exe.is_ok()) << exe.status().message();
  RunRecord record;
  auto outputs = (*exe)->run({random_tensor({1, 3, 8, 8}, 31)}, &record);
  ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
  EXPECT_TRUE((*exe)->quarantines().empty());
  for (int p : opencl_partitions(plan)) {
    const PartitionRun& run = record.partitions[static_cast<size_t>(p)];
    EXPECT_TRUE(run.verified);
    // PoCL shares host memory: inputs are read in place.
    const bool shared = opencl_test::first_device()->host_unified_memory;
    EXPECT_GT(shared ? run.zero_copy_bytes : run.upload_bytes, 0);
    EXPECT_GT(run.download_bytes, 0);
    EXPECT_EQ(run.device, plan.partitions[static_cast<size_t>(p)].device);
  }
}

TEST_F(ExecutorOpenClTest, StreamGivesEachRequestItsOwnOutputsInOrder) {
  const Graph graph = split_graph();
  const Plan plan = opencl_plan(graph, Precision::kFp32);
  ExecutorOptions options;
  options.cache_dir = cache_dir_.path().string();
  options.compile_timeout_ms = 120000;
  auto exe = compile(graph, plan, options);
  ASSERT_TRUE(exe.is_ok()) << exe.status().message();
  std::vector<std::vector<Tensor>> requests;
  for (uint32_t seed = 0; seed < 12; ++seed)
    requests.push_back({random_tensor({1, 3, 8, 8}, seed)});
  for (int in_flight : {0, 1, 3}) {
    std::vector<RunRecord> records;
    auto outputs = (*exe)->run_stream(requests, in_flight, &records);
    ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
    ASSERT_EQ(outputs->size(), requests.size());
    ASSERT_EQ(records.size(), requests.size());
    for (size_t i = 0; i < requests.size(); ++i) {
      expect_close((*outputs)[i][0], cpu_reference(graph, requests[i])[0], 1e-4f, 1e-3f);
      EXPECT_LE(records[i].start_ms, records[i].end_ms);
      for (const PartitionRun& run : records[i].partitions) {
        EXPECT_LE(records[i].start_ms, run.start_ms);
        EXPECT_LE(run.start_ms, run.end_ms);
        EXPECT_LE(run.end_ms, records[i].end_ms);
      }
    }
    // A partition runs one request at a time, in order.
    for (size_t p = 0; p < plan.partitions.size(); ++p) {
      for (size_t i = 1; i < records.size(); ++i) {
        EXPECT_LE(records[i - 1].partitions[p].end_ms, records[i].partitions[p].start_ms);
      }
    }
  }
  std::vector<std::vector<Tensor>> bad = {{random_tensor({1, 3, 8, 8}, 1)}, {}};
  auto refused = (*exe)->run_stream(bad);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_NE(refused.status().message().find("request 1"), std::string::npos);
}

TEST_F(ExecutorOpenClTest, ConcurrentCallersEachGetTheirOwnOutputs) {
  const Graph graph = split_graph();
  const Plan plan = opencl_plan(graph, Precision::kFp32);
  ExecutorOptions options;
  options.cache_dir = cache_dir_.path().string();
  options.compile_timeout_ms = 120000;
  auto exe = compile(graph, plan, options);
  ASSERT_TRUE(exe.is_ok()) << exe.status().message();
  constexpr int kThreads = 4;
  constexpr int kRuns = 8;
  std::vector<std::vector<Tensor>> inputs(kThreads * kRuns);
  std::vector<std::vector<Tensor>> got(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    inputs[i] = {random_tensor({1, 3, 8, 8}, static_cast<uint32_t>(100 + i))};
  }
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < kRuns; ++k) {
        const size_t i = static_cast<size_t>(t * kRuns + k);
        auto outputs = (*exe)->run(inputs[i]);
        if (!outputs.is_ok()) {
          ++failures;
          continue;
        }
        got[i] = std::move(outputs).value();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  ASSERT_EQ(failures.load(), 0);
  for (size_t i = 0; i < inputs.size(); ++i) {
    expect_close(got[i][0], cpu_reference(graph, inputs[i])[0], 1e-4f, 1e-3f);
  }
}

}  // namespace
}  // namespace hsched
