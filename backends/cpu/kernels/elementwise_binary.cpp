// Binary elementwise kernels with numpy broadcasting (arithmetic, Pow, Mod, comparisons, logic)
// and the variadic Min, Max, Sum, Mean. The broadcast is planned once per kernel
// (make_broadcast_plan); each run of the output then is a flat loop whose operands are either
// contiguous or one repeated scalar, four loop variants chosen per run, all vectorisable.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <type_traits>

#include "backends/cpu/kernels/elementwise.h"
#include "backends/cpu/kernels/post_ops.h"

namespace hsched::cpu {
namespace {

using Inputs = std::span<const Tensor* const>;
using Outputs = std::span<Tensor* const>;

template <bool kA, bool kB, typename TA, typename TB, typename R, typename F>
void binary_loop(const TA* __restrict a, const TB* __restrict b, R* __restrict o, int64_t n,
                 const F& f) {
  for_each_blocked(n, [&](int64_t i) { o[i] = f(a[kA ? i : 0], b[kB ? i : 0]); });
}

template <typename TA, typename TB, typename R, typename F>
void binary_apply(const BroadcastPlan& plan, const TA* a, const TB* b, R* o, const F& f) {
  const bool step_a = plan.inner_step[0] != 0;
  const bool step_b = plan.inner_step[1] != 0;
  for_each_broadcast_run(plan, [&](const RunOffsets& at, int64_t begin, int64_t n) {
    const TA* ra = a + at[0];
    const TB* rb = b + at[1];
    R* ro = o + begin;
    if (step_a && step_b)
      binary_loop<true, true>(ra, rb, ro, n, f);
    else if (step_a)
      binary_loop<true, false>(ra, rb, ro, n, f);
    else if (step_b)
      binary_loop<false, true>(ra, rb, ro, n, f);
    else
      binary_loop<false, false>(ra, rb, ro, n, f);
  });
}

// `zero_divisor_error`: refuse (InvalidArgument naming the node) when input 1 holds a 0, checked
// before any work so that integer Div/Mod never divide by zero.
// Channels-last output (the program's layout pass; Add, Sub, Mul, Div), the broadcast runs over
// the physical arrays: every input padded to 4-D and taken in [N, H, W, C] order. An input not
// itself channels-last has the same bytes in both orders (C or H*W is 1), which the pass checks.
BroadcastPlan physical_broadcast_plan(const KernelSpec& spec) {
  if (!output_channels_last(spec.node, 0)) {
    return make_broadcast_plan({spec.in_dims(0), spec.in_dims(1)}, spec.out_dims(0));
  }
  const auto physical = [](std::vector<int64_t> d) {
    d.insert(d.begin(), 4 - d.size(), 1);
    return channels_last_dims(d);
  };
  return make_broadcast_plan({physical(spec.in_dims(0)), physical(spec.in_dims(1))},
                             physical(spec.out_dims(0)));
}

template <typename TA, typename TB, typename R, typename F>
Result<std::unique_ptr<Kernel>> binary_kernel(const KernelSpec& spec, F f,
                                              bool zero_divisor_error = false) {
  BroadcastPlan plan = physical_broadcast_plan(spec);
  std::string context = zero_divisor_error ? node_context(spec.node) : std::string();
  return make_kernel([plan, f, context](Inputs in, Outputs out) -> Status {
    const TB* b = in[1]->values<TB>().data();
    if (!context.empty() && plan.total > 0) {
      const int64_t nb = in[1]->elements();
      if (std::find(b, b + nb, TB{0}) != b + nb) {
        return invalid_argument(context + ": integer division by zero");
      }
    }
    binary_apply(plan, in[0]->values<TA>().data(), b, out[0]->values<R>().data(), f);
    return Status::ok();
  });
}

std::string names_of(const std::vector<DType>& dtypes) {
  std::string names;
  for (DType d : dtypes) names += (names.empty() ? "" : ", ") + std::string(dtype_name(d));
  return names;
}

// Two inputs; input 0 of a dtype in `allowed`, input 1 of the same dtype unless
// `any_second_dtype`; output of `out_dtype` (input 0's when kUndefined); broadcastable shapes.
Status check_binary(const KernelSpec& spec, const std::vector<DType>& allowed,
                    DType out_dtype = DType::kUndefined, bool any_second_dtype = false) {
  HSCHED_RETURN_IF_ERROR(check_arity(spec, 2, 2));
  const DType dtype = spec.inputs[0]->dtype;
  if (std::find(allowed.begin(), allowed.end(), dtype) == allowed.end()) {
    return unsupported(spec, "dtype " + std::string(dtype_name(dtype)) +
                                 " (supported: " + names_of(allowed) + ")");
  }
  if (!any_second_dtype) HSCHED_RETURN_IF_ERROR(check_input_dtype(spec, 1, dtype));
  HSCHED_RETURN_IF_ERROR(
      check_output_dtype(spec, out_dtype == DType::kUndefined ? dtype : out_dtype));
  return check_broadcast(spec, 0, 2);
}

const std::vector<DType> kNumeric = {DType::kF32, DType::kI64, DType::kI32, DType::kI8, DType::kU8};
// What Max, Min and Mod take: also f64, i16 and the wider unsigned integers.
const std::vector<DType> kNumericWide = {DType::kF32, DType::kF16, DType::kF64, DType::kI64,
                                         DType::kI32, DType::kI16, DType::kI8,  DType::kU64,
                                         DType::kU32, DType::kU16, DType::kU8};

// Calls f(T{}) for a numeric dtype or bool (as uint8_t).
template <typename F>
bool dispatch_numeric_or_bool(DType dtype, F&& f) {
  if (dtype == DType::kBool) {
    f(uint8_t{});
    return true;
  }
  return dispatch_numeric(dtype, std::forward<F>(f));
}

// Integer + - * wrap in two's complement (as ONNX Runtime's do in practice) instead of being UB.
// Types narrower than int compute in unsigned int: uint16_t operands would promote to int, whose
// product 65535 * 65535 overflows.
template <typename T, typename Op>
T wrapping(T a, T b, Op op) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::common_type_t<std::make_unsigned_t<T>, unsigned>;
    return static_cast<T>(op(static_cast<U>(a), static_cast<U>(b)));
  } else {
    return op(a, b);
  }
}

