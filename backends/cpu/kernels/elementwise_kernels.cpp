// Elementwise kernels that move or make data rather than compute on it: Identity, Dropout, Where,
// Cast, Shape, Size, ConstantOfShape, Range; plus what elementwise.h shares (broadcast plan, f16
// conversions, factory checks). Unary math is in elementwise_unary.cpp, binary in
// elementwise_binary.cpp.
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "backends/cpu/kernels/elementwise.h"

namespace hsched::cpu {

// --- broadcast plan and checks
// --------------------------------------------------------------------

BroadcastPlan make_broadcast_plan(const std::vector<std::vector<int64_t>>& in_dims,
                                  const std::vector<int64_t>& out_dims) {
  BroadcastPlan plan;
  plan.inputs = in_dims.size();
  plan.total = 1;
  for (int64_t d : out_dims) plan.total *= d;
  std::vector<std::vector<int64_t>> full;
  for (const auto& dims : in_dims) full.push_back(broadcast_strides(dims, out_dims));

  // Merge from the innermost axis outwards: a group of `dim` elements whose input k advances by
  // step[k] per element absorbs the next outer axis when that axis' stride is step[k] * dim for
  // every input (contiguous continuation, or 0 == 0 for a broadcast).
  std::vector<int64_t> group_dims;                // innermost first
  std::vector<std::vector<int64_t>> group_steps;  // per group, per input
  for (size_t a = out_dims.size(); a-- > 0;) {
    if (out_dims[a] == 1) continue;
    std::vector<int64_t> strides(plan.inputs);
    for (size_t k = 0; k < plan.inputs; ++k) strides[k] = full[k][a];
    bool merge = !group_dims.empty();
    for (size_t k = 0; merge && k < plan.inputs; ++k) {
      merge = strides[k] == group_steps.back()[k] * group_dims.back();
    }
    if (merge) {
      group_dims.back() *= out_dims[a];
    } else {
      group_dims.push_back(out_dims[a]);
      group_steps.push_back(std::move(strides));
    }
  }
  plan.outer_strides.assign(plan.inputs, {});
  if (group_dims.empty()) return plan;  // a single element: inner 1, every input broadcast
  plan.inner = group_dims.front();
  // The innermost output axis (> 1) reads each input's last axis, whose row-major stride is 1,
  // or one of its size-1 axes (stride 0): inner_step is always 0 or 1.
  for (size_t k = 0; k < plan.inputs; ++k) plan.inner_step[k] = group_steps.front()[k];
  for (size_t g = group_dims.size(); g-- > 1;) {
    plan.outer_dims.push_back(group_dims[g]);
    for (size_t k = 0; k < plan.inputs; ++k) plan.outer_strides[k].push_back(group_steps[g][k]);
  }
  return plan;
}

Status check_arity(const KernelSpec& spec, size_t required, size_t max_inputs) {
  for (size_t i = 0; i < required; ++i) {
    if (!spec.has_input(i)) {
      return invalid_argument(node_context(spec.node) + ": needs " + std::to_string(required) +
                              " inputs, input " + std::to_string(i) + " is missing");
    }
  }
  if (spec.inputs.size() > max_inputs) {
    return invalid_argument(node_context(spec.node) + ": takes at most " +
                            std::to_string(max_inputs) + " inputs, got " +
                            std::to_string(spec.inputs.size()));
  }
  if (spec.outputs.empty() || spec.outputs[0] == nullptr) {
    return invalid_argument(node_context(spec.node) + ": has no output");
  }
  return Status::ok();
}

Status check_broadcast(const KernelSpec& spec, size_t first, size_t count) {
  const auto& out = spec.out_dims(0);
  for (size_t i = first; i < first + count; ++i) {
    const auto& in = spec.in_dims(i);
    bool ok = in.size() <= out.size();
    for (size_t a = 0; ok && a < in.size(); ++a) {
      const int64_t o = out[out.size() - in.size() + a];
      ok = o >= 0 && (in[a] == o || in[a] == 1);
    }
    if (!ok) {
      return invalid_argument(node_context(spec.node) + ": input " + std::to_string(i) +
                              " of shape " + Shape(in).to_string() +
                              " does not broadcast to the output shape " + Shape(out).to_string());
    }
  }
  return Status::ok();
}

Status check_same_dims(const KernelSpec& spec) {
  if (spec.in_dims(0) == spec.out_dims(0)) return Status::ok();
  return invalid_argument(node_context(spec.node) + ": output shape " +
                          Shape(spec.out_dims(0)).to_string() + " differs from input shape " +
                          Shape(spec.in_dims(0)).to_string());
}

Status check_input_dtype(const KernelSpec& spec, size_t index, DType expected) {
  const DType actual = spec.inputs.at(index)->dtype;
  if (actual == expected) return Status::ok();
  return unsupported(spec, "input " + std::to_string(index) + " is " +
                               std::string(dtype_name(actual)) + ", expected " +
                               std::string(dtype_name(expected)));
}

Status check_output_dtype(const KernelSpec& spec, DType expected) {
  const DType actual = spec.outputs.at(0)->dtype;
  if (actual == expected) return Status::ok();
  return unsupported(spec, "output is " + std::string(dtype_name(actual)) + ", expected " +
                               std::string(dtype_name(expected)));
}

namespace {

using Inputs = std::span<const Tensor* const>;
using Outputs = std::span<Tensor* const>;

// The C++ type of one element of dtype D (f16/bf16 as bit patterns, bool as uint8_t).
template <DType D>
constexpr auto storage_value() {
  if constexpr (D == DType::kF32)
    return float{};
  else if constexpr (D == DType::kF64)
    return double{};
  else if constexpr (D == DType::kI16)
    return int16_t{};
  else if constexpr (D == DType::kU16)
    return uint16_t{};
  else if constexpr (D == DType::kU32)
    return uint32_t{};
  else if constexpr (D == DType::kU64)
    return uint64_t{};
  else if constexpr (D == DType::kI64)
    return int64_t{};
  else if constexpr (D == DType::kI32)
    return int32_t{};
  else if constexpr (D == DType::kI8)
    return int8_t{};
  else if constexpr (D == DType::kF16 || D == DType::kBF16)
    return uint16_t{};
  else
    return uint8_t{};  // u8, bool
}
template <DType D>
using Storage = decltype(storage_value<D>());

// Calls f(std::integral_constant<DType, D>{}) for the D of kDtypes equal to `dtype`; false when
// there is none.
template <DType... kDtypes, typename F>
bool dispatch_dtype_constant(DType dtype, F&& f) {
  return ((dtype == kDtypes && (f(std::integral_constant<DType, kDtypes>{}), true)) || ...);
}

template <typename F>
bool dispatch_any_dtype(DType dtype, F&& f) {
  return dispatch_dtype_constant<DType::kF32, DType::kF16, DType::kBF16, DType::kI8, DType::kU8,
                                 DType::kI32, DType::kI64, DType::kBool, DType::kF64, DType::kI16,
                                 DType::kU16, DType::kU32, DType::kU64>(dtype, f);
}

// Calls f(T{}) with an unsigned type of `bytes` bytes: kernels that only move elements need no
// more than their size, so one instantiation serves f32/i32, another i64, and so on.
template <typename F>
void dispatch_bytes(size_t bytes, F&& f) {
  switch (bytes) {
    case 1:
      f(uint8_t{});
      return;
    case 2:
      f(uint16_t{});
      return;
    case 4:
      f(uint32_t{});
      return;
    default:
      f(uint64_t{});
      return;
  }
}

void parallel_copy(const Tensor& from, Tensor& to) {
  const std::byte* src = from.raw();
  std::byte* dst = to.raw();
  parallel_range(
      static_cast<int64_t>(to.byte_size()),
      [&](int64_t begin, int64_t end) {
        std::memcpy(dst + begin, src + begin, static_cast<size_t>(end - begin));
      },
      int64_t{1} << 20);
}

// --- Identity, Dropout
// ----------------------------------------------------------------------------

Result<std::unique_ptr<Kernel>> make_identity(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_arity(spec, 1, 1));
  HSCHED_RETURN_IF_ERROR(check_output_dtype(spec, spec.inputs[0]->dtype));
  HSCHED_RETURN_IF_ERROR(check_same_dims(spec));
  return make_kernel([](Inputs in, Outputs out) {
    parallel_copy(*in[0], *out[0]);
    return Status::ok();
  });
}

// Inference only: the data passes through and the optional mask is all true.
Result<std::unique_ptr<Kernel>> make_dropout(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_arity(spec, 1, 3));
  HSCHED_RETURN_IF_ERROR(check_output_dtype(spec, spec.inputs[0]->dtype));
  HSCHED_RETURN_IF_ERROR(check_same_dims(spec));
  const bool has_mask = spec.outputs.size() > 1 && spec.outputs[1] != nullptr;
  if (has_mask && spec.outputs[1]->dtype != DType::kBool) {
    return unsupported(spec, "mask output of dtype " +
                                 std::string(dtype_name(spec.outputs[1]->dtype)) +
                                 " (only bool, opset >= 10)");
  }
  if (spec.has_input(2)) {
    HSCHED_RETURN_IF_ERROR(check_input_dtype(spec, 2, DType::kBool));
    if (const Tensor* mode = spec.constant(2);
        mode && mode->elements() == 1 && mode->values<uint8_t>()[0] != 0) {
      return unsupported(spec, "training_mode is true; only inference is supported");
    }
  }
  std::string context = node_context(spec.node);
  return make_kernel([has_mask, context](Inputs in, Outputs out) -> Status {
    if (in.size() > 2 && in[2] && in[2]->elements() == 1 && in[2]->values<uint8_t>()[0] != 0) {
      return unimplemented(context + ": training_mode is true; only inference is supported");
    }
    parallel_copy(*in[0], *out[0]);
    if (has_mask && out.size() > 1 && out[1]) {
      std::memset(out[1]->raw(), 1, out[1]->byte_size());
    }
    return Status::ok();
  });
}

