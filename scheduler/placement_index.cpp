#include "scheduler/placement_index.h"

#include <algorithm>
#include <numeric>
#include <utility>

namespace hsched::sched {
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

PlacementIndex::PlacementIndex(const PlacementProblem& problem)
    : problem_(problem), node_count_(static_cast<int>(problem.node_ms.size())) {
  if (problem.order.size() == static_cast<size_t>(node_count_)) {
    order_ = problem.order;
  } else {
    order_.resize(static_cast<size_t>(node_count_));
    std::iota(order_.begin(), order_.end(), 0);
  }
  position_.assign(static_cast<size_t>(node_count_), 0);
  for (int i = 0; i < node_count_; ++i) position_[static_cast<size_t>(order_[i])] = i;

  std::vector<std::pair<int, int>> edges;    // producer -> consumer
  std::vector<std::pair<int, int>> reverse;  // consumer -> producer
  std::vector<std::pair<int, int>> reads;    // node -> value, each value once per node
  std::vector<std::pair<int, int>> readers;  // value -> node, each node once per value
  std::vector<std::pair<int, int>> writes;   // node -> value
  std::vector<int> last_read(static_cast<size_t>(node_count_), -1);
  const int value_count = static_cast<int>(problem.values.size());
  for (int v = 0; v < value_count; ++v) {
    const PlacementProblem::Value& value = problem.values[static_cast<size_t>(v)];
    if (value.producer >= 0) writes.emplace_back(value.producer, v);
    for (int consumer : value.consumers) {
      if (value.producer >= 0) {
        edges.emplace_back(value.producer, consumer);
        reverse.emplace_back(consumer, value.producer);
      }
      if (last_read[static_cast<size_t>(consumer)] == v) continue;
      last_read[static_cast<size_t>(consumer)] = v;
      reads.emplace_back(consumer, v);
      readers.emplace_back(v, consumer);
    }
  }
  successors_ = make_rows(node_count_, edges);
  predecessors_ = make_rows(node_count_, reverse);
  inputs_ = make_rows(node_count_, reads);
  outputs_ = make_rows(node_count_, writes);
  consumers_ = make_rows(value_count, readers);
  for (int v = 0; v < value_count; ++v) {
    auto* first = consumers_.items.data() + consumers_.begin[static_cast<size_t>(v)];
    auto* last = consumers_.items.data() + consumers_.begin[static_cast<size_t>(v) + 1];
    std::sort(first, last, [&](int a, int b) { return position(a) < position(b); });
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

int PlacementIndex::source_of(int value, const std::vector<int>& device_of) const {
  const int producer = problem_.values[static_cast<size_t>(value)].producer;
  return producer >= 0 ? device_of[static_cast<size_t>(producer)] : problem_.host_device;
}

}  // namespace hsched::sched
