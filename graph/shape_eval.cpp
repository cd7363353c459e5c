#include "graph/shape_eval.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "graph/shape_eval_small.h"
#include "graph/slice_semantics.h"

namespace hsched {
namespace {

using namespace shape_eval_detail;  // NOLINT(google-build-using-namespace): graph/'s own detail

Result<int64_t> normalize_axis(int64_t axis, size_t rank, const std::string& op) {
  const auto r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r) {
    return invalid_argument(op + ": axis " + std::to_string(axis) + " is out of range for rank " +
                            std::to_string(rank));
  }
  return axis < 0 ? axis + r : axis;
}

// Axes from the `axes` input (opset >= 13 for (Un)Squeeze, >= 10 for Slice) or attribute.
std::optional<std::vector<int64_t>> axes_of(const AttributeMap& attrs,
                                            const std::vector<const Small*>& in, size_t input) {
  if (in.size() > input && in[input] != nullptr) return in[input]->ints;
  auto it = attrs.find("axes");
  if (it != attrs.end()) {
    if (const auto* v = std::get_if<std::vector<int64_t>>(&it->second)) return *v;
  }
  return std::nullopt;
}

// Strides in elements of a row-major tensor.
std::vector<int64_t> strides_of(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

Result<Small> gather(const Small& data, const Small& indices, int64_t axis_attr) {
  if (data.dims.empty()) return invalid_argument("Gather: data is a scalar");
  HSCHED_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(axis_attr, data.dims.size(), "Gather"));
  const auto a = static_cast<size_t>(axis);
  std::vector<int64_t> out_dims(data.dims.begin(), data.dims.begin() + axis);
  out_dims.insert(out_dims.end(), indices.dims.begin(), indices.dims.end());
  out_dims.insert(out_dims.end(), data.dims.begin() + axis + 1, data.dims.end());
  HSCHED_RETURN_IF_ERROR(bounded_elements(out_dims).status());
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < a; ++i) outer *= data.dims[i];
  for (size_t i = a + 1; i < data.dims.size(); ++i) inner *= data.dims[i];
  const int64_t extent = data.dims[a];
  Small out;
  out.dtype = data.dtype;
  out.dims = out_dims;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t idx : indices.ints) {
      if (idx < -extent || idx >= extent) {
        return invalid_argument("Gather: index " + std::to_string(idx) + " is out of range [" +
                                std::to_string(-extent) + ", " + std::to_string(extent) + ")");
      }
      if (idx < 0) idx += extent;
      for (int64_t i = 0; i < inner; ++i) {
        const auto src = static_cast<size_t>((o * extent + idx) * inner + i);
        if (data.is_real())
          out.reals.push_back(data.reals[src]);
        else
          out.ints.push_back(data.ints[src]);
      }
    }
  }
  return out;
}

Result<Small> slice(const Small& data, const std::vector<int64_t>& starts,
                    const std::vector<int64_t>& ends, std::optional<std::vector<int64_t>> axes,
                    std::optional<std::vector<int64_t>> steps) {
  const size_t rank = data.dims.size();
  auto sliced = slice_axes(data.dims, starts, ends, std::move(axes), std::move(steps));
  if (!sliced.is_ok()) return invalid_argument("Slice: " + sliced.status().message());
  std::vector<int64_t> begin, step, count;
  for (const SliceAxis& a : *sliced) {
    begin.push_back(a.begin);
    step.push_back(a.step);
    count.push_back(a.count);
  }
  HSCHED_ASSIGN_OR_RETURN(int64_t n, bounded_elements(count));
  const auto strides = strides_of(data.dims);
  Small out;
  out.dtype = data.dtype;
  out.dims = count;
  std::vector<int64_t> index(rank, 0);
  for (int64_t o = 0; o < n; ++o) {
    int64_t src = 0;
    for (size_t a = 0; a < rank; ++a) src += (begin[a] + index[a] * step[a]) * strides[a];
    if (data.is_real())
      out.reals.push_back(data.reals[static_cast<size_t>(src)]);
    else
      out.ints.push_back(data.ints[static_cast<size_t>(src)]);
    for (size_t a = rank; a-- > 0;) {
      if (++index[a] < count[a]) break;
      index[a] = 0;
    }
  }
  return out;
}

