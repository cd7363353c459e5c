// check_node (the OpenCL backend's capability rules). See node_ops.h; the fusion helpers are in
// node_fusion.cpp, the attribute decoding shared with enqueue_node in node_ops_util.cpp.
#include "backends/opencl/kernels/node_ops.h"

#include <algorithm>
#include <set>

#include "backends/opencl/device.h"
#include "backends/opencl/kernels/node_ops_util.h"
#include "backends/opencl/kernels/ops_integer.h"
#include "backends/opencl/kernels/ops_util.h"

namespace hsched::opencl {
namespace {

using node_detail::constants_of;
using node_detail::dims_of;
using node_detail::has_input;
using node_detail::reject;

// Inputs read on the host (shapes, axes, scales, bounds): they need no float buffer but must be
// constants.
bool host_input(const std::string& op, size_t index) {
  if (op == "Reshape" || op == "Squeeze" || op == "Unsqueeze") return index == 1;
  if (op == "Resize" || op == "Upsample") return index >= 1;
  if (op == "Clip") return index >= 1;
  if (op == "Split" || op == "Gather" || op == "Expand") return index == 1;  // sizes; indices
  if (reduce_kind(op)) return index == 1;                                    // axes
  if (op == "Slice") return index >= 1;            // starts, ends, axes, steps
  if (op == "Trilu") return index == 1;            // k
  if (op == "Dropout") return index >= 1;          // ratio (unused in inference), training_mode
  if (op == "TopK") return index == 1;             // k
  if (op == "DFT") return index >= 1;              // dft_length (axis from opset 20: refused)
  if (op == "STFT") return index == 1 || index == 3;  // frame_step, frame_length
  if (op == "ConstantOfShape") return index == 0;  // the shape
  if (op == "Range") return true;                  // start, limit, delta
  if (op == "OneHot") return index == 1;           // depth
  if (op == "Pad") return index >= 1;              // pads, constant_value, axes
  if (op == "Tile") return index == 1;             // repeats
  return false;
}

// Ops that may read or write 8-bit quantized data (held as its integer values): QuantizeLinear's
// output, DequantizeLinear's input and zero point, and moves that copy values unchanged.
bool takes_eight_bit(const std::string& op) {
  static const std::set<std::string> kOps = {
      "QuantizeLinear", "DequantizeLinear", "Identity", "Reshape", "Flatten", "Squeeze",
      "Unsqueeze", "Transpose", "Concat", "Split", "Gather", "Expand", "Slice", "Cast", "CastLike",
      "Dropout",
      // choose among their inputs' values: exact on integers held as floats
      "Max", "Min", "Clip", "MaxPool",
      // integer arithmetic, wrapping (ops_integer.h)
      "Add", "Sub", "Mul", "Div", "Mod", "BitShift",
      // integer products (ops_quant.h)
      "MatMulInteger", "ConvInteger", "QLinearMatMul", "QLinearConv", "DynamicQuantizeLinear"};
  return kOps.count(op) != 0;
}

// Ops with integer kernels (ops_integer.h) or moving integers unchanged: int32 and int64 data,
// held in its own type.
bool takes_integers(const std::string& op) {
  // clang-format off
  static const std::set<std::string> kOps = {
      "Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Cast", "Dropout",
      "BitShift", "Pow", "Add", "Sub", "Mul", "Div", "Mod", "Max", "Min",
      "Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "Where", "Trilu",
      "Pad", "Tile", "Expand", "GatherElements", "ScatterElements", "Scatter", "GatherND",
      "ScatterND", "ConstantOfShape", "Range", "EyeLike", "OneHot", "ReverseSequence",
      "MatMulInteger", "ConvInteger", "QLinearConv", "DequantizeLinear"};
  // clang-format on
  return kOps.count(op) != 0;
}

// Ops that take float16 data, held as raw halves (ops_integer.h): casts to and from float, Max,
// Min, Mod and moves.
bool takes_half(const std::string& op) {
  static const std::set<std::string> kOps = {"Identity",  "Reshape", "Flatten", "Squeeze",
                                             "Unsqueeze", "Dropout", "Cast",    "CastLike",
                                             "Max",       "Min",     "Mod"};
  return kOps.count(op) != 0;
}

// Ops that take int16, uint16, uint32 and uint64 (ops_integer.h's kernels exist for all four;
// these are the ops the CPU backend takes them for too), or move their bytes.
bool takes_narrow_or_unsigned(const std::string& op) {
  static const std::set<std::string> kOps = {"Identity",  "Reshape",  "Flatten", "Squeeze",
                                             "Unsqueeze", "Dropout",  "Max",     "Min",
                                             "Mod",       "BitShift", "Pow"};
  return kOps.count(op) != 0;
}

// Output `index` of `op` is int64 indices (of float data): ArgMax's, ArgMin's, the second of
// TopK and MaxPool.
bool writes_indices(const std::string& op, size_t index) {
  return op == "ArgMax" || op == "ArgMin" || ((op == "TopK" || op == "MaxPool") && index == 1);
}

// Generic rules: float32 or bool data (8-bit only where takes_eight_bit, int64 only as the
// output of writes_indices), static shapes of < 2^31 elements, host inputs constant or given per
// run from the host.
std::optional<Refusal> check_values(const Graph& graph, const Node& node) {
  const std::string& op = node.op_type;
  const auto eight_bit = [](DType t) { return t == DType::kU8 || t == DType::kI8; };
  const auto held = [&](DType t) {
    if (integer_dtype(t)) {
      return takes_integers(op) && (!narrow_or_unsigned(t) || takes_narrow_or_unsigned(op));
    }
    if (t == DType::kF16) return takes_half(op);
    return held_on_device(t) && (!eight_bit(t) || takes_eight_bit(op));
  };
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (node.inputs[i] == kNoValue) continue;
    if (op == "CastLike" && i == 1) continue;  // only its dtype counts: never read
    const Value& v = graph.value(node.inputs[i]);
    // Clip's bounds and Gather's indices are read on the host when constant, else on the device.
    const bool on_device = (op == "Clip" || op == "Gather") && !v.constant;
    if (host_input(op, i) && !on_device) {
      // Given per run: integers reach the device's program from the host (no device node but
      // ArgMax/ArgMin makes them: ClProgram::compile refuses those), Resize scales when they
      // are an input of the graph.
      const bool integer = v.dtype == DType::kI64 || v.dtype == DType::kI32;
      // Floats read on the host: Resize's scales, Pad's constant_value, Range's bounds, depth.
      const bool host_scales =
          (op == "Resize" || op == "Upsample" || op == "Pad" || op == "Range" || op == "OneHot") &&
          v.producer == kNoNode;
      // Unused: Resize's roi in the modes taken, Dropout's ratio in inference.
      const bool unused = (op == "Resize" || op == "Dropout") && i == 1;
      if (!v.constant && !unused && !integer && !host_scales) {
        return reject(ReasonCode::kAttributeUnsupported,
                      op + " input " + std::to_string(i) + " (" + v.name +
                          ") is neither a constant nor integers from the host");
      }
      continue;
    }
    const bool indices = op == "Gather" && i == 1;  // int32 or int64, the data any held type
    if (indices ? v.dtype != DType::kI64 && v.dtype != DType::kI32 : !held(v.dtype)) {
      return reject(ReasonCode::kDtypeUnsupported, op + " input " + std::to_string(i) + " dtype " +
                                                       std::string(dtype_name(v.dtype)));
    }
    if (!v.shape.is_static() || v.shape.elements() >= (int64_t{1} << 31)) {
      return reject(ReasonCode::kShapeUnsupported,
                    op + " input " + std::to_string(i) + " shape " + v.shape.to_string());
    }
  }
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i] == kNoValue) continue;
    const Value& v = graph.value(node.outputs[i]);
    if (writes_indices(op, i) ? v.dtype != DType::kI64 : !held(v.dtype)) {
      return reject(ReasonCode::kDtypeUnsupported, op + " output " + std::to_string(i) + " dtype " +
                                                       std::string(dtype_name(v.dtype)));
    }
    if (!v.shape.is_static() || v.shape.elements() >= (int64_t{1} << 31)) {
      return reject(ReasonCode::kShapeUnsupported,
                    op + " output " + std::to_string(i) + " shape " + v.shape.to_string());
    }
  }
  return std::nullopt;
}

