// partition()'s first stage: dynamic programming over the topological order.
#include <algorithm>
#include <cstdint>

#include "scheduler/planner/partition_search.h"

namespace hsched::planner {
namespace {

// How many earlier readers of a value a state looks up to see whether the value already reached
// a device. Bounds the work on values with many readers; beyond it a copy may be charged twice
// (the local search, which counts exactly, removes what that costs).
constexpr int kReaderLookback = 2;

// Back-pointers of every DP state with binary lifting: level k holds, for the state (position i,
// device d), the device at position i - 2^k on that state's path. Finding the device of a node
// far back on a path then takes O(log n) steps.
class PathTable {
 public:
  PathTable(int positions, int devices) : positions_(positions), devices_(devices) {
    while ((1 << levels_) < std::max(positions, 2)) ++levels_;
    table_.assign(static_cast<size_t>(levels_) * positions * devices, 0);
  }

  // Records the back-pointers of position i (device at i - 1 per state) and the jumps from i.
  void set_back(int i, const std::vector<uint8_t>& back) {
    for (int d = 0; d < devices_; ++d) at(0, i, d) = back[d];
    for (int k = 1; k < levels_ && (1 << k) <= i; ++k) {
      const int half = 1 << (k - 1);
      for (int d = 0; d < devices_; ++d) at(k, i, d) = at(k - 1, i - half, at(k - 1, i, d));
    }
  }

  // The device at position p <= i on the path ending in state (i, d).
  int device_at(int i, int d, int p) const {
    for (int k = 0, delta = i - p; delta != 0; ++k, delta >>= 1) {
      if ((delta & 1) != 0) {
        d = at(k, i, d);
        i -= 1 << k;
      }
    }
    return d;
  }

 private:
  uint8_t& at(int k, int i, int d) {
    return table_[(static_cast<size_t>(k) * positions_ + i) * devices_ + d];
  }
  uint8_t at(int k, int i, int d) const {
    return table_[(static_cast<size_t>(k) * positions_ + i) * devices_ + d];
  }

  int positions_;
  int devices_;
  int levels_ = 1;
  std::vector<uint8_t> table_;
};

// Where one input of the current node comes from on a given path, and where it already went.
struct InputOrigin {
  int value = 0;
  int source = 0;
  uint64_t delivered = 0;  // devices (bits) the value was already copied to on this path
};

}  // namespace

SlotDevices assign_by_dp(const PlacementIndex& index) {
  const PlacementProblem& problem = index.problem();
  const int n = index.node_count();
  const int devices = index.device_count();
  if (n == 0) return {};
  PathTable paths(n, devices);
  std::vector<double> previous(static_cast<size_t>(devices), 0);
  std::vector<double> current(static_cast<size_t>(devices));
  std::vector<uint8_t> back(static_cast<size_t>(devices));
  std::vector<InputOrigin> origins;
  const Rows& inputs = index.inputs();
  const Rows& readers = index.readers();

  for (int i = 0; i < n; ++i) {
    std::fill(current.begin(), current.end(), kNotAllowed);
    std::fill(back.begin(), back.end(), 0);
    // The first node has no predecessor state; model it as one state that every device leaves.
    const int from_states = i == 0 ? 1 : devices;
    for (int prev = 0; prev < from_states; ++prev) {
      if (previous[prev] == kNotAllowed) continue;
      origins.clear();
      for (const int* v = inputs.first(i); v != inputs.last(i); ++v) {
        InputOrigin origin{*v, problem.host_device, 0};
        if (problem.values[*v].graph_output) origin.delivered |= uint64_t{1} << problem.host_device;
        if (i > 0) {
          if (index.producer(*v) >= 0)
            origin.source = paths.device_at(i - 1, prev, index.producer(*v));
          // Earlier readers of the value, nearest first (the row is sorted by slot).
          const int* first = readers.first(*v);
          const int* self = std::lower_bound(first, readers.last(*v), i);
          for (int k = 0; self != first && k < kReaderLookback; ++k) {
            --self;
            origin.delivered |= uint64_t{1} << paths.device_at(i - 1, prev, *self);
          }
        }
        origins.push_back(origin);
      }
      for (int d = 0; d < devices; ++d) {
        if (index.node_ms(i, d) == kNotAllowed) continue;
        double ms = previous[prev] + (i == 0 || d != prev ? index.overhead_ms(d) : 0);
        for (const InputOrigin& origin : origins) {
          if (origin.source == d || (origin.delivered >> d & 1) != 0) continue;
          ms += index.link_ms(origin.source, d, problem.values[origin.value].bytes);
        }
        if (ms < current[d]) {
          current[d] = ms;
          back[d] = static_cast<uint8_t>(prev);
        }
      }
    }
    for (int d = 0; d < devices; ++d) {
      if (current[d] == kNotAllowed) continue;
      current[d] += index.node_ms(i, d);
      for (const int* v = index.outputs().first(i); v != index.outputs().last(i); ++v) {
        const PlacementProblem::Value& value = problem.values[*v];
        if (value.graph_output) current[d] += index.link_ms(d, problem.host_device, value.bytes);
      }
    }
    paths.set_back(i, back);
    previous.swap(current);
  }

  SlotDevices device_at(static_cast<size_t>(n), 0);
  int d = static_cast<int>(std::min_element(previous.begin(), previous.end()) - previous.begin());
  for (int i = n - 1; i >= 0; --i) {
    device_at[i] = d;
    if (i > 0) d = paths.device_at(i, d, i - 1);
  }
  return device_at;
}

}  // namespace hsched::planner
