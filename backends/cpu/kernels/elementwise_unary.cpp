// Unary elementwise kernels (activations, math functions, Not, IsNaN) and Clip. Every kernel is
// one flat loop over contiguous elements, split by parallel_range; the per-element functions are
// lambdas inlined into for_each_blocked so that the cheap ones (Relu, Clip, HardSwish...)
// vectorise. Exp, Sigmoid, Tanh, Erf, Gelu, Elu and Selu use the vectorisable fast_* functions of
// elementwise.h (<= 2.6 ulp); Sqrt, Log, the trigonometric and hyperbolic functions, Floor, Ceil,
// Round and Softplus call libm per element.
#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <type_traits>

#include "backends/cpu/kernels/elementwise.h"
#include "backends/cpu/kernels/vector_clones.h"

namespace hsched::cpu {
namespace {

using Inputs = std::span<const Tensor* const>;
using Outputs = std::span<Tensor* const>;

template <typename T, typename R, typename F>
void map_run(const T* __restrict x, R* __restrict y, int64_t n, const F& f) {
  for_each_blocked(n, [&](int64_t i) { y[i] = f(x[i]); });
}

template <typename T, typename R, typename F>
Result<std::unique_ptr<Kernel>> unary_kernel(F f) {
  return make_kernel([f](Inputs in, Outputs out) {
    const T* x = in[0]->values<T>().data();
    R* y = out[0]->values<R>().data();
    parallel_range(out[0]->elements(), [&](int64_t begin, int64_t end) {
      map_run(x + begin, y + begin, end - begin, f);
    });
    return Status::ok();
  });
}

// The transcendental activations (the fast_* polynomials, ~40 operations an element) in loops
// compiled per vector width: at the baseline's 4 lanes GELU's Erf cost more than the MatMuls
// around it. One small non-template function per op (GCC multiversions no templates, and in one
// function of six loops -O2 stops inlining the polynomials).
using VectorMathRun = void (*)(const float*, float*, int64_t);

inline float gelu_erf(float x) { return 0.5f * x * (1.0f + fast_erf(x * 0.70710678118654752f)); }
inline float gelu_tanh(float x) {
  const float inner = 0.79788456080286536f * (x + 0.044715f * x * x * x);
  return 0.5f * x * (1.0f + fast_tanh(inner));
}

HSCHED_VECTOR_CLONES void exp_run(const float* __restrict x, float* __restrict y, int64_t n) {
  for_each_blocked(n, [&](int64_t i) { y[i] = fast_exp(x[i]); });
}
HSCHED_VECTOR_CLONES void erf_run(const float* __restrict x, float* __restrict y, int64_t n) {
  for_each_blocked(n, [&](int64_t i) { y[i] = fast_erf(x[i]); });
}
HSCHED_VECTOR_CLONES void tanh_run(const float* __restrict x, float* __restrict y, int64_t n) {
  for_each_blocked(n, [&](int64_t i) { y[i] = fast_tanh(x[i]); });
}
HSCHED_VECTOR_CLONES void sigmoid_run(const float* __restrict x, float* __restrict y, int64_t n) {
  for_each_blocked(n, [&](int64_t i) { y[i] = fast_sigmoid(x[i]); });
}
HSCHED_VECTOR_CLONES void gelu_erf_run(const float* __restrict x, float* __restrict y, int64_t n) {
  for_each_blocked(n, [&](int64_t i) { y[i] = gelu_erf(x[i]); });
}
HSCHED_VECTOR_CLONES void gelu_tanh_run(const float* __restrict x, float* __restrict y,
                                        int64_t n) {
  for_each_blocked(n, [&](int64_t i) { y[i] = gelu_tanh(x[i]); });
}

Result<std::unique_ptr<Kernel>> vector_math_kernel(VectorMathRun run) {
  return make_kernel([run](Inputs in, Outputs out) {
    const float* x = in[0]->values<float>().data();
    float* y = out[0]->values<float>().data();
    parallel_range(out[0]->elements(), [&](int64_t begin, int64_t end) {
      run(x + begin, y + begin, end - begin);
    });
    return Status::ok();
  });
}

// One input of a dtype in `allowed`, one output of the same dims and dtype `out_dtype` (the input's
// when kUndefined).
Status check_unary(const KernelSpec& spec, const std::vector<DType>& allowed,
                   DType out_dtype = DType::kUndefined) {
  HSCHED_RETURN_IF_ERROR(check_arity(spec, 1, 1));
  const DType dtype = spec.inputs[0]->dtype;
  if (std::find(allowed.begin(), allowed.end(), dtype) == allowed.end()) {
    std::string names;
    for (DType d : allowed) names += (names.empty() ? "" : ", ") + std::string(dtype_name(d));
    return unsupported(spec,
                       "dtype " + std::string(dtype_name(dtype)) + " (supported: " + names + ")");
  }
  HSCHED_RETURN_IF_ERROR(
      check_output_dtype(spec, out_dtype == DType::kUndefined ? dtype : out_dtype));
  if (spec.in_dims(0) != spec.out_dims(0)) {
    return invalid_argument(node_context(spec.node) + ": output shape " +
                            Shape(spec.out_dims(0)).to_string() + " differs from input shape " +
                            Shape(spec.in_dims(0)).to_string());
  }
  return Status::ok();
}

// Factory of an f32 -> f32 op; make_fn(spec) returns the per-element function (reading any
// attributes once, here, rather than per run).
template <typename MakeFn>
KernelFactory float_unary(MakeFn make_fn) {
  return [make_fn](const KernelSpec& spec) -> Result<std::unique_ptr<Kernel>> {
    HSCHED_RETURN_IF_ERROR(check_unary(spec, {DType::kF32}));
    return unary_kernel<float, float>(make_fn(spec));
  };
}

// Factory of an f32 -> f32 op of one of the *_run loops above.
KernelFactory vector_math_unary(VectorMathRun run) {
  return [run](const KernelSpec& spec) -> Result<std::unique_ptr<Kernel>> {
    HSCHED_RETURN_IF_ERROR(check_unary(spec, {DType::kF32}));
    return vector_math_kernel(run);
  };
}

// A float -> bool kernel of an f32 or f64 input (checked); `predicate` is generic over both.
template <typename Predicate>
Result<std::unique_ptr<Kernel>> float_predicate(const KernelSpec& spec, Predicate predicate) {
  if (spec.inputs[0]->dtype == DType::kF64) {
    return unary_kernel<double, uint8_t>([predicate](double x) { return predicate(x); });
  }
  return unary_kernel<float, uint8_t>([predicate](float x) { return predicate(x); });
}

// Factory of a T -> T op over the numeric dtypes in `allowed`; make_fn(T{}) returns the function.
template <typename MakeFn>
KernelFactory numeric_unary(std::vector<DType> allowed, MakeFn make_fn) {
  return [allowed, make_fn](const KernelSpec& spec) -> Result<std::unique_ptr<Kernel>> {
    HSCHED_RETURN_IF_ERROR(check_unary(spec, allowed));
    Result<std::unique_ptr<Kernel>> kernel = unsupported(spec, "dtype");
    dispatch_numeric(spec.inputs[0]->dtype, [&](auto zero) {
      using T = decltype(zero);
      kernel = unary_kernel<T, T>(make_fn(zero));
    });
    return kernel;
  };
}

template <typename Fn>
auto simple(Fn fn) {
  return [fn](const KernelSpec&) { return fn; };
}

Result<std::unique_ptr<Kernel>> make_gelu(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_unary(spec, {DType::kF32}));
  const std::string approximate = spec.node.attr_string("approximate", "none");
  if (approximate == "none") return vector_math_kernel(gelu_erf_run);
  if (approximate == "tanh") return vector_math_kernel(gelu_tanh_run);
  return unsupported(spec, "approximate='" + approximate + "' (supported: none, tanh)");
}

// Clip: bounds from attributes before opset 11, from optional scalar inputs (possibly computed at
// run time, possibly omitted) since. min > max gives max everywhere, as ONNX specifies; NaN passes
// through.
template <typename T>
T clip_value(T x, T lo, T hi) {
  const T y = x < lo ? lo : x;
  return y > hi ? hi : y;
}

template <typename T>
Result<std::unique_ptr<Kernel>> clip_kernel(bool bounds_from_inputs, T attr_lo, T attr_hi) {
  return make_kernel([=](Inputs in, Outputs out) {
    T lo = attr_lo;
    T hi = attr_hi;
    if (bounds_from_inputs) {
      if (in.size() > 1 && in[1] && in[1]->elements() > 0) lo = in[1]->values<T>()[0];
      if (in.size() > 2 && in[2] && in[2]->elements() > 0) hi = in[2]->values<T>()[0];
    }
    const T* x = in[0]->values<T>().data();
    T* y = out[0]->values<T>().data();
    parallel_range(out[0]->elements(), [&](int64_t begin, int64_t end) {
      map_run(x + begin, y + begin, end - begin, [lo, hi](T v) { return clip_value(v, lo, hi); });
    });
    return Status::ok();
  });
}

Result<std::unique_ptr<Kernel>> make_clip(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_arity(spec, 1, 3));
  const DType dtype = spec.inputs[0]->dtype;
  const bool from_inputs = spec.opset >= 11;
  if (from_inputs) {
    for (size_t i = 1; i < spec.inputs.size(); ++i) {
      if (!spec.has_input(i)) continue;
      HSCHED_RETURN_IF_ERROR(check_input_dtype(spec, i, dtype));
      int64_t elements = 1;
      for (int64_t d : spec.in_dims(i)) elements *= d;
      if (elements != 1) {
        return invalid_argument(node_context(spec.node) + ": input " + std::to_string(i) + " (" +
                                (i == 1 ? "min" : "max") + ") must be a scalar");
      }
    }
  } else if (spec.inputs.size() > 1) {
    return invalid_argument(node_context(spec.node) + ": takes one input before opset 11");
  }
  HSCHED_RETURN_IF_ERROR(check_output_dtype(spec, dtype));
  if (spec.in_dims(0) != spec.out_dims(0)) {
    return invalid_argument(node_context(spec.node) + ": output shape differs from input shape");
  }
  if (!from_inputs) {
    if (dtype != DType::kF32) return unsupported(spec, "dtype " + std::string(dtype_name(dtype)));
    return clip_kernel<float>(false,
                              spec.node.attr_float("min", -std::numeric_limits<float>::max()),
                              spec.node.attr_float("max", std::numeric_limits<float>::max()));
  }
  Result<std::unique_ptr<Kernel>> kernel = unsupported(
      spec, "dtype " + std::string(dtype_name(dtype)) + " (supported: f32, i64, i32, i8, u8)");
  dispatch_numeric(dtype, [&](auto zero) {
    using T = decltype(zero);
    kernel = clip_kernel<T>(true, std::numeric_limits<T>::lowest(), std::numeric_limits<T>::max());
  });
  return kernel;
}

}  // namespace