Result<Small> concat(const std::vector<const Small*>& in, int64_t axis_attr) {
  if (in.empty()) return invalid_argument("Concat: no inputs");
  const size_t rank = in[0]->dims.size();
  HSCHED_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(axis_attr, rank, "Concat"));
  const auto a = static_cast<size_t>(axis);
  std::vector<int64_t> out_dims = in[0]->dims;
  out_dims[a] = 0;
  for (const auto* s : in) {
    if (s->dims.size() != rank || s->is_real() != in[0]->is_real()) {
      return invalid_argument("Concat: inputs differ in rank or dtype");
    }
    for (size_t i = 0; i < rank; ++i) {
      if (i != a && s->dims[i] != in[0]->dims[i]) {
        return invalid_argument("Concat: inputs differ in dimension " + std::to_string(i));
      }
    }
    out_dims[a] += s->dims[a];
  }
  HSCHED_RETURN_IF_ERROR(bounded_elements(out_dims).status());
  int64_t outer = 1;
  for (size_t i = 0; i < a; ++i) outer *= out_dims[i];
  Small out;
  out.dtype = in[0]->dtype;
  out.dims = out_dims;
  for (int64_t o = 0; o < outer; ++o) {
    for (const auto* s : in) {
      const int64_t chunk = static_cast<int64_t>(s->size()) / std::max<int64_t>(outer, 1);
      for (int64_t i = 0; i < chunk; ++i) {
        const auto src = static_cast<size_t>(o * chunk + i);
        if (s->is_real())
          out.reals.push_back(s->reals[src]);
        else
          out.ints.push_back(s->ints[src]);
      }
    }
  }
  return out;
}

Result<Small> reshape_to(Small data, const std::vector<int64_t>& request, bool allow_zero) {
  std::vector<int64_t> dims;
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < request.size(); ++i) {
    int64_t d = request[i];
    if (d == 0 && !allow_zero) {
      if (i >= data.dims.size()) return invalid_argument("Reshape: 0 copies a missing dimension");
      d = data.dims[i];
    }
    if (d == -1) {
      if (infer >= 0) return invalid_argument("Reshape: more than one -1");
      infer = static_cast<int>(i);
      dims.push_back(1);
      continue;
    }
    if (d < 0) return invalid_argument("Reshape: negative dimension");
    dims.push_back(d);
    HSCHED_ASSIGN_OR_RETURN(known, checked_elements(dims));
  }
  const auto total = static_cast<int64_t>(data.size());
  if (infer >= 0) {
    if (known == 0 || total % known != 0) return invalid_argument("Reshape: sizes do not fit");
    dims[static_cast<size_t>(infer)] = total / known;
  } else if (known != total) {
    return invalid_argument("Reshape: " + std::to_string(total) + " elements do not fit " +
                            Shape(dims).to_string());
  }
  data.dims = dims;
  return data;
}