// --- Where
// ----------------------------------------------------------------------------------------

template <bool kC, bool kX, bool kY, typename T>
void where_run(const uint8_t* __restrict c, const T* __restrict x, const T* __restrict y,
               T* __restrict o, int64_t n) {
  for_each_blocked(n, [&](int64_t i) { o[i] = c[kC ? i : 0] ? x[kX ? i : 0] : y[kY ? i : 0]; });
}

template <typename T>
void where_dispatch(const BroadcastPlan& plan, const uint8_t* c, const T* x, const T* y, T* o) {
  const int code =
      (plan.inner_step[0] ? 4 : 0) | (plan.inner_step[1] ? 2 : 0) | (plan.inner_step[2] ? 1 : 0);
  for_each_broadcast_run(plan, [&](const RunOffsets& at, int64_t begin, int64_t n) {
    const uint8_t* rc = c + at[0];
    const T* rx = x + at[1];
    const T* ry = y + at[2];
    T* ro = o + begin;
    switch (code) {
      case 0:
        where_run<false, false, false>(rc, rx, ry, ro, n);
        break;
      case 1:
        where_run<false, false, true>(rc, rx, ry, ro, n);
        break;
      case 2:
        where_run<false, true, false>(rc, rx, ry, ro, n);
        break;
      case 3:
        where_run<false, true, true>(rc, rx, ry, ro, n);
        break;
      case 4:
        where_run<true, false, false>(rc, rx, ry, ro, n);
        break;
      case 5:
        where_run<true, false, true>(rc, rx, ry, ro, n);
        break;
      case 6:
        where_run<true, true, false>(rc, rx, ry, ro, n);
        break;
      default:
        where_run<true, true, true>(rc, rx, ry, ro, n);
        break;
    }
  });
}

