// Builds OpenCL programs under a deadline, through the program cache.
//
// build(): a cached binary for (device, driver, source, options) is loaded and built on the
// calling thread (fast: no front end). Otherwise the source is built on a worker thread and the
// caller waits at most the deadline. Past it the caller gets DeadlineExceeded
// ("compile_timeout: ...") and the worker carries on, detached: when it finishes it stores the
// binary, so the next process loads it. The worker owns (shared_ptr) everything it touches, so
// neither the Compiler nor the caller must outlive it, and the process never waits for it at
// exit.
//
// Threading: build() may be called from several threads at once.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <thread>

#include "backends/opencl/opencl.h"
#include "backends/opencl/program_cache.h"
#include "hsched/status.h"

namespace hsched::opencl {

inline constexpr int64_t kDefaultCompileDeadlineMs = 30000;  // the deploy files' default
// Test hook: milliseconds a source build sleeps before starting (to test the deadline).
inline constexpr const char* kBuildDelayEnv = "HSCHED_OPENCL_TEST_BUILD_DELAY_MS";

struct BuildRequest {
  std::string source;   // OpenCL C
  std::string options;  // clBuildProgram options: "-cl-std=CL1.2 -D..."
  int64_t deadline_ms = kDefaultCompileDeadlineMs;
  // Test hook: a source build first sleeps this long; < 0 reads $HSCHED_OPENCL_TEST_BUILD_DELAY_MS
  // (unset: no delay).
  int64_t test_delay_ms = -1;
};

class Compiler {
 public:
  // `cache` must not be null (a disabled cache is fine); it is shared with background builds.
  explicit Compiler(std::shared_ptr<ProgramCache> cache);

  // The program for `device` (one device of `context`), built.
  // Errors: DeadlineExceeded "compile_timeout: ..." past the deadline; Internal "build_failed:
  // ..." with the first lines of the build log; Internal naming the OpenCL call that failed.
  Result<cl::Program> build(const cl::Context& context, const cl::Device& device,
                            const BuildRequest& request);
  Result<cl::Program> build(const cl::Context& context, const cl::Device& device,
                            const std::string& source, const std::string& options,
                            int64_t deadline_ms);

  const std::shared_ptr<ProgramCache>& cache() const { return cache_; }

 private:
  std::shared_ptr<ProgramCache> cache_;
};

// Runs `work` on a detached thread and waits at most `deadline_ms` for its result. Past the
// deadline the caller gets DeadlineExceeded "compile_timeout: <what> exceeded the N ms deadline"
// and `work` carries on alone: it must own what it touches (capture by value or shared_ptr), and
// nobody waits for it, the process at exit included. Internal when no thread can be started.
template <typename T>
Result<T> run_with_deadline(std::function<Result<T>()> work, int64_t deadline_ms,
                            const std::string& what) {
  struct State {
    std::mutex mutex;
    std::condition_variable done_cv;
    std::optional<Result<T>> result;
  };
  auto state = std::make_shared<State>();
  try {
    std::thread([state, work = std::move(work)] {
      Result<T> result = work();
      std::lock_guard<std::mutex> lock(state->mutex);
      state->result.emplace(std::move(result));
      state->done_cv.notify_all();
    }).detach();
  } catch (const std::system_error& error) {  // no thread to be had (resource limits)
    return internal_error("opencl: cannot start a thread for " + what + ": " + error.what());
  }
  std::unique_lock<std::mutex> lock(state->mutex);
  if (!state->done_cv.wait_for(lock, std::chrono::milliseconds(std::max<int64_t>(0, deadline_ms)),
                               [&] { return state->result.has_value(); })) {
    return Status(ErrorCode::kDeadlineExceeded,
                  "compile_timeout: " + what + " exceeded the " + std::to_string(deadline_ms) +
                      " ms deadline; it goes on in the background");
  }
  return std::move(*state->result);
}

// The binary of a built single-device program (CL_PROGRAM_BINARIES); empty on failure.
ProgramCache::Binary program_binary(const cl::Program& program);

}  // namespace hsched::opencl
