// The cost model: predicted ms per node on a device in a precision (roofline + launch +
// amortised compile), per transfer between devices, per partition. Figures come from the target
// profile; calibrated figures (issue 8) replace them through `Calibration`.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "graph/graph.h"
#include "hsched/device.h"

namespace hsched::sched {

// Measured per-node times that override the roofline, keyed by (device id, node name,
// precision). Empty until calibration exists.
struct Calibration {
  std::map<std::tuple<std::string, std::string, Precision>, double> node_ms;
};

class CostModel {
 public:
  CostModel(const Target& target, int64_t expected_runs, Calibration calibration = {});

  // One run of `node` on `device` computing in `precision`: max(flop / (peak * efficiency),
  // bytes / bandwidth) + launch overhead + compile_ms_per_node / expected_runs. Bytes of float
  // tensors scale with the precision's element size (fp16/bf16 half, int8 a quarter).
  double node_ms(const Graph& graph, NodeId node, const DeviceProfile& device,
                 Precision precision) const;

  // Moving `bytes` between two devices of the target (0 on the same device; zero-copy devices
  // pay only their transfer latency as a sync cost).
  double transfer_ms(int64_t bytes, const DeviceProfile& from, const DeviceProfile& to) const;

  // Fixed cost of each partition placed on `device`: compile_ms_per_partition / expected_runs.
  double partition_overhead_ms(const DeviceProfile& device) const;

  // Both parts of the roofline, for reports ("compute-bound 0.12 ms vs memory 0.03 ms").
  std::pair<double, double> roofline_ms(const Graph& graph, NodeId node,
                                        const DeviceProfile& device, Precision precision) const;

 private:
  const Target& target_;
  int64_t expected_runs_;
  Calibration calibration_;
};

}  // namespace hsched::sched