Result<std::unique_ptr<Kernel>> make_where(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_arity(spec, 3, 3));
  HSCHED_RETURN_IF_ERROR(check_input_dtype(spec, 0, DType::kBool));
  const DType dtype = spec.inputs[1]->dtype;
  HSCHED_RETURN_IF_ERROR(check_input_dtype(spec, 2, dtype));
  HSCHED_RETURN_IF_ERROR(check_output_dtype(spec, dtype));
  if (dtype_size(dtype) == 0) return unsupported(spec, "undefined dtype");
  HSCHED_RETURN_IF_ERROR(check_broadcast(spec, 0, 3));
  BroadcastPlan plan =
      make_broadcast_plan({spec.in_dims(0), spec.in_dims(1), spec.in_dims(2)}, spec.out_dims(0));
  Result<std::unique_ptr<Kernel>> kernel = unsupported(spec, "dtype");
  dispatch_bytes(dtype_size(dtype), [&](auto tag) {
    using T = decltype(tag);
    kernel = make_kernel([plan](Inputs in, Outputs out) {
      where_dispatch(plan, in[0]->values<uint8_t>().data(), in[1]->values<T>().data(),
                     in[2]->values<T>().data(), out[0]->values<T>().data());
      return Status::ok();
    });
  });
  return kernel;
}

