// Internal to the partitioner: a PlacementProblem's graph in flat arrays, built once per problem
// so that grouping, the cost function and the search share it. Nodes are renumbered by their
// position in the problem's order ("slots"): the search walks the order, and neighbours in the
// graph sit close together in memory. Not part of the public API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "scheduler/planner/partitioner.h"

namespace hsched::planner {

// Compressed rows: the items of row r are items[begin[r] .. begin[r + 1]).
struct Rows {
  std::vector<int> begin{0};
  std::vector<int> items;

  const int* first(int row) const { return items.data() + begin[static_cast<size_t>(row)]; }
  const int* last(int row) const { return items.data() + begin[static_cast<size_t>(row) + 1]; }
  int size(int row) const { return static_cast<int>(last(row) - first(row)); }
};

// The contract every function of partitioner.h assumes: 1 to 64 devices, a host among them,
// node_ms rows and links of device_count entries, values naming existing nodes, and `order`
// empty (node index order) or a topological order of every node. O(nodes + uses).
bool well_formed(const PlacementProblem& problem);

// An assignment indexed by slot (device_at[slot]) rather than by node (device_of[node]).
using SlotDevices = std::vector<int>;

class PlacementIndex {
 public:
  // Contract: well_formed(problem).
  explicit PlacementIndex(const PlacementProblem& problem);

  const PlacementProblem& problem() const { return problem_; }
  int node_count() const { return static_cast<int>(node_at_.size()); }
  int device_count() const { return problem_.device_count; }
  int node_at(int slot) const { return node_at_[static_cast<size_t>(slot)]; }

  double node_ms(int slot, int device) const {
    return node_ms_[static_cast<size_t>(slot) * static_cast<size_t>(device_count()) +
                    static_cast<size_t>(device)];
  }
  const Rows& successors() const { return successors_; }      // slots per slot, repeats kept
  const Rows& predecessors() const { return predecessors_; }  // slots per slot, repeats kept
  const Rows& inputs() const { return inputs_; }              // distinct values each slot reads
  const Rows& outputs() const { return outputs_; }            // values each slot produces
  const Rows& readers() const { return readers_; }            // distinct slots per value, rising
  int producer(int value) const { return producer_[static_cast<size_t>(value)]; }  // -1: input
  // Whether the slot computes from constants only: it reads no graph input, and no value that
  // a slot reading one produced (an int8 model's weight dequantization).
  bool constant_only(int slot) const { return constant_only_[static_cast<size_t>(slot)] != 0; }
  int value_count() const { return static_cast<int>(producer_.size()); }

  double overhead_ms(int device) const;
  double link_ms(int from, int to, int64_t bytes) const;
  // Transfer ms of a value produced on `source` and read on the devices of `destinations` (a
  // bit per device; the host's bit is added for graph outputs).
  double value_ms(int value, int source, uint64_t destinations) const;
  int source_of(int value, const SlotDevices& device_at) const {
    const int slot = producer(value);
    return slot >= 0 ? device_at[static_cast<size_t>(slot)] : problem_.host_device;
  }

  // Between the problem's node numbering and slots. to_slots() refuses (returns false for) an
  // assignment of the wrong size or naming a device that does not exist.
  bool to_slots(const std::vector<int>& device_of, SlotDevices& device_at) const;
  std::vector<int> to_nodes(const SlotDevices& device_at) const;
  Grouping to_nodes(Grouping slot_grouping) const;

 private:
  const PlacementProblem& problem_;
  std::vector<int> node_at_;
  std::vector<int> slot_of_;
  std::vector<double> node_ms_;  // [slot][device]
  std::vector<int> producer_;    // per value: a slot, or -1 for a graph input
  Rows successors_;
  Rows predecessors_;
  Rows inputs_;
  Rows outputs_;
  Rows readers_;
  std::vector<char> constant_only_;  // per slot
};

}  // namespace hsched::planner
