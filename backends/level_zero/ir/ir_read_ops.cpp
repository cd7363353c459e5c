// Per-type converters of read_ir: each checks its layer's inputs, attributes and declared output
// dims, then adds the ONNX node(s) computing the same thing (opset 17 forms).
#include "backends/level_zero/ir/ir_read_ops.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "backends/level_zero/ir/ir_format.h"
#include "backends/level_zero/ir/ir_read.h"

namespace hsched::ir::detail {
namespace {

Tensor scalar_tensor(float value) {
  return Tensor::from_vector(DType::kF32, {}, std::vector{value});
}

Tensor i64_tensor(const std::vector<int64_t>& values) {
  return Tensor::from_vector(DType::kI64, {static_cast<int64_t>(values.size())}, values);
}

// A single ONNX node from input 0 (and the listed extra values) to output 0.
Status unary_node(ReadContext& ctx, const std::string& op, AttributeMap attributes = {},
                  std::vector<ValueId> extra = {}) {
  std::vector<ValueId> inputs = {ctx.in_value(0)};
  inputs.insert(inputs.end(), extra.begin(), extra.end());
  ctx.add_node(op, "", std::move(inputs), {ctx.out_value(0)}, std::move(attributes));
  return Status::ok();
}

Status elementwise_checks(ReadContext& ctx) {
  HSCHED_RETURN_IF_ERROR(ctx.require_float(0));
  return ctx.expect_out_dims(0, ctx.in_dims(0));
}

Status read_parameter(ReadContext& ctx) {
  HSCHED_RETURN_IF_ERROR(ctx.arity(0, 1));
  HSCHED_ASSIGN_OR_RETURN(const std::string type_name, ctx.attr("element_type"));
  const auto type = element_type_from_name(type_name);
  if (!type || *type != ctx.layer().outputs[0].type) {
    return ctx.fail("element_type '" + type_name.substr(0, 32) + "' differs from the port");
  }
  if (*type != DType::kF32 && *type != DType::kI64 && *type != DType::kI32 && *type != DType::kU8 &&
      *type != DType::kI8) {
    return ctx.fail("element_type " + type_name + " (Parameters are f32, i64, i32, u8 or i8)");
  }
  HSCHED_ASSIGN_OR_RETURN(const std::string shape_text, ctx.attr("shape"));
  auto dims = parse_ints(shape_text, "shape", kMaxRank, 0, kMaxDim);
  if (!dims.is_ok()) return ctx.fail(dims.status().message());
  HSCHED_RETURN_IF_ERROR(ctx.expect_out_dims(0, *dims));
  ctx.graph().add_input(ctx.out_value(0));
  return Status::ok();
}

Status read_convert(ReadContext& ctx) {
  HSCHED_RETURN_IF_ERROR(ctx.arity(1, 1));
  HSCHED_ASSIGN_OR_RETURN(const std::string type_name, ctx.attr("destination_type"));
  const auto type = element_type_from_name(type_name);
  if (!type || *type != ctx.layer().outputs[0].type) {
    return ctx.fail("destination_type '" + type_name.substr(0, 32) + "' differs from the port");
  }
  const auto convertible = [](DType t) {
    return t == DType::kF32 || t == DType::kF16 || t == DType::kU8 || t == DType::kI8 ||
           t == DType::kI32;
  };
  if (!convertible(*type) || !convertible(ctx.in_type(0))) {
    return ctx.fail("only conversions among f32, f16, i32, u8 and i8");
  }
  HSCHED_RETURN_IF_ERROR(ctx.expect_out_dims(0, ctx.in_dims(0)));
  // f16 is f32 in the graph: such a conversion is a view (NPU numerics are the runner's). To an
  // integer type it is a Cast, which rounds as the write_ir's FakeQuantize left nothing to round.
  const DType from = ctx.in_type(0) == DType::kF16 ? DType::kF32 : ctx.in_type(0);
  const DType to = *type == DType::kF16 ? DType::kF32 : *type;
  if (from == to) return unary_node(ctx, "Identity");
  return unary_node(ctx, "Cast", {{"to", static_cast<int64_t>(dtype_to_onnx(to))}});
}

// The per-tensor or per-axis form of a FakeQuantize range Const over an input of `rank`: its
// values, and the axis (-1: one value).
struct RangeConst {
  std::vector<float> values;
  int64_t axis = -1;
};

Result<RangeConst> range_const(ReadContext& ctx, size_t input, size_t rank) {
  const Tensor* t = ctx.in_constant(input);
  if (t == nullptr || t->dtype() != DType::kF32) {
    return ctx.fail("input " + std::to_string(input) + " is not a float Const");
  }
  RangeConst range;
  const auto values = t->values<float>();
  range.values.assign(values.begin(), values.end());
  if (values.size() == 1) return range;
  const auto& dims = t->dims();
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1) continue;
    if (range.axis >= 0 || dims.size() != rank)
      return ctx.fail("input " + std::to_string(input) + " varies along more than one axis");
    range.axis = static_cast<int64_t>(i);
  }
  return range;
}

