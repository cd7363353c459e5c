// A cheap bound on the rank of every value, computed by hsched before libonnx's shape inference
// runs. libonnx builds every inferred shape whatever its rank: a chain of Unsqueezes adding 32
// axes each, or of Gathers whose indices are their own data (the rank doubles per node), made a
// model of a few KB take seconds to hours and GBs of memory before to_graph() could refuse the
// first oversized shape.
#pragma once

#include "hsched/status.h"

namespace onnx {
class GraphProto;
}  // namespace onnx

namespace hsched {

// No bound computed here may pass this. It sits well above kMaxRank because the bounds are loose
// (a Squeeze is assumed to keep its rank); a real model stays far below it.
inline constexpr int kMaxRankBound = 64;

// Walks the nodes of `graph` (a main graph in topological order, If nodes set aside) and bounds
// the rank of each output from the ranks of its inputs, the lengths of its list attributes and
// its shape inputs held by initializers, as libonnx would infer it. An InvalidArgument names the
// first node whose output could pass kMaxRankBound. Values whose rank libonnx cannot know either
// (an Unsqueeze whose axes are computed) are left unbounded, as are the outputs of ops outside
// the default domain.
Status check_rank_bounds(const onnx::GraphProto& graph);

}  // namespace hsched
