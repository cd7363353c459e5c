// Shared by the schedule() tests: building small graphs and targets, and the structural promises
// every Plan keeps (include/hsched/plan.h), checked as gtest failures.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "graph/onnx_builder.h"
#include "graph/onnx_import.h"
#include "hsched/device.h"
#include "hsched/plan.h"

namespace hsched::test {

inline Graph import_built(OnnxBuilder& builder, const std::string& name = "built") {
  auto graph = import_onnx_model(builder.model(), {}, name, {});
  EXPECT_TRUE(graph.is_ok()) << graph.status().message();
  return graph.is_ok() ? std::move(graph).value() : Graph();
}

// A device with round figures: zero-copy, 100 GB/s, 5 us launch, 10 us sync, 8 GiB.
inline DeviceProfile test_device(const std::string& id, DeviceKind kind, DeviceApi api,
                                 std::map<Precision, double> peak_gflops,
                                 std::vector<std::string> ops) {
  DeviceProfile device;
  device.id = id;
  device.name = "test " + id;
  device.kind = kind;
  device.api = api;
  device.peak_gflops = std::move(peak_gflops);
  device.memory_bandwidth_gbps = 100;
  device.launch_overhead_ms = 0.005;
  device.zero_copy = true;
  device.transfer_latency_ms = kind == DeviceKind::kCpu ? 0 : 0.01;
  device.memory_bytes = int64_t{8} << 30;
  device.ops = std::move(ops);
  return device;
}

// cpu0 (every op, fp32), gpu0 (fp32/fp16; the ops given), npu0 (fp16/int8, no bf16; the ops
// given): a small Meteor Lake of round numbers.
inline Target test_target(const std::vector<std::string>& gpu_ops,
                          const std::vector<std::string>& npu_ops) {
  Target target;
  target.name = "test-target";
  target.source = "built-in";
  target.devices = {
      test_device("cpu0", DeviceKind::kCpu, DeviceApi::kHost, {{Precision::kFp32, 500}}, {"*"}),
      test_device("gpu0", DeviceKind::kGpu, DeviceApi::kOpenCl,
                  {{Precision::kFp32, 4000}, {Precision::kFp16, 8000}}, gpu_ops),
      test_device("npu0", DeviceKind::kNpu, DeviceApi::kLevelZero,
                  {{Precision::kFp16, 5000}, {Precision::kInt8, 10000}}, npu_ops),
  };
  return target;
}

// Every node placed exactly once, in the partition that lists it, on that partition's device;
// partitions non-empty, in execution order (every edge runs from an earlier or the same
// partition: an acyclic quotient graph), each a maximal same-device run of that order (the next
// partition is on another device); transfers between the devices the plan
// says; the prediction no worse than the best single-device plan (unless `cost_chosen` is false:
// a forced split ignores cost, as a strict policy does).
inline void expect_plan_invariants(const Graph& graph, const Plan& plan, bool cost_chosen = true) {
  const size_t n = graph.nodes().size();
  ASSERT_EQ(plan.nodes.size(), n);
  std::vector<int> seen(n, 0);
  std::vector<int> position(n, -1);
  for (const Partition& partition : plan.partitions) {
    ASSERT_FALSE(partition.nodes.empty()) << "partition " << partition.id;
    for (size_t k = 0; k < partition.nodes.size(); ++k) {
      const NodeId node = partition.nodes[k];
      ASSERT_GE(node, 0);
      ASSERT_LT(static_cast<size_t>(node), n);
      ++seen[node];
      position[node] = static_cast<int>(k);
      EXPECT_EQ(plan.nodes[node].partition, partition.id) << node_label(graph, node);
      EXPECT_EQ(plan.nodes[node].device, partition.device) << node_label(graph, node);
    }
  }
  for (size_t i = 0; i < plan.partitions.size(); ++i) {
    EXPECT_EQ(plan.partitions[i].id, static_cast<int>(i));
  }
  for (size_t node = 0; node < n; ++node) {
    ASSERT_EQ(seen[node], 1) << node_label(graph, static_cast<NodeId>(node));
    EXPECT_EQ(plan.nodes[node].node, static_cast<NodeId>(node));
    EXPECT_NE(plan.target.find(plan.nodes[node].device), nullptr);
  }
  for (const Value& value : graph.values()) {
    if (value.producer == kNoNode) continue;
    for (NodeId consumer : value.consumers) {
      const int from = plan.nodes[value.producer].partition;
      const int to = plan.nodes[consumer].partition;
      EXPECT_LE(from, to) << value.name << " flows back from partition " << from << " to " << to;
      if (from == to) {
        EXPECT_LT(position[value.producer], position[consumer]) << value.name;
      }
    }
  }
  for (size_t i = 1; i < plan.partitions.size(); ++i) {
    EXPECT_NE(plan.partitions[i - 1].device, plan.partitions[i].device)
        << "partitions " << i - 1 << " and " << i << " could be one";
  }
  for (const Transfer& transfer : plan.transfers) {
    EXPECT_NE(transfer.from_device, transfer.to_device);
    if (transfer.from_partition >= 0) {
      EXPECT_EQ(plan.partitions.at(transfer.from_partition).device, transfer.from_device);
    }
    if (transfer.to_partition >= 0) {
      EXPECT_EQ(plan.partitions.at(transfer.to_partition).device, transfer.to_device);
    }
  }
  EXPECT_TRUE(std::isfinite(plan.predicted_ms));
  if (!cost_chosen || plan.policy.objective == Objective::kStrict) return;
  double best_single = std::numeric_limits<double>::infinity();
  for (const auto& [device, ms] : plan.single_device_ms) best_single = std::min(best_single, ms);
  EXPECT_LE(plan.predicted_ms, best_single * (1 + 1e-9));
}

}  // namespace hsched::test
