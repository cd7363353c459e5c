// schedule(): asks every device's capability about every node for the policy's choices, builds
// the placement problem (costs from the cost model), runs the partitioner, and writes down the
// plan with a reason for every placement and every rejection asked on the way. With the policy's
// split_every (the forced split, for testing and diagnosis) the placement alternates the default
// choices instead, cost ignored.
#include "scheduler/planner/schedule.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "hsched/config.h"
#include "scheduler/planner/cost_model.h"
#include "scheduler/planner/device_limit.h"
#include "scheduler/planner/node_refusal.h"
#include "scheduler/planner/partitioner.h"
#include "scheduler/planner/plan_costs.h"

namespace hsched {
namespace {

// One allowed choice of an op type, with the devices its selector matches in the target.
struct ResolvedChoice {
  Choice choice;
  std::vector<int> devices;  // indices into target.devices, in target order
};

// What the policy says of one op type: its choices in order (the implicit CPU fp32 last unless
// fallback is error) and whether the policy keeps that op on the CPU by design.
struct OpChoices {
  std::vector<ResolvedChoice> choices;
  size_t listed = 0;           // how many come from the policy (the rest is the implicit CPU)
  bool cpu_by_policy = false;  // every listed choice is the host CPU, or none is listed
};

// A (device, precision) that can take a node: the first supported choice for that device.
struct Candidate {
  int device = -1;
  Precision precision = Precision::kFp32;
  size_t choice = 0;  // index into OpChoices::choices
  bool substituted = false;
  Precision requested = Precision::kFp32;
};

struct NodeOptions {
  std::vector<Candidate> candidates;  // by choice, then target order (forced split: its pick)
  std::vector<Rejection> rejections;  // every "no" asked for this node, in asking order
  std::optional<Rejection> first_choice_rejection;  // when choice 0 produced no candidate
  std::set<std::pair<int, Precision>> asked;        // (device, precision) already asked
};

// The forced split's decision for one node: the default choice its slot wants and, when that
// choice could not take the node, the first reason why.
struct SplitPick {
  size_t slot = 0;                          // index into policy.default_choices
  std::optional<Rejection> slot_rejection;  // set when the node went elsewhere
};

std::string format_ms(double ms) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3f ms", ms);
  return text;
}

std::string describe(const Rejection& rejection) {
  return rejection.device + "/" + precision_name(rejection.precision) + " " +
         reason_code_name(rejection.reason) + ": " + rejection.detail;
}

class Scheduler {
 public:
  Scheduler(const Graph& graph, const Target& target, const Policy& policy,
            const std::vector<Rejection>& late_rejections)
      : graph_(graph),
        target_(target),
        policy_(policy),
        late_rejections_(late_rejections),
        cost_(target, policy.expected_runs) {}

  Result<Plan> run();

 private:
  OpChoices resolve(const std::vector<Choice>& listed) const;
  const OpChoices& choices_for(const std::string& op_type);
  // `all_choices`: every choice of the node's list even under the strict objective (which
  // stops at the first that takes it), for comparing a strict plan with single devices.
  NodeOptions options_for(NodeId node, bool all_choices = false);
  NodeOptions split_options(NodeId node, size_t position, SplitPick& pick);
  void place_split_node(NodeId node, const SplitPick& pick, Plan& plan) const;
  // The rejection of a choice whose selector matches no device of the target.
  Rejection absent(NodeId node, const ResolvedChoice& rc) const;
  // Device `device` of the target on `node` in `precision`: a late rejection recorded for the
  // pair, else the device's own answer.
  std::optional<Rejection> check(int device, NodeId node, Precision precision) const;
  void try_device(NodeId node, size_t choice_index, Precision requested, int device,
                  NodeOptions& options) const;
  Status refuse(const std::vector<NodeId>& offenders,
                const std::vector<NodeOptions>& options) const;
  planner::PlacementProblem problem(const std::vector<NodeOptions>& options,
                                    const std::vector<NodeId>& order,
                                    std::vector<ValueId>& graph_value_of) const;
  void place_node(NodeId node, const NodeOptions& options, int device,
                  const planner::PlacementProblem& problem, Plan& plan);
  void add_transfers(const planner::PlacementProblem& problem,
                     const std::vector<ValueId>& graph_value_of, const std::vector<int>& device_of,
                     const planner::Grouping& grouping, Plan& plan) const;
  void keep_faster_precision(NodeId node, int device, NodeOptions& options) const;
  // The plan of `assignment`: placements, partitions, transfers, predictions (`plan` holds the
  // model, target, policy and rejections already).
  Plan build_plan(Plan plan, const planner::PlacementProblem& problem,
                  const std::vector<NodeOptions>& options, const std::vector<SplitPick>& picks,
                  const std::vector<ValueId>& graph_value_of,
                  const planner::Assignment& assignment);
  int host_device() const;