// Whether one of inputs [first, first + count) is given per run: its values are checked when
// the node is enqueued.
bool any_per_run(const Graph& graph, const Node& node, size_t first, size_t count) {
  for (size_t i = first; i < first + count; ++i) {
    if (host_input_per_run(graph, node, i)) return true;
  }
  return false;
}

// The op-specific rules, after check_values.
std::optional<Refusal> check_op(const Graph& graph, const Node& node) {
  const std::string& op = node.op_type;
  const Shape& x = dims_of(graph, node.inputs.at(0));
  const Shape& y = dims_of(graph, node.outputs.at(0));
  auto attribute = [&](const Status& status) {
    return reject(ReasonCode::kAttributeUnsupported, status.message());
  };
  if (op == "QuantizeLinear" || op == "DequantizeLinear") {
    const bool quantize = op == "QuantizeLinear";
    const DType packed = graph.value(quantize ? node.outputs[0] : node.inputs[0]).dtype;
    // Without a zero point QuantizeLinear gives u8; DequantizeLinear takes u8, i8 or i32.
    const bool has_zero = has_input(node, 2);
    const bool byte = packed == DType::kU8 || packed == DType::kI8;
    if ((!byte && (quantize || packed != DType::kI32)) ||
        (has_zero ? graph.value(node.inputs[2]).dtype != packed
                  : quantize && packed != DType::kU8)) {
      return reject(ReasonCode::kDtypeUnsupported,
                    op + " of " + std::string(dtype_name(packed)) + " data");
    }
    if (!has_input(node, 1)) return reject(ReasonCode::kShapeUnsupported, op + " without a scale");
    const Shape* zero = has_zero ? &dims_of(graph, node.inputs[2]) : nullptr;
    auto params =
        node_detail::quantize_params(node, x, dims_of(graph, node.inputs[1]), zero, packed);
    if (!params.is_ok()) return attribute(params.status());
    return std::nullopt;
  }
  if (op == "Clip") {
    for (size_t i = 1; i < node.inputs.size(); ++i) {
      if (has_input(node, i) && graph.value(node.inputs[i]).shape.elements() != 1) {
        return reject(ReasonCode::kShapeUnsupported,
                      "Clip input " + std::to_string(i) + " is not a scalar");
      }
    }
  }
  if (unary_op_from_onnx(op).is_ok()) {
    auto act = node_detail::unary_of(node, constants_of(graph, node, 1, 2));
    if (!act.is_ok()) return attribute(act.status());
    return std::nullopt;
  }
  const DType data = graph.value(node.inputs[0]).dtype;
  const bool eight_bit = data == DType::kU8 || data == DType::kI8;
  if (op == "Pow" && node.inputs.size() == 2 && has_input(node, 1)) {
    // A float base by an integer exponent (taken as a float), or an int32/int64 base by an
    // exponent of its dtype, as the CPU's Pow takes them.
    const DType exponent = graph.value(node.inputs[1]).dtype;
    const bool float_base =
        data == DType::kF32 &&
        (exponent == DType::kF32 || exponent == DType::kI32 || exponent == DType::kI64 ||
         exponent == DType::kU32 || exponent == DType::kU64);
    const bool integer_base = (data == DType::kI32 || data == DType::kI64) && exponent == data;
    if (!float_base && !integer_base) {
      return reject(ReasonCode::kDtypeUnsupported, "Pow of " + std::string(dtype_name(data)) +
                                                       " by " + std::string(dtype_name(exponent)));
    }
  } else if (integer_dtype(data) || data == DType::kF16 || eight_bit || op == "Where") {
    // Integer kernels take two operands of one dtype (Where: its two values).
    const size_t first = op == "Where" ? 1 : 0;
    const size_t operands = op == "Where" ? 3 : 2;
    const bool binary = binary_op_from_onnx(op).is_ok() || op == "Where" || op == "BitShift";
    if (binary &&
        (node.inputs.size() != operands || !has_input(node, first) || !has_input(node, first + 1) ||
         graph.value(node.inputs[first]).dtype != graph.value(node.inputs[first + 1]).dtype)) {
      return reject(ReasonCode::kDtypeUnsupported,
                    op + " of integers needs two values of one dtype");
    }
  }
  if (node_detail::is_variadic(node)) {
    // Folded into the output in turn: the first two inputs must broadcast to its shape.
    if (node.inputs.empty() || node.inputs.size() > 64) {
      return reject(ReasonCode::kShapeUnsupported,
                    op + " with " + std::to_string(node.inputs.size()) + " inputs");
    }
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      if (!has_input(node, i) || dims_of(graph, node.inputs[i]).size() > 6) {
        return reject(ReasonCode::kShapeUnsupported,
                      op + " input " + std::to_string(i) + " omitted or of rank > 6");
      }
    }
    const Shape& out = dims_of(graph, node.outputs[0]);
    Shape first = dims_of(graph, node.inputs[0]);
    if (node.inputs.size() > 1) {
      auto both = broadcast_shape(first, dims_of(graph, node.inputs[1]));
      if (!both.is_ok()) return reject(ReasonCode::kShapeUnsupported, both.status().message());
      first = *both;
    }
    if (first != out) {
      return reject(ReasonCode::kShapeUnsupported,
                    op + " whose first inputs do not broadcast to its output's shape");
    }
    return std::nullopt;
  }
  if (op == "Slice") {
    const bool per_run = any_per_run(graph, node, 1, 4);
    if (x.size() > 6 && per_run) {
      return reject(ReasonCode::kShapeUnsupported, "Slice of rank > 6 by values given per run");
    }
    if (per_run) return std::nullopt;
    auto sliced = node_detail::slice_of(node, graph.opset, constants_of(graph, node, 1, 4), x,
                                        dims_of(graph, node.outputs[0]));
    if (!sliced.is_ok()) return attribute(sliced.status());
    if (slice_rank(x, *sliced) > 6) {
      return reject(ReasonCode::kShapeUnsupported, "Slice of rank > 6 (after merging axes)");
    }
    return std::nullopt;
  }
  if (op == "DepthToSpace" || op == "SpaceToDepth") {
    auto view = node_detail::depth_space_view(node, x);
    if (!view.is_ok()) return attribute(view.status());
    return std::nullopt;
  }
  if (op == "GlobalMaxPool" && x.size() < 3) {
    return reject(
        ReasonCode::kShapeUnsupported,
        "GlobalMaxPool of rank " + std::to_string(x.size()) + " (needs N, C, spatial...)");
  }
  if (op == "Mod" && node.attr_int("fmod", 0) == 0 && !eight_bit &&
      !integer_dtype(graph.value(node.inputs[0]).dtype)) {  // float data: ONNX asks fmod = 1
    return reject(ReasonCode::kAttributeUnsupported, "Mod attribute fmod=0 (integer remainders)");
  }
  if (binary_op_from_onnx(op).is_ok() || op == "Where") {
    const size_t inputs = op == "Where" ? 3 : 2;
    if (node.inputs.size() != inputs) {
      return reject(ReasonCode::kShapeUnsupported,
                    op + " with " + std::to_string(node.inputs.size()) + " inputs");
    }
    for (size_t i = 0; i < inputs; ++i) {
      if (!has_input(node, i)) {
        return reject(ReasonCode::kShapeUnsupported, op + " without input " + std::to_string(i));
      }
      if (dims_of(graph, node.inputs[i]).size() > 6) {
        return reject(ReasonCode::kShapeUnsupported, op + " of rank > 6");
      }
    }
    return std::nullopt;
  }
  if (op == "Conv" || op == "ConvTranspose" || op == "MaxPool" || op == "AveragePool") {
    if (x.size() != 3 && x.size() != 4) {
      return reject(ReasonCode::kShapeUnsupported,
                    op + " of spatial rank " + std::to_string(x.size() - 2) + " (1-D, 2-D only)");
    }
    const int64_t storage_order = node.attr_int("storage_order", 0);
    if (op == "MaxPool" && storage_order != 0 && storage_order != 1) {
      return reject(ReasonCode::kAttributeUnsupported,
                    "MaxPool attribute storage_order=" + std::to_string(storage_order));
    }
    if (op == "MaxPool" && node.outputs.size() > 1 && node.outputs[1] != kNoValue &&
        dims_of(graph, node.outputs[1]) != y) {
      return reject(ReasonCode::kShapeUnsupported, "MaxPool Indices of another shape than Y");
    }
    const bool conv = op == "Conv" || op == "ConvTranspose";
    const Shape* w = conv ? &dims_of(graph, node.inputs.at(1)) : nullptr;
    auto window = node_detail::window_of(node, x, y, w, op == "ConvTranspose");
    if (!window.is_ok()) return attribute(window.status());
    if (conv && node.attr_int("group", 1) < 1) {
      return reject(ReasonCode::kAttributeUnsupported,
                    op + " attribute group=" + std::to_string(node.attr_int("group", 1)));
    }
    return std::nullopt;
  }
  if (op == "Resize" || op == "Upsample") {
    if (op == "Resize" && graph.opset != 0 && graph.opset < 11) {
      return reject(ReasonCode::kAttributeUnsupported,
                    "Resize of opset " + std::to_string(graph.opset) + " (11+ only)");
    }
    if (op == "Upsample" && any_per_run(graph, node, 1, 1)) return std::nullopt;
    const std::vector<const Tensor*> host = constants_of(graph, node, op == "Upsample" ? 1 : 2, 1);
    auto mode = node_detail::resize_mode_of(node, host[0], x);
    if (!mode.is_ok()) return attribute(mode.status());
    const Status plan =
        mode->cubic ? resize_cubic_plan(*mode, x, y).status() : resize_plan(*mode, x, y).status();
    if (!plan.is_ok()) return reject(ReasonCode::kShapeUnsupported, plan.message());
    return std::nullopt;
  }
  if (op == "LayerNormalization") {
    if (node.attr_int("stash_type", 1) != 1) {
      return reject(ReasonCode::kAttributeUnsupported,
                    "LayerNormalization attribute stash_type=" +
                        std::to_string(node.attr_int("stash_type", 1)));
    }
    const auto rank = static_cast<int64_t>(x.size());
    const int64_t axis = node.attr_int("axis", -1);
    if (axis < -rank || axis >= rank) {
      return reject(ReasonCode::kAttributeUnsupported,
                    "LayerNormalization attribute axis=" + std::to_string(axis));
    }
    return std::nullopt;
  }
  if (op == "Softmax" || op == "LogSoftmax" || op == "Hardmax" || op == "Concat") {
    const auto rank = static_cast<int64_t>(x.size());
    const int64_t axis = node.attr_int("axis", op == "Concat" ? 0 : -1);
    if (axis < -rank || axis >= rank) {
      return reject(ReasonCode::kAttributeUnsupported,
                    op + " attribute axis=" + std::to_string(axis));
    }
    return std::nullopt;
  }
  if (reduce_kind(op)) {
    if (x.size() > 6) return reject(ReasonCode::kShapeUnsupported, op + " of rank > 6");
    if (any_per_run(graph, node, 1, 1)) return std::nullopt;
    const Tensor* axes = constants_of(graph, node, 1, 1)[0];
    auto mask = node_detail::reduce_mask(node, axes, x.size());
    if (!mask.is_ok()) return reject(ReasonCode::kAttributeUnsupported, mask.status().message());
    for (size_t d = 0; d < x.size(); ++d) {
      if ((*mask)[d] && x[d] == 0) {
        return reject(ReasonCode::kShapeUnsupported, op + " over an empty axis");
      }
    }
    return std::nullopt;
  }
  if (op == "Split") {
    const auto rank = static_cast<int64_t>(x.size());
    const int64_t axis = node.attr_int("axis", 0);
    if (axis < -rank || axis >= rank) {
      return reject(ReasonCode::kAttributeUnsupported,
                    "Split attribute axis=" + std::to_string(axis));
    }
    return std::nullopt;
  }
  if (op == "Gather") {
    const auto rank = static_cast<int64_t>(x.size());
    const int64_t axis = node.attr_int("axis", 0);
    if (axis < -rank || axis >= rank) {
      return reject(ReasonCode::kAttributeUnsupported,
                    "Gather attribute axis=" + std::to_string(axis));
    }
    if (!graph.value(node.inputs.at(1)).is_constant()) return std::nullopt;  // checked per run
    auto indices = node_detail::int_values(*graph.value(node.inputs.at(1)).constant);
    if (!indices.is_ok()) {
      return reject(ReasonCode::kDtypeUnsupported, "Gather indices: " + indices.status().message());
    }
    const int64_t extent = x[static_cast<size_t>(axis < 0 ? axis + rank : axis)];
    for (int64_t index : *indices) {
      if (index < -extent || index >= extent) {
        return reject(ReasonCode::kShapeUnsupported,
                      "Gather index " + std::to_string(index) + " out of range");
      }
    }
    return std::nullopt;
  }
  if (op == "ArgMax" || op == "ArgMin" || op == "Trilu") {
    const auto rank = static_cast<int64_t>(x.size());
    if (op == "Trilu") {
      if (rank < 2) return reject(ReasonCode::kShapeUnsupported, "Trilu of rank < 2");
      if (has_input(node, 1) && graph.value(node.inputs[1]).shape.elements() != 1) {
        return reject(ReasonCode::kShapeUnsupported, "Trilu k is not a scalar");
      }
      return std::nullopt;
    }
    const int64_t axis = node.attr_int("axis", 0);
    if (axis < -rank || axis >= rank ||
        x[static_cast<size_t>(axis < 0 ? axis + rank : axis)] == 0) {
      return reject(ReasonCode::kAttributeUnsupported,
                    op + " attribute axis=" + std::to_string(axis) + " (out of range or empty)");
    }
    return std::nullopt;
  }
  if (auto gathers = node_detail::check_gather_scatter(graph, node)) return *gathers;
  if (auto generated = node_detail::check_generator(graph, node)) return *generated;
  if (auto quantized = node_detail::check_quant(graph, node)) return *quantized;
  if (op == "DynamicQuantizeLinear") {
    if (node.outputs.size() != 3 || node.outputs[1] == kNoValue || node.outputs[2] == kNoValue ||
        graph.value(node.outputs[0]).dtype != DType::kU8 ||
        graph.value(node.outputs[1]).dtype != DType::kF32 ||
        graph.value(node.outputs[2]).dtype != DType::kU8 || y != x ||
        graph.value(node.outputs[1]).shape.elements() != 1 ||
        graph.value(node.outputs[2]).shape.elements() != 1) {
      return reject(ReasonCode::kShapeUnsupported,
                    "DynamicQuantizeLinear needs its three outputs: u8 y, f32 and u8 scalars");
    }
    return std::nullopt;
  }
  if (op == "STFT") {
    if (any_per_run(graph, node, 1, 3)) return std::nullopt;
    const std::vector<const Tensor*> host = constants_of(graph, node, 1, 3);
    const Shape* window = has_input(node, 2) ? &dims_of(graph, node.inputs[2]) : nullptr;
    auto stft = node_detail::stft_of(node, host[0], window, host[2], x, y);
    if (!stft.is_ok()) return attribute(stft.status());
    return std::nullopt;
  }
  if (op == "Det") {
    if (x.size() < 2 || x.back() != x[x.size() - 2] || y != Shape(x.begin(), x.end() - 2)) {
      return reject(ReasonCode::kShapeUnsupported, "Det needs square matrices [..., n, n]");
    }
    return std::nullopt;
  }
  if (op == "DFT") {
    if (any_per_run(graph, node, 1, 1)) return std::nullopt;
    auto dft = node_detail::dft_of(node, graph.opset, constants_of(graph, node, 1, 1)[0], x, y);
    if (!dft.is_ok()) return attribute(dft.status());
    return std::nullopt;
  }
  if (op == "GridSample") {
    const Shape& grid = dims_of(graph, node.inputs.at(1));
    if (!node_detail::grid_sample_mode(node)) {
      return reject(ReasonCode::kAttributeUnsupported,
                    "GridSample attribute mode=" + node.attr_string("mode", "bilinear") +
                        " or padding_mode=" + node.attr_string("padding_mode", "zeros"));
    }
    if (x.size() != 4 || grid.size() != 4 || grid[0] != x[0] || grid[3] != 2 ||
        y != Shape{x[0], x[1], grid[1], grid[2]} ||
        ((x[2] == 0 || x[3] == 0) && detail::element_count(y) > 0)) {
      return reject(ReasonCode::kShapeUnsupported,
                    "GridSample needs X [N, C, H, W] and grid "
                    "[N, Ho, Wo, 2] of a non-empty plane");
    }
    return std::nullopt;
  }
  if (op == "BitShift") {
    const DType t = graph.value(node.inputs[0]).dtype;
    const std::string direction = node.attr_string("direction", "");
    if (t != DType::kU8 && t != DType::kU16 && t != DType::kU32 && t != DType::kU64) {
      return reject(ReasonCode::kDtypeUnsupported, "BitShift of " + std::string(dtype_name(t)));
    }
    if (direction != "LEFT" && direction != "RIGHT") {
      return reject(ReasonCode::kAttributeUnsupported, "BitShift attribute direction=" + direction);
    }
    if (x.size() > 6 || dims_of(graph, node.inputs[1]).size() > 6) {
      return reject(ReasonCode::kShapeUnsupported, "BitShift of rank > 6");
    }
    return std::nullopt;
  }
  if (op == "Pad" || op == "Tile") {
    if (x.size() > 6) return reject(ReasonCode::kShapeUnsupported, op + " of rank > 6");
    if (any_per_run(graph, node, 1, 3)) return std::nullopt;
    auto map = node_detail::index_map_of(node, graph.opset, constants_of(graph, node, 1, 3), x, y);
    if (!map.is_ok()) return attribute(map.status());
    return std::nullopt;
  }
  if (op == "Transpose" || op == "Expand") {
    if (x.size() > 6 || y.size() > 6) {
      return reject(ReasonCode::kShapeUnsupported, op + " of rank > 6");
    }
    return std::nullopt;
  }
  if (op == "MatMul") {
    if (x.empty() || dims_of(graph, node.inputs.at(1)).empty()) {
      return reject(ReasonCode::kShapeUnsupported, "MatMul of a scalar");
    }
    return std::nullopt;
  }
  if (op == "Gemm") {
    if (x.size() != 2 || dims_of(graph, node.inputs.at(1)).size() != 2) {
      return reject(ReasonCode::kShapeUnsupported, "Gemm of A or B not of rank 2");
    }
    if (has_input(node, 2) && dims_of(graph, node.inputs[2]).size() > 2) {
      return reject(ReasonCode::kShapeUnsupported, "Gemm C of rank > 2");
    }
    return std::nullopt;
  }
  if (op == "BatchNormalization") {
    if (node.attr_int("training_mode", 0) != 0 || node.attr_int("spatial", 1) != 1) {
      return reject(ReasonCode::kAttributeUnsupported,
                    "BatchNormalization in training mode or with spatial=0");
    }
    for (size_t i = 1; i < node.outputs.size(); ++i) {
      if (node.outputs[i] != kNoValue) {
        return reject(ReasonCode::kOpUnsupported, "BatchNormalization's training outputs");
      }
    }
    if (x.size() < 2 || node.inputs.size() != 5) {
      return reject(ReasonCode::kShapeUnsupported,
                    "BatchNormalization needs N, C... and 4 parameters");
    }
    for (size_t i = 1; i <= 4; ++i) {
      if (!has_input(node, i) || dims_of(graph, node.inputs[i]) != Shape{x[1]}) {
        return reject(ReasonCode::kShapeUnsupported, "BatchNormalization parameters are not [C]");
      }
    }
    return std::nullopt;
  }
  if (op == "Dropout") {  // inference: the data passes, the mask is all true
    if (has_input(node, 2)) {
      const Value& mode = graph.value(node.inputs[2]);
      if (!mode.constant || mode.constant->dtype() != DType::kBool ||
          mode.constant->elements() != 1 || mode.constant->values<uint8_t>()[0] != 0) {
        return reject(ReasonCode::kAttributeUnsupported,
                      "Dropout training_mode not a constant false (only inference is supported)");
      }
    }
    if (node.outputs.size() > 1 && node.outputs[1] != kNoValue &&
        graph.value(node.outputs[1]).dtype != DType::kBool) {
      return reject(ReasonCode::kDtypeUnsupported, "Dropout mask not of bool");
    }
    return std::nullopt;
  }
  if (op == "GlobalAveragePool" || op == "InstanceNormalization") {
    if (x.size() < 3) {
      return reject(ReasonCode::kShapeUnsupported,
                    op + " of rank " + std::to_string(x.size()) + " (needs N, C, spatial...)");
    }
    return std::nullopt;
  }
  if (op == "Cast" || op == "CastLike") {
    // Among float, bool (held as 1 and 0), int32 and int64; float16 to and from float.
    const DType from = graph.value(node.inputs[0]).dtype;
    const DType to = graph.value(node.outputs[0]).dtype;
    const auto castable = [](DType t) {
      return t == DType::kF32 || t == DType::kBool || t == DType::kI32 || t == DType::kI64;
    };
    const bool half = (from == DType::kF16 && (to == DType::kF32 || to == DType::kF16)) ||
                      (to == DType::kF16 && from == DType::kF32);
    // 8-bit data (exact floats) to float, bool and the integers; float, bool and 8-bit to 8 bits.
    const auto byte = [](DType t) { return t == DType::kU8 || t == DType::kI8; };
    const bool bytes = (byte(from) && (castable(to) || byte(to))) ||
                       (byte(to) && (from == DType::kF32 || from == DType::kBool));
    if (op == "CastLike" && (!has_input(node, 1) || graph.value(node.inputs[1]).dtype != to)) {
      return reject(ReasonCode::kDtypeUnsupported, "CastLike to another dtype than its output's");
    }
    if (!half && !bytes && (!castable(from) || !castable(to))) {
      return reject(ReasonCode::kDtypeUnsupported, "Cast from " + std::string(dtype_name(from)) +
                                                       " to " + std::string(dtype_name(to)));
    }
  }
  return std::nullopt;  // the view ops and Cast: any data held on the device
}

}  // namespace

