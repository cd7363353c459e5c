#include "scheduler/plan_evaluator.h"

#include <algorithm>
#include <bit>
#include <numeric>

namespace hsched::sched {

void ReadySlots::reset(int slots) {
  words_.assign((static_cast<size_t>(slots) + 63) / 64, 0);
  cursor_ = 0;
  count_ = 0;
}

void ReadySlots::insert(int slot) {
  words_[static_cast<size_t>(slot) / 64] |= uint64_t{1} << (slot % 64);
  cursor_ = std::min(cursor_, slot);
  ++count_;
}

int ReadySlots::lowest() {
  size_t w = static_cast<size_t>(cursor_) / 64;
  uint64_t word = words_[w] & (~uint64_t{0} << (cursor_ % 64));
  while (word == 0) word = words_[++w];
  cursor_ = static_cast<int>(w * 64) + std::countr_zero(word);
  return cursor_;
}

void ReadySlots::erase(int slot) {
  words_[static_cast<size_t>(slot) / 64] &= ~(uint64_t{1} << (slot % 64));
  --count_;
}

PlanEvaluator::PlanEvaluator(const PlacementIndex& index)
    : index_(index),
      ready_(static_cast<size_t>(index.device_count())),
      waiting_(static_cast<size_t>(index.node_count())),
      run_of_(static_cast<size_t>(index.node_count())),
      parent_(static_cast<size_t>(index.node_count())),
      partitions_on_(static_cast<size_t>(index.device_count())) {
  sequence_.reserve(static_cast<size_t>(index.node_count()));
}

// Kahn's algorithm with one ready queue per device, each ordered by slot (position in the
// order): stay on the current device while it has ready nodes, else take the earliest ready
// node anywhere.
void PlanEvaluator::sequence(const SlotDevices& device_at) {
  const int n = index_.node_count();
  const Rows& successors = index_.successors();
  for (ReadySlots& ready : ready_) ready.reset(n);
  for (int u = 0; u < n; ++u) {
    waiting_[u] = index_.predecessors().size(u);
    if (waiting_[u] == 0) ready_[device_at[u]].insert(u);
  }
  sequence_.clear();
  int current = -1;
  int run = -1;
  while (static_cast<int>(sequence_.size()) < n) {
    if (current < 0 || ready_[current].empty()) {
      int next = -1;
      for (int d = 0; d < index_.device_count(); ++d) {
        if (!ready_[d].empty() && (next < 0 || ready_[d].lowest() < ready_[next].lowest())) {
          next = d;
        }
      }
      if (next < 0) break;  // a cycle: outside the contract
      current = next;
      ++run;
    }
    const int u = ready_[current].lowest();
    ready_[current].erase(u);
    sequence_.push_back(u);
    run_of_[u] = run;
    for (const int* s = successors.first(u); s != successors.last(u); ++s) {
      if (--waiting_[*s] == 0) ready_[device_at[*s]].insert(*s);
    }
  }
}

int PlanEvaluator::find(int slot) {
  while (parent_[slot] != slot) {
    parent_[slot] = parent_[parent_[slot]];
    slot = parent_[slot];
  }
  return slot;
}

// Each run splits into its connected components, one partition each: a run of k nodes joined by
// j merging edges holds k - j of them.
double PlanEvaluator::overhead_ms(const SlotDevices& device_at) {
  sequence(device_at);
  std::iota(parent_.begin(), parent_.end(), 0);
  std::fill(partitions_on_.begin(), partitions_on_.end(), 0);
  const Rows& successors = index_.successors();
  for (int u = 0; u < index_.node_count(); ++u) {
    ++partitions_on_[device_at[u]];
    for (const int* s = successors.first(u); s != successors.last(u); ++s) {
      if (run_of_[u] != run_of_[*s]) continue;
      const int a = find(u);
      const int b = find(*s);
      if (a == b) continue;
      parent_[std::max(a, b)] = std::min(a, b);
      --partitions_on_[device_at[u]];
    }
  }
  double ms = 0;
  for (int d = 0; d < index_.device_count(); ++d) {
    ms += static_cast<double>(partitions_on_[d]) * index_.overhead_ms(d);
  }
  return ms;
}

double PlanEvaluator::cost(const SlotDevices& device_at) {
  const double ms = node_and_transfer_ms(index_, device_at);
  return ms == kNotAllowed ? kNotAllowed : ms + overhead_ms(device_at);
}

Grouping PlanEvaluator::group(const SlotDevices& device_at) {
  overhead_ms(device_at);
  return last_grouping(device_at);
}

// The components of a run have no path between them (it would pass through nodes inside the
// run, joining them), so numbering partitions by first appearance in the sequence keeps them in
// a topological order.
Grouping PlanEvaluator::last_grouping(const SlotDevices& device_at) {
  Grouping grouping;
  grouping.partition_of.assign(static_cast<size_t>(index_.node_count()), -1);
  std::vector<int> partition_of_root(static_cast<size_t>(index_.node_count()), -1);
  for (int u : sequence_) {
    int& partition = partition_of_root[find(u)];
    if (partition < 0) {
      partition = static_cast<int>(grouping.partitions.size());
      grouping.partitions.emplace_back();
      grouping.partition_device.push_back(device_at[u]);
    }
    grouping.partition_of[u] = partition;
    grouping.partitions[partition].push_back(u);
  }
  return grouping;
}

double node_and_transfer_ms(const PlacementIndex& index, const SlotDevices& device_at) {
  double ms = 0;
  for (int u = 0; u < index.node_count(); ++u) ms += index.node_ms(u, device_at[u]);
  if (ms == kNotAllowed) return kNotAllowed;
  const Rows& readers = index.readers();
  for (int v = 0; v < index.value_count(); ++v) {
    uint64_t destinations = 0;
    for (const int* r = readers.first(v); r != readers.last(v); ++r) {
      destinations |= uint64_t{1} << device_at[*r];
    }
    ms += index.value_ms(v, index.source_of(v, device_at), destinations);
  }
  return ms;
}

}  // namespace hsched::sched
