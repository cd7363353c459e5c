// Conformance of the reduction family (Reduce*, ArgMax/ArgMin, Softmax/LogSoftmax, the
// normalizations, global pools) against plain scalar references accumulating in double.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cpu/op_test_util.h"

namespace hsched::cpu::test {
namespace {

using Dims = std::vector<int64_t>;
using Ints = std::vector<int64_t>;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

Tensor to_f32(const Dims& dims, const std::vector<double>& values) {
  std::vector<float> f(values.begin(), values.end());
  return f32(dims, f);
}

int64_t count(const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::vector<int64_t> strides_of(const Dims& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

// Which axes a reduction covers (empty axes: all, or none with noop_with_empty_axes).
std::vector<bool> reduced_axes(size_t rank, const Ints& axes, bool noop = false) {
  std::vector<bool> red(rank, axes.empty() && !noop);
  for (int64_t a : axes) red[a < 0 ? a + static_cast<int64_t>(rank) : a] = true;
  return red;
}

Dims reduced_dims(const Dims& dims, const std::vector<bool>& red, bool keepdims) {
  Dims out;
  for (size_t a = 0; a < dims.size(); ++a) {
    if (!red[a]) {
      out.push_back(dims[a]);
    } else if (keepdims) {
      out.push_back(1);
    }
  }
  return out;
}

// Reference Reduce*: gathers each output's values, then applies `op` in double.
std::vector<double> ref_reduce(const Tensor& x, const std::vector<bool>& red,
                               const std::string& op) {
  const Dims& dims = x.dims();
  const Dims out_dims = reduced_dims(dims, red, true);
  const auto out_strides = strides_of(out_dims);
  std::vector<std::vector<double>> groups(static_cast<size_t>(count(out_dims)));
  const auto values = x.values<float>();
  for (int64_t i = 0; i < count(dims); ++i) {
    int64_t rest = i, o = 0;
    for (size_t a = dims.size(); a-- > 0;) {
      const int64_t idx = rest % dims[a];
      rest /= dims[a];
      if (!red[a]) o += idx * out_strides[a];
    }
    groups[o].push_back(values[i]);
  }
  std::vector<double> out;
  for (const auto& g : groups) {
    double sum = 0, sq = 0, l1 = 0, prod = 1, mx = -kInf, mn = kInf;
    for (double v : g) {
      sum += v;
      sq += v * v;
      l1 += std::fabs(v);
      prod *= v;
      mx = std::max(mx, v);
      mn = std::min(mn, v);
    }
    if (op == "ReduceSum") out.push_back(sum);
    if (op == "ReduceMean") out.push_back(g.empty() ? kNaN : sum / g.size());
    if (op == "ReduceMax") out.push_back(mx);
    if (op == "ReduceMin") out.push_back(mn);
    if (op == "ReduceProd") out.push_back(prod);
    if (op == "ReduceL1") out.push_back(l1);
    if (op == "ReduceL2") out.push_back(std::sqrt(sq));
    if (op == "ReduceSumSquare") out.push_back(sq);
    if (op == "ReduceLogSum") out.push_back(std::log(sum));
  }
  return out;
}

const std::vector<std::string> kReduceOps = {"ReduceSum", "ReduceMean",      "ReduceMax",
                                             "ReduceMin", "ReduceProd",      "ReduceL1",
                                             "ReduceL2",  "ReduceSumSquare", "ReduceLogSum"};

// Inputs each op is well conditioned on: positive for LogSum, near 1 for Prod.
Tensor reduce_input(const std::string& op, const Dims& dims, uint32_t seed) {
  if (op == "ReduceLogSum") return random_f32(dims, seed, 0.1f, 1.0f);
  if (op == "ReduceProd") return random_f32(dims, seed, 0.7f, 1.3f);
  return random_f32(dims, seed, -2.0f, 2.0f);
}

// Runs `op` with axes as an attribute (opset 13) or as a constant input (opset 18).
Result<std::vector<Tensor>> run_reduce(const std::string& op, const Tensor& x, const Ints& axes,
                                       bool keepdims, bool axes_as_input, bool noop = false) {
  AttributeMap attrs{{"keepdims", int64_t{keepdims}}};
  std::vector<OpInput> inputs{{x}};
  if (axes_as_input) {
    if (noop) attrs["noop_with_empty_axes"] = int64_t{1};
    if (!axes.empty() || noop) {
      // An empty axes tensor is built directly: from_vector would memcpy from a null pointer.
      inputs.push_back(
          {axes.empty() ? Tensor(DType::kI64, {0}) : i64({static_cast<int64_t>(axes.size())}, axes),
           true});
    }
  } else if (!axes.empty()) {
    attrs["axes"] = axes;
  }
  const Dims out = reduced_dims(x.dims(), reduced_axes(x.dims().size(), axes, noop), keepdims);
  return run_op(op, attrs, inputs, {{x.dtype(), out}}, axes_as_input ? 18 : 13);
}

struct ReduceCase {
  Dims dims;
  Ints axes;
};

TEST(ReduceTest, MatchesReferenceOverAxesSets) {
  // Rows, columns, general (non-adjacent axes) and all-axes walks, odd sizes, negative axes.
  const std::vector<ReduceCase> cases = {
      {{3, 5, 7}, {}},        {{3, 5, 7}, {0}},        {{3, 5, 7}, {-1}},
      {{3, 5, 7}, {1}},       {{3, 5, 7}, {0, 2}},     {{3, 5, 7}, {1, 2}},
      {{3, 5, 7}, {-3, -1}},  {{2, 3, 4, 5}, {1, 3}},  {{2, 3, 4, 5}, {0, 2, 3}},
      {{2, 1, 4, 1}, {1, 3}}, {{1, 70, 1}, {1}},       {{37}, {0}},
      {{4, 130, 3}, {1}},     {{2, 3, 67, 5}, {0, 2}}, {{6, 1, 9}, {0, 1}}};
  uint32_t seed = 1;
  for (const auto& op : kReduceOps) {
    for (const auto& c : cases) {
      for (bool keepdims : {true, false}) {
        for (bool as_input : {false, true}) {
          const Tensor x = reduce_input(op, c.dims, seed++);
          auto out = run_reduce(op, x, c.axes, keepdims, as_input);
          ASSERT_TRUE(out.is_ok()) << op << ": " << out.status().message();
          const auto red = reduced_axes(c.dims.size(), c.axes);
          const Tensor want = to_f32(reduced_dims(c.dims, red, keepdims), ref_reduce(x, red, op));
          EXPECT_TRUE(all_close(out->at(0), want, 1e-5, 1e-5))
              << op << " dims " << x.shape().to_string() << " axes " << c.axes.size()
              << " keepdims " << keepdims << " as_input " << as_input;
        }
      }
    }
  }
}

TEST(ReduceTest, NoopWithEmptyAxesReducesEachElementAlone) {
  const Tensor x = random_f32({3, 4}, 7, 0.1f, 2.0f);
  for (const auto& op : kReduceOps) {
    auto out = run_reduce(op, x, {}, true, /*axes_as_input=*/true, /*noop=*/true);
    ASSERT_TRUE(out.is_ok()) << op << ": " << out.status().message();
    const Tensor want = to_f32({3, 4}, ref_reduce(x, {false, false}, op));
    EXPECT_TRUE(all_close(out->at(0), want)) << op;  // SumSquare gives x^2, L2 |x|, Mean x
  }
}

TEST(ReduceTest, ZeroSizeAxisGivesTheEmptyReduction) {
  const Tensor x(DType::kF32, {2, 0, 3});
  const std::vector<std::pair<std::string, double>> expected = {
      {"ReduceSum", 0.0},  {"ReduceProd", 1.0},  {"ReduceMax", -kInf},
      {"ReduceMin", kInf}, {"ReduceMean", kNaN}, {"ReduceLogSum", -kInf}};
  for (const auto& [op, value] : expected) {
    auto out = run_reduce(op, x, {1}, true, false);
    ASSERT_TRUE(out.is_ok()) << op << ": " << out.status().message();
    ASSERT_EQ(out->at(0).dims(), (Dims{2, 1, 3}));
    for (float v : out->at(0).values<float>()) {
      if (std::isnan(value)) {
        EXPECT_TRUE(std::isnan(v)) << op;
      } else {
        EXPECT_EQ(v, value) << op;
      }
    }
  }
  // Reducing a non-empty axis of an empty tensor gives an empty output.
  auto out = run_reduce("ReduceSum", Tensor(DType::kF32, {0, 4}), {1}, false, false);
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_EQ(out->at(0).elements(), 0);
}

TEST(ReduceTest, Int64SumMaxMin) {
  const Tensor x = i64({2, 3}, {5, -7, 9, 1, 1, -3});
  auto sum = run_reduce("ReduceSum", x, {1}, false, true);
  ASSERT_TRUE(sum.is_ok()) << sum.status().message();
  EXPECT_TRUE(all_close(sum->at(0), i64({2}, {7, -1})));
  auto mx = run_reduce("ReduceMax", x, {0}, true, false);
  ASSERT_TRUE(mx.is_ok()) << mx.status().message();
  EXPECT_TRUE(all_close(mx->at(0), i64({1, 3}, {5, 1, 9})));
  auto mn = run_reduce("ReduceMin", x, {}, false, false);
  ASSERT_TRUE(mn.is_ok()) << mn.status().message();
  EXPECT_TRUE(all_close(mn->at(0), i64({}, {-7})));
}

TEST(ReduceTest, LogSumExpOfFloatAndDouble) {
  // log(e^0 + e^1 + e^2) and log(e^-1 + e^-1) by hand; rows of [2, 3] reduced over axis 1.
  const double row0 = std::log(1.0 + std::exp(1.0) + std::exp(2.0));
  const double row1 = std::log(3.0 * std::exp(-1.0));
  const Tensor x = to_f32({2, 3}, {0, 1, 2, -1, -1, -1});
  auto f = run_reduce("ReduceLogSumExp", x, {1}, false, false);
  ASSERT_TRUE(f.is_ok()) << f.status().message();
  EXPECT_NEAR((*f)[0].values<float>()[0], row0, 1e-6);
  EXPECT_NEAR((*f)[0].values<float>()[1], row1, 1e-6);
  // f64 reduces in double: 1e-12 apart survives, which f32 could not hold.
  const Tensor d = Tensor::from_vector(DType::kF64, {2, 3},
                                       std::vector<double>{0, 1, 2, -1, -1, -1 + 3e-12});
  auto g = run_reduce("ReduceLogSumExp", d, {1}, true, true);
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  ASSERT_EQ((*g)[0].dims(), (Dims{2, 1}));
  EXPECT_NEAR((*g)[0].values<double>()[0], row0, 1e-14);
  EXPECT_NEAR((*g)[0].values<double>()[1] - row1, 1e-12, 1e-14);
  // The other float reductions take f64 too.
  auto sum = run_reduce("ReduceSum", d, {0}, false, true);
  ASSERT_TRUE(sum.is_ok()) << sum.status().message();
  EXPECT_NEAR((*sum)[0].values<double>()[2], 1 + 3e-12, 1e-15);
}

TEST(ReduceTest, LongRowsStayAccurate) {
  // 70000-element rows around 100: a float running sum would drift by ~1e-3 relative.
  const Tensor x = random_f32({3, 70000}, 11, 99.0f, 101.0f);
  for (const std::string op : {"ReduceMean", "ReduceSum", "ReduceL2"}) {
    auto out = run_reduce(op, x, {-1}, false, false);
    ASSERT_TRUE(out.is_ok()) << out.status().message();
    EXPECT_TRUE(all_close(out->at(0), to_f32({3}, ref_reduce(x, {false, true}, op)), 0, 2e-7))
        << op;
  }
}

TEST(ReduceTest, LargeTensorsRunInParallelChunks) {
  const std::vector<ReduceCase> cases = {
      {{300, 1000}, {1}}, {{64, 700, 9}, {1}}, {{40, 30, 50, 7}, {1, 3}}};
  for (const auto& c : cases) {
    const Tensor x = random_f32(c.dims, 3);
    auto out = run_reduce("ReduceMean", x, c.axes, true, false);
    ASSERT_TRUE(out.is_ok()) << out.status().message();
    const auto red = reduced_axes(c.dims.size(), c.axes);
    EXPECT_TRUE(all_close(
        out->at(0), to_f32(reduced_dims(c.dims, red, true), ref_reduce(x, red, "ReduceMean"))));
  }
}

// Reducing the leading axis of one [rows, columns] block (a channels-last global pool) sums rows
// in fixed chunks and merges the chunks' results: 1 to 64 chunks here, and the same bits on a
// second run.
TEST(ReduceTest, ColumnsOfOneBlockMergeChunksInOrder) {
  const std::vector<ReduceCase> cases = {
      {{5000, 40}, {0}}, {{3, 100000}, {0}}, {{70000, 3}, {0}}, {{1, 3136, 256}, {1}}};
  for (const auto& c : cases) {
    const Tensor x = random_f32(c.dims, 5, 99.0f, 101.0f);
    const auto red = reduced_axes(c.dims.size(), c.axes);
    for (const std::string op : {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin"}) {
      auto out = run_reduce(op, x, c.axes, true, false);
      ASSERT_TRUE(out.is_ok()) << out.status().message();
      EXPECT_TRUE(all_close(
          out->at(0), to_f32(reduced_dims(c.dims, red, true), ref_reduce(x, red, op)), 0, 2e-7))
          << op << " " << x.shape().to_string();
      auto again = run_reduce(op, x, c.axes, true, false);
      ASSERT_TRUE(again.is_ok()) << again.status().message();
      EXPECT_EQ(std::memcmp(out->at(0).raw(), again->at(0).raw(), out->at(0).byte_size()), 0) << op;
    }
  }
}

// 'axes' computed by the graph (not a constant): read on every run, and checked then against
// the output's static shape.
TEST(ReduceTest, AxesInputReadAtRunTime) {
  const Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  auto rows = run_op("ReduceSum", {}, {{x}, {i64({1}, {1})}}, {{DType::kF32, {2, 1}}});
  ASSERT_TRUE(rows.is_ok()) << rows.status().message();
  EXPECT_TRUE(all_close(rows->at(0), f32({2, 1}, {6, 15})));
  auto all = run_op("ReduceMax", {{"keepdims", int64_t{0}}}, {{x}, {i64({0}, {})}},
                    {{DType::kF32, {}}}, 13);
  ASSERT_TRUE(all.is_ok()) << all.status().message();
  EXPECT_TRUE(all_close(all->at(0), f32({}, {6})));
  auto columns = run_op("ReduceSum", {}, {{x}, {i64({1}, {-2})}}, {{DType::kF32, {1, 3}}});
  ASSERT_TRUE(columns.is_ok()) << columns.status().message();
  EXPECT_TRUE(all_close(columns->at(0), f32({1, 3}, {5, 7, 9})));

  // Axes that give another shape than the output's, or out of range: one line at run time.
  auto other = run_op("ReduceSum", {}, {{x}, {i64({1}, {0})}}, {{DType::kF32, {2, 1}}});
  ASSERT_FALSE(other.is_ok());
  EXPECT_EQ(other.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(other.status().message().find("reduce to 1x3, not the output's 2x1"),
            std::string::npos)
      << other.status().message();
  auto outside = run_op("ReduceSum", {}, {{x}, {i64({1}, {2})}}, {{DType::kF32, {2, 1}}});
  ASSERT_FALSE(outside.is_ok());
  EXPECT_NE(outside.status().message().find("'axes' = 2 is out of range"), std::string::npos)
      << outside.status().message();
  auto twice = run_op("ReduceSum", {}, {{x}, {i64({2}, {1, -1})}}, {{DType::kF32, {2, 1}}});
  ASSERT_FALSE(twice.is_ok());
  EXPECT_NE(twice.status().message().find("appears twice"), std::string::npos)
      << twice.status().message();
}

TEST(ReduceTest, RejectsBadAxesAndDtypesWithAReason) {
  const Tensor x = random_f32({2, 3}, 1);
  auto out_of_range = run_reduce("ReduceMean", x, {2}, true, false);
  ASSERT_FALSE(out_of_range.is_ok());
  EXPECT_EQ(out_of_range.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(out_of_range.status().message().find("'axes' = 2"), std::string::npos)
      << out_of_range.status().message();

  auto twice = run_reduce("ReduceSum", x, {1, -1}, true, true);
  ASSERT_FALSE(twice.is_ok());
  EXPECT_EQ(twice.status().code(), ErrorCode::kInvalidArgument);

  auto i32_axes = run_op("ReduceSum", {}, {{x}, {Tensor::from_vector(DType::kI32, {1},
                                                                     std::vector<int32_t>{1})}},
                         {{DType::kF32, {2, 1}}});
  ASSERT_FALSE(i32_axes.is_ok());
  EXPECT_EQ(i32_axes.status().code(), ErrorCode::kUnimplemented);
  EXPECT_NE(i32_axes.status().message().find("axes"), std::string::npos);

  auto int_mean = run_reduce("ReduceMean", i64({2}, {1, 2}), {}, true, false);
  ASSERT_FALSE(int_mean.is_ok());
  EXPECT_EQ(int_mean.status().code(), ErrorCode::kUnimplemented);
  EXPECT_NE(int_mean.status().message().find("i64"), std::string::npos);

  auto wrong_output = run_op("ReduceMax", {}, {{x}}, {{DType::kF32, {2, 3}}}, 13);
  ASSERT_FALSE(wrong_output.is_ok());
  EXPECT_EQ(wrong_output.status().code(), ErrorCode::kInvalidArgument);
}

// ---- ArgMax / ArgMin ---------------------------------------------------------------------------

std::vector<int64_t> ref_arg(const Tensor& x, int64_t axis, bool is_max, bool last) {
  const Dims& d = x.dims();
  if (axis < 0) axis += static_cast<int64_t>(d.size());
  int64_t outer = 1, inner = 1;
  for (int64_t a = 0; a < axis; ++a) outer *= d[a];
  for (size_t a = axis + 1; a < d.size(); ++a) inner *= d[a];
  const int64_t n = d[axis];
  const auto v = x.values<float>();
  std::vector<int64_t> out;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < inner; ++j) {
      int64_t best = 0;
      for (int64_t i = 1; i < n; ++i) {
        const float a = v[(o * n + i) * inner + j];
        const float b = v[(o * n + best) * inner + j];
        if (is_max ? (a > b || (last && a == b)) : (a < b || (last && a == b))) best = i;
      }
      out.push_back(best);
    }
  }
  return out;
}

TEST(ArgTest, TiesAndSelectLastIndex) {
  // Values from a small set so every row has ties; inner > kColumnBlock covers column blocks.
  for (const Dims& dims : {Dims{5, 9}, Dims{3, 4, 70}, Dims{2, 6, 3, 5}}) {
    Tensor x = random_f32(dims, 5);
    for (float& v : x.values<float>()) v = std::round(v * 2);
    for (const std::string op : {"ArgMax", "ArgMin"}) {
      for (int64_t axis : {int64_t{0}, int64_t{1}, int64_t{-1}}) {
        for (bool last : {false, true}) {
          for (bool keepdims : {true, false}) {
            Dims out_dims = dims;
            const auto rank = static_cast<int64_t>(dims.size());
            const auto a = static_cast<size_t>(axis < 0 ? axis + rank : axis);
            if (keepdims) {
              out_dims[a] = 1;
            } else {
              out_dims.erase(out_dims.begin() + a);
            }
            AttributeMap attrs{{"axis", axis},
                               {"keepdims", int64_t{keepdims}},
                               {"select_last_index", int64_t{last}}};
            auto out = run_op(op, attrs, {{x}}, {{DType::kI64, out_dims}}, 13);
            ASSERT_TRUE(out.is_ok()) << out.status().message();
            EXPECT_TRUE(
                all_close(out->at(0), i64(out_dims, ref_arg(x, axis, op == "ArgMax", last))))
                << op << " axis " << axis << " last " << last;
          }
        }
      }
    }
  }
}

TEST(ArgTest, Int64InputAndEmptyAxis) {
  auto out = run_op("ArgMax", {{"axis", int64_t{1}}}, {{i64({2, 3}, {4, 9, 9, -1, -5, -1})}},
                    {{DType::kI64, {2, 1}}});
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_TRUE(all_close(out->at(0), i64({2, 1}, {1, 0})));
  auto empty = run_op("ArgMax", {{"axis", int64_t{1}}}, {{Tensor(DType::kF32, {2, 0})}},
                      {{DType::kI64, {2, 1}}});
  ASSERT_FALSE(empty.is_ok());
  EXPECT_EQ(empty.status().code(), ErrorCode::kInvalidArgument);
}

// ---- Softmax / LogSoftmax ----------------------------------------------------------------------

// Normalizes over [outer, n, inner] as ONNX does: opset < 13 flattens dims[axis:] into n.
std::vector<double> ref_softmax(const Tensor& x, int64_t axis, bool coerce_2d, bool log) {
  const Dims& d = x.dims();
  if (axis < 0) axis += static_cast<int64_t>(d.size());
  int64_t outer = 1, n = 1, inner = 1;
  for (int64_t a = 0; a < static_cast<int64_t>(d.size()); ++a) {
    (a < axis ? outer : (a == axis || coerce_2d) ? n : inner) *= d[a];
  }
  const auto v = x.values<float>();
  std::vector<double> y(v.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < inner; ++j) {
      const auto at = [&](int64_t i) { return (o * n + i) * inner + j; };
      double m = -kInf, s = 0;
      for (int64_t i = 0; i < n; ++i) m = std::max(m, double{v[at(i)]});
      for (int64_t i = 0; i < n; ++i) s += std::exp(v[at(i)] - m);
      for (int64_t i = 0; i < n; ++i) {
        y[at(i)] = log ? v[at(i)] - m - std::log(s) : std::exp(v[at(i)] - m) / s;
      }
    }
  }
  return y;
}

TEST(SoftmaxTest, Opset11FlattensAndOpset13UsesOneAxis) {
  const Tensor x = random_f32({2, 3, 4}, 21, -4.0f, 4.0f);
  for (const std::string op : {"Softmax", "LogSoftmax"}) {
    const bool log = op == "LogSoftmax";
    auto v11 = run_op(op, {{"axis", int64_t{1}}}, {{x}}, {{DType::kF32, {2, 3, 4}}}, 11);
    auto v13 = run_op(op, {{"axis", int64_t{1}}}, {{x}}, {{DType::kF32, {2, 3, 4}}}, 13);
    ASSERT_TRUE(v11.is_ok() && v13.is_ok());
    EXPECT_TRUE(all_close(v11->at(0), to_f32({2, 3, 4}, ref_softmax(x, 1, true, log))));
    EXPECT_TRUE(all_close(v13->at(0), to_f32({2, 3, 4}, ref_softmax(x, 1, false, log))));
    EXPECT_FALSE(all_close(v11->at(0), v13->at(0)));
    // Default axis: 1 before opset 13 (flattened), -1 from 13.
    auto d11 = run_op(op, {}, {{x}}, {{DType::kF32, {2, 3, 4}}}, 11);
    auto d13 = run_op(op, {}, {{x}}, {{DType::kF32, {2, 3, 4}}}, 13);
    ASSERT_TRUE(d11.is_ok() && d13.is_ok());
    EXPECT_TRUE(all_close(d11->at(0), v11->at(0)));
    EXPECT_TRUE(all_close(d13->at(0), to_f32({2, 3, 4}, ref_softmax(x, -1, false, log))));
  }
}

TEST(SoftmaxTest, AnyAxisLargeValuesAndLongRows) {
  struct Case {
    Dims dims;
    int64_t axis;
    float lo, hi;
  };
  const std::vector<Case> cases = {{{3, 197}, -1, -30, 30},
                                   {{2, 5, 130}, 1, -5, 5},
                                   {{4, 3, 7}, 0, -5, 5},
                                   {{1, 1000}, 1, 900, 1100},
                                   {{12, 128, 128}, -1, -8, 8},
                                   {{2, 70001}, -1, -20, 20},
                                   {{1}, 0, -1, 1}};
  uint32_t seed = 30;
  for (const auto& c : cases) {
    const Tensor x = random_f32(c.dims, seed++, c.lo, c.hi);
    for (const std::string op : {"Softmax", "LogSoftmax"}) {
      auto out = run_op(op, {{"axis", c.axis}}, {{x}}, {{DType::kF32, c.dims}}, 13);
      ASSERT_TRUE(out.is_ok()) << out.status().message();
      const Tensor want = to_f32(c.dims, ref_softmax(x, c.axis, false, op == "LogSoftmax"));
      EXPECT_TRUE(all_close(out->at(0), want, 1e-6, 1e-5))
          << op << " " << x.shape().to_string() << " axis " << c.axis;
    }
  }
}

TEST(SoftmaxTest, NanOrAllMinusInfinityRowsGiveNan) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  // Rows: a positive NaN, a negative NaN, all -inf; the last row is ordinary.
  const Tensor x = f32({4, 3}, {1, nan, 2, 1, -nan, 2, -inf, -inf, -inf, 0, 1, 2});
  for (const std::string op : {"Softmax", "LogSoftmax"}) {
    auto out = run_op(op, {}, {{x}}, {{DType::kF32, {4, 3}}}, 13);
    ASSERT_TRUE(out.is_ok()) << out.status().message();
    const auto y = out->at(0).values<float>();
    for (int i = 0; i < 9; ++i) EXPECT_TRUE(std::isnan(y[i])) << op << " element " << i;
    for (int i = 9; i < 12; ++i) EXPECT_FALSE(std::isnan(y[i])) << op << " element " << i;
  }
}

// ---- LayerNormalization, InstanceNormalization, BatchNormalization ----------------------------

// Normalizes each of `rows` rows of `n` elements; scale/bias indexed by `param(row, i)`.
template <typename Param>
std::vector<double> ref_normalize(const Tensor& x, int64_t rows, int64_t n, double eps, Param param,
                                  std::vector<double>* means = nullptr,
                                  std::vector<double>* inv_stds = nullptr) {
  const auto v = x.values<float>();
  std::vector<double> y(v.size());
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < n; ++i) mean += v[r * n + i];
    mean /= n;
    for (int64_t i = 0; i < n; ++i) var += (v[r * n + i] - mean) * (v[r * n + i] - mean);
    const double inv = 1 / std::sqrt(var / n + eps);
    if (means) means->push_back(mean);
    if (inv_stds) inv_stds->push_back(inv);
    for (int64_t i = 0; i < n; ++i) {
      const auto [s, b] = param(r, i);
      y[r * n + i] = (v[r * n + i] - mean) * inv * s + b;
    }
  }
  return y;
}

TEST(LayerNormTest, WithAndWithoutBiasAndStatistics) {
  const Dims dims{2, 7, 33};
  const Tensor x = random_f32(dims, 41, 5.0f, 7.0f);  // mean far from 0, to test the two passes
  const Tensor scale = random_f32({33}, 42, 0.5f, 1.5f);
  const Tensor bias = random_f32({33}, 43);
  const auto s = scale.values<float>();
  const auto b = bias.values<float>();
  for (bool with_bias : {true, false}) {
    std::vector<double> means, invs;
    const auto want = ref_normalize(
        x, 14, 33, 1e-3,
        [&](int64_t, int64_t i) {
          return std::pair<double, double>{s[i], with_bias ? b[i] : 0};
        },
        &means, &invs);
    std::vector<OpInput> inputs{{x}, {scale, true}};
    if (with_bias) inputs.push_back({bias, true});
    auto out = run_op("LayerNormalization", {{"epsilon", 1e-3f}}, inputs,
                      {{DType::kF32, dims}, {DType::kF32, {2, 7, 1}}, {DType::kF32, {2, 7, 1}}});
    ASSERT_TRUE(out.is_ok()) << out.status().message();
    EXPECT_TRUE(all_close(out->at(0), to_f32(dims, want), 1e-5, 1e-5)) << "bias " << with_bias;
    EXPECT_TRUE(all_close(out->at(1), to_f32({2, 7, 1}, means)));
    EXPECT_TRUE(all_close(out->at(2), to_f32({2, 7, 1}, invs)));
  }
}

TEST(LayerNormTest, EarlierAxisWithBroadcastScaleAndLongRows) {
  // axis 1 normalizes over [7, 33]; Scale [33] broadcasts over it, B is the full [7, 33].
  const Dims dims{3, 7, 33};
  const Tensor x = random_f32(dims, 51);
  const Tensor scale = random_f32({33}, 52);
  const Tensor bias = random_f32({7, 33}, 53);
  const auto want = ref_normalize(x, 3, 231, 1e-5, [&](int64_t, int64_t i) {
    return std::pair<double, double>{scale.values<float>()[i % 33], bias.values<float>()[i]};
  });
  auto out = run_op("LayerNormalization", {{"axis", int64_t{-2}}}, {{x}, {scale}, {bias}},
                    {{DType::kF32, dims}});
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_TRUE(all_close(out->at(0), to_f32(dims, want), 1e-5, 1e-5));

  const Tensor long_x = random_f32({2, 65536}, 54, 100.0f, 100.5f);
  const Tensor ones = f32({65536}, std::vector<float>(65536, 1.0f));
  auto long_out = run_op("LayerNormalization", {}, {{long_x}, {ones}, {{}, false, true}},
                         {{DType::kF32, {2, 65536}}});
  ASSERT_TRUE(long_out.is_ok()) << long_out.status().message();
  const auto long_want = ref_normalize(long_x, 2, 65536, 1e-5, [](int64_t, int64_t) {
    return std::pair<double, double>{1, 0};
  });
  EXPECT_TRUE(all_close(long_out->at(0), to_f32({2, 65536}, long_want), 1e-4, 1e-4));

  auto bad = run_op("LayerNormalization", {}, {{x}, {random_f32({7}, 1)}}, {{DType::kF32, dims}});
  ASSERT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.status().code(), ErrorCode::kInvalidArgument);
}

