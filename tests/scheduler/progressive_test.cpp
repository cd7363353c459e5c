// Progressive start (ExecutorOptions::progressive_start): with an empty program cache and a planted
// build delay, compile() returns without waiting for the OpenCL build, the first requests run on
// the CPU (RunRecord::plan "cpu") with the CPU's outputs, then on the plan with each OpenCL
// partition on the device once built ("partial", then "plan"). The background build begins after
// the first request's answer, or without one. A plan on the host alone compiles as before.
// Skipped, not passed, without an OpenCL device.
#include <chrono>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "executor_test_util.h"
#include "scheduler/runtime/compile.h"

namespace hsched {
namespace {

using test::cpu_reference;
using test::ExecutorOpenClTest;
using test::expect_close;
using test::nodes_on_api;
using test::opencl_plan;
using test::random_tensor;
using test::split_graph;

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// split_graph's plan is OpenCL, CPU, OpenCL partitions, the second OpenCL one in fp16 storage, so
// each builds a kernel library of its own, each build taking the planted delay. Requests run the
// whole model on the CPU until the first OpenCL partition is built, then the plan with that
// partition on the device and the other on the CPU ("partial"), then the plan.
TEST_F(ExecutorOpenClTest, ProgressiveStartMovesEachPartitionToItsDeviceOnceBuilt) {
  const Graph graph = split_graph();
  Plan plan = opencl_plan(graph, Precision::kFp32);
  ASSERT_EQ(plan.partitions.size(), 3u);
  for (NodeId id : plan.partitions[2].nodes) plan.nodes[id].precision = Precision::kFp16;
  const std::string gpu = plan.partitions[0].device;
  ASSERT_EQ(plan.partitions[2].device, gpu);
  ASSERT_NE(plan.partitions[1].device, gpu);
  ExecutorOptions options;
  options.cache_dir = cache_dir_.path().string();  // empty: every program builds from source
  options.compile_timeout_ms = 120000;
  options.progressive_start = true;
  // (The reference first: the first request follows compile() at once, before the build's
  // 20 ms wait for a request ends, however loaded the machine.)
  const std::vector<Tensor> inputs = {random_tensor({1, 3, 8, 8}, 7)};
  const std::vector<Tensor> expected = cpu_reference(graph, inputs);
  ::setenv("HSCHED_OPENCL_TEST_BUILD_DELAY_MS", "1500", 1);
  const auto start = Clock::now();
  auto exe = compile(graph, plan, options);
  const double compile_s = seconds_since(start);
  ASSERT_TRUE(exe.is_ok()) << exe.status().message();
  EXPECT_LT(compile_s, 1.0) << "compile() waited for the OpenCL build";

  RunRecord first;
  auto outputs = (*exe)->run(inputs, &first);
  ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
  EXPECT_EQ(first.plan, "cpu");
  for (const PartitionRun& run : first.partitions) EXPECT_EQ(run.device, "cpu0");
  expect_close((*outputs)[0], expected[0], 1e-5f, 1e-5f);
  EXPECT_EQ(nodes_on_api((*exe)->plan(), DeviceApi::kOpenCl), 0);

  // Requests keep coming: "cpu", then "partial", then "plan", never back.
  std::map<std::string, int> requests = {{"cpu", 1}};
  std::string last = "cpu";
  RunRecord later;
  RunRecord partial;
  while (seconds_since(start) < 300 && last != "plan") {
    auto more = (*exe)->run(inputs, &later);
    ASSERT_TRUE(more.is_ok()) << more.status().message();
    expect_close((*more)[0], expected[0], 2e-2f, 2e-2f);  // fp16 storage on the device
    const std::map<std::string, int> order = {{"cpu", 0}, {"partial", 1}, {"plan", 2}};
    ASSERT_EQ(order.count(later.plan), 1u) << later.plan;
    ASSERT_GE(order.at(later.plan), order.at(last)) << "went back to " << later.plan;
    if (later.plan == "partial") partial = later;
    ++requests[later.plan];
    last = later.plan;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::unsetenv("HSCHED_OPENCL_TEST_BUILD_DELAY_MS");
  ASSERT_EQ(last, "plan") << "the plan never became ready";
  ASSERT_GT(requests["partial"], 0) << "no request ran between the two builds";
  for (const PartitionRun& run : later.partitions) {
    EXPECT_EQ(run.device, run.partition == 1 ? "cpu0" : gpu);
  }

  const ExecutableStats stats = (*exe)->stats();
  // The builds began once the first request was answered, one after the other.
  EXPECT_GE(stats.plan_started_ms, first.end_ms);
  std::vector<CompileRecord> builds;
  for (const CompileRecord& record : stats.compiles) {
    if (record.device == gpu) builds.push_back(record);
  }
  ASSERT_EQ(builds.size(), 2u);
  // Between the builds the partition built first ran on the device, the other on the CPU.
  ASSERT_EQ(partial.partitions.size(), 3u);
  const int built_first = builds[0].partition;
  ASSERT_TRUE(built_first == 0 || built_first == 2) << built_first;
  EXPECT_EQ(partial.partitions[static_cast<size_t>(built_first)].device, gpu);
  EXPECT_EQ(partial.partitions[static_cast<size_t>(2 - built_first)].device, "cpu0");
  EXPECT_GE(builds[0].end_ms, stats.plan_started_ms + 1500);
  EXPECT_GE(builds[1].start_ms, builds[0].end_ms);
  EXPECT_GE(builds[1].end_ms, builds[1].start_ms + 1500);
  EXPECT_GE(stats.plan_ready_ms, builds[1].end_ms);
  EXPECT_GE(partial.start_ms, builds[0].end_ms);  // one time line, from compile()'s start
  EXPECT_GE(later.start_ms, stats.plan_ready_ms);
  EXPECT_EQ(stats.requests_on_cpu, requests["cpu"]);
  EXPECT_EQ(stats.requests_partial, requests["partial"]);
  EXPECT_TRUE(stats.progressive_error.empty()) << stats.progressive_error;
  EXPECT_GT(nodes_on_api((*exe)->plan(), DeviceApi::kOpenCl), 0);
  EXPECT_GT(stats.programs_built, 0);
}

// Without a request the background build does not wait for one: it begins within
// kFirstRequestWait (20 ms; the bound leaves a loaded machine room) and the plan becomes ready.
TEST_F(ExecutorOpenClTest, ProgressiveStartCompilesWithoutWaitingForARequest) {
  const Graph graph = split_graph();
  ExecutorOptions options;
  options.cache_dir = cache_dir_.path().string();
  options.compile_timeout_ms = 120000;
  options.progressive_start = true;
  auto exe = compile(graph, opencl_plan(graph, Precision::kFp32), options);
  ASSERT_TRUE(exe.is_ok()) << exe.status().message();
  const auto start = Clock::now();
  ExecutableStats stats = (*exe)->stats();
  while (stats.plan_ready_ms < 0 && stats.progressive_error.empty() && seconds_since(start) < 300) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    stats = (*exe)->stats();
  }
  ASSERT_TRUE(stats.progressive_error.empty()) << stats.progressive_error;
  ASSERT_GE(stats.plan_ready_ms, 0) << "the plan never became ready";
  EXPECT_GE(stats.plan_started_ms, 0);
  EXPECT_LT(stats.plan_started_ms, 1000);
  RunRecord record;
  const std::vector<Tensor> inputs = {random_tensor({1, 3, 8, 8}, 9)};
  auto outputs = (*exe)->run(inputs, &record);
  ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
  EXPECT_EQ(record.plan, "plan");
  EXPECT_EQ(stats.requests_on_cpu, 0);
}

TEST(ProgressiveStartTest, AHostOnlyPlanCompilesAtOnce) {
  const Graph graph = split_graph();
  auto target = restrict_devices(discover_target(), "cpu");
  ASSERT_TRUE(target.is_ok()) << target.status().message();
  auto plan = schedule(graph, *target, devices_policy("cpu", Precision::kFp32));
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  ExecutorOptions options;
  options.progressive_start = true;
  auto exe = compile(graph, *plan, options);
  ASSERT_TRUE(exe.is_ok()) << exe.status().message();
  RunRecord record;
  const std::vector<Tensor> inputs = {random_tensor({1, 3, 8, 8}, 8)};
  auto outputs = (*exe)->run(inputs, &record);
  ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
  EXPECT_EQ(record.plan, "plan");
  EXPECT_EQ((*exe)->stats().plan_ready_ms, -1);
  expect_close((*outputs)[0], cpu_reference(graph, inputs)[0], 1e-6f, 1e-6f);
}

}  // namespace
}  // namespace hsched