// The scale of the 8-bit grid [lo, hi] with zero point z: the one whose f32 products -z * scale
// and (255 - z) * scale give lo and hi back (the QuantizeLinear's scale where the range was
// computed from one), else (hi - lo) / 255.
float grid_scale(float lo, float hi, float z, float approximate) {
  std::vector<float> candidates = {approximate};
  if (z != 0.0f) candidates.push_back(lo / -z);
  if (z != 255.0f) candidates.push_back(hi / (255.0f - z));
  float below = approximate, above = approximate;
  for (int ulp = 1; ulp <= 2; ++ulp) {
    below = std::nextafter(below, 0.0f);
    above = std::nextafter(above, std::numeric_limits<float>::infinity());
    candidates.insert(candidates.end(), {below, above});
  }
  for (float s : candidates) {
    if (-z * s == lo && (255.0f - z) * s == hi) return s;
  }
  return approximate;
}

// FakeQuantize of 256 levels whose ranges lie on the 8-bit integer grid, which is what write_ir
// emits for QuantizeLinear (and how OpenVINO expresses int8): QuantizeLinear onto u8 levels
// (scale grid_scale, zero point -low / scale, rounded as an integer quantizer must),
// then DequantizeLinear onto the output range. The NPU quantizes in int8; the simulated driver
// rounds the fp16 input it has onto the same levels. Other ranges and level counts: refused.
Status read_fake_quantize(ReadContext& ctx) {
  HSCHED_RETURN_IF_ERROR(ctx.arity(5, 1));
  HSCHED_RETURN_IF_ERROR(elementwise_checks(ctx));
  HSCHED_ASSIGN_OR_RETURN(const int64_t levels, ctx.attr_int("levels", 2, 65536));
  if (levels != 256) return ctx.fail("levels=" + std::to_string(levels) + " (8-bit: 256)");
  const size_t rank = ctx.in_dims(0).size();
  std::vector<RangeConst> ranges;
  int64_t axis = -1;
  for (size_t i = 1; i < 5; ++i) {
    HSCHED_ASSIGN_OR_RETURN(RangeConst range, range_const(ctx, i, rank));
    if (range.axis >= 0) {
      if ((axis >= 0 && range.axis != axis) || ctx.in_dims(0)[static_cast<size_t>(range.axis)] !=
                                                   static_cast<int64_t>(range.values.size())) {
        return ctx.fail("per-channel ranges do not follow one axis of the input");
      }
      axis = range.axis;
    }
    ranges.push_back(std::move(range));
  }
  std::vector<ValueId> values[2];
  for (size_t side = 0; side < 2; ++side) {
    const RangeConst& low = ranges[2 * side];
    const RangeConst& high = ranges[2 * side + 1];
    const size_t count = std::max(low.values.size(), high.values.size());
    std::vector<float> scale(count);
    std::vector<uint8_t> zero(count);
    for (size_t c = 0; c < count; ++c) {
      const float lo = low.values[low.values.size() == 1 ? 0 : c];
      const float hi = high.values[high.values.size() == 1 ? 0 : c];
      const float approximate = (hi - lo) / 255.0f;
      const float z = approximate > 0 ? std::nearbyint(-lo / approximate) : -1.0f;
      if (!(z >= 0.0f && z <= 255.0f)) {
        return ctx.fail("range [" + std::to_string(lo) + ", " + std::to_string(hi) +
                        "] does not hold the value 0 on an 8-bit integer grid");
      }
      scale[c] = grid_scale(lo, hi, z, approximate);
      zero[c] = static_cast<uint8_t>(z);
    }
    const std::vector<int64_t> dims =
        count == 1 ? std::vector<int64_t>{} : std::vector<int64_t>{static_cast<int64_t>(count)};
    const char* suffix = side == 0 ? "input" : "output";
    values[side] = {ctx.add_constant(std::string(suffix) + "_scale",
                                     Tensor::from_vector(DType::kF32, dims, scale)),
                    ctx.add_constant(std::string(suffix) + "_zero_point",
                                     Tensor::from_vector(DType::kU8, dims, zero))};
  }
  AttributeMap attributes;
  if (axis >= 0) attributes["axis"] = axis;
  const ValueId levels_value = ctx.temp_value("levels", DType::kU8, ctx.in_dims(0));
  ctx.add_node("QuantizeLinear", "quantize", {ctx.in_value(0), values[0][0], values[0][1]},
               {levels_value}, attributes);
  ctx.add_node("DequantizeLinear", "", {levels_value, values[1][0], values[1][1]},
               {ctx.out_value(0)}, attributes);
  return Status::ok();
}

