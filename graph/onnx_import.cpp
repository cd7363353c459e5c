#include "graph/onnx_import.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <onnx/version_converter/convert.h>

#include "core/mapped_file.h"
#include "graph/half_models.h"
#include "graph/onnx_validate.h"
#include "graph/shape_fold.h"
#include "graph/tensor_proto.h"

namespace hsched {
namespace {

namespace fs = std::filesystem;

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// Fixes the dims of the named graph inputs. Dims the model already fixes must agree.
Status apply_input_shapes(onnx::GraphProto& graph, const ImportOptions& options) {
  std::unordered_set<std::string> initializers;
  for (const auto& init : graph.initializer()) initializers.insert(init.name());
  for (const auto& [name, dims] : options.input_shapes) {
    const std::string flag = "--input-shape " + name;
    onnx::ValueInfoProto* input = nullptr;
    std::string names;
    for (auto& candidate : *graph.mutable_input()) {
      if (initializers.count(candidate.name())) continue;
      if (candidate.name() == name) input = &candidate;
      names += (names.empty() ? "" : ", ") + candidate.name();
    }
    if (input == nullptr) {
      return invalid_argument(flag + ": the model has no input named '" + name + "' (inputs: " +
                              names + ")");
    }
    auto* shape = input->mutable_type()->mutable_tensor_type()->mutable_shape();
    if (shape->dim_size() != 0 && static_cast<size_t>(shape->dim_size()) != dims.size()) {
      return invalid_argument(flag + ": " + std::to_string(dims.size()) +
                              " dims given, but the input has rank " +
                              std::to_string(shape->dim_size()));
    }
    HSCHED_RETURN_IF_ERROR(checked_elements(dims).status().with_context(flag));
    if (shape->dim_size() == 0) {
      for (size_t i = 0; i < dims.size(); ++i) shape->add_dim();
    }
    for (size_t i = 0; i < dims.size(); ++i) {
      auto* dim = shape->mutable_dim(static_cast<int>(i));
      if (dim->has_dim_value() && dim->dim_value() != dims[i]) {
        return invalid_argument(flag + ": dim " + std::to_string(i) + " is fixed to " +
                                std::to_string(dim->dim_value()) + " by the model");
      }
      dim->set_dim_value(dims[i]);
    }
  }
  return Status::ok();
}

// The checker's graph pass, with the model's folder set so that it finds external data (whose
// paths hsched has already confined to that folder). IR version and opsets were checked before.
Status run_checker(const onnx::ModelProto& model, const fs::path& base_dir) {
  onnx::checker::CheckerContext context;
  context.set_ir_version(static_cast<int>(model.ir_version()));
  std::unordered_map<std::string, int> opsets;
  for (const auto& import : model.opset_import()) {
    opsets[import.domain()] = static_cast<int>(import.version());
  }
  context.set_opset_imports(std::move(opsets));
  context.set_model_dir(base_dir.string());
  try {
    onnx::checker::check_graph(model.graph(), context, onnx::checker::LexicalScopeContext());
  } catch (const std::exception& e) {
    return invalid_argument("ONNX checker: " + first_line(e.what()));
  }
  return Status::ok();
}

// run_checker for a model whose graph outputs may declare no shape. libonnx 1.12's checker wants
// one on every graph input and output; the IR reads a missing shape as an unknown one, and ONNX
// Runtime runs such models (`make_tensor_value_info(name, type, None)` writes them). An output's
// shape is inferred, so the checker sees an empty one in its place, taken away again after.
Status run_checker_on_outputs_of_any_shape(onnx::ModelProto& model, const fs::path& base_dir) {
  std::vector<onnx::TypeProto_Tensor*> shapeless;
  for (auto& output : *model.mutable_graph()->mutable_output()) {
    if (output.type().has_tensor_type() && !output.type().tensor_type().has_shape()) {
      shapeless.push_back(output.mutable_type()->mutable_tensor_type());
      shapeless.back()->mutable_shape();
    }
  }
  Status status = run_checker(model, base_dir);
  for (onnx::TypeProto_Tensor* type : shapeless) type->clear_shape();
  return status;
}

// A graph input (not an initializer) that declares no shape, and no --input-shape gave it one.
Status check_input_shapes_declared(const onnx::GraphProto& graph) {
  std::unordered_set<std::string> initializers;
  for (const auto& init : graph.initializer()) initializers.insert(init.name());
  for (const auto& input : graph.input()) {
    if (input.type().has_tensor_type() && !input.type().tensor_type().has_shape() &&
        initializers.count(input.name()) == 0) {
      return invalid_argument("input '" + input.name() + "' declares no shape: give its dims " +
                              "with --input-shape " + input.name() + "=D1,D2,...");
    }
  }
  return Status::ok();
}

// Builds the Graph from a validated, shape-inferred and folded model, taking over its weights.
Result<Graph> to_graph(onnx::ModelProto& model, int64_t opset, ExternalData& external) {
  onnx::GraphProto& proto = *model.mutable_graph();
  Graph graph;
  graph.name = proto.name();
  graph.opset = opset;
  std::unordered_map<std::string, const onnx::TypeProto*> types;
  for (const auto& v : proto.input()) types[v.name()] = &v.type();
  for (const auto& v : proto.value_info()) types[v.name()] = &v.type();
  for (const auto& v : proto.output()) types[v.name()] = &v.type();

  for (auto& init : *proto.mutable_initializer()) {
    auto tensor = take_tensor_from_proto(init, &external);
    if (!tensor.is_ok()) return tensor.status();
    graph.add_constant(init.name(), std::move(tensor).value());
  }
  for (const auto& input : proto.input()) {
    if (graph.find_value(input.name())) continue;  // an initializer listed as input (IR < 4)
    graph.add_input(graph.add_value(input.name(), dtype_from_type(input.type()),
                                    shape_from_type(input.type())));
  }
  for (int i = 0; i < proto.node_size(); ++i) {
    const onnx::NodeProto& np = proto.node(i);
    Node node;
    node.name = np.name();
    node.op_type = np.op_type();
    node.domain = np.domain() == "ai.onnx" ? "" : np.domain();
    for (const auto& in : np.input()) {
      node.inputs.push_back(in.empty() ? kNoValue : graph.find_value(in).value());
    }
    for (const auto& out : np.output()) {
      if (out.empty()) {
        node.outputs.push_back(kNoValue);
        continue;
      }
      DType dtype = DType::kUndefined;
      Shape shape;
      auto type = types.find(out);
      if (type != types.end()) {
        const auto& tensor_type = type->second->tensor_type();
        if (tensor_type.elem_type() != 0 && !dtype_from_onnx(tensor_type.elem_type())) {
          return invalid_argument(node_description(np, i) + ": output '" + out + "' has dtype " +
                                  std::string(onnx_dtype_name(tensor_type.elem_type())) +
                                  ", which hsched does not support");
        }
        dtype = dtype_from_type(*type->second);
        shape = shape_from_type(*type->second);
        // Inferred shapes are bounded like declared ones: the model decides them too.
        std::vector<int64_t> known;
        for (int64_t d : shape.dims) {
          if (d >= 0) known.push_back(d);
        }
        if (shape.rank() > kMaxRank || !checked_elements(known).is_ok()) {
          return invalid_argument(node_description(np, i) + ": output '" + out + "' would be " +
                                  (shape.rank() > kMaxRank ? "of rank " + std::to_string(shape.rank())
                                                           : "too large") +
                                  ", beyond hsched's limits");
        }
      }
      node.outputs.push_back(graph.add_value(out, dtype, std::move(shape)));
    }
    auto attrs = attributes_from_proto(np, external);
    if (!attrs.is_ok()) return attrs.status().with_context(node_description(np, i));
    node.attributes = std::move(attrs).value();
    graph.add_node(std::move(node));
  }
  for (const auto& output : proto.output()) graph.add_output(graph.find_value(output.name()).value());
  return graph;
}

// The opset of the default domain the model imports, or -1.
int64_t imported_opset(const onnx::ModelProto& model) {
  int64_t opset = -1;
  for (const auto& import : model.opset_import()) {
    if (import.domain().empty() || import.domain() == "ai.onnx") opset = import.version();
  }
  return opset;
}

// libonnx's Gemm 6 -> 7 adapter reads dims 0 and 1 of A's and B's declared shapes without
// checking their rank (a scalar A dereferences null). Gemm needs 2-D operands at every opset, so a
// declared rank other than 2 is refused before the converter runs. Undeclared shapes are the
// adapter's own refusal ("Shape of input ... is not available").
Status check_gemm_ranks_for_upgrade(const onnx::GraphProto& graph) {
  // Every declaration counts: a name may be declared more than once.
  std::unordered_map<std::string, int> ranks;  // a declared rank other than 2, by name
  auto declare = [&](const std::string& name, int rank) {
    if (rank != 2) ranks.emplace(name, rank);
  };
  for (const auto* values : {&graph.input(), &graph.value_info(), &graph.output()}) {
    for (const auto& value : *values) {
      if (value.type().has_tensor_type() && value.type().tensor_type().has_shape()) {
        declare(value.name(), value.type().tensor_type().shape().dim_size());
      }
    }
  }
  for (const auto& init : graph.initializer()) declare(init.name(), init.dims_size());
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto& node = graph.node(i);
    const bool default_domain = node.domain().empty() || node.domain() == "ai.onnx";
    if (node.op_type() != "Gemm" || !default_domain) continue;
    for (int k = 0; k < std::min(node.input_size(), 2); ++k) {
      const auto rank = ranks.find(node.input(k));
      if (rank != ranks.end()) {
        return invalid_argument(node_description(node, i) + ": input '" + node.input(k) +
                                "' has rank " + std::to_string(rank->second) +
                                "; Gemm takes 2-D matrices");
      }
    }
  }
  return Status::ok();
}

// A model of an opset below kMinOpset, upgraded to kMinOpset by libonnx's version converter
// (its adapters rewrite the ops whose definition changed). The converter's own import of the
// graph dereferences undefined names, so the model must first pass hsched's validation and the
// checker at its own opset. Models with external data or model-local functions (neither existed
// in those opsets' exporters) are refused.
Status upgrade_old_opset(onnx::ModelProto& model, int64_t opset, ExternalData& external,
                         const fs::path& base_dir) {
  const std::string label = "opset " + std::to_string(opset);
  if (model.functions_size() > 0) {
    return invalid_argument(label + " with model-local functions is not supported (they need " +
                            "opset " + std::to_string(kMinOpset) + " or above)");
  }
  for (const auto& init : model.graph().initializer()) {
    if (init.data_location() == onnx::TensorProto::EXTERNAL) {
      return invalid_argument(label + " with external data is not supported (it needs opset " +
                              std::to_string(kMinOpset) + " or above)");
    }
  }
  HSCHED_RETURN_IF_ERROR(validate_and_sort(model, external).status());
  HSCHED_RETURN_IF_ERROR(run_checker(model, base_dir));
  if (opset < 7) HSCHED_RETURN_IF_ERROR(check_gemm_ranks_for_upgrade(model.graph()));
  try {
    model = onnx::version_conversion::ConvertVersion(model, static_cast<int>(kMinOpset));
  } catch (const std::exception& e) {
    return invalid_argument(label + " could not be upgraded to opset " +
                            std::to_string(kMinOpset) + ": " + first_line(e.what()));
  }
  return Status::ok();
}

Result<Graph> import_model(onnx::ModelProto& model, const ImportOptions& options,
                           const fs::path& base_dir) {
  ExternalData external(base_dir);
  if (const int64_t opset = imported_opset(model); opset >= 1 && opset < kMinOpset) {
    HSCHED_RETURN_IF_ERROR(upgrade_old_opset(model, opset, external, base_dir));
  }
  HSCHED_ASSIGN_OR_RETURN(const int64_t opset, validate_and_sort(model, external));
  if (opset < kMinOpset) {
    return invalid_argument("opset " + std::to_string(opset) + " could not be upgraded to opset " +
                            std::to_string(kMinOpset));
  }
  HSCHED_RETURN_IF_ERROR(apply_input_shapes(*model.mutable_graph(), options));
  HSCHED_RETURN_IF_ERROR(check_input_shapes_declared(model.graph()));
  HSCHED_RETURN_IF_ERROR(run_checker_on_outputs_of_any_shape(model, base_dir));
  HSCHED_RETURN_IF_ERROR(infer_and_fold(model, opset, external, !options.input_shapes.empty()));
  HSCHED_ASSIGN_OR_RETURN(Graph graph, to_graph(model, opset, external));
  return widen_half_values(std::move(graph));
}

}  // namespace