// Factory of a T, T -> T op over the numeric dtypes; f is generic over T.
template <typename F>
KernelFactory arithmetic(F f) {
  return [f](const KernelSpec& spec) -> Result<std::unique_ptr<Kernel>> {
    HSCHED_RETURN_IF_ERROR(check_binary(spec, kNumeric));
    Result<std::unique_ptr<Kernel>> kernel = unsupported(spec, "dtype");
    dispatch_numeric(spec.inputs[0]->dtype, [&](auto zero) {
      using T = decltype(zero);
      kernel = binary_kernel<T, T, T>(spec, [f](T a, T b) -> T { return f(a, b); });
    });
    return kernel;
  };
}

// Factory of a T, T -> bool comparison; Equal also takes bool inputs.
template <typename F>
KernelFactory comparison(F f, bool allow_bool) {
  return [f, allow_bool](const KernelSpec& spec) -> Result<std::unique_ptr<Kernel>> {
    std::vector<DType> allowed = kNumeric;
    if (allow_bool) allowed.push_back(DType::kBool);
    HSCHED_RETURN_IF_ERROR(check_binary(spec, allowed, DType::kBool));
    Result<std::unique_ptr<Kernel>> kernel = unsupported(spec, "dtype");
    dispatch_numeric_or_bool(spec.inputs[0]->dtype, [&](auto zero) {
      using T = decltype(zero);
      kernel = binary_kernel<T, T, uint8_t>(
          spec, [f](T a, T b) { return static_cast<uint8_t>(f(a, b) ? 1 : 0); });
    });
    return kernel;
  };
}