Status read_unary(ReadContext& ctx) {
  static const std::map<std::string, std::string> kOps = {
      {"Sqrt", "Sqrt"},       {"Exp", "Exp"},   {"Erf", "Erf"},         {"Relu", "Relu"},
      {"Sigmoid", "Sigmoid"}, {"Tanh", "Tanh"}, {"HSwish", "HardSwish"}};
  HSCHED_RETURN_IF_ERROR(ctx.arity(1, 1));
  HSCHED_RETURN_IF_ERROR(elementwise_checks(ctx));
  return unary_node(ctx, kOps.at(ctx.layer().type));
}

Status read_elu(ReadContext& ctx) {
  HSCHED_RETURN_IF_ERROR(ctx.arity(1, 1));
  HSCHED_RETURN_IF_ERROR(elementwise_checks(ctx));
  HSCHED_ASSIGN_OR_RETURN(const float alpha, ctx.attr_float("alpha"));
  return unary_node(ctx, "Elu", {{"alpha", alpha}});
}

Status read_gelu(ReadContext& ctx) {
  HSCHED_RETURN_IF_ERROR(ctx.arity(1, 1));
  HSCHED_RETURN_IF_ERROR(elementwise_checks(ctx));
  std::string mode = ctx.attr_or("approximation_mode", "ERF");
  std::transform(mode.begin(), mode.end(), mode.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  if (mode != "ERF" && mode != "TANH") return ctx.fail("approximation_mode is not ERF or TANH");
  return unary_node(ctx, "Gelu", {{"approximate", std::string(mode == "TANH" ? "tanh" : "none")}});
}

Status read_prelu(ReadContext& ctx) {
  HSCHED_RETURN_IF_ERROR(ctx.arity(2, 1));
  HSCHED_RETURN_IF_ERROR(elementwise_checks(ctx));
  // PReLU-1's slope has rank >= 1 (OpenVINO's shape inference refuses a scalar).
  if (ctx.in_dims(1).empty()) return ctx.fail("slope of rank 0 (PReLU-1 needs rank >= 1)");
  HSCHED_ASSIGN_OR_RETURN(const float slope, ctx.in_scalar(1));
  return unary_node(ctx, "LeakyRelu", {{"alpha", slope}});
}

Status read_hard_sigmoid(ReadContext& ctx) {
  HSCHED_RETURN_IF_ERROR(ctx.arity(3, 1));
  HSCHED_RETURN_IF_ERROR(elementwise_checks(ctx));
  HSCHED_ASSIGN_OR_RETURN(const float alpha, ctx.in_scalar(1));
  HSCHED_ASSIGN_OR_RETURN(const float beta, ctx.in_scalar(2));
  return unary_node(ctx, "HardSigmoid", {{"alpha", alpha}, {"beta", beta}});
}

Status read_clamp(ReadContext& ctx) {
  HSCHED_RETURN_IF_ERROR(ctx.arity(1, 1));
  HSCHED_RETURN_IF_ERROR(elementwise_checks(ctx));
  HSCHED_ASSIGN_OR_RETURN(const float lo, ctx.attr_float("min"));
  HSCHED_ASSIGN_OR_RETURN(const float hi, ctx.attr_float("max"));
  if (lo > hi) return ctx.fail("min is greater than max");
  return unary_node(
      ctx, "Clip", {},
      {ctx.add_constant("min", scalar_tensor(lo)), ctx.add_constant("max", scalar_tensor(hi))});
}

Status read_binary(ReadContext& ctx) {
  static const std::map<std::string, std::string> kOps = {{"Add", "Add"},
                                                          {"Subtract", "Sub"},
                                                          {"Multiply", "Mul"},
                                                          {"Divide", "Div"},
                                                          {"Power", "Pow"}};
  HSCHED_RETURN_IF_ERROR(ctx.arity(2, 1));
  HSCHED_RETURN_IF_ERROR(ctx.require_float(0));
  HSCHED_RETURN_IF_ERROR(ctx.require_float(1));
  std::string broadcast = ctx.attr_or("auto_broadcast", "numpy");
  std::transform(broadcast.begin(), broadcast.end(), broadcast.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (broadcast == "none") {
    if (ctx.in_dims(0) != ctx.in_dims(1)) return ctx.fail("auto_broadcast none with unequal dims");
  } else if (broadcast != "numpy") {
    return ctx.fail("auto_broadcast '" + broadcast.substr(0, 16) + "' (numpy or none)");
  }
  HSCHED_ASSIGN_OR_RETURN(const auto dims, broadcast_dims(ctx, ctx.in_dims(0), ctx.in_dims(1)));
  HSCHED_RETURN_IF_ERROR(ctx.expect_out_dims(0, dims));
  ctx.add_node(kOps.at(ctx.layer().type), "", {ctx.in_value(0), ctx.in_value(1)},
               {ctx.out_value(0)});
  return Status::ok();
}

Status read_softmax(ReadContext& ctx) {
  HSCHED_RETURN_IF_ERROR(ctx.arity(1, 1));
  HSCHED_RETURN_IF_ERROR(elementwise_checks(ctx));
  const auto rank = static_cast<int64_t>(ctx.in_dims(0).size());
  if (rank == 0) return ctx.fail("scalar input");
  const int64_t lo = ctx.layer().version == "opset1" ? 0 : -rank;
  HSCHED_ASSIGN_OR_RETURN(const int64_t axis, ctx.attr_int("axis", lo, rank - 1));
  return unary_node(ctx, "Softmax", {{"axis", axis}});
}

// Axes in [-rank, rank), normalized, unique and sorted.
Result<std::vector<int64_t>> normalized_axes(ReadContext& ctx, const std::vector<int64_t>& axes,
                                             size_t rank) {
  std::set<int64_t> unique;
  const auto r = static_cast<int64_t>(rank);
  for (int64_t a : axes) {
    if (a < -r || a >= r) return ctx.fail("axis " + std::to_string(a) + " out of range");
    if (!unique.insert(a < 0 ? a + r : a).second) return ctx.fail("repeated axis");
  }
  return std::vector<int64_t>(unique.begin(), unique.end());
}

Status read_reduce(ReadContext& ctx) {
  HSCHED_RETURN_IF_ERROR(ctx.arity(2, 1));
  HSCHED_RETURN_IF_ERROR(ctx.require_float(0));
  const auto& in = ctx.in_dims(0);
  HSCHED_ASSIGN_OR_RETURN(const auto raw_axes, ctx.in_ints(1, kMaxRank));
  HSCHED_ASSIGN_OR_RETURN(const auto axes, normalized_axes(ctx, raw_axes, in.size()));
  HSCHED_ASSIGN_OR_RETURN(const bool keep, ctx.attr_bool("keep_dims", false));
  std::vector<int64_t> dims;
  for (size_t i = 0; i < in.size(); ++i) {
    const bool reduced = std::binary_search(axes.begin(), axes.end(), static_cast<int64_t>(i));
    if (reduced && in[i] == 0) return ctx.fail("reduces an empty axis");
    if (!reduced)
      dims.push_back(in[i]);
    else if (keep)
      dims.push_back(1);
  }
  HSCHED_RETURN_IF_ERROR(ctx.expect_out_dims(0, dims));
  const bool mean = ctx.layer().type == "ReduceMean";
  std::vector<int64_t> spatial;
  for (int64_t i = 2; i < static_cast<int64_t>(in.size()); ++i) spatial.push_back(i);
  if (keep && in.size() >= 3 && axes == spatial) {
    return unary_node(ctx, mean ? "GlobalAveragePool" : "GlobalMaxPool");
  }
  return unary_node(ctx, mean ? "ReduceMean" : "ReduceMax",
                    {{"axes", axes}, {"keepdims", int64_t{keep ? 1 : 0}}});
}

Status read_reshape(ReadContext& ctx) {
  HSCHED_RETURN_IF_ERROR(ctx.arity(2, 1));
  HSCHED_RETURN_IF_ERROR(ctx.require_float(0));
  const auto& in = ctx.in_dims(0);
  HSCHED_ASSIGN_OR_RETURN(auto dims, ctx.in_ints(1, kMaxRank));
  HSCHED_ASSIGN_OR_RETURN(const bool special_zero, ctx.attr_bool("special_zero", std::nullopt));
  int64_t known = 1;
  int infer = -1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 0 && special_zero) {
      if (i >= in.size()) return ctx.fail("shape copies a dim the input does not have");
      dims[i] = in[i];
    }
    if (dims[i] == -1) {
      if (infer >= 0) return ctx.fail("shape has two -1");
      infer = static_cast<int>(i);
      continue;
    }
    if (dims[i] < 0 || dims[i] > kMaxDim) return ctx.fail("shape has a dim out of range");
    known =
        dims[i] == 0 ? 0 : (known > kMaxElements / dims[i] ? kMaxElements + 1 : known * dims[i]);
  }
  const int64_t elements = Shape(in).elements();
  if (infer >= 0) {
    if (known == 0 || elements % known != 0) return ctx.fail("shape -1 cannot be inferred");
    dims[static_cast<size_t>(infer)] = elements / known;
  } else if (known != elements) {
    return ctx.fail("shape " + Shape(dims).to_string() + " does not hold " + Shape(in).to_string());
  }
  HSCHED_RETURN_IF_ERROR(ctx.expect_out_dims(0, dims));
  return unary_node(ctx, "Reshape", {}, {ctx.add_constant("shape", i64_tensor(dims))});
}

