// The partitioner: its cost function and grouping on hand-built problems, and the invariants
// of partition() on seeded random DAGs and chains, against brute force where that is feasible.
#include "scheduler/planner/partitioner.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/random_problem.h"

namespace hsched::planner {
namespace {

using test::ProblemShape;
using test::random_problem;

// Edges producer -> consumer of a problem (repeats kept).
std::vector<std::pair<int, int>> edges_of(const PlacementProblem& problem) {
  std::vector<std::pair<int, int>> edges;
  for (const auto& value : problem.values) {
    if (value.producer < 0) continue;
    for (int consumer : value.consumers) edges.emplace_back(value.producer, consumer);
  }
  return edges;
}

// Every structural promise of a grouping of `device_of`, as gtest failures.
void expect_valid_grouping(const PlacementProblem& problem, const std::vector<int>& device_of,
                           const Grouping& grouping) {
  const size_t n = problem.node_ms.size();
  ASSERT_EQ(grouping.partition_of.size(), n);
  ASSERT_EQ(grouping.partition_device.size(), grouping.partitions.size());
  std::vector<int> seen(n, 0);
  std::vector<int> rank(n, -1);  // position inside its partition's execution order
  for (size_t p = 0; p < grouping.partitions.size(); ++p) {
    ASSERT_FALSE(grouping.partitions[p].empty()) << "partition " << p;
    for (size_t k = 0; k < grouping.partitions[p].size(); ++k) {
      const int u = grouping.partitions[p][k];
      ++seen[u];
      rank[u] = static_cast<int>(k);
      EXPECT_EQ(grouping.partition_of[u], static_cast<int>(p)) << "node " << u;
      EXPECT_EQ(device_of[u], grouping.partition_device[p]) << "node " << u;
    }
  }
  for (size_t u = 0; u < n; ++u) ASSERT_EQ(seen[u], 1) << "node " << u << " not exactly once";
  // Partitions in execution order (hence an acyclic quotient graph), nodes in execution order.
  for (const auto& [from, to] : edges_of(problem)) {
    const int pf = grouping.partition_of[from];
    const int pt = grouping.partition_of[to];
    EXPECT_LE(pf, pt) << "edge " << from << "->" << to << " runs backwards between partitions";
    if (pf == pt) {
      EXPECT_LT(rank[from], rank[to]) << "edge " << from << "->" << to << " inside a partition";
    }
  }
  // Each partition a maximal same-device run: the next one is on another device.
  for (size_t p = 1; p < grouping.partitions.size(); ++p) {
    EXPECT_NE(grouping.partition_device[p - 1], grouping.partition_device[p]) << "partition " << p;
  }
}

// partition()'s promises on one problem.
void expect_valid_assignment(const PlacementProblem& problem, const Assignment& assignment) {
  ASSERT_EQ(assignment.device_of.size(), problem.node_ms.size());
  for (size_t u = 0; u < problem.node_ms.size(); ++u) {
    const int d = assignment.device_of[u];
    ASSERT_GE(d, 0);
    ASSERT_LT(d, problem.device_count);
    EXPECT_NE(problem.node_ms[u][d], kNotAllowed) << "node " << u << " on device " << d;
  }
  expect_valid_grouping(problem, assignment.device_of,
                        group_partitions(problem, assignment.device_of));
  EXPECT_EQ(assignment.cost_ms, plan_cost(problem, assignment.device_of));
  for (int d = 0; d < problem.device_count; ++d) {
    EXPECT_LE(assignment.cost_ms, single_device(problem, d).cost_ms) << "device " << d;
  }
}

// The least plan_cost over every allowed assignment.
double brute_force_ms(const PlacementProblem& problem) {
  const size_t n = problem.node_ms.size();
  std::vector<int> device_of(n, 0);
  double best = kNotAllowed;
  std::function<void(size_t)> visit = [&](size_t u) {
    if (u == n) {
      best = std::min(best, plan_cost(problem, device_of));
      return;
    }
    for (int d = 0; d < problem.device_count; ++d) {
      if (problem.node_ms[u][d] == kNotAllowed) continue;
      device_of[u] = d;
      visit(u + 1);
    }
  };
  visit(0);
  return best;
}

// Two devices, host 0, linked both ways with 1 ms latency at 1 GB/s (1 ms per 1e6 bytes).
PlacementProblem two_device_problem(int nodes) {
  PlacementProblem problem;
  problem.device_count = 2;
  problem.node_ms.assign(static_cast<size_t>(nodes), {1.0, 1.0});
  problem.links = {{LinkCost{}, LinkCost{1.0, 1}}, {LinkCost{1.0, 1}, LinkCost{}}};
  problem.partition_overhead_ms = {0.5, 0.25};
  for (int u = 0; u < nodes; ++u) problem.order.push_back(u);
  return problem;
}

TEST(LinkCostTest, LatencyPlusBytesOverBandwidth) {
  EXPECT_DOUBLE_EQ((LinkCost{0.5, 10}).ms(20'000'000), 0.5 + 2.0);
  EXPECT_DOUBLE_EQ((LinkCost{0.5, 0}).ms(20'000'000), 0.5);  // zero-copy: only the sync
  EXPECT_DOUBLE_EQ((LinkCost{}).ms(1'000'000), 0.0);
}

// in -> a -> b, with b's output read back by the host and by node c on device 1.
TEST(PlanCostTest, CountsNodesTransfersOncePerDeviceAndPartitions) {
  PlacementProblem problem = two_device_problem(3);
  problem.values = {
      {-1, {0}, 1'000'000, false},    // graph input read by a
      {0, {1, 2}, 2'000'000, false},  // a -> b, c
      {1, {}, 3'000'000, true},       // b's output
      {2, {}, 0, true},               // c's output
  };
  // a on the host, b and c on device 1: the input stays, a's value crosses once for both readers,
  // b's output comes back; c's empty output pays the latency. b and c are independent but run on
  // device 1 in turn: one partition there, one on the host.
  const std::vector<int> device_of{0, 1, 1};
  const double expected = 3.0 + (1.0 + 2.0) + (1.0 + 3.0) + (1.0 + 0.0) + 0.5 + 0.25;
  EXPECT_DOUBLE_EQ(plan_cost(problem, device_of), expected);
  const Grouping grouping = group_partitions(problem, device_of);
  EXPECT_EQ(grouping.partitions, (std::vector<std::vector<int>>{{0}, {1, 2}}));
  EXPECT_EQ(grouping.partition_device, (std::vector<int>{0, 1}));
  // Everything on the host: only the three nodes and one partition.
  EXPECT_DOUBLE_EQ(plan_cost(problem, {0, 0, 0}), 3.0 + 0.5);
}

TEST(PlanCostTest, NotAllowedPlacementIsInfinite) {
  PlacementProblem problem = two_device_problem(2);
  problem.values = {{0, {1}, 10, false}};
  problem.node_ms[1][1] = kNotAllowed;
  EXPECT_EQ(plan_cost(problem, {0, 1}), kNotAllowed);
  EXPECT_EQ(single_device(problem, 1).cost_ms, kNotAllowed);
  EXPECT_DOUBLE_EQ(single_device(problem, 0).cost_ms, 2.0 + 0.5);
}

TEST(PlanCostTest, DeviceOrHostPutsWhatTheDeviceCannotRunOnTheHost) {
  PlacementProblem problem = two_device_problem(3);
  problem.values = {{0, {1}, 10, false}, {1, {2}, 10, false}};
  problem.node_ms[0][1] = kNotAllowed;  // a prologue only the host runs
  const Assignment gpu = device_or_host(problem, 1);
  EXPECT_EQ(gpu.device_of, (std::vector<int>{0, 1, 1}));
  EXPECT_DOUBLE_EQ(gpu.cost_ms, plan_cost(problem, gpu.device_of));
  EXPECT_NE(gpu.cost_ms, kNotAllowed);
  // A device that takes every node: the same as single_device.
  EXPECT_EQ(device_or_host(problem, 0).device_of, single_device(problem, 0).device_of);
}

// Order 0 (dev 0), 1 (dev 1), 2 (dev 0), 3 (dev 1) with edges 0->2 and 1->3: grouping keeps
// running on the current device, so it makes two partitions, not four.
TEST(GroupPartitionsTest, StaysOnTheCurrentDeviceWhileItCan) {
  PlacementProblem problem = two_device_problem(4);
  problem.values = {{0, {2}, 10, false}, {1, {3}, 10, false}};
  const Grouping grouping = group_partitions(problem, {0, 1, 0, 1});
  EXPECT_EQ(grouping.partitions, (std::vector<std::vector<int>>{{0, 2}, {1, 3}}));
  EXPECT_EQ(grouping.partition_of, (std::vector<int>{0, 1, 0, 1}));
}

// A diamond whose middle is split between devices: the partitions around the middle must not
// form a cycle, so the host part is cut in two.
TEST(GroupPartitionsTest, SplitsAroundOtherDevicesToStayAcyclic) {
  PlacementProblem problem = two_device_problem(4);
  problem.values = {{0, {1, 2}, 10, false}, {1, {3}, 10, false}, {2, {3}, 10, false}};
  const std::vector<int> device_of{0, 1, 0, 0};
  const Grouping grouping = group_partitions(problem, device_of);
  expect_valid_grouping(problem, device_of, grouping);
  EXPECT_EQ(grouping.partitions, (std::vector<std::vector<int>>{{0, 2}, {1}, {3}}));
}

// Node 1 computes from constants only (an int8 weight's dequantization: it reads no value) and
// feeds node 3 on its device: it runs just before node 3, in node 3's partition, not in its
// device's first partition, where node 3 would receive it as a transfer. With a reader on the
// other device too it is not deferred.
TEST(GroupPartitionsTest, ConstantOnlyNodesRunWithTheirReaders) {
  PlacementProblem problem = two_device_problem(4);
  problem.values = {{-1, {0}, 10, false}, {0, {2}, 10, false}, {2, {3}, 10, false},
                    {1, {3}, 10, false}};
  const std::vector<int> device_of{1, 1, 0, 1};
  const Grouping grouping = group_partitions(problem, device_of);
  expect_valid_grouping(problem, device_of, grouping);
  EXPECT_EQ(grouping.partitions, (std::vector<std::vector<int>>{{0}, {2}, {1, 3}}));
  problem.values.back().consumers = {2, 3};
  const Grouping shared = group_partitions(problem, device_of);
  expect_valid_grouping(problem, device_of, shared);
  EXPECT_EQ(shared.partitions, (std::vector<std::vector<int>>{{0, 1}, {2}, {3}}));
}

TEST(PartitionTest, MovesWorkWhereItIsCheaperAndKeepsItTogether) {
  PlacementProblem problem = two_device_problem(4);
  problem.values = {{-1, {0}, 1000, false},
                    {0, {1}, 1000, false},
                    {1, {2}, 1000, false},
                    {2, {3}, 1000, false},
                    {3, {}, 1000, true}};
  for (auto& ms : problem.node_ms) ms = {10.0, 1.0};
  const Assignment assignment = partition(problem);
  EXPECT_EQ(assignment.device_of, (std::vector<int>{1, 1, 1, 1}));
  // Node costs, the input in and the output back (1 ms + 1 us each), one partition.
  EXPECT_DOUBLE_EQ(assignment.cost_ms, 4.0 + 2 * 1.001 + 0.25);
  expect_valid_assignment(problem, assignment);
}

TEST(PartitionTest, EmptyProblemCostsNothing) {
  const Assignment assignment = partition(two_device_problem(0));
  EXPECT_TRUE(assignment.device_of.empty());
  EXPECT_EQ(assignment.cost_ms, 0.0);
}

// Problems outside the contract get kNotAllowed (and no grouping) instead of undefined behaviour.
TEST(PartitionTest, MalformedProblemsAreRefused) {
  PlacementProblem backwards = two_device_problem(2);
  backwards.values = {{1, {0}, 10, false}};  // node 1 feeds node 0, but the order is 0, 1
  PlacementProblem short_row = two_device_problem(2);
  short_row.node_ms[1] = {1.0};
  PlacementProblem no_devices = two_device_problem(2);
  no_devices.device_count = 0;
  PlacementProblem bad_order = two_device_problem(2);
  bad_order.order = {0, 0};
  for (const PlacementProblem* problem : {&backwards, &short_row, &no_devices, &bad_order}) {
    EXPECT_EQ(partition(*problem).cost_ms, kNotAllowed);
    EXPECT_EQ(plan_cost(*problem, {0, 0}), kNotAllowed);
    EXPECT_TRUE(group_partitions(*problem, {0, 0}).partitions.empty());
  }
  // A placement naming a device that does not exist.
  EXPECT_EQ(plan_cost(two_device_problem(2), {0, 2}), kNotAllowed);
}

TEST(PartitionPropertyTest, RandomDagsHoldEveryInvariant) {
  struct Size {
    int nodes;
    int seeds;
  };
  for (const Size size : {Size{1, 20}, Size{3, 40}, Size{12, 40}, Size{60, 30}, Size{400, 10},
                          Size{2000, 4}, Size{10000, 2}}) {
    for (int seed = 0; seed < size.seeds; ++seed) {
      const int devices = 2 + seed % 3;
      SCOPED_TRACE(std::to_string(size.nodes) + " nodes, " + std::to_string(devices) +
                   " devices, seed " + std::to_string(seed));
      const PlacementProblem problem =
          random_problem(static_cast<uint64_t>(seed) * 7919 + size.nodes, size.nodes, devices);
      expect_valid_assignment(problem, partition(problem));
      if (HasFatalFailure()) return;
    }
  }
}

TEST(PartitionPropertyTest, ChainsAreSolvedExactly) {
  for (int seed = 0; seed < 60; ++seed) {
    const int nodes = 1 + seed % 12;
    SCOPED_TRACE("chain of " + std::to_string(nodes) + ", seed " + std::to_string(seed));
    const PlacementProblem problem = random_problem(1000 + seed, nodes, 3, ProblemShape::kChain);
    const Assignment assignment = partition(problem);
    expect_valid_assignment(problem, assignment);
    const double optimum = brute_force_ms(problem);
    EXPECT_NEAR(assignment.cost_ms, optimum, 1e-9 * optimum);
  }
}

TEST(PartitionPropertyTest, SmallDagsWithinFivePercentOfBruteForce) {
  for (int seed = 0; seed < 250; ++seed) {
    const int nodes = 2 + seed % 9;
    SCOPED_TRACE("DAG of " + std::to_string(nodes) + ", seed " + std::to_string(seed));
    const PlacementProblem problem = random_problem(5000 + seed, nodes, 3);
    const Assignment assignment = partition(problem);
    expect_valid_assignment(problem, assignment);
    EXPECT_LE(assignment.cost_ms, 1.05 * brute_force_ms(problem));
  }
}

TEST(PartitionPropertyTest, SameProblemSameAssignment) {
  for (const int nodes : {10, 500, 5000}) {
    const PlacementProblem problem = random_problem(42 + nodes, nodes, 3);
    const PlacementProblem copy = problem;
    const Assignment first = partition(problem);
    const Assignment second = partition(copy);
    EXPECT_EQ(first.device_of, second.device_of) << nodes << " nodes";
    EXPECT_EQ(first.cost_ms, second.cost_ms) << nodes << " nodes";
  }
}

}  // namespace
}  // namespace hsched::planner
