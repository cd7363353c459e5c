// The cost model: predicted ms per node on a device in a precision, per transfer between devices,
// per partition. Figures come from the target profile: where the device has a measured curve for
// the node's class (`hsched calibrate`), the curve is interpolated; otherwise the roofline of its
// peak, efficiency and bandwidth plus a launch overhead.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "backends/backend.h"
#include "graph/graph.h"
#include "hsched/device.h"
#include "scheduler/config/discover.h"

namespace hsched::planner {

// The calibrated class of a node (Conv split into dense and depthwise, MatMul/Gemm into GEMM and
// GEMV by rows) and its work in that class's unit: FLOP for compute classes, bytes moved in
// `precision` for the others. `work` < 0 when a shape needed for it is not static.
struct NodeWork {
  CostClass cost_class = CostClass::kElementwise;
  double work = -1;
};
// Ops whose every element costs a polynomial or a division (Erf, Sigmoid, Tanh...), fused into a
// producer's epilogue or not, as opposed to arithmetic, free in registers once fused.
bool computes_transcendental(const std::string& op_type);

// A Conv, MatMul or Gemm whose two operands are DequantizeLinear outputs: a layer of a QDQ model,
// which a backend runs on the 8-bit values.
bool quantized_layer(const Graph& graph, const Node& node);

// The work of `node` on `device` as its class counts it (FLOP or bytes), and the class: the
// backend's hints (Device::executed_work: padded tiles, a GPU's fill) apply. A channel norm
// counts 1 KiB more a pixel (its per-row cost). A stem or strided Conv on a device calibrated
// without that class's curve (for a quantized layer: its QDQ curve, where the device has QDQ
// curves) counts as the class it would have at stride 1, a Concat as data_movement. `as_class`:
// count the node as that class instead (a fused chain that runs as another op).
NodeWork node_work(const Graph& graph, NodeId node, Precision precision,
                   const DeviceProfile& device, const Device& backend,
                   std::optional<CostClass> as_class = std::nullopt);
// The same with the device this build's backends open for `device`.
NodeWork node_work(const Graph& graph, NodeId node, Precision precision,
                   const DeviceProfile& device, std::optional<CostClass> as_class = std::nullopt);

// The time of `work` on a curve: log-log interpolation between the two nearest points; below the
// first point its time (a node never runs faster than the smallest measured one, its launch);
// beyond the last, the last point's rate.
double interpolate_ms(const Curve& curve, double work);

// The curve a device has for (class, precision): the byte classes fall back to their fp32 curve
// (bytes are already counted in the precision). nullptr when not calibrated.
const Curve* find_curve(const DeviceProfile& device, CostClass cost_class, Precision precision);
// The device's QDQ curve of a compute class (DeviceProfile::qdq_curves), nullptr when none.
const Curve* find_qdq_curve(const DeviceProfile& device, CostClass cost_class);

class CostModel {
 public:
  // Hints come from `registry`'s device for each of the target's devices.
  CostModel(const Target& target, int64_t expected_runs,
            const BackendRegistry& registry = config::backends());

  // The backend's device for `device` (one of the target's): its check() and cost hints.
  const Device& device(const DeviceProfile& device) const;

  // One run of `node` on `device` computing in `precision`, compile not included: the device's
  // curve for the node's class at its work, else max(flop / (peak * efficiency), bytes /
  // bandwidth) + launch overhead. Bytes of float tensors scale with the precision's element size
  // (fp16/bf16 half, int8 a quarter). kNotAllowed when the device lacks the precision.
  // `as_class`: the node heads a fused chain that runs as an op of that class. A QDQ model's
  // quantized layer (quantized_layer) costs the device's QDQ curve of its class where it has one
  // (DeviceProfile::qdq_curves): the backends run it on the 8-bit data, its Q/DQ nodes fused in.
  double node_ms(const Graph& graph, NodeId node, const DeviceProfile& device, Precision precision,
                 std::optional<CostClass> as_class = std::nullopt) const;

  // compile_ms_per_node / expected_runs: what each node placed on `device` adds to the plan's
  // objective for its first-run compile.
  double node_compile_ms(const DeviceProfile& device) const;

  // Moving `bytes` between two devices of the target (0 on the same device; zero-copy devices
  // pay only their transfer latency as a sync cost).
  double transfer_ms(int64_t bytes, const DeviceProfile& from, const DeviceProfile& to) const;

  // Fixed cost of each partition placed on `device` in the plan's objective: its run overhead
  // plus compile_ms_per_partition / expected_runs.
  double partition_overhead_ms(const DeviceProfile& device) const;

  // Both parts of the roofline, for reports ("compute-bound 0.12 ms vs memory 0.03 ms").
  std::pair<double, double> roofline_ms(const Graph& graph, NodeId node,
                                        const DeviceProfile& device, Precision precision) const;

 private:
  const Target& target_;
  int64_t expected_runs_;
  std::map<std::string, std::unique_ptr<Device>> devices_;  // by device id
};

}  // namespace hsched::planner
