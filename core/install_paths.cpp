#include "core/install_paths.h"

#include <dlfcn.h>

#include <system_error>
#include <vector>

#ifndef HSCHED_INSTALL_LIBDIR_TO_PREFIX
#error "core/CMakeLists.txt sets the install layout"
#endif

namespace hsched {
namespace fs = std::filesystem;
namespace {

// The folder of the file (shared library or program) that holds this function's code.
std::optional<fs::path> code_dir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&code_dir), &info) == 0 || info.dli_fname == nullptr) {
    return std::nullopt;
  }
  std::error_code error;
  const fs::path file = fs::canonical(info.dli_fname, error);
  if (error) return std::nullopt;
  return file.parent_path();
}

// The install prefix: the first of the code folder's candidates (a library in the libdir, a
// program in the bindir, the Python package's own folder) that holds the data folder, else the
// prefix the build was configured for (a program linked with libhsched.a lives anywhere).
std::optional<fs::path> install_prefix() {
  static const std::optional<fs::path> prefix = []() -> std::optional<fs::path> {
    std::vector<fs::path> candidates;
    if (const std::optional<fs::path> dir = code_dir()) {
      for (const char* relative :
           {HSCHED_INSTALL_LIBDIR_TO_PREFIX, HSCHED_INSTALL_BINDIR_TO_PREFIX, "."}) {
        candidates.push_back((*dir / relative).lexically_normal());
      }
    }
    candidates.emplace_back(HSCHED_INSTALL_CONFIGURED_PREFIX);
    for (const fs::path& candidate : candidates) {
      std::error_code error;
      if (fs::is_directory(candidate / HSCHED_INSTALL_DATADIR / "configs", error)) {
        return candidate;
      }
    }
    return std::nullopt;
  }();
  return prefix;
}

}  // namespace

std::optional<fs::path> installed_data_dir() {
  const std::optional<fs::path> prefix = install_prefix();
  if (!prefix) return std::nullopt;
  return *prefix / HSCHED_INSTALL_DATADIR;
}

std::optional<fs::path> installed_library(const fs::path& file) {
  const std::optional<fs::path> prefix = install_prefix();
  if (!prefix) return std::nullopt;
  std::error_code error;
  const fs::path path = *prefix / HSCHED_INSTALL_PKGLIBDIR / file;
  if (!fs::exists(path, error)) return std::nullopt;
  return path;
}

}  // namespace hsched
