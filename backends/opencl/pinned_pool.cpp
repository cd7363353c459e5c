#include "backends/opencl/pinned_pool.h"

#include <iterator>

namespace hsched::opencl {
namespace {

constexpr size_t kGranule = size_t{1} << 12;  // blocks are whole pages

size_t rounded(size_t bytes) { return (bytes + kGranule - 1) / kGranule * kGranule; }

}  // namespace

struct PinnedPool::Return {
  std::shared_ptr<PinnedPool> pool;
  Block block;
  void operator()(std::byte* /*data*/) { pool->give_back(std::move(block)); }
};

std::shared_ptr<PinnedPool> PinnedPool::create(const cl::Context& context, const cl::Device& device,
                                               size_t limit_bytes) {
  cl_int error = CL_SUCCESS;
  cl::CommandQueue queue(context, device, 0, &error);
  if (error != CL_SUCCESS) queue = cl::CommandQueue();  // acquire() then hands out nothing
  return std::shared_ptr<PinnedPool>(new PinnedPool(context, std::move(queue), limit_bytes));
}

PinnedPool::PinnedPool(cl::Context context, cl::CommandQueue queue, size_t limit_bytes)
    : context_(std::move(context)), queue_(std::move(queue)), limit_bytes_(limit_bytes) {}

// Every block is free here (one in use would hold the pool).
PinnedPool::~PinnedPool() {
  for (auto& entry : free_) unmap(entry.second);
  if (queue_()) queue_.finish();
}

std::shared_ptr<std::byte> PinnedPool::acquire(size_t bytes) {
  if (bytes == 0 || !queue_()) return nullptr;
  const size_t size = rounded(bytes);
  std::unique_lock<std::mutex> lock(mutex_);
  auto fit = free_.lower_bound(size);
  std::optional<Block> block;
  if (fit != free_.end() && fit->first <= 2 * size) {
    block = std::move(fit->second);
    free_.erase(fit);
  } else {
    // Room for a new block: free blocks go, the largest first, until it fits.
    while (held_bytes_ + size > limit_bytes_ && !free_.empty()) {
      auto largest = std::prev(free_.end());
      held_bytes_ -= largest->first;
      unmap(largest->second);
      free_.erase(largest);
    }
    if (held_bytes_ + size > limit_bytes_) return nullptr;
    block = map_new(size);
    if (!block) return nullptr;
    held_bytes_ += size;
  }
  std::byte* data = block->data;
  return std::shared_ptr<std::byte>(data, Return{shared_from_this(), std::move(*block)});
}

size_t PinnedPool::held_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return held_bytes_;
}

size_t PinnedPool::free_blocks() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return free_.size();
}

std::optional<PinnedPool::Block> PinnedPool::map_new(size_t bytes) {
  cl_int error = CL_SUCCESS;
  Block block;
  block.bytes = bytes;
  block.buffer =
      cl::Buffer(context_, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, nullptr, &error);
  if (error != CL_SUCCESS) return std::nullopt;
  void* mapped = queue_.enqueueMapBuffer(block.buffer, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                         bytes, nullptr, nullptr, &error);
  if (error != CL_SUCCESS || mapped == nullptr) return std::nullopt;
  block.data = static_cast<std::byte*>(mapped);
  return block;
}

void PinnedPool::unmap(Block& block) {
  queue_.enqueueUnmapMemObject(block.buffer, block.data);
  block.data = nullptr;
}

void PinnedPool::give_back(Block block) {
  std::lock_guard<std::mutex> lock(mutex_);
  const size_t bytes = block.bytes;
  free_.emplace(bytes, std::move(block));
}

}  // namespace hsched::opencl
