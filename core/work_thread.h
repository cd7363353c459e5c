// WorkThread: a thread that runs queued work in order (the host thread of the CPU backend, the
// executor's per-device threads).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace hsched {

// A thread that runs posted work in submission order, one item at a time; the destructor runs
// what is still queued, then joins. Any thread may post. Posted work must report its own
// failures (the executor turns exceptions into request errors); one that still throws is caught
// and named on stderr, and the thread goes on.
class WorkThread {
 public:
  WorkThread();
  ~WorkThread();
  WorkThread(const WorkThread&) = delete;
  WorkThread& operator=(const WorkThread&) = delete;

  void post(std::function<void()> work);
  bool is_current() const { return std::this_thread::get_id() == thread_.get_id(); }

 private:
  void loop();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  bool stop_ = false;
  std::thread thread_;  // last: starts once the rest is built
};

}  // namespace hsched