Status read_squeeze(ReadContext& ctx) {
  const bool squeeze = ctx.layer().type == "Squeeze";
  const size_t inputs = ctx.layer().inputs.size();
  HSCHED_RETURN_IF_ERROR(ctx.arity(inputs == 1 && squeeze ? 1 : 2, 1));
  HSCHED_RETURN_IF_ERROR(ctx.require_float(0));
  const auto& in = ctx.in_dims(0);
  std::vector<int64_t> raw;
  if (inputs == 2) {
    HSCHED_ASSIGN_OR_RETURN(raw, ctx.in_ints(1, kMaxRank));
  } else {
    for (size_t i = 0; i < in.size(); ++i) {
      if (in[i] == 1) raw.push_back(static_cast<int64_t>(i));
    }
  }
  const size_t rank = squeeze ? in.size() : in.size() + raw.size();
  if (rank > kMaxRank) return ctx.fail("more than " + std::to_string(kMaxRank) + " dims");
  HSCHED_ASSIGN_OR_RETURN(const auto axes, normalized_axes(ctx, raw, rank));
  std::vector<int64_t> dims;
  if (squeeze) {
    for (size_t i = 0; i < in.size(); ++i) {
      if (!std::binary_search(axes.begin(), axes.end(), static_cast<int64_t>(i))) {
        dims.push_back(in[i]);
      } else if (in[i] != 1) {
        return ctx.fail("squeezes dim " + std::to_string(i) + " of size " + std::to_string(in[i]));
      }
    }
  } else {
    size_t next = 0;
    for (size_t i = 0; i < rank; ++i) {
      const bool added = std::binary_search(axes.begin(), axes.end(), static_cast<int64_t>(i));
      dims.push_back(added ? 1 : in[next++]);
    }
  }
  HSCHED_RETURN_IF_ERROR(ctx.expect_out_dims(0, dims));
  if (axes.empty())
    return unary_node(ctx, "Reshape", {}, {ctx.add_constant("shape", i64_tensor(dims))});
  return unary_node(ctx, squeeze ? "Squeeze" : "Unsqueeze", {},
                    {ctx.add_constant("axes", i64_tensor(axes))});
}

