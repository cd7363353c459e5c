#include "scheduler/planner/cost_model.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <set>

#include "graph/cost.h"
#include "scheduler/planner/partitioner.h"

namespace hsched::planner {
namespace {

// Bytes per element a device moves when it computes in `precision` (int8: one byte).
int64_t precision_bytes(Precision precision) {
  switch (precision) {
    case Precision::kFp32:
      return 4;
    case Precision::kFp16:
    case Precision::kBf16:
      return 2;
    case Precision::kInt8:
      return 1;
  }
  return 4;
}

// The bytes one run of `node` moves in `precision`: node_cost's read + written bytes, with every
// float tensor rescaled to the computed element size. Integer and bool tensors (indices, shapes,
// masks) keep their bytes: a device computing fp16 still reads int64 indices as int64.
double scaled_bytes(const Graph& graph, NodeId node_id, const NodeCost& cost, Precision precision) {
  double bytes = static_cast<double>(cost.bytes_read) + static_cast<double>(cost.bytes_written);
  const Node& node = graph.node(node_id);
  const double element_bytes = static_cast<double>(precision_bytes(precision));
  // `counted`: at most this many of the value's bytes are in node_cost's (a gather's table: the
  // rows it reads).
  const auto rescale = [&](ValueId id, double counted) {
    if (id == kNoValue) return;
    const Value& value = graph.value(id);
    if (!is_floating(value.dtype) || !value.shape.is_static()) return;
    const double stored = std::min(static_cast<double>(value.byte_size()), counted);
    bytes += stored * element_bytes / static_cast<double>(dtype_size(value.dtype)) - stored;
  };
  constexpr double kAll = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const bool table = i == 0 && is_gather(node.op_type);
    rescale(node.inputs[i], table ? static_cast<double>(cost.bytes_written) : kAll);
  }
  for (ValueId id : node.outputs) rescale(id, kAll);
  return std::max(0.0, bytes);
}

double efficiency_of(const DeviceProfile& device, const std::string& op_type) {
  const auto it = device.efficiency.find(op_class_of(op_type));
  return it != device.efficiency.end() ? it->second : device.default_efficiency;
}

// One side of a copy between a device and the host (`kUpload` to the device, `kDownload` from
// it). The host itself pays nothing; a device that shares host memory pays its sync latency only;
// any other pays the copy: its measured curve where calibrated, else its link's figures.
double host_side_ms(int64_t bytes, const DeviceProfile& device, CostClass direction) {
  if (device.api == DeviceApi::kHost) return 0;
  if (device.zero_copy) return device.transfer_latency_ms;
  const auto curve = device.curves.find({direction, Precision::kFp32});
  if (curve != device.curves.end() && !curve->second.empty()) {
    return interpolate_ms(curve->second, static_cast<double>(bytes));
  }
  // A link without a bandwidth figure is not modelled (the config loader requires one for
  // devices that copy); its latency still counts.
  const double copy_ms = device.transfer_bandwidth_gbps > 0
                             ? static_cast<double>(bytes) / (device.transfer_bandwidth_gbps * 1e6)
                             : 0;
  return copy_ms + device.transfer_latency_ms;
}

// The product of the output's dims from `first` to the end less `drop_last`: the rows of a
// MatMul/Gemm output (first 0, drop_last 1), the pixels of an NCHW Conv output (first 2, 0).
int64_t output_extent(const Graph& graph, const Node& node, size_t first, size_t drop_last) {
  if (node.outputs.empty() || node.outputs[0] == kNoValue) return 0;
  const Shape& shape = graph.value(node.outputs[0]).shape;
  if (!shape.is_static() || shape.dims.size() < first + drop_last) return 0;
  int64_t extent = 1;
  for (size_t i = first; i + drop_last < shape.dims.size(); ++i) extent *= shape.dims[i];
  return extent;
}

// Channels at most an image's first Conv reads (RGB or grey; a latent's 4 are not an image's).
constexpr int64_t kStemMaxChannels = 3;

// A Conv's or ConvTranspose's class; `finer`: a Conv over an image's few channels, or one whose
// stride skips pixels (a ConvTranspose's spreads them), gets a class of its own.
CostClass conv_cost_class(const Graph& graph, const Node& node, bool finer) {
  const std::vector<int64_t> strides = node.attr_ints("strides");
  const bool finer_conv = finer && node.op_type == "Conv";
  const bool strided =
      finer_conv && std::any_of(strides.begin(), strides.end(), [](int64_t s) { return s > 1; });
  const int64_t group = node.attr_int("group", 1);
  int64_t channels = 0;  // unknown
  if (!node.inputs.empty() && node.inputs[0] != kNoValue) {
    const Shape& x = graph.value(node.inputs[0]).shape;
    if (x.is_static() && x.dims.size() >= 2) channels = x.dims[1];
  }
  if (group > 1 && channels == group) {
    return strided ? CostClass::kStridedDepthwiseConv : CostClass::kDepthwiseConv;
  }
  if (output_extent(graph, node, 2, 0) <= kGemvMaxRows) return CostClass::kGemv;
  if (finer_conv && group == 1 && channels > 0 && channels <= kStemMaxChannels) {
    return CostClass::kStemConv;
  }
  if (strided) return CostClass::kStridedConv;
  // The kernel's spatial dims: the attribute, else the weight's dims after the first two.
  std::vector<int64_t> kernel = node.attr_ints("kernel_shape");
  if (kernel.empty() && node.inputs.size() > 1 && node.inputs[1] != kNoValue) {
    const Shape& w = graph.value(node.inputs[1]).shape;
    if (w.dims.size() > 2) kernel.assign(w.dims.begin() + 2, w.dims.end());
  }
  const bool pointwise =
      !kernel.empty() && group == 1 &&
      std::all_of(kernel.begin(), kernel.end(), [](int64_t k) { return k == 1; });
  return pointwise ? CostClass::kPointwiseConv : CostClass::kConv;
}

// The class a node of `cost_class` had before that class was split off it, for a device
// calibrated without the finer curve; nullopt for a class never split.
std::optional<CostClass> coarser_class(const Graph& graph, const Node& node, CostClass cost_class) {
  switch (cost_class) {
    case CostClass::kStemConv:
    case CostClass::kStridedConv:
    case CostClass::kStridedDepthwiseConv:
      return conv_cost_class(graph, node, false);
    case CostClass::kConcat:
      return CostClass::kDataMovement;
    case CostClass::kQuantize:
      return CostClass::kElementwise;
    default:
      return std::nullopt;
  }
}

CostClass cost_class_of(const Graph& graph, const Node& node) {
  const std::string& op = node.op_type;
  if (op == "Conv" || op == "ConvTranspose") return conv_cost_class(graph, node, true);
  if (op == "MatMul" || op == "Gemm") {
    return output_extent(graph, node, 0, 1) <= kGemvMaxRows ? CostClass::kGemv : CostClass::kGemm;
  }
  if (op == "GlobalAveragePool" || op == "GlobalMaxPool") return CostClass::kGlobalPool;
  if (op == "Concat") return CostClass::kConcat;
  if (op == "QuantizeLinear" || op == "DequantizeLinear" || op == "DynamicQuantizeLinear") {
    return CostClass::kQuantize;
  }
  switch (op_class_of(op)) {
    case OpClass::kPooling:
      return CostClass::kPooling;
    case OpClass::kNormalization:
      return CostClass::kNormalization;
    case OpClass::kReduction:
      return CostClass::kReduction;
    case OpClass::kDataMovement:
      return CostClass::kDataMovement;
    case OpClass::kElementwise:
      return computes_transcendental(op) ? CostClass::kTranscendental : CostClass::kElementwise;
    case OpClass::kConvLinear:  // conv_linear ops not named above
    case OpClass::kOther:
      break;
  }
  return CostClass::kElementwise;
}

// A LayerNorm over an image's channels (ConvNeXt) pays per pixel, a row of C values, as much as
// for this many bytes moved. On this machine's CPU (2 cores of an AMD EPYC) 40 channels at
// 56x56 took 0.172 ms and 96 channels 0.226: 43 ns a row beside 39 ps a byte, a row as 1.1 KiB
// (the H200 host's Xeon: 1.2 KiB). Counted by bytes alone, ConvNeXt-atto's 40-channel norms lay
// between points with 2 to 5 times their channels and 2.3 times their rate, and were predicted at
// half their time.
constexpr double kChannelNormRowBytes = 1024;

}  // namespace

