// The attribute decoding shared by check_node and enqueue_node (node_ops_util.h).
#include "backends/opencl/kernels/node_ops_util.h"

#include <algorithm>
#include <cfloat>

#include "backends/opencl/kernels/node_ops.h"
#include "backends/opencl/kernels/ops_util.h"

namespace hsched::opencl {
namespace node_detail {

bool is_variadic(const Node& node) {
  const std::string& op = node.op_type;
  return op == "Sum" || op == "Mean" || ((op == "Max" || op == "Min") && node.inputs.size() != 2);
}

Result<std::vector<float>> float_values(const Tensor& tensor) {
  if (tensor.dtype() == DType::kI8) {  // 8-bit data: integers, exact as floats
    return std::vector<float>(tensor.values<int8_t>().begin(), tensor.values<int8_t>().end());
  }
  if (tensor.dtype() == DType::kU8) {
    return std::vector<float>(tensor.values<uint8_t>().begin(), tensor.values<uint8_t>().end());
  }
  if (tensor.dtype() != DType::kF32) {
    return invalid_argument("expected f32 values, got " + std::string(dtype_name(tensor.dtype())));
  }
  const auto values = tensor.values<float>();
  return std::vector<float>(values.begin(), values.end());
}

Result<std::vector<bool>> reduce_mask(const Node& node, const Tensor* axes_input, size_t rank) {
  std::vector<int64_t> axes = node.attr_ints("axes");
  if (axes_input != nullptr) {
    if (node.has_attr("axes")) return invalid_argument("both attribute and input 'axes'");
    HSCHED_ASSIGN_OR_RETURN(axes, int_values(*axes_input));
  }
  const bool noop = node.attr_int("noop_with_empty_axes", 0) != 0;
  std::vector<bool> reduce(rank, axes.empty() && !noop);
  const auto r = static_cast<int64_t>(rank);
  for (int64_t a : axes) {
    if (a < -r || a >= r) return invalid_argument("axis " + std::to_string(a) + " out of range");
    const auto d = static_cast<size_t>(a < 0 ? a + r : a);
    if (reduce[d]) return invalid_argument("axis " + std::to_string(a) + " given twice");
    reduce[d] = true;
  }
  return reduce;
}

Result<IndexMapOf> index_map_of(const Node& node, int64_t opset,
                                const std::vector<const Tensor*>& host, const Shape& x,
                                const Shape& y) {
  const size_t rank = x.size();
  IndexMapOf map;
  map.begin.assign(rank, 0);
  if (y.size() != rank) return invalid_argument(node.op_type + " changes the rank");
  if (node.op_type == "Tile") {
    if (host.empty() || host[0] == nullptr) return invalid_argument("Tile without repeats");
    HSCHED_ASSIGN_OR_RETURN(std::vector<int64_t> repeats, int_values(*host[0]));
    if (repeats.size() != rank) return invalid_argument("Tile repeats do not match the rank");
    for (size_t a = 0; a < rank; ++a) {
      if (repeats[a] < 0 || (x[a] != 0 && repeats[a] > y[a]) || x[a] * repeats[a] != y[a]) {
        return invalid_argument("Tile repeats do not give the output's shape");
      }
    }
    map.mode = PadMode::kWrap;
    return map;
  }
  const std::string mode = node.attr_string("mode", "constant");
  if (mode == "edge") {
    map.mode = PadMode::kEdge;
  } else if (mode == "reflect") {
    map.mode = PadMode::kReflect;
  } else if (mode == "wrap") {
    map.mode = PadMode::kWrap;
  } else if (mode != "constant") {
    return invalid_argument("Pad attribute mode=" + mode);
  }
  std::vector<int64_t> pads;
  std::vector<int64_t> axes;
  if (opset != 0 && opset < 11) {
    pads = node.attr_ints(opset < 2 ? "paddings" : "pads");
    map.fill.real = node.attr_float("value", 0.0f);
  } else {
    if (host.empty() || host[0] == nullptr) return invalid_argument("Pad without pads");
    HSCHED_ASSIGN_OR_RETURN(pads, int_values(*host[0]));
    if (host.size() > 1 && host[1] != nullptr && host[1]->elements() > 0) {
      const Tensor& value = *host[1];
      if (value.dtype() == DType::kI32 || value.dtype() == DType::kI64) {
        HSCHED_ASSIGN_OR_RETURN(std::vector<int64_t> v, int_values(value));
        map.fill.integer = v.at(0);
      } else {
        HSCHED_ASSIGN_OR_RETURN(std::vector<float> v, float_values(value));
        map.fill.real = v.at(0);
      }
    }
    if (host.size() > 2 && host[2] != nullptr) {
      HSCHED_ASSIGN_OR_RETURN(axes, int_values(*host[2]));
    }
  }
  if (axes.empty()) {
    for (size_t a = 0; a < rank; ++a) axes.push_back(static_cast<int64_t>(a));
  }
  const size_t n = axes.size();
  if (pads.size() != 2 * n) return invalid_argument("Pad pads do not match its axes");
  const auto r = static_cast<int64_t>(rank);
  std::vector<int64_t> end(rank, 0);
  for (size_t i = 0; i < n; ++i) {
    const int64_t a = axes[i] < 0 ? axes[i] + r : axes[i];
    if (a < 0 || a >= r) return invalid_argument("Pad axis out of range");
    map.begin[static_cast<size_t>(a)] = pads[i];
    end[static_cast<size_t>(a)] = pads[i + n];
  }
  for (size_t a = 0; a < rank; ++a) {
    // A pad removes at most what the axis holds; the output's shape bounds what it adds.
    if (map.begin[a] < -x[a] || end[a] < -x[a] || map.begin[a] > y[a] || end[a] > y[a] ||
        x[a] + map.begin[a] + end[a] != y[a]) {
      return invalid_argument("Pad pads do not give the output's shape");
    }
  }
  return map;
}

Result<PadFill> scalar_fill(const Tensor& tensor) {
  PadFill fill;
  if (tensor.elements() != 1)
    return invalid_argument("a scalar has " + std::to_string(tensor.elements()) + " elements");
  switch (tensor.dtype()) {
    case DType::kI32:
    case DType::kI64: {
      HSCHED_ASSIGN_OR_RETURN(std::vector<int64_t> v, int_values(tensor));
      fill.integer = v[0];
      fill.real = static_cast<double>(v[0]);
      return fill;
    }
    case DType::kBool:
      fill.real = tensor.values<uint8_t>()[0] != 0 ? 1.0 : 0.0;
      return fill;
    default: {
      HSCHED_ASSIGN_OR_RETURN(std::vector<float> v, float_values(tensor));
      fill.real = v[0];
      return fill;
    }
  }
}

Result<std::pair<DType, PadFill>> constant_of_shape_value(const Node& node) {
  const auto it = node.attributes.find("value");
  if (it == node.attributes.end()) return std::make_pair(DType::kF32, PadFill{});
  const auto* tensor = std::get_if<Tensor>(&it->second);
  if (tensor == nullptr) return invalid_argument("ConstantOfShape attribute value is not a tensor");
  HSCHED_ASSIGN_OR_RETURN(PadFill fill, scalar_fill(*tensor));
  return std::make_pair(tensor->dtype(), fill);
}

std::optional<std::pair<int, int>> grid_sample_mode(const Node& node) {
  const std::string mode = node.attr_string("mode", "bilinear");
  const std::string padding = node.attr_string("padding_mode", "zeros");
  const int m = mode == "bilinear" || mode == "linear" ? 0
                : mode == "nearest"                    ? 1
                : mode == "bicubic" || mode == "cubic" ? 2
                                                       : -1;
  const int p = padding == "zeros" ? 0 : padding == "border" ? 1 : padding == "reflection" ? 2 : -1;
  if (m < 0 || p < 0) return std::nullopt;
  return std::make_pair(m, p);
}

Result<DftOf> dft_of(const Node& node, int64_t opset, const Tensor* length, const Shape& x,
                     const Shape& y) {
  const auto rank = static_cast<int64_t>(x.size());
  if (opset >= 20) return invalid_argument("DFT of opset 20 (axis as an input)");
  if (rank < 2 || (x.back() != 1 && x.back() != 2)) {
    return invalid_argument("DFT input needs rank >= 2 and a last dim of 1 or 2");
  }
  const int64_t axis = node.attr_int("axis", 1);
  if (axis < -rank || axis > rank - 2 || axis == -1) {
    return invalid_argument("DFT attribute axis=" + std::to_string(axis));
  }
  DftOf dft;
  dft.axis = static_cast<size_t>(axis < 0 ? axis + rank : axis);
  dft.inverse = node.attr_int("inverse", 0) != 0;
  const bool onesided = node.attr_int("onesided", 0) != 0;
  if (onesided && (dft.inverse || x.back() == 2)) {
    return invalid_argument("DFT onesided with inverse or of a complex input");
  }
  dft.n = x[dft.axis];
  if (length != nullptr) {
    HSCHED_ASSIGN_OR_RETURN(std::vector<int64_t> values, int_values(*length));
    if (values.size() != 1) return invalid_argument("DFT dft_length is not one value");
    dft.n = values[0];
  }
  if (dft.n < 1 || dft.n > (int64_t{1} << 15)) {
    return invalid_argument("DFT length " + std::to_string(dft.n) + " outside [1, 32768]");
  }
  dft.bins = onesided ? dft.n / 2 + 1 : dft.n;
  Shape expected = x;
  expected[dft.axis] = dft.bins;
  expected.back() = 2;
  if (expected != y) return invalid_argument("DFT length does not give the output's shape");
  return dft;
}

Result<StftOf> stft_of(const Node& node, const Tensor* step, const Shape* window,
                       const Tensor* length, const Shape& x, const Shape& y) {
  if (x.size() != 3 || (x[2] != 1 && x[2] != 2) || step == nullptr) {
    return invalid_argument("STFT needs a signal [batch, length, 1 or 2] and a frame_step");
  }
  const auto scalar = [](const Tensor& t) -> Result<int64_t> {
    HSCHED_ASSIGN_OR_RETURN(std::vector<int64_t> values, int_values(t));
    if (values.size() != 1) return invalid_argument("STFT length input is not one value");
    return values[0];
  };
  StftOf stft;
  HSCHED_ASSIGN_OR_RETURN(stft.step, scalar(*step));
  stft.n = x[1];
  if (window != nullptr) {
    if (window->size() != 1) return invalid_argument("STFT window is not 1-D");
    stft.n = (*window)[0];
  }
  if (length != nullptr) {
    HSCHED_ASSIGN_OR_RETURN(stft.n, scalar(*length));
  }
  if (window != nullptr && (*window)[0] != stft.n) {
    return invalid_argument("STFT window's length differs from frame_length");
  }
  const bool onesided = node.attr_int("onesided", 1) != 0;
  if (stft.step < 1 || stft.n < 1 || stft.n > x[1] || stft.n > (int64_t{1} << 15) ||
      (onesided && x[2] == 2)) {
    return invalid_argument("STFT frame_step, frame_length or onesided do not fit the signal");
  }
  stft.bins = onesided ? stft.n / 2 + 1 : stft.n;
  if (y != Shape{x[0], (x[1] - stft.n) / stft.step + 1, stft.bins, 2}) {
    return invalid_argument("STFT parameters do not give the output's shape");
  }
  return stft;
}

Result<TransposeView> depth_space_view(const Node& node, const Shape& x) {
  const std::string& op = node.op_type;
  const int64_t b = node.attr_int("blocksize", 0);
  if (x.size() != 4 || b < 1) {
    return invalid_argument(op + " needs a rank-4 input and blocksize >= 1");
  }
  const int64_t n = x[0], c = x[1], h = x[2], w = x[3];
  if (op == "SpaceToDepth") {
    if (h % b != 0 || w % b != 0) {
      return invalid_argument("SpaceToDepth blocksize " + std::to_string(b) +
                              " does not divide the height and width");
    }
    return TransposeView{{n, c, h / b, b, w / b, b}, {0, 3, 5, 1, 2, 4}};
  }
  const std::string mode = node.attr_string("mode", "DCR");
  if (c % (b * b) != 0 || (mode != "DCR" && mode != "CRD")) {
    return invalid_argument("DepthToSpace mode " + mode + " or blocksize " + std::to_string(b) +
                            " (must divide the channels twice)");
  }
  if (mode == "DCR") return TransposeView{{n, b, b, c / (b * b), h, w}, {0, 3, 4, 1, 5, 2}};
  return TransposeView{{n, c / (b * b), b, b, h, w}, {0, 1, 4, 2, 5, 3}};
}

Result<std::vector<SliceAxis>> slice_of(const Node& node, int64_t opset,
                                        const std::vector<const Tensor*>& params,
                                        const Shape& dims, const Shape& out) {
  std::vector<int64_t> starts, ends;
  std::optional<std::vector<int64_t>> axes, steps;
  if (opset != 0 && opset < 10) {
    starts = node.attr_ints("starts");
    ends = node.attr_ints("ends");
    if (node.has_attr("axes")) axes = node.attr_ints("axes");
  } else {
    if (params.size() < 2 || params[0] == nullptr || params[1] == nullptr) {
      return invalid_argument("Slice needs constant starts and ends");
    }
    HSCHED_ASSIGN_OR_RETURN(starts, int_values(*params[0]));
    HSCHED_ASSIGN_OR_RETURN(ends, int_values(*params[1]));
    if (params.size() > 2 && params[2] != nullptr) {
      HSCHED_ASSIGN_OR_RETURN(axes, int_values(*params[2]));
    }
    if (params.size() > 3 && params[3] != nullptr) {
      HSCHED_ASSIGN_OR_RETURN(steps, int_values(*params[3]));
    }
  }
  auto sliced = slice_axes(dims, starts, ends, std::move(axes), std::move(steps));
  if (!sliced.is_ok()) return invalid_argument("Slice " + sliced.status().message());
  Shape got;
  for (const SliceAxis& a : *sliced) got.push_back(a.count);
  if (got != out) return invalid_argument("Slice gives " + hsched::Shape(got).to_string() +
                                          ", not its output's shape");
  return sliced;
}

Result<std::vector<int64_t>> int_values(const Tensor& tensor) {
  if (tensor.dtype() == DType::kI64) {
    const auto values = tensor.values<int64_t>();
    return std::vector<int64_t>(values.begin(), values.end());
  }
  if (tensor.dtype() == DType::kI32) {
    const auto values = tensor.values<int32_t>();
    return std::vector<int64_t>(values.begin(), values.end());
  }
  return invalid_argument("expected integer values, got " +
                          std::string(dtype_name(tensor.dtype())));
}

Result<Window> window_of(const Node& node, const Shape& x, const Shape& y, const Shape* w,
                         bool transposed) {
  const std::string& op = node.op_type;
  if (x.size() < 3 || y.size() != x.size()) {
    return invalid_argument(op + " needs [N, C, spatial...] input and output of one rank");
  }
  const size_t spatial = x.size() - 2;
  Window win;
  win.kernel = node.attr_ints("kernel_shape");
  if (win.kernel.empty() && w != nullptr && w->size() == x.size()) {
    win.kernel.assign(w->begin() + 2, w->end());
  }
  win.strides = node.attr_ints("strides");
  win.dilations = node.attr_ints("dilations");
  if (win.strides.empty()) win.strides.assign(spatial, 1);
  if (win.dilations.empty()) win.dilations.assign(spatial, 1);
  const std::vector<int64_t> pads = node.attr_ints("pads");
  if (win.kernel.size() != spatial || win.strides.size() != spatial ||
      win.dilations.size() != spatial || (!pads.empty() && pads.size() != 2 * spatial)) {
    return invalid_argument(op + " kernel_shape, strides, dilations or pads do not match the " +
                            std::to_string(spatial) + " spatial axes");
  }
  const std::string auto_pad = node.attr_string("auto_pad", "NOTSET");
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t k = win.kernel[i], s = win.strides[i], d = win.dilations[i];
    constexpr int64_t kLimit = int64_t{1} << 31;  // keeps the products below in int64
    if (k < 1 || s < 1 || d < 1 || k > kLimit || s > kLimit || d > kLimit) {
      return invalid_argument(op + " kernel_shape, strides and dilations must be in [1, 2^31]");
    }
    int64_t begin = pads.empty() ? 0 : pads[i];
    int64_t end = pads.empty() ? 0 : pads[i + spatial];
    if (auto_pad == "VALID") {
      begin = end = 0;
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      // Seen from the direct convolution's side (a ConvTranspose's output is its input), as
      // the CPU computes them; a ConvTranspose's output_padding then only extends the end.
      const int64_t small = transposed ? x[i + 2] : y[i + 2];
      const int64_t large = transposed ? y[i + 2] : x[i + 2];
      const int64_t extent = (k - 1) * d + 1;
      const int64_t total = std::max<int64_t>(0, (small - 1) * s + extent - large);
      begin = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      end = total - begin;
    } else if (auto_pad != "NOTSET") {
      return invalid_argument(op + " attribute auto_pad=" + auto_pad);
    }
    if (begin < 0 || end < 0) return invalid_argument(op + " attribute pads is negative");
    win.pads_begin.push_back(begin);
    win.pads_end.push_back(end);
  }
  return win;
}

Result<std::pair<float, float>> clip_bounds(const Node& node,
                                            const std::vector<const Tensor*>& constants) {
  float low = node.attr_float("min", -FLT_MAX), high = node.attr_float("max", FLT_MAX);
  for (size_t i = 0; i < constants.size() && i < 2; ++i) {
    if (constants[i] == nullptr) continue;
    auto values = float_values(*constants[i]);
    if (!values.is_ok() || values->size() != 1) {
      return invalid_argument("Clip input " + std::string(i == 0 ? "min" : "max") +
                              " must be a scalar constant (f32 or 8-bit)");
    }
    (i == 0 ? low : high) = values->front();
  }
  return std::make_pair(low, high);
}

Result<Activation> unary_of(const Node& node, const std::vector<const Tensor*>& constants) {
  Activation act;
  if (node.op_type == kSiluOp) {
    act.op = UnaryOp::kSilu;
    return act;
  }
  if (node.op_type == "Gelu") {
    const std::string approximate = node.attr_string("approximate", "none");
    if (approximate != "none" && approximate != "tanh") {
      return invalid_argument("Gelu attribute approximate=" + approximate);
    }
    act.op = approximate == "tanh" ? UnaryOp::kGeluTanh : UnaryOp::kGelu;
    return act;
  }
  HSCHED_ASSIGN_OR_RETURN(act.op, unary_op_from_onnx(node.op_type));
  if (act.op == UnaryOp::kLeakyRelu) act.alpha = node.attr_float("alpha", 0.01f);
  if (act.op == UnaryOp::kHardSigmoid) {
    act.alpha = node.attr_float("alpha", 0.2f);
    act.beta = node.attr_float("beta", 0.5f);
  }
  if (act.op == UnaryOp::kElu || act.op == UnaryOp::kThresholdedRelu) {
    act.alpha = node.attr_float("alpha", 1.0f);
  }
  if (act.op == UnaryOp::kSelu) {  // ONNX's defaults, as the CPU reads them
    act.alpha = node.attr_float("alpha", 1.67326319217681884765625f);
    act.beta = node.attr_float("gamma", 1.05070102214813232421875f);
  }
  if (act.op == UnaryOp::kShrink) {
    act.alpha = node.attr_float("lambd", 0.5f);
    act.beta = node.attr_float("bias", 0.0f);
  }
  if (act.op == UnaryOp::kIsInf) {
    act.alpha = node.attr_int("detect_negative", 1) != 0 ? 1.0f : 0.0f;
    act.beta = node.attr_int("detect_positive", 1) != 0 ? 1.0f : 0.0f;
  }
  if (act.op == UnaryOp::kClip) {
    HSCHED_ASSIGN_OR_RETURN(auto bounds, clip_bounds(node, constants));
    std::tie(act.alpha, act.beta) = bounds;
  }
  return act;
}

Result<ResizeMode> resize_mode_of(const Node& node, const Tensor* scales, const Shape& in) {
  ResizeMode mode;
  if (node.op_type == "Upsample") {  // asymmetric, nearest floor up (ceil down), as the CPU
    const std::string kind = node.attr_string("mode", "nearest");
    if (kind != "nearest" && kind != "linear" && kind != "bilinear") {
      return invalid_argument("Upsample attribute mode=" + kind);
    }
    mode.linear = kind != "nearest";
    mode.coord = resize::Coord::kAsymmetric;
    mode.nearest = resize::Nearest::kSimple;
    std::vector<float> given;
    if (scales != nullptr) {
      HSCHED_ASSIGN_OR_RETURN(given, float_values(*scales));
    } else {
      const auto it = node.attributes.find("scales");
      const auto* floats =
          it == node.attributes.end() ? nullptr : std::get_if<std::vector<float>>(&it->second);
      if (floats != nullptr) given = *floats;
    }
    if (given.size() != in.size()) return invalid_argument("Upsample scales do not match the rank");
    mode.scales = given;
    return mode;
  }
  const std::string kind = node.attr_string("mode", "nearest");
  if (kind != "nearest" && kind != "linear" && kind != "cubic") {
    return invalid_argument("Resize attribute mode=" + kind);
  }
  mode.linear = kind == "linear";
  mode.cubic = kind == "cubic";
  mode.cubic_a = node.attr_float("cubic_coeff_a", -0.75f);
  mode.exclude_outside = node.attr_int("exclude_outside", 0) != 0;
  const std::string coord = node.attr_string("coordinate_transformation_mode", "half_pixel");
  const std::optional<resize::Coord> parsed_coord = resize::parse_coord(coord);
  if (!parsed_coord || *parsed_coord == resize::Coord::kTfCropAndResize) {
    return invalid_argument("Resize attribute coordinate_transformation_mode=" + coord);
  }
  mode.coord = *parsed_coord;
  const std::string nearest = node.attr_string("nearest_mode", "round_prefer_floor");
  const std::optional<resize::Nearest> parsed_nearest = resize::parse_nearest(nearest);
  if (!parsed_nearest) return invalid_argument("Resize attribute nearest_mode=" + nearest);
  mode.nearest = *parsed_nearest;
  if (node.attr_int("antialias", 0) != 0) return invalid_argument("Resize attribute antialias=1");
  const std::string policy = node.attr_string("keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch") {
    return invalid_argument("Resize attribute keep_aspect_ratio_policy=" + policy);
  }
  const size_t rank = in.size();
  std::vector<int64_t> axes = node.attr_ints("axes");
  if (axes.empty()) {
    for (size_t a = 0; a < rank; ++a) axes.push_back(static_cast<int64_t>(a));
  }
  for (int64_t& a : axes) {
    if (a < 0) a += static_cast<int64_t>(rank);
    if (a < 0 || a >= static_cast<int64_t>(rank)) return invalid_argument("Resize attribute axes");
  }
  if (scales != nullptr && scales->elements() > 0) {
    HSCHED_ASSIGN_OR_RETURN(std::vector<float> given, float_values(*scales));
    if (given.size() != axes.size()) {
      return invalid_argument("Resize scales has " + std::to_string(given.size()) + " values for " +
                              std::to_string(axes.size()) + " axes");
    }
    mode.scales.assign(rank, 1.0f);
    for (size_t i = 0; i < axes.size(); ++i) mode.scales[static_cast<size_t>(axes[i])] = given[i];
  }
  return mode;
}

Result<QuantizeParams> quantize_params(const Node& node, const Shape& x, const Shape& scale,
                                       const Shape* zero, DType packed) {
  if (node.attr_int("block_size", 0) != 0) {
    return invalid_argument(node.op_type + " blocked quantization");
  }
  QuantizeParams params;
  params.quantize = node.op_type == "QuantizeLinear";
  params.int32 = packed == DType::kI32 && !params.quantize;
  if (packed != DType::kU8 && packed != DType::kI8 && !params.int32) {
    return invalid_argument(node.op_type + " of " + std::string(dtype_name(packed)) + " data");
  }
  params.lo = packed == DType::kU8 ? 0.0f : -128.0f;
  params.hi = params.lo + 255.0f;
  params.channels = detail::element_count(scale);
  if (zero != nullptr && detail::element_count(*zero) != params.channels) {
    return invalid_argument(node.op_type + " zero point count differs from the scale's");
  }
  if (params.channels != 1) {  // one per index of `axis` (a single value is per tensor)
    const auto rank = static_cast<int64_t>(x.size());
    int64_t axis = node.attr_int("axis", 1);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank || scale.size() != 1 ||
        x[static_cast<size_t>(axis)] != params.channels) {
      return invalid_argument(node.op_type +
                              " scale is neither one value nor one per index of axis");
    }
    for (size_t i = static_cast<size_t>(axis) + 1; i < x.size(); ++i) params.inner *= x[i];
  }
  return params;
}

bool is_graph_output(const Graph& graph, ValueId v) {
  return std::find(graph.outputs().begin(), graph.outputs().end(), v) != graph.outputs().end();
}

const Node* only_reader(const Graph& graph, ValueId v, NodeId* id) {
  const Value& value = graph.value(v);
  if (value.consumers.size() != 1 || is_graph_output(graph, v)) return nullptr;
  *id = value.consumers[0];
  return &graph.node(*id);
}

std::vector<const Tensor*> constants_of(const Graph& graph, const Node& node, size_t first,
                                        size_t count) {
  std::vector<const Tensor*> tensors;
  for (size_t i = first; i < first + count; ++i) {
    const bool present = i < node.inputs.size() && node.inputs[i] != kNoValue;
    const Value* v = present ? &graph.value(node.inputs[i]) : nullptr;
    tensors.push_back(v && v->constant ? &*v->constant : nullptr);
  }
  return tensors;
}

}  // namespace node_detail

}  // namespace hsched::opencl
