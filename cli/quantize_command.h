// `hsched quantize`: post-training static quantization of an fp32 ONNX model into a QDQ model
// (hsched/quantize.h), calibrated on input sets from a folder or on seeded random inputs.
#pragma once

#include <string>
#include <vector>

#include "hsched/status.h"
#include "hsched/threads.h"

namespace hsched::cli {

struct QuantizeArgs {
  std::string model_path;
  std::string output;
  std::vector<std::string> input_shapes;  // "NAME=d1,d2,..." as given to --input-shape
  // Calibration: a folder of input_K.pb files, or of folders of them (test_data_set_0/...); or
  // `random` seeded random input sets (as `hsched run` makes them).
  std::string calibration_dir;
  int random = 0;
  std::string activations = "u8";  // u8 or i8
  bool per_tensor = false;
  double percentile = 100;        // 100: MinMax ranges
  bool entropy = false;           // entropy calibration instead
  std::vector<std::string> keep;  // node names or op types left in fp32
  int threads = default_cpu_threads();
};

// Writes the quantized model and returns the summary (hsched::quantize_summary_text).
Result<std::string> run_quantize(const QuantizeArgs& args);

}  // namespace hsched::cli