Status read_transpose(ReadContext& ctx) {
  HSCHED_RETURN_IF_ERROR(ctx.arity(2, 1));
  HSCHED_RETURN_IF_ERROR(ctx.require_float(0));
  const auto& in = ctx.in_dims(0);
  HSCHED_ASSIGN_OR_RETURN(auto order, ctx.in_ints(1, kMaxRank));
  if (order.empty()) {
    for (size_t i = in.size(); i-- > 0;) order.push_back(static_cast<int64_t>(i));
  }
  std::vector<int64_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> dims;
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i] != static_cast<int64_t>(i) || order.size() != in.size()) {
      return ctx.fail("order is not a permutation of the input's dims");
    }
    dims.push_back(in[static_cast<size_t>(order[i])]);
  }
  HSCHED_RETURN_IF_ERROR(ctx.expect_out_dims(0, dims));
  return unary_node(ctx, "Transpose", {{"perm", order}});
}

Status read_concat(ReadContext& ctx) {
  const size_t n = ctx.layer().inputs.size();
  if (n == 0) return ctx.fail("no inputs");
  HSCHED_RETURN_IF_ERROR(ctx.arity(n, 1));
  const auto rank = static_cast<int64_t>(ctx.in_dims(0).size());
  if (rank == 0) return ctx.fail("scalar inputs");
  HSCHED_ASSIGN_OR_RETURN(int64_t axis, ctx.attr_int("axis", -rank, rank - 1));
  if (axis < 0) axis += rank;
  std::vector<int64_t> dims = ctx.in_dims(0);
  dims[static_cast<size_t>(axis)] = 0;
  std::vector<ValueId> inputs;
  for (size_t i = 0; i < n; ++i) {
    HSCHED_RETURN_IF_ERROR(ctx.require_float(i));
    const auto& d = ctx.in_dims(i);
    for (int64_t k = 0; k < rank; ++k) {
      if (static_cast<int64_t>(d.size()) != rank ||
          (k != axis && d[static_cast<size_t>(k)] != dims[static_cast<size_t>(k)])) {
        return ctx.fail("input " + std::to_string(i) + " does not match the others off the axis");
      }
    }
    dims[static_cast<size_t>(axis)] += d[static_cast<size_t>(axis)];
    inputs.push_back(ctx.in_value(i));
  }
  if (dims[static_cast<size_t>(axis)] > kMaxDim) return ctx.fail("output too large");
  HSCHED_RETURN_IF_ERROR(ctx.expect_out_dims(0, dims));
  ctx.add_node("Concat", "", std::move(inputs), {ctx.out_value(0)}, {{"axis", axis}});
  return Status::ok();
}

