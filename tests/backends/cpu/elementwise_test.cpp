// Conformance of the elementwise family (unary, binary with broadcasting, variadic, Where, Clip)
// against plain scalar references (Cast and the shape ops: elementwise_cast_test.cpp). Sizes cross
// the parallel grain (100003 elements) and include zero-size dims; integer and bool cases too.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <numbers>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cpu/elementwise_test_util.h"
#include "backends/cpu/op_test_util.h"

namespace hsched::cpu::test {
namespace {

int64_t count(const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// numpy broadcast of several shapes.
Dims broadcast_dims(const std::vector<Dims>& shapes) {
  size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  Dims out(rank, 1);
  for (const auto& s : shapes) {
    for (size_t a = 0; a < s.size(); ++a) {
      int64_t& o = out[rank - s.size() + a];
      if (s[a] != 1) o = s[a];
    }
  }
  return out;
}

// For output element `index` of `out`, the element of an input of `in` dims it reads.
int64_t source_offset(int64_t index, const Dims& out, const Dims& in) {
  int64_t offset = 0;
  int64_t stride = 1;
  for (size_t a = out.size(); a-- > 0;) {
    const int64_t coord = index % out[a];
    index /= out[a];
    const size_t shift = out.size() - in.size();
    if (a >= shift) {
      const int64_t d = in[a - shift];
      if (d != 1) offset += coord * stride;
      stride *= d;
    }
  }
  return offset;
}

// Reference of a broadcasting op over inputs of one element type T, output type R.
template <typename T, typename R>
Tensor ref_nary(DType out_dtype, const std::vector<const Tensor*>& ins,
                const std::function<R(const std::vector<T>&)>& fn) {
  std::vector<Dims> shapes;
  for (const Tensor* t : ins) shapes.push_back(t->dims());
  const Dims out = broadcast_dims(shapes);
  Tensor result(out_dtype, out);
  std::vector<T> args(ins.size());
  for (int64_t i = 0; i < count(out); ++i) {
    for (size_t k = 0; k < ins.size(); ++k) {
      args[k] = ins[k]->values<T>()[source_offset(i, out, ins[k]->dims())];
    }
    result.values<R>()[i] = fn(args);
  }
  return result;
}

// --- unary ------------------------------------------------------------------------------------

struct UnaryCase {
  std::string op;
  std::function<double(double)> ref;
  float lo = -4.0f, hi = 4.0f;
  AttributeMap attrs = {};
};

TEST(ElementwiseUnary, FloatOpsMatchReference) {
  const double sqrt1_2 = 1.0 / std::sqrt(2.0);
  const std::vector<UnaryCase> cases = {
      {"Sqrt", [](double x) { return std::sqrt(x); }, 0.0f, 9.0f},
      {"Exp", [](double x) { return std::exp(x); }},
      {"Log", [](double x) { return std::log(x); }, 0.01f, 50.0f},
      {"Erf", [](double x) { return std::erf(x); }},
      {"Tanh", [](double x) { return std::tanh(x); }},
      {"Sigmoid", [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, -30.0f, 30.0f},
      {"Relu", [](double x) { return x > 0 ? x : 0.0; }},
      {"LeakyRelu", [](double x) { return x < 0 ? 0.1 * x : x; }, -4, 4, {{"alpha", 0.1f}}},
      {"LeakyRelu", [](double x) { return x < 0 ? 0.01 * x : x; }},
      {"HardSigmoid",
       [](double x) { return std::clamp(0.3 * x + 0.4, 0.0, 1.0); },
       -4,
       4,
       {{"alpha", 0.3f}, {"beta", 0.4f}}},
      {"HardSwish", [](double x) { return x * std::clamp(x / 6 + 0.5, 0.0, 1.0); }},
      {"Gelu", [=](double x) { return 0.5 * x * (1 + std::erf(x * sqrt1_2)); }},
      {"Gelu",
       [](double x) {
         return 0.5 * x *
                (1 + std::tanh(std::sqrt(2 / std::numbers::pi) * (x + 0.044715 * x * x * x)));
       },
       -4,
       4,
       {{"approximate", std::string("tanh")}}},
      {"Neg", [](double x) { return -x; }},
      {"Abs", [](double x) { return std::fabs(x); }},
      {"Identity", [](double x) { return x; }},
      {"Floor", [](double x) { return std::floor(x); }},
      {"Ceil", [](double x) { return std::ceil(x); }},
      {"Reciprocal", [](double x) { return 1.0 / x; }, 0.1f, 5.0f},
      {"Softplus", [](double x) { return std::log(std::exp(x) + 1.0); }, -20.0f, 20.0f},
      {"Elu",
       [](double x) { return x < 0 ? 0.5 * (std::exp(x) - 1) : x; },
       -4,
       4,
       {{"alpha", 0.5f}}},
      {"Selu",
       [](double x) {
         const double alpha = 1.6732632423543772, gamma = 1.0507009873554805;
         return x <= 0 ? gamma * (alpha * std::exp(x) - alpha) : gamma * x;
       }},
      {"Sin", [](double x) { return std::sin(x); }},
      {"Cos", [](double x) { return std::cos(x); }},
      {"Tan", [](double x) { return std::tan(x); }, -1.4f, 1.4f},
      {"Asin", [](double x) { return std::asin(x); }, -1.0f, 1.0f},
      {"Acos", [](double x) { return std::acos(x); }, -1.0f, 1.0f},
      {"Atan", [](double x) { return std::atan(x); }},
      {"Sinh", [](double x) { return std::sinh(x); }},
      {"Cosh", [](double x) { return std::cosh(x); }},
      {"Asinh", [](double x) { return std::asinh(x); }},
      {"Acosh", [](double x) { return std::acosh(x); }, 1.0f, 9.0f},
      {"Atanh", [](double x) { return std::atanh(x); }, -0.99f, 0.99f},
      {"Softsign", [](double x) { return x / (1 + std::fabs(x)); }},
      {"Round", [](double x) { return std::nearbyint(x); }, -9.0f, 9.0f},
      {"ThresholdedRelu", [](double x) { return x > 0.5 ? x : 0.0; }, -4, 4, {{"alpha", 0.5f}}},
      {"Shrink",
       [](double x) { return x < -1.5 ? x + 0.25 : (x > 1.5 ? x - 0.25 : 0.0); },
       -4,
       4,
       {{"bias", 0.25f}, {"lambd", 1.5f}}},
  };
  for (const auto& c : cases) {
    for (const Dims& dims : {Dims{7}, Dims{3, 11}, Dims{100003}, Dims{0, 3}, Dims{}}) {
      SCOPED_TRACE(c.op + " " + Shape(dims).to_string());
      const Tensor x = random_f32(dims, 17, c.lo, c.hi);
      Tensor expected(DType::kF32, dims);
      for (int64_t i = 0; i < x.elements(); ++i) {
        expected.values<float>()[i] = static_cast<float>(c.ref(x.values<float>()[i]));
      }
      EXPECT_TRUE(all_close(run1(c.op, c.attrs, {{x}}, DType::kF32, dims), expected));
    }
  }
}

// Exp, Sigmoid, Tanh, Erf, Gelu and Elu use vectorisable approximations, not libm: a dense sweep
// of their whole useful range (1M points, so every parallel chunk and loop tail) against double
// libm, within a few ulp, and their special values.
TEST(ElementwiseUnary, VectorisedTranscendentalsStayWithinAFewUlp) {
  const double sqrt1_2 = 1.0 / std::sqrt(2.0);
  struct Sweep {
    std::string op;
    std::function<double(double)> ref;
    float lo, hi;
    double atol = 0;
    AttributeMap attrs = {};
  };
  const std::vector<Sweep> sweeps = {
      {"Exp", [](double x) { return std::exp(x); }, -87.0f, 88.7f},
      {"Sigmoid", [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, -87.0f, 30.0f},
      {"Tanh", [](double x) { return std::tanh(x); }, -12.0f, 12.0f},
      {"Tanh", [](double x) { return std::tanh(x); }, -0.01f, 0.01f},
      {"Erf", [](double x) { return std::erf(x); }, -6.0f, 6.0f},
      {"Erf", [](double x) { return std::erf(x); }, -1e-3f, 1e-3f},
      {"Elu", [](double x) { return x < 0 ? std::expm1(x) : x; }, -20.0f, 1.0f},
      // 1 + erf(x) cancels for negative x, in float as in any float implementation.
      {"Gelu", [=](double x) { return 0.5 * x * (1 + std::erf(x * sqrt1_2)); }, -8.0f, 8.0f, 1e-7},
  };
  const int64_t n = 1000003;
  for (const auto& sweep : sweeps) {
    SCOPED_TRACE(sweep.op + " over [" + std::to_string(sweep.lo) + ", " + std::to_string(sweep.hi) +
                 "]");
    Tensor x(DType::kF32, {n});
    Tensor expected(DType::kF32, {n});
    for (int64_t i = 0; i < n; ++i) {
      const float v = sweep.lo + (sweep.hi - sweep.lo) * static_cast<float>(i) / (n - 1);
      x.values<float>()[i] = v;
      expected.values<float>()[i] = static_cast<float>(sweep.ref(v));
    }
    // 3e-7 relative is 2.5 ulp at the top of a binade, 5 ulp at its bottom.
    EXPECT_TRUE(all_close(run1(sweep.op, sweep.attrs, {{x}}, DType::kF32, {n}), expected,
                          sweep.atol, 3e-7));
  }
  const Tensor specials = f32({6}, {kNaN, kInf, -kInf, 0.0f, -0.0f, 1000.0f});
  auto eval = [&](const std::string& op) {
    const Tensor y = run1(op, {}, {{specials}}, DType::kF32, {6});
    return std::vector<float>(y.values<float>().begin(), y.values<float>().end());
  };
  for (const std::string op : {"Exp", "Sigmoid", "Tanh", "Erf", "Elu", "Gelu"}) {
    EXPECT_TRUE(std::isnan(eval(op)[0])) << op;
  }
  auto tail = [](const std::vector<float>& y) {
    return std::vector<float>(y.begin() + 1, y.end());
  };
  EXPECT_EQ(tail(eval("Exp")), (std::vector<float>{kInf, 0.0f, 1.0f, 1.0f, kInf}));
  EXPECT_EQ(tail(eval("Sigmoid")), (std::vector<float>{1.0f, 0.0f, 0.5f, 0.5f, 1.0f}));
  for (const std::string op : {"Tanh", "Erf"}) {
    const auto y = eval(op);
    EXPECT_EQ(tail(y), (std::vector<float>{1.0f, -1.0f, 0.0f, -0.0f, 1.0f})) << op;
    EXPECT_TRUE(std::signbit(y[4])) << op << "(-0) keeps the sign";
  }
  EXPECT_EQ(eval("Elu")[2], -1.0f);
}

TEST(ElementwiseUnary, IntegerReluNegAbsWrapInsteadOfOverflowing) {
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  const Tensor x = make<int64_t>(DType::kI64, {5}, {-3, 0, 7, kMin, 12});
  auto i64s = [](const Tensor& t) {
    return std::vector<int64_t>(t.values<int64_t>().begin(), t.values<int64_t>().end());
  };
  EXPECT_EQ(i64s(run1("Relu", {}, {{x}}, DType::kI64, {5})),
            (std::vector<int64_t>{0, 0, 7, 0, 12}));
  EXPECT_EQ(i64s(run1("Neg", {}, {{x}}, DType::kI64, {5})),
            (std::vector<int64_t>{3, 0, -7, kMin, -12}));
  EXPECT_EQ(i64s(run1("Abs", {}, {{x}}, DType::kI64, {5})),
            (std::vector<int64_t>{3, 0, 7, kMin, 12}));
  const Tensor y = make<int32_t>(DType::kI32, {3}, {-5, 4, -1});
  const Tensor abs = run1("Abs", {}, {{y}}, DType::kI32, {3});
  EXPECT_EQ(abs.values<int32_t>()[0], 5);
  EXPECT_EQ(abs.values<int32_t>()[2], 1);
}

// Round halves to even; Sign of every numeric dtype; IsInf of either sign or both.
TEST(ElementwiseUnary, RoundSignAndIsInfAtTheirEdges) {
  const Tensor halves = f32({6}, {-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f});
  EXPECT_TRUE(all_close(run1("Round", {}, {{halves}}, DType::kF32, {6}),
                        f32({6}, {-2.0f, -2.0f, -0.0f, 0.0f, 2.0f, 2.0f})));
  EXPECT_TRUE(all_close(run1("Sign", {}, {{f32({3}, {-3.5f, 0.0f, 2.0f})}}, DType::kF32, {3}),
                        f32({3}, {-1.0f, 0.0f, 1.0f})));
  const Tensor signs = run1("Sign", {}, {{i64({3}, {-7, 0, 9})}}, DType::kI64, {3});
  EXPECT_EQ(std::vector<int64_t>(signs.values<int64_t>().begin(), signs.values<int64_t>().end()),
            (std::vector<int64_t>{-1, 0, 1}));
  const float inf = std::numeric_limits<float>::infinity();
  const Tensor x = f32({4}, {-inf, inf, 1.0f, std::numeric_limits<float>::quiet_NaN()});
  const auto flags = [&](const AttributeMap& attrs) {
    const Tensor y = run1("IsInf", attrs, {{x}}, DType::kBool, {4});
    const auto v = y.values<uint8_t>();
    return std::vector<int>(v.begin(), v.end());
  };
  EXPECT_EQ(flags({}), (std::vector<int>{1, 1, 0, 0}));
  EXPECT_EQ(flags({{"detect_positive", int64_t{0}}}), (std::vector<int>{1, 0, 0, 0}));
  EXPECT_EQ(flags({{"detect_negative", int64_t{0}}}), (std::vector<int>{0, 1, 0, 0}));
  // float64 (torch exports T5's float16 overflow guard as Cast to double, IsInf): 1e300 is finite.
  const double dinf = std::numeric_limits<double>::infinity();
  const Tensor d = make<double>(DType::kF64, {4}, {-dinf, 1e300, dinf, std::nan("")});
  EXPECT_TRUE(all_close(run1("IsInf", {{"detect_negative", int64_t{0}}}, {{d}}, DType::kBool, {4}),
                        make<uint8_t>(DType::kBool, {4}, {0, 0, 1, 0})));
  EXPECT_TRUE(all_close(run1("IsNaN", {}, {{d}}, DType::kBool, {4}),
                        make<uint8_t>(DType::kBool, {4}, {0, 0, 0, 1})));
}

TEST(ElementwiseUnary, IsNaNNotAndIdentityOfOtherDtypes) {
  const Tensor x = f32({5}, {1.0f, kNaN, -kInf, 0.0f, -kNaN});
  const Tensor nan = run1("IsNaN", {}, {{x}}, DType::kBool, {5});
  EXPECT_TRUE(all_close(nan, make<uint8_t>(DType::kBool, {5}, {0, 1, 0, 0, 1})));
  const Tensor b = random_bool({33}, 3);
  Tensor not_b(DType::kBool, {33});
  for (int i = 0; i < 33; ++i) not_b.values<uint8_t>()[i] = b.values<uint8_t>()[i] ? 0 : 1;
  EXPECT_TRUE(all_close(run1("Not", {}, {{b}}, DType::kBool, {33}), not_b));
  const Tensor ids = random_i64({2, 50001}, 5, -100, 100);
  EXPECT_TRUE(all_close(run1("Identity", {}, {{ids}}, DType::kI64, {2, 50001}), ids));
  // NaN passes through Relu and Clip.
  EXPECT_TRUE(
      std::isnan(run1("Relu", {}, {{f32({1}, {kNaN})}}, DType::kF32, {1}).values<float>()[0]));
}

TEST(ElementwiseUnary, UnsupportedDtypesAndAttributesAreNamedErrors) {
  const Status sqrt = run_status("Sqrt", {}, {{i64({2}, {4, 9})}}, DType::kI64, {2});
  EXPECT_EQ(sqrt.code(), ErrorCode::kUnimplemented);
  EXPECT_NE(sqrt.message().find("test_Sqrt"), std::string::npos) << sqrt.message();
  EXPECT_NE(sqrt.message().find("i64"), std::string::npos) << sqrt.message();
  const Status gelu = run_status("Gelu", {{"approximate", std::string("erf")}},
                                 {{f32({1}, {1.0f})}}, DType::kF32, {1});
  EXPECT_EQ(gelu.code(), ErrorCode::kUnimplemented);
  const Status wrong_out = run_status("Exp", {}, {{f32({1}, {1.0f})}}, DType::kI64, {1});
  EXPECT_FALSE(wrong_out.is_ok());
}

// --- binary -----------------------------------------------------------------------------------

const std::vector<std::pair<Dims, Dims>> kBroadcastPairs = {
    {{2, 3, 4}, {3, 1}},  {{1}, {2, 1, 5}},       {{7}, {7}},     {{33}, {1}},
    {{100003}, {100003}}, {{100003}, {}},         {{}, {100003}}, {{2, 64, 33, 33}, {1, 64, 1, 1}},
    {{4, 300, 40}, {40}}, {{5, 1, 4}, {1, 3, 1}}, {{0, 3}, {3}},  {{3, 1, 200, 1}, {1, 7, 1, 60}},
    {{1, 3}, {2, 1}},
};

TEST(ElementwiseBinary, FloatArithmeticBroadcasts) {
  using Fn = std::function<float(float, float)>;
  const std::vector<std::pair<std::string, Fn>> ops = {
      {"Add", [](float a, float b) { return a + b; }},
      {"Sub", [](float a, float b) { return a - b; }},
      {"Mul", [](float a, float b) { return a * b; }},
      {"Div", [](float a, float b) { return a / b; }},
      {"Pow", [](float a, float b) { return std::pow(a, b); }},
      {"Max", [](float a, float b) { return std::max(a, b); }},
      {"Min", [](float a, float b) { return std::min(a, b); }},
      {"Sum", [](float a, float b) { return a + b; }},
      {"Mean", [](float a, float b) { return (a + b) / 2; }},
      {"Mod", [](float a, float b) { return std::fmod(a, b); }},
  };
  for (const auto& [op, fn] : ops) {
    for (const auto& [da, db] : kBroadcastPairs) {
      SCOPED_TRACE(op + " " + Shape(da).to_string() + " op " + Shape(db).to_string());
      const bool positive = op == "Pow" || op == "Div" || op == "Mod";
      const Tensor a = random_f32(da, 1, positive ? 0.5f : -2.0f, 2.0f);
      const Tensor b = random_f32(db, 2, positive ? 0.5f : -2.0f, 2.0f);
      const Tensor expected = ref_nary<float, float>(
          DType::kF32, {&a, &b},
          [&fn = fn](const std::vector<float>& v) { return fn(v[0], v[1]); });
      const AttributeMap attrs = op == "Mod" ? AttributeMap{{"fmod", int64_t{1}}} : AttributeMap{};
      EXPECT_TRUE(all_close(run1(op, attrs, {{a}, {b}}, DType::kF32, expected.dims()), expected));
    }
  }
}

TEST(ElementwiseBinary, Int64ArithmeticTruncatesAndWraps) {
  const Tensor a = random_i64({4, 1, 9}, 3, -1000, 1000);
  const Tensor b = random_i64({5, 1}, 4, 1, 40);
  Tensor neg_b = b.clone();
  for (int64_t& v : neg_b.values<int64_t>()) v = -v;
  using Fn = std::function<int64_t(int64_t, int64_t)>;
  const std::vector<std::pair<std::string, Fn>> ops = {
      {"Add", [](int64_t x, int64_t y) { return x + y; }},
      {"Sub", [](int64_t x, int64_t y) { return x - y; }},
      {"Mul", [](int64_t x, int64_t y) { return x * y; }},
      {"Div", [](int64_t x, int64_t y) { return x / y; }},
      {"Max", [](int64_t x, int64_t y) { return std::max(x, y); }},
      {"Min", [](int64_t x, int64_t y) { return std::min(x, y); }},
  };
  for (const Tensor* divisor : std::vector<const Tensor*>{&b, &neg_b}) {
    for (const auto& [op, fn] : ops) {
      SCOPED_TRACE(op);
      const Tensor expected = ref_nary<int64_t, int64_t>(
          DType::kI64, {&a, divisor},
          [&fn = fn](const std::vector<int64_t>& v) { return fn(v[0], v[1]); });
      EXPECT_TRUE(all_close(run1(op, {}, {{a}, {*divisor}}, DType::kI64, {4, 5, 9}), expected));
    }
    // Mod: fmod=0 takes the divisor's sign (Python), fmod=1 the dividend's (C).
    const Tensor python =
        ref_nary<int64_t, int64_t>(DType::kI64, {&a, divisor}, [](const std::vector<int64_t>& v) {
          const int64_t r = v[0] % v[1];
          return (r != 0 && ((r < 0) != (v[1] < 0))) ? r + v[1] : r;
        });
    EXPECT_TRUE(all_close(run1("Mod", {}, {{a}, {*divisor}}, DType::kI64, {4, 5, 9}), python));
    const Tensor c_mod = ref_nary<int64_t, int64_t>(
        DType::kI64, {&a, divisor}, [](const std::vector<int64_t>& v) { return v[0] % v[1]; });
    EXPECT_TRUE(all_close(
        run1("Mod", {{"fmod", int64_t{1}}}, {{a}, {*divisor}}, DType::kI64, {4, 5, 9}), c_mod));
  }
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  const Tensor wrapped =
      run1("Div", {}, {{i64({2}, {kMin, 7})}, {i64({1}, {-1})}}, DType::kI64, {2});
  EXPECT_EQ(wrapped.values<int64_t>()[0], kMin);
  EXPECT_EQ(wrapped.values<int64_t>()[1], -7);
  const Tensor i32 =
      run1("Div", {},
           {{make<int32_t>(DType::kI32, {3}, {7, -7, 9})}, {make<int32_t>(DType::kI32, {1}, {2})}},
           DType::kI32, {3});
  EXPECT_EQ(i32.values<int32_t>()[0], 3);
  EXPECT_EQ(i32.values<int32_t>()[1], -3);
}

TEST(ElementwiseBinary, IntegerDivisionByZeroIsAnError) {
  for (const std::string op : {"Div", "Mod"}) {
    const Status status =
        run_status(op, {}, {{i64({3}, {1, 2, 3})}, {i64({3}, {1, 0, 1})}}, DType::kI64, {3});
    EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument) << op;
    EXPECT_NE(status.message().find("test_" + op), std::string::npos) << status.message();
    EXPECT_NE(status.message().find("division by zero"), std::string::npos) << status.message();
  }
  // A zero-size output divides nothing; a float zero divisor is inf, not an error.
  EXPECT_TRUE(run_status("Div", {}, {{Tensor(DType::kI64, {0})}, {i64({1}, {0})}}, DType::kI64, {0})
                  .is_ok());
  const Tensor inf = run1("Div", {}, {{f32({1}, {1.0f})}, {f32({1}, {0.0f})}}, DType::kF32, {1});
  EXPECT_EQ(inf.values<float>()[0], kInf);
  EXPECT_EQ(
      run_status("Mod", {}, {{f32({1}, {1.0f})}, {f32({1}, {2.0f})}}, DType::kF32, {1}).code(),
      ErrorCode::kUnimplemented);
}

TEST(ElementwiseBinary, ComparisonsAndLogicGiveBool) {
  using Fn = std::function<bool(float, float)>;
  const std::vector<std::pair<std::string, Fn>> ops = {
      {"Equal", [](float a, float b) { return a == b; }},
      {"Greater", [](float a, float b) { return a > b; }},
      {"GreaterOrEqual", [](float a, float b) { return a >= b; }},
      {"Less", [](float a, float b) { return a < b; }},
      {"LessOrEqual", [](float a, float b) { return a <= b; }},
  };
  for (const auto& [op, fn] : ops) {
    for (const auto& [da, db] : kBroadcastPairs) {
      SCOPED_TRACE(op + " " + Shape(da).to_string() + " op " + Shape(db).to_string());
      // Few distinct values so that equality happens.
      Tensor a = random_f32(da, 5, 0.0f, 4.0f);
      Tensor b = random_f32(db, 6, 0.0f, 4.0f);
      for (float& v : a.values<float>()) v = std::floor(v);
      for (float& v : b.values<float>()) v = std::floor(v);
      auto ref = [&fn = fn](const std::vector<float>& v) { return uint8_t{fn(v[0], v[1])}; };
      const Tensor expected = ref_nary<float, uint8_t>(DType::kBool, {&a, &b}, ref);
      EXPECT_TRUE(all_close(run1(op, {}, {{a}, {b}}, DType::kBool, expected.dims()), expected));
      // The same on int64.
      Tensor ia(DType::kI64, da), ib(DType::kI64, db);
      for (int64_t i = 0; i < a.elements(); ++i)
        ia.values<int64_t>()[i] = static_cast<int64_t>(a.values<float>()[i]);
      for (int64_t i = 0; i < b.elements(); ++i)
        ib.values<int64_t>()[i] = static_cast<int64_t>(b.values<float>()[i]);
      EXPECT_TRUE(all_close(run1(op, {}, {{ia}, {ib}}, DType::kBool, expected.dims()), expected));
    }
  }
  const Tensor p = random_bool({2, 3, 5}, 7);
  const Tensor q = random_bool({3, 1}, 8);
  using LFn = std::function<bool(bool, bool)>;
  for (const auto& [op, fn] :
       std::vector<std::pair<std::string, LFn>>{{"And", [](bool x, bool y) { return x && y; }},
                                                {"Or", [](bool x, bool y) { return x || y; }},
                                                {"Xor", [](bool x, bool y) { return x != y; }},
                                                {"Equal", [](bool x, bool y) { return x == y; }}}) {
    const Tensor expected = ref_nary<uint8_t, uint8_t>(
        DType::kBool, {&p, &q},
        [&fn = fn](const std::vector<uint8_t>& v) { return uint8_t{fn(v[0] != 0, v[1] != 0)}; });
    EXPECT_TRUE(all_close(run1(op, {}, {{p}, {q}}, DType::kBool, {2, 3, 5}), expected)) << op;
  }
  EXPECT_EQ(run_status("Less", {}, {{p}, {q}}, DType::kBool, {2, 3, 5}).code(),
            ErrorCode::kUnimplemented);
}

TEST(ElementwiseBinary, PowExponents) {
  const Tensor x = random_f32({3, 37}, 9, 0.1f, 3.0f);
  for (float p : {1.0f, 2.0f, 3.0f, 0.5f, 1.7f}) {
    for (bool constant : {true, false}) {
      SCOPED_TRACE(std::to_string(p) + (constant ? " constant" : ""));
      const Tensor e = f32({}, {p});
      const Tensor expected = ref_nary<float, float>(
          DType::kF32, {&x, &e}, [](const std::vector<float>& v) { return std::pow(v[0], v[1]); });
      EXPECT_TRUE(all_close(run1("Pow", {}, {{x}, {e, constant}}, DType::kF32, {3, 37}), expected));
    }
  }
  const Tensor neg = f32({4}, {-2.0f, 3.0f, -0.5f, 10.0f});
  const Tensor ints = i64({4}, {3, 2, -2, 0});
  const Tensor expected = f32({4}, {-8.0f, 9.0f, 4.0f, 1.0f});
  EXPECT_TRUE(all_close(run1("Pow", {}, {{neg}, {ints}}, DType::kF32, {4}), expected));
  const Tensor ints32 = make<int32_t>(DType::kI32, {4}, {3, 2, -2, 0});
  EXPECT_TRUE(all_close(run1("Pow", {}, {{neg}, {ints32}}, DType::kF32, {4}), expected));
}

TEST(ElementwiseBinary, VariadicWithOneAndThreeInputs) {
  const Tensor a = random_f32({2, 3, 4}, 11);
  const Tensor b = random_f32({3, 1}, 12);
  const Tensor c = random_f32({4}, 13);
  auto fold = [](float (*f)(float, float), bool mean) {
    return [f, mean](const std::vector<float>& v) {
      float acc = v[0];
      for (size_t i = 1; i < v.size(); ++i) acc = f(acc, v[i]);
      return mean ? acc / static_cast<float>(v.size()) : acc;
    };
  };
  auto add = +[](float x, float y) { return x + y; };
  auto max = +[](float x, float y) { return std::max(x, y); };
  auto min = +[](float x, float y) { return std::min(x, y); };
  const std::vector<std::tuple<std::string, float (*)(float, float), bool>> ops = {
      {"Sum", add, false}, {"Mean", add, true}, {"Max", max, false}, {"Min", min, false}};
  for (const auto& [op, f, mean] : ops) {
    SCOPED_TRACE(op);
    const Tensor three = ref_nary<float, float>(DType::kF32, {&a, &b, &c}, fold(f, mean));
    EXPECT_TRUE(all_close(run1(op, {}, {{a}, {b}, {c}}, DType::kF32, {2, 3, 4}), three));
    EXPECT_TRUE(all_close(run1(op, {}, {{a}}, DType::kF32, {2, 3, 4}), a));
  }
  const Tensor ia = random_i64({100003}, 14, -50, 50);
  const Tensor ib = random_i64({1}, 15, -50, 50);
  const Tensor imax =
      ref_nary<int64_t, int64_t>(DType::kI64, {&ia, &ib, &ia}, [](const std::vector<int64_t>& v) {
        return std::max({v[0], v[1], v[2]});
      });
  EXPECT_TRUE(all_close(run1("Max", {}, {{ia}, {ib}, {ia}}, DType::kI64, {100003}), imax));
}

// --- Where, Clip --------------------------------------------------------------------------------

TEST(ElementwiseWhere, ThreeWayBroadcast) {
  const std::vector<std::tuple<Dims, Dims, Dims>> shapes = {
      {{2, 1, 4}, {3, 1}, {}}, {{1, 1, 1, 128}, {1, 4, 128, 128}, {1}},
      {{7}, {7}, {7}},         {{100003}, {100003}, {100003}},
      {{0, 3}, {3}, {1, 1}},   {{5, 1}, {1}, {1, 6}},
  };
  for (const auto& [dc, dx, dy] : shapes) {
    SCOPED_TRACE(Shape(dc).to_string() + " " + Shape(dx).to_string() + " " + Shape(dy).to_string());
    const Tensor cond = random_bool(dc, 21);
    const Tensor x = random_f32(dx, 22);
    const Tensor y = random_f32(dy, 23);
    const Dims out = broadcast_dims({dc, dx, dy});
    Tensor expected(DType::kF32, out);
    for (int64_t i = 0; i < count(out); ++i) {
      const bool c = cond.values<uint8_t>()[source_offset(i, out, dc)] != 0;
      expected.values<float>()[i] = c ? x.values<float>()[source_offset(i, out, dx)]
                                      : y.values<float>()[source_offset(i, out, dy)];
    }
    EXPECT_TRUE(all_close(run1("Where", {}, {{cond}, {x}, {y}}, DType::kF32, out), expected));
  }
  const Tensor cond = make<uint8_t>(DType::kBool, {2, 2}, {1, 0, 0, 1});
  const Tensor w =
      run1("Where", {}, {{cond}, {i64({2}, {10, 20})}, {i64({}, {-1})}}, DType::kI64, {2, 2});
  EXPECT_TRUE(all_close(w, i64({2, 2}, {10, -1, -1, 20})));
}

TEST(ElementwiseClip, BoundsFromInputsAttributesOrOmitted) {
  const Tensor x = f32({6}, {-3.0f, -1.0f, 0.0f, 0.5f, 2.0f, 9.0f});
  auto clip = [&](float lo, float hi) {
    Tensor t = x.clone();
    for (float& v : t.values<float>()) v = std::min(std::max(v, lo), hi);
    return t;
  };
  const float big = std::numeric_limits<float>::max();
  const OpInput omitted{Tensor(), false, true};
  EXPECT_TRUE(
      all_close(run1("Clip", {}, {{x}, {f32({}, {-1.0f})}, {f32({}, {1.0f})}}, DType::kF32, {6}),
                clip(-1.0f, 1.0f)));
  EXPECT_TRUE(all_close(run1("Clip", {}, {{x}, omitted, {f32({}, {1.0f}), true}}, DType::kF32, {6}),
                        clip(-big, 1.0f)));
  EXPECT_TRUE(
      all_close(run1("Clip", {}, {{x}, {f32({1}, {0.0f})}}, DType::kF32, {6}), clip(0.0f, big)));
  EXPECT_TRUE(all_close(run1("Clip", {}, {{x}, omitted, omitted}, DType::kF32, {6}), x));
  EXPECT_TRUE(all_close(run1("Clip", {}, {{x}}, DType::kF32, {6}), x));
  // min > max: everything becomes max.
  EXPECT_TRUE(
      all_close(run1("Clip", {}, {{x}, {f32({}, {2.0f})}, {f32({}, {1.0f})}}, DType::kF32, {6}),
                clip(1.0f, 1.0f)));
  // Opset 6: attributes.
  EXPECT_TRUE(
      all_close(run1("Clip", {{"min", 0.0f}, {"max", 6.0f}}, {{x}}, DType::kF32, {6}, /*opset=*/6),
                clip(0.0f, 6.0f)));
  const Tensor nan = run1("Clip", {}, {{f32({1}, {kNaN})}, {f32({}, {0.0f})}, {f32({}, {1.0f})}},
                          DType::kF32, {1});
  EXPECT_TRUE(std::isnan(nan.values<float>()[0]));
  const Tensor big_x = random_f32({100003}, 31, -8.0f, 8.0f);
  Tensor relu6 = big_x.clone();
  for (float& v : relu6.values<float>()) v = std::min(std::max(v, 0.0f), 6.0f);
  EXPECT_TRUE(all_close(run1("Clip", {}, {{big_x}, {f32({}, {0.0f}), true}, {f32({}, {6.0f})}},
                             DType::kF32, {100003}),
                        relu6));
  const Tensor ints = i64({4}, {-5, 0, 5, 100});
  EXPECT_TRUE(all_close(run1("Clip", {}, {{ints}, omitted, {i64({}, {5})}}, DType::kI64, {4}),
                        i64({4}, {-5, 0, 5, 5})));
  EXPECT_TRUE(all_close(run1("Clip", {}, {{Tensor(DType::kF32, {0, 3})}}, DType::kF32, {0, 3}),
                        Tensor(DType::kF32, {0, 3})));
}

// --- f64, i16 and the wide unsigned integers ------------------------------------------------------

template <typename T>
std::vector<T> values_of(const Tensor& t) {
  const auto v = t.values<T>();
  return std::vector<T>(v.begin(), v.end());
}

TEST(ElementwiseWideDtypes, MaxMinCompareInTheirOwnType) {
  constexpr uint64_t kTop = 18446744073709551615u;  // -1 if it were read as i64
  const Tensor a = make<uint64_t>(DType::kU64, {2}, {kTop, 5});
  const Tensor b = make<uint64_t>(DType::kU64, {2}, {1, 7});
  EXPECT_EQ(values_of<uint64_t>(run1("Max", {}, {{a}, {b}}, DType::kU64, {2})),
            (std::vector<uint64_t>{kTop, 7}));
  EXPECT_EQ(values_of<uint64_t>(run1("Min", {}, {{a}, {b}}, DType::kU64, {2})),
            (std::vector<uint64_t>{1, 5}));
  const Tensor c = make<int16_t>(DType::kI16, {2}, {-32768, 5});
  const Tensor d = make<int16_t>(DType::kI16, {2}, {3, -7});
  EXPECT_EQ(values_of<int16_t>(run1("Min", {}, {{c}, {d}}, DType::kI16, {2})),
            (std::vector<int16_t>{-32768, -7}));
  const Tensor u16 = make<uint16_t>(DType::kU16, {1}, {65535});
  EXPECT_EQ(values_of<uint16_t>(run1("Max", {}, {{u16}, {make<uint16_t>(DType::kU16, {1}, {2})}},
                                     DType::kU16, {1})),
            (std::vector<uint16_t>{65535}));
  // 1 + 2^-40 and 1 are one float apart from nothing: only a double max keeps them apart.
  const double fine = 1.0 + std::ldexp(1.0, -40);
  const Tensor e = make<double>(DType::kF64, {2}, {fine, -2.0});
  const Tensor f = make<double>(DType::kF64, {2}, {1.0, -1.5});
  EXPECT_EQ(values_of<double>(run1("Max", {}, {{e}, {f}}, DType::kF64, {2})),
            (std::vector<double>{fine, -1.5}));
  EXPECT_EQ(values_of<double>(run1("Sum", {}, {{e}, {f}, {e}}, DType::kF64, {2})),
            (std::vector<double>{1.0 + 2 * fine, -5.5}));
}

TEST(ElementwiseWideDtypes, ModIsPythonStyleForIntegersAndFmodForDoubles) {
  const Tensor a = make<int16_t>(DType::kI16, {3}, {-7, 7, -32768});
  const Tensor b = make<int16_t>(DType::kI16, {3}, {3, -3, -1});
  EXPECT_EQ(values_of<int16_t>(run1("Mod", {}, {{a}, {b}}, DType::kI16, {3})),
            (std::vector<int16_t>{2, -2, 0}));
  EXPECT_EQ(values_of<int16_t>(run1("Mod", {{"fmod", int64_t{1}}}, {{a}, {b}}, DType::kI16, {3})),
            (std::vector<int16_t>{-1, 1, 0}));
  // As i64, 2^64 - 1 would be -1, and -1 mod 10 = 9.
  const Tensor big = make<uint64_t>(DType::kU64, {1}, {18446744073709551615u});
  EXPECT_EQ(values_of<uint64_t>(run1("Mod", {}, {{big}, {make<uint64_t>(DType::kU64, {1}, {10})}},
                                     DType::kU64, {1})),
            (std::vector<uint64_t>{5}));
  const Tensor u32 = make<uint32_t>(DType::kU32, {1}, {4294967295u});
  EXPECT_EQ(values_of<uint32_t>(run1("Mod", {}, {{u32}, {make<uint32_t>(DType::kU32, {1}, {10})}},
                                     DType::kU32, {1})),
            (std::vector<uint32_t>{5}));
  EXPECT_FALSE(run_status("Mod", {}, {{big}, {make<uint64_t>(DType::kU64, {1}, {0})}},
                          DType::kU64, {1})
                   .is_ok());
  const Tensor x = make<double>(DType::kF64, {2}, {5.5, -4.25});
  const Tensor y = make<double>(DType::kF64, {2}, {-2.0, 2.0});
  EXPECT_EQ(values_of<double>(run1("Mod", {{"fmod", int64_t{1}}}, {{x}, {y}}, DType::kF64, {2})),
            (std::vector<double>{1.5, -0.25}));
  EXPECT_FALSE(run_status("Mod", {}, {{x}, {y}}, DType::kF64, {2}).is_ok());  // needs fmod=1
}

TEST(ElementwiseWideDtypes, BitShiftOfEachUnsignedWidth) {
  const AttributeMap left = {{"direction", std::string("LEFT")}};
  const AttributeMap right = {{"direction", std::string("RIGHT")}};
  // u16 promotes to int in C++: 0x8000 << 1 must still wrap to 0, a shift by 16 give 0.
  const Tensor x16 = make<uint16_t>(DType::kU16, {3}, {1, 0x8000, 3});
  const Tensor n16 = make<uint16_t>(DType::kU16, {3}, {15, 1, 16});
  EXPECT_EQ(values_of<uint16_t>(run1("BitShift", left, {{x16}, {n16}}, DType::kU16, {3})),
            (std::vector<uint16_t>{0x8000, 0, 0}));
  EXPECT_EQ(values_of<uint16_t>(run1("BitShift", right, {{x16}, {n16}}, DType::kU16, {3})),
            (std::vector<uint16_t>{0, 0x4000, 0}));
  const Tensor x32 = make<uint32_t>(DType::kU32, {2}, {1, 0xffffffffu});
  const Tensor n32 = make<uint32_t>(DType::kU32, {2}, {31, 32});
  EXPECT_EQ(values_of<uint32_t>(run1("BitShift", left, {{x32}, {n32}}, DType::kU32, {2})),
            (std::vector<uint32_t>{0x80000000u, 0}));
  const Tensor x64 = make<uint64_t>(DType::kU64, {2}, {1, 0x8000000000000000u});
  const Tensor n64 = make<uint64_t>(DType::kU64, {2}, {63, 63});
  EXPECT_EQ(values_of<uint64_t>(run1("BitShift", left, {{x64}, {n64}}, DType::kU64, {2})),
            (std::vector<uint64_t>{0x8000000000000000u, 0}));
  EXPECT_EQ(values_of<uint64_t>(run1("BitShift", right, {{x64}, {n64}}, DType::kU64, {2})),
            (std::vector<uint64_t>{0, 1}));
}

TEST(ElementwiseWideDtypes, PowTakesUnsignedExponents) {
  const Tensor base = f32({3}, {2.0f, -3.0f, 0.5f});
  const Tensor expected = f32({3}, {8.0f, 81.0f, 1.0f});
  EXPECT_TRUE(all_close(run1("Pow", {}, {{base}, {make<uint32_t>(DType::kU32, {3}, {3, 4, 0})}},
                             DType::kF32, {3}),
                        expected));
  EXPECT_TRUE(all_close(run1("Pow", {}, {{base}, {make<uint64_t>(DType::kU64, {3}, {3, 4, 0})}},
                             DType::kF32, {3}),
                        expected));
}

}  // namespace
}  // namespace hsched::cpu::test
