#include "graph/function_inline.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include "graph/if_inline.h"
#include "graph/onnx_validate.h"

namespace hsched {
namespace {

std::string key_of(const std::string& domain, const std::string& name) {
  return domain + "." + name;
}

bool holds_subgraph(const onnx::AttributeProto& attr) {
  using A = onnx::AttributeProto;
  return attr.type() == A::GRAPH || attr.type() == A::GRAPHS || attr.has_g() || attr.graphs_size();
}

// One model-local function: its proto, the functions its nodes call, and how deep calls go from
// it (1 when it calls none).
struct Function {
  const onnx::FunctionProto* proto = nullptr;
  std::string key;
  std::vector<size_t> callees;
  NameSet internal;  // the names its nodes define
  enum class Visit { kNew, kOnPath, kDone } visit = Visit::kNew;
  int height = 0;
  int64_t expanded_nodes = 0;  // nodes one call becomes, calls inside expanded; saturates
};

std::string label_of(const Function& fn) { return "function '" + fn.key + "'"; }

// Each name of `names` non-empty and given once; `what` says which list ("input", "output").
Status check_unique(const google::protobuf::RepeatedPtrField<std::string>& names,
                    const std::string& what, NameSet& seen) {
  for (const auto& name : names) {
    if (name.empty()) return invalid_argument("an " + what + " has no name");
    if (!seen.insert(name).second) return invalid_argument(what + " '" + name + "' is given twice");
  }
  return Status::ok();
}

// What a function declares, and that its nodes read only its inputs and what its nodes define.
Status check_function(const onnx::FunctionProto& proto, int64_t opset, Function& fn) {
  for (const auto& import : proto.opset_import()) {
    if (is_default_domain(import.domain()) && import.version() != opset) {
      return invalid_argument("imports opset " + std::to_string(import.version()) +
                              " of the default ONNX domain; the model imports " +
                              std::to_string(opset));
    }
  }
  NameSet inputs;
  NameSet outputs;
  NameSet attributes;
  HSCHED_RETURN_IF_ERROR(check_unique(proto.input(), "input", inputs));
  HSCHED_RETURN_IF_ERROR(check_unique(proto.output(), "output", outputs));
  HSCHED_RETURN_IF_ERROR(check_unique(proto.attribute(), "attribute", attributes));
  for (int i = 0; i < proto.node_size(); ++i) {
    const onnx::NodeProto& node = proto.node(i);
    const std::string where = node_description(node, i);
    if (node.op_type().empty()) return invalid_argument(where + " has no op type");
    for (const auto& out : node.output()) {
      if (out.empty()) continue;
      if (inputs.count(out) || !fn.internal.insert(out).second) {
        return invalid_argument(where + ": '" + out + "' is defined twice");
      }
    }
    for (const auto& attr : node.attribute()) {
      if (holds_subgraph(attr)) {
        return unimplemented(where + ": attribute '" + attr.name() +
                             "' holds a subgraph, which hsched does not take inside a function");
      }
      if (attr.has_ref_attr_name() && attributes.count(attr.ref_attr_name()) == 0) {
        return invalid_argument(where + ": attribute '" + attr.name() + "' refers to '" +
                                attr.ref_attr_name() + "', which the function does not declare");
      }
    }
  }
  for (int i = 0; i < proto.node_size(); ++i) {
    for (const auto& in : proto.node(i).input()) {
      if (!in.empty() && inputs.count(in) == 0 && fn.internal.count(in) == 0) {
        return invalid_argument(node_description(proto.node(i), i) + ": input '" + in +
                                "' is neither an input of the function nor defined in it");
      }
    }
  }
  for (const auto& out : proto.output()) {
    if (inputs.count(out) == 0 && fn.internal.count(out) == 0) {
      return invalid_argument("output '" + out + "' is defined by none of its nodes");
    }
  }
  return Status::ok();
}

// A prefix ending in '/' under which no name of `names` clashes with a name of `taken`.
std::string unique_prefix(const std::string& base, const NameSet& names, const NameSet& taken) {
  for (int attempt = 0;; ++attempt) {
    const std::string prefix = base + (attempt == 0 ? "" : "~" + std::to_string(attempt)) + "/";
    bool clashes = false;
    for (auto it = names.begin(); it != names.end() && !clashes; ++it) {
      clashes = taken.count(prefix + *it) > 0;
    }
    if (!clashes) return prefix;
  }
}

using AttributeValues = std::unordered_map<std::string, const onnx::AttributeProto*>;

// Attributes that refer to the function's (ref_attr_name) take the call's value, or are
// dropped when the call gives none (the operator's default applies). `label` names the function.
Status substitute_attributes(onnx::NodeProto& node, const AttributeValues& given,
                             const std::string& label) {
  google::protobuf::RepeatedPtrField<onnx::AttributeProto> attrs;
  for (auto& attr : *node.mutable_attribute()) {
    if (!attr.has_ref_attr_name()) {
      attrs.Add()->Swap(&attr);
      continue;
    }
    auto it = given.find(attr.ref_attr_name());
    if (it == given.end()) continue;
    const onnx::AttributeProto& value = *it->second;
    if (attr.type() != onnx::AttributeProto::UNDEFINED && value.type() != attr.type()) {
      return invalid_argument("attribute '" + value.name() + "' has type " +
                              onnx::AttributeProto::AttributeType_Name(value.type()) + "; " +
                              label + " uses it as " +
                              onnx::AttributeProto::AttributeType_Name(attr.type()));
    }
    onnx::AttributeProto& copy = *attrs.Add();
    copy = value;
    copy.set_name(attr.name());
  }
  node.mutable_attribute()->Swap(&attrs);
  return Status::ok();
}

// How one call's copy of a function body names things: the body's own names (`internal`) under
// a prefix no other name of the model has (reserved in `taken`), its inputs as the call's ("" for
// one the call leaves out). `fallback` names the prefix when the call has no name or output.
struct BodyNames {
  std::string prefix;
  std::unordered_map<std::string, std::string> renamed;
};

BodyNames name_body(const onnx::NodeProto& call, const std::string& fallback,
                    const google::protobuf::RepeatedPtrField<std::string>& body_inputs,
                    const NameSet& internal, NameSet& taken) {
  const std::string base =
      !call.name().empty() ? call.name() : call.output_size() > 0 ? call.output(0) : fallback;
  BodyNames names{unique_prefix(base, internal, taken), {}};
  for (const auto& name : internal) {
    names.renamed.emplace(name, names.prefix + name);
    taken.insert(names.prefix + name);
  }
  for (int i = 0; i < body_inputs.size(); ++i) {
    names.renamed[body_inputs[i]] = i < call.input_size() ? call.input(i) : std::string();
  }
  return names;
}

// Node `k` of a body, renamed for one call: its name under the prefix, every value it reads and
// writes as `names` says. A name the body neither takes nor defines is an InvalidArgument.
Status rename_body_node(onnx::NodeProto& node, int k, const BodyNames& names) {
  node.set_name(names.prefix + (node.name().empty() ? "#" + std::to_string(k) : node.name()));
  for (auto* list : {node.mutable_input(), node.mutable_output()}) {
    for (auto& name : *list) {
      if (name.empty()) continue;
      auto it = names.renamed.find(name);
      if (it == names.renamed.end()) {
        return invalid_argument("node " + node.name() + " uses '" + name +
                                "', which the body neither takes nor defines");
      }
      name = it->second;
    }
  }
  return Status::ok();
}

class Inliner {
 public:
  Inliner(onnx::ModelProto& model, int64_t opset) : model_(model), opset_(opset) {}

