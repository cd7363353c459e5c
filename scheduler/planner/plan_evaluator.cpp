#include "scheduler/planner/plan_evaluator.h"

#include <algorithm>
#include <bit>

namespace hsched::planner {

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
      deferred_(static_cast<size_t>(index.node_count())),
      run_of_(static_cast<size_t>(index.node_count())) {
  sequence_.reserve(static_cast<size_t>(index.node_count()));
}

// Kahn's algorithm with one ready queue per device, each ordered by slot (position in the
// order): stay on the current device while it has ready nodes, else take the earliest ready
// node anywhere. A node that computes from constants only and whose readers all run on its
// device ("deferred") runs just before its first reader, in the reader's run: ready from the
// start, it would otherwise join its device's first run and reach its readers as a transfer
// between partitions (an int8 model's dequantized weights, read by every later partition).
void PlanEvaluator::sequence(const SlotDevices& device_at) {
  const int n = index_.node_count();
  const Rows& successors = index_.successors();
  const Rows& predecessors = index_.predecessors();
  for (ReadySlots& ready : ready_) ready.reset(n);
  for (int u = 0; u < n; ++u) {
    bool deferred = index_.constant_only(u) && successors.size(u) > 0;
    for (const int* s = successors.first(u); s != successors.last(u) && deferred; ++s) {
      deferred = device_at[*s] == device_at[u];
    }
    for (const int* p = predecessors.first(u); p != predecessors.last(u) && deferred; ++p) {
      deferred = deferred_[*p] != 0;  // slots are topological: decided already
    }
    deferred_[u] = deferred ? 1 : 0;
  }
  for (int u = 0; u < n; ++u) {
    waiting_[u] = 0;
    for (const int* p = predecessors.first(u); p != predecessors.last(u); ++p) {
      waiting_[u] += deferred_[*p] ? 0 : 1;
    }
    if (waiting_[u] == 0 && !deferred_[u]) ready_[device_at[u]].insert(u);
  }
  sequence_.clear();
  run_device_.clear();
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
      run_device_.push_back(current);
    }
    const int u = ready_[current].lowest();
    ready_[current].erase(u);
    emit_deferred_inputs(u, run);
    sequence_.push_back(u);
    run_of_[u] = run;
    for (const int* s = successors.first(u); s != successors.last(u); ++s) {
      if (--waiting_[*s] == 0) ready_[device_at[*s]].insert(*s);
    }
  }
}

// Sequences the deferred nodes `u` reads (and theirs, inputs first) that have not run yet.
void PlanEvaluator::emit_deferred_inputs(int u, int run) {
  const Rows& predecessors = index_.predecessors();
  stack_.clear();
  stack_.emplace_back(u, predecessors.first(u));
  while (!stack_.empty()) {
    auto& [node, next] = stack_.back();
    if (next == predecessors.last(node)) {
      if (node != u) {
        sequence_.push_back(node);
        run_of_[node] = run;
      }
      stack_.pop_back();
      continue;
    }
    const int p = *next++;
    if (deferred_[p] == 1) {
      deferred_[p] = 2;  // sequenced (or on the stack)
      stack_.emplace_back(p, predecessors.first(p));
    }
  }
}

// One partition per run: a run is a stretch of the sequence, so all of it can run once the
// partitions before it have, even where it holds nodes with no path between them (splitting
// those would pay the device's partition overhead again for work the device runs in turn).
double PlanEvaluator::overhead_ms(const SlotDevices& device_at) {
  sequence(device_at);
  double ms = 0;
  for (const int d : run_device_) ms += index_.overhead_ms(d);
  return ms;
}

double PlanEvaluator::cost(const SlotDevices& device_at) {
  const double ms = node_and_transfer_ms(index_, device_at);
  return ms == kNotAllowed ? kNotAllowed : ms + overhead_ms(device_at);
}

Grouping PlanEvaluator::group(const SlotDevices& device_at) {
  sequence(device_at);
  return last_grouping();
}

// Runs are numbered in sequence order, so the partitions are in a topological order.
Grouping PlanEvaluator::last_grouping() const {
  Grouping grouping;
  grouping.partition_of.assign(static_cast<size_t>(index_.node_count()), -1);
  grouping.partition_device = run_device_;
  grouping.partitions.resize(run_device_.size());
  for (const int u : sequence_) {
    grouping.partition_of[u] = run_of_[u];
    grouping.partitions[static_cast<size_t>(run_of_[u])].push_back(u);
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

}  // namespace hsched::planner
