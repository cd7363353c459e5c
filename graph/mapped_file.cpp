#include "graph/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace hsched {
namespace {

// Closes a file descriptor when it goes out of scope.
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

Result<std::shared_ptr<MappedFile>> MappedFile::open(const std::filesystem::path& path) {
  FdCloser file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0) {
    return Status(ErrorCode::kUnavailable, "cannot open: " + std::string(std::strerror(errno)));
  }
  struct stat info {};
  if (::fstat(file.fd, &info) != 0) {
    return Status(ErrorCode::kUnavailable, "cannot stat: " + std::string(std::strerror(errno)));
  }
  if (!S_ISREG(info.st_mode)) return invalid_argument("not a regular file");
  const auto size = static_cast<size_t>(info.st_size);
  if (size == 0) return std::shared_ptr<MappedFile>(new MappedFile(nullptr, 0));
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, file.fd, 0);
  if (p == MAP_FAILED) {
    return Status(ErrorCode::kUnavailable, "cannot map: " + std::string(std::strerror(errno)));
  }
  return std::shared_ptr<MappedFile>(new MappedFile(static_cast<std::byte*>(p), size));
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(data_, size_);
}

}  // namespace hsched
