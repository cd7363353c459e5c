// schedule() on hsched's graph IR, for hsched's own code and tests; the public calls
// (include/hsched/schedule.h) take a Model and forward here.
#pragma once

#include <vector>

#include "graph/graph.h"
#include "hsched/schedule.h"

namespace hsched {

Result<Plan> schedule(const Graph& graph);
Result<Plan> schedule(const Graph& graph, const Target& target, const Policy& policy);
Result<Plan> schedule(const Graph& graph, const Target& target, const Policy& policy,
                      const std::vector<Rejection>& late_rejections);

}  // namespace hsched