template <typename F>
KernelFactory logical(F f) {
  return [f](const KernelSpec& spec) -> Result<std::unique_ptr<Kernel>> {
    HSCHED_RETURN_IF_ERROR(check_binary(spec, {DType::kBool}));
    return binary_kernel<uint8_t, uint8_t, uint8_t>(spec, [f](uint8_t a, uint8_t b) {
      return static_cast<uint8_t>(f(a != 0, b != 0) ? 1 : 0);
    });
  };
}

// Div: integers truncate toward zero; INT_MIN / -1 wraps; a zero divisor is an error.
Result<std::unique_ptr<Kernel>> make_div(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_binary(spec, kNumeric));
  Result<std::unique_ptr<Kernel>> kernel = unsupported(spec, "dtype");
  dispatch_numeric(spec.inputs[0]->dtype, [&](auto zero) {
    using T = decltype(zero);
    if constexpr (std::is_floating_point_v<T>) {
      kernel = binary_kernel<T, T, T>(spec, [](T a, T b) { return a / b; });
    } else {
      kernel = binary_kernel<T, T, T>(
          spec,
          [](T a, T b) -> T {
            if constexpr (std::is_signed_v<T>) {
              if (b == T{-1}) return wrapping_neg(a);
            }
            return static_cast<T>(a / b);
          },
          /*zero_divisor_error=*/true);
    }
  });
  return kernel;
}

// Mod: fmod=0 takes the divisor's sign (Python's %), fmod=1 the dividend's (C's fmod); floats
// need fmod=1, as ONNX specifies.
Result<std::unique_ptr<Kernel>> make_mod(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_binary(spec, kNumericWide));
  const bool c_fmod = spec.node.attr_int("fmod", 0) != 0;
  const DType dtype = spec.inputs[0]->dtype;
  if (is_floating(dtype) && !c_fmod) {
    return unsupported(spec, std::string(dtype_name(dtype)) + " inputs need fmod=1");
  }
  if (dtype == DType::kF16) {
    // fmod is exact, so the f16 remainder computed in f32 narrows back without rounding.
    return binary_kernel<uint16_t, uint16_t, uint16_t>(spec, [](uint16_t a, uint16_t b) {
      return float_to_half(std::fmod(half_to_float(a), half_to_float(b)));
    });
  }
  Result<std::unique_ptr<Kernel>> kernel = unsupported(spec, "dtype");
  dispatch_numeric_wide(dtype, [&](auto zero) {
    using T = decltype(zero);
    if constexpr (std::is_floating_point_v<T>) {
      kernel = binary_kernel<T, T, T>(spec, [](T a, T b) { return std::fmod(a, b); });
    } else {
      kernel = binary_kernel<T, T, T>(
          spec,
          [c_fmod](T a, T b) -> T {
            (void)c_fmod;  // read for signed T only
            if constexpr (std::is_signed_v<T>) {
              if (b == T{-1}) return T{0};  // INT_MIN % -1 overflows in C++
            }
            auto r = static_cast<T>(a % b);
            if constexpr (std::is_signed_v<T>) {
              if (!c_fmod && r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
            }
            return r;
          },
          /*zero_divisor_error=*/true);
    }
  });
  return kernel;
}

// An integer base raised to an integer power, exactly (wrapping on overflow, as the integer
// arithmetic here does); a negative power truncates 1 / x^-p toward zero.
template <typename T, typename P>
T integer_pow(T x, P p) {
  if (p < 0) {
    if (x == 1) return 1;
    if (x == -1) return (p % 2 == 0) ? 1 : -1;
    return 0;  // x == 0 too (1 / 0 has no integer value; ONNX Runtime's cast also gives 0 here)
  }
  using U = std::make_unsigned_t<T>;
  U result = 1, base = static_cast<U>(x);
  for (auto e = static_cast<uint64_t>(p); e != 0; e >>= 1) {
    if (e & 1) result = static_cast<U>(result * base);
    base = static_cast<U>(base * base);
  }
  return static_cast<T>(result);
}

