#include "backends/level_zero/native_cache.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

namespace hsched::level_zero {
namespace fs = std::filesystem;
namespace {

constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ULL;
constexpr uint64_t kFnvPrime = 0x100000001b3ULL;
constexpr char kMagic[8] = {'H', 'S', 'Z', 'E', 'G', 'R', 'F', '\0'};
constexpr uint32_t kFormatVersion = 1;
constexpr const char* kTempMarker = ".tmp.";
constexpr auto kStaleTempAge = std::chrono::hours(1);

// Fixed-size, host byte order (a cache serves one machine).
struct EntryHeader {
  char magic[8];
  uint32_t version;
  uint32_t reserved;
  uint64_t payload_bytes;
  uint64_t payload_checksum;
};

uint64_t fnv1a(const void* data, size_t size, uint64_t hash = kFnvOffset) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < size; ++i) {
    hash ^= bytes[i];
    hash *= kFnvPrime;
  }
  return hash;
}

// Length first, so fields cannot run into each other.
uint64_t hash_bytes(uint64_t hash, const void* data, size_t size) {
  const uint64_t length = size;
  hash = fnv1a(&length, sizeof(length), hash);
  return fnv1a(data, size, hash);
}

std::string env_or_empty(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::string(value) : std::string();
}

fs::path resolve_dir(const std::string& explicit_dir) {
  if (!explicit_dir.empty()) return explicit_dir;
  if (std::string env = env_or_empty("HSCHED_CACHE_DIR"); !env.empty()) return env;
  if (std::string home = env_or_empty("HOME"); !home.empty()) {
    return fs::path(home) / ".cache" / "hsched";
  }
  return {};
}

bool is_temp_name(const std::string& name) {
  return !name.empty() && name[0] == '.' && name.find(kTempMarker) != std::string::npos;
}

std::string temp_name(const std::string& final_name) {
  static std::atomic<uint64_t> counter{0};
  thread_local std::mt19937_64 random{std::random_device{}()};
  std::ostringstream name;
  name << "." << final_name << kTempMarker << ::getpid() << "." << counter++ << "." << random();
  return name.str();
}

}  // namespace

std::string NativeKey::digest() const {
  uint64_t hash = kFnvOffset;
  hash = hash_bytes(hash, driver_uuid.data(), driver_uuid.size());
  hash = hash_bytes(hash, &driver_version, sizeof(driver_version));
  hash = hash_bytes(hash, device_name.data(), device_name.size());
  hash = hash_bytes(hash, &device_id, sizeof(device_id));
  hash = hash_bytes(hash, &compiler_major, sizeof(compiler_major));
  hash = hash_bytes(hash, &compiler_minor, sizeof(compiler_minor));
  hash = hash_bytes(hash, build_flags.data(), build_flags.size());
  hash = hash_bytes(hash, payload.data(), payload.size());
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

NativeCache::NativeCache(const std::string& explicit_dir, int64_t max_bytes)
    : dir_(resolve_dir(explicit_dir)), max_bytes_(max_bytes) {
  if (dir_.empty()) return;
  std::error_code error;
  fs::create_directories(dir_, error);
  if (error || !fs::is_directory(dir_, error)) return;
  usable_ = true;
  writable_ = ::access(dir_.c_str(), W_OK | X_OK) == 0;
}

fs::path NativeCache::entry_path(const std::string& digest) const {
  return dir_ / (digest + kNativeEntryExtension);
}

std::optional<NativeCache::Binary> NativeCache::load(const std::string& digest) {
  if (!usable_) return std::nullopt;
  const fs::path path = entry_path(digest);
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  EntryHeader header{};
  bool valid = static_cast<bool>(in.read(reinterpret_cast<char*>(&header), sizeof(header))) &&
               std::memcmp(header.magic, kMagic, sizeof(kMagic)) == 0 &&
               header.version == kFormatVersion;
  if (valid) {  // exactly the header and the payload it announces, measured on the open file
    in.seekg(0, std::ios::end);
    const std::streamoff file_bytes = in.tellg();
    valid = file_bytes >= static_cast<std::streamoff>(sizeof(header)) &&
            static_cast<uint64_t>(file_bytes) - sizeof(header) == header.payload_bytes;
    in.seekg(sizeof(header), std::ios::beg);
  }
  Binary binary;
  if (valid) {
    binary.resize(header.payload_bytes);
    valid = static_cast<bool>(in.read(reinterpret_cast<char*>(binary.data()),
                                      static_cast<std::streamsize>(binary.size()))) &&
            fnv1a(binary.data(), binary.size()) == header.payload_checksum;
  }
  in.close();
  std::error_code error;
  if (!valid) {
    fs::remove(path, error);
    return std::nullopt;
  }
  fs::last_write_time(path, fs::file_time_type::clock::now(), error);
  return binary;
}

bool NativeCache::store(const std::string& digest, const Binary& binary) {
  if (!writable_) return false;
  const fs::path final_path = entry_path(digest);
  const fs::path temp_path = dir_ / temp_name(final_path.filename().string());
  EntryHeader header{};
  std::memcpy(header.magic, kMagic, sizeof(kMagic));
  header.version = kFormatVersion;
  header.payload_bytes = binary.size();
  header.payload_checksum = fnv1a(binary.data(), binary.size());
  std::error_code error;
  {
    std::ofstream out(temp_path, std::ios::binary | std::ios::trunc);
    if (!out) {
      writable_ = false;
      return false;
    }
    out.write(reinterpret_cast<const char*>(&header), sizeof(header));
    out.write(reinterpret_cast<const char*>(binary.data()),
              static_cast<std::streamsize>(binary.size()));
    out.flush();
    if (!out) {
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

void NativeCache::evict_beyond_cap(const fs::path& keep) {
  struct Entry {
    fs::path path;
    fs::file_time_type mtime;
    uintmax_t size = 0;
  };
  std::lock_guard<std::mutex> lock(eviction_mutex_);
  std::vector<Entry> entries;
  uintmax_t total = 0;
  std::error_code error;
  const auto stale_before = fs::file_time_type::clock::now() - kStaleTempAge;
  for (const fs::directory_entry& item : fs::directory_iterator(dir_, error)) {
    const std::string name = item.path().filename().string();
    if (is_temp_name(name)) {
      // Only our own temp files: the directory is shared with the OpenCL program cache.
      if (name.find(kNativeEntryExtension) != std::string::npos &&
          item.last_write_time(error) < stale_before && !error) {
        fs::remove(item.path(), error);
      }
      continue;
    }
    if (item.path().extension() != kNativeEntryExtension || !item.is_regular_file(error)) continue;
    Entry entry{item.path(), item.last_write_time(error), item.file_size(error)};
    if (error) continue;
    total += entry.size;
    entries.push_back(std::move(entry));
  }
  const uintmax_t cap = static_cast<uintmax_t>(std::max<int64_t>(0, max_bytes_));
  if (total <= cap) return;
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.mtime < b.mtime; });
  for (const Entry& entry : entries) {
    if (total <= cap) break;
    if (entry.path == keep) continue;
    if (fs::remove(entry.path, error)) total -= entry.size;
  }
}

}  // namespace hsched::level_zero