  const Graph& graph_;
  const Target& target_;
  const Policy& policy_;
  const std::vector<Rejection>& late_rejections_;
  planner::CostModel cost_;
  // Failures found after an earlier plan (compile timeout, verification...): each listed
  // (device, node) is refused with its recorded reason; an accuracy budget's only in its
  // precision.
  std::multimap<std::pair<int, NodeId>, Rejection> late_by_device_node_;
  std::map<std::string, OpChoices> op_choices_;  // per op type, resolved once
  std::optional<OpChoices> split_choices_;       // the default choices, resolved once
};

OpChoices Scheduler::resolve(const std::vector<Choice>& listed) const {
  OpChoices resolved;
  std::vector<Choice> choices = listed;
  resolved.listed = choices.size();
  if (policy_.fallback != FallbackMode::kError) choices.push_back({"cpu", Precision::kFp32});
  resolved.cpu_by_policy = true;
  for (size_t c = 0; c < choices.size(); ++c) {
    ResolvedChoice rc{choices[c], {}};
    for (const std::string& id : match_devices(target_, choices[c].device)) {
      for (size_t d = 0; d < target_.devices.size(); ++d) {
        if (target_.devices[d].id == id) rc.devices.push_back(static_cast<int>(d));
      }
    }
    if (c < resolved.listed) {
      for (int d : rc.devices) {
        if (target_.devices[d].api != DeviceApi::kHost) resolved.cpu_by_policy = false;
      }
      if (rc.devices.empty()) resolved.cpu_by_policy = false;
    }
    resolved.choices.push_back(std::move(rc));
  }
  return resolved;
}

const OpChoices& Scheduler::choices_for(const std::string& op_type) {
  auto [it, inserted] = op_choices_.try_emplace(op_type);
  if (inserted) it->second = resolve(policy_.choices_for(op_type));
  return it->second;
}

Rejection Scheduler::absent(NodeId node, const ResolvedChoice& rc) const {
  return {node, rc.choice.device, rc.choice.precision, ReasonCode::kDeviceAbsent,
          "no device of target " + target_.name + " matches '" + rc.choice.device + "'"};
}

std::optional<Rejection> Scheduler::check(int device, NodeId node, Precision precision) const {
  const auto [first, last] = late_by_device_node_.equal_range({device, node});
  for (auto late = first; late != last; ++late) {
    // An accuracy budget refuses one precision; any other late rejection, the device.
    if (late->second.reason == ReasonCode::kAccuracyBudget) {
      if (late->second.precision == precision) return late->second;
      continue;
    }
    Rejection rejection = late->second;
    rejection.precision = precision;
    return rejection;
  }
  return cost_.device(target_.devices[device]).check(graph_, node, precision);
}

// Asks `device` for the choice's precision, then for its substitutes when the device refuses it.
// Records every rejection; adds at most one candidate.
void Scheduler::try_device(NodeId node, size_t choice_index, Precision requested, int device,
                           NodeOptions& options) const {
  // The implicit CPU fp32 (or a policy listing a device twice) asks nothing twice.
  if (!options.asked.emplace(device, requested).second) return;
  std::optional<Rejection> rejection = check(device, node, requested);
  if (!rejection) {
    options.candidates.push_back({device, requested, choice_index, false, requested});
    return;
  }
  // The substitutes: the policy's for a precision the device lacks; fp32 for a reduced precision
  // asked of a node whose outputs are not floats (a mask's comparison, a Cast to bool), as nothing
  // of it is computed in that precision: it runs as written.
  std::vector<Precision> substitutes;
  const auto listed = policy_.precision_substitutes.find(requested);
  if (rejection->reason == ReasonCode::kPrecisionNotAllowed &&
      listed != policy_.precision_substitutes.end()) {
    substitutes = listed->second;
  } else if (rejection->reason == ReasonCode::kDtypeUnsupported && requested != Precision::kFp32) {
    substitutes = {Precision::kFp32};
  }
  options.rejections.push_back(std::move(*rejection));
  for (Precision substitute : substitutes) {
    if (!options.asked.emplace(device, substitute).second) continue;
    std::optional<Rejection> again = check(device, node, substitute);
    if (!again) {
      options.candidates.push_back({device, substitute, choice_index, true, requested});
      return;
    }
    options.rejections.push_back(std::move(*again));
  }
}

// `options` holds two candidates on `device` (the newest last): the one predicted slower for
// `node` goes. Against fp32, a lower precision has to be predicted kLowerPrecisionGain faster to
// stay: a smaller gain is inside the calibration's noise and costs accuracy for nothing (on the
// H200, whose fp16 is storage only, SqueezeNet's fp16 Convs were predicted 1-3% faster and the
// model measured 5% slower than in fp32).
void Scheduler::keep_faster_precision(NodeId node, int device, NodeOptions& options) const {
  constexpr double kLowerPrecisionGain = 0.05;
  const DeviceProfile& profile = target_.devices[device];
  const auto earlier = std::find_if(options.candidates.begin(), options.candidates.end() - 1,
                                    [&](const Candidate& c) { return c.device == device; });
  // fp32's predicted time less the gain a lower precision must beat.
  const auto weighed_ms = [&](Precision precision) {
    const double ms = cost_.node_ms(graph_, node, profile, precision);
    return precision == Precision::kFp32 ? ms * (1 - kLowerPrecisionGain) : ms;
  };
  if (weighed_ms(options.candidates.back().precision) < weighed_ms(earlier->precision)) {
    options.candidates.erase(earlier);
  } else {
    options.candidates.pop_back();
  }
}

NodeOptions Scheduler::options_for(NodeId node, bool all_choices) {
  const OpChoices& op = choices_for(graph_.node(node).op_type);
  NodeOptions options;
  std::vector<bool> taken(target_.devices.size(), false);
  for (size_t c = 0; c < op.choices.size(); ++c) {
    const ResolvedChoice& rc = op.choices[c];
    const size_t rejections_before = options.rejections.size();
    if (rc.devices.empty()) options.rejections.push_back(absent(node, rc));
    for (int d : rc.devices) {
      // One precision per device: its first supported choice or, on a calibrated device under
      // the latency objective, the one measured faster for this node (fp16 that a device only
      // stores can be slower than fp32).
      if (taken[d] &&
          (policy_.objective != Objective::kLatency || target_.devices[d].curves.empty())) {
        continue;
      }
      const size_t before = options.candidates.size();
      try_device(node, c, rc.choice.precision, d, options);
      if (options.candidates.size() == before) continue;
      if (taken[d]) keep_faster_precision(node, d, options);
      taken[d] = true;
    }
    if (c == 0 && options.candidates.empty() && options.rejections.size() > rejections_before) {
      options.first_choice_rejection = options.rejections[rejections_before];
    }
    if (policy_.objective == Objective::kStrict && !all_choices && !options.candidates.empty()) {
      break;
    }
  }
  return options;
}

// Forced split: the node at `position` in execution order wants default choice
// (position / K) mod n. That choice is asked first (on the first device of its selector that
// takes the node), then the other default choices in list order, then the implicit CPU fp32; the
// first that takes the node is its only candidate. Cost plays no part.
NodeOptions Scheduler::split_options(NodeId node, size_t position, SplitPick& pick) {
  if (!split_choices_) split_choices_ = resolve(policy_.default_choices);
  const OpChoices& split = *split_choices_;
  const auto every = static_cast<size_t>(policy_.split_every);
  pick.slot = split.listed > 0 ? position / every % split.listed : split.choices.size();
  std::vector<size_t> asking;
  if (pick.slot < split.choices.size()) asking.push_back(pick.slot);
  for (size_t c = 0; c < split.choices.size(); ++c) {
    if (c != pick.slot) asking.push_back(c);
  }
  NodeOptions options;
  for (size_t c : asking) {
    const ResolvedChoice& rc = split.choices[c];
    const size_t rejections_before = options.rejections.size();
    if (rc.devices.empty()) options.rejections.push_back(absent(node, rc));
    for (int d : rc.devices) {
      try_device(node, c, rc.choice.precision, d, options);
      if (!options.candidates.empty()) return options;
    }
    if (c == pick.slot && options.rejections.size() > rejections_before) {
      pick.slot_rejection = options.rejections[rejections_before];
    }
  }
  return options;  // no candidate: schedule() refuses the node
}

// The one-line error naming the offenders (node_refusal.h).
Status Scheduler::refuse(const std::vector<NodeId>& offenders,
                         const std::vector<NodeOptions>& options) const {
  const std::string opening = policy_.fallback == FallbackMode::kError
                                  ? "policy " + policy_.name + " forbids fallback: "
                                  : "no device of target " + target_.name + " can run ";
  return planner::refuse_nodes(
      graph_, opening, offenders,
      [&](NodeId n) -> const std::vector<Rejection>& { return options[n].rejections; });
}

// How much faster a plan across devices must be predicted than the best single-device plan.
constexpr double kSplitMargin = 0.1;

int Scheduler::host_device() const {
  // Graph inputs and outputs live in host memory; a target without a CPU (--devices gpu) keeps
  // them on its first device.
  for (size_t d = 0; d < target_.devices.size(); ++d) {
    if (target_.devices[d].api == DeviceApi::kHost) return static_cast<int>(d);
  }
  return 0;
}

planner::PlacementProblem Scheduler::problem(const std::vector<NodeOptions>& options,
                                             const std::vector<NodeId>& order,
                                             std::vector<ValueId>& graph_value_of) const {
  planner::PlacementProblem problem;
  const int devices = static_cast<int>(target_.devices.size());
  problem.device_count = devices;
  problem.host_device = host_device();
  problem.node_ms.assign(graph_.nodes().size(), std::vector<double>(devices, planner::kNotAllowed));
  for (size_t n = 0; n < graph_.nodes().size(); ++n) {
    for (const Candidate& c : options[n].candidates) {
      const DeviceProfile& device = target_.devices[c.device];
      problem.node_ms[n][c.device] =
          cost_.node_ms(graph_, static_cast<NodeId>(n), device, c.precision) +
          cost_.node_compile_ms(device);
    }
  }
  // Nodes a backend runs without a step of their own (folded, views, fused into their producer)
  // cost nothing there.
  // A step that runs as another class (a fused normalization chain on the CPU) costs that; one
  // that runs a share of the node's launches (a Concat copying some inputs) that share.
  std::vector<StepHints> hints(devices);
  for (int d = 0; d < devices; ++d) {
    hints[d] = cost_.device(target_.devices[d]).step_hints(graph_);
  }
  for (size_t n = 0; n < graph_.nodes().size(); ++n) {
    const auto node = static_cast<NodeId>(n);
    for (int d = 0; d < devices; ++d) {
      double& ms = problem.node_ms[n][d];
      if (ms == planner::kNotAllowed) continue;
      const DeviceProfile& device = target_.devices[d];
      const auto as_class = [&](CostClass as) {
        const Candidate& c =
            *std::find_if(options[n].candidates.begin(), options[n].candidates.end(),
                          [&](const Candidate& c) { return c.device == d; });
        return cost_.node_ms(graph_, node, device, c.precision, as) + cost_.node_compile_ms(device);
      };
      const StepHints& hint = hints[d];
      if (!hint.free.empty() && hint.free[n]) {
        // A fused transcendental function is still computed on every element: what it adds to
        // its producer's step where calibration measured that, else its own time.
        if (!planner::computes_transcendental(graph_.node(node).op_type)) {
          ms = 0;
        } else if (planner::find_curve(device, CostClass::kEpilogue, Precision::kFp32) != nullptr) {
          ms = as_class(CostClass::kEpilogue);
        }
      } else if (n < hint.as_class.size() && hint.as_class[n]) {
        ms = as_class(*hint.as_class[n]);
      } else if (n < hint.launch_share.size() && hint.launch_share[n] < 1) {
        const double compile_ms = cost_.node_compile_ms(device);
        ms = (ms - compile_ms) * hint.launch_share[n] + compile_ms;
      }
    }
  }
  const std::set<ValueId> outputs(graph_.outputs().begin(), graph_.outputs().end());
  const std::set<ValueId> inputs(graph_.inputs().begin(), graph_.inputs().end());
  for (size_t v = 0; v < graph_.values().size(); ++v) {
    const Value& value = graph_.values()[v];
    const auto id = static_cast<ValueId>(v);
    // Weights are uploaded with the compiled partition, not moved per run.
    if (value.is_constant()) continue;
    if (value.producer == kNoNode && inputs.count(id) == 0) continue;
    const bool graph_output = outputs.count(id) != 0;
    if (value.consumers.empty() && !graph_output) continue;
    problem.values.push_back({value.producer,
                              std::vector<int>(value.consumers.begin(), value.consumers.end()),
                              value.byte_size(), graph_output});
    graph_value_of.push_back(id);
  }
  // The cost model's transfer time is affine in bytes: recover latency and bandwidth per link.
  constexpr int64_t kProbeBytes = int64_t{1} << 30;
  problem.links.assign(devices, std::vector<planner::LinkCost>(devices));
  for (int a = 0; a < devices; ++a) {
    problem.partition_overhead_ms.push_back(cost_.partition_overhead_ms(target_.devices[a]));
    for (int b = 0; b < devices; ++b) {
      if (a == b) continue;
      const DeviceProfile& from = target_.devices[a];
      const DeviceProfile& to = target_.devices[b];
      const double latency = cost_.transfer_ms(0, from, to);
      const double per_byte_ms = (cost_.transfer_ms(kProbeBytes, from, to) - latency) / kProbeBytes;
      problem.links[a][b] = {latency, per_byte_ms > 0 ? 1.0 / (per_byte_ms * 1e6) : 0.0};
    }
  }
  problem.order.assign(order.begin(), order.end());
  return problem;
}

void Scheduler::place_node(NodeId node, const NodeOptions& options, int device,
                           const planner::PlacementProblem& problem, Plan& plan) {
  const Node& n = graph_.node(node);
  const OpChoices& op = choices_for(n.op_type);
  const Candidate& chosen = *std::find_if(options.candidates.begin(), options.candidates.end(),
                                          [&](const Candidate& c) { return c.device == device; });
  const Candidate& preferred = options.candidates.front();
  const DeviceProfile& profile = target_.devices[device];
  NodePlacement& placement = plan.nodes[node];
  placement.node = node;
  placement.device = profile.id;
  placement.precision = chosen.precision;
  // The run alone: the plan's objective also carries the amortised compile.
  placement.predicted_ms =
      std::max(0.0, problem.node_ms[node][device] - cost_.node_compile_ms(profile));
  auto name = [&](const Candidate& c) {
    return target_.devices[c.device].id + "/" + precision_name(c.precision);
  };
  if (chosen.substituted) {
    placement.reason = PlacementReason::kSubstituted;
    const bool float_outputs = std::any_of(n.outputs.begin(), n.outputs.end(), [&](ValueId v) {
      return v != kNoValue && is_floating(graph_.value(v).dtype);
    });
    placement.detail = std::string(precision_name(chosen.requested)) + " requested; " + profile.id +
                       (float_outputs ? " computes " + std::string(precision_name(chosen.precision))
                                      : " runs it as written (no float outputs)");
  } else if (chosen.choice == 0 && op.cpu_by_policy) {
    placement.reason = PlacementReason::kPolicy;
    placement.detail = op.listed == 0
                           ? "policy " + policy_.name + " lists no device for " + n.op_type
                           : "policy " + policy_.name + " runs " +
                                 op_class_name(op_class_of(n.op_type)) + " ops on the CPU";
  } else if (chosen.choice == 0) {
    placement.reason = PlacementReason::kFirstChoice;
  } else if (preferred.choice < chosen.choice) {
    const double preferred_ms = problem.node_ms[node][preferred.device];
    placement.reason = PlacementReason::kCost;
    placement.detail = name(preferred) + " " + format_ms(preferred_ms) +
                       (preferred_ms > placement.predicted_ms ? " > " : " < ") + name(chosen) +
                       " " + format_ms(placement.predicted_ms);
    if (preferred_ms <= placement.predicted_ms) {
      placement.detail += ", outweighed by transfers and partition overhead";
    }
  } else {
    placement.reason = PlacementReason::kFallback;
    if (options.first_choice_rejection)
      placement.detail = describe(*options.first_choice_rejection);
  }
  if (options.first_choice_rejection && op.listed > 0) {
    const Rejection& first = *options.first_choice_rejection;
    plan.fallbacks.push_back({node, op.choices.front().choice, profile.id, chosen.precision,
                              first.reason, first.detail});
  }
}

// The forced split's reason, over place_node's: the slot it wanted, and why not when it went
// elsewhere (a kFallback with a Fallback record, so the fallback report shows the rejection).
void Scheduler::place_split_node(NodeId node, const SplitPick& pick, Plan& plan) const {
  NodePlacement& placement = plan.nodes[node];
  std::string slots;
  for (const Choice& choice : policy_.default_choices) {
    slots += (slots.empty() ? "" : ", ") + choice.device;
  }
  const std::string split = "split every " + std::to_string(policy_.split_every);
  if (pick.slot >= policy_.default_choices.size()) {
    placement.reason = PlacementReason::kPolicy;
    placement.detail = split + ": policy " + policy_.name + " lists no default choice";
    return;
  }
  const Choice& wanted = policy_.default_choices[pick.slot];
  const std::string slot = split + ": slot " + std::to_string(pick.slot) + " of " + slots;
  if (!pick.slot_rejection) {
    placement.reason = PlacementReason::kPolicy;
    placement.detail = slot;
    if (placement.precision != wanted.precision) {
      placement.detail += std::string("; ") + precision_name(wanted.precision) + " requested, " +
                          placement.device + " computes " + precision_name(placement.precision);
    }
    return;
  }
  const Rejection& rejection = *pick.slot_rejection;
  placement.reason = PlacementReason::kFallback;
  placement.detail = slot + " (" + choice_name(wanted) + "): " + describe(rejection);
  plan.fallbacks.push_back(
      {node, wanted, placement.device, placement.precision, rejection.reason, rejection.detail});
}

void Scheduler::add_transfers(const planner::PlacementProblem& problem,
                              const std::vector<ValueId>& graph_value_of,
                              const std::vector<int>& device_of, const planner::Grouping& grouping,
                              Plan& plan) const {
  for (size_t v = 0; v < problem.values.size(); ++v) {
    const auto& value = problem.values[v];
    const int from = value.producer < 0 ? problem.host_device : device_of[value.producer];
    const int from_partition = value.producer < 0 ? -1 : grouping.partition_of[value.producer];
    // Destination device -> the first partition there that reads the value (-1: the host
    // reads a graph output after the run).
    std::map<int, int> first_reader;
    for (int consumer : value.consumers) {
      const int d = device_of[consumer];
      if (d == from) continue;
      const int p = grouping.partition_of[consumer];
      auto [it, inserted] = first_reader.try_emplace(d, p);
      if (!inserted) it->second = std::min(it->second, p);
    }
    if (value.graph_output && from != problem.host_device) {
      first_reader.try_emplace(problem.host_device, -1);
    }
    for (const auto& [to, to_partition] : first_reader) {
      plan.transfers.push_back({graph_value_of[v], from_partition, to_partition,
                                target_.devices[from].id, target_.devices[to].id, value.bytes,
                                problem.links[from][to].ms(value.bytes)});
    }
  }
}

Result<Plan> Scheduler::run() {
  if (target_.devices.empty()) {
    return invalid_argument("target " + target_.name + " has no devices");
  }
  HSCHED_ASSIGN_OR_RETURN(std::vector<NodeId> order, graph_.topological_order());
  for (const Rejection& rejection : late_rejections_) {
    for (size_t d = 0; d < target_.devices.size(); ++d) {
      if (target_.devices[d].id == rejection.device) {
        late_by_device_node_.emplace(std::make_pair(static_cast<int>(d), rejection.node),
                                     rejection);
      }
    }
  }
  Plan plan;
  plan.model = graph_.name;
  plan.target = target_;
  plan.policy = policy_;

  const bool split = policy_.split_every > 0;
  std::vector<size_t> position(graph_.nodes().size());
  for (size_t i = 0; i < order.size(); ++i) position[order[i]] = i;
  std::vector<SplitPick> picks(split ? graph_.nodes().size() : 0);
  std::vector<NodeOptions> options;
  std::vector<NodeId> offenders;
  for (size_t n = 0; n < graph_.nodes().size(); ++n) {
    const auto node = static_cast<NodeId>(n);
    options.push_back(split ? split_options(node, position[n], picks[n]) : options_for(node));
    if (options.back().candidates.empty()) offenders.push_back(static_cast<NodeId>(n));
    for (const Rejection& r : options.back().rejections) plan.rejections.push_back(r);
  }
  if (!offenders.empty()) return refuse(offenders, options);

  std::vector<ValueId> graph_value_of;
  const planner::PlacementProblem problem = this->problem(options, order, graph_value_of);
  planner::Assignment assignment;
  if (split) {
    for (const NodeOptions& node : options) {
      assignment.device_of.push_back(node.candidates.front().device);
    }
    assignment.cost_ms = planner::plan_cost(problem, assignment.device_of);
  } else {
    assignment = planner::partition(problem);
  }
  Plan chosen = build_plan(plan, problem, options, picks, graph_value_of, assignment);
  if (!split && policy_.objective == Objective::kStrict) {
    // What each device would take alone among the policy's choices (not only the first ones the
    // strict plan takes), so the report can say when the literal rule costs time.
    std::vector<NodeOptions> all;
    for (size_t n = 0; n < graph_.nodes().size(); ++n) {
      all.push_back(options_for(static_cast<NodeId>(n), true));
    }
    std::vector<ValueId> unused;
    const planner::PlacementProblem every = this->problem(all, order, unused);
    chosen.single_device_ms.clear();
    for (int d = 0; d < every.device_count; ++d) {
      const double ms = planner::single_device(every, d).cost_ms;
      if (ms != planner::kNotAllowed) chosen.single_device_ms[target_.devices[d].id] = ms;
    }
  }
  // A plan that crosses devices must be predicted clearly faster than the best plan on one
  // device (with the host taking what that device cannot) that has no more partitions:
  // boundaries cost more than the model sees (waking the other device's threads, layout changes,
  // copies it does not overlap), and a gain within the noise of a run is no gain.
  const bool crosses = std::any_of(assignment.device_of.begin(), assignment.device_of.end(),
                                   [&](int d) { return d != assignment.device_of.front(); });
  if (!split && policy_.objective == Objective::kLatency && crosses) {
    planner::Assignment single;
    single.cost_ms = planner::kNotAllowed;
    for (int d = 0; d < problem.device_count; ++d) {
      planner::Assignment candidate = planner::device_or_host(problem, d);
      if (candidate.cost_ms < single.cost_ms &&
          planner::group_partitions(problem, candidate.device_of).partitions.size() <=
              chosen.partitions.size()) {
        single = std::move(candidate);
      }
    }
    if (single.cost_ms != planner::kNotAllowed) {
      Plan alone = build_plan(plan, problem, options, picks, graph_value_of, single);
      if (chosen.predicted_run_ms > (1 - kSplitMargin) * alone.predicted_run_ms) {
        chosen = std::move(alone);
      }
    }
  }
  return chosen;
}

Plan Scheduler::build_plan(Plan plan, const planner::PlacementProblem& problem,
                           const std::vector<NodeOptions>& options,
                           const std::vector<SplitPick>& picks,
                           const std::vector<ValueId>& graph_value_of,
                           const planner::Assignment& assignment) {
  const bool split = policy_.split_every > 0;
  const planner::Grouping grouping = planner::group_partitions(problem, assignment.device_of);

  plan.nodes.resize(graph_.nodes().size());
  for (size_t n = 0; n < graph_.nodes().size(); ++n) {
    place_node(static_cast<NodeId>(n), options[n], assignment.device_of[n], problem, plan);
    if (split) place_split_node(static_cast<NodeId>(n), picks[n], plan);
    plan.nodes[n].partition = grouping.partition_of[n];
  }
  planner::unify_partition_precisions(graph_, cost_, plan);
  planner::charge_fusions_across_partitions(graph_, cost_, plan);
  for (size_t p = 0; p < grouping.partitions.size(); ++p) {
    const DeviceProfile& device = target_.devices[grouping.partition_device[p]];
    Partition partition;
    partition.id = static_cast<int>(p);
    partition.device = device.id;
    for (int n : grouping.partitions[p]) {
      partition.nodes.push_back(n);
      partition.compute_ms += plan.nodes[n].predicted_ms;
    }
    partition.compile_ms = device.compile_ms_per_partition +
                           device.compile_ms_per_node * static_cast<double>(partition.nodes.size());
    plan.partitions.push_back(std::move(partition));
  }
  add_transfers(problem, graph_value_of, assignment.device_of, grouping, plan);
  planner::add_run_times(graph_, cost_, problem.host_device, plan);
  plan.predicted_ms = assignment.cost_ms;
  for (int d = 0; d < problem.device_count; ++d) {
    const double ms = planner::single_device(problem, d).cost_ms;
    if (ms != planner::kNotAllowed) plan.single_device_ms[target_.devices[d].id] = ms;
  }
  return plan;
}

}  // namespace

