// hsched::Tensor: a dense host tensor (dtype, static dims, bytes) that owns or borrows its data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include "hsched/dtype.h"
#include "hsched/shape.h"

namespace hsched {

// Ownership: `data_` is a shared_ptr whose control block keeps the real owner alive (a vector,
// a memory-mapped file, a protobuf string); a borrowed tensor has a no-op owner and the caller
// keeps the memory alive. Copies of a Tensor share the bytes; clone() makes a deep copy.
// Threading: a Tensor is a value; concurrent reads are safe, writes need the caller's care.
class Tensor {
 public:
  Tensor() = default;
  // Allocates zero-filled storage for `dims`.
  Tensor(DType dtype, std::vector<int64_t> dims);
  // Allocates storage for `dims` that the caller overwrites whole before anyone reads it: no
  // zero-fill, so untouched pages of a large buffer cost nothing yet.
  static Tensor uninitialized(DType dtype, std::vector<int64_t> dims);
  // Shares `data` (already holding `byte_size()` bytes) with its owner.
  Tensor(DType dtype, std::vector<int64_t> dims, std::shared_ptr<std::byte> data);
  // Borrows memory the caller keeps alive for the tensor's lifetime.
  static Tensor borrow(DType dtype, std::vector<int64_t> dims, void* data);

  template <typename T>
  static Tensor from_vector(DType dtype, std::vector<int64_t> dims, const std::vector<T>& values) {
    Tensor t(dtype, std::move(dims));
    if (t.byte_size() != 0) std::memcpy(t.raw(), values.data(), t.byte_size());
    return t;
  }

  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& dims() const { return dims_; }
  Shape shape() const { return Shape(dims_); }
  int64_t elements() const;
  size_t byte_size() const { return static_cast<size_t>(elements()) * dtype_size(dtype_); }
  bool empty_storage() const { return data_ == nullptr; }
  // The shared owner of the bytes (for views into one allocation, such as an activation arena).
  const std::shared_ptr<std::byte>& storage() const { return data_; }

  std::byte* raw() { return data_.get(); }
  const std::byte* raw() const { return data_.get(); }
  template <typename T>
  std::span<T> values() {
    return {reinterpret_cast<T*>(data_.get()), static_cast<size_t>(elements())};
  }
  template <typename T>
  std::span<const T> values() const {
    return {reinterpret_cast<const T*>(data_.get()), static_cast<size_t>(elements())};
  }

  Tensor clone() const;
  // The same bytes seen with other dims (same element count): a view, not a copy.
  Tensor reshaped(std::vector<int64_t> dims) const { return Tensor(dtype_, std::move(dims), data_); }

 private:
  DType dtype_ = DType::kUndefined;
  std::vector<int64_t> dims_;
  std::shared_ptr<std::byte> data_;
};

// A deterministic tensor for sample runs: f32 and f64 uniform in [-1, 1), f16 and bf16 uniform on
// the grid k / 128 in (-1, 1) (exact in both), integers and bools in {0, 1} (valid token ids and
// mask values for any embedding); the same for the same seed.
Tensor seeded_tensor(DType dtype, const std::vector<int64_t>& dims, uint32_t seed);

}  // namespace hsched
