// partition()'s second stage: local improvement by single-node and whole-partition moves.
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "scheduler/planner/partition_search.h"
#include "scheduler/planner/plan_evaluator.h"

namespace hsched::planner {
namespace {

// Estimated passes stop when a round of both kinds keeps nothing, or after this many rounds
// (each round costs up to two exact evaluations of the plan).
constexpr int kMaxRounds = 8;
// A move must gain more than this (ms) to count: keeps rounding noise from moving nodes.
constexpr double kMinGainMs = 1e-9;
// Work allowed for moves judged by exact evaluation, in nodes + edges visited (one evaluation
// visits them all). Small graphs get many exact passes, a 10,000-node graph none.
constexpr int64_t kExactWork = 60'000;

// Nodes and edges one exact evaluation visits.
int64_t evaluation_work(const PlacementIndex& index) {
  return index.node_count() + static_cast<int64_t>(index.successors().items.size());
}

// Exact evaluations in one Kernighan-Lin pass: n steps over the nodes not yet moved.
int64_t kl_pass_evaluations(const PlacementIndex& index) {
  const int64_t n = index.node_count();
  return n * (n + 1) / 2 * (index.device_count() - 1);
}

class LocalSearch {
 public:
  LocalSearch(const PlacementIndex& index, SlotDevices& device_at)
      : index_(index),
        problem_(index.problem()),
        devices_(index.device_count()),
        evaluator_(index),
        device_at_(device_at),
        readers_on_(problem_.values.size() * static_cast<size_t>(devices_), 0),
        value_ms_(problem_.values.size(), 0),
        value_stamp_(problem_.values.size(), 0),
        node_stamp_(static_cast<size_t>(index.node_count()), 0) {
    for (int u = 0; u < index_.node_count(); ++u) {
      for (const int* v = index_.inputs().first(u); v != index_.inputs().last(u); ++v) {
        ++readers(*v, device_at_[u]);
      }
    }
    for (int v = 0; v < static_cast<int>(value_ms_.size()); ++v) value_ms_[v] = current_ms(v);
    node_and_transfer_ms_ = node_and_transfer_ms(index_, device_at_);
  }

  // Returns the plan cost of the result, computed as plan_cost() computes it.
  double run() {
    improve_by_estimates();
    const double exact_ms = improve_exactly();
    return exact_ms != kNotAllowed ? exact_ms
                                   : node_and_transfer_ms(index_, device_at_) + overhead_ms_;
  }

 private:
  int& readers(int value, int device) {
    return readers_on_[static_cast<size_t>(value) * devices_ + device];
  }

  // Transfer ms of one value as currently placed.
  double current_ms(int value) {
    uint64_t destinations = 0;
    for (int d = 0; d < devices_; ++d) {
      if (readers(value, d) > 0) destinations |= uint64_t{1} << d;
    }
    return index_.value_ms(value, index_.source_of(value, device_at_), destinations);
  }

  void place(int u, int device) {
    for (const int* v = index_.inputs().first(u); v != index_.inputs().last(u); ++v) {
      --readers(*v, device_at_[u]);
      ++readers(*v, device);
    }
    device_at_[u] = device;
  }

  // Calls f(value) once for every value that `nodes` read or write.
  template <typename F>
  void for_each_value(const std::vector<int>& nodes, F f) {
    ++value_mark_;
    const auto visit = [&](const Rows& rows, int u) {
      for (const int* v = rows.first(u); v != rows.last(u); ++v) {
        if (value_stamp_[*v] == value_mark_) continue;
        value_stamp_[*v] = value_mark_;
        f(*v);
      }
    };
    for (int u : nodes) {
      visit(index_.inputs(), u);
      visit(index_.outputs(), u);
    }
  }

  // Moves `nodes` (all on one device) to `device`, keeping the value costs and their sum with
  // the node costs current.
  void move(const std::vector<int>& nodes, int device) {
    for (int u : nodes) {
      node_and_transfer_ms_ += index_.node_ms(u, device) - index_.node_ms(u, device_at_[u]);
      place(u, device);
    }
    for_each_value(nodes, [&](int v) {
      const double ms = current_ms(v);
      node_and_transfer_ms_ += ms - value_ms_[v];
      value_ms_[v] = ms;
    });
  }

  // Exact change of node and transfer ms if `nodes` moved to `device`; changes nothing.
  double move_gain(const std::vector<int>& nodes, int device) {
    const int from = device_at_[nodes.front()];
    double gain = 0;
    for (int u : nodes) gain += index_.node_ms(u, from) - index_.node_ms(u, device);
    for (int u : nodes) place(u, device);
    for_each_value(nodes, [&](int v) { gain += value_ms_[v] - current_ms(v); });
    for (int u : nodes) place(u, from);
    return gain;
  }

  // Whether a node of `nodes` has a neighbour outside them on `device`.
  bool touches(const std::vector<int>& nodes, int device) {
    ++node_mark_;
    for (int u : nodes) node_stamp_[u] = node_mark_;
    for (int u : nodes) {
      for (const Rows* rows : {&index_.predecessors(), &index_.successors()}) {
        for (const int* w = rows->first(u); w != rows->last(u); ++w) {
          if (device_at_[*w] == device && node_stamp_[*w] != node_mark_) return true;
        }
      }
    }
    return false;
  }

