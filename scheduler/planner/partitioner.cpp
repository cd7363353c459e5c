#include "scheduler/planner/partitioner.h"

#include <algorithm>
#include <utility>

#include "scheduler/planner/partition_search.h"
#include "scheduler/planner/placement_index.h"
#include "scheduler/planner/plan_evaluator.h"

namespace hsched::planner {
namespace {

// Every node on `device` where allowed, elsewhere on its cheapest device (lowest index on ties):
// a restart point for the local search, far from the DP's.
SlotDevices preferring(const PlacementIndex& index, int device) {
  SlotDevices device_at(static_cast<size_t>(index.node_count()));
  for (int u = 0; u < index.node_count(); ++u) {
    int cheapest = 0;
    for (int d = 1; d < index.device_count(); ++d) {
      if (index.node_ms(u, d) < index.node_ms(u, cheapest)) cheapest = d;
    }
    device_at[u] = index.node_ms(u, device) != kNotAllowed ? device : cheapest;
  }
  return device_at;
}

}  // namespace

double LinkCost::ms(int64_t bytes) const {
  const double copy_ms = gb_per_s > 0 ? static_cast<double>(bytes) / (gb_per_s * 1e6) : 0;
  return latency_ms + copy_ms;
}

Grouping group_partitions(const PlacementProblem& problem, const std::vector<int>& device_of) {
  if (!well_formed(problem)) return {};
  const PlacementIndex index(problem);
  SlotDevices device_at;
  if (!index.to_slots(device_of, device_at)) return {};  // outside the contract
  return index.to_nodes(PlanEvaluator(index).group(device_at));
}

double plan_cost(const PlacementProblem& problem, const std::vector<int>& device_of) {
  if (!well_formed(problem)) return kNotAllowed;
  const PlacementIndex index(problem);
  SlotDevices device_at;
  if (!index.to_slots(device_of, device_at)) return kNotAllowed;
  return PlanEvaluator(index).cost(device_at);
}

Assignment single_device(const PlacementProblem& problem, int device) {
  Assignment assignment;
  assignment.device_of.assign(problem.node_ms.size(), device);
  assignment.cost_ms = plan_cost(problem, assignment.device_of);
  return assignment;
}

Assignment device_or_host(const PlacementProblem& problem, int device) {
  Assignment assignment;
  for (const std::vector<double>& costs : problem.node_ms) {
    const bool allowed = static_cast<size_t>(device) < costs.size() &&
                         costs[static_cast<size_t>(device)] != kNotAllowed;
    assignment.device_of.push_back(allowed ? device : problem.host_device);
  }
  assignment.cost_ms = plan_cost(problem, assignment.device_of);
  return assignment;
}

Assignment partition(const PlacementProblem& problem) {
  Assignment result;
  result.device_of.assign(problem.node_ms.size(), 0);
  result.cost_ms = kNotAllowed;
  if (!well_formed(problem)) return result;  // outside the contract
  const PlacementIndex index(problem);
  const int n = index.node_count();
  for (int u = 0; u < n; ++u) {
    bool placeable = false;
    for (int d = 0; d < index.device_count(); ++d) placeable |= index.node_ms(u, d) != kNotAllowed;
    if (!placeable) return result;  // outside the contract: no assignment is allowed
  }
  PlanEvaluator evaluator(index);
  SlotDevices best;
  double best_ms = kNotAllowed;
  // Small graphs are cheap to search again from each device's side; the first best is kept.
  std::vector<SlotDevices> starts{assign_by_dp(index)};
  if (exact_search_fits(index)) {
    for (int d = 0; d < index.device_count(); ++d) starts.push_back(preferring(index, d));
  }
  for (SlotDevices& device_at : starts) {
    const double ms = improve_locally(index, device_at);
    if (ms < best_ms) {
      best = std::move(device_at);
      best_ms = ms;
    }
  }
  // Never worse than keeping everything on one device. Node and transfer ms alone rule most
  // devices out without grouping.
  SlotDevices single(static_cast<size_t>(n));
  for (int d = 0; d < index.device_count(); ++d) {
    single.assign(single.size(), d);
    if (node_and_transfer_ms(index, single) >= best_ms) continue;
    const double ms = evaluator.cost(single);
    if (ms < best_ms) {
      best = single;
      best_ms = ms;
    }
  }
  result.device_of = index.to_nodes(best);
  result.cost_ms = best_ms;
  return result;
}

}  // namespace hsched::planner
