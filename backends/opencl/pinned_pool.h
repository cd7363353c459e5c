// Page-locked host memory for the tensors a device copies into and out of: blocks of
// CL_MEM_ALLOC_HOST_PTR buffers, each mapped once for its life, handed out as the owner of a
// Tensor's bytes. A discrete GPU's driver copies such memory directly, without staging it through
// its own page-locked buffer (bench/opencl_transfer_bench.cpp measures both ways); on a device
// that shares host memory the blocks are host memory like any other.
//
// Ownership: a block handed out keeps the pool alive (its deleter holds a shared_ptr), and the
// pool keeps its context and queue, so a tensor may outlive the program that filled it. When the
// last owner of a block's bytes lets go, the block goes back to the pool for the next acquire().
// Threading: acquire() and the return of blocks from any thread.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "backends/opencl/opencl.h"

namespace hsched::opencl {

class PinnedPool : public std::enable_shared_from_this<PinnedPool> {
 public:
  // A pool on `device` of `context` holding at most `limit_bytes` of blocks, in use and free.
  static std::shared_ptr<PinnedPool> create(const cl::Context& context, const cl::Device& device,
                                            size_t limit_bytes);
  ~PinnedPool();
  PinnedPool(const PinnedPool&) = delete;
  PinnedPool& operator=(const PinnedPool&) = delete;

  // At least `bytes` (> 0) of page-locked memory, reused from a free block of at most twice the
  // size where there is one; null where the pool is at its limit with every block in use or the
  // driver refuses (the caller allocates ordinary memory).
  std::shared_ptr<std::byte> acquire(size_t bytes);
  // Bytes of the blocks in use and free.
  size_t held_bytes() const;
  size_t free_blocks() const;

 private:
  struct Block {
    cl::Buffer buffer;
    std::byte* data = nullptr;  // mapped for the block's life
    size_t bytes = 0;
  };
  struct Return;  // the deleter of a block's bytes

  PinnedPool(cl::Context context, cl::CommandQueue queue, size_t limit_bytes);
  // A new mapped block; nullopt when the driver refuses.
  std::optional<Block> map_new(size_t bytes);
  void unmap(Block& block);
  void give_back(Block block);

  cl::Context context_;
  cl::CommandQueue queue_;  // maps and unmaps
  const size_t limit_bytes_;
  mutable std::mutex mutex_;
  std::multimap<size_t, Block> free_;  // by size
  size_t held_bytes_ = 0;
};

}  // namespace hsched::opencl
