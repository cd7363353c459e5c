#include "scheduler/planner/plan_costs.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

namespace hsched::planner {

// A partition computes in one precision, the one its device's backend gives its nodes'
// (Device::partition_precision: on OpenCL and Level Zero fp16 only when every node asks fp16).
// Nodes that asked another run in that one, and the plan says so: they are predicted as such.
// A device that mixes precisions (the CPU) computes each node in its own.
void unify_partition_precisions(const Graph& graph, const CostModel& cost, Plan& plan) {
  for (const Partition& partition : plan.partitions) {
    if (partition.nodes.empty()) continue;
    const DeviceProfile& device = *plan.target.find(partition.device);
    if (cost.device(device).mixes_precisions()) continue;
    std::vector<Precision> asked;
    for (NodeId n : partition.nodes) asked.push_back(plan.nodes[n].precision);
    const Precision runs = cost.device(device).partition_precision(asked);
    for (NodeId n : partition.nodes) {
      NodePlacement& placement = plan.nodes[n];
      if (placement.precision == runs) continue;
      placement.detail +=
          (placement.detail.empty() ? "" : "; ") + std::string(precision_name(runs)) +
          " with the rest of its partition (asked " + precision_name(placement.precision) + ")";
      placement.precision = runs;
      if (placement.predicted_ms > 0) placement.predicted_ms = cost.node_ms(graph, n, device, runs);
    }
  }
}

// A node fused into its producer costs nothing only when that producer runs in the same
// partition (programs fuse within a partition): one that reads another partition's value (or a
// graph input) runs as a step of its own and is charged its own time. Views and folded nodes stay
// free wherever their input comes from.
void charge_fusions_across_partitions(const Graph& graph, const CostModel& cost, Plan& plan) {
  for (size_t n = 0; n < plan.nodes.size(); ++n) {
    NodePlacement& placement = plan.nodes[n];
    const Node& node = graph.node(static_cast<NodeId>(n));
    if (placement.predicted_ms > 0 || is_view_op(node.op_type)) {
      continue;
    }
    const bool split = std::any_of(node.inputs.begin(), node.inputs.end(), [&](ValueId v) {
      if (v == kNoValue || graph.value(v).is_constant()) return false;
      const NodeId producer = graph.value(v).producer;
      return producer == kNoNode || plan.nodes[producer].partition != placement.partition;
    });
    if (!split) continue;
    const DeviceProfile& device = *plan.target.find(placement.device);
    placement.predicted_ms =
        cost.node_ms(graph, static_cast<NodeId>(n), device, placement.precision);
  }
}

namespace {

// The values partition `self` copies when it runs off the host: its inputs made elsewhere
// (weights stay on the device) and its outputs that another partition or the caller reads.
void copied_values(const Graph& graph, const Partition& partition, int self,
                   const std::vector<int>& partition_of, const std::vector<char>& graph_output,
                   std::set<ValueId>& inputs, std::set<ValueId>& outputs) {
  for (NodeId n : partition.nodes) {
    const Node& node = graph.node(n);
    for (ValueId v : node.inputs) {
      if (v == kNoValue || graph.value(v).is_constant()) continue;
      const NodeId producer = graph.value(v).producer;
      if (producer == kNoNode || partition_of[producer] != self) inputs.insert(v);
    }
    for (ValueId v : node.outputs) {
      if (v == kNoValue) continue;
      const auto& readers = graph.value(v).consumers;
      if (graph_output[static_cast<size_t>(v)] ||
          std::any_of(readers.begin(), readers.end(),
                      [&](NodeId reader) { return partition_of[reader] != self; })) {
        outputs.insert(v);
      }
    }
  }
}

}  // namespace

// Each partition's steady-state run: its nodes, its device's run overhead and the copies the
// executor makes for it (see plan_costs.h).
void add_run_times(const Graph& graph, const CostModel& cost, int host_device, Plan& plan) {
  // The ops the CPU runs as oneDNN primitives, on its OpenMP team.
  const auto team_op = [&](NodeId n) {
    const OpClass op_class = op_class_of(graph.node(n).op_type);
    return op_class == OpClass::kConvLinear || op_class == OpClass::kPooling;
  };
  const DeviceProfile& host = plan.target.devices.at(static_cast<size_t>(host_device));
  std::vector<char> graph_output(graph.values().size(), 0);
  for (ValueId v : graph.outputs()) graph_output[static_cast<size_t>(v)] = 1;
  std::vector<int> partition_of(graph.nodes().size(), -1);
  for (const NodePlacement& placement : plan.nodes)
    partition_of[placement.node] = placement.partition;
  // The run: its partitions, and the executor's hand-offs between them.
  plan.predicted_run_ms = 0;
  for (size_t p = 0; p < plan.partitions.size(); ++p) {
    Partition& partition = plan.partitions[p];
    const DeviceProfile& device = *plan.target.find(partition.device);
    const bool on_host = &device == &host;
    partition.run_ms = partition.compute_ms + device.run_overhead_ms;
    if (device.stream_overhead_ms > 0) {
      const Device& backend = cost.device(device);
      int64_t kernels = 0;
      for (NodeId n : partition.nodes) {
        if (plan.nodes[n].predicted_ms > 0) kernels += backend.launches(graph, n);
      }
      partition.run_ms += static_cast<double>(std::max<int64_t>(0, kernels - kStreamKnee)) *
                          device.stream_overhead_ms;
    }
    // It starts when another device's partition ends: its threads slept meanwhile. Runs follow
    // each other, so the first partition follows the last one, on the host where a plan starts
    // and ends there: it is handed over all the same, as the executor posts every host partition
    // of a plan of several to the host thread (bert_mini's 1- to 8-node CPU partitions after a
    // CPU partition on the H100 machine: 0.066-0.087 ms measured, 0.021-0.047 predicted without
    // the hand-over, 0.061-0.098 with it). Only a partition after another device's wakes the
    // OpenMP team.
    const Partition& before = plan.partitions[p > 0 ? p - 1 : plan.partitions.size() - 1];
    const bool after_other_device = before.device != partition.device;
    if (after_other_device || (on_host && plan.partitions.size() > 1)) {
      partition.run_ms += device.wake_overhead_ms;
    }
    if (after_other_device &&
        std::any_of(partition.nodes.begin(), partition.nodes.end(), team_op)) {
      partition.run_ms += device.team_wake_overhead_ms;
    }
    if (!on_host) {
      std::set<ValueId> inputs, outputs;
      copied_values(graph, partition, static_cast<int>(p), partition_of, graph_output, inputs,
                    outputs);
      for (ValueId v : inputs) {
        partition.run_ms += cost.transfer_ms(graph.value(v).byte_size(), host, device);
      }
      for (ValueId v : outputs) {
        partition.run_ms += cost.transfer_ms(graph.value(v).byte_size(), device, host);
      }
    }
    plan.predicted_run_ms += partition.run_ms + device.dispatch_overhead_ms;
  }
}

}  // namespace hsched::planner
