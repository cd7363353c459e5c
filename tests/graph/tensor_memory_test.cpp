// Large tensor buffers never come from malloc's heaps: they are mappings of their own, returned
// to the system when freed, whatever malloc's mmap threshold has become (graph/tensor.cpp).
#include <malloc.h>

#include <cstdint>
#include <cstdlib>

#include <gtest/gtest.h>

#include "graph/tensor.h"

namespace hsched {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

// Bytes in use in malloc's heaps (all arenas; mapped blocks are not counted).
size_t heap_in_use() { return mallinfo2().uordblks; }

// glibc raises its mmap threshold to the size of a mapped block once it is freed (up to 32 MiB):
// after this, an 8 MiB malloc() comes from a heap.
void raise_malloc_mmap_threshold() {
  void* block = std::malloc(16 * kMiB);
  ASSERT_NE(block, nullptr);
  static_cast<volatile char*>(block)[0] = 1;
  std::free(block);
}

TEST(TensorMemoryTest, LargeBufferIsNotHeapMemory) {
  raise_malloc_mmap_threshold();
  const size_t before = heap_in_use();
  {
    Tensor zeros(DType::kF32, {2 * static_cast<int64_t>(kMiB)});  // 8 MiB
    Tensor scratch = Tensor::uninitialized(DType::kF32, {2 * static_cast<int64_t>(kMiB)});
    ASSERT_FALSE(zeros.empty_storage());
    ASSERT_FALSE(scratch.empty_storage());
    for (float v : zeros.values<float>()) ASSERT_EQ(v, 0.0f);
    for (float& v : scratch.values<float>()) v = 1.0f;
    EXPECT_LT(heap_in_use(), before + kMiB);  // 16 MiB of tensors, none of it in the heaps
    EXPECT_EQ(reinterpret_cast<uintptr_t>(zeros.raw()) % 64, 0u);
    EXPECT_EQ(scratch.clone().values<float>()[12345], 1.0f);
  }
}

}  // namespace
}  // namespace hsched
