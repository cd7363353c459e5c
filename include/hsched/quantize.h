// Post-training static quantization (`hsched quantize`): an fp32 ONNX model in, a standard QDQ
// model out: QuantizeLinear/DequantizeLinear pairs around Conv, MatMul, Gemm, Add and Mul, the
// format ONNX Runtime's quantize_static, OpenVINO and NNCF exchange, which hsched's CPU runs as
// integer ops (docs/quantize.md).
//
//   hsched::QuantizeOptions options;
//   options.calibration = {inputs_a, inputs_b};  // input sets, each in the model's input order
//   auto summary = hsched::quantize_model("model.onnx", {}, options, "model_int8.onnx");
//
// Weights: int8, symmetric (zero point 0), one scale per output channel (per tensor with
// `per_channel` off or below opset 13). Biases of Conv and Gemm: int32 at scale
// input_scale * weight_scale, so that they fold into the integer op. Activations: uint8 (or int8)
// with a zero point, their ranges the minimum and maximum seen over the calibration runs (MinMax),
// a percentile of the values or the entropy calibration's threshold, widened to include 0. A Relu (or a Clip from 0, Relu6) whose input
// is quantized here is folded into that quantization (its range starts at 0, so the QuantizeLinear
// clamps as it did), as ONNX Runtime does. Add and Mul are quantized where both inputs already are
// (a residual Add joining two convolutions), not where they take a constant or a fp32 value.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "hsched/dtype.h"
#include "hsched/model.h"
#include "hsched/status.h"
#include "hsched/tensor.h"
#include "hsched/threads.h"

namespace hsched {

struct QuantizeOptions {
  // Calibration input sets, each one tensor per model input in input order (at least one).
  std::vector<std::vector<Tensor>> calibration;
  DType activations = DType::kU8;  // kU8 or kI8, both asymmetric
  bool per_channel = true;         // per-output-channel weight scales (needs opset >= 13)
  std::vector<std::string> keep;   // node names or op types left in fp32
  // Activation ranges: 100 for MinMax; below, in (50, 100), the range keeping this share of each
  // tensor's calibration values, (100 - percentile) / 2 % cut from each end (one outlier no longer
  // widens the range for every value). A second pass over the input sets.
  double percentile = 100;
  // Activation ranges by entropy calibration instead (TensorRT's method): per tensor, the
  // clipping threshold on |value| whose 8-bit quantization of the calibration values' histogram
  // differs least from it (Kullback-Leibler divergence); outliers are cut where cutting them
  // buys the other values more resolution than it costs. Exclusive with a percentile below 100.
  bool entropy = false;
  int cpu_threads = default_cpu_threads();  // for the calibration runs
};

struct QuantizeSummary {
  std::map<std::string, int64_t> quantized;  // op type -> nodes with int8 inputs and outputs
  int64_t weights = 0;                       // initializers written as int8 (and int32 biases)
  int64_t activations = 0;                   // tensors given a QuantizeLinear/DequantizeLinear
  int64_t relu_folded = 0;  // Relu and Relu6-style Clip nodes folded into a quantization
  bool per_channel = true;  // false when asked so or below opset 13
  // Nodes of the quantized op types left in fp32, with why: "kept" (QuantizeOptions::keep),
  // "weight not constant", "not float", "alpha/beta not 1"... -> count.
  std::map<std::string, int64_t> kept;
  int calibration_runs = 0;
  double percentile = 100;  // 100: MinMax
  bool entropy = false;
};

// Quantizes the model at `model` and writes the result to `output` (whole or not at all). The
// model is imported and validated first, as load_model does (same errors); the calibration runs
// on the host CPU in fp32. Errors: InvalidArgument for a model below opset 10 (no
// QuantizeLinear), input sets that do not match the model's inputs, a calibrated tensor holding a
// non-finite value (named), or an output over protobuf's 2 GiB.
Result<QuantizeSummary> quantize_model(const std::filesystem::path& model,
                                       const ImportOptions& import, const QuantizeOptions& options,
                                       const std::filesystem::path& output);
// The same for a model already loaded from `path` with `import` (its import is not repeated).
Result<QuantizeSummary> quantize_model(const Model& model, const std::filesystem::path& path,
                                       const ImportOptions& import, const QuantizeOptions& options,
                                       const std::filesystem::path& output);

// One paragraph: what was quantized, what was kept and why.
std::string quantize_summary_text(const QuantizeSummary& summary);

}  // namespace hsched
