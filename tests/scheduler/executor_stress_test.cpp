// Stress: thousands of requests of a split plan (devices cpu and opencl alternating every
// few nodes, so both devices hold several partitions) give, request by request, the outputs of a
// CPU-only plan of the same graph on the same inputs, within the fp32 tolerance of
// executor_models_test (|a-b| <= 1e-4 + 1e-3*|b|).
//
// Requests are issued in rounds, each round one of: a single run(); run() from 2 to 4 threads at
// once (2 requests per thread); a run_stream() batch of 3 to 12 requests with max_in_flight 0 (the
// executor's default), 1, 2 or 4. Every request has its own seeded inputs. The round sequence is
// fixed (seeded), so a failure names a reproducible request.
//
// HSCHED_STRESS_RUNS (default 2000, 200 in the ASan build) is the number of requests of the demo
// CNN (split every node); squeezenet1_1 (split every 3 nodes; from the shared models, skipped when
// absent) gets a tenth of them, at least 10. The tsan label runs this program under
// ThreadSanitizer with HSCHED_STRESS_RUNS=200 (docs/ci.md). CPU programs run with 1 thread
// (ExecutorOptions::cpu_threads): on CI's 2 cores PoCL's threads and the pipeline already fill
// them (2 threads took twice as long), and under ThreadSanitizer kernels must not fan out over the
// uninstrumented OpenMP/TBB runtimes. Also: plan() and stats() read while a stream quarantines,
// and progressive start's switch under three callers. Skipped (never passed) without an OpenCL
// device.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "backends/opencl/opencl_test_util.h"
#include "graph/demo_model.h"
#include "graph/onnx_import.h"
#include "hsched/config.h"
#include "scheduler/config/discover.h"
#include "scheduler/planner/schedule.h"
#include "scheduler/runtime/compile.h"
#include "support/temp_dir.h"

namespace hsched {
namespace {

namespace fs = std::filesystem;

constexpr double kAtol = 1e-4;  // executor_models_test's fp32 tolerance
constexpr double kRtol = 1e-3;
#ifdef HSCHED_STRESS_DEFAULT_RUNS
constexpr int kDefaultRuns =
    HSCHED_STRESS_DEFAULT_RUNS;  // the ASan build (tests/scheduler/CMakeLists.txt)
#else
constexpr int kDefaultRuns = 2000;
#endif
constexpr int kCpuThreads = 1;

int stress_runs() {
  const char* env = std::getenv("HSCHED_STRESS_RUNS");
  if (env == nullptr || *env == '\0') return kDefaultRuns;
  const int runs = std::atoi(env);
  EXPECT_GT(runs, 0) << "HSCHED_STRESS_RUNS=" << env << ": expected a positive count";
  return std::max(runs, 1);
}

// The graph's inputs (all f32, static dims), uniform in [-1, 1) from `seed`.
std::vector<Tensor> seeded_inputs(const Graph& graph, uint32_t seed) {
  std::vector<Tensor> inputs;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (ValueId id : graph.inputs()) {
    const Value& value = graph.value(id);
    EXPECT_EQ(value.dtype, DType::kF32) << "input " << value.name;
    Tensor t(DType::kF32, value.shape.dims);
    for (float& v : t.values<float>()) v = dist(rng);
    inputs.push_back(std::move(t));
  }
  return inputs;
}

// Empty when `actual` matches `expected` within the tolerance, else what differs.
std::string mismatch(const std::vector<Tensor>& actual, const std::vector<Tensor>& expected) {
  if (actual.size() != expected.size()) {
    return std::to_string(actual.size()) + " outputs, expected " + std::to_string(expected.size());
  }
  for (size_t k = 0; k < expected.size(); ++k) {
    if (actual[k].dims() != expected[k].dims()) {
      return "output " + std::to_string(k) + " has dims " + actual[k].shape().to_string() +
             ", expected " + expected[k].shape().to_string();
    }
    const auto a = actual[k].values<float>();
    const auto b = expected[k].values<float>();
    for (size_t i = 0; i < b.size(); ++i) {
      const double diff = std::abs(static_cast<double>(a[i]) - b[i]);
      if (!(diff <= kAtol + kRtol * std::abs(b[i]))) {  // NaN fails too
        std::ostringstream out;
        out << "output " << k << " element " << i << ": " << a[i] << " vs CPU " << b[i];
        return out.str();
      }
    }
  }
  return {};
}

// Failures from any thread; checked by the test's thread (gtest assertions stay on it).
class Failures {
 public:
  void add(int request, const std::string& what, const std::string& message) {
    count_.fetch_add(1);
    std::lock_guard<std::mutex> lock(mutex_);
    if (messages_.size() < kKept) {
      messages_.push_back("request " + std::to_string(request) + " (" + what + "): " + message);
    }
  }
  int count() const { return count_.load(); }
  std::string text() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::string text;
    for (const std::string& m : messages_) text += "  " + m + "\n";
    return text;
  }