  Status run() {
    HSCHED_RETURN_IF_ERROR(index_functions());
    for (size_t f = 0; f < functions_.size(); ++f) {
      std::vector<size_t> path;
      HSCHED_RETURN_IF_ERROR(visit(f, path));
    }
    add_all_names(model_.graph(), taken_, 0);
    HSCHED_RETURN_IF_ERROR(expand_graph(*model_.mutable_graph(), 0));
    model_.clear_functions();
    return Status::ok();
  }

 private:
  const Function* callee_of(const onnx::NodeProto& node) const {
    if (is_default_domain(node.domain())) return nullptr;
    auto it = index_.find(key_of(node.domain(), node.op_type()));
    return it == index_.end() ? nullptr : &functions_[it->second];
  }

  Status index_functions() {
    functions_.resize(static_cast<size_t>(model_.functions_size()));
    for (int i = 0; i < model_.functions_size(); ++i) {
      const onnx::FunctionProto& proto = model_.functions(i);
      Function& fn = functions_[static_cast<size_t>(i)];
      fn.proto = &proto;
      fn.key = key_of(proto.domain(), proto.name());
      if (proto.name().empty()) return invalid_argument("a model-local function has no name");
      if (is_default_domain(proto.domain())) {
        return invalid_argument(label_of(fn) + " is in the default ONNX domain, where it would " +
                                "stand for an ONNX operator");
      }
      if (!index_.emplace(fn.key, static_cast<size_t>(i)).second) {
        return invalid_argument(label_of(fn) + " is defined twice");
      }
      Status status = check_function(proto, opset_, fn);
      if (!status.is_ok()) return status.with_context(label_of(fn));
    }
    for (Function& fn : functions_) {
      for (const auto& node : fn.proto->node()) {
        if (const Function* callee = callee_of(node)) {
          fn.callees.push_back(static_cast<size_t>(callee - functions_.data()));
        }
      }
    }
    return Status::ok();
  }

