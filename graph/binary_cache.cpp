#include "graph/binary_cache.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

namespace hsched {
namespace fs = std::filesystem;
namespace {

constexpr uint64_t kFnvPrime = 0x100000001b3ULL;

std::string env_or_empty(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::string(value) : std::string();
}

constexpr const char* kTempMarker = ".tmp.";
constexpr auto kStaleTempAge = std::chrono::hours(1);

bool is_temp_name(const std::string& name) {
  return !name.empty() && name[0] == '.' && name.find(kTempMarker) != std::string::npos;
}

// A name no other thread or process writing to the same directory uses.
std::string temp_name(const std::string& final_name) {
  static std::atomic<uint64_t> counter{0};
  thread_local std::mt19937_64 random{std::random_device{}()};
  std::ostringstream name;
  name << "." << final_name << kTempMarker << ::getpid() << "." << counter++ << "." << random();
  return name.str();
}

struct Entry {
  fs::path path;
  fs::file_time_type mtime;
  uintmax_t size = 0;
};

}  // namespace

uint64_t fnv1a64(const void* data, size_t size, uint64_t seed) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  uint64_t hash = seed;
  for (size_t i = 0; i < size; ++i) {
    hash ^= bytes[i];
    hash *= kFnvPrime;
  }
  return hash;
}

uint64_t hash_field(uint64_t hash, const void* data, size_t size) {
  const uint64_t length = size;
  hash = fnv1a64(&length, sizeof(length), hash);
  return fnv1a64(data, size, hash);
}

std::string digest_text(uint64_t hash) {
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(hash));
  return hex;
}

fs::path BinaryCache::resolve_dir(const std::string& explicit_dir) {
  if (!explicit_dir.empty()) return explicit_dir;
  if (std::string env = env_or_empty("HSCHED_CACHE_DIR"); !env.empty()) return env;
  if (std::string home = env_or_empty("HOME"); !home.empty()) {
    return fs::path(home) / ".cache" / "hsched";
  }
  return {};
}

BinaryCache::BinaryCache(const std::string& explicit_dir, int64_t max_bytes, CacheFormat format)
    : dir_(resolve_dir(explicit_dir)), max_bytes_(max_bytes), format_(std::move(format)) {
  if (dir_.empty()) return;
  std::error_code error;
  fs::create_directories(dir_, error);
  if (error || !fs::is_directory(dir_, error)) return;
  usable_ = true;
  // access(W_OK) catches a read-only directory for non-root users; root passes it, and then a
  // failed temp-file write in store() disables writing instead.
  writable_ = ::access(dir_.c_str(), W_OK | X_OK) == 0;
}

fs::path BinaryCache::entry_path(const std::string& digest) const {
  return dir_ / (digest + format_.extension);
}

std::optional<BinaryCache::Binary> BinaryCache::load(const std::string& digest) {
  if (!usable_) return std::nullopt;
  const fs::path path = entry_path(digest);
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;  // a plain miss
  CacheEntryHeader header{};
  Binary binary;
  bool valid = static_cast<bool>(in.read(reinterpret_cast<char*>(&header), sizeof(header))) &&
               std::memcmp(header.magic, format_.magic, sizeof(format_.magic)) == 0 &&
               header.version == format_.version;
  // The file must hold exactly the header and the payload it announces: a truncated or
  // over-long file is not trusted even before the checksum is computed. Measured on the open
  // stream, not the path: another process may rename a new entry over it meanwhile.
  if (valid) {
    in.seekg(0, std::ios::end);
    const std::streamoff file_bytes = in.tellg();
    valid = file_bytes >= 0 && header.payload_bytes <= static_cast<uint64_t>(file_bytes) &&
            static_cast<uint64_t>(file_bytes) == sizeof(header) + header.payload_bytes;
    in.seekg(sizeof(header), std::ios::beg);
  }
  std::error_code error;
  if (valid) {
    binary.resize(header.payload_bytes);
    valid = static_cast<bool>(in.read(reinterpret_cast<char*>(binary.data()),
                                      static_cast<std::streamsize>(binary.size()))) &&
            fnv1a64(binary.data(), binary.size()) == header.payload_checksum;
  }
  in.close();
  if (!valid) {
    fs::remove(path, error);  // rebuilt and rewritten by the caller
    return std::nullopt;
  }
  fs::last_write_time(path, fs::file_time_type::clock::now(), error);  // LRU: used now
  return binary;
}

bool BinaryCache::store(const std::string& digest, const Binary& binary) {
  if (!writable_) return false;
  const fs::path final_path = entry_path(digest);
  const fs::path temp_path = dir_ / temp_name(final_path.filename().string());
  CacheEntryHeader header{};
  std::memcpy(header.magic, format_.magic, sizeof(format_.magic));
  header.version = format_.version;
  header.payload_bytes = binary.size();
  header.payload_checksum = fnv1a64(binary.data(), binary.size());
  std::error_code error;
  {
    std::ofstream out(temp_path, std::ios::binary | std::ios::trunc);
    if (!out) {
      writable_ = false;  // read-only or vanished directory: stop trying
      return false;
    }
    out.write(reinterpret_cast<const char*>(&header), sizeof(header));
    out.write(reinterpret_cast<const char*>(binary.data()),
              static_cast<std::streamsize>(binary.size()));
    out.flush();
    if (!out) {  // disk full or I/O error: leave no partial file behind
      out.close();
      fs::remove(temp_path, error);
      return false;
    }
  }
  fs::rename(temp_path, final_path, error);
  if (error) {
    fs::remove(temp_path, error);
    return false;
  }
  evict_beyond_cap(final_path);
  return true;
}

void BinaryCache::evict_beyond_cap(const fs::path& keep) {
  std::lock_guard<std::mutex> lock(eviction_mutex_);
  std::vector<Entry> entries;
  uintmax_t total = 0;
  std::error_code error;
  const auto stale_before = fs::file_time_type::clock::now() - kStaleTempAge;
  for (const fs::directory_entry& item : fs::directory_iterator(dir_, error)) {
    const std::string name = item.path().filename().string();
    if (is_temp_name(name)) {
      // Left by a process killed mid-write, old enough that no writer still owns it; only this
      // format's (the directory may be shared).
      if (name.find(format_.extension + kTempMarker) != std::string::npos &&
          item.last_write_time(error) < stale_before && !error) {
        fs::remove(item.path(), error);
      }
      continue;
    }
    if (item.path().extension() != format_.extension || !item.is_regular_file(error)) continue;
    Entry entry{item.path(), item.last_write_time(error), item.file_size(error)};
    if (error) continue;  // removed by another process meanwhile
    total += entry.size;
    entries.push_back(std::move(entry));
  }
  if (total <= static_cast<uintmax_t>(std::max<int64_t>(0, max_bytes_))) return;
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.mtime < b.mtime; });
  for (const Entry& entry : entries) {
    if (total <= static_cast<uintmax_t>(max_bytes_)) break;
    if (entry.path == keep) continue;
    if (fs::remove(entry.path, error)) total -= entry.size;
  }
}

}  // namespace hsched
