// On-disk cache of OpenCL program binaries (hsched's own programs), so that a second process
// builds none of them.
//
// Entries: one file per key, "<key>.clbin" in the cache directory = Header + program binary.
// Writes are atomic (a temp file in the same directory, then rename), loads verify magic,
// version, size and checksum: a corrupt or truncated entry is removed and reported as a miss,
// never handed to the driver. The directory is capped in size; after each write the least
// recently used entries (oldest mtime; a load touches it) are removed until it fits.
// An unusable directory (missing and uncreatable, read-only) disables writing; loads then miss.
//
// Threading: every method may be called from several threads (the compiler's background
// builds store while the caller loads); processes sharing a directory are safe through the
// atomic rename. Units: bytes.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace hsched::opencl {

inline constexpr int64_t kDefaultCacheMaxBytes = int64_t{256} << 20;  // 256 MiB

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

// The fixed-size header before each binary, in host byte order (a cache serves one machine).
struct CacheEntryHeader {
  char magic[8];              // kCacheMagic
  uint32_t version;           // kCacheFormatVersion
  uint32_t reserved;          // 0
  uint64_t payload_bytes;     // binary size that follows
  uint64_t payload_checksum;  // payload_checksum() of the binary
};
inline constexpr char kCacheMagic[8] = {'H', 'S', 'C', 'L', 'P', 'R', 'G', '\0'};
inline constexpr uint32_t kCacheFormatVersion = 1;
inline constexpr const char* kCacheEntryExtension = ".clbin";

// 64-bit FNV-1a of `size` bytes: the entry checksum and the key hash.
uint64_t fnv1a64(const void* data, size_t size, uint64_t seed = 0xcbf29ce484222325ULL);

class ProgramCache {
 public:
  using Binary = std::vector<unsigned char>;

  // The directory, first of: `explicit_dir` (non-empty; e.g. the deploy file's cache_dir),
  // $HSCHED_CACHE_DIR, $HOME/.cache/hsched. Empty when none can be formed (no HOME).
  static std::filesystem::path resolve_dir(const std::string& explicit_dir);

  // Creates the directory if needed; when that fails the cache is read-disabled and write-
  // disabled (every load misses, stores do nothing). Never fails.
  explicit ProgramCache(const std::string& explicit_dir = "",
                        int64_t max_bytes = kDefaultCacheMaxBytes);

  // The binary stored for `key`, verified; nullopt on a miss. A bad entry is removed.
  // A hit sets the entry's mtime to now (the LRU order).
  std::optional<Binary> load(const ProgramKey& key);

  // Stores `binary` for `key` atomically, then evicts least recently used entries beyond the
  // cap (never the entry just written). Returns false when nothing was written (writing
  // disabled, or the write failed: writing is then disabled for this object).
  bool store(const ProgramKey& key, const Binary& binary);

  const std::filesystem::path& dir() const { return dir_; }
  bool writable() const { return writable_.load(); }
  int64_t max_bytes() const { return max_bytes_; }
  std::filesystem::path entry_path(const ProgramKey& key) const;

  // Counters for reports (`hsched run --json` cache {programs_built, programs_loaded}): the
  // compiler records a build from source and a load from this cache.
  void record_built() { ++programs_built_; }
  void record_loaded() { ++programs_loaded_; }
  int64_t programs_built() const { return programs_built_.load(); }
  int64_t programs_loaded() const { return programs_loaded_.load(); }

 private:
  void evict_beyond_cap(const std::filesystem::path& keep);

  std::filesystem::path dir_;
  int64_t max_bytes_;
  std::atomic<bool> usable_{false};    // the directory exists: loads may hit
  std::atomic<bool> writable_{false};  // stores may write
  std::mutex eviction_mutex_;          // one eviction scan at a time in this process
  std::atomic<int64_t> programs_built_{0};
  std::atomic<int64_t> programs_loaded_{0};
};

}  // namespace hsched::opencl
