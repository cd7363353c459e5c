#include "graph/if_inline.h"

#include <unordered_map>

#include <onnx/onnx_pb.h>

#include "graph/loop_unroll.h"
#include "graph/onnx_validate.h"

namespace hsched {
namespace {

// Names `graph` defines itself: initializers, inputs and node outputs.
NameSet names_defined_in(const onnx::GraphProto& graph) {
  NameSet names;
  for (const auto& init : graph.initializer()) names.insert(init.name());
  for (const auto& input : graph.input()) names.insert(input.name());
  for (const auto& node : graph.node()) {
    for (const auto& out : node.output()) {
      if (!out.empty()) names.insert(out);
    }
  }
  return names;
}

void add_subgraph_outer_reads(const onnx::GraphProto& graph, NameSet& names) {
  const NameSet own = names_defined_in(graph);
  auto read = [&](const std::string& name) {
    if (!name.empty() && own.count(name) == 0) names.insert(name);
  };
  for (const auto& node : graph.node()) {
    for (const auto& name : node.input()) read(name);
    NameSet nested;
    add_outer_reads(node, nested);
    for (const auto& name : nested) read(name);
  }
  for (const auto& output : graph.output()) read(output.name());
}

// The value of an If condition held by an initializer: ONNX asks for one bool.
Result<bool> read_condition(const onnx::TensorProto& proto, ExternalData& external) {
  DType dtype = DType::kUndefined;
  std::vector<int64_t> dims;
  HSCHED_RETURN_IF_ERROR(check_tensor_header(proto, &dtype, &dims));
  int64_t elements = 1;
  for (int64_t d : dims) elements *= d;  // bounded by check_tensor_header
  if (dtype != DType::kBool || elements != 1) {
    return invalid_argument("condition '" + proto.name() + "' is a " +
                            std::string(dtype_name(dtype)) + " tensor of " +
                            std::to_string(elements) + " elements; If takes one bool");
  }
  HSCHED_ASSIGN_OR_RETURN(Tensor tensor, tensor_from_proto(proto, &external));
  return tensor.values<uint8_t>()[0] != 0;
}

// The then_branch or else_branch attribute of `node`; null when absent.
onnx::GraphProto* branch_of(onnx::NodeProto& node, bool condition) {
  const char* name = condition ? "then_branch" : "else_branch";
  for (auto& attr : *node.mutable_attribute()) {
    if (attr.name() == name && attr.has_g()) return attr.mutable_g();
  }
  return nullptr;
}

// Appends the nodes of `branch`, a branch of `node`, to `nodes` and its initializers to `graph`,
// every name it defines renamed under a prefix as described at inline_constant_ifs(). New names
// are added to `taken`. Returns the names of the branch's outputs, renamed.
std::vector<std::string> inline_branch(const onnx::NodeProto& node, bool condition,
                                       onnx::GraphProto& branch, onnx::GraphProto& graph,
                                       NodeList& nodes, NameSet& taken) {
  std::vector<std::string> defined;
  for (const auto& init : branch.initializer()) defined.push_back(init.name());
  for (const auto& inner : branch.node()) {
    for (const auto& out : inner.output()) {
      if (!out.empty()) defined.push_back(out);
    }
  }
  const std::string base =
      (node.name().empty() ? node.output(0) : node.name()) + (condition ? "/then" : "/else");
  const std::string prefix = unique_prefix(base, defined, taken);
  Renames renamed;
  for (const auto& name : defined) {
    renamed.emplace(name, prefix + name);
    taken.insert(prefix + name);
  }
  rename_in_graph(branch, renamed);

  for (auto& init : *branch.mutable_initializer()) graph.add_initializer()->Swap(&init);
  for (auto& inner : *branch.mutable_node()) {
    if (!inner.name().empty()) inner.set_name(prefix + inner.name());
    nodes.Add()->Swap(&inner);
  }
  std::vector<std::string> outputs;
  for (const auto& output : branch.output()) outputs.push_back(output.name());
  return outputs;
}

// The value's dtype and dims as inference or an initializer left them; false when unknown.
bool known_type(const onnx::GraphProto& graph, const std::string& name, int32_t* dtype,
                std::vector<int64_t>* dims) {
  for (const auto& init : graph.initializer()) {
    if (init.name() != name) continue;
    *dtype = init.data_type();
    dims->assign(init.dims().begin(), init.dims().end());
    return true;
  }
  auto from_info = [&](const onnx::ValueInfoProto& info) {
    if (info.name() != name || !info.type().has_tensor_type()) return false;
    const auto& type = info.type().tensor_type();
    if (!type.has_shape()) return false;
    dims->clear();
    for (const auto& dim : type.shape().dim()) {
      if (!dim.has_dim_value()) return false;
      dims->push_back(dim.dim_value());
    }
    *dtype = type.elem_type();
    return true;
  };
  for (const auto& info : graph.value_info()) {
    if (from_info(info)) return true;
  }
  for (const auto& info : graph.output()) {
    if (from_info(info)) return true;
  }
  return false;
}

std::string type_text(int32_t dtype, const std::vector<int64_t>& dims) {
  return std::string(onnx_dtype_name(dtype)) + " " + Shape(dims).to_string();
}

}  // namespace

std::string fresh_name(const std::string& base, NameSet& taken) {
  std::string name = base;
  for (int attempt = 1; taken.count(name) != 0; ++attempt) {
    name = base + "~" + std::to_string(attempt);
  }
  taken.insert(name);
  return name;
}

onnx::NodeProto& add_node(NodeList& nodes, const std::string& op, const std::string& name,
                          const std::vector<std::string>& inputs, const std::string& output) {
  onnx::NodeProto& node = *nodes.Add();
  node.set_op_type(op);
  node.set_name(name);
  for (const auto& input : inputs) node.add_input(input);
  node.add_output(output);
  return node;
}

void rename_in_graph(onnx::GraphProto& graph, const Renames& renamed) {
  auto apply = [&](std::string* name) {
    auto it = renamed.find(*name);
    if (it != renamed.end()) *name = it->second;
  };
  for (auto& init : *graph.mutable_initializer()) apply(init.mutable_name());
  for (auto& input : *graph.mutable_input()) apply(input.mutable_name());
  for (auto& info : *graph.mutable_value_info()) apply(info.mutable_name());
  for (auto& output : *graph.mutable_output()) apply(output.mutable_name());
  for (auto& node : *graph.mutable_node()) {
    for (auto& name : *node.mutable_input()) apply(&name);
    for (auto& name : *node.mutable_output()) apply(&name);
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_g()) rename_in_graph(*attr.mutable_g(), renamed);
    }
  }
}