TEST(InstanceNormTest, LargeSpatialAndOddShapes) {
  // [1, 64, 64, 64]: rows of 4096 with an offset; [2, 3, 5] and a 3D [1, 2, 3, 4, 5].
  for (const Dims& dims :
       {Dims{1, 64, 64, 64}, Dims{2, 3, 5}, Dims{1, 2, 3, 4, 5}, Dims{1, 4, 256, 256}}) {
    const Tensor x = random_f32(dims, 61, 3.0f, 4.0f);
    const int64_t c = dims[1];
    const Tensor scale = random_f32({c}, 62, 0.5f, 2.0f);
    const Tensor bias = random_f32({c}, 63);
    const int64_t n = count(dims) / (dims[0] * c);
    const auto want = ref_normalize(x, dims[0] * c, n, 1e-5, [&](int64_t r, int64_t) {
      return std::pair<double, double>{scale.values<float>()[r % c], bias.values<float>()[r % c]};
    });
    auto out = run_op("InstanceNormalization", {}, {{x}, {scale, true}, {bias, true}},
                      {{DType::kF32, dims}});
    ASSERT_TRUE(out.is_ok()) << out.status().message();
    EXPECT_TRUE(all_close(out->at(0), to_f32(dims, want), 1e-4, 1e-4)) << x.shape().to_string();
  }
}

