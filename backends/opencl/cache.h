// On-disk cache of OpenCL program binaries (hsched's own programs), so that a second process
// builds none of them: core/binary_cache.h with entries "<SHA-256 of the key>.clbin" (see there
// for the trust model, the entry format, atomic writes, verification and the size cap).
//
// Threading: every method may be called from several threads (the compiler's background
// builds store while the caller loads). Units: bytes.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "backends/opencl/opencl.h"
#include "core/binary_cache.h"

namespace hsched::opencl {

inline constexpr int64_t kDefaultCacheMaxBytes = int64_t{256} << 20;  // 256 MiB
inline constexpr const char* kCacheEntryExtension = ".clbin";

// What makes a cached binary valid: the platform, device and driver it was built by (a program
// binary is native code for exactly that stack) and what it was built from.
struct ProgramKey {
  std::string platform_name;     // CL_PLATFORM_NAME
  std::string platform_version;  // CL_PLATFORM_VERSION
  std::string device_name;       // CL_DEVICE_NAME
  std::string device_vendor;     // CL_DEVICE_VENDOR
  uint32_t vendor_id = 0;        // CL_DEVICE_VENDOR_ID
  std::string device_version;    // CL_DEVICE_VERSION
  std::string driver_version;    // CL_DRIVER_VERSION
  std::string source;
  std::string build_options;

  // The key of `source` built with `options` on `device`: every field above queried.
  static ProgramKey for_device(const cl::Device& device, const std::string& source,
                               const std::string& options);

  // The canonical key stored in the entry: begin_cache_key(the .clbin format, hsched's
  // version) then every field, length-prefixed. Stable across builds and runs.
  std::string bytes() const;
  // 64 hex digits, sha256_hex(bytes()): the entry's file name without the extension.
  std::string digest() const;
};

class ProgramCache {
 public:
  using Binary = BinaryCache::Binary;

  static std::filesystem::path resolve_dir(const std::string& explicit_dir) {
    return BinaryCache::resolve_dir(explicit_dir);
  }
  // The directory is created and checked as binary_cache.h says; a refused one turns the cache
  // off (with one warning line on stderr).
  explicit ProgramCache(const std::string& explicit_dir = "",
                        int64_t max_bytes = kDefaultCacheMaxBytes);

  std::optional<Binary> load(const ProgramKey& key) { return files_.load(key.bytes()); }
  bool store(const ProgramKey& key, const Binary& binary) {
    return files_.store(key.bytes(), binary);
  }

  const std::filesystem::path& dir() const { return files_.dir(); }
  bool usable() const { return files_.usable(); }
  bool writable() const { return files_.writable(); }
  const std::string& refusal() const { return files_.refusal(); }
  int64_t max_bytes() const { return files_.max_bytes(); }
  std::filesystem::path entry_path(const ProgramKey& key) const {
    return files_.entry_path(key.bytes());
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
