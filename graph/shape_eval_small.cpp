#include "graph/shape_eval_small.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "core/float16.h"

namespace hsched::shape_eval_detail {
Status too_big(int64_t elements) {
  return unimplemented("a result of " + std::to_string(elements) + " elements is too large to fold");
}

Result<int64_t> bounded_elements(const std::vector<int64_t>& dims) {
  HSCHED_ASSIGN_OR_RETURN(int64_t n, checked_elements(dims));
  if (n > kMaxFoldElements) return too_big(n);
  return n;
}

Result<Small> to_small(const Tensor& t) {
  HSCHED_ASSIGN_OR_RETURN(int64_t n, bounded_elements(t.dims()));
  Small s;
  s.dtype = t.dtype();
  s.dims = t.dims();
  auto widen = [&](auto span) {
    for (auto v : span) s.ints.push_back(static_cast<int64_t>(v));
  };
  switch (t.dtype()) {
    case DType::kF32:
      for (float v : t.values<float>()) s.reals.push_back(v);
      break;
    case DType::kF64:
      for (double v : t.values<double>()) s.reals.push_back(v);
      break;
    case DType::kF16:
      for (uint16_t v : t.values<uint16_t>()) s.reals.push_back(half_to_float(v));
      break;
    case DType::kBF16:
      for (uint16_t v : t.values<uint16_t>()) s.reals.push_back(bf16_to_float(v));
      break;
    case DType::kI64: widen(t.values<int64_t>()); break;
    case DType::kI16: widen(t.values<int16_t>()); break;
    case DType::kU16: widen(t.values<uint16_t>()); break;
    case DType::kU32: widen(t.values<uint32_t>()); break;
    case DType::kI32: widen(t.values<int32_t>()); break;
    case DType::kI8: widen(t.values<int8_t>()); break;
    case DType::kU8: widen(t.values<uint8_t>()); break;
    case DType::kBool:
      for (uint8_t v : t.values<uint8_t>()) s.ints.push_back(v != 0);
      break;
    default: return unimplemented("dtype " + std::string(dtype_name(t.dtype())) + " is not folded");
  }
  (void)n;
  return s;
}

// Converts a double to an integer of `dtype`'s range without undefined behaviour.
Result<int64_t> real_to_int(double v) {
  if (!std::isfinite(v) || v >= 9.2e18 || v <= -9.2e18) {
    return unimplemented("value " + std::to_string(v) + " does not fit an integer");
  }
  return static_cast<int64_t>(v);
}

Tensor to_tensor(const Small& s) {
  Tensor t(s.dtype, s.dims);
  const size_t n = static_cast<size_t>(t.elements());
  auto narrow = [&](auto span) {
    using T = typename decltype(span)::value_type;
    for (size_t i = 0; i < n; ++i) span[i] = static_cast<T>(s.ints[i]);
  };
  switch (s.dtype) {
    case DType::kF32: {
      auto out = t.values<float>();
      for (size_t i = 0; i < n; ++i) out[i] = static_cast<float>(s.reals[i]);
      break;
    }
    case DType::kF64: {
      auto out = t.values<double>();
      for (size_t i = 0; i < n; ++i) out[i] = s.reals[i];
      break;
    }
    case DType::kF16: {  // rounded once from float (reals of half inputs are exact there)
      auto out = t.values<uint16_t>();
      for (size_t i = 0; i < n; ++i) out[i] = float_to_half(static_cast<float>(s.reals[i]));
      break;
    }
    case DType::kBF16: {
      auto out = t.values<uint16_t>();
      for (size_t i = 0; i < n; ++i) out[i] = float_to_bf16(static_cast<float>(s.reals[i]));
      break;
    }
    case DType::kI64: narrow(t.values<int64_t>()); break;
    case DType::kI32: narrow(t.values<int32_t>()); break;
    case DType::kI16: narrow(t.values<int16_t>()); break;
    case DType::kI8: narrow(t.values<int8_t>()); break;
    case DType::kU32: narrow(t.values<uint32_t>()); break;
    case DType::kU16: narrow(t.values<uint16_t>()); break;
    case DType::kU8:
    case DType::kBool: narrow(t.values<uint8_t>()); break;
    default: break;  // u64: never folded (to_small and cast refuse it)
  }
  return t;
}

Small make_ints(DType dtype, std::vector<int64_t> dims, std::vector<int64_t> ints) {
  Small s;
  s.dtype = dtype;
  s.dims = std::move(dims);
  s.ints = std::move(ints);
  return s;
}

// numpy-style broadcast of several shapes.
Result<std::vector<int64_t>> broadcast_dims(const std::vector<const std::vector<int64_t>*>& all) {
  size_t rank = 0;
  for (const auto* d : all) rank = std::max(rank, d->size());
  std::vector<int64_t> out(rank, 1);
  for (const auto* d : all) {
    const size_t offset = rank - d->size();
    for (size_t i = 0; i < d->size(); ++i) {
      const int64_t v = (*d)[i];
      int64_t& o = out[offset + i];
      if (v == o || v == 1) continue;
      if (o == 1) {
        o = v;
        continue;
      }
      return invalid_argument("shapes cannot be broadcast (" + std::to_string(o) + " vs " +
                              std::to_string(v) + ")");
    }
  }
  return out;
}

// For each element of `out_dims`, the index of the element of `in_dims` it reads.
std::vector<size_t> broadcast_map(const std::vector<int64_t>& out_dims,
                                  const std::vector<int64_t>& in_dims) {
  const int64_t n = Shape(out_dims).elements();
  // An empty result reads nothing; otherwise every input dim is 1 or the output's, so the
  // input's strides stay below n. (An empty input's other dims may be huge: their product would
  // overflow.)
  if (n == 0) return {};
  const size_t rank = out_dims.size();
  const size_t offset = rank - in_dims.size();
  std::vector<int64_t> in_strides(rank, 0);
  int64_t stride = 1;
  for (size_t i = in_dims.size(); i-- > 0;) {
    in_strides[offset + i] = in_dims[i] == 1 ? 0 : stride;
    stride *= in_dims[i];
  }
  std::vector<size_t> map(static_cast<size_t>(n));
  std::vector<int64_t> index(rank, 0);
  for (int64_t o = 0; o < n; ++o) {
    int64_t in = 0;
    for (size_t a = 0; a < rank; ++a) in += index[a] * in_strides[a];
    map[static_cast<size_t>(o)] = static_cast<size_t>(in);
    for (size_t a = rank; a-- > 0;) {
      if (++index[a] < out_dims[a]) break;
      index[a] = 0;
    }
  }
  return map;
}

namespace {

using IntOp = std::function<Result<int64_t>(int64_t, int64_t)>;
using RealOp = std::function<double(double, double)>;

// Wraps an overflow-reporting builtin (`bool f(a, b, &result)`) as an IntOp.
template <typename F>
IntOp checked(F op) {
  return [op](int64_t a, int64_t b) -> Result<int64_t> {
    int64_t r = 0;
    if (op(a, b, &r)) return invalid_argument("integer overflow while folding");
    return r;
  };
}

Result<Small> elementwise(const std::vector<const Small*>& in, DType out_dtype, const IntOp& iop,
                          const RealOp& rop) {
  std::vector<const std::vector<int64_t>*> dims;
  for (const auto* s : in) dims.push_back(&s->dims);
  HSCHED_ASSIGN_OR_RETURN(auto out_dims, broadcast_dims(dims));
  HSCHED_ASSIGN_OR_RETURN(int64_t n, bounded_elements(out_dims));
  const bool real = in[0]->is_real();
  Small out;
  out.dtype = out_dtype;
  out.dims = out_dims;
  std::vector<std::vector<size_t>> maps;
  for (const auto* s : in) maps.push_back(broadcast_map(out_dims, s->dims));
  for (int64_t o = 0; o < n; ++o) {
    const auto k = static_cast<size_t>(o);
    if (real) {
      double acc = in[0]->real(maps[0][k]);
      for (size_t j = 1; j < in.size(); ++j) acc = rop(acc, in[j]->real(maps[j][k]));
      if (is_floating(out_dtype)) {
        out.reals.push_back(acc);
      } else {
        out.ints.push_back(static_cast<int64_t>(acc != 0));  // comparisons give 0 or 1
      }
    } else {
      int64_t acc = in[0]->ints[maps[0][k]];
      for (size_t j = 1; j < in.size(); ++j) {
        HSCHED_ASSIGN_OR_RETURN(acc, iop(acc, in[j]->ints[maps[j][k]]));
      }
      out.ints.push_back(acc);
    }
  }
  return out;
}

}  // namespace

Result<Small> binary(const std::string& op, const std::vector<const Small*>& in) {
  if (in.size() < 2) return invalid_argument(op + " needs two inputs");
  const DType dtype = in[0]->dtype;
  auto cmp = [&](auto pred) {
    return elementwise(
        in, DType::kBool, [pred](int64_t a, int64_t b) -> Result<int64_t> { return pred(a, b); },
        [pred](double a, double b) { return pred(a, b) ? 1.0 : 0.0; });
  };
  if (op == "Add") {
    return elementwise(
        in, dtype, checked([](int64_t a, int64_t b, int64_t* r) { return __builtin_add_overflow(a, b, r); }),
        std::plus<double>());
  }
  if (op == "Sub") {
    return elementwise(
        in, dtype, checked([](int64_t a, int64_t b, int64_t* r) { return __builtin_sub_overflow(a, b, r); }),
        std::minus<double>());
  }
  if (op == "Mul") {
    return elementwise(
        in, dtype, checked([](int64_t a, int64_t b, int64_t* r) { return __builtin_mul_overflow(a, b, r); }),
        std::multiplies<double>());
  }
  if (op == "Div" || op == "Mod") {
    const bool div = op == "Div";
    return elementwise(
        in, dtype,
        [div](int64_t a, int64_t b) -> Result<int64_t> {
          if (b == 0) return invalid_argument("integer division by zero while folding");
          if (a == std::numeric_limits<int64_t>::min() && b == -1) {
            return invalid_argument("integer overflow while folding");
          }
          if (div) return a / b;  // truncates, as ONNX Runtime does
          const int64_t r = a % b;  // Mod with fmod=0 takes the divisor's sign
          return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
        },
        [div](double a, double b) { return div ? a / b : std::fmod(a, b); });
  }
  if (op == "Min" || op == "Max") {
    const bool is_min = op == "Min";
    return elementwise(
        in, dtype,
        [is_min](int64_t a, int64_t b) -> Result<int64_t> { return is_min ? std::min(a, b) : std::max(a, b); },
        [is_min](double a, double b) { return is_min ? std::min(a, b) : std::max(a, b); });
  }
  if (op == "Equal") return cmp([](auto a, auto b) { return a == b; });
  if (op == "Less") return cmp([](auto a, auto b) { return a < b; });
  if (op == "Greater") return cmp([](auto a, auto b) { return a > b; });
  if (op == "LessOrEqual") return cmp([](auto a, auto b) { return a <= b; });
  if (op == "GreaterOrEqual") return cmp([](auto a, auto b) { return a >= b; });
  if (op == "And") return cmp([](auto a, auto b) { return a != 0 && b != 0; });
  if (op == "Or") return cmp([](auto a, auto b) { return a != 0 || b != 0; });
  return unimplemented(op + " is not folded");
}

Result<Small> unary(const std::string& op, const Small& x) {
  Small out = x;
  if (op == "Identity") return out;
  if (op == "Not") {
    for (auto& v : out.ints) v = v == 0;
    return out;
  }
  if (x.is_real()) {
    for (auto& v : out.reals) {
      if (op == "Neg") v = -v;
      else if (op == "Abs") v = std::fabs(v);
      else if (op == "Sqrt") v = std::sqrt(v);
      else if (op == "Floor") v = std::floor(v);
      else if (op == "Ceil") v = std::ceil(v);
      else if (op == "Reciprocal") v = 1.0 / v;
    }
    return out;
  }
  if (op == "Sqrt" || op == "Floor" || op == "Ceil" || op == "Reciprocal") {
    return unimplemented(op + " on integers is not folded");
  }
  for (auto& v : out.ints) {
    if (v == std::numeric_limits<int64_t>::min()) return invalid_argument("integer overflow");
    if (op == "Neg") v = -v;
    else if (op == "Abs") v = v < 0 ? -v : v;
  }
  return out;
}

}  // namespace hsched::shape_eval_detail
