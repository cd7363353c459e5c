#include "graph/onnx_validate.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include <onnx/common/constants.h>
#include <onnx/common/version.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include "graph/function_inline.h"
#include "graph/graph.h"
#include "graph/if_inline.h"
#include "graph/loop_unroll.h"
#include "graph/microsoft_ops.h"
#include "graph/newer_opsets.h"
#include "graph/onnx_import.h"

namespace hsched {
namespace {

Status check_value_info(const onnx::ValueInfoProto& info, bool need_type) {
  const std::string label = "tensor '" + info.name() + "'";
  if (info.name().empty()) return invalid_argument("a graph input or output has no name");
  if (!info.has_type()) {
    if (need_type) return invalid_argument(label + " has no type");
    return Status::ok();
  }
  if (!info.type().has_tensor_type()) {
    return unimplemented(label +
                         " is not a tensor (sequences, maps and optionals are not "
                         "supported)");
  }
  const auto& type = info.type().tensor_type();
  if ((need_type || type.elem_type() != 0) && !dtype_from_onnx(type.elem_type())) {
    return invalid_argument(label + " has dtype " + std::string(onnx_dtype_name(type.elem_type())) +
                            ", which hsched does not support");
  }
  if (!type.has_shape()) return Status::ok();
  if (static_cast<size_t>(type.shape().dim_size()) > kMaxRank) {
    return invalid_argument(label + " has rank " + std::to_string(type.shape().dim_size()) +
                            ", more than the limit of " + std::to_string(kMaxRank));
  }
  std::vector<int64_t> known;
  for (const auto& dim : type.shape().dim()) {
    if (dim.has_dim_value()) known.push_back(dim.dim_value());
  }
  auto elements = checked_elements(known);
  if (!elements.is_ok()) return elements.status().with_context(label);
  return Status::ok();
}

bool holds_subgraph(const onnx::AttributeProto& attr) {
  using A = onnx::AttributeProto;
  return attr.type() == A::GRAPH || attr.type() == A::GRAPHS || attr.has_g() || attr.graphs_size();
}

// Attributes of ONNX operators that hold data, not one value per axis (or per direction,
// activation...): only these may be longer than kMaxAxisListLength.
bool holds_data(const onnx::NodeProto& node, const std::string& attr) {
  static const std::unordered_set<std::string> kDataAttributes{
      "Constant.value_ints",          "Constant.value_floats",
      "Constant.value_strings",       "Split.split",
      "StringNormalizer.stopwords",   "TfIdfVectorizer.weights",
      "TfIdfVectorizer.ngram_counts", "TfIdfVectorizer.ngram_indexes",
      "TfIdfVectorizer.pool_int64s",  "TfIdfVectorizer.pool_strings"};
  return kDataAttributes.count(node.op_type() + "." + attr) > 0;
}

// A non-graph attribute's payload: sizes bounded, tensors checked. The lists of an ONNX operator
// are bounded before libonnx sees them: its shape inference builds a shape as long as an
// Unsqueeze's axes (a million axes took seconds and most of a GB).
Status check_attribute(const onnx::NodeProto& node, const onnx::AttributeProto& attr,
                       const std::string& where, ExternalData& external) {
  const std::string label = where + ": attribute '" + attr.name() + "'";
  if (attr.ints_size() > kMaxAttributeValues || attr.floats_size() > kMaxAttributeValues ||
      attr.strings_size() > kMaxAttributeValues || attr.tensors_size() > 0 ||
      attr.sparse_tensors_size() > 0 || attr.has_sparse_tensor()) {
    return invalid_argument(label + " has an unsupported or oversized payload");
  }
  if (attr.has_ref_attr_name()) {
    return invalid_argument(label + " refers to the attribute '" + attr.ref_attr_name() +
                            "' of a function, but the node is not inside one");
  }
  const int values = std::max({attr.ints_size(), attr.floats_size(), attr.strings_size()});
  if (is_default_domain(node.domain()) && values > kMaxAxisListLength &&
      !holds_data(node, attr.name())) {
    return invalid_argument(label + " has " + std::to_string(values) + " values; " +
                            node.op_type() + " takes at most " +
                            std::to_string(kMaxAxisListLength) + " (tensors have rank " +
                            std::to_string(kMaxRank) + " at most)");
  }
  if (attr.has_t()) {
    Status status = check_tensor_data(attr.t(), &external);
    if (!status.is_ok()) return status.with_context(label);
  }
  return Status::ok();
}

// Arity and attribute types against the operator's schema, so that shape inference functions
// only ever see nodes of the form they were written for.
Status check_against_schema(const onnx::NodeProto& node, const std::string& where, int64_t opset) {
  const onnx::OpSchema* schema =
      onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(opset), "");
  if (schema == nullptr) {
    return invalid_argument(where + ": '" + node.op_type() + "' is not an ONNX operator in opset " +
                            std::to_string(opset));
  }
  const int inputs = node.input_size();
  const int outputs = node.output_size();
  if (inputs < schema->min_input() || inputs > schema->max_input()) {
    return invalid_argument(where + " has " + std::to_string(inputs) + " inputs; " +
                            node.op_type() + " takes " + std::to_string(schema->min_input()) +
                            " to " + std::to_string(schema->max_input()));
  }
  if (outputs < schema->min_output() || outputs > schema->max_output()) {
    return invalid_argument(where + " has " + std::to_string(outputs) + " outputs; " +
                            node.op_type() + " gives " + std::to_string(schema->min_output()) +
                            " to " + std::to_string(schema->max_output()));
  }
  // A required input may not be left out with "".
  for (int i = 0; i < inputs && i < static_cast<int>(schema->inputs().size()); ++i) {
    if (node.input(i).empty() &&
        schema->inputs()[static_cast<size_t>(i)].GetOption() == onnx::OpSchema::Single) {
      return invalid_argument(where + ": required input " + std::to_string(i) + " is empty");
    }
  }
  std::unordered_set<std::string> seen;
  for (const auto& attr : node.attribute()) {
    if (!seen.insert(attr.name()).second) {
      return invalid_argument(where + ": attribute '" + attr.name() + "' is given twice");
    }
    auto it = schema->attributes().find(attr.name());
    if (it == schema->attributes().end()) {
      return invalid_argument(where + ": '" + node.op_type() + "' has no attribute '" +
                              attr.name() + "'");
    }
    if (attr.type() != it->second.type) {
      return invalid_argument(where + ": attribute '" + attr.name() + "' has type " +
                              onnx::AttributeProto::AttributeType_Name(attr.type()) +
                              ", expected " +
                              onnx::AttributeProto::AttributeType_Name(it->second.type));
    }
  }
  for (const auto& [name, attr] : schema->attributes()) {
    if (attr.required && seen.count(name) == 0) {
      return invalid_argument(where + ": required attribute '" + name + "' is missing");
    }
  }
  return Status::ok();
}

// libonnx's shape inference divides by strides, dilations, kernel sizes and groups: refuse
// values it cannot take before it runs (found by the importer fuzzer: strides [1, 0]).
Status check_spatial_attributes(const onnx::NodeProto& node, const std::string& where) {
  static const std::unordered_set<std::string> kSpatialOps{
      "Conv",   "ConvTranspose", "ConvInteger", "QLinearConv", "MaxPool", "AveragePool",
      "LpPool", "MaxUnpool",     "MaxRoiPool",  "DeformConv",  "Col2Im"};
  if (kSpatialOps.count(node.op_type()) == 0) return Status::ok();
  for (const auto& attr : node.attribute()) {
    const std::string& name = attr.name();
    const bool positive = name == "strides" || name == "dilations" || name == "kernel_shape";
    const bool non_negative = name == "pads" || name == "output_padding";
    for (int64_t v : attr.ints()) {
      if ((positive && (v < 1 || v > kMaxDim)) || (non_negative && (v < 0 || v > kMaxDim))) {
        return invalid_argument(where + ": attribute '" + name + "' has the value " +
                                std::to_string(v) + ", out of range");
      }
    }
    if (name == "group" && (attr.i() < 1 || attr.i() > kMaxDim)) {
      return invalid_argument(where + ": attribute 'group' has the value " +
                              std::to_string(attr.i()) + ", out of range");
    }
  }
  return Status::ok();
}

Result<int64_t> default_opset(const onnx::ModelProto& model) {
  if (model.ir_version() < 3 || model.ir_version() > kNewestIrVersion) {
    return invalid_argument("IR version " + std::to_string(model.ir_version()) +
                            " is not supported (3 to " + std::to_string(kNewestIrVersion) + ")");
  }
  int64_t opset = -1;
  for (const auto& import : model.opset_import()) {
    if (is_default_domain(import.domain())) opset = import.version();
  }
  if (opset < 0) return invalid_argument("the model imports no opset of the default ONNX domain");
  if (opset < 1 || opset > kNewestOpset) {
    return invalid_argument("opset " + std::to_string(opset) + " is not supported (1 to " +
                            std::to_string(kNewestOpset) + ")");
  }
  return opset;
}

// How deep If branches may nest (the main graph is level 0); exporters nest one or two.
constexpr int kMaxSubgraphDepth = 4;

// The names one graph defines (initializers, inputs, node outputs) as values of a node/value
// structure used to sort its nodes, and the scope of the graph that encloses it: a branch may
// read any name of an enclosing graph.
struct Scope {
  const Scope* parent = nullptr;
  Graph structure;  // values without dtypes or shapes; nodes added by sort_nodes()
  std::unordered_map<std::string, ValueId> defined;