TEST(BatchNormTest, InferenceMatchesReference) {
  for (const Dims& dims : {Dims{2, 3, 5, 7}, Dims{4, 3}, Dims{1, 3, 9}}) {
    const Tensor x = random_f32(dims, 71);
    const Tensor scale = random_f32({3}, 72), bias = random_f32({3}, 73);
    const Tensor mean = random_f32({3}, 74), var = random_f32({3}, 75, 0.1f, 2.0f);
    const int64_t n = count(dims) / (dims[0] * 3);
    std::vector<double> want;
    const auto v = x.values<float>();
    for (int64_t i = 0; i < count(dims); ++i) {
      const int64_t c = (i / n) % 3;
      want.push_back((v[i] - mean.values<float>()[c]) /
                         std::sqrt(double{var.values<float>()[c]} + 1e-5) *
                         scale.values<float>()[c] +
                     bias.values<float>()[c]);
    }
    auto out = run_op("BatchNormalization", {}, {{x}, {scale}, {bias}, {mean}, {var}},
                      {{DType::kF32, dims}}, 15);
    ASSERT_TRUE(out.is_ok()) << out.status().message();
    EXPECT_TRUE(all_close(out->at(0), to_f32(dims, want))) << x.shape().to_string();
  }
}

// training_mode 1 (NFNet's and BiT's weight standardization: F.batch_norm with training=True):
// normalized by x's own per-channel mean and population variance; the running statistics, where
// asked for, blend the given ones by momentum.
TEST(BatchNormTest, TrainingModeUsesTheInputsStatistics) {
  const Dims dims{2, 3, 5};
  const Tensor x = random_f32(dims, 81);
  const Tensor scale = random_f32({3}, 82), bias = random_f32({3}, 83);
  const Tensor mean = random_f32({3}, 84), var = random_f32({3}, 85, 0.1f, 2.0f);
  const auto v = x.values<float>();
  std::vector<double> m(3, 0.0), s2(3, 0.0), want(v.size());
  for (size_t i = 0; i < v.size(); ++i) m[(i / 5) % 3] += v[i] / 10.0;
  for (size_t i = 0; i < v.size(); ++i)
    s2[(i / 5) % 3] += (v[i] - m[(i / 5) % 3]) * (v[i] - m[(i / 5) % 3]) / 10.0;
  for (size_t i = 0; i < v.size(); ++i) {
    const size_t c = (i / 5) % 3;
    want[i] = (v[i] - m[c]) / std::sqrt(s2[c] + 1e-5) * scale.values<float>()[c] +
              bias.values<float>()[c];
  }
  std::vector<double> running_mean(3), running_var(3);
  for (size_t c = 0; c < 3; ++c) {
    running_mean[c] = mean.values<float>()[c] * 0.25 + m[c] * 0.75;
    running_var[c] = var.values<float>()[c] * 0.25 + s2[c] * 0.75;
  }
  auto out = run_op("BatchNormalization", {{"training_mode", int64_t{1}}, {"momentum", 0.25f}},
                    {{x}, {scale}, {bias}, {mean}, {var}},
                    {{DType::kF32, dims}, {DType::kF32, {3}}, {DType::kF32, {3}}}, 15);
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_TRUE(all_close(out->at(0), to_f32(dims, want)));
  EXPECT_TRUE(all_close(out->at(1), to_f32({3}, running_mean)));
  EXPECT_TRUE(all_close(out->at(2), to_f32({3}, running_var)));
}

