#include "graph/opset18.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

#include <google/protobuf/unknown_field_set.h>
#include <onnx/onnx_pb.h>

#include "graph/node_proto.h"
#include "graph/onnx_import.h"
#include "graph/onnx_validate.h"
#include "graph/tensor_proto.h"

namespace hsched {
namespace {

// The graphs a node can read names from, innermost last.
using Scope = std::vector<const onnx::GraphProto*>;

// Deeper If branches are refused by validation; they are not rewritten.
constexpr int kMaxDepth = 8;

const std::set<std::string>& reduce_ops_with_axes_input() {
  static const std::set<std::string> ops = {"ReduceL1",        "ReduceL2",   "ReduceLogSum",
                                            "ReduceLogSumExp", "ReduceMax",  "ReduceMean",
                                            "ReduceMin",       "ReduceProd", "ReduceSumSquare"};
  return ops;
}

const std::set<std::string>& ops_new_in_18() {
  static const std::set<std::string> ops = {"BitwiseAnd",        "BitwiseNot",    "BitwiseOr",
                                            "BitwiseXor",        "CenterCropPad", "Col2Im",
                                            "GroupNormalization"};
  return ops;
}

// The overload a node (field 8) or function (field 13) of IR 10 names, kept by libonnx 1.12's
// proto as an unknown field; empty without.
std::string unknown_overload(const google::protobuf::UnknownFieldSet& fields, int number) {
  for (int i = 0; i < fields.field_count(); ++i) {
    const google::protobuf::UnknownField& field = fields.field(i);
    if (field.number() == number &&
        field.type() == google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED &&
        !field.length_delimited().empty()) {
      return field.length_delimited();
    }
  }
  return "";
}

// A node of `nodes` (a graph's or a function's) or of their subgraphs that names a function
// overload.
Status refuse_overloads(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes) {
  for (int i = 0; i < nodes.size(); ++i) {
    const onnx::NodeProto& node = nodes.Get(i);
    const std::string overload = unknown_overload(node.unknown_fields(), 8);
    if (!overload.empty()) {
      return invalid_argument(node_description(node, i) + " calls the function overload '" +
                              overload.substr(0, 64) + "' (IR 10), which hsched does not read");
    }
    for (const onnx::AttributeProto& attr : node.attribute()) {
      if (attr.has_g()) HSCHED_RETURN_IF_ERROR(refuse_overloads(attr.g().node()));
      for (const onnx::GraphProto& g : attr.graphs()) {
        HSCHED_RETURN_IF_ERROR(refuse_overloads(g.node()));
      }
    }
  }
  return Status::ok();
}

// Keeps the first `count` inputs.
void keep_inputs(onnx::NodeProto& node, int count) {
  if (node.input_size() > count) {
    node.mutable_input()->DeleteSubrange(count, node.input_size() - count);
  }
}

std::optional<std::vector<int64_t>> int64_vector(const onnx::TensorProto& proto) {
  auto tensor = tensor_from_proto(proto, nullptr);
  if (!tensor.is_ok() || tensor->dtype() != DType::kI64 || tensor->shape().rank() > 1) {
    return std::nullopt;
  }
  const auto values = tensor->values<int64_t>();
  return std::vector<int64_t>(values.begin(), values.end());
}

// The values of `name` when it is a constant int64 vector of the scope: an initializer or the
// output of a Constant node.
std::optional<std::vector<int64_t>> constant_ints(const Scope& scope, const std::string& name) {
  for (auto graph = scope.rbegin(); graph != scope.rend(); ++graph) {
    for (const auto& init : (*graph)->initializer()) {
      if (init.name() == name) return int64_vector(init);
    }
    for (const auto& node : (*graph)->node()) {
      if (node.op_type() != "Constant" || !is_default_domain(node.domain()) ||
          node.output_size() != 1 || node.output(0) != name) {
        continue;
      }
      if (const auto* ints = find_attr(node, "value_ints")) {
        return std::vector<int64_t>(ints->ints().begin(), ints->ints().end());
      }
      const auto* value = find_attr(node, "value");
      return value != nullptr && value->has_t() ? int64_vector(value->t()) : std::nullopt;
    }
  }
  return std::nullopt;
}

Status refuse(const std::string& label, const std::string& what) {
  return unimplemented(label + ": " + what + " (opset 18 is read through its opset-17 forms)");
}

Status lower_reduce(onnx::NodeProto& node, const std::string& label, const Scope& scope) {
  std::optional<std::vector<int64_t>> axes;
  if (has_input(node, 1)) {
    if (find_attr(node, "axes") != nullptr) {
      return invalid_argument(label + ": both attribute 'axes' and input 'axes' are given");
    }
    axes = constant_ints(scope, node.input(1));
    if (!axes) return refuse(label, "input 'axes' is not a constant int64 vector");
  }
  const bool no_axes = !axes || axes->empty();
  if (int_attr(node, "noop_with_empty_axes", 0) != 0 && no_axes &&
      find_attr(node, "axes") == nullptr) {
    return refuse(label, "noop_with_empty_axes with no axes is not supported");
  }
  erase_attr(node, "noop_with_empty_axes");
  keep_inputs(node, 1);
  if (!no_axes) {
    onnx::AttributeProto* attr = node.add_attribute();
    attr->set_name("axes");
    attr->set_type(onnx::AttributeProto::INTS);
    for (int64_t a : *axes) attr->add_ints(a);
  }
  return Status::ok();
}

Status lower_node(onnx::NodeProto& node, const std::string& label, const Scope& scope) {
  const std::string& op = node.op_type();
  if (reduce_ops_with_axes_input().count(op) != 0) return lower_reduce(node, label, scope);
  if (ops_new_in_18().count(op) != 0) return refuse(label, "the op is new in opset 18");
  if (op == "Split" && find_attr(node, "num_outputs") != nullptr) {
    const int64_t n = int_attr(node, "num_outputs", 0);
    if (has_input(node, 1)) {
      return invalid_argument(label + ": both input 'split' and attribute num_outputs are given");
    }
    if (n != node.output_size()) {
      return invalid_argument(label + ": num_outputs " + std::to_string(n) + " differs from its " +
                              std::to_string(node.output_size()) + " outputs");
    }
    erase_attr(node, "num_outputs");
  } else if (op == "Pad") {
    if (has_input(node, 3)) return refuse(label, "input 'axes' is not supported");
    keep_inputs(node, 3);
  } else if (op == "Resize") {
    if (int_attr(node, "antialias", 0) != 0) return refuse(label, "antialias is not supported");
    if (find_attr(node, "axes") != nullptr)
      return refuse(label, "attribute 'axes' is not supported");
    const auto* policy = find_attr(node, "keep_aspect_ratio_policy");
    if (policy != nullptr && policy->s() != "stretch") {
      return refuse(label, "keep_aspect_ratio_policy '" + policy->s() + "' is not supported");
    }
    erase_attr(node, "antialias");
    erase_attr(node, "keep_aspect_ratio_policy");
  } else if (op == "ScatterElements" || op == "ScatterND") {
    const auto* reduction = find_attr(node, "reduction");
    if (reduction != nullptr && (reduction->s() == "max" || reduction->s() == "min")) {
      return refuse(label, "reduction '" + reduction->s() + "' is not supported");
    }
  } else if (op == "LpPool") {
    if (int_attr(node, "ceil_mode", 0) != 0) return refuse(label, "ceil_mode 1 is not supported");
    erase_attr(node, "ceil_mode");
  }
  return Status::ok();
}

Status lower_graph(onnx::GraphProto& graph, Scope scope, int depth) {
  scope.push_back(&graph);
  for (int i = 0; i < graph.node_size(); ++i) {
    onnx::NodeProto& node = *graph.mutable_node(i);
    if (is_default_domain(node.domain())) {
      HSCHED_RETURN_IF_ERROR(lower_node(node, node_description(node, i), scope));
    }
    if (depth >= kMaxDepth) continue;
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_g()) HSCHED_RETURN_IF_ERROR(lower_graph(*attr.mutable_g(), scope, depth + 1));
      for (auto& branch : *attr.mutable_graphs()) {
        HSCHED_RETURN_IF_ERROR(lower_graph(branch, scope, depth + 1));
      }
    }
  }
  return Status::ok();
}

}  // namespace

Status lower_opset18(onnx::ModelProto& model) {
  HSCHED_RETURN_IF_ERROR(lower_graph(*model.mutable_graph(), {}, 0));
  for (auto& import : *model.mutable_opset_import()) {
    if (is_default_domain(import.domain())) import.set_version(kMaxOpset);
  }
  return Status::ok();
}

Status read_as_ir8(onnx::ModelProto& model) {
  HSCHED_RETURN_IF_ERROR(refuse_overloads(model.graph().node()));
  for (const onnx::FunctionProto& function : model.functions()) {
    const std::string overload = unknown_overload(function.unknown_fields(), 13);
    if (!overload.empty()) {
      return invalid_argument("function '" + function.name() + "' is the overload '" +
                              overload.substr(0, 64) + "' (IR 10), which hsched does not read");
    }
    HSCHED_RETURN_IF_ERROR(refuse_overloads(function.node()));
  }
  model.set_ir_version(onnx::Version::IR_VERSION);
  return Status::ok();
}

}  // namespace hsched