Result<Small> squeeze(Small data, std::optional<std::vector<int64_t>> axes, bool un) {
  if (un) {
    if (!axes) return invalid_argument("Unsqueeze: no axes");
    const size_t out_rank = data.dims.size() + axes->size();
    if (out_rank > kMaxRank) {
      return invalid_argument("Unsqueeze: the output would have rank " + std::to_string(out_rank) +
                              ", more than the limit of " + std::to_string(kMaxRank));
    }
    std::vector<bool> inserted(out_rank, false);
    for (int64_t axis : *axes) {
      HSCHED_ASSIGN_OR_RETURN(int64_t a, normalize_axis(axis, out_rank, "Unsqueeze"));
      if (inserted[static_cast<size_t>(a)]) return invalid_argument("Unsqueeze: axis repeated");
      inserted[static_cast<size_t>(a)] = true;
    }
    std::vector<int64_t> dims;
    size_t next = 0;
    for (size_t i = 0; i < out_rank; ++i) dims.push_back(inserted[i] ? 1 : data.dims[next++]);
    data.dims = dims;
    return data;
  }
  std::vector<bool> drop(data.dims.size(), false);
  if (axes) {
    for (int64_t axis : *axes) {
      HSCHED_ASSIGN_OR_RETURN(int64_t a, normalize_axis(axis, data.dims.size(), "Squeeze"));
      if (data.dims[static_cast<size_t>(a)] != 1) {
        return invalid_argument("Squeeze: dimension " + std::to_string(a) + " is not 1");
      }
      drop[static_cast<size_t>(a)] = true;
    }
  } else {
    for (size_t i = 0; i < data.dims.size(); ++i) drop[i] = data.dims[i] == 1;
  }
  std::vector<int64_t> dims;
  for (size_t i = 0; i < data.dims.size(); ++i) {
    if (!drop[i]) dims.push_back(data.dims[i]);
  }
  data.dims = dims;
  return data;
}

Result<Small> cast(const Small& x, int64_t to) {
  const auto dtype = dtype_from_onnx(static_cast<int32_t>(to));
  // Only dtypes to_small reads are folded (u64 values past 2^63 do not fit Small's int64).
  if (!dtype || *dtype == DType::kU64) {
    return unimplemented("Cast to " + std::string(onnx_dtype_name(static_cast<int32_t>(to))) +
                         " is not folded");
  }
  Small out;
  out.dtype = *dtype;
  out.dims = x.dims;
  for (size_t i = 0; i < x.size(); ++i) {
    if (is_floating(*dtype)) {
      out.reals.push_back(x.real(i));
    } else if (*dtype == DType::kBool) {
      out.ints.push_back(x.real(i) != 0);
    } else if (x.is_real()) {
      HSCHED_ASSIGN_OR_RETURN(int64_t v, real_to_int(x.reals[i]));
      out.ints.push_back(v);
    } else {
      out.ints.push_back(x.ints[i]);
    }
  }
  return out;
}

Result<Small> range(const Small& start, const Small& limit, const Small& delta) {
  if (start.size() != 1 || limit.size() != 1 || delta.size() != 1) {
    return invalid_argument("Range: start, limit and delta must be scalars");
  }
  const double d = delta.real(0);
  if (d == 0) return invalid_argument("Range: delta is 0");
  const double count_real = std::ceil((limit.real(0) - start.real(0)) / d);
  if (!(count_real <= static_cast<double>(kMaxFoldElements))) return too_big(kMaxFoldElements + 1);
  const auto count = static_cast<int64_t>(std::max(count_real, 0.0));
  Small out;
  out.dtype = start.dtype;
  out.dims = {count};
  for (int64_t i = 0; i < count; ++i) {
    if (start.is_real())
      out.reals.push_back(start.reals[0] + static_cast<double>(i) * d);
    else {
      int64_t step = 0, v = 0;
      if (__builtin_mul_overflow(i, delta.ints[0], &step) ||
          __builtin_add_overflow(start.ints[0], step, &v)) {
        return invalid_argument("Range: integer overflow");
      }
      out.ints.push_back(v);
    }
  }
  return out;
}

Result<Small> fill(const std::vector<int64_t>& dims, const Small& value) {
  HSCHED_ASSIGN_OR_RETURN(int64_t n, bounded_elements(dims));
  Small out;
  out.dtype = value.dtype;
  out.dims = dims;
  if (value.is_real())
    out.reals.assign(static_cast<size_t>(n), value.reals.at(0));
  else
    out.ints.assign(static_cast<size_t>(n), value.ints.at(0));
  return out;
}

