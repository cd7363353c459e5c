// The library entry point: schedule(model) -> Plan.
#pragma once

#include <vector>

#include "hsched/device.h"
#include "hsched/model.h"
#include "hsched/plan.h"
#include "hsched/policy.h"
#include "hsched/status.h"

namespace hsched {

// Plans for the devices found on this machine with the default policy.
Result<Plan> schedule(const Model& model);

// Plans for an explicit target and policy. Fails (InvalidArgument) when the policy's fallback
// mode is `error` and any node falls back, with counts per op and reason; never fails otherwise,
// since the CPU takes every node the other devices reject.
Result<Plan> schedule(const Model& model, const Target& target, const Policy& policy);

// The same, with failures found after an earlier plan (compile_timeout, compile_failed,
// verification_failed...): each Rejection's (node, device) is refused with that record, which the
// plan's rejections keep; one for accuracy_budget refuses only its (node, device, precision). The
// executor re-plans this way; a rejection is final for the run.
Result<Plan> schedule(const Model& model, const Target& target, const Policy& policy,
                      const std::vector<Rejection>& late_rejections);

}  // namespace hsched
