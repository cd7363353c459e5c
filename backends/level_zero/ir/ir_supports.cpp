// ir_supports: which ONNX nodes write_ir can express. Every check here is one the writer relies
// on, so write_ir calls it for each node before emitting anything.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>

#include "backends/level_zero/ir/ir.h"
#include "backends/level_zero/ir/ir_format.h"
#include "backends/level_zero/ir/ir_geometry.h"
#include "backends/level_zero/ir/ir_write.h"

namespace hsched::ir {
namespace {

class Checker {
 public:
  Checker(const Graph& graph, const Node& node, Precision precision)
      : graph_(graph), node_(node), precision_(precision) {}

  // Refuses the node for `reason`: the Status names the node, the op and `why`; reason() keeps
  // the code for ir_refusal.
  Status fail(ReasonCode reason, const std::string& why) const {
    reason_ = reason;
    return unimplemented("node '" + node_.name + "' (" + node_.op_type + "): " + why);
  }
  ReasonCode reason() const { return reason_; }
  const Node& node() const { return node_; }
  const Graph& graph() const { return graph_; }
  Precision precision() const { return precision_; }
  int64_t opset() const { return graph_.opset; }
  const Value* input(size_t i) const {
    return i < node_.inputs.size() && node_.inputs[i] != kNoValue ? &graph_.value(node_.inputs[i])
                                                                  : nullptr;
  }
  const Value& output() const { return graph_.value(node_.outputs[0]); }
  const std::vector<int64_t>& in_dims(size_t i) const { return input(i)->shape.dims; }
  const std::vector<int64_t>& out_dims() const { return output().shape.dims; }
  // The constant input i as f32 or i64 values (nullopt when absent or not constant).
  const Tensor* constant(size_t i) const {
    const Value* v = input(i);
    return v && v->constant ? &*v->constant : nullptr;
  }
  // The node producing input i, or null (a graph input or constant).
  const Node* producer(size_t i) const {
    const Value* v = input(i);
    return v && v->producer != kNoNode ? &graph_.node(v->producer) : nullptr;
  }
  bool is_used(ValueId id) const {
    if (!graph_.value(id).consumers.empty()) return true;
    return std::find(graph_.outputs().begin(), graph_.outputs().end(), id) !=
           graph_.outputs().end();
  }

