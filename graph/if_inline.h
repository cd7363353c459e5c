// ONNX `If`. One whose condition is known at load time is replaced by its chosen branch. One
// whose condition is known only at run time is predicated: both branches are computed and a
// Where per output selects, which needs both branches to give the same dtype and static shape.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <google/protobuf/repeated_field.h>

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

using Renames = std::unordered_map<std::string, std::string>;
using NodeList = google::protobuf::RepeatedPtrField<onnx::NodeProto>;

// A name under `base` that clashes with nothing in `taken`; added to it.
std::string fresh_name(const std::string& base, NameSet& taken);

// Appends a node of one output to `nodes` and returns it (for attributes).
onnx::NodeProto& add_node(NodeList& nodes, const std::string& op, const std::string& name,
                          const std::vector<std::string>& inputs, const std::string& output);

// Renames every occurrence of a key of `renamed` in `graph` and, recursively, in the subgraphs
// of its nodes (which read the branch's values by name). An inner graph that defines such a name
// again (an initializer may shadow an outer name) has its definition and its uses renamed
// alike, so it still shadows.
void rename_in_graph(onnx::GraphProto& graph, const Renames& renamed);

// A prefix ending in '/' under which none of `names` clashes with a name in `taken`.
std::string unique_prefix(const std::string& base, const std::vector<std::string>& names,
                          const NameSet& taken);

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

// One output of a predicated If: the values of its two branches (renamed) that Where selects.
struct PredicatedOutput {
  std::string label;  // "node 'if1' (If)"
  int output = 0;
  std::string then_value, else_value;
};

// Replaces each If left in `graph` (its condition did not fold) by the nodes of both its
// branches, inlined as at inline_constant_ifs(), then Reshape(condition, []) and one
// Where(condition, then, else) per output. A branch not taken therefore still runs: its cost is
// paid and a run-time error in it (an index out of range) fails the request.
Result<std::vector<PredicatedOutput>> predicate_ifs(onnx::GraphProto& graph);

// After shape inference: InvalidArgument naming the If when the two branches of an output have
// different dtypes or static shapes (Where would broadcast them; If gives one or the other).
Status check_predicated_ifs(const onnx::GraphProto& graph,
                            const std::vector<PredicatedOutput>& predicated);

// Takes the If, Loop and Scan nodes out of `graph` for the object's lifetime and puts them back,
// in place, when it ends. libonnx's shape inference runs without them: a branch or body matters
// only once inlined or unrolled, and then its nodes are inferred as part of the main graph, under
// the bounds hsched checks there first (shape_fold.cpp). Their outputs stay without inferred
// types meanwhile.
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