Result<Small> constant(const AttributeMap& attrs) {
  for (const auto& [name, attr] : attrs) {
    if (const auto* t = std::get_if<Tensor>(&attr)) return to_small(*t);
    Small s;
    if (const auto* f = std::get_if<float>(&attr)) {
      s.dtype = DType::kF32;
      s.reals = {*f};
    } else if (const auto* fs = std::get_if<std::vector<float>>(&attr)) {
      s.dtype = DType::kF32;
      s.dims = {static_cast<int64_t>(fs->size())};
      s.reals.assign(fs->begin(), fs->end());
    } else if (const auto* i = std::get_if<int64_t>(&attr)) {
      s.ints = {*i};
    } else if (const auto* is = std::get_if<std::vector<int64_t>>(&attr)) {
      s.dims = {static_cast<int64_t>(is->size())};
      s.ints = *is;
    } else {
      return unimplemented("Constant '" + name + "' is not folded");
    }
    return s;
  }
  return invalid_argument("Constant has no value");
}

// ReduceSum, ReduceProd, ReduceMin, ReduceMax over `axes` (all when none, unless `noop`):
// exporters compute flattened sizes as ReduceProd(Shape(x)). Integer sums and products are
// overflow-checked.
Result<Small> reduce(const std::string& op, const Small& x,
                     std::optional<std::vector<int64_t>> axes, bool keepdims, bool noop) {
  const size_t rank = x.dims.size();
  const bool every_dim = !axes || axes->empty();
  std::vector<bool> reduced(rank, every_dim && !noop);
  for (int64_t a : axes.value_or(std::vector<int64_t>{})) {
    HSCHED_ASSIGN_OR_RETURN(const int64_t axis, normalize_axis(a, rank, op));
    reduced[static_cast<size_t>(axis)] = true;
  }
  Small out;
  out.dtype = x.dtype;
  std::vector<int64_t> kept;  // the output's dims with each reduced dim as 1
  for (size_t d = 0; d < rank; ++d) {
    kept.push_back(reduced[d] ? 1 : x.dims[d]);
    if (!reduced[d] || keepdims) out.dims.push_back(kept.back());
  }
  HSCHED_ASSIGN_OR_RETURN(const int64_t count, bounded_elements(kept));
  const bool sum = op == "ReduceSum", prod = op == "ReduceProd", min = op == "ReduceMin";
  if ((op == "ReduceMin" || op == "ReduceMax") && x.size() == 0) {
    return unimplemented(op + " of an empty tensor is not folded");
  }
  const auto n = static_cast<size_t>(count);
  std::vector<bool> first(n, true);
  out.ints.assign(x.is_real() ? 0 : n, prod ? 1 : 0);
  out.reals.assign(x.is_real() ? n : 0, prod ? 1.0 : 0.0);
  const std::vector<int64_t> in_strides = strides_of(x.dims), out_strides = strides_of(kept);
  for (size_t i = 0; i < x.size(); ++i) {
    size_t o = 0;
    for (size_t d = 0; d < rank; ++d) {
      const int64_t index = static_cast<int64_t>(i) / in_strides[d] % x.dims[d];
      if (!reduced[d]) o += static_cast<size_t>(index * out_strides[d]);
    }
    if (x.is_real()) {
      double& acc = out.reals[o];
      const double v = x.reals[i];
      acc = sum        ? acc + v
            : prod     ? acc * v
            : first[o] ? v
            : min      ? std::min(acc, v)
                       : std::max(acc, v);
    } else {
      int64_t& acc = out.ints[o];
      const int64_t v = x.ints[i];
      if ((sum && __builtin_add_overflow(acc, v, &acc)) ||
          (prod && __builtin_mul_overflow(acc, v, &acc))) {
        return unimplemented(op + ": the result overflows int64");
      }
      if (!sum && !prod) acc = first[o] ? v : min ? std::min(acc, v) : std::max(acc, v);
    }
    first[o] = false;
  }
  return out;
}

