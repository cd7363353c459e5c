// On-disk cache of compiled binaries (OpenCL program binaries, Level Zero native graphs), so that
// a second process builds none of them. Such binaries are native code handed to a driver, so the
// cache trusts nothing it did not check.
//
// Trust model:
// - The directory must be owned by the effective uid, be a directory reached without following a
//   symbolic link in its last component, and not be writable by group or others. Missing
//   components are created with mode 0700 (exactly, whatever the umask). Any other directory is
//   refused: the cache is off for that object (every load misses, stores do nothing) and one
//   warning line on stderr names the directory and the reason, once per directory and process.
//   The checks run on an open descriptor (open O_DIRECTORY|O_NOFOLLOW, then fstat), and every
//   later access is relative to that descriptor, so renaming a path component afterwards does
//   not redirect the cache.
// - An entry is opened with O_NOFOLLOW and used only if it is a regular file owned by the
//   effective uid and not writable by group or others. Entries are written with mode 0600.
// - An entry's file name is the SHA-256 of its full key (64 hex digits + the format's
//   extension). The entry stores that key, compared byte for byte on load, and a SHA-256 over
//   its header, key and payload. A truncated, corrupt or foreign entry (bad magic or version,
//   wrong size, wrong digest, not a regular file, wrong owner or mode) is removed and missed; an
//   entry holding another key (a file renamed) is missed and replaced by the next store.
// - The digest detects corruption and misplaced files, not forgery: it is not keyed, and anyone
//   able to write in the directory could recompute it. That is why the directory and entries
//   must belong to the user and be closed to everyone else.
//
// Keys are canonical byte strings (begin_cache_key() + append_key_field()), each field length-
// prefixed so that no two field lists give the same bytes. The format's magic and version and
// hsched's version start every key: a new format misses every older entry.
//
// Writes are atomic (a 0600 temp file in the directory, then rename); the entries of one
// extension are capped in size: after each write the least recently used (oldest mtime; a load
// touches it) are removed until they fit, and names of an older format are removed. A directory
// that cannot be written (read-only) disables writing; loads go on. Several formats may share one
// directory: each sees only its own extension and its own temp files.
//
// Threading: every method may be called from several threads (background builds store while
// the caller loads); processes sharing a directory are safe through the atomic rename. Units:
// bytes.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hsched {

inline constexpr size_t kSha256Bytes = 32;

// The fixed-size header before each entry's key and binary, in host byte order (a cache serves
// one machine). 64 bytes.
struct CacheEntryHeader {
  char magic[8];                       // the format's magic
  uint32_t version;                    // the format's version
  uint32_t reserved;                   // 0
  uint64_t key_bytes;                  // the key that follows the header
  uint64_t payload_bytes;              // the binary that follows the key
  unsigned char digest[kSha256Bytes];  // SHA-256 of the 32 bytes above, the key, the binary
};
static_assert(sizeof(CacheEntryHeader) == 64);

// SHA-256 (OpenSSL EVP) as 64 lower-case hex digits.
std::string sha256_hex(std::span<const uint8_t> bytes);
std::string sha256_hex(std::string_view bytes);

struct CacheFormat {
  char magic[8];
  uint32_t version = 1;
  std::string extension;  // ".clbin"
};

// A canonical key: starts with the format's magic and version and hsched's version.
std::string begin_cache_key(const CacheFormat& format);
// Appends the field's length (8 bytes) then its bytes, so ("ab","c") and ("a","bc") differ.
void append_key_field(std::string* key, std::string_view bytes);
void append_key_field(std::string* key, std::span<const uint8_t> bytes);
// Appends an integer as 8 bytes (its own fixed length).
void append_key_field(std::string* key, uint64_t value);

class BinaryCache {
 public:
  using Binary = std::vector<unsigned char>;

  // The directory, first of: `explicit_dir` (non-empty; e.g. the deploy file's cache_dir),
  // $HSCHED_CACHE_DIR, $HOME/.cache/hsched. Empty when none can be formed (no HOME).
  static std::filesystem::path resolve_dir(const std::string& explicit_dir);

  // Creates the directory if needed (mode 0700) and checks it (see the file comment). A refused
  // or uncreatable directory turns the cache off; a read-only one turns writing off. Never
  // fails.
  BinaryCache(const std::string& explicit_dir, int64_t max_bytes, CacheFormat format);
  ~BinaryCache();
  BinaryCache(const BinaryCache&) = delete;
  BinaryCache& operator=(const BinaryCache&) = delete;

  // The binary stored under `key` (a canonical key, see begin_cache_key), verified; nullopt on a
  // miss. A bad entry is removed. A hit sets the entry's mtime to now (the LRU order).
  std::optional<Binary> load(std::string_view key);
  // Stores `binary` under `key` atomically, then evicts least recently used entries beyond the
  // cap (never the entry just written). False when nothing was written (cache off, or the write
  // failed: writing is then disabled for this object).
  bool store(std::string_view key, const Binary& binary);

  const std::filesystem::path& dir() const { return dir_; }
  // The directory passed the checks: loads may hit.
  bool usable() const { return dir_fd_ >= 0; }
  bool writable() const { return writable_.load(); }
  // Why the cache is off ("" when usable): "is writable by group or others (mode 0777)".
  const std::string& refusal() const { return refusal_; }
  int64_t max_bytes() const { return max_bytes_; }
  // "<sha256_hex(key)><extension>" in dir().
  std::string entry_name(std::string_view key) const;
  std::filesystem::path entry_path(std::string_view key) const { return dir_ / entry_name(key); }

 private:
  void refuse(std::string reason);
  bool remove_entry(const std::string& name) const;
  void evict_beyond_cap(const std::string& keep);

  std::filesystem::path dir_;
  int64_t max_bytes_;
  CacheFormat format_;
  int dir_fd_ = -1;  // the checked directory; -1: cache off
  std::string refusal_;
  std::atomic<bool> writable_{false};  // stores may write
  std::mutex eviction_mutex_;          // one eviction scan at a time in this object
};

}  // namespace hsched
