#include "core/work_thread.h"

#include <exception>
#include <iostream>
#include <utility>

namespace hsched {

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

}  // namespace hsched