bool computes_transcendental(const std::string& op_type) {
  static const std::set<std::string> kOps{"Erf",      "Sigmoid", "Tanh", "Exp", "Log",
                                          "Softplus", "Mish",    "Gelu", "Elu", "Selu",
                                          "Celu",     "Sqrt",    "Pow"};
  return kOps.count(op_type) != 0;
}

bool quantized_layer(const Graph& graph, const Node& node) {
  if (node.op_type != "Conv" && node.op_type != "MatMul" && node.op_type != "Gemm") return false;
  if (!node.domain.empty() || node.inputs.size() < 2) return false;
  return std::all_of(node.inputs.begin(), node.inputs.begin() + 2, [&](ValueId id) {
    if (id == kNoValue) return false;
    const NodeId producer = graph.value(id).producer;
    return producer != kNoNode && graph.node(producer).op_type == "DequantizeLinear";
  });
}

NodeWork node_work(const Graph& graph, NodeId node, Precision precision,
                   const DeviceProfile& device, const Device& backend,
                   std::optional<CostClass> as_class) {
  NodeWork result;
  result.cost_class = as_class.value_or(cost_class_of(graph, graph.node(node)));
  const std::optional<CostClass> coarser =
      coarser_class(graph, graph.node(node), result.cost_class);
  // A quantized layer costs the device's QDQ curves where it has them (CostModel::node_ms): there
  // a class they lack (the CPU's strided Convs) counts as its coarser one.
  const bool qdq = quantized_layer(graph, graph.node(node)) && !device.qdq_curves.empty();
  const Curve* finer = qdq ? find_qdq_curve(device, result.cost_class)
                           : find_curve(device, result.cost_class, precision);
  if (coarser && finer == nullptr) {
    result.cost_class = *coarser;  // calibrated without that curve (a GPU, an earlier profile)
  }
  const NodeCost cost = node_cost(graph, node);
  if (!cost.known) return result;
  result.work = is_compute_class(result.cost_class) ? static_cast<double>(cost.flop)
                                                    : scaled_bytes(graph, node, cost, precision);
  if (result.cost_class == CostClass::kChannelNorm) {
    // Its heading node's output is channels-last ([N, H, W, C]): the pixels are all but the last.
    result.work +=
        kChannelNormRowBytes * static_cast<double>(output_extent(graph, graph.node(node), 0, 1));
  }
  result.work = backend.executed_work(graph, node, result.cost_class, result.work);
  return result;
}

