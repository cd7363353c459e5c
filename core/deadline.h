// Work with a deadline, for the backends' drivers (OpenCL program builds, Level Zero graph
// builds and loads): a driver call that takes too long must not hang the caller, who falls back
// to the CPU instead.
//
// Work past its deadline goes on alone on its worker thread, possibly inside a driver. Such a
// worker must never meet a process that exits: static destructors (the driver's, its compiler's)
// would run under it. Every worker is counted; `exit_process` waits a bounded time for them and,
// when some are still running, ends the process without running destructors. The CLI ends
// through it; for a program that embeds hsched (returns from main() or calls exit()), an exit
// handler does the same bounded wait before any static destructor runs, whenever it was made,
// and keeps the status given to exit(). That holds for exit() from the thread that loaded hsched
// or from one that started a worker; exit() from another thread gets the handler registered with
// the first worker, which statics made later (e.g. by a running build) precede.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include "hsched/process.h"
#include "hsched/status.h"

namespace hsched {

// The deadline of a device compiler's build or cached load when nothing sets one (the deployment
// files' default compile_timeout_ms).
inline constexpr int64_t kDefaultCompileDeadlineMs = 30000;

// How long exit_process() and the exit handler wait for running workers, in ms.
inline constexpr int64_t kExitWaitMs = 2000;

namespace deadline_detail {
// Runs `work` on a new worker thread, counted from now until `work` has returned and its
// captures are destroyed; the thread is joined later (the next start, or exit). Registers the
// exit handler on first use. Throws std::system_error when no thread can be started.
void start_worker(std::function<void()> work);
}  // namespace deadline_detail

// Workers still running (started by run_with_deadline, not yet finished).
int background_workers();

// Waits at most `bound_ms` for every worker to finish, and joins those that have; true when
// none is left.
bool wait_for_background_workers(int64_t bound_ms);


// Runs `work` on a worker thread and waits at most `deadline_ms` for its result. Past the
// deadline the caller gets DeadlineExceeded "compile_timeout: <what> exceeded the N ms deadline"
// and `work` carries on alone: it must own what it touches (capture by value or shared_ptr). An
// exception thrown by `work` becomes an Internal error (never std::terminate). Internal when no
// thread can be started.
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
    deadline_detail::start_worker([state, work = std::move(work), what]() mutable {
      std::optional<Result<T>> result;
      try {
        result.emplace(work());
      } catch (const std::exception& error) {
        result.emplace(internal_error(what + " threw: " + error.what()));
      } catch (...) {
        result.emplace(internal_error(what + " threw an unknown exception"));
      }
      work = nullptr;  // its captures (driver objects) go while the worker still counts
      std::lock_guard<std::mutex> lock(state->mutex);
      state->result = std::move(result);
      state->done_cv.notify_all();
    });
  } catch (const std::system_error& error) {  // no thread to be had (resource limits)
    return internal_error("cannot start a thread for " + what + ": " + error.what());
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

}  // namespace hsched
