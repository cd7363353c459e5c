// On-disk cache of compiled NPU graphs: the driver's native binary (pfnGetNativeBinary) per
// (driver, device, graph extension, compiler, graph payload, build flags), so that the next
// process creates the graph with ZE_GRAPH_FORMAT_NATIVE instead of compiling it again.
//
// Entries: "<SHA-256 of the key>.zegraph" through core/binary_cache.h, in the OpenCL program
// cache's directory (explicit dir, else $HSCHED_CACHE_DIR, else ~/.cache/hsched), with its trust
// model: a directory owned by the user and closed to group and others (else the cache is off,
// with one warning line), entries that are the user's regular 0600 files holding their full key
// and a SHA-256 over header, key and binary, written atomically, verified on load (a bad entry is
// removed and missed, never handed to the driver), evicted oldest first beyond the cap.
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
#include <string_view>
#include <vector>

#include "core/binary_cache.h"

namespace hsched::level_zero {

inline constexpr int64_t kDefaultNativeCacheMaxBytes = int64_t{512} << 20;  // 512 MiB
inline constexpr const char* kNativeEntryExtension = ".zegraph";

// What makes a cached native graph valid.
struct NativeKey {
  std::string driver_uuid;      // hex (zeDriverGetProperties uuid)
  uint32_t driver_version = 0;  // zeDriverGetProperties driverVersion
  std::string device_name;
  std::string device_uuid;  // hex (zeDeviceGetProperties uuid)
  uint32_t device_id = 0;
  uint32_t graph_extension_version = 0;  // pfnDeviceGetGraphProperties graphExtensionVersion
  uint16_t compiler_major = 0;  // the device's graph compiler (pfnDeviceGetGraphProperties)
  uint16_t compiler_minor = 0;
  std::string build_flags;
  std::span<const uint8_t> payload;  // the NGRAPH_LITE payload the graph is compiled from

  // The canonical key stored in the entry: begin_cache_key(the .zegraph format, hsched's
  // version), every field length-prefixed, and the payload as its SHA-256 (the payload carries
  // the weights: storing it again would double the cache).
  std::string bytes() const;
  // 64 hex digits, sha256_hex(bytes()): the entry's file name without the extension.
  std::string digest() const;
};

class NativeCache {
 public:
  using Binary = BinaryCache::Binary;

  // The directory: `explicit_dir` when not empty, else $HSCHED_CACHE_DIR, else
  // $HOME/.cache/hsched; created and checked as binary_cache.h says. Never fails (see the file
  // comment).
  explicit NativeCache(const std::string& explicit_dir = "",
                       int64_t max_bytes = kDefaultNativeCacheMaxBytes);

  // `key` is NativeKey::bytes(). load: the verified binary or nullopt (a bad entry is removed);
  // a hit marks the entry used now. store: false when nothing was written.
  std::optional<Binary> load(std::string_view key) { return files_.load(key); }
  bool store(std::string_view key, const Binary& binary) { return files_.store(key, binary); }

  const std::filesystem::path& dir() const { return files_.dir(); }
  bool usable() const { return files_.usable(); }
  std::filesystem::path entry_path(std::string_view key) const { return files_.entry_path(key); }

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