  static std::string chain(const std::vector<size_t>& path, const std::vector<Function>& fns,
                           size_t from) {
    std::string text;
    for (size_t i = from; i < path.size(); ++i) text += fns[path[i]].key + " -> ";
    return text;
  }

  // Depth-first over the call graph: a function met again on the current path is a cycle. The
  // path never grows past kMaxFunctionDepth + 1, so neither does this recursion.
  Status visit(size_t f, std::vector<size_t>& path) {
    Function& fn = functions_[f];
    if (fn.visit == Function::Visit::kDone) return Status::ok();
    path.push_back(f);
    if (path.size() > static_cast<size_t>(kMaxFunctionDepth)) {
      return invalid_argument("model-local functions call one another more than " +
                              std::to_string(kMaxFunctionDepth) + " deep (" +
                              chain(path, functions_, 0) + "...)");
    }
    fn.visit = Function::Visit::kOnPath;
    int height = 1;
    // Every node counts one, a call what its function expands to, an output passed through one
    // Identity: a bound, saturated so that no sum overflows.
    int64_t expanded = fn.proto->node_size() + fn.proto->output_size();
    for (size_t c : fn.callees) {
      Function& callee = functions_[c];
      if (callee.visit == Function::Visit::kOnPath) {
        size_t start = 0;
        while (path[start] != c) ++start;
        return invalid_argument(label_of(callee) + " calls itself (" +
                                chain(path, functions_, start) + callee.key +
                                "): recursion is not supported");
      }
      HSCHED_RETURN_IF_ERROR(visit(c, path));
      height = std::max(height, 1 + callee.height);
      expanded = std::min(expanded + callee.expanded_nodes, kMaxInlinedNodes + 1);
    }
    if (height + static_cast<int>(path.size()) - 1 > kMaxFunctionDepth) {
      return invalid_argument("model-local functions call one another more than " +
                              std::to_string(kMaxFunctionDepth) + " deep (through " + label_of(fn) +
                              ")");
    }
    fn.height = height;
    fn.expanded_nodes = expanded;
    fn.visit = Function::Visit::kDone;
    path.pop_back();
    return Status::ok();
  }

  // Reserves room for the nodes of one call before any is added.
  Status reserve(const Function& fn) {
    if (fn.expanded_nodes > budget_) {
      return invalid_argument("function calls would add more than " +
                              std::to_string(kMaxInlinedNodes) + " nodes to the graph");
    }
    budget_ -= fn.expanded_nodes;
    return Status::ok();
  }

  // Replaces the calls among the nodes of `graph` and of the If branches inside it.
  Status expand_graph(onnx::GraphProto& graph, int depth) {
    bool any_call = false;
    for (const auto& node : graph.node()) any_call = any_call || callee_of(node) != nullptr;
    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    for (int i = 0; i < graph.node_size(); ++i) {
      onnx::NodeProto& node = *graph.mutable_node(i);
      if (const Function* fn = callee_of(node)) {
        Status status = reserve(*fn);
        if (status.is_ok()) status = expand_call(node, *fn, nodes, /*inside_function=*/false);
        if (!status.is_ok()) {
          return status.with_context(node_description(node, i) + ", a call of " + label_of(*fn));
        }
        continue;
      }
      if (depth < kMaxNameWalkDepth) {  // validation refuses deeper nesting
        for (auto& attr : *node.mutable_attribute()) {
          if (attr.has_g()) HSCHED_RETURN_IF_ERROR(expand_graph(*attr.mutable_g(), depth + 1));
          for (auto& g : *attr.mutable_graphs()) HSCHED_RETURN_IF_ERROR(expand_graph(g, depth + 1));
        }
      }
      if (any_call) nodes.Add()->Swap(&node);
    }
    if (any_call) graph.mutable_node()->Swap(&nodes);
    return Status::ok();
  }