Status add_input_shape_flag(const std::string& flag, ImportOptions& options) {
  const size_t eq = flag.rfind('=');
  if (eq == std::string::npos || eq == 0) {
    return invalid_argument("--input-shape '" + flag + "': expected NAME=D1,D2,...");
  }
  const std::string name = flag.substr(0, eq);
  auto dims = parse_dims(flag.substr(eq + 1));
  if (!dims.is_ok()) return dims.status().with_context("--input-shape '" + flag + "'");
  if (!options.input_shapes.emplace(name, std::move(dims).value()).second) {
    return invalid_argument("--input-shape '" + flag + "': input '" + name + "' given twice");
  }
  return Status::ok();
}

Result<Graph> import_onnx_model(onnx::ModelProto& model, const ImportOptions& options,
                                const std::string& display_name, const fs::path& base_dir) {
  Result<Graph> graph = [&]() -> Result<Graph> {
    // libonnx reports problems by throwing; none may escape to the caller.
    try {
      return import_model(model, options, base_dir);
    } catch (const std::exception& e) {
      return invalid_argument("libonnx rejected the model: " + first_line(e.what()));
    }
  }();
  if (!graph.is_ok()) return graph.status().with_context(display_name);
  return graph;
}

Result<Graph> import_onnx_bytes(std::string_view bytes, const ImportOptions& options,
                                const std::string& display_name, const fs::path& base_dir) {
  if (bytes.empty()) return invalid_argument(display_name + ": empty file");
  if (bytes.size() > static_cast<size_t>(kMaxProtobufBytes)) {
    return invalid_argument(display_name + ": " + std::to_string(bytes.size()) +
                            " bytes, more than protobuf's limit of 2 GiB - 1 for one model "
                            "(store the weights as external data)");
  }
  onnx::ModelProto model;
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return invalid_argument(display_name + ": not an ONNX model (protobuf parsing failed)");
  }
  return import_onnx_model(model, options, display_name, base_dir);
}

Result<Graph> import_onnx_file(const fs::path& path, const ImportOptions& options) {
  const std::string display = path.string();
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (ec || !fs::exists(status)) return Status(ErrorCode::kInvalidArgument, display + ": no such file");
  if (fs::is_directory(status)) {
    return invalid_argument(display + ": is a directory, not an ONNX model file");
  }
  auto file = MappedFile::open(path);
  if (!file.is_ok()) return file.status().with_context(display);
  const auto* data = reinterpret_cast<const char*>((*file)->data());
  fs::path base_dir = path.parent_path();
  if (base_dir.empty()) base_dir = ".";
  return import_onnx_bytes(std::string_view(data, (*file)->size()), options, display, base_dir);
}

}  // namespace hsched
