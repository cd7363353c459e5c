#include "core/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace hsched {
namespace {

// Owns a file descriptor: closes it when it goes out of scope.
class Descriptor {
 public:
  explicit Descriptor(int fd) : fd_(fd) {}
  ~Descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  Descriptor& operator=(Descriptor&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

Status os_error(const std::string& what) {
  return Status(ErrorCode::kUnavailable, what + ": " + std::string(std::strerror(errno)));
}

std::string file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

// Why opening `name` in `dir_fd` without following links failed: a link is named as such.
Status open_failure(int dir_fd, const std::string& name, const std::string& shown) {
  const int error = errno;
  struct stat info {};
  if (::fstatat(dir_fd, name.c_str(), &info, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(info.st_mode)) {
    return invalid_argument("'" + shown +
                            "' is a symbolic link, which could lead outside the "
                            "folder; links are not followed here");
  }
  errno = error;
  if (error == ENOENT) return invalid_argument("'" + shown + "' does not exist");
  return os_error("cannot open '" + shown + "'");
}

}  // namespace

Result<std::shared_ptr<MappedFile>> MappedFile::map_descriptor(int fd) {
  struct stat info {};
  if (::fstat(fd, &info) != 0) return os_error("cannot stat");
  if (!S_ISREG(info.st_mode)) {
    return invalid_argument("is " + file_kind(info.st_mode) + ", not a regular file");
  }
  const auto size = static_cast<size_t>(info.st_size);
  if (size == 0) return std::shared_ptr<MappedFile>(new MappedFile(nullptr, 0));
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) return os_error("cannot map");
  return std::shared_ptr<MappedFile>(new MappedFile(static_cast<std::byte*>(p), size));
}

Result<std::shared_ptr<MappedFile>> MappedFile::open(const std::filesystem::path& path) {
  // O_NONBLOCK: opening a FIFO with no writer would otherwise wait forever. It changes nothing
  // for a regular file, the only kind mapped.
  Descriptor file(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (file.get() < 0) return os_error("cannot open");
  return map_descriptor(file.get());
}

Result<std::shared_ptr<MappedFile>> MappedFile::open_beneath(
    const std::filesystem::path& dir, const std::filesystem::path& relative) {
  Descriptor current(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (current.get() < 0) return os_error("cannot open the folder '" + dir.string() + "'");
  std::vector<std::string> parts;
  for (const auto& part : relative) {
    if (part.empty() || part == ".") continue;
    if (part == ".." || part.has_root_directory() || part.has_root_name()) {
      return invalid_argument("'" + relative.string() + "' leaves the folder");
    }
    parts.push_back(part.string());
  }
  if (parts.empty()) return invalid_argument("'" + relative.string() + "' names no file");
  std::filesystem::path shown;
  for (size_t i = 0; i < parts.size(); ++i) {
    shown /= parts[i];
    const bool last = i + 1 == parts.size();
    const int flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | (last ? O_NONBLOCK : O_DIRECTORY);
    Descriptor next(::openat(current.get(), parts[i].c_str(), flags));
    if (next.get() < 0) return open_failure(current.get(), parts[i], shown.string());
    current = std::move(next);
  }
  return map_descriptor(current.get());
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(data_, size_);
}

}  // namespace hsched