  bool visible(const std::string& name) const {
    for (const Scope* scope = this; scope != nullptr; scope = scope->parent) {
      if (scope->defined.count(name)) return true;
    }
    return false;
  }
  // Names are defined once per graph. A node output may not reuse a name of an enclosing graph
  // (ONNX's single assignment); an initializer may shadow one.
  Status define(const std::string& name, bool may_shadow) {
    if (defined.count(name) || (!may_shadow && parent != nullptr && parent->visible(name))) {
      return invalid_argument("tensor '" + name + "' is defined twice");
    }
    defined.emplace(name, structure.add_value(name, DType::kUndefined, Shape()));
    return Status::ok();
  }
};

struct Validation {
  int64_t opset = 0;
  ExternalData& external;
  int64_t nodes = 0;  // in every graph seen so far, branches included
};

Status build_scope(const onnx::GraphProto& graph, Scope& scope) {
  std::unordered_set<std::string> initializer_names;
  for (const auto& init : graph.initializer()) {
    HSCHED_RETURN_IF_ERROR(scope.define(init.name(), true));
    initializer_names.insert(init.name());
  }
  for (const auto& input : graph.input()) {
    // IR < 4 lists initializers among the inputs too.
    if (initializer_names.count(input.name()) == 0) {
      HSCHED_RETURN_IF_ERROR(scope.define(input.name(), false));
    }
  }
  for (int i = 0; i < graph.node_size(); ++i) {
    for (const auto& out : graph.node(i).output()) {
      if (out.empty()) continue;
      Status status = scope.define(out, false);
      if (!status.is_ok()) return status.with_context(node_description(graph.node(i), i));
    }
  }
  return Status::ok();
}

// Orders the nodes of `graph` topologically. An If's implicit inputs (what its branches read
// from this graph) count as inputs, so that they are computed before it.
Status sort_nodes(onnx::GraphProto& graph, Scope& scope) {
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto& proto = graph.node(i);
    Node node;
    node.name = proto.name();
    node.op_type = proto.op_type();
    std::vector<std::string> reads(proto.input().begin(), proto.input().end());
    NameSet implicit;
    add_outer_reads(proto, implicit);
    reads.insert(reads.end(), implicit.begin(), implicit.end());
    for (const auto& in : reads) {
      auto it = scope.defined.find(in);
      if (it != scope.defined.end()) {
        node.inputs.push_back(it->second);
      } else if (in.empty() || scope.visible(in)) {
        node.inputs.push_back(kNoValue);  // omitted, or computed by an enclosing graph
      } else {
        return invalid_argument(node_description(proto, i) + ": input '" + in +
                                "' is produced by no node, initializer or graph input");
      }
    }
    for (const auto& out : proto.output()) {
      node.outputs.push_back(out.empty() ? kNoValue : scope.defined.at(out));
    }
    scope.structure.add_node(std::move(node));
  }
  for (const auto& output : graph.output()) {
    if (!scope.visible(output.name())) {
      return invalid_argument("graph output '" + output.name() + "' is produced by nothing");
    }
  }
  HSCHED_ASSIGN_OR_RETURN(std::vector<NodeId> order, scope.structure.topological_order());
  google::protobuf::RepeatedPtrField<onnx::NodeProto> sorted;
  sorted.Reserve(graph.node_size());
  for (NodeId id : order) sorted.Add()->Swap(graph.mutable_node(id));
  graph.mutable_node()->Swap(&sorted);
  return Status::ok();
}