// A double to integer T, truncating toward zero and saturating (NaN gives 0): the plain cast is
// undefined behaviour out of range.
template <typename T>
T saturating_cast(double v) {
  if (std::isnan(v)) return 0;
  if (v <= static_cast<double>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
  if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

// Pow with an i32/i64 base: the output has the base's dtype; the exponent is i32, i64 or f32.
template <typename T>
Result<std::unique_ptr<Kernel>> integer_base_pow(const KernelSpec& spec) {
  switch (spec.inputs[1]->dtype) {
    case DType::kI64:
      return binary_kernel<T, int64_t, T>(spec, [](T x, int64_t p) { return integer_pow(x, p); });
    case DType::kI32:
      return binary_kernel<T, int32_t, T>(spec, [](T x, int32_t p) { return integer_pow(x, p); });
    case DType::kF32:
      return binary_kernel<T, float, T>(spec, [](T x, float p) {
        return saturating_cast<T>(std::pow(static_cast<double>(x), static_cast<double>(p)));
      });
    default:
      return unsupported(spec, "exponent dtype " + std::string(dtype_name(spec.inputs[1]->dtype)) +
                                   " (supported: f32, i64, i32)");
  }
}

// Pow: f32, i64 or i32 base; f32/i64/i32 exponent. A constant scalar exponent of 1, 2, 3 or 0.5
// (x^2 in hand-written norms, x^3 in tanh GELU) becomes multiplications or sqrt instead of powf.
Result<std::unique_ptr<Kernel>> make_pow(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_arity(spec, 2, 2));
  if (spec.inputs[0]->dtype == DType::kI64 || spec.inputs[0]->dtype == DType::kI32) {
    HSCHED_RETURN_IF_ERROR(check_binary(spec, {DType::kI64, DType::kI32}, DType::kUndefined, true));
    if (spec.inputs[0]->dtype == DType::kI64) return integer_base_pow<int64_t>(spec);
    return integer_base_pow<int32_t>(spec);
  }
  HSCHED_RETURN_IF_ERROR(check_binary(spec, {DType::kF32}, DType::kF32, true));
  const DType exp_dtype = spec.inputs[1]->dtype;
  if (exp_dtype == DType::kF32) {
    if (const Tensor* e = spec.constant(1); e && e->elements() == 1) {
      const float p = e->values<float>()[0];
      if (p == 1.0f)
        return binary_kernel<float, float, float>(spec, [](float x, float) { return x; });
      if (p == 2.0f) {
        return binary_kernel<float, float, float>(spec, [](float x, float) { return x * x; });
      }
      if (p == 3.0f) {
        return binary_kernel<float, float, float>(spec, [](float x, float) { return x * x * x; });
      }
      if (p == 0.5f) {
        return binary_kernel<float, float, float>(spec,
                                                  [](float x, float) { return std::sqrt(x); });
      }
    }
    return binary_kernel<float, float, float>(spec,
                                              [](float x, float p) { return std::pow(x, p); });
  }
  auto int_pow = [](float x, auto p) { return std::pow(x, static_cast<float>(p)); };
  if (exp_dtype == DType::kI64) return binary_kernel<float, int64_t, float>(spec, int_pow);
  if (exp_dtype == DType::kI32) return binary_kernel<float, int32_t, float>(spec, int_pow);
  if (exp_dtype == DType::kU64) return binary_kernel<float, uint64_t, float>(spec, int_pow);
  if (exp_dtype == DType::kU32) return binary_kernel<float, uint32_t, float>(spec, int_pow);
  return unsupported(spec, "exponent dtype " + std::string(dtype_name(exp_dtype)) +
                               " (supported: f32, i64, i32, u64, u32)");
}

// PRelu: y = x < 0 ? slope * x : x, the slope broadcasting to X (unidirectionally: the output
// has X's shape).
Result<std::unique_ptr<Kernel>> make_prelu(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_binary(spec, {DType::kF32, DType::kI64, DType::kI32}));
  HSCHED_RETURN_IF_ERROR(check_same_dims(spec));
  Result<std::unique_ptr<Kernel>> kernel = unsupported(spec, "dtype");
  dispatch_numeric(spec.inputs[0]->dtype, [&](auto zero) {
    using T = decltype(zero);
    kernel = binary_kernel<T, T, T>(spec, [](T x, T slope) -> T {
      return x < T{0} ? wrapping(x, slope, std::multiplies<>{}) : x;
    });
  });
  return kernel;
}