NodeWork node_work(const Graph& graph, NodeId node, Precision precision,
                   const DeviceProfile& device, std::optional<CostClass> as_class) {
  return node_work(graph, node, precision, device, *config::backends().open(device), as_class);
}

double interpolate_ms(const Curve& curve, double work) {
  if (curve.empty()) return 0;
  const CurvePoint& first = curve.front();
  const CurvePoint& last = curve.back();
  if (work <= first.work) return first.ms;
  if (work >= last.work) return last.work > 0 ? last.ms * work / last.work : last.ms;
  const auto above = std::upper_bound(curve.begin(), curve.end(), work,
                                      [](double w, const CurvePoint& p) { return w < p.work; });
  const CurvePoint& hi = *above;
  const CurvePoint& lo = *(above - 1);
  // Points are checked positive when loaded; equal works cannot bracket (upper_bound).
  const double t = std::log(work / lo.work) / std::log(hi.work / lo.work);
  return std::exp(std::log(lo.ms) + t * (std::log(hi.ms) - std::log(lo.ms)));
}

const Curve* find_curve(const DeviceProfile& device, CostClass cost_class, Precision precision) {
  auto it = device.curves.find({cost_class, precision});
  if (it == device.curves.end() && !is_compute_class(cost_class)) {
    it = device.curves.find({cost_class, Precision::kFp32});
  }
  return it == device.curves.end() || it->second.empty() ? nullptr : &it->second;
}