std::string unique_prefix(const std::string& base, const std::vector<std::string>& names,
                          const NameSet& taken) {
  for (int attempt = 0;; ++attempt) {
    const std::string prefix = base + (attempt == 0 ? "" : "~" + std::to_string(attempt)) + "/";
    bool clashes = false;
    for (size_t i = 0; i < names.size() && !clashes; ++i) {
      clashes = taken.count(prefix + names[i]) > 0;
    }
    if (!clashes) return prefix;
  }
}

void add_all_names(const onnx::GraphProto& graph, NameSet& names, int depth) {
  for (const auto& init : graph.initializer()) names.insert(init.name());
  for (const auto& info : graph.input()) names.insert(info.name());
  for (const auto& info : graph.output()) names.insert(info.name());
  for (const auto& info : graph.value_info()) names.insert(info.name());
  for (const auto& node : graph.node()) {
    names.insert(node.input().begin(), node.input().end());
    names.insert(node.output().begin(), node.output().end());
    if (depth >= kMaxNameWalkDepth) continue;
    for (const auto& attr : node.attribute()) {
      if (attr.has_g()) add_all_names(attr.g(), names, depth + 1);
      for (const auto& g : attr.graphs()) add_all_names(g, names, depth + 1);
    }
  }
}

bool is_if_node(const onnx::NodeProto& node) {
  return node.op_type() == "If" && (node.domain().empty() || node.domain() == "ai.onnx");
}

void add_outer_reads(const onnx::NodeProto& node, NameSet& names) {
  for (const auto& attr : node.attribute()) {
    if (attr.has_g()) add_subgraph_outer_reads(attr.g(), names);
    for (const auto& graph : attr.graphs()) add_subgraph_outer_reads(graph, names);
  }
}

Result<int> inline_constant_ifs(onnx::GraphProto& graph, ExternalData& external) {
  std::unordered_map<std::string, const onnx::TensorProto*> initializers;
  for (const auto& init : graph.initializer()) initializers[init.name()] = &init;
  // The branch each If takes (null for other nodes and unknown conditions), all decided before
  // the graph changes.
  struct Choice {
    onnx::GraphProto* branch = nullptr;
    bool condition = false;
  };
  std::vector<Choice> choices(static_cast<size_t>(graph.node_size()));
  int count = 0;
  for (int i = 0; i < graph.node_size(); ++i) {
    onnx::NodeProto& node = *graph.mutable_node(i);
    if (!is_if_node(node) || node.input_size() < 1) continue;
    auto init = initializers.find(node.input(0));
    if (init == initializers.end()) continue;
    const std::string where = node_description(node, i);
    auto condition = read_condition(*init->second, external);
    if (!condition.is_ok()) return condition.status().with_context(where);
    Choice& choice = choices[static_cast<size_t>(i)];
    choice.condition = *condition;
    choice.branch = branch_of(node, *condition);
    // validate_and_sort() checked the schema: both branches are there.
    if (choice.branch == nullptr) return internal_error(where + ": the chosen branch is missing");
    ++count;
  }
  if (count == 0) return 0;

  NameSet taken;
  add_all_names(graph, taken);
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  nodes.Reserve(graph.node_size());
  for (int i = 0; i < graph.node_size(); ++i) {
    onnx::NodeProto& node = *graph.mutable_node(i);
    const Choice& choice = choices[static_cast<size_t>(i)];
    if (choice.branch == nullptr) {
      nodes.Add()->Swap(&node);
      continue;
    }
    const auto outputs = inline_branch(node, choice.condition, *choice.branch, graph, nodes, taken);
    // validate_and_sort() checked that the branch has as many outputs as the If.
    for (int k = 0; k < node.output_size(); ++k) {
      if (node.output(k).empty()) continue;
      const std::string& value = outputs[static_cast<size_t>(k)];
      add_node(nodes, "Identity", fresh_name(value + "/output", taken), {value}, node.output(k));
    }
  }
  graph.mutable_node()->Swap(&nodes);
  return count;
}

