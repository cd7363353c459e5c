// ONNX import: file -> parse -> hsched's structural validation -> libonnx checker ->
// input shapes fixed -> ONNX shape inference + hsched's shape folding -> Graph.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "graph/graph.h"
#include "hsched/model.h"
#include "hsched/status.h"

namespace onnx {
class ModelProto;
}

namespace hsched {

inline constexpr int64_t kMinOpset = 9;
inline constexpr int64_t kMaxOpset = 17;


// Every error message starts with the file name and names the node, tensor or flag at fault.
Result<Graph> import_onnx_file(const std::filesystem::path& path, const ImportOptions& options);

// Imports serialized model bytes. External data is looked up under `base_dir`; an empty
// `base_dir` refuses external data. `display_name` prefixes error messages.
Result<Graph> import_onnx_bytes(std::string_view bytes, const ImportOptions& options,
                                const std::string& display_name,
                                const std::filesystem::path& base_dir);

// Imports a model built in memory (the demo model, tests). Consumes `model`.
Result<Graph> import_onnx_model(onnx::ModelProto& model, const ImportOptions& options,
                                const std::string& display_name,
                                const std::filesystem::path& base_dir);

}  // namespace hsched
