// release_free_heap_memory: the free pages a thread's malloc arena keeps after its big buffers are
// freed (the soak's RSS growth across recompiles) go back to the system.
#include "core/heap.h"

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace hsched {
namespace {

constexpr int64_t kMiB = 1024 * 1024;

int64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0;
  int64_t resident = 0;
  statm >> size >> resident;
  return resident * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

// gcc defines __SANITIZE_ADDRESS__ and __SANITIZE_THREAD__; clang 14 answers __has_feature.
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define HSCHED_SANITIZED_HEAP 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define HSCHED_SANITIZED_HEAP 1
#endif

#if defined(__GLIBC__)
TEST(HeapTest, FreedBuffersOfAnEndedThreadLeaveTheResidentSet) {
#ifdef HSCHED_SANITIZED_HEAP
  GTEST_SKIP() << "the sanitizer's allocator replaces glibc's malloc arenas";
#endif
  // What an Executable's end leaves: buffers made on a thread that has since ended (a compile
  // worker, a device thread), below malloc's mmap threshold, freed by another thread, with a
  // block still in use above them, so no arena top can shrink by itself.
  constexpr size_t kBlock = 64 * 1024;
  constexpr int kBlocks = 512;  // 32 MiB
  std::vector<void*> blocks;
  void* pin = nullptr;
  std::thread maker([&] {
    for (int i = 0; i < kBlocks; ++i) {
      void* block = std::malloc(kBlock);
      ASSERT_NE(block, nullptr);
      std::memset(block, 1, kBlock);  // resident
      blocks.push_back(block);
    }
    pin = std::malloc(kBlock);
    std::memset(pin, 1, kBlock);
  });
  maker.join();
  release_free_heap_memory();  // a clean start: only what follows is measured
  const int64_t with_blocks = resident_bytes();
  for (void* block : blocks) std::free(block);
  const int64_t freed = resident_bytes();
  // glibc keeps the freed pages: this is the growth the soak saw.
  EXPECT_GT(freed, with_blocks - 8 * kMiB);

  EXPECT_TRUE(release_free_heap_memory());
  const int64_t released = resident_bytes();
  EXPECT_LT(released, freed - 24 * kMiB)
      << "with the blocks " << with_blocks / kMiB << " MiB, freed " << freed / kMiB
      << " MiB, released " << released / kMiB << " MiB";
  std::free(pin);
}
#endif

}  // namespace
}  // namespace hsched
