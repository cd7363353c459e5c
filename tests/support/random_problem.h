// Seeded random placement problems for the partitioner's property tests and its benchmark:
// DAGs (or chains) with random support masks, node costs, value sizes, links and partition
// overheads. Header-only so that bench/ can use it without the test support library.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "scheduler/planner/partitioner.h"

namespace hsched::test {

enum class ProblemShape {
  kDag,    // each node reads 1-3 earlier values, mostly recent ones; node ids shuffled
  kChain,  // node i reads only node i-1's value (node 0 a graph input); ids in order
};

// Device 0 is the host. Every node has at least one allowed device; links are random per
// ordered pair (some free, as between devices sharing memory).
inline planner::PlacementProblem random_problem(uint64_t seed, int nodes, int devices,
                                              ProblemShape shape = ProblemShape::kDag) {
  std::mt19937_64 rng(seed);
  const auto uniform = [&](double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng);
  };
  const auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const auto chance = [&](double p) { return uniform(0, 1) < p; };
  const auto random_bytes = [&] { return static_cast<int64_t>(std::exp(uniform(7, 16))); };

  planner::PlacementProblem problem;
  problem.device_count = devices;
  problem.host_device = 0;
  // Node ids are a permutation of topological positions so that `order` matters.
  std::vector<int> id_at(static_cast<size_t>(nodes));
  std::iota(id_at.begin(), id_at.end(), 0);
  if (shape == ProblemShape::kDag) std::shuffle(id_at.begin(), id_at.end(), rng);
  problem.order = id_at;

  std::vector<double> speed(static_cast<size_t>(devices));
  for (double& s : speed) s = uniform(0.3, 3.0);
  problem.node_ms.assign(static_cast<size_t>(nodes), std::vector<double>(devices));
  for (int i = 0; i < nodes; ++i) {
    std::vector<double>& ms = problem.node_ms[id_at[i]];
    const double work = uniform(0.005, 0.5);
    bool any = false;
    for (int d = 0; d < devices; ++d) {
      const bool allowed = chance(0.75);
      ms[d] = allowed ? work / speed[d] * uniform(0.5, 2.0) : planner::kNotAllowed;
      any = any || allowed;
    }
    if (!any) ms[pick(0, devices - 1)] = work / speed[0];
  }

  // Graph inputs (producer -1) first, then one value per node (two for a few DAG nodes).
  const int inputs = shape == ProblemShape::kChain ? 1 : pick(1, 3);
  for (int k = 0; k < inputs; ++k) problem.values.push_back({-1, {}, random_bytes(), false});
  std::vector<int> value_at;  // per position: the first value it produces
  for (int i = 0; i < nodes; ++i) {
    value_at.push_back(static_cast<int>(problem.values.size()));
    problem.values.push_back({id_at[i], {}, random_bytes(), chance(0.03)});
    if (shape == ProblemShape::kDag && chance(0.1)) {
      problem.values.push_back({id_at[i], {}, random_bytes(), chance(0.03)});
    }
  }
  for (int i = 0; i < nodes; ++i) {
    const int node = id_at[i];
    if (shape == ProblemShape::kChain) {
      problem.values[i == 0 ? 0 : value_at[i - 1]].consumers.push_back(node);
      continue;
    }
    const int reads = i == 0 ? 1 : pick(1, 3);
    for (int r = 0; r < reads; ++r) {
      if (i == 0 || chance(0.05)) {
        problem.values[pick(0, inputs - 1)].consumers.push_back(node);
        continue;
      }
      // Mostly the last few nodes, sometimes anything earlier (long skip connections).
      const int back = chance(0.8) ? std::min(i, pick(1, 4)) : pick(1, i);
      const int producer_position = i - back;
      const int last_value = producer_position + 1 < nodes
                                 ? value_at[producer_position + 1]
                                 : static_cast<int>(problem.values.size());
      problem.values[pick(value_at[producer_position], last_value - 1)].consumers.push_back(node);
    }
  }
  // Values nobody reads are the graph's outputs.
  for (auto& value : problem.values) {
    if (value.producer >= 0 && value.consumers.empty()) value.graph_output = true;
  }

  problem.links.assign(static_cast<size_t>(devices), std::vector<planner::LinkCost>(devices));
  for (int from = 0; from < devices; ++from) {
    for (int to = 0; to < devices; ++to) {
      if (from == to) continue;
      planner::LinkCost& link = problem.links[from][to];
      link.latency_ms = uniform(0, 0.05);
      link.gb_per_s = chance(0.2) ? 0 : uniform(2, 60);
    }
  }
  problem.partition_overhead_ms.resize(static_cast<size_t>(devices));
  for (double& ms : problem.partition_overhead_ms) ms = chance(0.3) ? 0 : uniform(0, 0.2);
  return problem;
}

}  // namespace hsched::test
