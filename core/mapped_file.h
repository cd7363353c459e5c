// A read-only memory mapping of a whole file (RAII): external weights are used in place.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>

#include "hsched/status.h"

namespace hsched {

class MappedFile {
 public:
  // Maps `path` read-only; an empty file maps to a null pointer with size 0. Anything but a
  // regular file (a FIFO, a device, a socket, a directory) is an InvalidArgument, refused without
  // blocking: the file is opened non-blocking and checked before it is read.
  static Result<std::shared_ptr<MappedFile>> open(const std::filesystem::path& path);

  // Maps `relative` (relative, no ".." component) inside the directory `dir`, opening one
  // component at a time from `dir` without following symbolic links: a link anywhere in
  // `relative` is an InvalidArgument, so the file cannot lie outside `dir` even if the folder
  // changes meanwhile. `dir` itself may be or contain links.
  static Result<std::shared_ptr<MappedFile>> open_beneath(const std::filesystem::path& dir,
                                                          const std::filesystem::path& relative);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::byte* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  MappedFile(std::byte* data, size_t size) : data_(data), size_(size) {}
  static Result<std::shared_ptr<MappedFile>> map_descriptor(int fd);

  std::byte* data_;
  size_t size_;
};

}  // namespace hsched
