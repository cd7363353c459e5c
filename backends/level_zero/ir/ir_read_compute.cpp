// read_ir converters for the layers with windows, contractions and statistics: convolutions,
// pools, MatMul, BatchNormInference, MVN. Each infers its output dims from the inputs and the
// attributes (bounded so that no product overflows) and compares them with the declared ones.
#include <algorithm>
#include <cctype>

#include "backends/level_zero/ir/ir_format.h"
#include "backends/level_zero/ir/ir_read_ops.h"

namespace hsched::ir::detail {
namespace {

constexpr int64_t kMaxWindow = int64_t{1} << 20;  // strides, dilations, pads

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

struct Window {
  std::vector<int64_t> kernel, strides, dilations, pads_begin, pads_end, output_padding;
  std::string auto_pad;
};

// Reads strides/dilations/pads/auto_pad for `spatial` axes; dilations only where the type has them.
Result<Window> read_window(ReadContext& ctx, size_t spatial, bool has_dilations) {
  Window w;
  HSCHED_ASSIGN_OR_RETURN(w.strides, ctx.attr_ints("strides", spatial, 1, kMaxWindow));
  if (has_dilations) {
    HSCHED_ASSIGN_OR_RETURN(w.dilations, ctx.attr_ints("dilations", spatial, 1, kMaxWindow));
  } else {
    w.dilations.assign(spatial, 1);
  }
  HSCHED_ASSIGN_OR_RETURN(w.pads_begin, ctx.attr_ints("pads_begin", spatial, 0, kMaxWindow));
  HSCHED_ASSIGN_OR_RETURN(w.pads_end, ctx.attr_ints("pads_end", spatial, 0, kMaxWindow));
  w.auto_pad = lower(ctx.attr_or("auto_pad", "explicit"));
  if (w.auto_pad == "notset") w.auto_pad = "explicit";
  if (w.auto_pad != "explicit" && w.auto_pad != "valid" && w.auto_pad != "same_upper" &&
      w.auto_pad != "same_lower") {
    return ctx.fail("auto_pad '" + w.auto_pad.substr(0, 16) + "'");
  }
  return w;
}

// Output size of a direct window along one axis (auto_pad resolved into the window's pads).
Result<int64_t> direct_size(ReadContext& ctx, Window& w, size_t i, int64_t in) {
  const int64_t extent = (w.kernel[i] - 1) * w.dilations[i] + 1;
  const int64_t s = w.strides[i];
  if (w.auto_pad == "valid") {
    w.pads_begin[i] = w.pads_end[i] = 0;
  } else if (w.auto_pad != "explicit") {
    const int64_t out = (in + s - 1) / s;
    const int64_t total = std::max<int64_t>(0, (out - 1) * s + extent - in);
    w.pads_begin[i] = w.auto_pad == "same_upper" ? total / 2 : total - total / 2;
    w.pads_end[i] = total - w.pads_begin[i];
  }
  const int64_t padded = in + w.pads_begin[i] + w.pads_end[i];
  if (padded < extent) return ctx.fail("window larger than the padded input");
  return (padded - extent) / s + 1;
}

AttributeMap onnx_window(const Window& w) {
  std::vector<int64_t> pads = w.pads_begin;
  pads.insert(pads.end(), w.pads_end.begin(), w.pads_end.end());
  return {{"kernel_shape", w.kernel}, {"strides", w.strides}, {"pads", pads}};
}

}  // namespace

Status read_convolution(ReadContext& ctx) {
  const std::string& type = ctx.layer().type;
  const bool grouped = type.rfind("Group", 0) == 0;
  const bool backprop = type.find("Backprop") != std::string::npos;
  HSCHED_RETURN_IF_ERROR(ctx.arity(2, 1));
  HSCHED_RETURN_IF_ERROR(ctx.require_float(0));
  HSCHED_RETURN_IF_ERROR(ctx.require_float(1));
  // The filter is a Const or computed from Consts (int8 weights' dequantization), which the CPU
  // program folds when it compiles.
  const Tensor* weights = ctx.in_constant(1);
  const auto& x = ctx.in_dims(0);
  const auto& f = ctx.in_dims(1);
  if (x.size() < 3 || x.size() > 5) return ctx.fail("input rank is not 3, 4 or 5");
  const size_t spatial = x.size() - 2;
  const size_t lead = grouped ? 3 : 2;  // filter dims before the kernel
  if (f.size() != spatial + lead) return ctx.fail("filter rank does not match the input");
  for (int64_t d : f) {
    if (d < 1 || d > kMaxWindow) return ctx.fail("filter dims outside [1, 2^20]");
  }
  HSCHED_ASSIGN_OR_RETURN(Window w, read_window(ctx, spatial, true));
  w.kernel.assign(f.begin() + static_cast<std::ptrdiff_t>(lead), f.end());
  const int64_t groups = grouped ? f[0] : 1;
  // Conv filter [G,] O/G, I/G, k...; backprop filter [G,] I/G, O/G, k...
  const int64_t in_per_group = backprop ? f[lead - 2] : f[lead - 1];
  const int64_t out_per_group = backprop ? f[lead - 1] : f[lead - 2];
  if (x[1] != groups * in_per_group) return ctx.fail("filter does not match the input channels");
  std::vector<int64_t> out = {x[0], groups * out_per_group};
  if (backprop) {
    if (w.auto_pad == "same_upper" || w.auto_pad == "same_lower") {
      return ctx.fail("auto_pad same_* on a backprop convolution");
    }
    if (ctx.has_attr("output_padding")) {
      HSCHED_ASSIGN_OR_RETURN(w.output_padding,
                              ctx.attr_ints("output_padding", spatial, 0, kMaxWindow));
    } else {
      w.output_padding.assign(spatial, 0);
    }
    for (size_t i = 0; i < spatial; ++i) {
      if (w.auto_pad == "valid") w.pads_begin[i] = w.pads_end[i] = 0;
      const int64_t extent = (w.kernel[i] - 1) * w.dilations[i] + 1;
      const int64_t size = w.strides[i] * (x[i + 2] - 1) + extent - w.pads_begin[i] -
                           w.pads_end[i] + w.output_padding[i];
      if (x[i + 2] < 1 || size < 1) return ctx.fail("empty output");
      out.push_back(size);
    }
  } else {
    for (size_t i = 0; i < spatial; ++i) {
      HSCHED_ASSIGN_OR_RETURN(const int64_t size, direct_size(ctx, w, i, x[i + 2]));
      out.push_back(size);
    }
  }
  HSCHED_RETURN_IF_ERROR(ctx.expect_out_dims(0, out));
  AttributeMap attributes = onnx_window(w);
  attributes["dilations"] = w.dilations;
  attributes["group"] = groups;
  if (backprop) attributes["output_padding"] = w.output_padding;
  ValueId filter = kNoValue;
  if (grouped) {
    std::vector<int64_t> dims(f.begin() + 1, f.end());
    dims[0] *= f[0];
    if (weights != nullptr) {
      filter = ctx.add_constant("weights", weights->reshaped(dims));
    } else {
      filter = ctx.temp_value("weights", DType::kF32, dims);
      const auto rank = static_cast<int64_t>(dims.size());
      ctx.add_node(
          "Reshape", "weights_dims",
          {ctx.in_value(1),
           ctx.add_constant("weights_shape", Tensor::from_vector(DType::kI64, {rank}, dims))},
          {filter});
    }
  } else {
    filter = ctx.in_value(1);
  }
  ctx.add_node(backprop ? "ConvTranspose" : "Conv", "", {ctx.in_value(0), filter},
               {ctx.out_value(0)}, std::move(attributes));
  return Status::ok();
}

Status read_pool(ReadContext& ctx) {
  const bool max = ctx.layer().type == "MaxPool";
  HSCHED_RETURN_IF_ERROR(ctx.arity(1, 1));
  HSCHED_RETURN_IF_ERROR(ctx.require_float(0));
  const auto& x = ctx.in_dims(0);
  if (x.size() < 3 || x.size() > 5) return ctx.fail("input rank is not 3, 4 or 5");
  const size_t spatial = x.size() - 2;
  HSCHED_ASSIGN_OR_RETURN(Window w, read_window(ctx, spatial, false));
  HSCHED_ASSIGN_OR_RETURN(w.kernel, ctx.attr_ints("kernel", spatial, 1, kMaxWindow));
  const std::string rounding = lower(ctx.attr_or("rounding_type", "floor"));
  if (rounding != "floor" && rounding != "ceil") {
    return ctx.fail("rounding_type '" + rounding.substr(0, 16) + "'");
  }
  bool exclude = true;
  if (!max) {
    HSCHED_ASSIGN_OR_RETURN(exclude, ctx.attr_bool("exclude-pad", std::nullopt));
  }
  std::vector<int64_t> out = {x[0], x[1]};
  for (size_t i = 0; i < spatial; ++i) {
    HSCHED_ASSIGN_OR_RETURN(int64_t size, direct_size(ctx, w, i, x[i + 2]));
    if (!max && exclude && (w.pads_begin[i] >= w.kernel[i] || w.pads_end[i] >= w.kernel[i])) {
      return ctx.fail("exclude-pad with a pad not smaller than the kernel");
    }
    const int64_t span = x[i + 2] + w.pads_begin[i] + w.pads_end[i] - w.kernel[i];
    if (rounding == "ceil" && span % w.strides[i] != 0) {
      // One more window, reaching past the pads: the CPU pads the end that far (ONNX's form),
      // which an average excluding pads does not count.
      if (!max && !exclude) return ctx.fail("rounding_type ceil past the pads without exclude-pad");
      ++size;
      w.pads_end[i] += w.strides[i] - span % w.strides[i];
    }
    out.push_back(size);
  }
  HSCHED_RETURN_IF_ERROR(ctx.expect_out_dims(0, out));
  AttributeMap attributes = onnx_window(w);
  if (!max) attributes["count_include_pad"] = int64_t{exclude ? 0 : 1};
  ctx.add_node(max ? "MaxPool" : "AveragePool", "", {ctx.in_value(0)}, {ctx.out_value(0)},
               std::move(attributes));
  return Status::ok();
}

Status read_matmul(ReadContext& ctx) {
  HSCHED_RETURN_IF_ERROR(ctx.arity(2, 1));
  HSCHED_RETURN_IF_ERROR(ctx.require_float(0));
  HSCHED_RETURN_IF_ERROR(ctx.require_float(1));
  const auto& a = ctx.in_dims(0);
  const auto& b = ctx.in_dims(1);
  if (a.empty() || b.empty()) return ctx.fail("scalar operand");
  HSCHED_ASSIGN_OR_RETURN(bool ta, ctx.attr_bool("transpose_a", false));
  HSCHED_ASSIGN_OR_RETURN(bool tb, ctx.attr_bool("transpose_b", false));
  ta = ta && a.size() > 1;  // the specification ignores transposes of 1D operands
  tb = tb && b.size() > 1;
  auto effective = [](std::vector<int64_t> d, bool transpose, bool left) {
    if (d.size() == 1) d.insert(left ? d.begin() : d.end(), 1);
    if (transpose) std::swap(d[d.size() - 1], d[d.size() - 2]);
    return d;
  };
  const auto ea = effective(a, ta, true);
  const auto eb = effective(b, tb, false);
  if (ea.back() != eb[eb.size() - 2]) return ctx.fail("inner dims differ");
  HSCHED_ASSIGN_OR_RETURN(std::vector<int64_t> out,
                          broadcast_dims(ctx, std::vector<int64_t>(ea.begin(), ea.end() - 2),
                                         std::vector<int64_t>(eb.begin(), eb.end() - 2)));
  if (a.size() > 1) out.push_back(ea[ea.size() - 2]);
  if (b.size() > 1) out.push_back(eb.back());
  HSCHED_RETURN_IF_ERROR(ctx.expect_out_dims(0, out));
  if ((ta || tb) && a.size() == 2 && b.size() == 2) {
    ctx.add_node("Gemm", "", {ctx.in_value(0), ctx.in_value(1)}, {ctx.out_value(0)},
                 {{"transA", int64_t{ta ? 1 : 0}}, {"transB", int64_t{tb ? 1 : 0}}});
    return Status::ok();
  }
  ValueId operands[2] = {ctx.in_value(0), ctx.in_value(1)};
  const bool transposed[2] = {ta, tb};
  for (size_t i = 0; i < 2; ++i) {
    if (!transposed[i]) continue;
    const auto& dims = ctx.in_dims(i);
    std::vector<int64_t> perm(dims.size());
    for (size_t k = 0; k < perm.size(); ++k) perm[k] = static_cast<int64_t>(k);
    std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
    const std::string suffix = i == 0 ? "transpose_a" : "transpose_b";
    const ValueId t = ctx.temp_value(suffix, DType::kF32, i == 0 ? ea : eb);
    ctx.add_node("Transpose", suffix, {operands[i]}, {t}, {{"perm", perm}});
    operands[i] = t;
  }
  ctx.add_node("MatMul", "", {operands[0], operands[1]}, {ctx.out_value(0)});
  return Status::ok();
}

Status read_batch_norm(ReadContext& ctx) {
  HSCHED_RETURN_IF_ERROR(ctx.arity(5, 1));
  const auto& x = ctx.in_dims(0);
  if (x.size() < 2) return ctx.fail("input rank below 2");
  std::vector<ValueId> inputs;
  for (size_t i = 0; i < 5; ++i) {
    HSCHED_RETURN_IF_ERROR(ctx.require_float(i));
    if (i > 0 && ctx.in_dims(i) != std::vector<int64_t>{x[1]}) {
      return ctx.fail("input " + std::to_string(i) + " is not [C]");
    }
    inputs.push_back(ctx.in_value(i));
  }
  HSCHED_ASSIGN_OR_RETURN(const float epsilon, ctx.attr_float("epsilon"));
  if (!(epsilon >= 0)) return ctx.fail("negative epsilon");
  HSCHED_RETURN_IF_ERROR(ctx.expect_out_dims(0, x));
  ctx.add_node("BatchNormalization", "", std::move(inputs), {ctx.out_value(0)},
               {{"epsilon", epsilon}});
  return Status::ok();
}

Status read_mvn(ReadContext& ctx) {
  HSCHED_RETURN_IF_ERROR(ctx.arity(2, 1));
  HSCHED_RETURN_IF_ERROR(ctx.require_float(0));
  const auto& x = ctx.in_dims(0);
  const auto rank = static_cast<int64_t>(x.size());
  HSCHED_ASSIGN_OR_RETURN(auto axes, ctx.in_ints(1, kMaxRank));
  for (int64_t& a : axes) {
    if (a < -rank || a >= rank) return ctx.fail("axis out of range");
    if (a < 0) a += rank;
  }
  std::sort(axes.begin(), axes.end());
  // The ONNX normalizations read_ir maps MVN to reduce over trailing axes.
  if (axes.empty() || axes.back() != rank - 1 ||
      axes.front() + static_cast<int64_t>(axes.size()) != rank ||
      std::adjacent_find(axes.begin(), axes.end()) != axes.end()) {
    return ctx.fail("axes are not the trailing dims");
  }
  HSCHED_ASSIGN_OR_RETURN(const bool normalize, ctx.attr_bool("normalize_variance", std::nullopt));
  if (!normalize) return ctx.fail("normalize_variance=false");
  HSCHED_ASSIGN_OR_RETURN(const std::string mode, ctx.attr("eps_mode"));
  if (lower(mode) != "inside_sqrt") return ctx.fail("eps_mode other than inside_sqrt");
  HSCHED_ASSIGN_OR_RETURN(const float epsilon, ctx.attr_float("eps"));
  if (!(epsilon >= 0)) return ctx.fail("negative eps");
  HSCHED_RETURN_IF_ERROR(ctx.expect_out_dims(0, x));
  const int64_t axis = axes.front();
  if (axis == 2 && rank >= 3) {
    auto ones = Tensor(DType::kF32, {x[1]});
    for (float& v : ones.values<float>()) v = 1.0f;
    ctx.add_node("InstanceNormalization", "",
                 {ctx.in_value(0), ctx.add_constant("scale", ones),
                  ctx.add_constant("bias", Tensor(DType::kF32, {x[1]}))},
                 {ctx.out_value(0)}, {{"epsilon", epsilon}});
    return Status::ok();
  }
  Tensor ones(DType::kF32, std::vector<int64_t>(x.begin() + axis, x.end()));
  for (float& v : ones.values<float>()) v = 1.0f;
  ctx.add_node("LayerNormalization", "", {ctx.in_value(0), ctx.add_constant("scale", ones)},
               {ctx.out_value(0)}, {{"axis", axis}, {"epsilon", epsilon}});
  return Status::ok();
}

}  // namespace hsched::ir::detail