Result<Plan> schedule(const Graph& graph, const Target& target, const Policy& policy) {
  return schedule(graph, target, policy, {});
}

Result<Plan> schedule(const Graph& graph, const Target& target, const Policy& policy,
                      const std::vector<Rejection>& late_rejections) {
  // A device holding a limited number of partitions (max_partitions): past it, the nodes of its
  // smallest partitions are refused that device (device_limit) and the plan is made again. Each
  // round refuses the device for some nodes, so the loop ends.
  std::vector<Rejection> late = late_rejections;
  while (true) {
    HSCHED_ASSIGN_OR_RETURN(Plan plan, Scheduler(graph, target, policy, late).run());
    const std::vector<Rejection> over = planner::device_limit_rejections(plan, target);
    if (over.empty()) return plan;
    late.insert(late.end(), over.begin(), over.end());
  }
}

Result<Plan> schedule(const Graph& graph) {
  return schedule(graph, discover_target(), default_policy());
}

Result<Plan> schedule(const Model& model) { return schedule(model.graph()); }

Result<Plan> schedule(const Model& model, const Target& target, const Policy& policy) {
  return schedule(model.graph(), target, policy, {});
}

Result<Plan> schedule(const Model& model, const Target& target, const Policy& policy,
                      const std::vector<Rejection>& late_rejections) {
  return schedule(model.graph(), target, policy, late_rejections);
}

}  // namespace hsched