 private:
  static constexpr size_t kKept = 10;
  std::atomic<int> count_{0};
  mutable std::mutex mutex_;
  std::vector<std::string> messages_;
};

// A request's record covers every partition of the plan, each inside the request's span.
std::string record_problem(const RunRecord& record, size_t partitions) {
  if (record.partitions.size() != partitions) {
    return "record has " + std::to_string(record.partitions.size()) + " partitions, plan " +
           std::to_string(partitions);
  }
  if (record.end_ms < record.start_ms) return "record ends before it starts";
  for (const PartitionRun& run : record.partitions) {
    if (run.end_ms < run.start_ms || run.start_ms < record.start_ms || run.end_ms > record.end_ms) {
      return "partition " + std::to_string(run.partition) + " runs outside the request's span";
    }
  }
  return {};
}

struct Request {
  int index = 0;
  std::vector<Tensor> inputs;
  std::vector<Tensor> expected;  // the CPU-only plan's outputs
};

int count_partitions(const Plan& plan, DeviceApi api) {
  int count = 0;
  for (const Partition& partition : plan.partitions) {
    count += plan.target.find(partition.device)->api == api ? 1 : 0;
  }
  return count;
}

struct StressCase {
  std::string model;  // "demo" or a shared model's folder name
  int split_every = 1;
  int runs_divisor = 1;  // requests: HSCHED_STRESS_RUNS / this (at least kMinRuns)
};

void PrintTo(const StressCase& param, std::ostream* out) {
  *out << param.model << " split every " << param.split_every;
}

class ExecutorStressTest : public ::testing::TestWithParam<StressCase> {
 protected:
  static void SetUpTestSuite() { cache_dir_ = new test::TempDir(); }
  static void TearDownTestSuite() {
    delete cache_dir_;
    cache_dir_ = nullptr;
  }
  static test::TempDir* cache_dir_;  // PoCL programs build once for the suite
};
test::TempDir* ExecutorStressTest::cache_dir_ = nullptr;

constexpr int kMinRuns = 10;

TEST_P(ExecutorStressTest, SplitPlanMatchesCpuPlanUnderConcurrentRequests) {
  const StressCase& param = GetParam();
  if (!opencl_test::first_device()) GTEST_SKIP() << "no OpenCL platform or device";
  const fs::path path = test::models_dir() / param.model / "model.onnx";
  if (param.model != "demo" && !fs::exists(path)) GTEST_SKIP() << "no model at " << path;
  Result<Graph> graph = param.model == "demo" ? build_demo_graph() : import_onnx_file(path, {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();

  const Target here = discover_target();
  auto split_target = restrict_devices(here, "cpu,opencl");
  ASSERT_TRUE(split_target.is_ok()) << split_target.status().message();
  Policy split_policy = devices_policy("cpu,opencl", Precision::kFp32);
  split_policy.split_every = param.split_every;
  auto split_plan = schedule(*graph, *split_target, split_policy);
  ASSERT_TRUE(split_plan.is_ok()) << split_plan.status().message();
  // Several partitions on each device, so requests cross devices back and forth.
  ASSERT_GE(count_partitions(*split_plan, DeviceApi::kOpenCl), 2);
  ASSERT_GE(count_partitions(*split_plan, DeviceApi::kHost), 2);

  auto cpu_target = restrict_devices(here, "cpu");
  ASSERT_TRUE(cpu_target.is_ok()) << cpu_target.status().message();
  auto cpu_plan = schedule(*graph, *cpu_target, devices_policy("cpu", Precision::kFp32));
  ASSERT_TRUE(cpu_plan.is_ok()) << cpu_plan.status().message();
  ASSERT_EQ(cpu_plan->partitions.size(), 1u);

  ExecutorOptions options;
  options.cache_dir = cache_dir_->path().string();
  options.compile_timeout_ms = 600000;  // PoCL under ThreadSanitizer builds slowly; not the point
  options.cpu_threads = kCpuThreads;
  auto split_exe = compile(*graph, *split_plan, options);
  ASSERT_TRUE(split_exe.is_ok()) << split_exe.status().message();
  ASSERT_EQ((*split_exe)->stats().replans, 0) << "a partition failed to compile";
  const size_t partitions = (*split_exe)->plan().partitions.size();
  auto cpu_exe = compile(*graph, *cpu_plan, options);
  ASSERT_TRUE(cpu_exe.is_ok()) << cpu_exe.status().message();

  const int runs = std::max(stress_runs() / param.runs_divisor, kMinRuns);
  Failures failures;
  // A request with its seeded inputs and the CPU-only plan's outputs for them.
  auto make_request = [&](int index) {
    Request request{index, seeded_inputs(*graph, 1000u + static_cast<uint32_t>(index)), {}};
    auto expected = (*cpu_exe)->run(request.inputs);
    if (expected.is_ok()) {
      request.expected = std::move(expected).value();
    } else {
      failures.add(index, "CPU-only plan", expected.status().message());
    }
    return request;
  };
  auto check = [&](const Request& request, const std::string& what,
                   const Result<std::vector<Tensor>>& outputs, const RunRecord& record) {
    std::string problem =
        outputs.is_ok() ? mismatch(*outputs, request.expected) : outputs.status().message();
    if (problem.empty()) problem = record_problem(record, partitions);
    if (!problem.empty()) failures.add(request.index, what, problem);
  };

  std::mt19937 rounds(20261124);
  int issued = 0, sequential = 0, threaded = 0, streamed = 0;
  const auto start = std::chrono::steady_clock::now();
  while (issued < runs && failures.count() == 0) {
    const int kind = static_cast<int>(rounds() % 3);
    if (kind == 0) {  // one run() on this thread
      const Request request = make_request(issued++);
      RunRecord record;
      check(request, "run", (*split_exe)->run(request.inputs, &record), record);
      ++sequential;
    } else if (kind == 1) {  // run() from 2 to 4 threads at once, 2 requests each
      const int threads = 2 + static_cast<int>(rounds() % 3);
      std::vector<Request> requests;
      for (int i = 0; i < 2 * threads && issued < runs; ++i)
        requests.push_back(make_request(issued++));
      std::vector<std::thread> workers;
      for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&, t] {
          for (size_t i = static_cast<size_t>(t); i < requests.size();
               i += static_cast<size_t>(threads)) {
            RunRecord record;
            auto outputs = (*split_exe)->run(requests[i].inputs, &record);
            check(requests[i], "run from " + std::to_string(threads) + " threads", outputs, record);
          }
        });
      }
      for (std::thread& worker : workers) worker.join();
      threaded += static_cast<int>(requests.size());
    } else {  // one run_stream() batch
      const int batch = 3 + static_cast<int>(rounds() % 10);
      const int max_in_flight = std::vector<int>{0, 1, 2, 4}[rounds() % 4];
      std::vector<Request> requests;
      std::vector<std::vector<Tensor>> inputs;
      for (int i = 0; i < batch && issued < runs; ++i) {
        requests.push_back(make_request(issued++));
        inputs.push_back(requests.back().inputs);
      }
      std::vector<RunRecord> records;
      auto outputs = (*split_exe)->run_stream(inputs, max_in_flight, &records);
      const std::string what = "run_stream of " + std::to_string(requests.size()) +
                               ", max_in_flight " + std::to_string(max_in_flight);
      if (!outputs.is_ok()) {
        failures.add(requests.front().index, what, outputs.status().message());
      } else if (outputs->size() != requests.size() || records.size() != requests.size()) {
        failures.add(requests.front().index, what,
                     std::to_string(outputs->size()) + " outputs and " +
                         std::to_string(records.size()) + " records");
      } else {
        for (size_t i = 0; i < requests.size(); ++i) {
          check(requests[i], what, (*outputs)[i], records[i]);
        }
      }
      streamed += static_cast<int>(requests.size());
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << param.model << " split every " << param.split_every << " (" << partitions
            << " partitions): " << issued << " requests in " << seconds << " s (" << sequential
            << " run(), " << threaded << " run() from threads, " << streamed
            << " in run_stream), CPU-only references included\n";
  EXPECT_EQ(failures.count(), 0) << failures.count() << " requests failed; the first:\n"
                                 << failures.text();
  if (failures.count() == 0) {
    EXPECT_EQ(issued, runs);
  }
  EXPECT_EQ((*split_exe)->stats().quarantined, 0);
}

// plan(), stats() and quarantines() may be read from any thread while a stream runs: a planted
// wrong output makes verification quarantine a device partition mid-stream (the executor then
// rewrites its plan), while another thread keeps reading. ThreadSanitizer (label tsan) reports a
// race if the readers see the plan other than through the executor's lock.
TEST(ExecutorReadersTest, PlanAndStatsReadableWhileAStreamQuarantines) {
  if (!opencl_test::first_device()) GTEST_SKIP() << "no OpenCL platform or device";
  Result<Graph> graph = build_demo_graph();
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  auto target = restrict_devices(discover_target(), "cpu,opencl");
  ASSERT_TRUE(target.is_ok()) << target.status().message();
  Policy policy = devices_policy("cpu,opencl", Precision::kFp32);
  policy.split_every = 1;
  auto plan = schedule(*graph, *target, policy);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  int planted = -1;
  for (size_t p = 0; p < plan->partitions.size() && planted < 0; ++p) {
    if (plan->target.find(plan->partitions[p].device)->api == DeviceApi::kOpenCl) {
      planted = static_cast<int>(p);
    }
  }
  ASSERT_GE(planted, 0) << "no OpenCL partition";

  test::TempDir cache_dir;
  ExecutorOptions options;
  options.cache_dir = cache_dir.path().string();
  options.compile_timeout_ms = 600000;
  options.cpu_threads = kCpuThreads;
  options.verify = true;
  std::atomic<int> device_runs{0};
  const runtime::ScopedDeviceOutputHook hook([&](int partition, std::vector<Tensor>& outputs) {
    // The third run of the planted partition is wrong: the stream is under way by then.
    if (partition == planted && device_runs.fetch_add(1) == 2) outputs[0].values<float>()[0] += 1;
    return Status::ok();
  });
  auto exe = compile(*graph, *plan, options);
  ASSERT_TRUE(exe.is_ok()) << exe.status().message();

  std::atomic<bool> streaming{true};
  std::atomic<int> reads{0};
  std::thread reader([&] {
    while (streaming.load()) {
      const Plan now = (*exe)->plan();
      const ExecutableStats stats = (*exe)->stats();
      const std::vector<Quarantine> quarantines = (*exe)->quarantines();
      if (!now.partitions.empty() && stats.quarantined >= 0 && quarantines.size() <= 1) {
        reads.fetch_add(1);
      }
    }
  });
  std::vector<std::vector<Tensor>> requests;
  for (uint32_t i = 0; i < 12; ++i) requests.push_back(seeded_inputs(*graph, 500u + i));
  auto outputs = (*exe)->run_stream(requests, 4);
  streaming.store(false);
  reader.join();
  ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
  EXPECT_GT(reads.load(), 0);
  EXPECT_EQ((*exe)->stats().quarantined, 1);
  EXPECT_EQ((*exe)->plan().partitions[static_cast<size_t>(planted)].device, "cpu0");
}

// Progressive start under concurrent callers: three threads run requests (and one reads plan()
// and stats()) while the background compile finishes and requests switch to the plan; every
// output equals the CPU plan's within the fp32 tolerance, and some requests ran on each plan.
TEST(ExecutorProgressiveTest, CallersAcrossTheSwitchGetCorrectOutputs) {
  if (!opencl_test::first_device()) GTEST_SKIP() << "no OpenCL platform or device";
  Result<Graph> graph = build_demo_graph();
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  auto target = restrict_devices(discover_target(), "opencl");
  ASSERT_TRUE(target.is_ok()) << target.status().message();
  auto plan = schedule(*graph, *target, devices_policy("opencl", Precision::kFp32));
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  test::TempDir cache_dir;
  ExecutorOptions options;
  options.cache_dir = cache_dir.path().string();
  options.compile_timeout_ms = 600000;
  options.cpu_threads = kCpuThreads;
  options.progressive_start = true;
  auto exe = compile(*graph, *plan, options);
  ASSERT_TRUE(exe.is_ok()) << exe.status().message();
  const std::vector<Tensor> inputs = seeded_inputs(*graph, 900u);
  auto host = restrict_devices(discover_target(), "cpu");
  ASSERT_TRUE(host.is_ok()) << host.status().message();
  auto cpu_plan = schedule(*graph, *host, devices_policy("cpu", Precision::kFp32));
  ASSERT_TRUE(cpu_plan.is_ok()) << cpu_plan.status().message();
  ExecutorOptions cpu_options;  // one thread too: no kernel fans out over the OpenMP team
  cpu_options.cpu_threads = kCpuThreads;
  auto cpu_exe = compile(*graph, *cpu_plan, cpu_options);
  ASSERT_TRUE(cpu_exe.is_ok()) << cpu_exe.status().message();
  auto expected = (*cpu_exe)->run(inputs);
  ASSERT_TRUE(expected.is_ok()) << expected.status().message();

  std::atomic<bool> switched{false};
  std::atomic<int> on_cpu{0}, on_plan{0}, wrong{0};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(10);
  auto caller = [&] {
    while (std::chrono::steady_clock::now() < deadline && on_plan.load() < 6) {
      RunRecord record;
      auto outputs = (*exe)->run(inputs, &record);
      if (!outputs.is_ok() || !mismatch(*outputs, *expected).empty()) ++wrong;
      (record.plan == "cpu" ? on_cpu : on_plan).fetch_add(1);
      if (record.plan == "plan") switched.store(true);
      // Leave the background compile (nice 19) some of the cores three callers would fill.
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  };
  std::atomic<int> bad_reads{0};
  std::thread reader([&] {
    while (on_plan.load() < 6 && std::chrono::steady_clock::now() < deadline) {
      const Plan now = (*exe)->plan();
      const ExecutableStats stats = (*exe)->stats();
      if (now.partitions.empty() || stats.requests_on_cpu < 0) ++bad_reads;
    }
  });
  std::vector<std::thread> callers;
  for (int t = 0; t < 3; ++t) callers.emplace_back(caller);
  for (std::thread& t : callers) t.join();
  reader.join();
  EXPECT_TRUE(switched.load()) << "the plan never became ready";
  EXPECT_GT(on_cpu.load(), 0);
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(bad_reads.load(), 0);
  EXPECT_EQ((*exe)->stats().requests_on_cpu, on_cpu.load());
}

INSTANTIATE_TEST_SUITE_P(Models, ExecutorStressTest,
                         ::testing::Values(StressCase{"demo", 1, 1},
                                           StressCase{"squeezenet1_1", 3, 10}),
                         [](const auto& info) {
                           return info.param.model + "_split" +
                                  std::to_string(info.param.split_every);
                         });

}  // namespace
}  // namespace hsched
