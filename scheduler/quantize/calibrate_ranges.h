// The activation ranges of `hsched quantize`: the model run on the host CPU in fp32 over the
// calibration input sets, every tensor to quantize as an extra output. MinMax, a percentile of
// each tensor's values, or entropy calibration (a histogram per tensor over its MinMax range or
// its magnitudes, a second pass).
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "hsched/model.h"
#include "hsched/quantize.h"
#include "hsched/status.h"
#include "scheduler/quantize/quantize_plan.h"

namespace onnx {
class ModelProto;
}

namespace hsched {

struct Range {
  float min = 0;  // starts at 0: every range includes 0, as an activation's zero point needs
  float max = 0;
};

// `model` is `original` as imported (with `import`); `display` prefixes error messages; external
// data is read under `base_dir`. Errors: an input set that does not match the model's inputs, a
// non-finite value in a tensor to quantize (named, with its set).
Result<std::map<std::string, Range>> calibrate_ranges(const onnx::ModelProto& original,
                                                      const QuantizePlan& plan, const Model& model,
                                                      const ImportOptions& import,
                                                      const QuantizeOptions& options,
                                                      const std::string& display,
                                                      const std::filesystem::path& base_dir);

}  // namespace hsched