Status validate_graph(onnx::GraphProto& graph, Validation& validation, const Scope* parent,
                      int depth);

// A subgraph attribute: only the then_branch and else_branch of an If and the body of a Loop or
// of a Scan (opset 9 on) are accepted, validated like the main graph with the node's scope
// around them.
Status check_branch(onnx::NodeProto& node, onnx::AttributeProto& attr, const std::string& where,
                    Validation& validation, const Scope& scope, int depth) {
  const std::string label = where + ": attribute '" + attr.name() + "'";
  const bool one_graph = attr.type() == onnx::AttributeProto::GRAPH && attr.graphs_size() == 0;
  const bool branch =
      is_if_node(node) && (attr.name() == "then_branch" || attr.name() == "else_branch");
  const bool scan = is_scan_node(node) && attr.name() == "body";
  const bool body = (is_loop_node(node) && attr.name() == "body") || scan;
  if (!one_graph || (!branch && !body)) {
    return unimplemented(label + " holds a subgraph; hsched takes subgraphs only as the " +
                         "branches of an If and the body of a Loop or a Scan");
  }
  if (scan && validation.opset < 9) {
    return unimplemented(where + ": Scan before opset 9 (a batch axis and sequence_lens) is not "
                         "supported");
  }
  if (!attr.has_g()) return invalid_argument(label + " holds no graph");
  if (depth + 1 > kMaxSubgraphDepth) {
    return invalid_argument(label + ": subgraphs nest deeper than " +
                            std::to_string(kMaxSubgraphDepth) + " levels");
  }
  const onnx::GraphProto& g = attr.g();
  // If: no inputs, the If's outputs. Loop(M, cond, v...) -> (v..., scans...): body(iteration,
  // cond, v...) -> (cond, v..., scans...). Scan(states..., scanned...) -> (states..., scans...):
  // body(states..., elements...) -> (states..., scans...).
  const int carried = node.input_size() - 2;
  const int inputs = branch ? 0 : node.input_size();
  const int outputs = branch ? node.output_size() : (scan ? 0 : 1) + node.output_size();
  if (body && !scan && (carried < 0 || node.output_size() < carried)) {
    return invalid_argument(where + " has " + std::to_string(node.input_size()) + " inputs and " +
                            std::to_string(node.output_size()) +
                            " outputs; a Loop has 2 + N inputs and at least N outputs");
  }
  if (g.input_size() != inputs) {
    return invalid_argument(
        label + " declares " + std::to_string(g.input_size()) + " inputs; " +
        (branch ? "an If branch takes none" : "it takes " + std::to_string(inputs)));
  }
  if (g.output_size() != outputs) {
    return invalid_argument(label + " has " + std::to_string(g.output_size()) + " outputs; " +
                            (branch ? "the If has " : "it needs ") + std::to_string(outputs));
  }
  Status status = validate_graph(*attr.mutable_g(), validation, &scope, depth + 1);
  return status.is_ok() ? status : status.with_context(label);
}

