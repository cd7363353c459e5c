// The host thread: one thread runs every caller's work, in place when called from there; what
// the work throws reaches its caller; posted work runs in order.
#include "backends/cpu/host_thread.h"

#include <atomic>
#include <future>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace hsched::cpu {
namespace {

TEST(HostThreadTest, EveryCallerRunsOnTheSameOtherThread) {
  std::thread::id first;
  run_on_host_thread([&] { first = std::this_thread::get_id(); });
  EXPECT_NE(first, std::this_thread::get_id());
  std::vector<std::thread::id> seen(4);
  std::vector<std::thread> callers;
  for (size_t i = 0; i < seen.size(); ++i) {
    callers.emplace_back(
        [&, i] { run_on_host_thread([&] { seen[i] = std::this_thread::get_id(); }); });
  }
  for (std::thread& caller : callers) caller.join();
  for (const std::thread::id& id : seen) EXPECT_EQ(id, first);
}

TEST(HostThreadTest, NestedWorkRunsInPlace) {
  std::thread::id outer, inner;
  run_on_host_thread([&] {
    outer = std::this_thread::get_id();
    run_on_host_thread([&] { inner = std::this_thread::get_id(); });  // would deadlock if queued
  });
  EXPECT_EQ(outer, inner);
}

TEST(HostThreadTest, WhatTheWorkThrowsReachesTheCaller) {
  EXPECT_THROW(run_on_host_thread([] { throw std::runtime_error("bad"); }), std::runtime_error);
  bool ran = false;
  run_on_host_thread([&] { ran = true; });  // the thread survived it
  EXPECT_TRUE(ran);
}

TEST(HostThreadTest, PostedWorkRunsInOrder) {
  std::vector<int> order;
  std::promise<void> done;
  for (int i = 0; i < 5; ++i) post_to_host_thread([&order, i] { order.push_back(i); });
  post_to_host_thread([&] { done.set_value(); });
  done.get_future().wait();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
}

// A posted job that throws (a broken contract) is named on stderr; the thread goes on with the
// next job instead of ending the process through std::terminate.
TEST(HostThreadTest, APostedJobsExceptionDoesNotEndTheThread) {
  WorkThread thread;
  std::promise<void> done;
  testing::internal::CaptureStderr();
  thread.post([] { throw std::runtime_error("device lost mid-copy"); });
  thread.post([&] { done.set_value(); });
  done.get_future().wait();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("device lost mid-copy"), std::string::npos) << err;
}

}  // namespace
}  // namespace hsched::cpu
