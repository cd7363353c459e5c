#include "graph/newer_opsets.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <google/protobuf/unknown_field_set.h>
#include <onnx/onnx_pb.h>

#include "graph/node_expansion.h"
#include "graph/node_proto.h"
#include "graph/onnx_import.h"
#include "graph/onnx_validate.h"
#include "graph/tensor_proto.h"

namespace hsched {
namespace {

const std::set<std::string>& reduce_ops_with_axes_input() {
  static const std::set<std::string> ops = {"ReduceL1",        "ReduceL2",   "ReduceLogSum",
                                            "ReduceLogSumExp", "ReduceMax",  "ReduceMean",
                                            "ReduceMin",       "ReduceProd", "ReduceSumSquare"};
  return ops;
}

// Ops of opsets 18 to 22 with no opset-17 form here, and the opset each came in.
const std::map<std::string, int>& new_ops() {
  static const std::map<std::string, int> ops = {
      {"BitwiseAnd", 18},    {"BitwiseNot", 18},   {"BitwiseOr", 18},          {"BitwiseXor", 18},
      {"CenterCropPad", 18}, {"Col2Im", 18},       {"GroupNormalization", 18}, {"DeformConv", 19},
      {"AffineGrid", 20},    {"ImageDecoder", 20}, {"RegexFullMatch", 20},     {"StringConcat", 20},
      {"StringSplit", 20}};
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
  return unimplemented(label + ": " + what + " (opsets 18 to " + std::to_string(kNewestOpset) +
                       " are read through their opset-17 forms)");
}

// Erases attribute `name` when it holds `neutral` (or is absent); refuses it otherwise.
Status drop_neutral(onnx::NodeProto& node, const std::string& label, const std::string& name,
                    int64_t neutral) {
  const auto* attr = find_attr(node, name);
  if (attr != nullptr) {
    const bool ints = attr->type() == onnx::AttributeProto::INTS;
    const bool is_neutral = ints ? std::all_of(attr->ints().begin(), attr->ints().end(),
                                               [&](int64_t v) { return v == neutral; })
                                 : attr->i() == neutral;
    if (!is_neutral)
      return refuse(label, "attribute '" + name + "' other than " + std::to_string(neutral) +
                               " is not supported");
  }
  erase_attr(node, name);
  return Status::ok();
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

// Gelu (opset 20) as its formula (Expansion::gelu).
Status lower_gelu(Expansion& e) {
  const auto* approximate = find_attr(e.node(), "approximate");
  const std::string mode = approximate != nullptr ? approximate->s() : "none";
  if (mode != "none" && mode != "tanh") {
    return invalid_argument(e.label() + ": approximate '" + mode + "' is not 'none' or 'tanh'");
  }
  HSCHED_RETURN_IF_ERROR(e.check_inputs({0}, 1));
  e.gelu(e.input(0), mode == "tanh", e.node().output(0));
  return Status::ok();
}

// QuantizeLinear's attributes of opsets 19 and 21: saturate (float8 only) dropped, block_size 0
// dropped, output_dtype dropped where the zero point (or its absence: uint8) already says it and
// an int8 zero point of 0 added where it is int8 without one.
Status lower_quantize(onnx::NodeProto& node, const std::string& label, Expansion& e) {
  erase_attr(node, "saturate");
  HSCHED_RETURN_IF_ERROR(drop_neutral(node, label, "block_size", 0));
  const int64_t output_dtype = int_attr(node, "output_dtype", 0);
  erase_attr(node, "output_dtype");
  if (output_dtype == 0 || has_input(node, 2) || output_dtype == onnx::TensorProto::UINT8) {
    return Status::ok();
  }
  if (output_dtype != onnx::TensorProto::INT8) {
    return refuse(label, "output_dtype " + std::to_string(output_dtype) + " is not int8 or uint8");
  }
  if (node.output_size() != 1 || node.output(0).empty()) {
    return invalid_argument(label + ": expected one output");
  }
  while (node.input_size() < 2) node.add_input("");
  node.add_input(e.int8_zero());
  return Status::ok();
}

// Rewrites `node`, of a model of `opset`, into its opset-17 form: in place (false), or as the
// nodes of `e` (true). The initializers `e` made go into the graph either way.
Result<bool> lower_node(onnx::NodeProto& node, Expansion& e, const Scope& scope, int64_t opset) {
  const std::string& op = node.op_type();
  const std::string& label = e.label();
  if (reduce_ops_with_axes_input().count(op) != 0) {
    HSCHED_RETURN_IF_ERROR(lower_reduce(node, label, scope));
    return false;
  }
  if (const auto added = new_ops().find(op); added != new_ops().end()) {
    return refuse(label, "the op is new in opset " + std::to_string(added->second));
  }
  if (op == "Gelu" && opset >= 20) {
    HSCHED_RETURN_IF_ERROR(lower_gelu(e));
    return true;
  }
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
    const auto* mode = find_attr(node, "mode");
    if (mode != nullptr && mode->s() == "wrap")
      return refuse(label, "mode 'wrap' is not supported");
    keep_inputs(node, 3);
  } else if (op == "Resize") {
    if (int_attr(node, "antialias", 0) != 0) return refuse(label, "antialias is not supported");
    if (find_attr(node, "axes") != nullptr)
      return refuse(label, "attribute 'axes' is not supported");
    const auto* policy = find_attr(node, "keep_aspect_ratio_policy");
    if (policy != nullptr && policy->s() != "stretch") {
      return refuse(label, "keep_aspect_ratio_policy '" + policy->s() + "' is not supported");
    }
    const auto* coordinates = find_attr(node, "coordinate_transformation_mode");
    if (coordinates != nullptr && coordinates->s() == "half_pixel_symmetric") {
      return refuse(label,
                    "coordinate_transformation_mode 'half_pixel_symmetric' is not supported");
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
  } else if (op == "AveragePool") {
    HSCHED_RETURN_IF_ERROR(drop_neutral(node, label, "dilations", 1));
  } else if (op == "Cast" || op == "CastLike") {
    erase_attr(node, "saturate");  // (float8 only)
  } else if (op == "QuantizeLinear") {
    HSCHED_RETURN_IF_ERROR(lower_quantize(node, label, e));
  } else if (op == "DequantizeLinear") {
    HSCHED_RETURN_IF_ERROR(drop_neutral(node, label, "block_size", 0));
  } else if (op == "GridSample" && opset >= 20) {
    const auto* mode = find_attr(node, "mode");
    const std::string m = mode != nullptr ? mode->s() : "linear";
    if (m != "linear" && m != "cubic" && m != "nearest") {
      return invalid_argument(label + ": mode '" + m + "' is not linear, cubic or nearest");
    }
    erase_attr(node, "mode");
    onnx::AttributeProto* attr = node.add_attribute();
    attr->set_name("mode");
    attr->set_type(onnx::AttributeProto::STRING);
    attr->set_s(m == "linear" ? "bilinear" : m == "cubic" ? "bicubic" : m);
  } else if (op == "DFT" && opset >= 20) {
    return refuse(label, "DFT of opset 20 (its axis an input) is not supported");
  }
  return false;
}

Status lower_graph(onnx::GraphProto& graph, Scope scope, int depth, int64_t opset) {
  scope.push_back(&graph);
  // The nodes once one is replaced by several: those before it copied, the rest as they come.
  std::optional<google::protobuf::RepeatedPtrField<onnx::NodeProto>> lowered;
  for (int i = 0; i < graph.node_size(); ++i) {
    onnx::NodeProto& node = *graph.mutable_node(i);
    if (depth < kMaxRewriteDepth) {
      for (auto& attr : *node.mutable_attribute()) {
        if (attr.has_g()) {
          HSCHED_RETURN_IF_ERROR(lower_graph(*attr.mutable_g(), scope, depth + 1, opset));
        }
        for (auto& branch : *attr.mutable_graphs()) {
          HSCHED_RETURN_IF_ERROR(lower_graph(branch, scope, depth + 1, opset));
        }
      }
    }
    if (!is_default_domain(node.domain())) {
      if (lowered) *lowered->Add() = node;
      continue;
    }
    Expansion e(node, i, scope, opset);
    HSCHED_ASSIGN_OR_RETURN(const bool replaced, lower_node(node, e, scope, opset));
    for (onnx::TensorProto& t : e.initializers()) *graph.add_initializer() = std::move(t);
    if (replaced && !lowered) lowered.emplace(graph.node().begin(), graph.node().begin() + i);
    if (!lowered) continue;
    if (!replaced) {
      *lowered->Add() = node;
      continue;
    }
    for (onnx::NodeProto& n : e.nodes()) *lowered->Add() = std::move(n);
  }
  if (lowered) graph.mutable_node()->Swap(&*lowered);
  return Status::ok();
}

}  // namespace

Status lower_newer_opsets(onnx::ModelProto& model, int64_t opset) {
  HSCHED_RETURN_IF_ERROR(lower_graph(*model.mutable_graph(), {}, 0, opset));
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
