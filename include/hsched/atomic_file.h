// Files written whole or not at all (reports, traces, tensors, calibrated profiles): a temporary
// file in the destination's folder, then a rename. A reader never sees a partial file, and a
// failure leaves nothing behind.
#pragma once

#include <filesystem>
#include <string_view>

#include "hsched/status.h"

namespace hsched {

// InvalidArgument "<path>: cannot create a file there (<why>)" or "<path>: cannot write
// (<why>)". The file is readable by others (0644), as a plain write would leave it.
Status write_file_atomically(const std::filesystem::path& path, std::string_view bytes);

}  // namespace hsched
