#include "backends/cpu/host_thread.h"

#include <exception>
#include <future>
#include <iostream>
#include <utility>

namespace hsched::cpu {

WorkThread::WorkThread() : thread_([this] { loop(); }) {}

WorkThread::~WorkThread() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void WorkThread::post(std::function<void()> work) {
  std::lock_guard<std::mutex> lock(mutex_);
  jobs_.push_back(std::move(work));
  wake_.notify_one();  // under the lock: the destructor's lock orders it before the cv dies
}

void WorkThread::loop() {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
      if (jobs_.empty()) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    try {
      job();
    } catch (const std::exception& error) {  // a contract broken: say so rather than terminate
      std::cerr << "hsched: a work thread's job threw: " << error.what() << "\n";
    } catch (...) {
      std::cerr << "hsched: a work thread's job threw an unknown exception\n";
    }
  }
}

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