// BitShift on u8, u16, u32 and u64: a shift by the type's width or more gives 0 (a C++ shift
// that far is undefined).
template <typename T>
Result<std::unique_ptr<Kernel>> bit_shift_kernel(const KernelSpec& spec, bool left) {
  constexpr T kBits = static_cast<T>(sizeof(T) * 8);
  using Wide = std::common_type_t<T, unsigned>;  // u8/u16 promote to int: shift as unsigned
  if (left) {
    return binary_kernel<T, T, T>(spec, [](T x, T n) {
      return static_cast<T>(n < kBits ? static_cast<Wide>(x) << n : 0);
    });
  }
  return binary_kernel<T, T, T>(spec, [](T x, T n) {
    return static_cast<T>(n < kBits ? static_cast<Wide>(x) >> n : 0);
  });
}

Result<std::unique_ptr<Kernel>> make_bit_shift(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(
      check_binary(spec, {DType::kU8, DType::kU16, DType::kU32, DType::kU64}));
  const std::string direction = spec.node.attr_string("direction", "");
  if (direction != "LEFT" && direction != "RIGHT") {
    return invalid_argument(node_context(spec.node) + ": attribute 'direction' = '" + direction +
                            "' (must be LEFT or RIGHT)");
  }
  const bool left = direction == "LEFT";
  switch (spec.inputs[0]->dtype) {
    case DType::kU16: return bit_shift_kernel<uint16_t>(spec, left);
    case DType::kU32: return bit_shift_kernel<uint32_t>(spec, left);
    case DType::kU64: return bit_shift_kernel<uint64_t>(spec, left);
    default: return bit_shift_kernel<uint8_t>(spec, left);
  }
}

// --- Min, Max, Sum, Mean ----------------------------------------------------------------------

// Any number of inputs (ONNX allows 1 to 2^31-1): two go through binary_apply; one or more than
// two through a per-element cursor, which real models rarely need.
template <typename T, typename F>
Result<std::unique_ptr<Kernel>> variadic_kernel(const KernelSpec& spec, F f, bool mean) {
  const size_t count = spec.inputs.size();
  const auto divisor = static_cast<T>(count);
  if (count == 2) {
    if (mean) {
      return binary_kernel<T, T, T>(spec, [f, divisor](T a, T b) { return f(a, b) / divisor; });
    }
    return binary_kernel<T, T, T>(spec, f);
  }
  std::vector<std::vector<int64_t>> strides;
  for (size_t i = 0; i < count; ++i) {
    strides.push_back(broadcast_strides(spec.in_dims(i), spec.out_dims(0)));
  }
  const std::vector<int64_t> dims = spec.out_dims(0);
  return make_kernel([dims, strides, f, mean, divisor](Inputs in, Outputs out) {
    T* o = out[0]->values<T>().data();
    parallel_range(out[0]->elements(), [&](int64_t begin, int64_t end) {
      BroadcastCursor cursor(dims, strides, begin);
      for (int64_t i = begin; i < end; ++i, cursor.next()) {
        T acc = in[0]->values<T>()[static_cast<size_t>(cursor.offset(0))];
        for (size_t k = 1; k < in.size(); ++k) {
          acc = f(acc, in[k]->values<T>()[static_cast<size_t>(cursor.offset(k))]);
        }
        o[i] = mean ? acc / divisor : acc;
      }
    });
    return Status::ok();
  });
}