bool host_input_per_run(const Graph& graph, const Node& node, size_t index) {
  return host_input(node.op_type, index) && node.op_type != "Clip" && node.op_type != "Gather" &&
         has_input(node, index) && !graph.value(node.inputs[index]).constant;
}

cl_int run_errors_of(const Graph& graph, const Node& node) {
  const std::string& op = node.op_type;
  if (op == "Div" || op == "Mod") {
    const DType t = graph.value(node.inputs.at(0)).dtype;
    return integer_dtype(t) || t == DType::kU8 || t == DType::kI8 ? kDivisionByZero : 0;
  }
  if (op == "GatherElements" || op == "ScatterElements" || op == "Scatter" || op == "GatherND" ||
      op == "ScatterND" || op == "ReverseSequence" ||
      (op == "Gather" && node.inputs.size() > 1 && node.inputs[1] != kNoValue &&
       !graph.value(node.inputs[1]).constant)) {
    return kIndexOutOfRange;
  }
  return 0;
}

bool held_on_device(DType dtype) {
  return dtype == DType::kF32 || dtype == DType::kBool || dtype == DType::kU8 ||
         dtype == DType::kI8;
}

std::optional<Refusal> check_node(const Graph& graph, const Node& node) {
  const std::string& op = node.op_type;
  const std::vector<std::string>& ops = supported_ops();
  const bool known = std::find(ops.begin(), ops.end(), op) != ops.end();
  if (!known || (!node.domain.empty() && node.domain != "ai.onnx")) {
    return reject(ReasonCode::kOpUnsupported,
                  "no kernel for op " + (node.domain.empty() ? op : node.domain + "." + op));
  }
  if (node.inputs.empty() || node.inputs[0] == kNoValue || node.outputs.empty() ||
      node.outputs[0] == kNoValue) {
    return reject(ReasonCode::kShapeUnsupported, op + " without its first input or output");
  }
  if (auto bad = check_values(graph, node)) return bad;
  return check_op(graph, node);
}

}  // namespace hsched::opencl
