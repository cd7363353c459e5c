// On-disk cache of compiled NPU graphs: the driver's native binary (pfnGetNativeBinary) per
// (driver, device, graph payload, build flags), so that the next process creates the graph with
// ZE_GRAPH_FORMAT_NATIVE instead of compiling it again.
//
// Entries: "<digest>.zegraph" through graph/binary_cache.h, in the OpenCL program cache's
// directory (explicit dir, else $HSCHED_CACHE_DIR, else ~/.cache/hsched): a header (magic,
// version, size, checksum) + the binary, written atomically, verified on load (a bad entry is
// removed and missed, never handed to the driver), evicted oldest first beyond the cap. An
// unusable directory disables the cache: loads miss, stores do nothing.
//
// Threading: every method may be called from several threads, and from a build abandoned past
// its deadline; processes sharing the directory are safe through the atomic rename. Units: bytes.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "graph/binary_cache.h"

namespace hsched::level_zero {

inline constexpr int64_t kDefaultNativeCacheMaxBytes = int64_t{512} << 20;  // 512 MiB
inline constexpr const char* kNativeEntryExtension = ".zegraph";

// What makes a cached native graph valid.
struct NativeKey {
  std::string driver_uuid;
  uint32_t driver_version = 0;
  std::string device_name;
  uint32_t device_id = 0;
  uint16_t compiler_major = 0;  // the device's graph compiler (pfnDeviceGetGraphProperties)
  uint16_t compiler_minor = 0;
  std::string build_flags;
  std::span<const uint8_t> payload;  // the NGRAPH_LITE payload the graph is compiled from

  // 16 hex digits, a 64-bit FNV-1a over every field (length-prefixed): the entry's file name.
  std::string digest() const;
};

class NativeCache {
 public:
  using Binary = BinaryCache::Binary;

  // The directory: `explicit_dir` when not empty, else $HSCHED_CACHE_DIR, else
  // $HOME/.cache/hsched; created if needed. Never fails (see the file comment).
  explicit NativeCache(const std::string& explicit_dir = "",
                       int64_t max_bytes = kDefaultNativeCacheMaxBytes);

  // Entries are named by NativeKey::digest(). load: the verified binary or nullopt (a bad entry
  // is removed); a hit marks the entry used now. store: false when nothing was written.
  std::optional<Binary> load(const std::string& digest) { return files_.load(digest); }
  bool store(const std::string& digest, const Binary& binary) {
    return files_.store(digest, binary);
  }

  const std::filesystem::path& dir() const { return files_.dir(); }
  std::filesystem::path entry_path(const std::string& digest) const {
    return files_.entry_path(digest);
  }

  // Graphs compiled from IR (whether or not their binary could be stored) and graphs created
  // from a cached native binary, since construction.
  void record_built() { ++graphs_built_; }
  void record_loaded() { ++graphs_loaded_; }
  int64_t graphs_built() const { return graphs_built_.load(); }
  int64_t graphs_loaded() const { return graphs_loaded_.load(); }

 private:
  BinaryCache files_;
  std::atomic<int64_t> graphs_built_{0};
  std::atomic<int64_t> graphs_loaded_{0};
};

}  // namespace hsched::level_zero
