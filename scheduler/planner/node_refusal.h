// The one-line error for nodes no allowed device takes (a policy that forbids fallback, or a
// target none of whose devices runs them): however many nodes, the offenders grouped by op and by
// what each device said, with counts, up to three names and one detail per group and at most
// eight groups; `hsched report` lists every node.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "hsched/plan.h"
#include "hsched/status.h"

namespace hsched::planner {

// InvalidArgument "<opening><N> node(s): <groups>"; `rejections_of` gives each offender's
// rejections (empty: the policy lists no device for it).
Status refuse_nodes(const Graph& graph, const std::string& opening,
                    const std::vector<NodeId>& offenders,
                    const std::function<const std::vector<Rejection>&(NodeId)>& rejections_of);

}  // namespace hsched::planner
