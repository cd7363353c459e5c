#include "graph/shape_fold.h"

#include <unordered_map>
#include <unordered_set>

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include "graph/function_inline.h"
#include "graph/if_inline.h"
#include "graph/inference_guards.h"
#include "graph/loop_unroll.h"
#include "graph/microsoft_ops.h"
#include "graph/onnx_validate.h"
#include "graph/rank_bound.h"
#include "graph/shape_eval.h"

namespace hsched {
namespace {

// Each round folds every node it can in one pass; a new round only helps when inference found
// new static shapes, so a handful is plenty for real exporters.
constexpr int kMaxRounds = 32;

// ConstantOfShape, Reshape and Expand take the rank of their output from the length of a shape
// input, Unsqueeze (opset 13 on) adds the length of its axes input to it, and libonnx builds that
// rank without bound (a Range of 17 million elements feeding a ConstantOfShape: found by the
// fuzzer). So shapes are first inferred without those nodes, on a copy that keeps only small
// weights, and a shape input longer than kMaxRank is refused. (check_rank_bounds() has bounded
// every other rank libonnx builds before this runs.)
Status check_shape_input_lengths(const onnx::ModelProto& model) {
  static const std::unordered_map<std::string, int> kShapeInput{
      {"ConstantOfShape", 0}, {"Reshape", 1}, {"Expand", 1}, {"Unsqueeze", 1}};
  onnx::ModelProto probe;
  *probe.mutable_opset_import() = model.opset_import();
  probe.set_ir_version(model.ir_version());
  onnx::GraphProto& graph = *probe.mutable_graph();
  const onnx::GraphProto& source = model.graph();
  *graph.mutable_input() = source.input();
  *graph.mutable_value_info() = source.value_info();
  std::vector<std::pair<int, std::string>> watched;  // node index, its shape input
  for (int i = 0; i < source.node_size(); ++i) {
    const onnx::NodeProto& node = source.node(i);
    auto it = kShapeInput.find(node.op_type());
    if (it != kShapeInput.end() && node.input_size() > it->second) {
      watched.emplace_back(i, node.input(it->second));
    } else {
      *graph.add_node() = node;
    }
  }
  if (watched.empty()) return Status::ok();
  std::unordered_map<std::string, int64_t> lengths;
  for (const auto& init : source.initializer()) {
    int64_t elements = 1;
    for (int64_t d : init.dims()) elements *= d;  // validated: bounded
    if (init.dims_size() == 1) lengths[init.name()] = init.dims(0);
    if (elements <= kMaxFoldElements) *graph.add_initializer() = init;
  }
  try {
    onnx::shape_inference::InferShapes(probe, onnx::OpSchemaRegistry::Instance(),
                                       onnx::ShapeInferenceOptions(false, 0, false));
  } catch (const std::exception&) {
    return Status::ok();  // the real inference reports it
  }
  for (const auto& info : graph.value_info()) {
    const auto& type = info.type().tensor_type();
    if (type.has_shape() && type.shape().dim_size() == 1 && type.shape().dim(0).has_dim_value()) {
      lengths[info.name()] = type.shape().dim(0).dim_value();
    }
  }
  for (const auto& [index, name] : watched) {
    auto it = lengths.find(name);
    if (it != lengths.end() && it->second > static_cast<int64_t>(kMaxRank)) {
      return invalid_argument(node_description(source.node(index), index) + ": shape input '" +
                              name + "' has " + std::to_string(it->second) +
                              " elements, more than the rank limit of " + std::to_string(kMaxRank));
    }
  }
  return Status::ok();
}

Status run_onnx_inference(onnx::ModelProto& model) {
  // Branches are inferred once inlined, as part of the main graph (see IfNodesSetAside).
  IfNodesSetAside ifs(*model.mutable_graph());
  HSCHED_RETURN_IF_ERROR(check_rank_bounds(model.graph()));
  HSCHED_RETURN_IF_ERROR(check_shape_input_lengths(model));
  // check_type off (hsched validated types), node errors not thrown (error_mode 0), data
  // propagation off: libonnx's has no size bounds (a Range feeding ConstantOfShape made it build
  // a 17-million-dim shape: found by the fuzzer); hsched's bounded evaluator folds those chains.
  onnx::ShapeInferenceOptions options(false, 0, false);
  install_inference_guards();
  try {
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception& e) {
    std::string what = e.what();
    what = what.substr(0, what.find('\n'));
    return invalid_argument("ONNX shape inference failed: " + what);
  }
  return Status::ok();
}

void forget_shapes(onnx::GraphProto& graph) {
  graph.clear_value_info();
  for (auto& output : *graph.mutable_output()) {
    if (output.type().has_tensor_type()) {
      output.mutable_type()->mutable_tensor_type()->clear_shape();
    }
  }
}

// Constant nodes become initializers; a `value` tensor is moved, not copied.
Status constants_to_initializers(onnx::GraphProto& graph, int64_t opset, ExternalData& external) {
  google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
  for (int i = 0; i < graph.node_size(); ++i) {
    onnx::NodeProto& node = *graph.mutable_node(i);
    const bool is_constant = node.op_type() == "Constant" &&
                             (node.domain().empty() || node.domain() == "ai.onnx") &&
                             node.output_size() == 1;
    bool converted = false;
    if (is_constant) {
      for (auto& attr : *node.mutable_attribute()) {
        if (attr.name() == "value" && attr.has_t()) {
          onnx::TensorProto* init = graph.add_initializer();
          init->Swap(attr.mutable_t());
          init->set_name(node.output(0));
          converted = true;
        }
      }
      if (!converted) {
        HSCHED_ASSIGN_OR_RETURN(AttributeMap attrs, attributes_from_proto(node, external));
        auto result = evaluate_op("Constant", attrs, {}, opset);
        if (result.is_ok()) {
          tensor_to_proto(result->front(), node.output(0), graph.add_initializer());
          converted = true;
        } else if (result.status().code() != ErrorCode::kUnimplemented) {
          return result.status().with_context(node_description(node, i));
        }
      }
    }
    if (!converted) kept.Add()->Swap(&node);
  }
  graph.mutable_node()->Swap(&kept);
  return Status::ok();
}

// Drops the initializers nothing reads any more: a folded chain's own constants, the condition
// of an inlined If and what only its other branch read.
void drop_unused_initializers(onnx::GraphProto& graph) {
  NameSet used;
  for (const auto& node : graph.node()) {
    used.insert(node.input().begin(), node.input().end());
    add_outer_reads(node, used);
  }
  for (const auto& output : graph.output()) used.insert(output.name());
  for (const auto& input : graph.input()) used.insert(input.name());
  google::protobuf::RepeatedPtrField<onnx::TensorProto> live;
  for (auto& init : *graph.mutable_initializer()) {
    if (used.count(init.name())) live.Add()->Swap(&init);
  }
  graph.mutable_initializer()->Swap(&live);
}

// One pass over the nodes in order, folding every evaluable node whose inputs are known.
// Returns the number of nodes folded.
Result<int> fold_pass(onnx::GraphProto& graph, int64_t opset, ExternalData& external) {
  std::unordered_map<std::string, const onnx::TypeProto*> types;
  for (const auto& v : graph.input()) types[v.name()] = &v.type();
  for (const auto& v : graph.value_info()) types[v.name()] = &v.type();
  for (const auto& v : graph.output()) types[v.name()] = &v.type();
  std::unordered_map<std::string, const onnx::TensorProto*> initializers;
  for (const auto& init : graph.initializer()) initializers[init.name()] = &init;

  // Values known so far: small initializers (converted on first use) and folded outputs.
  std::unordered_map<std::string, Tensor> known;
  auto lookup = [&](const std::string& name) -> const Tensor* {
    auto it = known.find(name);
    if (it != known.end()) return &it->second;
    auto init = initializers.find(name);
    if (init == initializers.end()) return nullptr;
    int64_t elements = 1;
    for (int64_t d : init->second->dims()) elements *= d;  // validated: bounded, no overflow
    if (elements > kMaxFoldElements) return nullptr;
    auto tensor = tensor_from_proto(*init->second, &external);
    if (!tensor.is_ok()) return nullptr;
    return &known.emplace(name, std::move(tensor).value()).first->second;
  };

  std::vector<onnx::TensorProto> folded_values;
  std::vector<bool> folded(static_cast<size_t>(graph.node_size()), false);
  int count = 0;
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    if (!(node.domain().empty() || node.domain() == "ai.onnx") || node.output_size() != 1 ||
        !is_evaluable_op(node.op_type())) {
      continue;
    }
    std::vector<EvalInput> inputs;
    bool ready = true;
    for (int k = 0; k < node.input_size() && ready; ++k) {
      const std::string& name = node.input(k);
      EvalInput in;
      if (name.empty()) {
        in.omitted = true;
      } else {
        in.value = lookup(name);
        auto type = types.find(name);
        if (type != types.end()) {
          in.shape = shape_from_type(*type->second);
          in.dtype =
              dtype_from_onnx(type->second->tensor_type().elem_type()).value_or(DType::kUndefined);
        }
        if (in.value != nullptr) {
          in.shape = in.value->shape();
          in.dtype = in.value->dtype();
        }
        ready = in.value != nullptr || needs_only_input_type(node.op_type(), k);
      }
      inputs.push_back(std::move(in));
    }
    if (!ready) continue;
    HSCHED_ASSIGN_OR_RETURN(AttributeMap attrs, attributes_from_proto(node, external));
    auto outputs = evaluate_op(node.op_type(), attrs, inputs, opset);
    if (!outputs.is_ok()) {
      if (outputs.status().code() == ErrorCode::kUnimplemented) continue;
      return outputs.status().with_context(node_description(node, i));
    }
    onnx::TensorProto proto;
    tensor_to_proto(outputs->front(), node.output(0), &proto);
    folded_values.push_back(std::move(proto));
    known.emplace(node.output(0), std::move(outputs->front()));
    folded[static_cast<size_t>(i)] = true;
    ++count;
  }
  if (count == 0) return 0;

