// PinnedPool on a real OpenCL device (PoCL in CI): blocks come back for reuse when their last
// owner lets go, the limit holds (free blocks give way, blocks in use do not), a device copies
// into and out of the blocks, and a block outlives the pool's other owners.
#include "backends/opencl/pinned_pool.h"

#include <cstring>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "backends/opencl/opencl_test_util.h"

namespace hsched::opencl {
namespace {

TEST(PinnedPoolTest, ReusesABlockItsOwnerLetGo) {
  HSCHED_REQUIRE_OPENCL_DEVICE(info);
  const cl::Context context(info.device);
  auto pool = PinnedPool::create(context, info.device, size_t{1} << 20);
  std::byte* first = nullptr;
  {
    std::shared_ptr<std::byte> block = pool->acquire(5000);
    ASSERT_NE(block, nullptr);
    first = block.get();
    std::memset(block.get(), 7, 5000);     // the whole size asked is writable (ASan checks)
    EXPECT_EQ(pool->held_bytes(), 8192u);  // whole pages
    EXPECT_EQ(pool->free_blocks(), 0u);
  }
  EXPECT_EQ(pool->free_blocks(), 1u);
  std::shared_ptr<std::byte> again = pool->acquire(6000);  // the free block fits
  EXPECT_EQ(again.get(), first);
  EXPECT_EQ(pool->held_bytes(), 8192u);
  std::shared_ptr<std::byte> small = pool->acquire(100);  // a page: the 2-page block is in use
  ASSERT_NE(small, nullptr);
  EXPECT_NE(small.get(), first);
  EXPECT_EQ(pool->held_bytes(), 12288u);
  EXPECT_EQ(pool->acquire(0), nullptr);
}

TEST(PinnedPoolTest, KeepsItsLimit) {
  HSCHED_REQUIRE_OPENCL_DEVICE(info);
  const cl::Context context(info.device);
  constexpr size_t kPage = 4096;
  auto pool = PinnedPool::create(context, info.device, 4 * kPage);
  std::shared_ptr<std::byte> a = pool->acquire(kPage);
  std::shared_ptr<std::byte> b = pool->acquire(3 * kPage);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(pool->acquire(kPage), nullptr);  // at the limit, every block in use
  b.reset();
  // The free 3-page block is more than twice the page asked: it gives way to a new page.
  std::shared_ptr<std::byte> c = pool->acquire(100);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(pool->held_bytes(), 2 * kPage);
  EXPECT_EQ(pool->free_blocks(), 0u);
  // Room again for 2 pages, a fresh block.
  std::shared_ptr<std::byte> d = pool->acquire(2 * kPage);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(pool->held_bytes(), 4 * kPage);
}

TEST(PinnedPoolTest, DeviceCopiesInAndOutAndBlocksOutliveThePool) {
  HSCHED_REQUIRE_OPENCL_DEVICE(info);
  std::shared_ptr<std::byte> kept;
  {
    const cl::Context context(info.device);
    auto pool = PinnedPool::create(context, info.device, size_t{1} << 20);
    constexpr size_t kCount = 3000;
    std::shared_ptr<std::byte> in = pool->acquire(kCount * sizeof(float));
    std::shared_ptr<std::byte> out = pool->acquire(kCount * sizeof(float));
    ASSERT_NE(in, nullptr);
    ASSERT_NE(out, nullptr);
    auto* values = reinterpret_cast<float*>(in.get());
    for (size_t i = 0; i < kCount; ++i) values[i] = static_cast<float>(i) * 0.5f;
    cl_int error = CL_SUCCESS;
    cl::CommandQueue queue(context, info.device, 0, &error);
    cl::Buffer buffer(context, CL_MEM_READ_WRITE, kCount * sizeof(float), nullptr, &error);
    ASSERT_EQ(error, CL_SUCCESS);
    ASSERT_EQ(queue.enqueueWriteBuffer(buffer, CL_FALSE, 0, kCount * sizeof(float), in.get()),
              CL_SUCCESS);
    ASSERT_EQ(queue.enqueueReadBuffer(buffer, CL_TRUE, 0, kCount * sizeof(float), out.get()),
              CL_SUCCESS);
    EXPECT_EQ(std::memcmp(in.get(), out.get(), kCount * sizeof(float)), 0);
    kept = std::move(out);
    pool.reset();  // the kept block holds it
  }
  EXPECT_EQ(reinterpret_cast<const float*>(kept.get())[2999], 1499.5f);
  kept.reset();  // the pool goes with its last block (unmapped, released)
}

TEST(PinnedPoolTest, BlocksComeBackFromOtherThreads) {
  HSCHED_REQUIRE_OPENCL_DEVICE(info);
  const cl::Context context(info.device);
  auto pool = PinnedPool::create(context, info.device, size_t{1} << 20);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&pool, t] {
      for (int i = 0; i < 50; ++i) {
        std::shared_ptr<std::byte> block = pool->acquire(static_cast<size_t>(1000 * (t + 1)));
        if (block) std::memset(block.get(), t, static_cast<size_t>(1000 * (t + 1)));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_LE(pool->held_bytes(), size_t{1} << 20);
  EXPECT_LE(pool->free_blocks() * 4096, pool->held_bytes());
}

}  // namespace
}  // namespace hsched::opencl