  // Appends the body of `fn`, called by `call`, to `nodes` (calls inside it expanded in turn).
  Status expand_call(const onnx::NodeProto& call, const Function& fn,
                     google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes,
                     bool inside_function) {
    const onnx::FunctionProto& proto = *fn.proto;
    if (call.input_size() > proto.input_size() || call.output_size() > proto.output_size()) {
      return invalid_argument("it has " + std::to_string(call.input_size()) + " inputs and " +
                              std::to_string(call.output_size()) + " outputs; the function takes " +
                              std::to_string(proto.input_size()) + " and gives " +
                              std::to_string(proto.output_size()));
    }
    AttributeValues given;
    const NameSet declared(proto.attribute().begin(), proto.attribute().end());
    for (const auto& attr : call.attribute()) {
      if (holds_subgraph(attr) || (!inside_function && attr.has_ref_attr_name())) {
        return unimplemented("attribute '" + attr.name() + "' holds a subgraph or a reference");
      }
      if (declared.count(attr.name()) == 0) {
        return invalid_argument("the function has no attribute '" + attr.name() + "'");
      }
      if (!given.emplace(attr.name(), &attr).second) {
        return invalid_argument("attribute '" + attr.name() + "' is given twice");
      }
    }
    BodyNames names = name_body(call, fn.key, proto.input(), fn.internal, taken_);
    for (int j = 0; j < proto.output_size(); ++j) {
      if (j >= call.output_size() || call.output(j).empty()) continue;
      if (fn.internal.count(proto.output(j))) {
        names.renamed[proto.output(j)] = call.output(j);
        continue;
      }
      // The function passes an input straight through: an Identity stands for it.
      const std::string& source = names.renamed.at(proto.output(j));
      if (source.empty()) {
        return invalid_argument("output " + std::to_string(j) + " is an input the call leaves out");
      }
      onnx::NodeProto& identity = *nodes.Add();
      identity.set_op_type("Identity");
      identity.set_name(names.prefix + "output_" + std::to_string(j));
      identity.add_input(source);
      identity.add_output(call.output(j));
    }
    for (int k = 0; k < proto.node_size(); ++k) {
      onnx::NodeProto node = proto.node(k);
      // check_function() made sure every name the node uses is an input or defined inside.
      HSCHED_RETURN_IF_ERROR(rename_body_node(node, k, names));
      HSCHED_RETURN_IF_ERROR(substitute_attributes(node, given, label_of(fn)));
      if (const Function* callee = callee_of(node)) {
        // Recursion bounded by kMaxFunctionDepth: the call graph was checked by visit().
        Status status = expand_call(node, *callee, nodes, /*inside_function=*/true);
        if (!status.is_ok()) {
          return status.with_context(node_description(node, k) + ", a call of " +
                                     label_of(*callee));
        }
        continue;
      }
      nodes.Add()->Swap(&node);
    }
    return Status::ok();
  }