// out[c] = data[c with its `axis` coordinate replaced by indices[c]]; out has indices' shape.
Result<Small> gather_elements(const Small& data, const Small& indices, int64_t axis_attr) {
  const size_t rank = data.dims.size();
  if (rank == 0 || indices.dims.size() != rank) {
    return invalid_argument("GatherElements: data and indices must have the same rank >= 1");
  }
  HSCHED_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(axis_attr, rank, "GatherElements"));
  const auto a = static_cast<size_t>(axis);
  for (size_t d = 0; d < rank; ++d) {
    if (d != a && indices.dims[d] > data.dims[d]) {
      return invalid_argument("GatherElements: indices dim " + std::to_string(d) + " (" +
                              std::to_string(indices.dims[d]) + ") exceeds the data's (" +
                              std::to_string(data.dims[d]) + ")");
    }
  }
  const std::vector<int64_t> data_strides = strides_of(data.dims);
  const int64_t extent = data.dims[a];
  Small out;
  out.dtype = data.dtype;
  out.dims = indices.dims;
  std::vector<int64_t> coord(rank, 0);  // of the current index, row-major
  for (int64_t idx : indices.ints) {
    if (idx < -extent || idx >= extent) {
      return invalid_argument("GatherElements: index " + std::to_string(idx) +
                              " is out of range [" + std::to_string(-extent) + ", " +
                              std::to_string(extent) + ")");
    }
    int64_t src = 0;
    for (size_t d = 0; d < rank; ++d) {
      src += (d == a ? (idx < 0 ? idx + extent : idx) : coord[d]) * data_strides[d];
    }
    if (data.is_real())
      out.reals.push_back(data.reals[static_cast<size_t>(src)]);
    else
      out.ints.push_back(data.ints[static_cast<size_t>(src)]);
    for (size_t d = rank; d-- > 0;) {  // the next coordinate
      if (++coord[d] < indices.dims[d]) break;
      coord[d] = 0;
    }
  }
  return out;
}

// Transpose by `perm` (the axes reversed without one), which must order every axis once.
Result<Small> transpose(const Small& data, std::optional<std::vector<int64_t>> perm) {
  const size_t rank = data.dims.size();
  if (!perm) {
    perm.emplace(rank);
    for (size_t d = 0; d < rank; ++d) (*perm)[d] = static_cast<int64_t>(rank - 1 - d);
  }
  std::vector<bool> seen(rank, false);
  if (perm->size() != rank) return invalid_argument("Transpose: perm does not match the rank");
  for (int64_t p : *perm) {
    if (p < 0 || p >= static_cast<int64_t>(rank) || seen[static_cast<size_t>(p)]) {
      return invalid_argument("Transpose: perm is not a permutation of the axes");
    }
    seen[static_cast<size_t>(p)] = true;
  }
  const std::vector<int64_t> in_strides = strides_of(data.dims);
  Small out;
  out.dtype = data.dtype;
  for (int64_t p : *perm) out.dims.push_back(data.dims[static_cast<size_t>(p)]);
  std::vector<int64_t> coord(rank, 0);
  for (size_t k = 0; k < data.size(); ++k) {
    int64_t src = 0;
    for (size_t d = 0; d < rank; ++d) src += coord[d] * in_strides[static_cast<size_t>((*perm)[d])];
    if (data.is_real())
      out.reals.push_back(data.reals[static_cast<size_t>(src)]);
    else
      out.ints.push_back(data.ints[static_cast<size_t>(src)]);
    for (size_t d = rank; d-- > 0;) {  // the next coordinate of the output
      if (++coord[d] < out.dims[d]) break;
      coord[d] = 0;
    }
  }
  return out;
}

const std::set<std::string>& evaluable_ops() {
  // clang-format off
  static const std::set<std::string> kOps{
      "Abs", "Add", "And", "Cast", "CastLike", "Ceil", "Clip", "Concat", "Constant",
      "ConstantOfShape", "Div", "Equal", "Expand", "Floor", "Gather", "GatherElements", "Greater",
      "GreaterOrEqual", "Identity", "Less", "LessOrEqual", "Max", "Min", "Mod", "Mul", "Neg", "Not",
      "Or", "Range", "Reciprocal", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceSum", "Reshape",
      "Shape", "Size", "Slice", "Sqrt", "Squeeze", "Sub", "Transpose", "Unsqueeze", "Where"};
  // clang-format on
  return kOps;
}

