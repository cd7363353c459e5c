// Where an installed hsched keeps what it reads at run time (shipped configs, the simulated NPU
// driver), found from the file that holds hsched's code: libhsched.so, or a program linked with
// libhsched.a, or the Python extension. The install layout (cmake/install.cmake) puts the data
// at <prefix>/<datadir>/hsched and the driver at <prefix>/<libdir>/hsched; the prefix is the
// code file's folder with the relative path from the libdir or the bindir to the prefix applied
// (the Python package keeps the same layout inside its folder); a program linked with
// libhsched.a, which may live anywhere, finds the prefix the build was configured for
// (CMAKE_INSTALL_PREFIX). A build tree is no install: callers fall back to the build's own paths.
#pragma once

#include <filesystem>
#include <optional>

namespace hsched {

// <prefix>/<datadir>/hsched of the install this code runs from, when there is one (it holds a
// `configs` folder).
std::optional<std::filesystem::path> installed_data_dir();

// <prefix>/<libdir>/hsched/FILE of that install, when the file is there.
std::optional<std::filesystem::path> installed_library(const std::filesystem::path& file);

}  // namespace hsched