  onnx::ModelProto& model_;
  int64_t opset_;
  int64_t budget_ = kMaxInlinedNodes;  // nodes calls may still add
  std::vector<Function> functions_;
  std::unordered_map<std::string, size_t> index_;  // key -> functions_
  NameSet taken_;
};

// The ops hsched runs as their ONNX function body: no backend has a kernel of its own for them,
// and the body uses ops they have.
bool is_expanded_op(const onnx::NodeProto& node) {
  static const NameSet kOps = {
      "BlackmanWindow", "CastLike", "Celu", "HammingWindow", "HannWindow",
      "MeanVarianceNormalization", "NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"};
  return is_default_domain(node.domain()) && kOps.count(node.op_type()) > 0;
}

// The type of every named value of `graph` that has one: inputs, initializers, inferred values.
std::unordered_map<std::string, onnx::TypeProto> value_types(const onnx::GraphProto& graph) {
  std::unordered_map<std::string, onnx::TypeProto> types;
  for (const auto& list : {&graph.input(), &graph.value_info(), &graph.output()}) {
    for (const auto& info : *list) {
      if (info.has_type()) types.emplace(info.name(), info.type());
    }
  }
  for (const auto& init : graph.initializer()) {
    onnx::TypeProto type;
    auto* tensor = type.mutable_tensor_type();
    tensor->set_elem_type(init.data_type());
    for (int64_t dim : init.dims()) tensor->mutable_shape()->add_dim()->set_dim_value(dim);
    types[init.name()] = std::move(type);
  }
  return types;
}

// The body of `node`'s op as `schema` (its version at the model's opset) defines it, or false
// when it has none here (no function, or an input whose type is not known yet).
bool function_body(const onnx::NodeProto& node, const onnx::OpSchema& schema,
                   const std::unordered_map<std::string, onnx::TypeProto>& types,
                   onnx::FunctionProto& body) {
  if (schema.HasFunction()) {
    body = *schema.GetFunction();
    return true;
  }
  if (!schema.HasContextDependentFunction()) return false;
  std::vector<onnx::TypeProto> input_types;
  for (const auto& input : node.input()) {
    if (input.empty()) {
      input_types.emplace_back();
      continue;
    }
    auto it = types.find(input);
    if (it == types.end() || !it->second.has_tensor_type() ||
        it->second.tensor_type().elem_type() == onnx::TensorProto::UNDEFINED) {
      return false;
    }
    input_types.push_back(it->second);
  }
  return schema.BuildContextDependentFunction(onnx::FunctionBodyBuildContextImpl(node, input_types),
                                              body);
}

}  // namespace

Result<int> expand_function_ops(onnx::GraphProto& graph, int64_t opset, int64_t& budget) {
  bool any = false;
  for (const auto& node : graph.node()) any = any || is_expanded_op(node);
  if (!any) return 0;
  const auto types = value_types(graph);
  NameSet taken;
  add_all_names(graph, taken, 0);
  int expanded = 0;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  for (int i = 0; i < graph.node_size(); ++i) {
    onnx::NodeProto& call = *graph.mutable_node(i);
    const onnx::OpSchema* schema =
        is_expanded_op(call)
            ? onnx::OpSchemaRegistry::Schema(call.op_type(), static_cast<int>(opset), "")
            : nullptr;
    onnx::FunctionProto body;
    if (schema == nullptr || !function_body(call, *schema, types, body)) {
      nodes.Add()->Swap(&call);
      continue;
    }
    const std::string label = "the function body of " + call.op_type();
    const std::string where = node_description(call, i);
    if (body.node_size() > budget) {
      return invalid_argument(where + ": function bodies would add more than " +
                              std::to_string(kMaxInlinedNodes) + " nodes to the graph");
    }
    budget -= body.node_size();
    // The call's attributes, and the schema's defaults for those it leaves out.
    AttributeValues given;
    for (const auto& attr : call.attribute()) given.emplace(attr.name(), &attr);
    for (const auto& [name, attr] : schema->attributes()) {
      if (attr.default_value.type() != onnx::AttributeProto::UNDEFINED) {
        given.emplace(name, &attr.default_value);
      }
    }
    NameSet internal;
    for (const auto& n : body.node()) {
      for (const auto& out : n.output()) {
        if (!out.empty()) internal.insert(out);
      }
    }
    BodyNames names = name_body(call, call.op_type(), body.input(), internal, taken);
    for (int k = 0; k < body.output_size(); ++k) {
      if (k < call.output_size() && !call.output(k).empty()) {
        names.renamed[body.output(k)] = call.output(k);
      }
    }
    for (int k = 0; k < body.node_size(); ++k) {
      onnx::NodeProto node = body.node(k);
      Status status = rename_body_node(node, k, names);
      if (status.is_ok()) status = substitute_attributes(node, given, label);
      if (!status.is_ok()) return status.with_context(where);
      nodes.Add()->Swap(&node);
    }
    ++expanded;
  }
  graph.mutable_node()->Swap(&nodes);
  return expanded;
}

Status inline_model_functions(onnx::ModelProto& model, int64_t opset) {
  if (model.functions_size() == 0) return Status::ok();
  return Inliner(model, opset).run();
}

}  // namespace hsched
