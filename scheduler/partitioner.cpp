#include "scheduler/partitioner.h"

#include <algorithm>

#include "scheduler/partition_search.h"
#include "scheduler/placement_index.h"
#include "scheduler/plan_evaluator.h"

namespace hsched::sched {
namespace {

// Every node on `device` where allowed, elsewhere on its cheapest device (lowest index on ties):
// a restart point for the local search, far from the DP's.
std::vector<int> preferring(const PlacementProblem& problem, int device) {
  std::vector<int> device_of(problem.node_ms.size());
  for (size_t u = 0; u < device_of.size(); ++u) {
    const std::vector<double>& ms = problem.node_ms[u];
    device_of[u] = ms[device] != kNotAllowed
                       ? device
                       : static_cast<int>(std::min_element(ms.begin(), ms.end()) - ms.begin());
  }
  return device_of;
}

}  // namespace

double LinkCost::ms(int64_t bytes) const {
  const double copy_ms = gb_per_s > 0 ? static_cast<double>(bytes) / (gb_per_s * 1e6) : 0;
  return latency_ms + copy_ms;
}

Grouping group_partitions(const PlacementProblem& problem, const std::vector<int>& device_of) {
  const PlacementIndex index(problem);
  return PlanEvaluator(index).group(device_of);
}

double plan_cost(const PlacementProblem& problem, const std::vector<int>& device_of) {
  const PlacementIndex index(problem);
  return PlanEvaluator(index).cost(device_of);
}

Assignment single_device(const PlacementProblem& problem, int device) {
  Assignment assignment;
  assignment.device_of.assign(problem.node_ms.size(), device);
  assignment.cost_ms = plan_cost(problem, assignment.device_of);
  return assignment;
}

Assignment partition(const PlacementProblem& problem) {
  const PlacementIndex index(problem);
  PlanEvaluator evaluator(index);
  Assignment best;
  best.device_of.assign(problem.node_ms.size(), 0);
  best.cost_ms = kNotAllowed;
  for (const std::vector<double>& node_ms : problem.node_ms) {
    if (*std::min_element(node_ms.begin(), node_ms.end()) == kNotAllowed) {
      return best;  // outside the contract: no assignment is allowed
    }
  }
  // Small graphs are cheap to search again from each device's side; the first best is kept.
  std::vector<std::vector<int>> starts{assign_by_dp(index)};
  if (exact_search_fits(index)) {
    for (int d = 0; d < problem.device_count; ++d) starts.push_back(preferring(problem, d));
  }
  for (std::vector<int>& device_of : starts) {
    improve_locally(index, device_of);
    const double ms = evaluator.cost(device_of);
    if (ms < best.cost_ms) {
      best.device_of = std::move(device_of);
      best.cost_ms = ms;
    }
  }
  // Never worse than keeping everything on one device. Node and transfer ms alone rule most
  // devices out without grouping.
  std::vector<int> single(problem.node_ms.size());
  for (int d = 0; d < problem.device_count; ++d) {
    single.assign(single.size(), d);
    if (node_and_transfer_ms(index, single) >= best.cost_ms) continue;
    const double ms = evaluator.cost(single);
    if (ms < best.cost_ms) {
      best.device_of = single;
      best.cost_ms = ms;
    }
  }
  return best;
}

}  // namespace hsched::sched
