// Work with a deadline, for the backends' compilers (OpenCL programs, Level Zero graphs): a
// compile that takes too long must not hang the caller, who falls back to the CPU instead.
#pragma once

#include <algorithm>
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
#include <utility>

#include "hsched/status.h"

namespace hsched {

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