const Curve* find_qdq_curve(const DeviceProfile& device, CostClass cost_class) {
  const auto it = device.qdq_curves.find(cost_class);
  return it == device.qdq_curves.end() || it->second.empty() ? nullptr : &it->second;
}

CostModel::CostModel(const Target& target, int64_t expected_runs, const BackendRegistry& registry)
    : target_(target), expected_runs_(std::max<int64_t>(1, expected_runs)) {
  for (const DeviceProfile& device : target_.devices) {
    devices_.emplace(device.id, registry.open(device));
  }
}

const Device& CostModel::device(const DeviceProfile& device) const {
  return *devices_.at(device.id);
}

std::pair<double, double> CostModel::roofline_ms(const Graph& graph, NodeId node,
                                                 const DeviceProfile& device,
                                                 Precision precision) const {
  const auto peak = device.peak_gflops.find(precision);
  if (peak == device.peak_gflops.end()) return {kNotAllowed, kNotAllowed};
  const NodeCost cost = node_cost(graph, node);
  // GFLOP/s * 1e6 = FLOP per ms; GB/s * 1e6 = bytes per ms.
  const double flop_per_ms = peak->second * efficiency_of(device, graph.node(node).op_type) * 1e6;
  double compute_ms = 0;
  if (cost.flop > 0) {
    compute_ms = flop_per_ms > 0 ? static_cast<double>(cost.flop) / flop_per_ms : kNotAllowed;
  }
  // A device without a bandwidth figure has no memory bound in the model (compute only).
  const double memory_ms =
      device.memory_bandwidth_gbps > 0
          ? scaled_bytes(graph, node, cost, precision) / (device.memory_bandwidth_gbps * 1e6)
          : 0;
  return {compute_ms, memory_ms};
}

double CostModel::node_ms(const Graph& graph, NodeId node, const DeviceProfile& device,
                          Precision precision, std::optional<CostClass> as_class) const {
  if (device.peak_gflops.count(precision) == 0) return kNotAllowed;
  // A node a backend runs as several kernels (a Split's copies on OpenCL) pays a launch each.
  const Device& backend = this->device(device);
  const auto kernels = static_cast<double>(backend.launches(graph, node));
  if (!device.curves.empty()) {
    const NodeWork work = node_work(graph, node, precision, device, backend, as_class);
    // A measured time already includes the launch: the node costs as many points as its
    // backend says (its kernels, or fewer where a benchmark point runs several).
    const Curve* curve = nullptr;
    if (quantized_layer(graph, graph.node(node))) curve = find_qdq_curve(device, work.cost_class);
    if (curve == nullptr) curve = find_curve(device, work.cost_class, precision);
    if (curve != nullptr && work.work >= 0) {
      const double points = backend.curve_points(graph, node, work.cost_class);
      return points * interpolate_ms(*curve, work.work / points);
    }
  }
  const auto [compute_ms, memory_ms] = roofline_ms(graph, node, device, precision);
  return std::max(compute_ms, memory_ms) + kernels * device.launch_overhead_ms;
}

double CostModel::node_compile_ms(const DeviceProfile& device) const {
  return device.compile_ms_per_node / static_cast<double>(expected_runs_);
}

double CostModel::transfer_ms(int64_t bytes, const DeviceProfile& from,
                              const DeviceProfile& to) const {
  if (from.id == to.id) return 0;
  // Both sides share the host's memory: nothing is copied, the consumer waits for the producer.
  if (from.zero_copy && to.zero_copy) {
    return std::max(from.transfer_latency_ms, to.transfer_latency_ms);
  }
  // Device to device goes through the host: both hops are paid.
  return host_side_ms(bytes, from, CostClass::kDownload) +
         host_side_ms(bytes, to, CostClass::kUpload);
}

double CostModel::partition_overhead_ms(const DeviceProfile& device) const {
  return device.run_overhead_ms +
         device.compile_ms_per_partition / static_cast<double>(expected_runs_);
}

}  // namespace hsched::planner
