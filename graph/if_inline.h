// ONNX `If` whose condition is known at load time: the chosen branch replaces the node. hsched
// runs no control flow, so an If whose condition never folds is refused at import.
#pragma once

#include <memory>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "graph/tensor_proto.h"
#include "hsched/status.h"

namespace onnx {
class GraphProto;
class NodeProto;
}  // namespace onnx

namespace hsched {

using NameSet = std::unordered_set<std::string>;

// The If of the default ONNX domain: the only op whose subgraphs hsched accepts.
bool is_if_node(const onnx::NodeProto& node);

// Adds to `names` every name the subgraphs of `node` read from outside themselves (recursively):
// the node's implicit inputs, which must be computed before it runs.
void add_outer_reads(const onnx::NodeProto& node, NameSet& names);

// Subgraphs deeper than this are not walked by add_all_names (validation refuses them later).
inline constexpr int kMaxNameWalkDepth = 16;

// Adds to `names` every name `graph` uses, its subgraphs included down to kMaxNameWalkDepth
// (`depth`: the graph's own depth): what a new name must not clash with.
void add_all_names(const onnx::GraphProto& graph, NameSet& names, int depth = 0);

// Replaces each If of `graph` (a main graph that passed validate_and_sort()) whose condition is
// an initializer by its chosen branch: the branch's nodes in place of the If (so the order stays
// topological), every name the branch defines renamed under a prefix chosen so that it clashes with
// no other name of the model, its initializers moved into `graph`, and one Identity per If output.
// Returns the number of Ifs replaced. A condition that is not one bool is an InvalidArgument naming
// the node. Constant nodes of the branch stay nodes: the caller turns them into initializers.
Result<int> inline_constant_ifs(onnx::GraphProto& graph, ExternalData& external);

// InvalidArgument naming the first If still in `graph`, whose condition therefore did not fold.
Status refuse_remaining_ifs(const onnx::GraphProto& graph);

// Takes the If nodes out of `graph` for the object's lifetime and puts them back, in place, when
// it ends. libonnx's shape inference runs without them: a branch matters only once it is chosen,
// and then its nodes are inferred as part of the main graph, under the bounds hsched checks there
// first (shape_fold.cpp). The If outputs stay without inferred types meanwhile.
class IfNodesSetAside {
 public:
  explicit IfNodesSetAside(onnx::GraphProto& graph);
  ~IfNodesSetAside();
  IfNodesSetAside(const IfNodesSetAside&) = delete;
  IfNodesSetAside& operator=(const IfNodesSetAside&) = delete;

 private:
  onnx::GraphProto& graph_;
  // Each removed node with its index in the full node list.
  std::vector<std::pair<int, std::unique_ptr<onnx::NodeProto>>> removed_;
};

}  // namespace hsched