  google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
  for (int i = 0; i < graph.node_size(); ++i) {
    if (!folded[static_cast<size_t>(i)]) kept.Add()->Swap(graph.mutable_node(i));
  }
  graph.mutable_node()->Swap(&kept);
  // A folded value's old value_info would shadow its new, exact initializer in the next round.
  std::unordered_set<std::string> folded_names;
  for (auto& value : folded_values) {
    folded_names.insert(value.name());
    graph.add_initializer()->Swap(&value);
  }
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> infos;
  for (auto& info : *graph.mutable_value_info()) {
    if (folded_names.count(info.name()) == 0) infos.Add()->Swap(&info);
  }
  graph.mutable_value_info()->Swap(&infos);

  drop_unused_initializers(graph);
  return count;
}

}  // namespace

Status infer_and_fold(onnx::ModelProto& model, int64_t opset, ExternalData& external,
                      bool forget_declared_shapes) {
  onnx::GraphProto& graph = *model.mutable_graph();
  if (forget_declared_shapes) forget_shapes(graph);
  HSCHED_RETURN_IF_ERROR(constants_to_initializers(graph, opset, external));
  int64_t expansion_budget = kMaxInlinedNodes;
  std::vector<PredicatedOutput> predicated;
  for (int round = 0; round < kMaxRounds; ++round) {
    HSCHED_RETURN_IF_ERROR(run_onnx_inference(model));
    HSCHED_ASSIGN_OR_RETURN(const int folded, fold_pass(graph, opset, external));
    // An If whose condition is now an initializer gives way to its branch, a Loop of known trips
    // and a Scan of known length to their unrolled bodies, and an op run as its function body
    // (typed by this round's inference) to the body: their nodes may fold, or expand, in the
    // next round. Ifs whose conditions no longer change are predicated.
    HSCHED_ASSIGN_OR_RETURN(int inlined, inline_constant_ifs(graph, external));
    HSCHED_ASSIGN_OR_RETURN(const int unrolled,
                            unroll_constant_loops(graph, external, opset, expansion_budget));
    HSCHED_ASSIGN_OR_RETURN(const int scanned, unroll_scans(graph, opset, expansion_budget));
    inlined += unrolled + scanned;
    HSCHED_ASSIGN_OR_RETURN(int expanded, expand_function_ops(graph, opset, expansion_budget));
    HSCHED_ASSIGN_OR_RETURN(const int fused_matmuls, lower_transposed_fused_matmuls(graph, opset));
    expanded += fused_matmuls;
    int selects = 0;
    if (folded + inlined + expanded == 0) {
      HSCHED_ASSIGN_OR_RETURN(auto more, predicate_ifs(graph));
      selects = static_cast<int>(more.size());
      predicated.insert(predicated.end(), more.begin(), more.end());
    }
    if (inlined + expanded + selects > 0) {
      HSCHED_RETURN_IF_ERROR(constants_to_initializers(graph, opset, external));
      drop_unused_initializers(graph);
    }
    // Nothing changed after this round's inference: its types are the final graph's.
    if (folded + inlined + expanded + selects == 0) {
      HSCHED_RETURN_IF_ERROR(refuse_remaining_loops(graph));
      return check_predicated_ifs(graph, predicated);
    }
  }
  HSCHED_RETURN_IF_ERROR(refuse_remaining_loops(graph));
  HSCHED_ASSIGN_OR_RETURN(auto last, predicate_ifs(graph));
  predicated.insert(predicated.end(), last.begin(), last.end());
  HSCHED_RETURN_IF_ERROR(run_onnx_inference(model));
  return check_predicated_ifs(graph, predicated);
}

}  // namespace hsched
