#include "backends/level_zero/sim/native_blob.h"

#include <cstring>

namespace hsched::zesim {
namespace {

constexpr char kMagic[12] = {'H', 'S', 'C', 'H', 'E', 'D', 'S', 'I', 'M', 'N', 'P', 'U'};

uint64_t fnv1a64(std::span<const uint8_t> bytes) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (uint8_t b : bytes) {
    hash ^= b;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

void put_le(uint8_t* out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out[i] = static_cast<uint8_t>(value >> (8 * i));
}

uint64_t get_le(const uint8_t* in, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value |= static_cast<uint64_t>(in[i]) << (8 * i);
  return value;
}

}  // namespace

std::vector<uint8_t> make_native_blob(std::span<const uint8_t> payload) {
  std::vector<uint8_t> blob(kNativeBlobHeaderBytes + payload.size());
  std::memcpy(blob.data(), kMagic, sizeof(kMagic));
  put_le(blob.data() + 12, kNativeBlobVersion, 4);
  put_le(blob.data() + 16, payload.size(), 8);
  put_le(blob.data() + 24, fnv1a64(payload), 8);
  if (!payload.empty())
    std::memcpy(blob.data() + kNativeBlobHeaderBytes, payload.data(), payload.size());
  return blob;
}

std::optional<std::span<const uint8_t>> parse_native_blob(std::span<const uint8_t> blob) {
  if (blob.size() < kNativeBlobHeaderBytes) return std::nullopt;
  if (std::memcmp(blob.data(), kMagic, sizeof(kMagic)) != 0) return std::nullopt;
  if (get_le(blob.data() + 12, 4) != kNativeBlobVersion) return std::nullopt;
  const uint64_t size = get_le(blob.data() + 16, 8);
  if (size != blob.size() - kNativeBlobHeaderBytes) return std::nullopt;
  const std::span<const uint8_t> payload = blob.subspan(kNativeBlobHeaderBytes);
  if (get_le(blob.data() + 24, 8) != fnv1a64(payload)) return std::nullopt;
  return payload;
}

}  // namespace hsched::zesim