 private:
  const Graph& graph_;
  const Node& node_;
  Precision precision_;
  mutable ReasonCode reason_ = ReasonCode::kOpUnsupported;
};

using Check = Status (*)(const Checker&);

Status check_node(const Checker& c);

struct OpRule {
  size_t min_inputs;
  size_t max_inputs;
  std::set<size_t> int_inputs;  // inputs that are i64 constants (shapes, axes), not data
  Check check;
  std::set<size_t> quantized_inputs = {};  // 8-bit (or i32 bias) data of Q/DQ
  bool quantized_output = false;
  bool every_output = false;  // all outputs expressed (Split), not the first alone
};

Status no_check(const Checker&) { return Status::ok(); }

Status require_constant(const Checker& c, size_t i, const char* what) {
  if (c.input(i) && !c.constant(i))
    return c.fail(ReasonCode::kOpUnsupported, std::string(what) + " is not a constant");
  return Status::ok();
}

// A constant, or a DequantizeLinear of one (a QDQ model's int8 weights and int32 bias) or of a
// QuantizeLinear of one (its quantized float parameters), which the IR carries as OpenVINO's
// frontend does: Const, (FakeQuantize, Convert,) Convert, Subtract, Multiply.
Status require_constant_or_dequantized(const Checker& c, size_t i, const char* what) {
  const Node* producer = c.producer(i);
  const auto first_input = [&](const Node* node) -> const Value* {
    return node->inputs.empty() || node->inputs[0] == kNoValue ? nullptr
                                                               : &c.graph().value(node->inputs[0]);
  };
  const auto producer_of = [&](const Value* v) -> const Node* {
    return v && v->producer != kNoNode ? &c.graph().node(v->producer) : nullptr;
  };
  while (producer && producer->op_type == "Identity") producer = producer_of(first_input(producer));
  if (!producer || producer->op_type != "DequantizeLinear" || !first_input(producer)) {
    return require_constant(c, i, what);
  }
  // The dequantization (and quantization) joins the node's IR, so it must be expressible too.
  std::vector<const Node*> joining = {producer};
  if (const Node* quantize = producer_of(first_input(producer));
      quantize && quantize->op_type == "QuantizeLinear" && first_input(quantize) &&
      first_input(quantize)->is_constant()) {
    joining.push_back(quantize);
  } else if (!first_input(producer)->is_constant()) {
    return require_constant(c, i, what);
  }
  for (const Node* node : joining) {
    const Status expressible = check_node(Checker(c.graph(), *node, c.precision()));
    if (!expressible.is_ok()) {
      return c.fail(ReasonCode::kOpUnsupported,
                    std::string(what) + " is dequantized by a node the IR cannot express: " +
                        expressible.message());
    }
  }
  return Status::ok();
}

Status check_conv(const Checker& c) {
  HSCHED_RETURN_IF_ERROR(require_constant_or_dequantized(c, 1, "the weights (input 1)"));
  HSCHED_RETURN_IF_ERROR(require_constant_or_dequantized(c, 2, "the bias (input 2)"));
  const auto& x = c.in_dims(0);
  const auto& w = c.in_dims(1);
  const bool transposed = c.node().op_type == "ConvTranspose";
  if (x.size() < 3 || x.size() > 5 || w.size() != x.size()) {
    return c.fail(ReasonCode::kShapeUnsupported,
                  "only 1D, 2D and 3D convolutions with weights of the input's rank");
  }
  const int64_t group = c.node().attr_int("group", 1);
  if (group < 1 || x[1] % group != 0)
    return c.fail(ReasonCode::kAttributeUnsupported, "group does not divide the input channels");
  // Products stay below 2^63: group <= x[1] and w[1] are dims (at most 2^40), so divide instead.
  if (transposed ? w[0] != x[1] || w[1] > kMaxDim / group
                 : (w[1] != x[1] / group || w[0] % group != 0)) {
    return c.fail(ReasonCode::kShapeUnsupported,
                  "weights do not match the input channels and group");
  }
  const int64_t out_channels = transposed ? w[1] * group : w[0];
  if (c.input(2) && (c.in_dims(2).size() != 1 || c.in_dims(2)[0] != out_channels)) {
    return c.fail(ReasonCode::kShapeUnsupported, "bias is not one value per output channel");
  }
  std::vector<int64_t> kernel = c.node().attr_ints("kernel_shape");
  const std::vector<int64_t> w_kernel(w.begin() + 2, w.end());
  if (kernel.empty()) kernel = w_kernel;
  if (kernel != w_kernel)
    return c.fail(ReasonCode::kAttributeUnsupported, "kernel_shape differs from the weights");
  if (c.out_dims().size() != x.size() || c.out_dims()[1] != out_channels) {
    return c.fail(ReasonCode::kShapeUnsupported, "output channels do not match the weights");
  }
  auto geometry = detail::spatial_geometry(c.node(), x, c.out_dims(), kernel, transposed);
  if (!geometry.is_ok())
    return c.fail(ReasonCode::kAttributeUnsupported, geometry.status().message());
  return Status::ok();
}

Status check_pool(const Checker& c) {
  const auto& x = c.in_dims(0);
  if (x.size() < 3 || x.size() > 5)
    return c.fail(ReasonCode::kShapeUnsupported, "only 1D, 2D and 3D pooling");
  if (c.node().attr_int("storage_order", 0) != 0)
    return c.fail(ReasonCode::kAttributeUnsupported, "storage_order=1");
  const bool max = c.node().op_type == "MaxPool";
  for (int64_t d : c.node().attr_ints("dilations")) {
    if (d != 1) return c.fail(ReasonCode::kAttributeUnsupported, "dilations other than 1");
  }
  const auto kernel = c.node().attr_ints("kernel_shape");
  auto geometry = detail::spatial_geometry(c.node(), x, c.out_dims(), kernel, false);
  if (!geometry.is_ok())
    return c.fail(ReasonCode::kAttributeUnsupported, geometry.status().message());
  if (geometry->pads_end_extended) {
    // Written with rounding_type="ceil" on the declared pads (emit_pool), which must give the
    // node's output size; counting the part of a last window past the pads is not expressed.
    if (!detail::ceil_rounding_matches(*geometry, x, c.out_dims())) {
      return c.fail(ReasonCode::kAttributeUnsupported,
                    "ceil_mode where the last window starts in the end padding (OpenVINO's "
                    "rounding_type=ceil keeps that window, ONNX drops it)");
    }
    if (!max && c.node().attr_int("count_include_pad", 0) != 0) {
      return c.fail(ReasonCode::kAttributeUnsupported,
                    "ceil_mode with count_include_pad=1 where the last window passes the pads");
    }
  }
  if (!max && c.node().attr_int("count_include_pad", 0) == 0) {
    // OpenVINO's AvgPool with exclude-pad=true requires each pad to be smaller than the kernel.
    for (size_t i = 0; i < geometry->kernel.size(); ++i) {
      if (geometry->pads_begin[i] >= geometry->kernel[i] ||
          geometry->declared_pads_end[i] >= geometry->kernel[i]) {
        return c.fail(ReasonCode::kAttributeUnsupported,
                      "a pad as large as the kernel with count_include_pad=0");
      }
    }
  }
  return Status::ok();
}

Status check_global_pool(const Checker& c) {
  if (c.in_dims(0).size() < 3) return c.fail(ReasonCode::kShapeUnsupported, "input rank below 3");
  return Status::ok();
}

Status check_gemm(const Checker& c) {
  if (c.in_dims(0).size() != 2 || c.in_dims(1).size() != 2)
    return c.fail(ReasonCode::kShapeUnsupported, "A and B must be 2D");
  return Status::ok();
}

Status check_matmul(const Checker& c) {
  if (c.in_dims(0).empty() || c.in_dims(1).empty())
    return c.fail(ReasonCode::kShapeUnsupported, "scalar operands");
  return Status::ok();
}

Status check_batch_norm(const Checker& c) {
  if (c.node().attr_int("training_mode", 0) != 0)
    return c.fail(ReasonCode::kAttributeUnsupported, "training_mode=1");
  if (c.node().has_attr("spatial") && c.node().attr_int("spatial", 1) != 1)
    return c.fail(ReasonCode::kAttributeUnsupported, "spatial=0");
  const auto& x = c.in_dims(0);
  if (x.size() < 2) return c.fail(ReasonCode::kShapeUnsupported, "input rank below 2");
  for (size_t i = 1; i < 5; ++i) {
    HSCHED_RETURN_IF_ERROR(require_constant(c, i, "a statistics or affine input"));
    if (c.in_dims(i) != std::vector<int64_t>{x[1]})
      return c.fail(ReasonCode::kShapeUnsupported, "parameters are not [C]");
  }
  return Status::ok();
}

Status check_instance_norm(const Checker& c) {
  const auto& x = c.in_dims(0);
  if (x.size() < 3) return c.fail(ReasonCode::kShapeUnsupported, "input rank below 3");
  for (size_t i = 1; i < 3; ++i) {
    HSCHED_RETURN_IF_ERROR(require_constant_or_dequantized(c, i, "scale or bias"));
    if (c.in_dims(i) != std::vector<int64_t>{x[1]})
      return c.fail(ReasonCode::kShapeUnsupported, "scale or bias is not [C]");
  }
  return Status::ok();
}

Status check_layer_norm(const Checker& c) {
  const auto rank = static_cast<int64_t>(c.in_dims(0).size());
  const int64_t axis = c.node().attr_int("axis", -1);
  if (rank == 0 || axis < -rank || axis >= rank)
    return c.fail(ReasonCode::kAttributeUnsupported, "axis out of range");
  const size_t normalized = static_cast<size_t>(rank - (axis < 0 ? axis + rank : axis));
  for (size_t i = 1; i < 3; ++i) {
    if (c.input(i) && c.in_dims(i).size() > normalized) {
      return c.fail(ReasonCode::kShapeUnsupported,
                    "scale or bias has more dims than the normalized axes");
    }
  }
  return Status::ok();
}

Status check_softmax(const Checker& c) {
  const auto rank = static_cast<int64_t>(c.in_dims(0).size());
  const int64_t axis = c.node().attr_int("axis", c.opset() < 13 ? 1 : -1);
  if (rank == 0 || axis < -rank || axis >= rank)
    return c.fail(ReasonCode::kAttributeUnsupported, "axis out of range");
  if (c.opset() < 13 && (axis < 0 ? axis + rank : axis) != rank - 1) {
    // Before opset 13 Softmax flattens to 2D at `axis`: the same only for the last axis.
    return c.fail(ReasonCode::kAttributeUnsupported,
                  "opset < 13 Softmax over more than the last axis");
  }
  return Status::ok();
}

Status check_clip(const Checker& c) {
  if (c.opset() < 11) return Status::ok();  // min and max are attributes
  for (size_t i = 1; i < 3; ++i) {
    HSCHED_RETURN_IF_ERROR(require_constant(c, i, "min or max"));
    if (c.constant(i) && c.constant(i)->elements() != 1)
      return c.fail(ReasonCode::kShapeUnsupported, "min or max is not a scalar");
  }
  return Status::ok();
}

Status check_gelu(const Checker& c) {
  const std::string mode = c.node().attr_string("approximate", "none");
  if (mode != "none" && mode != "tanh")
    return c.fail(ReasonCode::kAttributeUnsupported, "approximate='" + mode + "'");
  return Status::ok();
}

Status check_axes_input(const Checker& c) {
  // Squeeze/Unsqueeze: axes from opset 13 are an input, which must be constant.
  if (c.opset() >= 13) return require_constant(c, 1, "axes (input 1)");
  return Status::ok();
}

Status check_reshape(const Checker& c) { return require_constant(c, 1, "the shape (input 1)"); }

Status check_concat(const Checker& c) {
  const auto rank = static_cast<int64_t>(c.out_dims().size());
  const int64_t axis = c.node().attr_int("axis", 0);
  if (rank == 0 || axis < -rank || axis >= rank)
    return c.fail(ReasonCode::kAttributeUnsupported, "axis out of range");
  return Status::ok();
}

// Split into outputs that together hold the input along `axis` (their static dims give the
// lengths, whichever of the split input, attribute or num_outputs set them).
Status check_split(const Checker& c) {
  const auto& x = c.in_dims(0);
  const auto rank = static_cast<int64_t>(x.size());
  const int64_t axis = c.node().attr_int("axis", 0);
  if (rank == 0 || axis < -rank || axis >= rank)
    return c.fail(ReasonCode::kAttributeUnsupported, "axis out of range");
  const auto a = static_cast<size_t>(axis < 0 ? axis + rank : axis);
  int64_t total = 0;
  for (ValueId out : c.node().outputs) {
    std::vector<int64_t> dims = c.graph().value(out).shape.dims;
    if (dims.size() != x.size()) return c.fail(ReasonCode::kShapeUnsupported, "output rank");
    total += dims[a];
    dims[a] = x[a];
    if (dims != x) return c.fail(ReasonCode::kShapeUnsupported, "outputs differ off the axis");
  }
  if (total != x[a]) return c.fail(ReasonCode::kShapeUnsupported, "outputs do not hold the input");
  return Status::ok();
}

Status check_transpose(const Checker& c) {
  auto perm = c.node().attr_ints("perm");
  if (perm.empty()) return Status::ok();
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i] != static_cast<int64_t>(i))
      return c.fail(ReasonCode::kAttributeUnsupported, "perm is not a permutation");
  }
  if (perm.size() != c.in_dims(0).size())
    return c.fail(ReasonCode::kAttributeUnsupported, "perm does not match the rank");
  return Status::ok();
}

