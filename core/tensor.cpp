#include "hsched/tensor.h"

#include <cstdlib>
#include <cstring>
#include <random>

namespace hsched {
namespace {

std::shared_ptr<std::byte> allocate(size_t bytes, bool zero) {
  // 64-byte alignment suits AVX-512 loads and oneDNN's expectations.
  const size_t rounded = (bytes + 63) / 64 * 64;
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

Tensor seeded_tensor(DType dtype, const std::vector<int64_t>& dims, uint32_t seed) {
  Tensor t(dtype, dims);
  std::mt19937 rng(seed);
  switch (dtype) {
    case DType::kF32: {
      std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
      for (float& v : t.values<float>()) v = dist(rng);
      break;
    }
    case DType::kI64:
      for (int64_t& v : t.values<int64_t>()) v = static_cast<int64_t>(rng() & 1);
      break;
    case DType::kI32:
      for (int32_t& v : t.values<int32_t>()) v = static_cast<int32_t>(rng() & 1);
      break;
    case DType::kF64: {
      std::uniform_real_distribution<double> dist(-1.0, 1.0);
      for (double& v : t.values<double>()) v = dist(rng);
      break;
    }
    case DType::kF16:
    case DType::kBF16: {
      // Uniform on the grid k / 128 in (-1, 1): exact in both half types (7 significant bits),
      // so the bit pattern is the float's, shortened: fp16 rebiases the exponent (2^-7 and up
      // are normal there), bf16 keeps the float's high half.
      const bool half = dtype == DType::kF16;
      for (uint16_t& v : t.values<uint16_t>()) {
        const float f = static_cast<float>(static_cast<int>(rng() % 255) - 127) / 128.0f;
        uint32_t bits = 0;
        std::memcpy(&bits, &f, sizeof(bits));
        if (!half) {
          v = static_cast<uint16_t>(bits >> 16);
        } else if (f == 0.0f) {
          v = 0;
        } else {
          const uint32_t exponent = ((bits >> 23) & 0xff) - 127 + 15;
          v = static_cast<uint16_t>(((bits >> 16) & 0x8000) | (exponent << 10) |
                                    ((bits >> 13) & 0x3ff));
        }
      }
      break;
    }
    case DType::kI16:
    case DType::kU16:
      for (uint16_t& v : t.values<uint16_t>()) v = static_cast<uint16_t>(rng() & 1);
      break;
    case DType::kU32:
      for (uint32_t& v : t.values<uint32_t>()) v = static_cast<uint32_t>(rng() & 1);
      break;
    case DType::kU64:
      for (uint64_t& v : t.values<uint64_t>()) v = static_cast<uint64_t>(rng() & 1);
      break;
    default:
      for (uint8_t& v : t.values<uint8_t>()) v = static_cast<uint8_t>(rng() & 1);
      break;
  }
  return t;
}

}  // namespace hsched
