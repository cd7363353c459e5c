// Progressive start (ExecutorOptions::progressive_start): the whole model on the CPU at once,
// the plan's partitions compiled on one background thread, requests switching to each once it is
// ready. And the public compile(), which takes that path or compiles at once (compile_plan.cpp).
#include "scheduler/runtime/progressive.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <system_error>
#include <utility>
#include <vector>

#include "core/deadline.h"
#include "core/heap.h"
#include "hsched/config.h"
#include "hsched/model.h"
#include "scheduler/planner/schedule.h"
#include "scheduler/runtime/compile.h"
#include "scheduler/runtime/partition_program.h"

namespace hsched {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// What the background compile publishes; shared with its worker, which may outlive the
// executable (see ~ProgressiveExecutable).
struct Background {
  std::mutex mutex;
  std::condition_variable done_cv;
  std::condition_variable first_request_cv;
  bool first_request_started = false;
  bool first_request_done = false;
  bool done = false;
  // The plan staged (its time line compile()'s), once one of its device partitions is built.
  std::shared_ptr<runtime::PlanExecutable> staged;
  // The plan compiled whole when staging failed, its time line from `started_ms`; set once.
  std::unique_ptr<Executable> planned;
  double started_ms = -1;  // when the compile began, ms from compile()'s start
  double ready_ms = -1;
  std::string error;
};

// How long the background compile waits for a first request to start before it begins anyway.
constexpr std::chrono::milliseconds kFirstRequestWait{20};

// Blocks the background compile until the first request is answered, or until
// kFirstRequestWait passes with no request started: where the requests' threads take every core,
// even a nice-19 compile takes time from the first answer (page faults, lock holders, cores
// woken late), and the first answer is what progressive start exists for.
// Notes when it let the compile begin.
void wait_for_the_first_answer(Background& state, Clock::time_point start) {
  std::unique_lock<std::mutex> lock(state.mutex);
  state.first_request_cv.wait_for(lock, kFirstRequestWait,
                                  [&] { return state.first_request_started; });
  state.first_request_cv.wait(
      lock, [&] { return !state.first_request_started || state.first_request_done; });
  state.started_ms = ms_since(start);
}

// Stages `plan` (compile_staged) and builds its device partitions one after another, the
// quickest predicted builds first (Partition::compile_ms; plan order among equals), so requests
// gain devices soonest: a GPU's partitions need not wait behind an NPU's minutes-long graph build.
// Publishes the staged executable in `state` once the first is built. An error leaves the
// partitions not yet built on the CPU.
Status compile_in_stages(Background& state, const Graph& graph, std::shared_ptr<const Graph> owner,
                         const Plan& plan, const ExecutorOptions& options,
                         Clock::time_point start) {
  runtime::PartitionCompiler compiler(options);
  HSCHED_ASSIGN_OR_RETURN(std::shared_ptr<runtime::PlanExecutable> staged,
                          runtime::compile_staged(graph, owner, plan, options, compiler, start));
  std::vector<size_t> order = staged->staged();
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return plan.partitions[a].compile_ms < plan.partitions[b].compile_ms;
  });
  for (size_t p : order) {
    HSCHED_RETURN_IF_ERROR(runtime::compile_staged_partition(*staged, plan, p, compiler));
    std::lock_guard<std::mutex> lock(state.mutex);
    state.staged = staged;
  }
  std::lock_guard<std::mutex> lock(state.mutex);
  state.ready_ms = ms_since(start);
  return Status::ok();
}

// The background compile: the plan in stages, and compiled whole (re-planned) if that fails.
void compile_in_background(Background& state, const Graph& graph,
                           std::shared_ptr<const Graph> owner, const Plan& plan,
                           const ExecutorOptions& options, Clock::time_point start) {
  // The lowest priority (nice 19; threads it starts inherit it): on a machine whose cores
  // the CPU path keeps busy, the compile takes what they leave, not the requests' time.
  setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 19);
  wait_for_the_first_answer(state, start);
  Status staged = compile_in_stages(state, graph, owner, plan, options, start);
  release_free_heap_memory();
  if (!staged.is_ok()) {
    auto compiled = compile_now(graph, owner, plan, options);
    std::lock_guard<std::mutex> lock(state.mutex);
    if (compiled.is_ok()) {
      state.planned = std::move(compiled).value();
      state.ready_ms = ms_since(start);
    } else {
      state.error = compiled.status().message();
    }
  }
  std::lock_guard<std::mutex> lock(state.mutex);
  state.done = true;
  state.done_cv.notify_all();
}

