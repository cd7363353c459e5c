#include "backends/level_zero/native_cache.h"

namespace hsched::level_zero {

std::string NativeKey::digest() const {
  uint64_t hash = fnv1a64(nullptr, 0);
  hash = hash_field(hash, driver_uuid.data(), driver_uuid.size());
  hash = hash_field(hash, &driver_version, sizeof(driver_version));
  hash = hash_field(hash, device_name.data(), device_name.size());
  hash = hash_field(hash, &device_id, sizeof(device_id));
  hash = hash_field(hash, &compiler_major, sizeof(compiler_major));
  hash = hash_field(hash, &compiler_minor, sizeof(compiler_minor));
  hash = hash_field(hash, build_flags.data(), build_flags.size());
  hash = hash_field(hash, payload.data(), payload.size());
  return digest_text(hash);
}

NativeCache::NativeCache(const std::string& explicit_dir, int64_t max_bytes)
    : files_(explicit_dir, max_bytes,
             CacheFormat{{'H', 'S', 'Z', 'E', 'G', 'R', 'F', '\0'}, 1, kNativeEntryExtension}) {}

}  // namespace hsched::level_zero