  // The device that gains `nodes` most, or -1. `leave_ms`: the estimated overhead saved by
  // leaving their partition (negative when leaving splits it). Arriving is estimated to open a
  // partition unless a neighbour is already on the device. Devices that could not gain even if
  // every transfer of the nodes vanished are skipped without evaluating the move.
  int best_device(const std::vector<int>& nodes, double leave_ms) {
    const int from = device_at_[nodes.front()];
    double held_ms = leave_ms;  // what a move could save at most, besides node time
    for_each_value(nodes, [&](int v) { held_ms += value_ms_[v]; });
    int best = -1;
    double best_gain = kMinGainMs;
    for (int d = 0; d < devices_; ++d) {
      if (d == from) continue;
      double node_gain = 0;
      for (int u : nodes) node_gain += index_.node_ms(u, from) - index_.node_ms(u, d);
      if (!(node_gain + held_ms > best_gain)) continue;  // also skips kNotAllowed (-inf)
      const double arrive_ms = touches(nodes, d) ? 0 : index_.overhead_ms(d);
      if (!(node_gain + held_ms - arrive_ms > best_gain)) continue;
      const double gain = move_gain(nodes, d) + leave_ms - arrive_ms;
      if (gain > best_gain) {
        best_gain = gain;
        best = d;
      }
    }
    return best;
  }

  // Rounds of estimated passes, each pass kept only if the plan cost fell (node and transfer ms
  // tracked move by move, partition overhead from a full regrouping). After the first round,
  // node passes visit only nodes next to a move that was kept.
  void improve_by_estimates() {
    overhead_ms_ = evaluator_.overhead_ms(device_at_);
    double cost = node_and_transfer_ms_ + overhead_ms_;
    Grouping grouping = evaluator_.last_grouping();
    std::vector<char> visit(static_cast<size_t>(index_.node_count()), 1);
    for (int round = 0; round < kMaxRounds; ++round) {
      bool improved = false;
      for (const bool whole_partitions : {false, true}) {
        moves_.clear();
        const double node_and_transfer_before = node_and_transfer_ms_;
        if (whole_partitions) {
          partition_pass(grouping);
        } else {
          node_pass(grouping, visit);
          std::fill(visit.begin(), visit.end(), 0);
        }
        if (moves_.empty()) continue;
        const double overhead_ms = evaluator_.overhead_ms(device_at_);
        const double moved = node_and_transfer_ms_ + overhead_ms;
        if (moved < cost - kMinGainMs) {
          cost = moved;
          overhead_ms_ = overhead_ms;
          grouping = evaluator_.last_grouping();
          improved = true;
          mark_neighbourhood(visit);
        } else {
          undo_pass();
          node_and_transfer_ms_ = node_and_transfer_before;
        }
      }
      if (!improved) break;
    }
  }

  // Flags the nodes moved in this pass and their neighbours.
  void mark_neighbourhood(std::vector<char>& visit) const {
    for (const auto& [u, before] : moves_) {
      visit[u] = 1;
      for (const Rows* rows : {&index_.predecessors(), &index_.successors()}) {
        for (const int* w = rows->first(u); w != rows->last(u); ++w) visit[*w] = 1;
      }
    }
  }

  void record_and_move(const std::vector<int>& nodes, int device) {
    for (int u : nodes) moves_.emplace_back(u, device_at_[u]);
    move(nodes, device);
  }

  void undo_pass() {
    std::vector<int> single(1);
    for (auto it = moves_.rbegin(); it != moves_.rend(); ++it) {
      single[0] = it->first;
      move(single, it->second);
    }
    moves_.clear();
  }

  // Overhead saved by taking u out of its partition: all of it when u is alone there; minus
  // one more partition when u sits between two of its partition's nodes (the rest splits).
  double leave_ms(const Grouping& grouping, const std::vector<int>& size_of, int u) const {
    const int partition = grouping.partition_of[u];
    const double overhead = index_.overhead_ms(device_at_[u]);
    if (size_of[partition] == 1) return overhead;
    const auto inside = [&](const Rows& rows) {
      for (const int* w = rows.first(u); w != rows.last(u); ++w) {
        if (grouping.partition_of[*w] == partition && device_at_[*w] == device_at_[u]) return true;
      }
      return false;
    };
    return inside(index_.predecessors()) && inside(index_.successors()) ? -overhead : 0;
  }

  // Each flagged node in turn to the device that gains most.
  void node_pass(const Grouping& grouping, const std::vector<char>& visit) {
    std::vector<int> size_of(grouping.partitions.size());
    for (size_t p = 0; p < size_of.size(); ++p) {
      size_of[p] = static_cast<int>(grouping.partitions[p].size());
    }
    std::vector<int> single(1);
    for (int u = 0; u < index_.node_count(); ++u) {
      if (!visit[u]) continue;
      single[0] = u;
      const int best = best_device(single, leave_ms(grouping, size_of, u));
      if (best < 0) continue;
      --size_of[grouping.partition_of[u]];
      record_and_move(single, best);
    }
  }

