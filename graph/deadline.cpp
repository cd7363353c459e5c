#include "graph/deadline.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>

namespace hsched {
namespace {

// Function-local statics would be destroyed at exit while a worker still counts itself out:
// these live for the whole process (never destroyed).
struct Workers {
  std::mutex mutex;
  std::condition_variable idle_cv;
  int running = 0;
};

Workers& workers() {
  static Workers* instance = new Workers();
  return *instance;
}

void flush_output() {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
}

// At exit of a program that embeds hsched and did not end through exit_process(): the same
// bounded wait, then, when workers still run, the end with exit()'s status and without the
// destructors still to come. on_exit (glibc) rather than atexit: it is given that status.
void wait_at_exit(int status, void* /*unused*/) {
  if (wait_for_background_workers(kExitWaitMs)) return;
  flush_output();
  _exit(status);
}

}  // namespace

namespace deadline_detail {

void worker_started() {
  static const bool registered = on_exit(wait_at_exit, nullptr) == 0;
  (void)registered;
  std::lock_guard<std::mutex> lock(workers().mutex);
  ++workers().running;
}

void worker_finished() {
  std::lock_guard<std::mutex> lock(workers().mutex);
  if (--workers().running == 0) workers().idle_cv.notify_all();
}

}  // namespace deadline_detail

int background_workers() {
  std::lock_guard<std::mutex> lock(workers().mutex);
  return workers().running;
}

bool wait_for_background_workers(int64_t bound_ms) {
  std::unique_lock<std::mutex> lock(workers().mutex);
  return workers().idle_cv.wait_for(lock, std::chrono::milliseconds(std::max<int64_t>(0, bound_ms)),
                                    [] { return workers().running == 0; });
}

void exit_process(int code) {
  flush_output();
  if (wait_for_background_workers(kExitWaitMs)) std::exit(code);
  _exit(code);
}

}  // namespace hsched