Result<std::vector<PredicatedOutput>> predicate_ifs(onnx::GraphProto& graph) {
  std::vector<PredicatedOutput> predicated;
  NameSet taken;
  NodeList nodes;
  nodes.Reserve(graph.node_size());
  for (int i = 0; i < graph.node_size(); ++i) {
    onnx::NodeProto& node = *graph.mutable_node(i);
    onnx::GraphProto* then_branch = is_if_node(node) ? branch_of(node, true) : nullptr;
    onnx::GraphProto* else_branch = is_if_node(node) ? branch_of(node, false) : nullptr;
    if (then_branch == nullptr || else_branch == nullptr || node.input_size() < 1) {
      nodes.Add()->Swap(&node);
      continue;
    }
    if (taken.empty()) add_all_names(graph, taken);
    const std::string label = node_description(node, i);
    const auto then_outputs = inline_branch(node, true, *then_branch, graph, nodes, taken);
    const auto else_outputs = inline_branch(node, false, *else_branch, graph, nodes, taken);
    // One bool as ONNX asks (inference checks the dtype), reshaped to a scalar whatever shape it
    // declares, so that Where keeps each output's shape.
    const std::string condition = fresh_name(node.input(0) + "/scalar", taken);
    onnx::TensorProto& scalar_shape = *graph.add_initializer();
    scalar_shape.set_name(fresh_name(condition + "/shape", taken));
    scalar_shape.set_data_type(onnx::TensorProto::INT64);
    scalar_shape.add_dims(0);
    add_node(nodes, "Reshape", condition, {node.input(0), scalar_shape.name()}, condition);
    for (int k = 0; k < node.output_size(); ++k) {
      if (node.output(k).empty()) continue;
      const auto kk = static_cast<size_t>(k);
      add_node(nodes, "Where", fresh_name(node.output(k) + "/select", taken),
               {condition, then_outputs[kk], else_outputs[kk]}, node.output(k));
      predicated.push_back({label, k, then_outputs[kk], else_outputs[kk]});
    }
  }
  graph.mutable_node()->Swap(&nodes);
  return predicated;
}

Status check_predicated_ifs(const onnx::GraphProto& graph,
                            const std::vector<PredicatedOutput>& predicated) {
  for (const PredicatedOutput& p : predicated) {
    int32_t then_dtype = 0, else_dtype = 0;
    std::vector<int64_t> then_dims, else_dims;
    if (!known_type(graph, p.then_value, &then_dtype, &then_dims) ||
        !known_type(graph, p.else_value, &else_dtype, &else_dims)) {
      continue;  // a shape left unknown is refused later, naming the value
    }
    if (then_dtype != else_dtype || then_dims != else_dims) {
      return invalid_argument(
          p.label + ": its condition is known only at run time and its branches give output " +
          std::to_string(p.output) + " as " + type_text(then_dtype, then_dims) + " and " +
          type_text(else_dtype, else_dims) +
          "; hsched computes both branches and selects, which needs the same dtype and shape");
    }
  }
  return Status::ok();
}

IfNodesSetAside::IfNodesSetAside(onnx::GraphProto& graph) : graph_(graph) {
  const auto control_flow = [](const onnx::NodeProto& node) {
    return is_if_node(node) || is_loop_node(node) || is_scan_node(node);
  };
  bool any = false;
  for (const auto& node : graph.node()) any = any || control_flow(node);
  if (!any) return;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
  for (int i = 0; i < graph.node_size(); ++i) {
    onnx::NodeProto& node = *graph.mutable_node(i);
    if (control_flow(node)) {
      removed_.emplace_back(i, std::make_unique<onnx::NodeProto>());
      removed_.back().second->Swap(&node);
    } else {
      kept.Add()->Swap(&node);
    }
  }
  graph.mutable_node()->Swap(&kept);
}

IfNodesSetAside::~IfNodesSetAside() {
  if (removed_.empty()) return;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> all;
  const int total = graph_.node_size() + static_cast<int>(removed_.size());
  all.Reserve(total);
  size_t next_removed = 0;
  int next_kept = 0;
  for (int i = 0; i < total; ++i) {
    if (next_removed < removed_.size() && removed_[next_removed].first == i) {
      all.Add()->Swap(removed_[next_removed++].second.get());
    } else {
      all.Add()->Swap(graph_.mutable_node(next_kept++));
    }
  }
  graph_.mutable_node()->Swap(&all);
}

}  // namespace hsched
