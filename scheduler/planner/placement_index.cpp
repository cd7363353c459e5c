#include "scheduler/planner/placement_index.h"

#include <algorithm>
#include <numeric>
#include <utility>

namespace hsched::planner {
namespace {

// Rows from (row, item) pairs, items kept in the pairs' order (a counting sort).
Rows make_rows(int row_count, const std::vector<std::pair<int, int>>& pairs) {
  Rows rows;
  rows.begin.assign(static_cast<size_t>(row_count) + 1, 0);
  for (const auto& [row, item] : pairs) ++rows.begin[static_cast<size_t>(row) + 1];
  std::partial_sum(rows.begin.begin(), rows.begin.end(), rows.begin.begin());
  rows.items.resize(pairs.size());
  std::vector<int> next(rows.begin.begin(), rows.begin.end() - 1);
  for (const auto& [row, item] : pairs) rows.items[static_cast<size_t>(next[row]++)] = item;
  return rows;
}

}  // namespace

bool well_formed(const PlacementProblem& problem) {
  const int devices = problem.device_count;
  const auto n = static_cast<int>(problem.node_ms.size());
  if (devices < 1 || devices > 64 || problem.host_device < 0 || problem.host_device >= devices) {
    return false;
  }
  const auto has_devices = [&](const auto& row) {
    return row.size() == static_cast<size_t>(devices);
  };
  if (!std::all_of(problem.node_ms.begin(), problem.node_ms.end(), has_devices) ||
      !has_devices(problem.links) ||
      !std::all_of(problem.links.begin(), problem.links.end(), has_devices)) {
    return false;
  }
  std::vector<int> position(static_cast<size_t>(n), -1);
  if (problem.order.empty()) {
    std::iota(position.begin(), position.end(), 0);
  } else {
    if (problem.order.size() != static_cast<size_t>(n)) return false;
    for (int i = 0; i < n; ++i) {
      const int node = problem.order[i];
      if (node < 0 || node >= n || position[node] >= 0) return false;
      position[node] = i;
    }
  }
  for (const PlacementProblem::Value& value : problem.values) {
    if (value.producer < -1 || value.producer >= n) return false;
    const int after = value.producer >= 0 ? position[value.producer] : -1;
    for (int consumer : value.consumers) {
      if (consumer < 0 || consumer >= n || position[consumer] <= after) return false;
    }
  }
  return true;
}

PlacementIndex::PlacementIndex(const PlacementProblem& problem) : problem_(problem) {
  const int n = static_cast<int>(problem.node_ms.size());
  const int devices = problem.device_count;
  if (problem.order.size() == static_cast<size_t>(n)) {
    node_at_ = problem.order;
  } else {
    node_at_.resize(static_cast<size_t>(n));
    std::iota(node_at_.begin(), node_at_.end(), 0);
  }
  slot_of_.assign(static_cast<size_t>(n), 0);
  node_ms_.resize(static_cast<size_t>(n) * static_cast<size_t>(devices));
  for (int slot = 0; slot < n; ++slot) {
    const int node = node_at_[slot];
    slot_of_[node] = slot;
    std::copy_n(problem.node_ms[node].begin(), devices, node_ms_.begin() + slot * devices);
  }

  std::vector<std::pair<int, int>> edges;    // producer -> reader, per use
  std::vector<std::pair<int, int>> reverse;  // reader -> producer, per use
  std::vector<std::pair<int, int>> reads;    // slot -> value, each value once per slot
  std::vector<std::pair<int, int>> readers;  // value -> slot, each slot once per value
  std::vector<std::pair<int, int>> writes;   // slot -> value
  std::vector<int> last_read(static_cast<size_t>(n), -1);
  const int value_count = static_cast<int>(problem.values.size());
  size_t uses = 0;
  for (const PlacementProblem::Value& value : problem.values) uses += value.consumers.size();
  for (auto* pairs : {&edges, &reverse, &reads, &readers}) pairs->reserve(uses);
  writes.reserve(static_cast<size_t>(value_count));
  producer_.resize(static_cast<size_t>(value_count));
  for (int v = 0; v < value_count; ++v) {
    const PlacementProblem::Value& value = problem.values[v];
    const int from = value.producer >= 0 ? slot_of_[value.producer] : -1;
    producer_[v] = from;
    if (from >= 0) writes.emplace_back(from, v);
    for (int consumer : value.consumers) {
      const int to = slot_of_[consumer];
      if (from >= 0) {
        edges.emplace_back(from, to);
        reverse.emplace_back(to, from);
      }
      if (last_read[to] == v) continue;
      last_read[to] = v;
      reads.emplace_back(to, v);
      readers.emplace_back(v, to);
    }
  }
  successors_ = make_rows(n, edges);
  predecessors_ = make_rows(n, reverse);
  inputs_ = make_rows(n, reads);
  outputs_ = make_rows(n, writes);
  readers_ = make_rows(value_count, readers);
  for (int v = 0; v < value_count; ++v) {
    std::sort(readers_.items.begin() + readers_.begin[v],
              readers_.items.begin() + readers_.begin[v + 1]);
  }
  // Slots are in topological order: a slot's predecessors are decided before it.
  constant_only_.assign(static_cast<size_t>(n), 1);
  for (int slot = 0; slot < n; ++slot) {
    char& only = constant_only_[static_cast<size_t>(slot)];
    for (const int* v = inputs_.first(slot); v != inputs_.last(slot) && only; ++v) {
      only = producer_[static_cast<size_t>(*v)] >= 0;
    }
    for (const int* p = predecessors_.first(slot); p != predecessors_.last(slot) && only; ++p) {
      only = constant_only_[static_cast<size_t>(*p)];
    }
  }
}

double PlacementIndex::overhead_ms(int device) const {
  const auto d = static_cast<size_t>(device);
  return d < problem_.partition_overhead_ms.size() ? problem_.partition_overhead_ms[d] : 0;
}

double PlacementIndex::link_ms(int from, int to, int64_t bytes) const {
  return from == to ? 0
                    : problem_.links[static_cast<size_t>(from)][static_cast<size_t>(to)].ms(bytes);
}

double PlacementIndex::value_ms(int value, int source, uint64_t destinations) const {
  const PlacementProblem::Value& v = problem_.values[static_cast<size_t>(value)];
  if (v.graph_output) destinations |= uint64_t{1} << problem_.host_device;
  destinations &= ~(uint64_t{1} << source);
  double ms = 0;
  for (int d = 0; destinations != 0; ++d, destinations >>= 1) {
    if ((destinations & 1) != 0) ms += link_ms(source, d, v.bytes);
  }
  return ms;
}

bool PlacementIndex::to_slots(const std::vector<int>& device_of, SlotDevices& device_at) const {
  if (device_of.size() != node_at_.size()) return false;
  device_at.resize(node_at_.size());
  for (size_t slot = 0; slot < node_at_.size(); ++slot) {
    const int d = device_of[static_cast<size_t>(node_at_[slot])];
    if (d < 0 || d >= device_count()) return false;
    device_at[slot] = d;
  }
  return true;
}

std::vector<int> PlacementIndex::to_nodes(const SlotDevices& device_at) const {
  std::vector<int> device_of(node_at_.size());
  for (size_t slot = 0; slot < node_at_.size(); ++slot) device_of[node_at_[slot]] = device_at[slot];
  return device_of;
}

Grouping PlacementIndex::to_nodes(Grouping slot_grouping) const {
  Grouping grouping;
  grouping.partition_of.resize(node_at_.size());
  for (size_t slot = 0; slot < node_at_.size(); ++slot) {
    grouping.partition_of[node_at_[slot]] = slot_grouping.partition_of[slot];
  }
  for (std::vector<int>& members : slot_grouping.partitions) {
    for (int& member : members) member = node_at_[member];
  }
  grouping.partitions = std::move(slot_grouping.partitions);
  grouping.partition_device = std::move(slot_grouping.partition_device);
  return grouping;
}

}  // namespace hsched::planner