Result<Small> evaluate_one(const std::string& op, const AttributeMap& attrs,
                           const std::vector<EvalInput>& inputs, int64_t opset,
                           const std::vector<const Small*>& in) {
  auto need = [&](size_t count) -> Status {
    for (size_t i = 0; i < count; ++i) {
      if (i >= in.size() || in[i] == nullptr) {
        return invalid_argument(op + ": input " + std::to_string(i) + " is missing");
      }
    }
    return Status::ok();
  };
  // Inputs read as indices, shapes or axes must hold integers.
  auto need_ints = [&](std::initializer_list<size_t> which) -> Status {
    for (size_t i : which) {
      if (i < in.size() && in[i] != nullptr && in[i]->is_real()) {
        return invalid_argument(op + ": input " + std::to_string(i) + " must be an integer tensor");
      }
    }
    return Status::ok();
  };
  // Inputs combined element by element must be of the same kind (all integer or all float).
  auto same_kind = [&](size_t first) -> Status {
    for (size_t i = first; i < in.size(); ++i) {
      if (in[i] != nullptr && in[first] != nullptr && in[i]->is_real() != in[first]->is_real()) {
        return invalid_argument(op + ": inputs mix integer and float dtypes");
      }
    }
    return Status::ok();
  };
  auto attr_int = [&](const std::string& key, int64_t fallback) {
    auto it = attrs.find(key);
    const int64_t* v = it == attrs.end() ? nullptr : std::get_if<int64_t>(&it->second);
    return v ? *v : fallback;
  };
  if (op == "Constant") return constant(attrs);
  if (op == "Shape" || op == "Size") {
    if (inputs.empty() || !inputs[0].shape.is_static())
      return unimplemented(op + ": shape unknown");
    const auto& dims = inputs[0].shape.dims;
    if (op == "Size") return make_ints(DType::kI64, {}, {inputs[0].shape.elements()});
    const auto rank = static_cast<int64_t>(dims.size());
    int64_t start = attr_int("start", 0), end = attr_int("end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, start, rank);
    return make_ints(DType::kI64, {end - start},
                     std::vector<int64_t>(dims.begin() + start, dims.begin() + end));
  }
  if (op == "ConstantOfShape") {
    HSCHED_RETURN_IF_ERROR(need(1));
    HSCHED_RETURN_IF_ERROR(need_ints({0}));
    Small zero;
    zero.dtype = DType::kF32;
    zero.reals = {0.0};
    auto it = attrs.find("value");
    const Tensor* value = it == attrs.end() ? nullptr : std::get_if<Tensor>(&it->second);
    if (value != nullptr) {
      HSCHED_ASSIGN_OR_RETURN(zero, to_small(*value));
      if (zero.size() != 1) return invalid_argument("ConstantOfShape: value is not one element");
    }
    return fill(in[0]->ints, zero);
  }
  if (op == "Cast") {
    HSCHED_RETURN_IF_ERROR(need(1));
    return cast(*in[0], attr_int("to", 0));
  }
  if (op == "CastLike") {  // (the rewrites' constants of a value's type: node_expansion.h)
    HSCHED_RETURN_IF_ERROR(need(1));
    if (inputs.size() < 2 || inputs[1].dtype == DType::kUndefined) {
      return unimplemented("CastLike: the target's type is unknown");
    }
    return cast(*in[0], dtype_to_onnx(inputs[1].dtype));
  }
  if (op == "Gather") {
    HSCHED_RETURN_IF_ERROR(need(2));
    HSCHED_RETURN_IF_ERROR(need_ints({1}));
    return gather(*in[0], *in[1], attr_int("axis", 0));
  }
  if (op == "GatherElements") {
    HSCHED_RETURN_IF_ERROR(need(2));
    HSCHED_RETURN_IF_ERROR(need_ints({1}));
    return gather_elements(*in[0], *in[1], attr_int("axis", 0));
  }
  if (op == "Slice") {
    HSCHED_RETURN_IF_ERROR(need(1));
    if (opset < 10) {
      auto ints = [&](const std::string& key) {
        auto it = attrs.find(key);
        const auto* v =
            it == attrs.end() ? nullptr : std::get_if<std::vector<int64_t>>(&it->second);
        return v ? *v : std::vector<int64_t>{};
      };
      return slice(*in[0], ints("starts"), ints("ends"), axes_of(attrs, {}, 0), std::nullopt);
    }
    HSCHED_RETURN_IF_ERROR(need(3));
    HSCHED_RETURN_IF_ERROR(need_ints({1, 2, 3, 4}));
    std::optional<std::vector<int64_t>> steps;
    if (in.size() > 4 && in[4] != nullptr) steps = in[4]->ints;
    return slice(*in[0], in[1]->ints, in[2]->ints, axes_of(attrs, in, 3), steps);
  }
  if (op == "Concat") {
    for (const auto* s : in) {
      if (s == nullptr) return invalid_argument("Concat: an input is missing");
    }
    HSCHED_RETURN_IF_ERROR(same_kind(0));
    return concat(in, attr_int("axis", 0));
  }
  if (op == "Unsqueeze" || op == "Squeeze") {
    HSCHED_RETURN_IF_ERROR(need(1));
    HSCHED_RETURN_IF_ERROR(need_ints({1}));
    return squeeze(*in[0], axes_of(attrs, in, 1), op == "Unsqueeze");
  }
  if (op == "Reshape") {
    HSCHED_RETURN_IF_ERROR(need(2));
    HSCHED_RETURN_IF_ERROR(need_ints({1}));
    return reshape_to(*in[0], in[1]->ints, attr_int("allowzero", 0) != 0);
  }
  if (op == "ReduceSum" || op == "ReduceProd" || op == "ReduceMin" || op == "ReduceMax") {
    HSCHED_RETURN_IF_ERROR(need(1));
    HSCHED_RETURN_IF_ERROR(need_ints({1}));
    // Axes: the attribute, or the second input (ReduceSum from opset 13); an axes input that is
    // not known leaves the node alone.
    if (in.size() > 1 && in[1] == nullptr && !inputs[1].omitted) {
      return unimplemented(op + ": axes unknown");
    }
    return reduce(op, *in[0], axes_of(attrs, in, 1), attr_int("keepdims", 1) != 0,
                  attr_int("noop_with_empty_axes", 0) != 0);
  }
  if (op == "Clip") {  // Min(Max(x, min), max), bounds as inputs from opset 11, else attributes
    HSCHED_RETURN_IF_ERROR(need(1));
    Small out = *in[0];
    for (const bool upper : {false, true}) {
      const size_t at = upper ? 2 : 1;
      std::optional<Small> attr_bound;
      const Small* bound = nullptr;
      if (opset < 11) {
        auto it = attrs.find(upper ? "max" : "min");
        const float* v = it == attrs.end() ? nullptr : std::get_if<float>(&it->second);
        if (v == nullptr) continue;
        if (!out.is_real()) return unimplemented("Clip: float bounds of an integer tensor");
        attr_bound = Small{out.dtype, {}, {}, {static_cast<double>(*v)}};
        bound = &*attr_bound;
      } else {
        if (in.size() <= at || inputs[at].omitted) continue;
        if (in[at] == nullptr) return unimplemented("Clip: a bound is unknown");
        bound = in[at];
      }
      if (bound->is_real() != out.is_real()) {
        return invalid_argument("Clip: the bounds are not of the input's kind");
      }
      HSCHED_ASSIGN_OR_RETURN(out, binary(upper ? "Min" : "Max", {&out, bound}));
    }
    return out;
  }
  if (op == "Transpose") {
    HSCHED_RETURN_IF_ERROR(need(1));
    auto it = attrs.find("perm");
    const auto* perm = it == attrs.end() ? nullptr : std::get_if<std::vector<int64_t>>(&it->second);
    return transpose(*in[0], perm ? std::optional(*perm) : std::nullopt);
  }
  if (op == "Range") {
    HSCHED_RETURN_IF_ERROR(need(3));
    HSCHED_RETURN_IF_ERROR(same_kind(0));
    return range(*in[0], *in[1], *in[2]);
  }
  if (op == "Expand") {
    HSCHED_RETURN_IF_ERROR(need(2));
    HSCHED_RETURN_IF_ERROR(need_ints({1}));
    std::vector<const std::vector<int64_t>*> dims{&in[0]->dims, &in[1]->ints};
    HSCHED_ASSIGN_OR_RETURN(auto out_dims, broadcast_dims(dims));
    HSCHED_RETURN_IF_ERROR(bounded_elements(out_dims).status());
    Small out;
    out.dtype = in[0]->dtype;
    out.dims = out_dims;
    for (size_t src : broadcast_map(out_dims, in[0]->dims)) {
      if (in[0]->is_real())
        out.reals.push_back(in[0]->reals[src]);
      else
        out.ints.push_back(in[0]->ints[src]);
    }
    return out;
  }
  if (op == "Where") {
    HSCHED_RETURN_IF_ERROR(need(3));
    HSCHED_RETURN_IF_ERROR(same_kind(1));
    std::vector<const std::vector<int64_t>*> dims{&in[0]->dims, &in[1]->dims, &in[2]->dims};
    HSCHED_ASSIGN_OR_RETURN(auto out_dims, broadcast_dims(dims));
    HSCHED_RETURN_IF_ERROR(bounded_elements(out_dims).status());
    const auto mc = broadcast_map(out_dims, in[0]->dims);
    const auto mx = broadcast_map(out_dims, in[1]->dims);
    const auto my = broadcast_map(out_dims, in[2]->dims);
    Small out;
    out.dtype = in[1]->dtype;
    out.dims = out_dims;
    for (size_t k = 0; k < mc.size(); ++k) {
      const bool c = in[0]->real(mc[k]) != 0;
      if (out.is_real())
        out.reals.push_back(c ? in[1]->real(mx[k]) : in[2]->real(my[k]));
      else
        out.ints.push_back(c ? in[1]->ints.at(mx[k]) : in[2]->ints.at(my[k]));
    }
    return out;
  }
  if (in.size() == 1) {
    HSCHED_RETURN_IF_ERROR(need(1));
    return unary(op, *in[0]);
  }
  for (const auto* s : in) {
    if (s == nullptr) return invalid_argument(op + ": an input is missing");
  }
  HSCHED_RETURN_IF_ERROR(same_kind(0));
  return binary(op, in);
}

}  // namespace

bool is_evaluable_op(const std::string& op_type) { return evaluable_ops().count(op_type) != 0; }

bool needs_only_input_type(const std::string& op_type, int index) {
  return index == (op_type == "CastLike" ? 1 : 0) &&
         (op_type == "Shape" || op_type == "Size" || op_type == "CastLike");
}

Result<std::vector<Tensor>> evaluate_op(const std::string& op_type, const AttributeMap& attrs,
                                        const std::vector<EvalInput>& inputs, int64_t opset) {
  if (!is_evaluable_op(op_type)) return unimplemented(op_type + " is not folded");
  std::vector<Small> smalls(inputs.size());
  std::vector<const Small*> in(inputs.size(), nullptr);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].value == nullptr) continue;
    HSCHED_ASSIGN_OR_RETURN(smalls[i], to_small(*inputs[i].value));
    in[i] = &smalls[i];
  }
  HSCHED_ASSIGN_OR_RETURN(Small out, evaluate_one(op_type, attrs, inputs, opset, in));
  std::vector<Tensor> outputs;
  outputs.push_back(to_tensor(out));
  return outputs;
}

}  // namespace hsched