// Threading: run() and run_stream() may be called while the background compile runs; the
// executable in use is read under the mutex and stays alive while the executable does.
class ProgressiveExecutable final : public Executable {
 public:
  ProgressiveExecutable(std::unique_ptr<Executable> cpu, Clock::time_point start, double cpu_ms)
      : cpu_(std::move(cpu)), start_(start), cpu_compile_ms_(cpu_ms) {}

  // The compile runs on a deadline worker (core/deadline.h), which exit_process() and the exit
  // handler wait for within bounds. With an owner keeping the graph alive it is let go (it ends
  // within the partitions' deadlines and drops what it built): destroying the executable never
  // waits for a driver's build. Without one it is waited for, since it reads the caller's graph.
  ~ProgressiveExecutable() override {
    if (owns_graph_) return;
    std::unique_lock<std::mutex> lock(background_->mutex);
    background_->done_cv.wait(lock, [&] { return background_->done; });
  }

  // Starts compiling `plan` in the background (once).
  void compile_plan_in_background(const Graph& graph, std::shared_ptr<const Graph> owner, Plan plan,
                                  ExecutorOptions options) {
    owns_graph_ = owner != nullptr;
    auto work = [state = background_, start = start_, &graph, owner = std::move(owner),
                 plan = std::move(plan), options = std::move(options)] {
      compile_in_background(*state, graph, owner, plan, options, start);
    };
    try {
      deadline_detail::start_worker(std::move(work));
    } catch (const std::system_error& error) {
      std::lock_guard<std::mutex> lock(background_->mutex);
      background_->error = std::string("no thread for the background compile: ") + error.what();
      background_->done = true;
    }
  }

  Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs, RunRecord* record) override {
    const auto [exe, offset_ms] = begin_request();
    auto outputs = exe->run(inputs, record);
    finish(record, exe, offset_ms, 1);
    return outputs;
  }

  Result<std::vector<std::vector<Tensor>>> run_stream(
      const std::vector<std::vector<Tensor>>& requests, int max_in_flight,
      std::vector<RunRecord>* records) override {
    const auto [exe, offset_ms] = begin_request();
    auto outputs = exe->run_stream(requests, max_in_flight, records);
    if (records != nullptr) {
      for (RunRecord& record : *records) finish(&record, exe, offset_ms, 0);
    }
    finish(nullptr, exe, offset_ms, static_cast<int64_t>(requests.size()));
    return outputs;
  }

  Plan plan() const override { return current().first->plan(); }

  ExecutableStats stats() const override {
    const auto [exe, offset_ms] = current();
    ExecutableStats stats = exe->stats();
    stats.compile_ms = cpu_compile_ms_;  // what compile() took; the plan's: plan_ready_ms
    std::lock_guard<std::mutex> lock(background_->mutex);
    stats.plan_started_ms = background_->started_ms;
    stats.plan_ready_ms = background_->ready_ms;
    stats.requests_on_cpu = requests_on_cpu_;
    if (background_->staged) stats.requests_partial = background_->staged->stats().requests_partial;
    stats.progressive_error = background_->error;
    return stats;
  }

  std::vector<Quarantine> quarantines() const override { return current().first->quarantines(); }
  Result<Tensor> allocate_input(size_t k) override { return current().first->allocate_input(k); }
  std::vector<StepProfile> profile() const override { return current().first->profile(); }
  void reset_profile() override {
    cpu_->reset_profile();
    std::lock_guard<std::mutex> lock(background_->mutex);
    if (background_->staged) background_->staged->reset_profile();
    if (background_->planned) background_->planned->reset_profile();
  }

 private:
  // The executable requests run on now, and the offset of its time line from compile()'s start.
  std::pair<Executable*, double> current() const {
    std::lock_guard<std::mutex> lock(background_->mutex);
    return current_locked();
  }
  std::pair<Executable*, double> current_locked() const {
    if (background_->planned) return {background_->planned.get(), background_->started_ms};
    if (background_->staged) return {background_->staged.get(), 0.0};
    return {cpu_.get(), 0.0};
  }

  // current(), noting that a request has started.
  std::pair<Executable*, double> begin_request() {
    std::lock_guard<std::mutex> lock(background_->mutex);
    background_->first_request_started = true;
    return current_locked();
  }

  // Puts the record on compile()'s time line, names the whole-model CPU plan, counts its
  // requests; a call without a record ends a request (or a stream of them).
  void finish(RunRecord* record, Executable* exe, double offset_ms, int64_t requests) {
    const bool on_cpu = exe == cpu_.get();
    if (record != nullptr) {
      if (on_cpu) record->plan = "cpu";
      record->start_ms += offset_ms;
      record->end_ms += offset_ms;
      for (PartitionRun& p : record->partitions) {
        p.start_ms += offset_ms;
        p.end_ms += offset_ms;
      }
    }
    if (record != nullptr && requests == 0) return;
    std::lock_guard<std::mutex> lock(background_->mutex);
    if (on_cpu) requests_on_cpu_ += requests;
    background_->first_request_done = true;
    background_->first_request_cv.notify_all();
  }

  std::unique_ptr<Executable> cpu_;
  const Clock::time_point start_;
  const double cpu_compile_ms_;
  std::shared_ptr<Background> background_ = std::make_shared<Background>();
  int64_t requests_on_cpu_ = 0;  // under background_->mutex
  bool owns_graph_ = false;
};

