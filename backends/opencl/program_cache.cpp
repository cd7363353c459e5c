#include "backends/opencl/program_cache.h"

namespace hsched::opencl {

std::string ProgramKey::digest() const {
  uint64_t hash = fnv1a64(nullptr, 0);
  for (const std::string* field :
       {&device_name, &device_vendor, &driver_version, &source, &build_options}) {
    hash = hash_field(hash, field->data(), field->size());
  }
  return digest_text(hash);
}

ProgramCache::ProgramCache(const std::string& explicit_dir, int64_t max_bytes)
    : files_(explicit_dir, max_bytes,
             CacheFormat{{'H', 'S', 'C', 'L', 'P', 'R', 'G', '\0'}, 1, kCacheEntryExtension}) {}

}  // namespace hsched::opencl
