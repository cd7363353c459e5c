#include "scheduler/cost_model.h"

#include <algorithm>
#include <cstddef>

#include "graph/cost.h"
#include "scheduler/partitioner.h"

namespace hsched::sched {
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
  const auto rescale = [&](const std::vector<ValueId>& ids) {
    for (ValueId id : ids) {
      if (id == kNoValue) continue;
      const Value& value = graph.value(id);
      if (!is_floating(value.dtype) || !value.shape.is_static()) continue;
      const double stored = static_cast<double>(value.byte_size());
      bytes += stored * element_bytes / static_cast<double>(dtype_size(value.dtype)) - stored;
    }
  };
  rescale(node.inputs);
  rescale(node.outputs);
  return std::max(0.0, bytes);
}

double efficiency_of(const DeviceProfile& device, const std::string& op_type) {
  const auto it = device.efficiency.find(op_class_of(op_type));
  return it != device.efficiency.end() ? it->second : device.default_efficiency;
}

// One side of a copy between a device and the host. The host itself pays nothing; a device that
// shares host memory pays its sync latency only; any other pays the copy over its link.
double host_side_ms(int64_t bytes, const DeviceProfile& device) {
  if (device.api == DeviceApi::kHost) return 0;
  if (device.zero_copy) return device.transfer_latency_ms;
  // A link without a bandwidth figure is not modelled (the config loader requires one for
  // devices that copy); its latency still counts.
  const double copy_ms = device.transfer_bandwidth_gbps > 0
                             ? static_cast<double>(bytes) / (device.transfer_bandwidth_gbps * 1e6)
                             : 0;
  return copy_ms + device.transfer_latency_ms;
}

}  // namespace

CostModel::CostModel(const Target& target, int64_t expected_runs, Calibration calibration)
    : target_(target),
      expected_runs_(std::max<int64_t>(1, expected_runs)),
      calibration_(std::move(calibration)) {}

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
                          Precision precision) const {
  if (device.peak_gflops.count(precision) == 0) return kNotAllowed;
  const double compile_ms = device.compile_ms_per_node / static_cast<double>(expected_runs_);
  // A measured time already includes the launch; the first-run compile is still amortised.
  const auto measured = calibration_.node_ms.find({device.id, graph.node(node).name, precision});
  if (measured != calibration_.node_ms.end()) return measured->second + compile_ms;
  const auto [compute_ms, memory_ms] = roofline_ms(graph, node, device, precision);
  return std::max(compute_ms, memory_ms) + device.launch_overhead_ms + compile_ms;
}

double CostModel::transfer_ms(int64_t bytes, const DeviceProfile& from,
                              const DeviceProfile& to) const {
  if (from.id == to.id) return 0;
  // Both sides share the host's memory: nothing is copied, the consumer waits for the producer.
  if (from.zero_copy && to.zero_copy) {
    return std::max(from.transfer_latency_ms, to.transfer_latency_ms);
  }
  // Device to device goes through the host: both hops are paid.
  return host_side_ms(bytes, from) + host_side_ms(bytes, to);
}

double CostModel::partition_overhead_ms(const DeviceProfile& device) const {
  return device.compile_ms_per_partition / static_cast<double>(expected_runs_);
}

}  // namespace hsched::sched