// `half_f` (uint16_t bit patterns in and out), when given, serves f16 inputs.
template <typename F, typename HalfF = std::nullptr_t>
KernelFactory variadic(F f, std::vector<DType> allowed, bool mean = false, HalfF half_f = nullptr) {
  return [f, allowed, mean, half_f](const KernelSpec& spec) -> Result<std::unique_ptr<Kernel>> {
    const size_t count = spec.inputs.size();
    HSCHED_RETURN_IF_ERROR(check_arity(spec, std::max<size_t>(count, 1), count));
    const DType dtype = spec.inputs[0]->dtype;
    if (std::find(allowed.begin(), allowed.end(), dtype) == allowed.end()) {
      return unsupported(spec, "dtype " + std::string(dtype_name(dtype)) +
                                   " (supported: " + names_of(allowed) + ")");
    }
    for (size_t i = 1; i < count; ++i) HSCHED_RETURN_IF_ERROR(check_input_dtype(spec, i, dtype));
    HSCHED_RETURN_IF_ERROR(check_output_dtype(spec, dtype));
    HSCHED_RETURN_IF_ERROR(check_broadcast(spec, 0, count));
    if constexpr (!std::is_same_v<HalfF, std::nullptr_t>) {
      if (dtype == DType::kF16) return variadic_kernel<uint16_t>(spec, half_f, false);
    } else {
      (void)half_f;
    }
    Result<std::unique_ptr<Kernel>> kernel = unsupported(spec, "dtype");
    dispatch_numeric_wide(dtype, [&](auto zero) {
      using T = decltype(zero);
      kernel = variadic_kernel<T>(
          spec, [f](T a, T b) -> T { return f(a, b); }, mean);
    });
    return kernel;
  };
}

}  // namespace

void register_binary_kernels(KernelRegistry& registry) {
  registry.add("Add", arithmetic([](auto a, auto b) { return wrapping(a, b, std::plus<>{}); }));
  registry.add("Sub", arithmetic([](auto a, auto b) { return wrapping(a, b, std::minus<>{}); }));
  registry.add("Mul",
               arithmetic([](auto a, auto b) { return wrapping(a, b, std::multiplies<>{}); }));
  registry.add("Div", make_div);
  registry.add("Mod", make_mod);
  registry.add("Pow", make_pow);
  registry.add("PRelu", make_prelu);
  registry.add("BitShift", make_bit_shift);

  registry.add("Equal", comparison([](auto a, auto b) { return a == b; }, true));
  registry.add("Greater", comparison([](auto a, auto b) { return a > b; }, false));
  registry.add("GreaterOrEqual", comparison([](auto a, auto b) { return a >= b; }, false));
  registry.add("Less", comparison([](auto a, auto b) { return a < b; }, false));
  registry.add("LessOrEqual", comparison([](auto a, auto b) { return a <= b; }, false));

  registry.add("And", logical([](bool a, bool b) { return a && b; }));
  registry.add("Or", logical([](bool a, bool b) { return a || b; }));
  registry.add("Xor", logical([](bool a, bool b) { return a != b; }));

  // Min/Max pass a NaN in the first operand through (the ternary also compiles to min/max
  // instructions); Sum and Mean are float-only in ONNX.
  registry.add("Max", variadic([](auto a, auto b) { return a < b ? b : a; }, kNumericWide, false,
                               [](uint16_t a, uint16_t b) {
                                 return half_to_float(a) < half_to_float(b) ? b : a;
                               }));
  registry.add("Min", variadic([](auto a, auto b) { return b < a ? b : a; }, kNumericWide, false,
                               [](uint16_t a, uint16_t b) {
                                 return half_to_float(b) < half_to_float(a) ? b : a;
                               }));
  registry.add("Sum", variadic([](auto a, auto b) { return wrapping(a, b, std::plus<>{}); },
                               {DType::kF32, DType::kF64}));
  registry.add("Mean", variadic([](auto a, auto b) { return wrapping(a, b, std::plus<>{}); },
                                {DType::kF32, DType::kF64}, true));
}

}  // namespace hsched::cpu
