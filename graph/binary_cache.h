// On-disk cache of compiled binaries keyed by a digest (OpenCL program binaries, Level Zero
// native graphs), so that a second process builds none of them.
//
// Entries: one file per digest, "<digest><extension>" in the cache directory = a header (the
// format's magic and version, payload size, checksum) + the binary. Writes are atomic (a temp
// file in the same directory, then rename); loads verify magic, version, size and checksum: a
// corrupt or truncated entry is removed and reported as a miss, never handed to a driver. The
// entries of one extension are capped in size; after each write the least recently used (oldest
// mtime; a load touches it) are removed until they fit. An unusable directory (missing and
// uncreatable, read-only) disables writing; loads then miss. Several formats may share one
// directory: each sees only its own extension and its own temp files.
//
// Threading: every method may be called from several threads (background builds store while
// the caller loads); processes sharing a directory are safe through the atomic rename. Units:
// bytes.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace hsched {

// The fixed-size header before each binary, in host byte order (a cache serves one machine).
struct CacheEntryHeader {
  char magic[8];              // the format's magic
  uint32_t version;           // the format's version
  uint32_t reserved;          // 0
  uint64_t payload_bytes;     // binary size that follows
  uint64_t payload_checksum;  // fnv1a64() of the binary
};

// 64-bit FNV-1a of `size` bytes: the entry checksum, and the keys' digests.
uint64_t fnv1a64(const void* data, size_t size, uint64_t seed = 0xcbf29ce484222325ULL);
// Appends the field's length then its bytes, so ("ab","c") and ("a","bc") hash apart.
uint64_t hash_field(uint64_t hash, const void* data, size_t size);
// 16 hex digits of `hash`: an entry's file name.
std::string digest_text(uint64_t hash);

struct CacheFormat {
  char magic[8];
  uint32_t version = 1;
  std::string extension;  // ".clbin"
};

class BinaryCache {
 public:
  using Binary = std::vector<unsigned char>;

  // The directory, first of: `explicit_dir` (non-empty; e.g. the deploy file's cache_dir),
  // $HSCHED_CACHE_DIR, $HOME/.cache/hsched. Empty when none can be formed (no HOME).
  static std::filesystem::path resolve_dir(const std::string& explicit_dir);

  // Creates the directory if needed; when that fails the cache is read-disabled and write-
  // disabled (every load misses, stores do nothing). Never fails.
  BinaryCache(const std::string& explicit_dir, int64_t max_bytes, CacheFormat format);

  // The binary stored for `digest`, verified; nullopt on a miss. A bad entry is removed. A hit
  // sets the entry's mtime to now (the LRU order).
  std::optional<Binary> load(const std::string& digest);
  // Stores `binary` atomically, then evicts least recently used entries beyond the cap (never
  // the entry just written). False when nothing was written (writing disabled, or the write
  // failed: writing is then disabled for this object).
  bool store(const std::string& digest, const Binary& binary);

  const std::filesystem::path& dir() const { return dir_; }
  bool writable() const { return writable_.load(); }
  int64_t max_bytes() const { return max_bytes_; }
  std::filesystem::path entry_path(const std::string& digest) const;

 private:
  void evict_beyond_cap(const std::filesystem::path& keep);

  std::filesystem::path dir_;
  int64_t max_bytes_;
  CacheFormat format_;
  std::atomic<bool> usable_{false};    // the directory exists: loads may hit
  std::atomic<bool> writable_{false};  // stores may write
  std::mutex eviction_mutex_;          // one eviction scan at a time in this process
};

}  // namespace hsched