bool runs_off_the_host(const Plan& plan) {
  return std::any_of(plan.partitions.begin(), plan.partitions.end(), [&](const Partition& p) {
    const DeviceProfile* device = plan.target.find(p.device);
    return device != nullptr && device->api != DeviceApi::kHost;
  });
}

}  // namespace

Result<std::unique_ptr<Executable>> compile_progressive(const Graph& graph,
                                                        std::shared_ptr<const Graph> owner,
                                                        const Plan& plan, ExecutorOptions options) {
  options.progressive_start = false;
  if (!runs_off_the_host(plan)) return compile_now(graph, owner, plan, options);
  const Clock::time_point start = Clock::now();
  HSCHED_ASSIGN_OR_RETURN(Target host, restrict_devices(plan.target, "cpu"));
  Policy cpu_policy = devices_policy("cpu", Precision::kFp32);
  cpu_policy.verify = false;
  HSCHED_ASSIGN_OR_RETURN(Plan cpu_plan, schedule(graph, host, cpu_policy));
  cpu_plan.model = plan.model;
  HSCHED_ASSIGN_OR_RETURN(std::unique_ptr<Executable> cpu,
                          compile_now(graph, owner, cpu_plan, options));
  auto progressive =
      std::make_unique<ProgressiveExecutable>(std::move(cpu), start, ms_since(start));
  progressive->compile_plan_in_background(graph, std::move(owner), plan, std::move(options));
  return std::unique_ptr<Executable>(std::move(progressive));
}

Result<std::unique_ptr<Executable>> compile(const Graph& graph, const Plan& plan,
                                            const ExecutorOptions& options) {
  if (options.progressive_start) return compile_progressive(graph, nullptr, plan, options);
  return compile_now(graph, nullptr, plan, options);
}

Result<std::unique_ptr<Executable>> compile(const Model& model, const Plan& plan,
                                            const ExecutorOptions& options) {
  if (options.progressive_start) {
    return compile_progressive(model.graph(), model.shared_graph(), plan, options);
  }
  return compile_now(model.graph(), model.shared_graph(), plan, options);
}

}  // namespace hsched