// Validates `graph` (the main graph at depth 0, or an If branch inside `parent`), its branches
// recursively, then sorts its nodes.
Status validate_graph(onnx::GraphProto& graph, Validation& validation, const Scope* parent,
                      int depth) {
  validation.nodes += graph.node_size();
  if (validation.nodes > kMaxNodes) {
    return invalid_argument("the graph has " + std::to_string(validation.nodes) +
                            " nodes (If branches included), more than the limit of " +
                            std::to_string(kMaxNodes));
  }
  if (graph.sparse_initializer_size() > 0) {
    return unimplemented("sparse initializers are not supported");
  }
  for (const auto& input : graph.input()) HSCHED_RETURN_IF_ERROR(check_value_info(input, true));
  for (const auto& output : graph.output()) HSCHED_RETURN_IF_ERROR(check_value_info(output, true));
  for (const auto& info : graph.value_info()) HSCHED_RETURN_IF_ERROR(check_value_info(info, false));
  for (const auto& init : graph.initializer()) {
    if (init.name().empty()) return invalid_argument("an initializer has no name");
    HSCHED_RETURN_IF_ERROR(check_tensor_data(init, &validation.external));
  }
  Scope scope;
  scope.parent = parent;
  HSCHED_RETURN_IF_ERROR(build_scope(graph, scope));
  for (int i = 0; i < graph.node_size(); ++i) {
    onnx::NodeProto& node = *graph.mutable_node(i);
    const std::string where = node_description(node, i);
    if (node.op_type().empty()) return invalid_argument(where + " has no op type");
    for (auto& attr : *node.mutable_attribute()) {
      if (holds_subgraph(attr)) {
        HSCHED_RETURN_IF_ERROR(check_branch(node, attr, where, validation, scope, depth));
      } else {
        HSCHED_RETURN_IF_ERROR(check_attribute(node, attr, where, validation.external));
      }
    }
    if (is_default_domain(node.domain())) {
      HSCHED_RETURN_IF_ERROR(check_against_schema(node, where, validation.opset));
      HSCHED_RETURN_IF_ERROR(check_spatial_attributes(node, where));
    }
  }
  return sort_nodes(graph, scope);
}

}  // namespace

std::string node_description(const onnx::NodeProto& node, int index) {
  const std::string name =
      node.name().empty() ? "#" + std::to_string(index) : "'" + node.name() + "'";
  return "node " + name + " (" + node.op_type() + ")";
}

Result<int64_t> validate_and_sort(onnx::ModelProto& model, ExternalData& external) {
  HSCHED_ASSIGN_OR_RETURN(int64_t opset, default_opset(model));
  if (!model.has_graph()) return invalid_argument("the model has no graph");
  if (model.ir_version() > onnx::Version::IR_VERSION) HSCHED_RETURN_IF_ERROR(read_as_ir8(model));
  HSCHED_RETURN_IF_ERROR(inline_model_functions(model, opset));
  if (opset > kMaxOpset) {
    HSCHED_RETURN_IF_ERROR(lower_newer_opsets(model, opset));
    opset = kMaxOpset;
  }
  HSCHED_RETURN_IF_ERROR(lower_microsoft_ops(model, opset));
  Validation validation{opset, external};
  HSCHED_RETURN_IF_ERROR(validate_graph(*model.mutable_graph(), validation, nullptr, 0));
  return opset;
}

}  // namespace hsched
