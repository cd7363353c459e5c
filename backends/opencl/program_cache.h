// On-disk cache of OpenCL program binaries (hsched's own programs), so that a second process
// builds none of them: graph/binary_cache.h with entries "<key digest>.clbin" (see there for the
// format, atomic writes, verification and the size cap).
//
// Threading: every method may be called from several threads (the compiler's background
// builds store while the caller loads). Units: bytes.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "graph/binary_cache.h"

namespace hsched::opencl {

inline constexpr int64_t kDefaultCacheMaxBytes = int64_t{256} << 20;  // 256 MiB
inline constexpr const char* kCacheEntryExtension = ".clbin";

// What makes a cached binary valid: the device and driver it was built by and what it was
// built from.
struct ProgramKey {
  std::string device_name;
  std::string device_vendor;
  std::string driver_version;
  std::string source;
  std::string build_options;

  // 16 hex digits, a 64-bit hash over every field (length-prefixed, so fields cannot run into
  // each other). Stable across builds and runs: the file name of the entry.
  std::string digest() const;
};

class ProgramCache {
 public:
  using Binary = BinaryCache::Binary;

  static std::filesystem::path resolve_dir(const std::string& explicit_dir) {
    return BinaryCache::resolve_dir(explicit_dir);
  }
  explicit ProgramCache(const std::string& explicit_dir = "",
                        int64_t max_bytes = kDefaultCacheMaxBytes);

  std::optional<Binary> load(const ProgramKey& key) { return files_.load(key.digest()); }
  bool store(const ProgramKey& key, const Binary& binary) {
    return files_.store(key.digest(), binary);
  }

  const std::filesystem::path& dir() const { return files_.dir(); }
  bool writable() const { return files_.writable(); }
  int64_t max_bytes() const { return files_.max_bytes(); }
  std::filesystem::path entry_path(const ProgramKey& key) const {
    return files_.entry_path(key.digest());
  }

  // Counters for reports (`hsched run --json` cache {programs_built, programs_loaded}): the
  // compiler records a build from source and a load from this cache.
  void record_built() { ++programs_built_; }
  void record_loaded() { ++programs_loaded_; }
  int64_t programs_built() const { return programs_built_.load(); }
  int64_t programs_loaded() const { return programs_loaded_.load(); }

 private:
  BinaryCache files_;
  std::atomic<int64_t> programs_built_{0};
  std::atomic<int64_t> programs_loaded_{0};
};

}  // namespace hsched::opencl
