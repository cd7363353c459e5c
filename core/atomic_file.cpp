#include "hsched/atomic_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <system_error>

namespace hsched {

namespace fs = std::filesystem;

Status write_file_atomically(const fs::path& path, std::string_view bytes) {
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::string temp = (dir / ("." + path.filename().string() + ".XXXXXX")).string();
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) {
    return invalid_argument(path.string() + ": cannot create a file there (" +
                            std::strerror(errno) + ")");
  }
  (void)::fchmod(fd, 0644);  // mkstemp's 0600 would hide the file from other users
  size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n <= 0) break;
    written += static_cast<size_t>(n);
  }
  const int write_errno = errno;
  const bool closed = ::close(fd) == 0;
  std::error_code ec;
  if (written == bytes.size() && closed) fs::rename(temp, path, ec);
  if (written != bytes.size() || !closed || ec) {
    std::error_code ignored;
    fs::remove(temp, ignored);
    const std::string why = ec ? ec.message() : std::strerror(write_errno);
    return invalid_argument(path.string() + ": cannot write (" + why + ")");
  }
  return Status::ok();
}

}  // namespace hsched
