// run_with_deadline and the exit path: a worker's exception is an error, a worker past its
// deadline never sees the process's static destructors.
#include "core/deadline.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <thread>

#include <gtest/gtest.h>

namespace hsched {
namespace {

using namespace std::chrono_literals;

TEST(DeadlineTest, ResultBeforeTheDeadline) {
  auto result = run_with_deadline<int>([]() -> Result<int> { return 7; }, 10000, "seven");
  ASSERT_TRUE(result.is_ok()) << result.status().message();
  EXPECT_EQ(*result, 7);
  EXPECT_TRUE(wait_for_background_workers(10000));
  EXPECT_EQ(background_workers(), 0);
}

TEST(DeadlineTest, PastTheDeadlineIsCompileTimeout) {
  auto result = run_with_deadline<int>(
      []() -> Result<int> {
        std::this_thread::sleep_for(300ms);
        return 1;
      },
      10, "a slow build");
  EXPECT_EQ(result.status().code(), ErrorCode::kDeadlineExceeded);
  EXPECT_EQ(result.status().message().rfind("compile_timeout: a slow build", 0), 0u);
  EXPECT_TRUE(wait_for_background_workers(10000)) << "the abandoned worker finishes and counts out";
}

TEST(DeadlineTest, AWorkersExceptionIsAnInternalError) {
  auto result = run_with_deadline<int>(
      []() -> Result<int> { throw std::runtime_error("driver said no"); }, 10000, "a build");
  EXPECT_EQ(result.status().code(), ErrorCode::kInternal);
  EXPECT_NE(result.status().message().find("driver said no"), std::string::npos)
      << result.status().message();
  auto unknown =
      run_with_deadline<int>([]() -> Result<int> { throw 42; }, 10000, "another build");
  EXPECT_EQ(unknown.status().code(), ErrorCode::kInternal);
}

// A static whose destructor a still-running worker would see: the worker aborts if it does.
struct Watched {
  std::atomic<bool> destroyed{false};
  ~Watched() {
    destroyed = true;
    std::this_thread::sleep_for(50ms);  // time for a running worker to notice
  }
};
Watched g_watched;

void start_worker_that_must_not_see_exit() {
  auto result = run_with_deadline<int>(
      []() -> Result<int> {
        for (;;) {  // "inside a driver" for longer than the test
          if (g_watched.destroyed.load()) std::abort();
          std::this_thread::sleep_for(1ms);
        }
      },
      10, "a hung driver call");
  if (result.status().code() != ErrorCode::kDeadlineExceeded) std::abort();
}

// A function-local static first made by a running worker, as a driver's tables are first made
// inside the build it runs: its destructor is registered after the exit handler of the first
// worker, so exit() would run it first. The worker polls it for `busy_ms` (< 0: for ever, a hung
// driver call) and aborts if it sees it destroyed.
struct LateStatic {
  std::atomic<bool> destroyed{false};
  ~LateStatic() {
    destroyed = true;
    std::this_thread::sleep_for(50ms);  // time for a running worker to notice
  }
};

LateStatic& late_static() {
  static LateStatic instance;
  return instance;
}

void start_worker_that_makes_a_static(int busy_ms) {
  static std::atomic<bool> made{false};
  auto result = run_with_deadline<int>(
      [busy_ms]() -> Result<int> {
        LateStatic& late = late_static();
        made = true;
        const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(busy_ms);
        while (busy_ms < 0 || std::chrono::steady_clock::now() < end) {
          if (late.destroyed.load()) std::abort();
          std::this_thread::sleep_for(1ms);
        }
        return 1;
      },
      10, "a build that makes a static");
  if (result.status().code() != ErrorCode::kDeadlineExceeded) std::abort();
  while (!made.load()) std::this_thread::sleep_for(1ms);
}

using DeadlineDeathTest = ::testing::Test;

TEST_F(DeadlineDeathTest, ExitProcessSkipsDestructorsWhileAWorkerRuns) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        start_worker_that_must_not_see_exit();
        exit_process(3);
      },
      ::testing::ExitedWithCode(3), "");
}

TEST_F(DeadlineDeathTest, ExitProcessRunsDestructorsWhenNoWorkerRuns) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        ASSERT_TRUE(run_with_deadline<int>([]() -> Result<int> { return 1; }, 10000, "quick")
                        .is_ok());
        exit_process(4);
      },
      ::testing::ExitedWithCode(4), "");
}

TEST_F(DeadlineDeathTest, PlainExitWaitsBoundedThenSkipsDestructors) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        start_worker_that_must_not_see_exit();
        std::exit(5);  // an embedding program's exit: the exit handler steps in
      },
      ::testing::ExitedWithCode(5), "");
}

TEST_F(DeadlineDeathTest, PlainExitWaitsBeforeDestroyingAStaticMadeByTheWorker) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        start_worker_that_makes_a_static(300);  // done within the exit wait
        std::exit(6);  // returning from main() is this exit()
      },
      ::testing::ExitedWithCode(6), "");
}

TEST_F(DeadlineDeathTest, PlainExitSkipsTheStaticsOfAWorkerThatStillRuns) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        start_worker_that_makes_a_static(-1);
        std::exit(7);
      },
      ::testing::ExitedWithCode(7), "");
}

TEST_F(DeadlineDeathTest, ExitFromAnotherThreadThatStartedTheWorker) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        std::thread([] {
          start_worker_that_makes_a_static(300);
          std::exit(8);
        }).join();
      },
      ::testing::ExitedWithCode(8), "");
}

}  // namespace
}  // namespace hsched
