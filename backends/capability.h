// What every backend answers the scheduler: can this device run this node in this precision?
// `std::nullopt` is support; otherwise a Rejection (as data: the report prints it). Backends
// never see each other; the scheduler holds one Capability per device of the target.
#pragma once

#include <memory>
#include <optional>

#include "graph/graph.h"
#include "hsched/device.h"
#include "hsched/plan.h"

namespace hsched {

class Capability {
 public:
  virtual ~Capability() = default;
  virtual const DeviceProfile& device() const = 0;
  // Contract: pure and deterministic (the same answer for the same node and precision); cheap
  // enough to ask for every node of a 10,000-node graph; thread-compatible.
  virtual std::optional<Rejection> check(const Graph& graph, NodeId node,
                                         Precision precision) const = 0;
};

// Answers from a device profile alone (a device we plan for but do not drive here, or one whose
// backend adds no rules of its own): op listed in the profile, precision computed by the device,
// float dtypes for reduced precisions, static shapes of bounded rank, weights within memory.
std::unique_ptr<Capability> make_profile_capability(DeviceProfile device);

}  // namespace hsched
