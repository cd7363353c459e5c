// device_limit_rejections (device_limit.h).
#include "scheduler/planner/device_limit.h"

#include <algorithm>
#include <string>

namespace hsched::planner {

std::vector<Rejection> device_limit_rejections(const Plan& plan, const Target& target) {
  std::vector<Rejection> over;
  for (const DeviceProfile& device : target.devices) {
    if (device.max_partitions <= 0) continue;
    std::vector<const Partition*> on;
    for (const Partition& partition : plan.partitions) {
      if (partition.device == device.id) on.push_back(&partition);
    }
    const auto limit = static_cast<size_t>(device.max_partitions);
    if (on.size() <= limit) continue;
    std::stable_sort(on.begin(), on.end(), [](const Partition* a, const Partition* b) {
      return a->compute_ms < b->compute_ms;
    });
    const std::string detail = device.id + " holds at most " + std::to_string(limit) +
                               " partitions; the plan had " + std::to_string(on.size());
    for (size_t k = 0; k < on.size() - limit; ++k) {
      for (NodeId node : on[k]->nodes) {
        over.push_back(
            {node, device.id, plan.nodes[node].precision, ReasonCode::kDeviceLimit, detail});
      }
    }
  }
  return over;
}

}  // namespace hsched::planner