// QuantizeLinear / DequantizeLinear (opsets 10-18): constant scale and zero point, one value or
// one per index of `axis`, the zero point of the 8-bit side's type.
Status check_quantize(const Checker& c) {
  if (c.node().attr_int("block_size", 0) != 0)
    return c.fail(ReasonCode::kAttributeUnsupported, "blocked quantization");
  const bool quantize = c.node().op_type == "QuantizeLinear";
  HSCHED_RETURN_IF_ERROR(require_constant(c, 1, "the scale (input 1)"));
  HSCHED_RETURN_IF_ERROR(require_constant(c, 2, "the zero point (input 2)"));
  const DType packed = quantize ? c.output().dtype : c.input(0)->dtype;
  if (quantize && packed != DType::kU8 && packed != DType::kI8) {
    return c.fail(ReasonCode::kDtypeUnsupported,
                  "quantized type " + std::string(dtype_name(packed)));
  }
  if (c.input(2) && c.input(2)->dtype != packed)
    return c.fail(ReasonCode::kDtypeUnsupported, "the zero point's type differs from the data's");
  const auto& x = c.in_dims(0);
  const int64_t count = c.constant(1)->elements();
  if (count != 1) {
    const auto rank = static_cast<int64_t>(x.size());
    const int64_t axis = c.node().attr_int("axis", 1);
    if (c.opset() < 13 || axis < -rank || axis >= rank || c.in_dims(1).size() != 1 ||
        count != x[static_cast<size_t>(axis < 0 ? axis + rank : axis)]) {
      return c.fail(ReasonCode::kShapeUnsupported,
                    "the scale is neither one value nor one per index of axis");
    }
  }
  if (c.precision() == Precision::kFp16 && detail::folds_to_constant(c.node(), c.graph())) {
    for (float v : detail::dequantized_constant(c.node(), c.graph())) {
      if (!(std::abs(v) <= 65504.0f)) {
        return c.fail(ReasonCode::kPrecisionNotAllowed,
                      "a dequantized value is outside fp16's range");
      }
    }
  } else if (c.precision() == Precision::kFp16) {
    // An fp16 graph's float layers read dequantized values in fp16: each scale (one step of the
    // grid) a normal fp16 number, and the dequantized range within 65504.
    for (float s : c.constant(1)->values<float>()) {
      if (!(s >= 0x1p-14f && s * 256.0f <= 65504.0f)) {
        return c.fail(ReasonCode::kPrecisionNotAllowed,
                      "scale " + std::to_string(s) + " is outside fp16's normal range");
      }
    }
  }
  if (c.input(2) && c.constant(2)->elements() != count)
    return c.fail(ReasonCode::kShapeUnsupported, "the zero point's count differs from the scale's");
  return Status::ok();
}

