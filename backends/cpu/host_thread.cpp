#include "backends/cpu/host_thread.h"

#include <future>
#include <utility>

namespace hsched::cpu {

namespace {

WorkThread& host_thread() {
  static WorkThread thread;
  return thread;
}

}  // namespace

void run_on_host_thread(const std::function<void()>& work) {
  WorkThread& thread = host_thread();
  if (thread.is_current()) {
    work();
    return;
  }
  std::packaged_task<void()> task(work);
  std::future<void> done = task.get_future();
  thread.post([&task] { task(); });
  done.get();
}

void post_to_host_thread(std::function<void()> work) { host_thread().post(std::move(work)); }

}  // namespace hsched::cpu