  // Each partition in turn, whole, to the device that gains most: its own overhead goes.
  void partition_pass(const Grouping& grouping) {
    for (size_t p = 0; p < grouping.partitions.size(); ++p) {
      const std::vector<int>& nodes = grouping.partitions[p];
      const int best = best_device(nodes, index_.overhead_ms(grouping.partition_device[p]));
      if (best >= 0) record_and_move(nodes, best);
    }
  }

  // Kernighan-Lin passes judged by the exact plan cost: move every node once, each time the
  // move that leaves the cheapest plan (even if dearer than now), then keep the cheapest prefix
  // of the sequence. Escapes the local minima where two nodes must move together. Runs while
  // a whole pass fits in the exact-work budget. Runs last: it leaves the value cache stale.
  // Returns the plan cost of the result, or kNotAllowed when the graph is too large to run.
  double improve_exactly() {
    const int64_t per_pass = kl_pass_evaluations(index_);
    int64_t evaluations_left = kExactWork / evaluation_work(index_);
    if (per_pass > evaluations_left) return kNotAllowed;
    double cost = evaluator_.cost(device_at_);
    std::vector<char> locked(static_cast<size_t>(index_.node_count()));
    while (per_pass <= evaluations_left) {
      evaluations_left -= per_pass;
      std::fill(locked.begin(), locked.end(), 0);
      moves_.clear();
      double best_cost = cost;
      size_t best_length = 0;
      for (int step = 0; step < index_.node_count(); ++step) {
        int best_node = -1;
        int best_device = -1;
        double step_cost = kNotAllowed;
        for (int u = 0; u < index_.node_count(); ++u) {
          if (locked[u]) continue;
          const int from = device_at_[u];
          for (int d = 0; d < devices_; ++d) {
            if (d == from || index_.node_ms(u, d) == kNotAllowed) continue;
            place(u, d);
            const double ms = evaluator_.cost(device_at_);
            place(u, from);
            if (ms < step_cost) {
              step_cost = ms;
              best_node = u;
              best_device = d;
            }
          }
        }
        if (best_node < 0) break;
        locked[best_node] = 1;
        moves_.emplace_back(best_node, device_at_[best_node]);
        place(best_node, best_device);
        if (step_cost < best_cost - kMinGainMs) {
          best_cost = step_cost;
          best_length = moves_.size();
        }
      }
      while (moves_.size() > best_length) {
        place(moves_.back().first, moves_.back().second);
        moves_.pop_back();
      }
      if (best_length > 0) {
        cost = best_cost;
      } else if (!move_a_pair(cost, evaluations_left)) {
        break;
      }
    }
    moves_.clear();
    return cost;
  }

  // Where a pass gained nothing: the first move of a producer and a reader of its value together
  // to one device that makes the plan cheaper (the pair a single move cannot shift: moving
  // either alone adds the copy between them). Returns whether one was kept.
  bool move_a_pair(double& cost, int64_t& evaluations_left) {
    const Rows& successors = index_.successors();
    for (int u = 0; u < index_.node_count(); ++u) {
      for (const int* s = successors.first(u); s != successors.last(u); ++s) {
        const int from_u = device_at_[u];
        const int from_s = device_at_[*s];
        for (int d = 0; d < devices_; ++d) {
          if ((d == from_u && d == from_s) || index_.node_ms(u, d) == kNotAllowed ||
              index_.node_ms(*s, d) == kNotAllowed) {
            continue;
          }
          if (evaluations_left-- <= 0) return false;
          place(u, d);
          place(*s, d);
          const double ms = evaluator_.cost(device_at_);
          if (ms < cost - kMinGainMs) {
            cost = ms;
            return true;
          }
          place(*s, from_s);
          place(u, from_u);
        }
      }
    }
    return false;
  }

  const PlacementIndex& index_;
  const PlacementProblem& problem_;
  const int devices_;
  PlanEvaluator evaluator_;
  std::vector<int>& device_at_;
  double node_and_transfer_ms_ = 0;  // of device_at_, kept by move()
  double overhead_ms_ = 0;           // of device_at_ after the last kept pass
  std::vector<int> readers_on_;      // [value][device]: nodes on the device reading the value
  std::vector<double> value_ms_;     // transfer ms per value as placed (kept by move())
  std::vector<uint32_t> value_stamp_;
  std::vector<uint32_t> node_stamp_;
  uint32_t value_mark_ = 0;
  uint32_t node_mark_ = 0;
  std::vector<std::pair<int, int>> moves_;  // (node, device before) since the pass began
};

}  // namespace

bool exact_search_fits(const PlacementIndex& index) {
  return kl_pass_evaluations(index) * evaluation_work(index) <= kExactWork;
}

double improve_locally(const PlacementIndex& index, SlotDevices& device_at) {
  if (index.node_count() == 0) return 0;
  return LocalSearch(index, device_at).run();
}

}  // namespace hsched::planner
