#include "graph/tensor.h"

#include <sys/mman.h>

#include <cstdlib>
#include <new>

namespace hsched {
namespace {

// Buffers from this size on get pages of their own (mmap), unmapped when the last owner lets go.
// Why not malloc: glibc serves a large block from a mapping only until the first such block is
// freed, then raises its mmap threshold to that block's size (up to 32 MiB), and from then on
// weights and activations come from the heaps of malloc's per-thread arenas. Each recompile
// frees and allocates them again, on whichever thread compiles, runs or frees them (host thread,
// device threads, driver threads, the caller's), and the large free holes they leave between
// long-lived small blocks are kept by the arenas: a process that compiles and runs for hours
// grew its RSS by a fifth in 30 minutes while the bytes in use stayed flat. A mapping of our own
// goes back to the system on release whatever thread frees it. Below this size, malloc's reuse
// wins (page faults and a system call per buffer would cost more than they save).
constexpr size_t kMappedTensorBytes = size_t{256} << 10;

std::shared_ptr<std::byte> allocate(size_t bytes, bool zero) {
  // 64-byte alignment suits AVX-512 loads and oneDNN's expectations.
  const size_t rounded = (bytes + 63) / 64 * 64;
  if (rounded >= kMappedTensorBytes) {
    // Page-aligned and zero-filled by the kernel (pages cost nothing until touched).
    void* p = mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    return {static_cast<std::byte*>(p), [rounded](std::byte* q) { munmap(q, rounded); }};
  }
  void* p = std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
  if (p == nullptr) throw std::bad_alloc();
  if (zero) std::memset(p, 0, rounded == 0 ? 64 : rounded);
  return {static_cast<std::byte*>(p), [](std::byte* q) { std::free(q); }};
}

}  // namespace

Tensor::Tensor(DType dtype, std::vector<int64_t> dims) : dtype_(dtype), dims_(std::move(dims)) {
  data_ = allocate(byte_size(), true);
}

Tensor Tensor::uninitialized(DType dtype, std::vector<int64_t> dims) {
  Tensor tensor(dtype, std::move(dims), nullptr);
  tensor.data_ = allocate(tensor.byte_size(), false);
  return tensor;
}

Tensor::Tensor(DType dtype, std::vector<int64_t> dims, std::shared_ptr<std::byte> data)
    : dtype_(dtype), dims_(std::move(dims)), data_(std::move(data)) {}

Tensor Tensor::borrow(DType dtype, std::vector<int64_t> dims, void* data) {
  return Tensor(dtype, std::move(dims),
                std::shared_ptr<std::byte>(static_cast<std::byte*>(data), [](std::byte*) {}));
}

int64_t Tensor::elements() const {
  int64_t n = 1;
  for (int64_t d : dims_) n *= d;
  return n;
}

Tensor Tensor::clone() const {
  Tensor copy = uninitialized(dtype_, dims_);
  if (byte_size() != 0) std::memcpy(copy.raw(), raw(), byte_size());
  return copy;
}

}  // namespace hsched
