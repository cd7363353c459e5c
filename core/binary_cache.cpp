#include "core/binary_cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <utility>

#include <openssl/evp.h>

#include "hsched/version.h"

namespace hsched {
namespace fs = std::filesystem;
namespace {

constexpr const char* kTempMarker = ".tmp.";
constexpr int64_t kStaleTempAgeSeconds = 3600;
constexpr mode_t kDirMode = 0700;
constexpr mode_t kEntryMode = 0600;
constexpr size_t kEntryStemChars = 2 * kSha256Bytes;
constexpr size_t kDigestedHeaderBytes = offsetof(CacheEntryHeader, digest);

// A file descriptor, closed on destruction.
class UniqueFd {
 public:
  explicit UniqueFd(int fd = -1) : fd_(fd) {}
  ~UniqueFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
      if (fd_ >= 0) ::close(fd_);
      fd_ = other.release();
    }
    return *this;
  }
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

struct EvpContextFree {
  void operator()(EVP_MD_CTX* context) const { EVP_MD_CTX_free(context); }
};

// SHA-256 over several byte ranges in order; nullopt when OpenSSL fails.
std::optional<std::array<unsigned char, kSha256Bytes>> sha256(
    std::initializer_list<std::span<const uint8_t>> parts) {
  std::unique_ptr<EVP_MD_CTX, EvpContextFree> context(EVP_MD_CTX_new());
  if (!context || EVP_DigestInit_ex(context.get(), EVP_sha256(), nullptr) != 1) {
    return std::nullopt;
  }
  for (const std::span<const uint8_t> part : parts) {
    if (EVP_DigestUpdate(context.get(), part.data(), part.size()) != 1) return std::nullopt;
  }
  std::array<unsigned char, kSha256Bytes> digest{};
  unsigned int size = 0;
  if (EVP_DigestFinal_ex(context.get(), digest.data(), &size) != 1 || size != digest.size()) {
    return std::nullopt;
  }
  return digest;
}

std::span<const uint8_t> bytes_of(std::string_view text) {
  return {reinterpret_cast<const uint8_t*>(text.data()), text.size()};
}

std::string hex(std::span<const unsigned char> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text;
  text.reserve(2 * bytes.size());
  for (const unsigned char byte : bytes) {
    text += kDigits[byte >> 4];
    text += kDigits[byte & 0xF];
  }
  return text;
}

// The entry's digest: the header up to the digest field, the key, the binary.
std::optional<std::array<unsigned char, kSha256Bytes>> entry_digest(
    const CacheEntryHeader& header, std::string_view key, std::span<const uint8_t> binary) {
  return sha256(
      {{reinterpret_cast<const uint8_t*>(&header), kDigestedHeaderBytes}, bytes_of(key), binary});
}

std::string env_or_empty(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::string(value) : std::string();
}

std::string errno_text(int error) { return std::strerror(error); }

std::string mode_text(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof(text), "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// Why `st` (an fstat of the directory) is not a directory the cache may use; "" when it is.
std::string directory_refusal(const struct stat& st) {
  if (!S_ISDIR(st.st_mode)) return "it is not a directory";
  if (st.st_uid != ::geteuid()) {
    return "it is owned by uid " + std::to_string(st.st_uid) + ", not by uid " +
           std::to_string(::geteuid());
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return "it is writable by group or others (mode " + mode_text(st.st_mode) + ")";
  }
  return {};
}

// Opens `dir`, creating each missing component with mode 0700 (set with fchmod, so the umask
// does not matter). The last component is opened with O_NOFOLLOW; earlier ones may be links
// ($HOME through a link is common). -1 with `reason` set on failure.
int open_or_create_dir(const fs::path& dir, std::string* reason) {
  UniqueFd parent(::open(dir.is_absolute() ? "/" : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (parent.get() < 0) {
    *reason = "cannot open it: " + errno_text(errno);
    return -1;
  }
  std::vector<std::string> components;
  for (const fs::path& component : dir.relative_path()) {
    if (!component.empty() && component != ".") components.push_back(component.string());
  }
  fs::path prefix = dir.root_path();
  for (size_t i = 0; i < components.size(); ++i) {
    const char* name = components[i].c_str();
    const bool last = i + 1 == components.size();
    prefix /= components[i];
    // A failure on the way names the component: "/a/file is not a directory".
    const std::string it = last ? "it" : prefix.string();
    const bool created = ::mkdirat(parent.get(), name, kDirMode) == 0;
    if (!created && errno != EEXIST) {
      *reason = (last ? "cannot create it: " : "cannot create " + it + ": ") + errno_text(errno);
      return -1;
    }
    const int follow = last || created ? O_NOFOLLOW : 0;
    UniqueFd child(::openat(parent.get(), name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | follow));
    if (child.get() < 0) {
      const int error = errno;
      struct stat st {};
      if (::fstatat(parent.get(), name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
        *reason = it + " is a symbolic link";
      } else if (error == ENOTDIR) {
        *reason = it + " is not a directory";
      } else {
        *reason = "cannot open " + it + ": " + errno_text(error);
      }
      return -1;
    }
    struct stat st {};
    if (created && ::fstat(child.get(), &st) == 0 && st.st_uid == ::geteuid() &&
        (st.st_mode & 07777) != kDirMode) {
      ::fchmod(child.get(), kDirMode);  // the umask may have taken bits away
    }
    parent = std::move(child);
  }
  return parent.release();
}

// Writes all of `bytes`; false on an error (errno set).
bool write_all(int fd, std::span<const uint8_t> bytes) {
  while (!bytes.empty()) {
    const ssize_t written = ::write(fd, bytes.data(), bytes.size());
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return false;
    bytes = bytes.subspan(static_cast<size_t>(written));
  }
  return true;
}

// Reads exactly `bytes.size()` bytes; false on an error or an early end of file.
bool read_all(int fd, std::span<uint8_t> bytes) {
  while (!bytes.empty()) {
    const ssize_t got = ::read(fd, bytes.data(), bytes.size());
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    bytes = bytes.subspan(static_cast<size_t>(got));
  }
  return true;
}

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

bool is_entry_stem(std::string_view stem) {
  return stem.size() == kEntryStemChars && std::all_of(stem.begin(), stem.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

struct Entry {
  std::string name;
  struct timespec mtime {};
  uint64_t size = 0;
};

bool older(const struct timespec& a, const struct timespec& b) {
  return a.tv_sec != b.tv_sec ? a.tv_sec < b.tv_sec : a.tv_nsec < b.tv_nsec;
}

}  // namespace

std::string sha256_hex(std::span<const uint8_t> bytes) {
  const auto digest = sha256({bytes});
  // EVP fails only when OpenSSL cannot allocate; a key nobody else forms is a plain miss then.
  return digest ? hex(*digest) : std::string(kEntryStemChars, 'x');
}

std::string sha256_hex(std::string_view bytes) { return sha256_hex(bytes_of(bytes)); }

std::string begin_cache_key(const CacheFormat& format) {
  std::string key;
  append_key_field(&key, std::string_view(format.magic, sizeof(format.magic)));
  append_key_field(&key, uint64_t{format.version});
  append_key_field(&key, std::string_view("hsched " HSCHED_VERSION_STRING));
  return key;
}

void append_key_field(std::string* key, std::string_view bytes) {
  append_key_field(key, uint64_t{bytes.size()});
  key->append(bytes);
}

void append_key_field(std::string* key, std::span<const uint8_t> bytes) {
  append_key_field(key,
                   std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

void append_key_field(std::string* key, uint64_t value) {
  key->append(reinterpret_cast<const char*>(&value), sizeof(value));
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
  if (dir_.empty()) {
    refusal_ = "no directory ($HOME is not set)";  // nothing to name: no warning
    return;
  }
  std::string reason;
  UniqueFd fd(open_or_create_dir(dir_, &reason));
  struct stat st {};
  if (fd.get() >= 0) {
    if (::fstat(fd.get(), &st) != 0) {
      reason = "cannot stat it: " + errno_text(errno);
    } else {
      reason = directory_refusal(st);
    }
  }
  if (!reason.empty()) {
    refuse(std::move(reason));
    return;
  }
  dir_fd_ = fd.release();
  // faccessat(W_OK) catches a read-only directory for non-root users; root passes it, and then
  // a failed temp-file write in store() disables writing instead.
  writable_ = ::faccessat(dir_fd_, ".", W_OK | X_OK, 0) == 0;
}

BinaryCache::~BinaryCache() {
  if (dir_fd_ >= 0) ::close(dir_fd_);
}

void BinaryCache::refuse(std::string reason) {
  refusal_ = std::move(reason);
  static std::mutex mutex;
  static std::set<std::string> warned;
  std::lock_guard<std::mutex> lock(mutex);
  if (warned.insert(dir_.string()).second) {
    std::fprintf(stderr,
                 "hsched: warning: not using the binary cache directory %s: %s; compiled "
                 "binaries are neither loaded from nor stored there\n",
                 dir_.c_str(), refusal_.c_str());
  }
}

std::string BinaryCache::entry_name(std::string_view key) const {
  return sha256_hex(key) + format_.extension;
}

bool BinaryCache::remove_entry(const std::string& name) const {
  return ::unlinkat(dir_fd_, name.c_str(), 0) == 0;
}

std::optional<BinaryCache::Binary> BinaryCache::load(std::string_view key) {
  if (dir_fd_ < 0) return std::nullopt;
  const std::string name = entry_name(key);
  // O_NONBLOCK: opening a FIFO planted under the name must not hang; a regular file ignores it.
  UniqueFd fd(::openat(dir_fd_, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) {
    if (errno == ELOOP) remove_entry(name);  // a symbolic link: never followed
    return std::nullopt;                     // else a plain miss
  }
  // Checked on the open file, not the path: another process may rename a new entry over it.
  struct stat st {};
  CacheEntryHeader header{};
  bool valid = ::fstat(fd.get(), &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::geteuid() &&
               (st.st_mode & (S_IWGRP | S_IWOTH)) == 0 &&
               read_all(fd.get(), {reinterpret_cast<uint8_t*>(&header), sizeof(header)}) &&
               std::memcmp(header.magic, format_.magic, sizeof(format_.magic)) == 0 &&
               header.version == format_.version;
  // The file must hold exactly the header, the key and the payload it announces.
  const uint64_t file_bytes = valid ? static_cast<uint64_t>(st.st_size) : 0;
  valid = valid && header.key_bytes <= file_bytes && header.payload_bytes <= file_bytes &&
          file_bytes == sizeof(header) + header.key_bytes + header.payload_bytes;
  if (valid && header.key_bytes != key.size()) return std::nullopt;  // another key: a miss
  std::string stored_key;
  Binary binary;
  if (valid) {
    stored_key.resize(header.key_bytes);
    valid = read_all(fd.get(), {reinterpret_cast<uint8_t*>(stored_key.data()), stored_key.size()});
  }
  if (valid && stored_key != key) return std::nullopt;  // another key: a miss, then overwritten
  if (valid) {
    binary.resize(header.payload_bytes);
    valid = read_all(fd.get(), binary);
  }
  if (valid) {
    const auto digest = entry_digest(header, key, binary);
    valid = digest && std::memcmp(digest->data(), header.digest, kSha256Bytes) == 0;
  }
  if (!valid) {
    remove_entry(name);  // rebuilt and rewritten by the caller
    return std::nullopt;
  }
  ::futimens(fd.get(), nullptr);  // LRU: used now
  return binary;
}

bool BinaryCache::store(std::string_view key, const Binary& binary) {
  if (dir_fd_ < 0 || !writable_) return false;
  CacheEntryHeader header{};
  std::memcpy(header.magic, format_.magic, sizeof(format_.magic));
  header.version = format_.version;
  header.key_bytes = key.size();
  header.payload_bytes = binary.size();
  const auto digest = entry_digest(header, key, binary);
  if (!digest) return false;
  std::memcpy(header.digest, digest->data(), kSha256Bytes);

  const std::string final_name = entry_name(key);
  const std::string temp = temp_name(final_name);
  UniqueFd fd(::openat(dir_fd_, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                       kEntryMode));
  if (fd.get() < 0) {
    writable_ = false;  // read-only or vanished directory: stop trying
    return false;
  }
  const bool written =
      ::fchmod(fd.get(), kEntryMode) == 0 &&  // exactly 0600, whatever the umask
      write_all(fd.get(), {reinterpret_cast<const uint8_t*>(&header), sizeof(header)}) &&
      write_all(fd.get(), bytes_of(key)) && write_all(fd.get(), binary);
  if (::close(fd.release()) != 0 || !written) {  // disk full or I/O error: no partial file
    ::unlinkat(dir_fd_, temp.c_str(), 0);
    return false;
  }
  if (::renameat(dir_fd_, temp.c_str(), dir_fd_, final_name.c_str()) != 0) {
    ::unlinkat(dir_fd_, temp.c_str(), 0);
    return false;
  }
  evict_beyond_cap(final_name);
  return true;
}

void BinaryCache::evict_beyond_cap(const std::string& keep) {
  std::lock_guard<std::mutex> lock(eviction_mutex_);
  const int list_fd = ::openat(dir_fd_, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (list_fd < 0) return;
  std::unique_ptr<DIR, int (*)(DIR*)> listing(::fdopendir(list_fd), &::closedir);
  if (!listing) {
    ::close(list_fd);
    return;
  }
  std::vector<Entry> entries;
  uint64_t total = 0;
  struct timespec now {};
  ::clock_gettime(CLOCK_REALTIME, &now);
  const std::string& extension = format_.extension;
  while (const struct dirent* item = ::readdir(listing.get())) {
    const std::string name = item->d_name;
    struct stat st {};
    if (is_temp_name(name)) {
      // Left by a process killed mid-write, old enough that no writer still owns it; only this
      // format's (the directory may be shared).
      if (name.find(extension + kTempMarker) != std::string::npos &&
          ::fstatat(dir_fd_, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
          st.st_mtim.tv_sec < now.tv_sec - kStaleTempAgeSeconds) {
        remove_entry(name);
      }
      continue;
    }
    if (name.size() <= extension.size() ||
        name.compare(name.size() - extension.size(), extension.size(), extension) != 0) {
      continue;
    }
    if (!is_entry_stem(std::string_view(name).substr(0, name.size() - extension.size()))) {
      remove_entry(name);  // an older format's name: never loaded again
      continue;
    }
    if (::fstatat(dir_fd_, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // removed
    if (!S_ISREG(st.st_mode)) continue;
    total += static_cast<uint64_t>(st.st_size);
    entries.push_back({name, st.st_mtim, static_cast<uint64_t>(st.st_size)});
  }
  const uint64_t cap = static_cast<uint64_t>(std::max<int64_t>(0, max_bytes_));
  if (total <= cap) return;
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return older(a.mtime, b.mtime); });
  for (const Entry& entry : entries) {
    if (total <= cap) break;
    if (entry.name == keep) continue;
    if (remove_entry(entry.name)) total -= entry.size;
  }
}

}  // namespace hsched
