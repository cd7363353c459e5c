// Threads that run queued work in order: WorkThread, and the host thread, the one thread of a
// process that runs CPU programs (their oneDNN primitives and OpenMP regions, and the oneTBB
// arena they enter).
//
// Why one host thread: libgomp spins between parallel regions only while the threads it manages
// do not outnumber the CPUs. Every thread that opens a region gets a team of its own, so a second
// such thread (a oneTBB worker running a partition one request, the main thread the next) tips a
// 2-core machine into libgomp's throttled mode for the rest of the process: team threads sleep
// after a few hundred spins and every region pays a futex wake. mobilenet_v3_small measured
// 2.7 ms instead of 1.45 in one process of eight, and calibration's tiny convolutions 0.03 ms
// instead of 0.007 in one run of three. With every region opened on the host thread there is one
// team. (The simulated Level Zero driver links its own copy of this library, so its NPU
// partitions have a host thread of their own.)
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace hsched::cpu {

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

// Runs `work` on the host thread and returns once it has run; on the host thread itself, runs it
// in place (a program run from another program's step). Rethrows what `work` throws.
void run_on_host_thread(const std::function<void()>& work);

// Queues `work` on the host thread and returns at once (the executor's CPU partitions, which
// must not hold a oneTBB worker while they wait).
void post_to_host_thread(std::function<void()> work);

}  // namespace hsched::cpu
