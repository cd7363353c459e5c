// quantize_model's work on a model already in memory (hsched/quantize.h): what `hsched calibrate`
// uses to make the QDQ form of its benchmarks.
#pragma once

#include <filesystem>
#include <string>

#include "hsched/model.h"
#include "hsched/quantize.h"
#include "hsched/status.h"

namespace onnx {
class ModelProto;
}

namespace hsched {

// Rewrites `proto` in place into its QDQ form, as quantize_model writes it. `model` is `proto` as
// imported with `import`; `display` prefixes error messages; external data is read under
// `base_dir`. Errors as quantize_model's; on an error `proto` may be half rewritten.
Result<QuantizeSummary> quantize_proto(onnx::ModelProto& proto, const Model& model,
                                       const ImportOptions& import, const QuantizeOptions& options,
                                       const std::string& display,
                                       const std::filesystem::path& base_dir);

}  // namespace hsched