const std::map<std::string, OpRule>& rules() {
  static const std::map<std::string, OpRule> kRules = {
      {"Conv", {2, 3, {}, check_conv}},
      {"ConvTranspose", {2, 3, {}, check_conv}},
      {"Gemm", {2, 3, {}, check_gemm}},
      {"MatMul", {2, 2, {}, check_matmul}},
      {"MaxPool", {1, 1, {}, check_pool}},
      {"AveragePool", {1, 1, {}, check_pool}},
      {"GlobalAveragePool", {1, 1, {}, check_global_pool}},
      {"GlobalMaxPool", {1, 1, {}, check_global_pool}},
      {"BatchNormalization", {5, 5, {}, check_batch_norm}},
      {"InstanceNormalization", {3, 3, {}, check_instance_norm}},
      {"LayerNormalization", {2, 3, {}, check_layer_norm}},
      {"Softmax", {1, 1, {}, check_softmax}},
      {"Add", {2, 2, {}, no_check}},
      {"Sub", {2, 2, {}, no_check}},
      {"Mul", {2, 2, {}, no_check}},
      {"Div", {2, 2, {}, no_check}},
      {"Pow", {2, 2, {}, no_check}},
      {"Sqrt", {1, 1, {}, no_check}},
      {"Exp", {1, 1, {}, no_check}},
      {"Erf", {1, 1, {}, no_check}},
      {"Relu", {1, 1, {}, no_check}},
      {"LeakyRelu", {1, 1, {}, no_check}},
      {"Elu", {1, 1, {}, no_check}},
      {"Sigmoid", {1, 1, {}, no_check}},
      {"HardSigmoid", {1, 1, {}, no_check}},
      {"HardSwish", {1, 1, {}, no_check}},
      {"Tanh", {1, 1, {}, no_check}},
      {"Gelu", {1, 1, {}, check_gelu}},
      {"Clip", {1, 3, {}, check_clip}},
      {"Reshape", {2, 2, {1}, check_reshape}},
      {"Flatten", {1, 1, {}, no_check}},
      {"Squeeze", {1, 2, {1}, check_axes_input}},
      {"Unsqueeze", {1, 2, {1}, check_axes_input}},
      {"Transpose", {1, 1, {}, check_transpose}},
      {"Concat", {1, detail::kMaxPortsPerLayer, {}, check_concat}},
      {"Split", {1, 2, {1}, check_split, {}, false, true}},
      {"Identity", {1, 1, {}, no_check}},
      {"QuantizeLinear", {2, 3, {}, check_quantize, {2}, true}},
      {"DequantizeLinear", {2, 3, {}, check_quantize, {0, 2}, false}},
  };
  return kRules;
}