// --- Cast
// -----------------------------------------------------------------------------------------

constexpr bool is_float_dtype(DType d) {
  return d == DType::kF32 || d == DType::kF16 || d == DType::kBF16 || d == DType::kF64;
}

// Float to integer truncates toward zero like a C cast, but without its undefined behaviour:
// NaN becomes 0, values beyond int64 saturate (u64 takes [2^63, 2^64) as it is), and narrower
// integers then wrap as numpy's and ONNX Runtime's casts do on x86 (-1.0f -> u8 255).
template <typename T, typename F>
T float_to_integer(F value) {
  if (!(value == value)) return T{0};
  if constexpr (std::is_same_v<T, uint64_t>) {
    if (value >= F(0x1p63) && value < F(0x1p64)) return static_cast<uint64_t>(value);
  }
  int64_t wide = 0;
  if (value >= F(0x1p63))
    wide = std::numeric_limits<int64_t>::max();
  else if (value < F(-0x1p63))
    wide = std::numeric_limits<int64_t>::min();
  else
    wide = static_cast<int64_t>(value);
  return static_cast<T>(wide);
}

// Floats travel as double when either side is f64 (f64 -> f16 and bf16 round twice, through f32,
// which moves a result by at most one f16 ulp in rare halfway cases), else as float. Integers
// convert straight from their own type (a u64 past 2^63 stays positive).
template <DType From, DType To>
Storage<To> cast_value(Storage<From> v) {
  using Out = Storage<To>;
  if constexpr (From == To) {
    return v;
  } else if constexpr (is_float_dtype(From)) {
    using Wide = std::conditional_t<From == DType::kF64 || To == DType::kF64, double, float>;
    Wide f = 0;
    if constexpr (From == DType::kF32 || From == DType::kF64)
      f = static_cast<Wide>(v);
    else if constexpr (From == DType::kF16)
      f = half_to_float(v);
    else
      f = bf16_to_float(v);
    if constexpr (To == DType::kF32 || To == DType::kF64)
      return static_cast<Out>(f);
    else if constexpr (To == DType::kF16)
      return float_to_half(static_cast<float>(f));
    else if constexpr (To == DType::kBF16)
      return float_to_bf16(static_cast<float>(f));
    else if constexpr (To == DType::kBool)
      return f != Wide{0} ? 1 : 0;
    else
      return float_to_integer<Out>(f);
  } else if constexpr (From == DType::kBool) {
    return cast_value<DType::kU8, To>(v != 0 ? 1 : 0);
  } else {
    if constexpr (To == DType::kF32 || To == DType::kF64)
      return static_cast<Out>(v);
    else if constexpr (To == DType::kF16)
      return float_to_half(static_cast<float>(v));
    else if constexpr (To == DType::kBF16)
      return float_to_bf16(static_cast<float>(v));
    else if constexpr (To == DType::kBool)
      return v != 0 ? 1 : 0;
    else
      return static_cast<Out>(v);  // integer narrowing wraps (C++20 defines it)
  }
}

template <DType From, DType To>
void cast_run(const Storage<From>* __restrict in, Storage<To>* __restrict out, int64_t n) {
  for_each_blocked(n, [&](int64_t i) { out[i] = cast_value<From, To>(in[i]); });
}