// VariadicSplit: Split along the axis into the lengths (one may be -1: the rest).
Status read_variadic_split(ReadContext& ctx) {
  const size_t outputs = ctx.layer().outputs.size();
  if (outputs == 0) return ctx.fail("no outputs");
  HSCHED_RETURN_IF_ERROR(ctx.arity(3, outputs));
  HSCHED_RETURN_IF_ERROR(ctx.require_float(0));
  const auto& x = ctx.in_dims(0);
  const auto rank = static_cast<int64_t>(x.size());
  HSCHED_ASSIGN_OR_RETURN(const auto axes, ctx.in_ints(1, 1));
  if (axes.size() != 1 || axes[0] < -rank || axes[0] >= rank) return ctx.fail("axis out of range");
  const int64_t axis = axes[0] < 0 ? axes[0] + rank : axes[0];
  HSCHED_ASSIGN_OR_RETURN(auto lengths, ctx.in_ints(2, outputs));
  if (lengths.size() != outputs) return ctx.fail("split_lengths does not give every output");
  const int64_t dim = x[static_cast<size_t>(axis)];
  int64_t known = 0;
  std::optional<size_t> rest;
  for (size_t i = 0; i < lengths.size(); ++i) {
    if (lengths[i] == -1 && !rest) {
      rest = i;
    } else if (lengths[i] < 0 || lengths[i] > dim) {
      return ctx.fail("split_lengths out of range");
    } else {
      known += lengths[i];
    }
  }
  if (rest && known <= dim) lengths[*rest] = dim - known;
  if (!rest && known != dim) return ctx.fail("split_lengths do not add up to the axis");
  if (rest && known > dim) return ctx.fail("split_lengths pass the axis");
  std::vector<ValueId> values;
  for (size_t i = 0; i < outputs; ++i) {
    std::vector<int64_t> dims = x;
    dims[static_cast<size_t>(axis)] = lengths[i];
    HSCHED_RETURN_IF_ERROR(ctx.expect_out_dims(i, dims));
    values.push_back(ctx.out_value(i));
  }
  ctx.add_node("Split", "", {ctx.in_value(0), ctx.add_constant("split", i64_tensor(lengths))},
               std::move(values), {{"axis", axis}});
  return Status::ok();
}

