// Device limits (docs/planner.md#device-limits): a device whose profile has max_partitions (Intel's
// NPU driver holds 255 graphs per context) gets no more partitions in one plan.
#pragma once

#include <vector>

#include "hsched/plan.h"

namespace hsched::planner {

// For each device of `target` with more partitions in `plan` than its max_partitions: the nodes
// of its smallest partitions (by predicted compute) past the limit, refused that device with
// reason device_limit. Empty when every device is within its limit.
std::vector<Rejection> device_limit_rejections(const Plan& plan, const Target& target);

}  // namespace hsched::planner