Result<std::unique_ptr<Kernel>> make_cast(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_arity(spec, 1, 1));
  const auto to = dtype_from_onnx(static_cast<int32_t>(spec.node.attr_int("to", 0)));
  if (!to) {
    const auto onnx = static_cast<int32_t>(spec.node.attr_int("to", 0));
    return unsupported(spec, "cast to " + std::string(onnx_dtype_name(onnx)));
  }
  HSCHED_RETURN_IF_ERROR(check_output_dtype(spec, *to));
  HSCHED_RETURN_IF_ERROR(check_same_dims(spec));
  Result<std::unique_ptr<Kernel>> kernel = unsupported(spec, "undefined input dtype");
  dispatch_any_dtype(spec.inputs[0]->dtype, [&](auto from) {
    dispatch_any_dtype(*to, [&](auto to_tag) {
      constexpr DType kFrom = decltype(from)::value;
      constexpr DType kTo = decltype(to_tag)::value;
      using In = Storage<kFrom>;
      using Out = Storage<kTo>;
      kernel = make_kernel([](Inputs in, Outputs out) {
        const In* x = in[0]->values<In>().data();
        Out* y = out[0]->values<Out>().data();
        parallel_range(out[0]->elements(), [&](int64_t begin, int64_t end) {
          cast_run<kFrom, kTo>(x + begin, y + begin, end - begin);
        });
        return Status::ok();
      });
    });
  });
  return kernel;
}

// --- Shape, Size, ConstantOfShape, Range
// ----------------------------------------------------------

Result<std::unique_ptr<Kernel>> constant_i64_kernel(const KernelSpec& spec,
                                                    std::vector<int64_t> values) {
  HSCHED_RETURN_IF_ERROR(check_output_dtype(spec, DType::kI64));
  int64_t expected = 1;
  for (int64_t d : spec.out_dims(0)) expected *= d;
  if (expected != static_cast<int64_t>(values.size())) {
    return invalid_argument(node_context(spec.node) + ": output shape " +
                            Shape(spec.out_dims(0)).to_string() + " does not hold " +
                            std::to_string(values.size()) + " values");
  }
  return make_kernel([values = std::move(values)](Inputs, Outputs out) {
    if (!values.empty()) std::memcpy(out[0]->raw(), values.data(), out[0]->byte_size());
    return Status::ok();
  });
}

Status check_static_input(const KernelSpec& spec) {
  const Shape& shape = spec.inputs[0]->shape;
  if (shape.rank_known && shape.is_static()) return Status::ok();
  return unsupported(spec, "input shape " + shape.to_string() + " is not static");
}

Result<std::unique_ptr<Kernel>> make_shape(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_arity(spec, 1, 1));
  HSCHED_RETURN_IF_ERROR(check_static_input(spec));
  const auto& dims = spec.in_dims(0);
  const auto rank = static_cast<int64_t>(dims.size());
  auto clamp_axis = [rank](int64_t axis) {
    if (axis < 0) axis += rank;
    return std::clamp<int64_t>(axis, 0, rank);
  };
  const int64_t start = clamp_axis(spec.node.attr_int("start", 0));
  const int64_t end = clamp_axis(spec.node.attr_int("end", rank));
  std::vector<int64_t> values;
  for (int64_t a = start; a < end; ++a) values.push_back(dims[static_cast<size_t>(a)]);
  return constant_i64_kernel(spec, std::move(values));
}

Result<std::unique_ptr<Kernel>> make_size(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_arity(spec, 1, 1));
  HSCHED_RETURN_IF_ERROR(check_static_input(spec));
  int64_t size = 1;
  for (int64_t d : spec.in_dims(0)) size *= d;
  return constant_i64_kernel(spec, {size});
}