bool is_elementwise_unary(const std::string& op) {
  static const std::set<std::string> kOps = {
      "Relu", "LeakyRelu", "Sigmoid", "Tanh",  "Erf", "HardSwish",  "HardSigmoid", "Elu",
      "Selu", "Softplus",  "Gelu",    "Clip",  "Exp", "Sqrt",       "Reciprocal",  "Neg",
      "Abs"};
  return kOps.count(op) != 0;
}

void register_unary_kernels(KernelRegistry& registry) {
  // Plain functions of one float.
  registry.add("Sqrt", float_unary(simple([](float x) { return std::sqrt(x); })));
  registry.add("Exp", vector_math_unary(exp_run));
  registry.add("Log", float_unary(simple([](float x) { return std::log(x); })));
  registry.add("Erf", vector_math_unary(erf_run));
  registry.add("Tanh", vector_math_unary(tanh_run));
  registry.add("Sin", float_unary(simple([](float x) { return std::sin(x); })));
  registry.add("Cos", float_unary(simple([](float x) { return std::cos(x); })));
  registry.add("Floor", float_unary(simple([](float x) { return std::floor(x); })));
  registry.add("Ceil", float_unary(simple([](float x) { return std::ceil(x); })));
  registry.add("Reciprocal", float_unary(simple([](float x) { return 1.0f / x; })));
  registry.add("Sigmoid", vector_math_unary(sigmoid_run));
  registry.add("Tan", float_unary(simple([](float x) { return std::tan(x); })));
  registry.add("Asin", float_unary(simple([](float x) { return std::asin(x); })));
  registry.add("Acos", float_unary(simple([](float x) { return std::acos(x); })));
  registry.add("Atan", float_unary(simple([](float x) { return std::atan(x); })));
  registry.add("Sinh", float_unary(simple([](float x) { return std::sinh(x); })));
  registry.add("Cosh", float_unary(simple([](float x) { return std::cosh(x); })));
  registry.add("Asinh", float_unary(simple([](float x) { return std::asinh(x); })));
  registry.add("Acosh", float_unary(simple([](float x) { return std::acosh(x); })));
  registry.add("Atanh", float_unary(simple([](float x) { return std::atanh(x); })));
  registry.add("Softsign", float_unary(simple([](float x) { return x / (1.0f + std::fabs(x)); })));
  // Halves to even, as ONNX's Round defines (the default rounding mode).
  registry.add("Round", float_unary(simple([](float x) { return std::nearbyint(x); })));
  // log(1 + exp(x)) without overflowing exp for large x.
  registry.add("Softplus", float_unary(simple([](float x) {
                 return x > 0.0f ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
               })));
  // x * clamp(x/6 + 1/2, 0, 1) written as x * clamp(x + 3, 0, 6) / 6 (PyTorch's form, equal up
  // to rounding): with the bound 1, GCC folds x * 1 into a branch and the loop stops vectorising.
  registry.add("HardSwish", float_unary(simple([](float x) {
                 return x * clip_value(x + 3.0f, 0.0f, 6.0f) * (1.0f / 6.0f);
               })));

  // Functions with attributes.
  registry.add("LeakyRelu", float_unary([](const KernelSpec& spec) {
                 const float alpha = spec.node.attr_float("alpha", 0.01f);
                 return [alpha](float x) { return x < 0.0f ? alpha * x : x; };
               }));
  registry.add("HardSigmoid", float_unary([](const KernelSpec& spec) {
                 const float alpha = spec.node.attr_float("alpha", 0.2f);
                 const float beta = spec.node.attr_float("beta", 0.5f);
                 return [alpha, beta](float x) { return clip_value(alpha * x + beta, 0.0f, 1.0f); };
               }));
  registry.add("Elu", float_unary([](const KernelSpec& spec) {
                 const float alpha = spec.node.attr_float("alpha", 1.0f);
                 return [alpha](float x) { return x < 0.0f ? alpha * fast_expm1(x) : x; };
               }));
  registry.add("Selu", float_unary([](const KernelSpec& spec) {
                 const float alpha = spec.node.attr_float("alpha", 1.67326319217681884765625f);
                 const float gamma = spec.node.attr_float("gamma", 1.05070102214813232421875f);
                 return [alpha, gamma](float x) {
                   return x <= 0.0f ? gamma * (alpha * fast_exp(x) - alpha) : gamma * x;
                 };
               }));
  registry.add("ThresholdedRelu", float_unary([](const KernelSpec& spec) {
                 const float alpha = spec.node.attr_float("alpha", 1.0f);
                 return [alpha](float x) { return x > alpha ? x : 0.0f; };
               }));
  registry.add("Shrink", float_unary([](const KernelSpec& spec) {
                 const float bias = spec.node.attr_float("bias", 0.0f);
                 const float lambd = spec.node.attr_float("lambd", 0.5f);
                 return [bias, lambd](float x) {
                   return x < -lambd ? x + bias : (x > lambd ? x - bias : 0.0f);
                 };
               }));
  registry.add("Gelu", make_gelu);

  // Numeric dtypes (integers too: Relu/Neg/Abs appear on int64 shape arithmetic).
  registry.add("Relu",
               numeric_unary({DType::kF32, DType::kI64, DType::kI32, DType::kI8}, [](auto zero) {
                 using T = decltype(zero);
                 return [](T x) { return x < T{0} ? T{0} : x; };
               }));
  registry.add("Neg",
               numeric_unary({DType::kF32, DType::kI64, DType::kI32, DType::kI8}, [](auto zero) {
                 using T = decltype(zero);
                 return [](T x) { return wrapping_neg(x); };
               }));
  registry.add("Abs", numeric_unary({DType::kF32, DType::kI64, DType::kI32, DType::kI8, DType::kU8},
                                    [](auto zero) {
                                      using T = decltype(zero);
                                      return [](T x) {
                                        if constexpr (std::is_unsigned_v<T>)
                                          return x;
                                        else
                                          return x < T{0} ? wrapping_neg(x) : x;
                                      };
                                    }));

  registry.add("Sign",
               numeric_unary({DType::kF32, DType::kI64, DType::kI32, DType::kI8, DType::kU8},
                             [](auto zero) {
                               using T = decltype(zero);
                               return [](T x) { return static_cast<T>((T{0} < x) - (x < T{0})); };
                             }));

  // Predicates and logic.
  // f64 too: torch exports T5's float16 overflow guard as a Cast to double, IsInf.
  registry.add("IsInf", [](const KernelSpec& spec) -> Result<std::unique_ptr<Kernel>> {
    HSCHED_RETURN_IF_ERROR(check_unary(spec, {DType::kF32, DType::kF64}, DType::kBool));
    const bool negative = spec.node.attr_int("detect_negative", 1) != 0;
    const bool positive = spec.node.attr_int("detect_positive", 1) != 0;
    return float_predicate(spec, [negative, positive](auto x) {
      return static_cast<uint8_t>(std::isinf(x) && (x > 0 ? positive : negative));
    });
  });
  registry.add("IsNaN", [](const KernelSpec& spec) -> Result<std::unique_ptr<Kernel>> {
    HSCHED_RETURN_IF_ERROR(check_unary(spec, {DType::kF32, DType::kF64}, DType::kBool));
    return float_predicate(spec, [](auto x) { return static_cast<uint8_t>(x != x); });
  });
  registry.add("Not", [](const KernelSpec& spec) -> Result<std::unique_ptr<Kernel>> {
    HSCHED_RETURN_IF_ERROR(check_unary(spec, {DType::kBool}));
    return unary_kernel<uint8_t, uint8_t>([](uint8_t x) { return static_cast<uint8_t>(x == 0); });
  });

  registry.add("Clip", make_clip);
}

}  // namespace hsched::cpu
