// Per-op emitters: ONNX semantics in OpenVINO opset layers (see docs/level-zero.md, "IR").
#include <algorithm>
#include <cfloat>
#include <map>
#include <numeric>

#include "backends/level_zero/ir/ir_format.h"
#include "backends/level_zero/ir/ir_geometry.h"
#include "backends/level_zero/ir/ir_write.h"

namespace hsched::ir::detail {
namespace {

using Emitter = Status (*)(WriteContext&, const Node&, const std::string&);

const DataAttributes kNumpyBroadcast = {{"auto_broadcast", "numpy"}};

const Value& in_value(const WriteContext& ctx, const Node& node, size_t i) {
  return ctx.graph().value(node.inputs[i]);
}
bool has_input(const Node& node, size_t i) {
  return i < node.inputs.size() && node.inputs[i] != kNoValue;
}
const Value& out_value(const WriteContext& ctx, const Node& node) {
  return ctx.graph().value(node.outputs[0]);
}
const char* flag(bool value) { return value ? "true" : "false"; }

int64_t normalize_axis(int64_t axis, size_t rank) {
  return axis < 0 ? axis + static_cast<int64_t>(rank) : axis;
}

std::vector<int64_t> range(int64_t begin, int64_t end) {
  std::vector<int64_t> values(static_cast<size_t>(std::max<int64_t>(0, end - begin)));
  std::iota(values.begin(), values.end(), begin);
  return values;
}

// [C] parameters seen as [1, C, 1, ...] to broadcast over an NC... tensor of `rank`.
std::vector<int64_t> channel_dims(int64_t channels, size_t rank) {
  std::vector<int64_t> dims(rank, 1);
  dims[1] = channels;
  return dims;
}

// Integer values of a constant i64/i32 tensor (axes, shapes).
std::vector<int64_t> int_values(const Tensor& t) {
  std::vector<int64_t> values;
  if (t.dtype() == DType::kI64) {
    const auto v = t.values<int64_t>();
    values.assign(v.begin(), v.end());
  } else if (t.dtype() == DType::kI32) {
    for (int32_t x : t.values<int32_t>()) values.push_back(x);
  }
  return values;
}

float scalar_float(const Tensor& t) { return t.values<float>()[0]; }

PortRef scalar(WriteContext& ctx, const std::string& name, float value) {
  return ctx.const_floats(name, {}, {value});
}

// `port` seen with other dims (same element count) through a Reshape layer.
PortRef reshaped(WriteContext& ctx, const PortRef& port, const std::string& name,
                 const std::vector<int64_t>& dims) {
  PortRef shape = ctx.const_i64(name + "/shape", {static_cast<int64_t>(dims.size())}, dims);
  return ctx.layer("Reshape", "opset1", name, {{"special_zero", "false"}}, {port, shape}, dims,
                   port.type);
}

// The values of a constant scale or zero point as floats, and the dims that broadcast them over
// the data: [] for one value, else [1.., count at `axis`, ..1].
struct QuantParameter {
  std::vector<float> values;
  std::vector<int64_t> dims;
};

QuantParameter quant_parameter(const Node& node, const Tensor* t, int64_t count, size_t rank) {
  QuantParameter p;
  p.values.assign(static_cast<size_t>(count), 0.0f);
  if (t != nullptr) {
    for (size_t i = 0; i < p.values.size(); ++i) {
      switch (t->dtype()) {
        case DType::kU8:
          p.values[i] = t->values<uint8_t>()[i];
          break;
        case DType::kI8:
          p.values[i] = t->values<int8_t>()[i];
          break;
        case DType::kI32:
          p.values[i] = static_cast<float>(t->values<int32_t>()[i]);
          break;
        default:
          p.values[i] = t->values<float>()[i];
          break;
      }
    }
  }
  if (count != 1) {
    p.dims.assign(rank, 1);
    p.dims[static_cast<size_t>(normalize_axis(node.attr_int("axis", 1), rank))] = count;
  }
  return p;
}

// A Q/DQ node's scale and zero point (zeros when omitted) over data of `rank`.
struct QuantParameters {
  QuantParameter scale;
  QuantParameter zero;
};

QuantParameters quant_parameters(const Graph& graph, const Node& node, size_t rank) {
  const Tensor& scale = *graph.value(node.inputs[1]).constant;
  const Tensor* zero = has_input(node, 2) ? &*graph.value(node.inputs[2]).constant : nullptr;
  return {quant_parameter(node, &scale, scale.elements(), rank),
          quant_parameter(node, zero, scale.elements(), rank)};
}

// QuantizeLinear as OpenVINO's ONNX frontend writes it: FakeQuantize onto the integer grid
// [qmin, qmax] (input range (q - zero point) * scale, in f32), then Convert to u8/i8. The NPU
// compiler folds FakeQuantize into the int8 layers around it.
Status emit_quantize(WriteContext& ctx, const Node& node, const std::string& name) {
  const Value& x = in_value(ctx, node, 0);
  const Value& y = out_value(ctx, node);
  const auto [scale, zero] = quant_parameters(ctx.graph(), node, x.shape.rank());
  const float qmin = y.dtype == DType::kU8 ? 0.0f : -128.0f;
  const float qmax = qmin + 255.0f;
  std::vector<float> low(scale.values.size()), high(scale.values.size());
  for (size_t i = 0; i < low.size(); ++i) {
    low[i] = (qmin - zero.values[i]) * scale.values[i];
    high[i] = (qmax - zero.values[i]) * scale.values[i];
  }
  PortRef fq =
      ctx.layer("FakeQuantize", "opset1", name + "/fake_quantize",
                {{"levels", "256"}, {"auto_broadcast", "numpy"}},
                {ctx.input(node.inputs[0]), ctx.const_f32(name + "/input_low", scale.dims, low),
                 ctx.const_f32(name + "/input_high", scale.dims, high),
                 ctx.const_f32(name + "/output_low", {}, {qmin}),
                 ctx.const_f32(name + "/output_high", {}, {qmax})},
                y.shape.dims);
  PortRef out = ctx.layer("Convert", "opset1", name,
                          {{"destination_type", std::string(element_type_name(y.dtype))}}, {fq},
                          y.shape.dims, y.dtype);
  ctx.bind(node.outputs[0], out);
  return Status::ok();
}

// DequantizeLinear as OpenVINO writes dequantization: Convert to float, Subtract the zero point
// (when not all zero), Multiply by the scale (both f32 Consts). A constant i32 one is folded
// (folds_to_constant).
Status emit_dequantize(WriteContext& ctx, const Node& node, const std::string& name) {
  const Value& x = in_value(ctx, node, 0);
  const Value& y = out_value(ctx, node);
  if (folds_to_constant(node, ctx.graph())) {
    ctx.bind(node.outputs[0],
             ctx.const_f32(name, y.shape.dims, dequantized_constant(node, ctx.graph())));
    return Status::ok();
  }
  const auto [scale, zero] = quant_parameters(ctx.graph(), node, x.shape.rank());
  PortRef out = ctx.layer("Convert", "opset1", name + "/to_float",
                          {{"destination_type", std::string(element_type_name(ctx.float_type()))}},
                          {ctx.input(node.inputs[0])}, y.shape.dims);
  if (std::any_of(zero.values.begin(), zero.values.end(), [](float z) { return z != 0.0f; })) {
    out = ctx.layer("Subtract", "opset1", name + "/zero_point", kNumpyBroadcast,
                    {out, ctx.const_f32(name + "/zero_point_value", zero.dims, zero.values)},
                    y.shape.dims);
  }
  out = ctx.layer("Multiply", "opset1", name, kNumpyBroadcast,
                  {out, ctx.const_f32(name + "/scale", scale.dims, scale.values)}, y.shape.dims);
  ctx.bind(node.outputs[0], out);
  return Status::ok();
}

// Identity: a Convert to the same type (opset1 has no Identity; the compiler drops it), so the
// output keeps a port of its own to carry its name.
Status emit_identity(WriteContext& ctx, const Node& node, const std::string& name) {
  const PortRef in = ctx.input(node.inputs[0]);
  PortRef out = ctx.layer("Convert", "opset1", name,
                          {{"destination_type", std::string(element_type_name(in.type))}}, {in},
                          in.dims, in.type);
  ctx.bind(node.outputs[0], out);
  return Status::ok();
}

Status emit_conv(WriteContext& ctx, const Node& node, const std::string& name) {
  const Value& x = in_value(ctx, node, 0);
  const Value& w = in_value(ctx, node, 1);
  const Value& y = out_value(ctx, node);
  const bool transposed = node.op_type == "ConvTranspose";
  const int64_t group = node.attr_int("group", 1);
  std::vector<int64_t> kernel = node.attr_ints("kernel_shape");
  if (kernel.empty()) kernel.assign(w.shape.dims.begin() + 2, w.shape.dims.end());
  HSCHED_ASSIGN_OR_RETURN(const SpatialGeometry g,
                          spatial_geometry(node, x.shape.dims, y.shape.dims, kernel, transposed));
  DataAttributes data = {{"strides", format_ints(g.strides)},
                         {"dilations", format_ints(g.dilations)},
                         {"pads_begin", format_ints(g.pads_begin)},
                         {"pads_end", format_ints(g.pads_end)},
                         {"auto_pad", "explicit"}};
  if (transposed) data.emplace_back("output_padding", format_ints(g.output_padding));
  PortRef weights;
  std::string type = transposed ? "ConvolutionBackpropData" : "Convolution";
  if (group == 1) {
    weights = ctx.input(node.inputs[1]);
  } else {
    // Conv [O, I/g, k...] -> [g, O/g, I/g, k...]; ConvTranspose [I, O/g, k...] -> [g, I/g, O/g,
    // k...]
    std::vector<int64_t> dims = w.shape.dims;
    dims[0] /= group;
    dims.insert(dims.begin(), group);
    weights = w.constant ? ctx.const_tensor(w.name + "/grouped", *w.constant, dims)
                         : reshaped(ctx, ctx.input(node.inputs[1]), name + "/grouped", dims);
    type = "Group" + type;
  }
  PortRef out =
      ctx.layer(type, "opset1", name, data, {ctx.input(node.inputs[0]), weights}, y.shape.dims);
  if (has_input(node, 2)) {
    const Value& b = in_value(ctx, node, 2);
    const auto dims = channel_dims(y.shape.dims[1], y.shape.rank());
    PortRef bias = b.constant ? ctx.const_tensor(b.name + "/broadcast", *b.constant, dims)
                              : reshaped(ctx, ctx.input(node.inputs[2]), name + "/bias_dims", dims);
    out = ctx.layer("Add", "opset1", name + "/bias", kNumpyBroadcast, {out, bias}, y.shape.dims);
  }
  ctx.bind(node.outputs[0], out);
  return Status::ok();
}

Status emit_gemm(WriteContext& ctx, const Node& node, const std::string& name) {
  const Value& y = out_value(ctx, node);
  PortRef out = ctx.layer("MatMul", "opset1", name,
                          {{"transpose_a", flag(node.attr_int("transA", 0) != 0)},
                           {"transpose_b", flag(node.attr_int("transB", 0) != 0)}},
                          {ctx.input(node.inputs[0]), ctx.input(node.inputs[1])}, y.shape.dims);
  const float alpha = node.attr_float("alpha", 1.0f);
  const float beta = node.attr_float("beta", 1.0f);
  if (alpha != 1.0f) {
    out = ctx.layer("Multiply", "opset1", name + "/alpha", kNumpyBroadcast,
                    {out, scalar(ctx, name + "/alpha_value", alpha)}, y.shape.dims);
  }
  if (has_input(node, 2) && beta != 0.0f) {
    PortRef c = ctx.input(node.inputs[2]);
    if (beta != 1.0f) {
      c = ctx.layer("Multiply", "opset1", name + "/beta", kNumpyBroadcast,
                    {c, scalar(ctx, name + "/beta_value", beta)}, c.dims);
    }
    out = ctx.layer("Add", "opset1", name + "/bias", kNumpyBroadcast, {out, c}, y.shape.dims);
  }
  ctx.bind(node.outputs[0], out);
  return Status::ok();
}

Status emit_matmul(WriteContext& ctx, const Node& node, const std::string& name) {
  PortRef out = ctx.layer(
      "MatMul", "opset1", name, {{"transpose_a", "false"}, {"transpose_b", "false"}},
      {ctx.input(node.inputs[0]), ctx.input(node.inputs[1])}, out_value(ctx, node).shape.dims);
  ctx.bind(node.outputs[0], out);
  return Status::ok();
}

Status emit_pool(WriteContext& ctx, const Node& node, const std::string& name) {
  const Value& y = out_value(ctx, node);
  HSCHED_ASSIGN_OR_RETURN(const SpatialGeometry g,
                          spatial_geometry(node, in_value(ctx, node, 0).shape.dims, y.shape.dims,
                                           node.attr_ints("kernel_shape"), false));
  // A ceil_mode output past the declared pads is written as OpenVINO's rounding_type="ceil" on
  // them (ir_supports checked that it gives the same size); else floor on the resolved pads.
  const bool ceil = g.pads_end_extended;
  DataAttributes data = {{"strides", format_ints(g.strides)},
                         {"pads_begin", format_ints(g.pads_begin)},
                         {"pads_end", format_ints(ceil ? g.declared_pads_end : g.pads_end)},
                         {"kernel", format_ints(g.kernel)}};
  const bool max = node.op_type == "MaxPool";
  if (!max) data.emplace_back("exclude-pad", flag(node.attr_int("count_include_pad", 0) == 0));
  data.emplace_back("rounding_type", ceil ? "ceil" : "floor");
  data.emplace_back("auto_pad", "explicit");
  PortRef out = ctx.layer(max ? "MaxPool" : "AvgPool", "opset1", name, data,
                          {ctx.input(node.inputs[0])}, y.shape.dims);
  ctx.bind(node.outputs[0], out);
  return Status::ok();
}

Status emit_global_pool(WriteContext& ctx, const Node& node, const std::string& name) {
  const auto rank = static_cast<int64_t>(in_value(ctx, node, 0).shape.rank());
  PortRef axes = ctx.const_i64(name + "/axes", {rank - 2}, range(2, rank));
  const bool max = node.op_type == "GlobalMaxPool";
  PortRef out = ctx.layer(max ? "ReduceMax" : "ReduceMean", "opset1", name, {{"keep_dims", "true"}},
                          {ctx.input(node.inputs[0]), axes}, out_value(ctx, node).shape.dims);
  ctx.bind(node.outputs[0], out);
  return Status::ok();
}

Status emit_batch_norm(WriteContext& ctx, const Node& node, const std::string& name) {
  std::vector<PortRef> inputs;
  for (size_t i = 0; i < 5; ++i) inputs.push_back(ctx.input(node.inputs[i]));
  PortRef out = ctx.layer("BatchNormInference", "opset5", name,
                          {{"epsilon", format_float(node.attr_float("epsilon", 1e-5f))}}, inputs,
                          out_value(ctx, node).shape.dims);
  ctx.bind(node.outputs[0], out);
  return Status::ok();
}

// MVN over `axes`, (x - mean) / sqrt(var + eps): ONNX's normalization with the epsilon inside.
PortRef mvn(WriteContext& ctx, const Node& node, const std::string& name,
            const std::vector<int64_t>& axes) {
  const Value& x = in_value(ctx, node, 0);
  PortRef axes_port = ctx.const_i64(name + "/axes", {static_cast<int64_t>(axes.size())}, axes);
  return ctx.layer("MVN", "opset6", name,
                   {{"eps", format_float(node.attr_float("epsilon", 1e-5f))},
                    {"normalize_variance", "true"},
                    {"eps_mode", "inside_sqrt"}},
                   {ctx.input(node.inputs[0]), axes_port}, x.shape.dims);
}

Status emit_instance_norm(WriteContext& ctx, const Node& node, const std::string& name) {
  const Value& y = out_value(ctx, node);
  const auto rank = static_cast<int64_t>(y.shape.rank());
  PortRef out = mvn(ctx, node, name, range(2, rank));
  const auto dims = channel_dims(y.shape.dims[1], y.shape.rank());
  // A constant, or a dequantized one (a QDQ model's int8 scale and bias), over the channels.
  const auto per_channel = [&](size_t i, const char* suffix) {
    const Value& v = in_value(ctx, node, i);
    return v.constant ? ctx.const_tensor(v.name + "/broadcast", *v.constant, dims)
                      : reshaped(ctx, ctx.input(node.inputs[i]), name + suffix, dims);
  };
  out = ctx.layer("Multiply", "opset1", name + "/scale", kNumpyBroadcast,
                  {out, per_channel(1, "/scale_dims")}, y.shape.dims);
  out = ctx.layer("Add", "opset1", name + "/bias", kNumpyBroadcast,
                  {out, per_channel(2, "/bias_dims")}, y.shape.dims);
  ctx.bind(node.outputs[0], out);
  return Status::ok();
}

Status emit_layer_norm(WriteContext& ctx, const Node& node, const std::string& name) {
  const Value& y = out_value(ctx, node);
  const size_t rank = y.shape.rank();
  const int64_t axis = normalize_axis(node.attr_int("axis", -1), rank);
  PortRef out = mvn(ctx, node, name, range(axis, static_cast<int64_t>(rank)));
  out = ctx.layer("Multiply", "opset1", name + "/scale", kNumpyBroadcast,
                  {out, ctx.input(node.inputs[1])}, y.shape.dims);
  if (has_input(node, 2)) {
    out = ctx.layer("Add", "opset1", name + "/bias", kNumpyBroadcast,
                    {out, ctx.input(node.inputs[2])}, y.shape.dims);
  }
  ctx.bind(node.outputs[0], out);
  return Status::ok();
}

Status emit_softmax(WriteContext& ctx, const Node& node, const std::string& name) {
  const Value& y = out_value(ctx, node);
  const int64_t axis =
      normalize_axis(node.attr_int("axis", ctx.graph().opset < 13 ? 1 : -1), y.shape.rank());
  PortRef out = ctx.layer("SoftMax", "opset8", name, {{"axis", std::to_string(axis)}},
                          {ctx.input(node.inputs[0])}, y.shape.dims);
  ctx.bind(node.outputs[0], out);
  return Status::ok();
}

Status emit_binary(WriteContext& ctx, const Node& node, const std::string& name) {
  static const std::map<std::string, std::string> kTypes = {{"Add", "Add"},
                                                            {"Sub", "Subtract"},
                                                            {"Mul", "Multiply"},
                                                            {"Div", "Divide"},
                                                            {"Pow", "Power"}};
  PortRef out = ctx.layer(kTypes.at(node.op_type), "opset1", name, kNumpyBroadcast,
                          {ctx.input(node.inputs[0]), ctx.input(node.inputs[1])},
                          out_value(ctx, node).shape.dims);
  ctx.bind(node.outputs[0], out);
  return Status::ok();
}

Status emit_unary(WriteContext& ctx, const Node& node, const std::string& name) {
  static const std::map<std::string, std::pair<std::string, std::string>> kTypes = {
      {"Sqrt", {"Sqrt", "opset1"}},       {"Exp", {"Exp", "opset1"}},
      {"Erf", {"Erf", "opset1"}},         {"Relu", {"Relu", "opset1"}},
      {"Sigmoid", {"Sigmoid", "opset1"}}, {"Tanh", {"Tanh", "opset1"}},
      {"HardSwish", {"HSwish", "opset4"}}};
  const auto& [type, version] = kTypes.at(node.op_type);
  PortRef out = ctx.layer(type, version, name, {}, {ctx.input(node.inputs[0])},
                          out_value(ctx, node).shape.dims);
  ctx.bind(node.outputs[0], out);
  return Status::ok();
}

Status emit_activation(WriteContext& ctx, const Node& node, const std::string& name) {
  const auto& dims = out_value(ctx, node).shape.dims;
  PortRef x = ctx.input(node.inputs[0]);
  PortRef out;
  if (node.op_type == "Elu") {
    out = ctx.layer("Elu", "opset1", name,
                    {{"alpha", format_float(node.attr_float("alpha", 1.0f))}}, {x}, dims);
  } else if (node.op_type == "LeakyRelu") {
    // PReLU-1 takes a slope of rank >= 1 (OpenVINO's ONNX frontend writes LeakyRelu's as {1}).
    out = ctx.layer("PRelu", "opset1", name, {},
                    {x, ctx.const_floats(name + "/slope", {1}, {node.attr_float("alpha", 0.01f)})},
                    dims);
  } else if (node.op_type == "HardSigmoid") {
    out = ctx.layer("HardSigmoid", "opset1", name, {},
                    {x, scalar(ctx, name + "/alpha", node.attr_float("alpha", 0.2f)),
                     scalar(ctx, name + "/beta", node.attr_float("beta", 0.5f))},
                    dims);
  } else if (node.attr_string("approximate", "none") == "tanh") {
    // Intel's NPU compiler computes every Gelu-7 as the erf form, so the tanh form is written out:
    // 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
    const auto mul = [&](const std::string& suffix, PortRef a, PortRef b) {
      return ctx.layer("Multiply", "opset1", name + suffix, kNumpyBroadcast, {a, b}, dims);
    };
    const auto add = [&](const std::string& suffix, PortRef a, PortRef b) {
      return ctx.layer("Add", "opset1", name + suffix, kNumpyBroadcast, {a, b}, dims);
    };
    const PortRef cube = mul("/cube", mul("/square", x, x), x);
    const PortRef inner =
        add("/inner", x, mul("/cubic", cube, scalar(ctx, name + "/c", 0.044715f)));
    const PortRef scaled = mul("/scaled", inner, scalar(ctx, name + "/k", 0.7978845608f));
    const PortRef tanh = ctx.layer("Tanh", "opset1", name + "/tanh", {}, {scaled}, dims);
    const PortRef one_plus = add("/one_plus", tanh, scalar(ctx, name + "/one", 1.0f));
    out = mul("", mul("/half", x, scalar(ctx, name + "/half_c", 0.5f)), one_plus);
  } else {  // Gelu, erf form
    out = ctx.layer("Gelu", "opset7", name, {{"approximation_mode", "ERF"}}, {x}, dims);
  }
  ctx.bind(node.outputs[0], out);
  return Status::ok();
}

Status emit_clip(WriteContext& ctx, const Node& node, const std::string& name) {
  float lo = -FLT_MAX, hi = FLT_MAX;
  if (ctx.graph().opset < 11) {
    lo = node.attr_float("min", lo);
    hi = node.attr_float("max", hi);
  } else {
    if (has_input(node, 1)) lo = scalar_float(*in_value(ctx, node, 1).constant);
    if (has_input(node, 2)) hi = scalar_float(*in_value(ctx, node, 2).constant);
  }
  PortRef out =
      ctx.layer("Clamp", "opset1", name, {{"min", format_float(lo)}, {"max", format_float(hi)}},
                {ctx.input(node.inputs[0])}, out_value(ctx, node).shape.dims);
  ctx.bind(node.outputs[0], out);
  return Status::ok();
}

// Reshape and Flatten: the static output shape as the target, so no 0 or -1 is left to resolve.
Status emit_reshape(WriteContext& ctx, const Node& node, const std::string& name) {
  const auto& dims = out_value(ctx, node).shape.dims;
  PortRef shape = ctx.const_i64(name + "/shape", {static_cast<int64_t>(dims.size())}, dims);
  PortRef out = ctx.layer("Reshape", "opset1", name, {{"special_zero", "false"}},
                          {ctx.input(node.inputs[0]), shape}, dims);
  ctx.bind(node.outputs[0], out);
  return Status::ok();
}

Status emit_squeeze(WriteContext& ctx, const Node& node, const std::string& name) {
  const bool squeeze = node.op_type == "Squeeze";
  const auto& in_dims = in_value(ctx, node, 0).shape.dims;
  const auto& dims = out_value(ctx, node).shape.dims;
  std::vector<int64_t> axes = ctx.graph().opset < 13 || !has_input(node, 1)
                                  ? node.attr_ints("axes")
                                  : int_values(*in_value(ctx, node, 1).constant);
  const size_t rank = squeeze ? in_dims.size() : dims.size();
  for (int64_t& a : axes) a = normalize_axis(a, rank);
  if (squeeze && axes.empty()) {
    for (size_t i = 0; i < in_dims.size(); ++i) {
      if (in_dims[i] == 1) axes.push_back(static_cast<int64_t>(i));
    }
  }
  std::sort(axes.begin(), axes.end());
  if (axes.empty()) return emit_reshape(ctx, node, name);
  PortRef axes_port = ctx.const_i64(name + "/axes", {static_cast<int64_t>(axes.size())}, axes);
  PortRef out = ctx.layer(squeeze ? "Squeeze" : "Unsqueeze", "opset1", name, {},
                          {ctx.input(node.inputs[0]), axes_port}, dims);
  ctx.bind(node.outputs[0], out);
  return Status::ok();
}

Status emit_transpose(WriteContext& ctx, const Node& node, const std::string& name) {
  const auto rank = static_cast<int64_t>(in_value(ctx, node, 0).shape.rank());
  std::vector<int64_t> perm = node.attr_ints("perm");
  if (perm.empty()) {
    perm = range(0, rank);
    std::reverse(perm.begin(), perm.end());
  }
  PortRef order = ctx.const_i64(name + "/order", {rank}, perm);
  PortRef out = ctx.layer("Transpose", "opset1", name, {}, {ctx.input(node.inputs[0]), order},
                          out_value(ctx, node).shape.dims);
  ctx.bind(node.outputs[0], out);
  return Status::ok();
}

Status emit_concat(WriteContext& ctx, const Node& node, const std::string& name) {
  const auto& dims = out_value(ctx, node).shape.dims;
  std::vector<PortRef> inputs;
  for (ValueId id : node.inputs) inputs.push_back(ctx.input(id));
  PortRef out =
      ctx.layer("Concat", "opset1", name,
                {{"axis", std::to_string(normalize_axis(node.attr_int("axis", 0), dims.size()))}},
                inputs, dims);
  ctx.bind(node.outputs[0], out);
  return Status::ok();
}

// Split: VariadicSplit with the outputs' lengths along the axis.
Status emit_split(WriteContext& ctx, const Node& node, const std::string& name) {
  const PortRef x = ctx.input(node.inputs[0]);
  const int64_t axis = normalize_axis(node.attr_int("axis", 0), x.dims.size());
  std::vector<int64_t> lengths;
  std::vector<OutputSpec> outputs;
  for (ValueId out : node.outputs) {
    const std::vector<int64_t>& dims = ctx.graph().value(out).shape.dims;
    lengths.push_back(dims[static_cast<size_t>(axis)]);
    outputs.push_back(OutputSpec{x.type, dims});
  }
  const std::vector<PortRef> ports = ctx.builder().add_layer(
      "VariadicSplit", "opset1", name, {},
      {x, ctx.const_i64(name + "/axis", {}, {axis}),
       ctx.const_i64(name + "/lengths", {static_cast<int64_t>(lengths.size())}, lengths)},
      outputs);
  for (size_t i = 0; i < ports.size(); ++i) ctx.bind(node.outputs[i], ports[i]);
  return Status::ok();
}

const std::map<std::string, Emitter>& emitters() {
  static const std::map<std::string, Emitter> kEmitters = {
      {"Conv", emit_conv},
      {"ConvTranspose", emit_conv},
      {"Gemm", emit_gemm},
      {"MatMul", emit_matmul},
      {"MaxPool", emit_pool},
      {"AveragePool", emit_pool},
      {"GlobalAveragePool", emit_global_pool},
      {"GlobalMaxPool", emit_global_pool},
      {"BatchNormalization", emit_batch_norm},
      {"InstanceNormalization", emit_instance_norm},
      {"LayerNormalization", emit_layer_norm},
      {"Softmax", emit_softmax},
      {"Add", emit_binary},
      {"Sub", emit_binary},
      {"Mul", emit_binary},
      {"Div", emit_binary},
      {"Pow", emit_binary},
      {"Sqrt", emit_unary},
      {"Exp", emit_unary},
      {"Erf", emit_unary},
      {"Relu", emit_unary},
      {"Sigmoid", emit_unary},
      {"Tanh", emit_unary},
      {"HardSwish", emit_unary},
      {"LeakyRelu", emit_activation},
      {"Elu", emit_activation},
      {"HardSigmoid", emit_activation},
      {"Gelu", emit_activation},
      {"Clip", emit_clip},
      {"Reshape", emit_reshape},
      {"Flatten", emit_reshape},
      {"Squeeze", emit_squeeze},
      {"Unsqueeze", emit_squeeze},
      {"Transpose", emit_transpose},
      {"Concat", emit_concat},
      {"Split", emit_split},
      {"Identity", emit_identity},
      {"QuantizeLinear", emit_quantize},
      {"DequantizeLinear", emit_dequantize},
  };
  return kEmitters;
}

}  // namespace

bool folds_to_constant(const Node& node, const Graph& graph) {
  if (node.op_type != "DequantizeLinear" || node.inputs.empty() || node.inputs[0] == kNoValue) {
    return false;
  }
  const Value& x = graph.value(node.inputs[0]);
  return x.is_constant() && x.dtype == DType::kI32;
}

std::vector<float> dequantized_constant(const Node& node, const Graph& graph) {
  const Tensor& x = *graph.value(node.inputs[0]).constant;
  const size_t rank = x.dims().size();
  const auto [scale, zero] = quant_parameters(graph, node, rank);
  const auto count = static_cast<int64_t>(scale.values.size());
  // Per axis: runs of `inner` values share a parameter, cycling every `count` runs.
  int64_t inner = 1;
  if (count != 1) {
    for (size_t i = static_cast<size_t>(normalize_axis(node.attr_int("axis", 1), rank)) + 1;
         i < rank; ++i) {
      inner *= x.dims()[i];
    }
  }
  const auto q = x.values<int32_t>();
  std::vector<float> values(q.size());
  for (size_t i = 0; i < q.size(); ++i) {
    const auto c = static_cast<size_t>((static_cast<int64_t>(i) / inner) % count);
    values[i] = (static_cast<float>(q[i]) - zero.values[c]) * scale.values[c];
  }
  return values;
}

Status emit_node(WriteContext& ctx, const Node& node) {
  const auto it = emitters().find(node.op_type);
  if (it == emitters().end()) {
    return internal_error("write_ir: no emitter for " + node.op_type +
                          " (ir_supports accepted it)");
  }
  return it->second(ctx, node, layer_name(ctx.graph(), node));
}

}  // namespace hsched::ir::detail