Result<std::unique_ptr<Kernel>> make_constant_of_shape(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_arity(spec, 1, 1));
  Tensor value = Tensor::from_vector(DType::kF32, {1}, std::vector<float>{0.0f});
  if (auto it = spec.node.attributes.find("value"); it != spec.node.attributes.end()) {
    const auto* tensor = std::get_if<Tensor>(&it->second);
    if (!tensor || tensor->elements() != 1) {
      return invalid_argument(node_context(spec.node) +
                              ": attribute 'value' must be a one-element tensor");
    }
    value = *tensor;
  }
  if (dtype_size(value.dtype()) == 0) return unsupported(spec, "'value' has no dtype");
  HSCHED_RETURN_IF_ERROR(check_output_dtype(spec, value.dtype()));
  Result<std::unique_ptr<Kernel>> kernel = unsupported(spec, "undefined value dtype");
  dispatch_bytes(dtype_size(value.dtype()), [&](auto tag) {
    using T = decltype(tag);
    T fill{};
    std::memcpy(&fill, value.raw(), sizeof(T));
    kernel = make_kernel([fill](Inputs, Outputs out) {
      T* y = out[0]->values<T>().data();
      parallel_range(out[0]->elements(),
                     [&](int64_t begin, int64_t end) { std::fill(y + begin, y + end, fill); });
      return Status::ok();
    });
  });
  return kernel;
}

// out[i] = start + i * delta, as ONNX defines it (not by repeated addition, which drifts). The
// length was fixed when the program was built; inputs that would give another length are refused,
// using the shape evaluator's formula so that both agree.
template <typename T>
Status range_run(const std::string& context, Inputs in, Tensor& out) {
  const T start = in[0]->values<T>()[0];
  const T limit = in[1]->values<T>()[0];
  const T delta = in[2]->values<T>()[0];
  if (delta == T{0}) return invalid_argument(context + ": delta is 0");
  const double count = std::ceil((static_cast<double>(limit) - static_cast<double>(start)) /
                                 static_cast<double>(delta));
  const int64_t n = out.elements();
  if (std::max(count, 0.0) != static_cast<double>(n)) {
    return invalid_argument(context + ": start, limit and delta do not give the " +
                            std::to_string(n) + " elements the program was built for");
  }
  T* y = out.values<T>().data();
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      y[i] = start + static_cast<T>(i) * delta;
    } else {  // in range by the count check; unsigned math keeps the last step free of overflow UB
      using U = std::make_unsigned_t<T>;
      y[i] = static_cast<T>(static_cast<U>(start) + static_cast<U>(i) * static_cast<U>(delta));
    }
  }
  return Status::ok();
}

Result<std::unique_ptr<Kernel>> make_range(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_arity(spec, 3, 3));
  const DType dtype = spec.inputs[0]->dtype;
  for (size_t i = 1; i < 3; ++i) HSCHED_RETURN_IF_ERROR(check_input_dtype(spec, i, dtype));
  HSCHED_RETURN_IF_ERROR(check_output_dtype(spec, dtype));
  for (size_t i = 0; i < 3; ++i) {
    int64_t elements = 1;
    for (int64_t d : spec.in_dims(i)) elements *= d;
    if (elements != 1) {
      return invalid_argument(node_context(spec.node) + ": input " + std::to_string(i) +
                              " must be a scalar");
    }
  }
  if (spec.out_dims(0).size() != 1) {
    return invalid_argument(node_context(spec.node) + ": output must be 1-D");
  }
  std::string context = node_context(spec.node);
  switch (dtype) {
    case DType::kF32:
      return make_kernel(
          [context](Inputs in, Outputs out) { return range_run<float>(context, in, *out[0]); });
    case DType::kI64:
      return make_kernel(
          [context](Inputs in, Outputs out) { return range_run<int64_t>(context, in, *out[0]); });
    case DType::kI32:
      return make_kernel(
          [context](Inputs in, Outputs out) { return range_run<int32_t>(context, in, *out[0]); });
    case DType::kF64:
      return make_kernel(
          [context](Inputs in, Outputs out) { return range_run<double>(context, in, *out[0]); });
    default:
      return unsupported(
          spec, "dtype " + std::string(dtype_name(dtype)) + " (supported: f32, f64, i64, i32)");
  }
}

}  // namespace

void register_elementwise_kernels(KernelRegistry& registry) {
  register_unary_kernels(registry);
  register_binary_kernels(registry);
  registry.add("Identity", make_identity);
  registry.add("Dropout", make_dropout);
  registry.add("Where", make_where);
  registry.add("Cast", make_cast);
  registry.add("Shape", make_shape);
  registry.add("Size", make_size);
  registry.add("ConstantOfShape", make_constant_of_shape);
  registry.add("Range", make_range);
}

}  // namespace hsched::cpu
