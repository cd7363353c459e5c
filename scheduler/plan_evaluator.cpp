#include "scheduler/plan_evaluator.h"

#include <algorithm>
#include <functional>
#include <numeric>

namespace hsched::sched {

PlanEvaluator::PlanEvaluator(const PlacementIndex& index)
    : index_(index),
      ready_(static_cast<size_t>(index.device_count())),
      waiting_(static_cast<size_t>(index.node_count())),
      run_of_(static_cast<size_t>(index.node_count())),
      parent_(static_cast<size_t>(index.node_count())),
      partitions_on_(static_cast<size_t>(index.device_count())) {
  sequence_.reserve(static_cast<size_t>(index.node_count()));
}

// Kahn's algorithm with one ready queue per device, each ordered by position in the order: stay
// on the current device while it has ready nodes, else take the earliest ready node anywhere.
void PlanEvaluator::sequence(const std::vector<int>& device_of) {
  const int n = index_.node_count();
  const Rows& successors = index_.successors();
  const Rows& predecessors = index_.predecessors();
  for (auto& heap : ready_) heap.clear();
  for (int u = 0; u < n; ++u) {
    waiting_[u] = static_cast<int>(predecessors.last(u) - predecessors.first(u));
    if (waiting_[u] == 0) ready_[device_of[u]].push_back(index_.position(u));
  }
  for (auto& heap : ready_) std::make_heap(heap.begin(), heap.end(), std::greater<>());
  sequence_.clear();
  int current = -1;
  int run = -1;
  while (static_cast<int>(sequence_.size()) < n) {
    if (current < 0 || ready_[current].empty()) {
      int next = -1;
      for (int d = 0; d < index_.device_count(); ++d) {
        if (!ready_[d].empty() && (next < 0 || ready_[d].front() < ready_[next].front())) next = d;
      }
      if (next < 0) break;  // a cycle: outside the contract
      current = next;
      ++run;
    }
    std::vector<int>& heap = ready_[current];
    std::pop_heap(heap.begin(), heap.end(), std::greater<>());
    const int u = index_.order()[heap.back()];
    heap.pop_back();
    sequence_.push_back(u);
    run_of_[u] = run;
    for (const int* s = successors.first(u); s != successors.last(u); ++s) {
      if (--waiting_[*s] != 0) continue;
      std::vector<int>& target = ready_[device_of[*s]];
      target.push_back(index_.position(*s));
      std::push_heap(target.begin(), target.end(), std::greater<>());
    }
  }
}

int PlanEvaluator::find(int node) {
  while (parent_[node] != node) {
    parent_[node] = parent_[parent_[node]];
    node = parent_[node];
  }
  return node;
}

// Each run splits into its connected components, one partition each: a run of k nodes joined by
// j merging edges holds k - j of them.
double PlanEvaluator::overhead_ms(const std::vector<int>& device_of) {
  sequence(device_of);
  std::iota(parent_.begin(), parent_.end(), 0);
  std::fill(partitions_on_.begin(), partitions_on_.end(), 0);
  const Rows& successors = index_.successors();
  for (int u = 0; u < index_.node_count(); ++u) {
    ++partitions_on_[device_of[u]];
    for (const int* s = successors.first(u); s != successors.last(u); ++s) {
      if (run_of_[u] != run_of_[*s]) continue;
      const int a = find(u);
      const int b = find(*s);
      if (a == b) continue;
      parent_[std::max(a, b)] = std::min(a, b);
      --partitions_on_[device_of[u]];
    }
  }
  double ms = 0;
  for (int d = 0; d < index_.device_count(); ++d) {
    ms += static_cast<double>(partitions_on_[d]) * index_.overhead_ms(d);
  }
  return ms;
}

double PlanEvaluator::cost(const std::vector<int>& device_of) {
  const double ms = node_and_transfer_ms(index_, device_of);
  return ms == kNotAllowed ? kNotAllowed : ms + overhead_ms(device_of);
}

Grouping PlanEvaluator::group(const std::vector<int>& device_of) {
  overhead_ms(device_of);
  return last_grouping(device_of);
}

// The components of a run have no path between them (it would pass through nodes inside the
// run, joining them), so numbering partitions by first appearance in the sequence keeps them in
// a topological order.
Grouping PlanEvaluator::last_grouping(const std::vector<int>& device_of) {
  Grouping grouping;
  grouping.partition_of.assign(static_cast<size_t>(index_.node_count()), -1);
  std::vector<int> partition_of_root(static_cast<size_t>(index_.node_count()), -1);
  for (int u : sequence_) {
    int& partition = partition_of_root[find(u)];
    if (partition < 0) {
      partition = static_cast<int>(grouping.partitions.size());
      grouping.partitions.emplace_back();
      grouping.partition_device.push_back(device_of[u]);
    }
    grouping.partition_of[u] = partition;
    grouping.partitions[partition].push_back(u);
  }
  return grouping;
}

double node_and_transfer_ms(const PlacementIndex& index, const std::vector<int>& device_of) {
  const PlacementProblem& problem = index.problem();
  if (device_of.size() != static_cast<size_t>(index.node_count())) return kNotAllowed;
  double ms = 0;
  for (int u = 0; u < index.node_count(); ++u) {
    const int d = device_of[u];
    if (d < 0 || d >= index.device_count()) return kNotAllowed;
    ms += problem.node_ms[u][d];
  }
  if (ms == kNotAllowed) return kNotAllowed;
  const Rows& consumers = index.consumers();
  for (int v = 0; v < static_cast<int>(problem.values.size()); ++v) {
    uint64_t destinations = 0;
    for (const int* c = consumers.first(v); c != consumers.last(v); ++c) {
      destinations |= uint64_t{1} << device_of[*c];
    }
    ms += index.value_ms(v, index.source_of(v, device_of), destinations);
  }
  return ms;
}

}  // namespace hsched::sched
