// A read-only memory mapping of a whole file (RAII): external weights are used in place.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>

#include "hsched/status.h"

namespace hsched {

class MappedFile {
 public:
  // Maps `path` read-only; an empty file maps to a null pointer with size 0.
  static Result<std::shared_ptr<MappedFile>> open(const std::filesystem::path& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::byte* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  MappedFile(std::byte* data, size_t size) : data_(data), size_(size) {}
  std::byte* data_;
  size_t size_;
};

}  // namespace hsched
