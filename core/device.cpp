// Names of device kinds, APIs, precisions and op classes; op types -> op classes; the small
// queries on device profiles and targets (include/hsched/device.h).
#include "hsched/device.h"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace hsched {
namespace {

// One table per enum, in enum order, so that a name and its parser can never disagree.
template <typename Enum, size_t N>
using NameTable = std::array<std::pair<Enum, const char*>, N>;

constexpr NameTable<DeviceKind, 3> kKindNames{{
    {DeviceKind::kCpu, "cpu"},
    {DeviceKind::kGpu, "gpu"},
    {DeviceKind::kNpu, "npu"},
}};
constexpr NameTable<DeviceApi, 3> kApiNames{{
    {DeviceApi::kHost, "host"},
    {DeviceApi::kOpenCl, "opencl"},
    {DeviceApi::kLevelZero, "level_zero"},
}};
// Also the preference order of DeviceProfile::precisions().
constexpr NameTable<Precision, 4> kPrecisionNames{{
    {Precision::kFp32, "fp32"},
    {Precision::kFp16, "fp16"},
    {Precision::kBf16, "bf16"},
    {Precision::kInt8, "int8"},
}};
constexpr NameTable<OpClass, kOpClassCount> kOpClassNames{{
    {OpClass::kConvLinear, "conv_linear"},
    {OpClass::kPooling, "pooling"},
    {OpClass::kNormalization, "normalization"},
    {OpClass::kElementwise, "elementwise"},
    {OpClass::kReduction, "reduction"},
    {OpClass::kDataMovement, "data_movement"},
    {OpClass::kOther, "other"},
}};
constexpr NameTable<CostClass, kCostClassCount> kCostClassNames{{
    {CostClass::kConv, "conv"},
    {CostClass::kPointwiseConv, "pointwise_conv"},
    {CostClass::kDepthwiseConv, "depthwise_conv"},
    {CostClass::kStemConv, "stem_conv"},
    {CostClass::kStridedConv, "strided_conv"},
    {CostClass::kStridedDepthwiseConv, "strided_depthwise_conv"},
    {CostClass::kGemm, "gemm"},
    {CostClass::kGemv, "gemv"},
    {CostClass::kElementwise, "elementwise"},
    {CostClass::kTranscendental, "transcendental"},
    {CostClass::kEpilogue, "epilogue"},
    {CostClass::kNormalization, "normalization"},
    {CostClass::kChannelNorm, "channel_norm"},
    {CostClass::kPooling, "pooling"},
    {CostClass::kGlobalPool, "global_pool"},
    {CostClass::kReduction, "reduction"},
    {CostClass::kDataMovement, "data_movement"},
    {CostClass::kConcat, "concat"},
    {CostClass::kQuantize, "quantize"},
    {CostClass::kUpload, "upload"},
    {CostClass::kDownload, "download"},
}};

template <typename Enum, size_t N>
const char* name_of(const NameTable<Enum, N>& table, Enum value) {
  for (const auto& [entry, name] : table) {
    if (entry == value) return name;
  }
  return "unknown";
}

template <typename Enum, size_t N>
std::optional<Enum> parse_name(const NameTable<Enum, N>& table, const std::string& name) {
  for (const auto& [entry, entry_name] : table) {
    if (name == entry_name) return entry;
  }
  return std::nullopt;
}

// Op types of the default ONNX domain by class: every op the CPU backend registers
// (backends/cpu/*_kernels.cpp; config_test checks that none of them lands in kOther by accident)
// plus common ONNX ops that device profiles may list. Op types not listed are kOther, among them
// the CPU's shape computations (Shape, Size, ConstantOfShape, Range), which import folds away.
using OpClassIndex = std::unordered_map<std::string_view, OpClass>;
OpClassIndex build_op_class_index() {
  OpClassIndex index;
  auto add = [&](OpClass op_class, std::initializer_list<std::string_view> op_types) {
    for (std::string_view op : op_types) index.emplace(op, op_class);
  };
  add(OpClass::kConvLinear, {"Conv", "ConvTranspose", "Gemm", "MatMul"});
  add(OpClass::kConvLinear, {"LSTM", "GRU", "RNN"});  // GEMMs over time steps
  add(OpClass::kConvLinear, {"Einsum"});              // contractions: matmuls in disguise
  add(OpClass::kConvLinear, {"DFT", "STFT"});         // products with a twiddle matrix
  add(OpClass::kConvLinear, {"QLinearConv", "ConvInteger", "QLinearMatMul", "MatMulInteger"});
  add(OpClass::kPooling,
      {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "LpPool", "GlobalLpPool"});
  add(OpClass::kNormalization,
      {"BatchNormalization", "InstanceNormalization", "LayerNormalization", "LpNormalization",
       "GroupNormalization", "Softmax", "LogSoftmax", "Hardmax"});
  // Arithmetic and variadic; unary math; activations; comparisons, logic, selection, conversion.
  add(OpClass::kElementwise,
      {"Add", "Sub", "Mul", "Div", "Mod", "Pow", "Max", "Min", "Sum", "Mean"});
  add(OpClass::kElementwise, {"Abs", "Neg", "Sqrt", "Exp", "Log", "Erf", "Sin", "Cos", "Tan",
                              "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh",
                              "Floor", "Ceil", "Round", "Sign", "Reciprocal"});
  add(OpClass::kElementwise,
      {"Relu", "LeakyRelu", "PRelu", "Elu", "Selu", "Celu", "Sigmoid", "HardSigmoid", "HardSwish",
       "Tanh", "Softplus", "Softsign", "Gelu", "Mish", "ThresholdedRelu", "Shrink", "Clip"});
  add(OpClass::kElementwise, {"Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual", "And",
                              "Or", "Xor", "Not", "IsNaN", "IsInf", "Where", "Cast"});
  add(OpClass::kReduction,
      {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
       "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp", "ArgMax", "ArgMin",
       "CumSum"});
  add(OpClass::kReduction, {"TopK", "Det"});  // Det: a matrix reduced to a scalar
  add(OpClass::kNormalization, {"LRN"});
  add(OpClass::kElementwise, {"BitShift"});
  add(OpClass::kReduction, {"TfIdfVectorizer"});  // n-gram counts of each row
  add(OpClass::kElementwise, {"QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear"});
  // Views and copies; layout; indexing and resampling.
  add(OpClass::kDataMovement,
      {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout"});
  add(OpClass::kDataMovement, {"Transpose", "Concat", "Split", "Slice", "Expand", "Tile", "Pad",
                               "DepthToSpace", "SpaceToDepth"});
  add(OpClass::kDataMovement, {"Gather", "GatherElements", "GatherND", "Resize", "Upsample"});
  add(OpClass::kDataMovement, {"GridSample", "RoiAlign"});  // resampling at computed positions
  add(OpClass::kDataMovement, {"Trilu", "EyeLike", "OneHot", "ReverseSequence", "ScatterND",
                               "ScatterElements", "Scatter"});
  return index;
}

}  // namespace

const char* device_kind_name(DeviceKind kind) { return name_of(kKindNames, kind); }
const char* device_api_name(DeviceApi api) { return name_of(kApiNames, api); }
const char* precision_name(Precision precision) { return name_of(kPrecisionNames, precision); }
const char* op_class_name(OpClass op_class) { return name_of(kOpClassNames, op_class); }

const char* cost_class_name(CostClass cost_class) { return name_of(kCostClassNames, cost_class); }
std::optional<CostClass> parse_cost_class(const std::string& name) {
  return parse_name(kCostClassNames, name);
}
bool is_compute_class(CostClass cost_class) {
  return static_cast<int>(cost_class) <= static_cast<int>(CostClass::kGemv);  // they come first
}

std::optional<DeviceKind> parse_device_kind(const std::string& name) {
  return parse_name(kKindNames, name);
}
std::optional<DeviceApi> parse_device_api(const std::string& name) {
  return parse_name(kApiNames, name);
}
std::optional<Precision> parse_precision(const std::string& name) {
  return parse_name(kPrecisionNames, name);
}
std::optional<OpClass> parse_op_class(const std::string& name) {
  return parse_name(kOpClassNames, name);
}

OpClass op_class_of(const std::string& op_type) {
  // Built once; the planner asks for every node of graphs up to 10,000 nodes.
  static const auto* const kIndex = new OpClassIndex(build_op_class_index());
  auto it = kIndex->find(op_type);
  return it == kIndex->end() ? OpClass::kOther : it->second;
}

std::vector<Precision> DeviceProfile::precisions() const {
  std::vector<Precision> result;
  for (const auto& [precision, name] : kPrecisionNames) {
    if (peak_gflops.count(precision) != 0) result.push_back(precision);
  }
  return result;
}

bool DeviceProfile::supports_op(const std::string& op_type) const {
  return std::any_of(ops.begin(), ops.end(),
                     [&](const std::string& op) { return op == "*" || op == op_type; });
}

const DeviceProfile* Target::find(const std::string& id) const {
  for (const auto& device : devices) {
    if (device.id == id) return &device;
  }
  return nullptr;
}

std::vector<std::string> match_devices(const Target& target, const std::string& selector) {
  const std::optional<DeviceKind> kind = parse_device_kind(selector);
  const std::optional<DeviceApi> api = parse_device_api(selector);
  std::vector<std::string> ids;
  for (const auto& device : target.devices) {
    // Kind "cpu" means the host CPU: a CPU-type device behind another API (PoCL's OpenCL
    // device) is chosen by its API or id only, so "cpu" in a policy never sends work there.
    const bool kind_matches = kind && device.kind == *kind &&
                              (*kind != DeviceKind::kCpu || device.api == DeviceApi::kHost);
    if (device.id == selector || kind_matches || (api && device.api == *api)) {
      ids.push_back(device.id);
    }
  }
  return ids;
}

}  // namespace hsched
