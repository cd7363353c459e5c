#include "backends/level_zero/cache.h"

namespace hsched::level_zero {
namespace {

// Version 2: SHA-256 names and digests, the key stored in the entry.
const CacheFormat& native_format() {
  static const CacheFormat format{
      {'H', 'S', 'Z', 'E', 'G', 'R', 'F', '\0'}, 2, kNativeEntryExtension};
  return format;
}

}  // namespace

std::string NativeKey::bytes() const {
  std::string key = begin_cache_key(native_format());
  append_key_field(&key, driver_uuid);
  append_key_field(&key, uint64_t{driver_version});
  append_key_field(&key, device_name);
  append_key_field(&key, device_uuid);
  append_key_field(&key, uint64_t{device_id});
  append_key_field(&key, uint64_t{graph_extension_version});
  append_key_field(&key, uint64_t{compiler_major});
  append_key_field(&key, uint64_t{compiler_minor});
  append_key_field(&key, build_flags);
  append_key_field(&key, sha256_hex(payload));
  return key;
}

std::string NativeKey::digest() const { return sha256_hex(bytes()); }

NativeCache::NativeCache(const std::string& explicit_dir, int64_t max_bytes)
    : files_(explicit_dir, max_bytes, native_format()) {}

}  // namespace hsched::level_zero