enum class Data { kFloat, kInteger, kQuantized };

Status check_value(const Checker& c, const Value& v, Data kind) {
  if (!v.shape.rank_known || !v.shape.is_static()) {
    return c.fail(ReasonCode::kShapeUnsupported, "tensor '" + v.name + "' has no static shape");
  }
  if (v.shape.rank() > kMaxRank)
    return c.fail(ReasonCode::kShapeUnsupported, "tensor '" + v.name + "' has too many dims");
  auto elements = checked_elements(v.shape.dims);
  if (!elements.is_ok() ||
      *elements * static_cast<int64_t>(std::max<size_t>(1, dtype_size(v.dtype))) >
          detail::kMaxIrTensorBytes) {
    return c.fail(ReasonCode::kShapeUnsupported, "tensor '" + v.name + "' is too large");
  }
  if (kind == Data::kQuantized) {
    if (v.dtype != DType::kU8 && v.dtype != DType::kI8 && v.dtype != DType::kI32) {
      return c.fail(ReasonCode::kDtypeUnsupported, "tensor '" + v.name + "' is " +
                                                       std::string(dtype_name(v.dtype)) +
                                                       ", not u8, i8 or i32 quantized data");
    }
  } else if (kind == Data::kInteger) {
    if (v.dtype != DType::kI64 && v.dtype != DType::kI32) {
      return c.fail(ReasonCode::kDtypeUnsupported, "tensor '" + v.name + "' is " +
                                                       std::string(dtype_name(v.dtype)) +
                                                       ", not an integer shape or axes tensor");
    }
  } else if (v.dtype != DType::kF32) {
    return c.fail(ReasonCode::kDtypeUnsupported,
                  "element type " + std::string(dtype_name(v.dtype)) + " of tensor '" + v.name +
                      "' (the NPU path takes f32 tensors)");
  }
  return Status::ok();
}