struct Converter {
  std::set<std::string> versions;
  Status (*convert)(ReadContext&);
};

const std::map<std::string, Converter>& converters() {
  static const std::map<std::string, Converter> kConverters = {
      {"Parameter", {{"opset1"}, read_parameter}},
      {"Convert", {{"opset1"}, read_convert}},
      {"Convolution", {{"opset1"}, read_convolution}},
      {"GroupConvolution", {{"opset1"}, read_convolution}},
      {"ConvolutionBackpropData", {{"opset1"}, read_convolution}},
      {"GroupConvolutionBackpropData", {{"opset1"}, read_convolution}},
      {"MatMul", {{"opset1"}, read_matmul}},
      {"MaxPool", {{"opset1"}, read_pool}},
      {"AvgPool", {{"opset1"}, read_pool}},
      {"ReduceMean", {{"opset1"}, read_reduce}},
      {"ReduceMax", {{"opset1"}, read_reduce}},
      {"BatchNormInference", {{"opset5"}, read_batch_norm}},
      {"MVN", {{"opset6"}, read_mvn}},
      {"SoftMax", {{"opset1", "opset8"}, read_softmax}},
      {"Add", {{"opset1"}, read_binary}},
      {"Subtract", {{"opset1"}, read_binary}},
      {"Multiply", {{"opset1"}, read_binary}},
      {"Divide", {{"opset1"}, read_binary}},
      {"Power", {{"opset1"}, read_binary}},
      {"Sqrt", {{"opset1"}, read_unary}},
      {"Exp", {{"opset1"}, read_unary}},
      {"Erf", {{"opset1"}, read_unary}},
      {"Relu", {{"opset1"}, read_unary}},
      {"Sigmoid", {{"opset1"}, read_unary}},
      {"Tanh", {{"opset1"}, read_unary}},
      {"HSwish", {{"opset4"}, read_unary}},
      {"Elu", {{"opset1"}, read_elu}},
      {"Gelu", {{"opset2", "opset7"}, read_gelu}},
      {"PRelu", {{"opset1"}, read_prelu}},
      {"HardSigmoid", {{"opset1"}, read_hard_sigmoid}},
      {"Clamp", {{"opset1"}, read_clamp}},
      {"Reshape", {{"opset1"}, read_reshape}},
      {"Squeeze", {{"opset1"}, read_squeeze}},
      {"Unsqueeze", {{"opset1"}, read_squeeze}},
      {"Transpose", {{"opset1"}, read_transpose}},
      {"Concat", {{"opset1"}, read_concat}},
      {"VariadicSplit", {{"opset1"}, read_variadic_split}},
      {"FakeQuantize", {{"opset1"}, read_fake_quantize}},
  };
  return kConverters;
}

}  // namespace

Result<std::vector<int64_t>> broadcast_dims(ReadContext& ctx, const std::vector<int64_t>& a,
                                            const std::vector<int64_t>& b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> dims(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t x = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t y = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (x != y && x != 1 && y != 1) {
      return ctx.fail("dims " + Shape(a).to_string() + " and " + Shape(b).to_string() +
                      " do not broadcast");
    }
    dims[i] = x == 1 ? y : x;
  }
  return dims;
}

bool converts(const std::string& type, const std::string& version) {
  const auto it = converters().find(type);
  return it != converters().end() && it->second.versions.count(version) != 0;
}

Status convert_layer(ReadContext& ctx) {
  const auto it = converters().find(ctx.layer().type);
  if (it == converters().end()) return ctx.fail("layer type not supported by read_ir");
  if (it->second.versions.count(ctx.layer().version) == 0) {
    return ctx.fail("version '" + ctx.layer().version.substr(0, 32) + "' not supported");
  }
  return it->second.convert(ctx);
}

}  // namespace hsched::ir::detail