// ---- Global pools, LpNormalization -------------------------------------------------------------

TEST(GlobalPoolTest, AverageAndMaxOverSpatialDims) {
  for (const Dims& dims :
       {Dims{2, 3, 7, 9}, Dims{1, 5, 4, 4, 4}, Dims{1, 512, 7, 7}, Dims{2, 4, 9}}) {
    const Tensor x = random_f32(dims, 81);
    Dims out_dims(dims.size(), 1);
    out_dims[0] = dims[0];
    out_dims[1] = dims[1];
    std::vector<bool> red(dims.size(), true);
    red[0] = red[1] = false;
    const std::vector<std::pair<std::string, std::string>> ops = {
        {"GlobalAveragePool", "ReduceMean"}, {"GlobalMaxPool", "ReduceMax"}};
    for (const auto& [op, ref] : ops) {
      auto out = run_op(op, {}, {{x}}, {{DType::kF32, out_dims}});
      ASSERT_TRUE(out.is_ok()) << out.status().message();
      EXPECT_TRUE(all_close(out->at(0), to_f32(out_dims, ref_reduce(x, red, ref))))
          << op << " " << x.shape().to_string();
    }
  }
}

TEST(LpNormalizationTest, P1AndP2AlongAnyAxisWithZeroRows) {
  for (int64_t p : {1, 2}) {
    for (int64_t axis : {int64_t{-1}, int64_t{0}}) {
      const Dims dims{3, 70};
      Tensor x = random_f32(dims, 91);
      if (axis == -1) std::fill_n(x.values<float>().begin() + 70, 70, 0.0f);  // a zero row
      const auto v = x.values<float>();
      std::vector<double> want(v.size());
      const int64_t n = axis == -1 ? 70 : 3, step = axis == -1 ? 1 : 70;
      for (int64_t lane = 0; lane < (axis == -1 ? 3 : 70); ++lane) {
        const int64_t start = axis == -1 ? lane * 70 : lane;
        double norm = 0;
        for (int64_t i = 0; i < n; ++i) {
          const double e = v[start + i * step];
          norm += p == 1 ? std::fabs(e) : e * e;
        }
        if (p == 2) norm = std::sqrt(norm);
        for (int64_t i = 0; i < n; ++i) {
          want[start + i * step] = norm == 0 ? 0 : v[start + i * step] / norm;
        }
      }
      auto out =
          run_op("LpNormalization", {{"axis", axis}, {"p", p}}, {{x}}, {{DType::kF32, dims}});
      ASSERT_TRUE(out.is_ok()) << out.status().message();
      EXPECT_TRUE(all_close(out->at(0), to_f32(dims, want))) << "p " << p << " axis " << axis;
    }
  }
  auto p3 =
      run_op("LpNormalization", {{"p", int64_t{3}}}, {{random_f32({2}, 1)}}, {{DType::kF32, {2}}});
  ASSERT_FALSE(p3.is_ok());
  EXPECT_NE(p3.status().message().find("'p' = 3"), std::string::npos);
}

}  // namespace
}  // namespace hsched::cpu::test
