#include "core/deadline.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <list>

namespace hsched {
namespace {

// Every worker thread, joinable: a worker that has returned from its work may still be running
// its thread-local destructors (the drivers' and libraries' own), so "done" is not "gone" until
// it is joined. Finished workers are joined when the next one starts and at exit.
struct Worker {
  std::thread thread;
  bool done = false;  // its work has returned (under Workers::mutex)
};

// Never destroyed: a static destroyed at exit could be in use by a worker still counting out.
struct Workers {
  std::mutex mutex;
  std::condition_variable done_cv;
  std::list<Worker> list;
  int running = 0;  // entries not done
};

Workers& workers() {
  static Workers* instance = new Workers();
  return *instance;
}

// Joins the workers that are done; with `all`, first waits up to `bound_ms` for every worker to
// be done. True when no worker is left.
bool join_finished(bool all, int64_t bound_ms) {
  std::list<Worker> finished;
  bool none_left = false;
  {
    std::unique_lock<std::mutex> lock(workers().mutex);
    if (all) {
      workers().done_cv.wait_for(lock, std::chrono::milliseconds(std::max<int64_t>(0, bound_ms)),
                                 [] { return workers().running == 0; });
    }
    for (auto it = workers().list.begin(); it != workers().list.end();) {
      const auto next = std::next(it);
      if (it->done) finished.splice(finished.end(), workers().list, it);
      it = next;
    }
    none_left = workers().list.empty();
  }
  for (Worker& worker : finished) worker.thread.join();  // returns once its TLS is torn down
  return none_left;
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

// exit() calls its handlers and static destructors newest first, so a handler registered once
// comes too late for every static made after it: a driver's (or hsched's) function-local statics
// are often first made inside the very build a worker is still running (the simulated NPU's IR
// reader tables), and were destroyed under it. What exit() does before that list is destroy the
// exiting thread's thread_local objects. An ExitGuard lives in the thread that loads hsched (the
// main thread: returning from main() is exit()) and in each thread that starts a worker; its
// destructor registers wait_at_exit anew while workers exist, which puts it ahead of every static
// destructor. At a plain thread end (not exit) that only adds one more, harmless, handler.
struct ExitGuard {
  ~ExitGuard() {
    bool any = false;
    {
      std::lock_guard<std::mutex> lock(workers().mutex);
      any = !workers().list.empty();
    }
    if (any) on_exit(wait_at_exit, nullptr);
  }
};

void guard_this_thread() {
  static thread_local ExitGuard guard;
  (void)guard;
}

// The loading thread's guard, made at load time.
const bool g_loader_guarded = (guard_this_thread(), true);

}  // namespace

namespace deadline_detail {

void start_worker(std::function<void()> work) {
  static const bool registered = on_exit(wait_at_exit, nullptr) == 0;  // exit from elsewhere
  (void)registered;
  guard_this_thread();
  join_finished(false, 0);
  std::lock_guard<std::mutex> lock(workers().mutex);
  const auto entry = workers().list.emplace(workers().list.end());
  try {
    entry->thread = std::thread([entry, work = std::move(work)]() mutable {
      work();
      work = nullptr;  // its captures (driver objects) go before the worker counts as done
      std::lock_guard<std::mutex> done_lock(workers().mutex);
      entry->done = true;
      if (--workers().running == 0) workers().done_cv.notify_all();
    });
  } catch (...) {  // no thread to be had: the caller reports it
    workers().list.erase(entry);
    throw;
  }
  ++workers().running;  // under the lock the worker needs to count itself out
}

}  // namespace deadline_detail

int background_workers() {
  std::lock_guard<std::mutex> lock(workers().mutex);
  return workers().running;
}

bool wait_for_background_workers(int64_t bound_ms) { return join_finished(true, bound_ms); }

void exit_process(int code) {
  flush_output();
  if (wait_for_background_workers(kExitWaitMs)) std::exit(code);
  _exit(code);
}

}  // namespace hsched