Status check_node(const Checker& c) {
  const Node& node = c.node();
  if (!node.domain.empty() && node.domain != "ai.onnx")
    return c.fail(ReasonCode::kOpUnsupported, "domain '" + node.domain + "'");
  const auto it = rules().find(node.op_type);
  if (it == rules().end())
    return c.fail(ReasonCode::kOpUnsupported, "no OpenVINO IR mapping for this op");
  const OpRule& rule = it->second;
  if (node.inputs.size() < rule.min_inputs || node.inputs.size() > rule.max_inputs) {
    return c.fail(ReasonCode::kOpUnsupported, std::to_string(node.inputs.size()) + " inputs");
  }
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const Value* v = c.input(i);
    if (v == nullptr) {
      if (i < rule.min_inputs)
        return c.fail(ReasonCode::kOpUnsupported,
                      "required input " + std::to_string(i) + " omitted");
      continue;
    }
    const Data kind = rule.int_inputs.count(i) != 0         ? Data::kInteger
                      : rule.quantized_inputs.count(i) != 0 ? Data::kQuantized
                                                            : Data::kFloat;
    HSCHED_RETURN_IF_ERROR(check_value(c, *v, kind));
  }
  if (node.outputs.empty() || node.outputs[0] == kNoValue)
    return c.fail(ReasonCode::kOpUnsupported, "no output");
  if (node.outputs.size() > detail::kMaxPortsPerLayer)
    return c.fail(ReasonCode::kOpUnsupported, std::to_string(node.outputs.size()) + " outputs");
  for (size_t i = 1; i < node.outputs.size(); ++i) {
    if (rule.every_output) {
      if (node.outputs[i] == kNoValue)
        return c.fail(ReasonCode::kOpUnsupported, "output " + std::to_string(i) + " omitted");
      HSCHED_RETURN_IF_ERROR(check_value(c, c.graph().value(node.outputs[i]), Data::kFloat));
    } else if (node.outputs[i] != kNoValue && c.is_used(node.outputs[i])) {
      return c.fail(ReasonCode::kOpUnsupported,
                    "output " + std::to_string(i) + " is used (only the first is expressed)");
    }
  }
  HSCHED_RETURN_IF_ERROR(
      check_value(c, c.output(), rule.quantized_output ? Data::kQuantized : Data::kFloat));
  return rule.check(c);
}

}  // namespace

Status ir_supports(const Graph& graph, const Node& node, Precision precision) {
  return check_node(Checker(graph, node, precision));
}

std::optional<Refusal> ir_refusal(const Graph& graph, const Node& node, Precision precision) {
  const Checker c(graph, node, precision);
  const Status status = check_node(c);
  if (status.is_ok()) return std::nullopt;
  return Refusal{c.reason(), status.message()};
}

}  // namespace hsched::ir
