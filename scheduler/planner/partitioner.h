// The partitioner: a placement problem stripped of ops (costs per node and device, values with
// their bytes, links between devices) and the search that assigns every node a device so the
// predicted latency of one run is least. Pure and deterministic: no graph, no YAML.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

namespace hsched::planner {

inline constexpr double kNotAllowed = std::numeric_limits<double>::infinity();

// Cost of moving `bytes` from one device to another: latency_ms + bytes / (gb_per_s * 1e6).
// Zero on the diagonal (same device).
struct LinkCost {
  double latency_ms = 0;
  double gb_per_s = 0;  // 0 with latency 0: free (zero-copy without sync cost)
  double ms(int64_t bytes) const;
};

struct PlacementProblem {
  int device_count = 0;
  int host_device = 0;  // where graph inputs come from and outputs go (the CPU)
  // node_ms[n][d]: predicted ms of node n on device d (compute + launch + amortised compile per
  // node); kNotAllowed where the policy or the device's capability forbids it. Every node has at
  // least one finite entry.
  std::vector<std::vector<double>> node_ms;
  // Data flowing between nodes. producer == -1: a graph input (lives on host_device).
  struct Value {
    int producer = -1;
    std::vector<int> consumers;  // node indices, may repeat
    int64_t bytes = 0;
    bool graph_output = false;  // also read back to host_device after the run
  };
  std::vector<Value> values;
  std::vector<std::vector<LinkCost>> links;   // [from][to]
  std::vector<double> partition_overhead_ms;  // per device: each partition placed there
  std::vector<int> order;                     // a topological order of the nodes
};

// Partitions in execution order; each partition is a set of nodes on one device.
struct Grouping {
  std::vector<int> partition_of;             // per node
  std::vector<int> partition_device;         // per partition
  std::vector<std::vector<int>> partitions;  // nodes per partition, in execution order
};

// Groups an assignment into partitions: a topological order that keeps running on the current
// device while it can (ties by `order` position), cut into maximal same-device runs, one
// partition each. The quotient graph is acyclic by construction.
Grouping group_partitions(const PlacementProblem& problem, const std::vector<int>& device_of);

// Predicted ms of one run for an assignment: node costs, one transfer per (value, destination
// device other than the producer's) including graph inputs from and outputs to the host, and
// partition_overhead_ms per partition of group_partitions(). kNotAllowed if any node is placed
// where it is not allowed. This is the one cost function: the search minimises it, tests
// compare against it.
double plan_cost(const PlacementProblem& problem, const std::vector<int>& device_of);

struct Assignment {
  std::vector<int> device_of;  // per node
  double cost_ms = 0;          // plan_cost(problem, device_of)
};

// Cost-based search: dynamic programming over `order` with the device of the current node as
// state, then local improvement (moving single nodes and whole partitions) until no move helps,
// then the best single-device assignment if that is cheaper. Deterministic (ties go to the lower
// device index). A 10,000-node graph takes well under 20 ms.
Assignment partition(const PlacementProblem& problem);

// The cheapest assignment that keeps every node on device d; cost kNotAllowed when some node is
// not allowed there.
Assignment single_device(const PlacementProblem& problem, int device);

// Every node on `device` where it is allowed, the rest on host_device: what a run limited to that
// device measures (`--devices gpu`, the CPU taking what the GPU cannot). Equal to
// single_device() when the device takes every node.
Assignment device_or_host(const PlacementProblem& problem, int device);

}  // namespace hsched::planner
