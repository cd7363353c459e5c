// The int8 fast paths against the reference loops and the ops they replace: QLinearConv and
// QLinearMatMul with constant weights in oneDNN's int8 primitives (requantized in its epilogue),
// QLinearConv reading and writing channels-last activations, and hsched.QdqBinary (the QDQ
// fusion's Add/Mul) against DequantizeLinear, the op and QuantizeLinear.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cpu/op_test_util.h"

namespace hsched::cpu::test {
namespace {

using Ints = std::vector<int64_t>;

// Seeded bytes over the whole range of the dtype (u8 or i8), and int32 biases.
Tensor random_bytes(DType dtype, const Ints& dims, uint32_t seed) {
  Tensor t = Tensor::uninitialized(dtype, dims);
  uint32_t state = seed * 2654435761u + 1u;
  for (uint8_t& v : t.values<uint8_t>()) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<uint8_t>(state >> 24);
  }
  return t;
}
Tensor random_bias(int64_t n, uint32_t seed) {
  std::vector<int32_t> v;
  uint32_t state = seed;
  for (int64_t i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    v.push_back(static_cast<int32_t>(state >> 16) - 32768);
  }
  return i32({n}, v);
}
std::vector<float> scales(int64_t n, float first) {
  std::vector<float> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(first * (1.0f + 0.37f * static_cast<float>(i % 5)));
  return v;
}

// oneDNN requantizes in its epilogue, in its own order of fp32 operations: a value that lands
// within rounding of a .5 boundary may come out one step from the reference loop's. `got` and
// `want` (8-bit tensors of `dtype`) may differ by one step, on at most 1 value in 1,000 (and 1).
void expect_within_one_step(const Tensor& got, const Tensor& want, DType dtype,
                            const std::string& what) {
  const auto g = got.values<uint8_t>(), w = want.values<uint8_t>();
  ASSERT_EQ(g.size(), w.size()) << what;
  const auto value = [&](uint8_t byte) {
    return dtype == DType::kI8 ? static_cast<int>(static_cast<int8_t>(byte)) : int{byte};
  };
  size_t off_by_one = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    const int step = value(g[i]) - value(w[i]);
    ASSERT_LE(std::abs(step), 1) << what << ", element " << i;
    off_by_one += step != 0 ? 1 : 0;
  }
  EXPECT_LE(off_by_one, std::max<size_t>(1, g.size() / 1000)) << what;
}

// Constant int8 weights take oneDNN's int8 primitives (where its products are exact: VNNI); the
// same weights given at run time take the reference loop. Both must give the same bytes, but for
// one step at rounding boundaries (expect_within_one_step): groups,
// depthwise, strides, asymmetric pads, dilations, both x dtypes, a zero point that padding must
// honour, per-channel scales, the bias, both y dtypes.
TEST(CpuQuant, QLinearConvWithConstantWeightsMatchesTheReferenceLoop) {
  struct Case {
    DType x_dtype, y_dtype;
    int64_t c, m, group, k, stride, dilation;
    Ints pads;
    bool per_channel, bias;
  };
  const std::vector<Case> cases = {
      {DType::kU8, DType::kU8, 8, 16, 1, 3, 1, 1, {1, 1, 1, 1}, true, true},
      {DType::kU8, DType::kI8, 6, 4, 2, 3, 2, 1, {0, 2, 1, 0}, false, true},
      {DType::kI8, DType::kU8, 16, 16, 16, 3, 1, 2, {2, 2, 2, 2}, true, false},
      {DType::kU8, DType::kU8, 3, 8, 1, 5, 2, 1, {2, 1, 2, 1}, true, true},
      {DType::kI8, DType::kI8, 32, 24, 1, 1, 1, 1, {0, 0, 0, 0}, true, true},
      {DType::kU8, DType::kU8, 4, 8, 1, 2, 2, 1, {0, 0, 0, 0}, true, true},  // last row unread
  };
  uint32_t seed = 1;
  for (const Case& c : cases) {
    const Ints x_dims{2, c.c, 11, 9};
    const Ints w_dims{c.m, c.c / c.group, c.k, c.k};
    const int64_t span = (c.k - 1) * c.dilation + 1;
    const Ints y_dims{2, c.m, (11 + c.pads[0] + c.pads[2] - span) / c.stride + 1,
                      (9 + c.pads[1] + c.pads[3] - span) / c.stride + 1};
    const Tensor x = random_bytes(c.x_dtype, x_dims, seed++);
    const Tensor w = random_bytes(DType::kI8, w_dims, seed++);
    const Tensor x_zp = c.x_dtype == DType::kU8 ? u8({}, {131}) : i8({}, {-7});
    const Tensor y_zp = c.y_dtype == DType::kU8 ? u8({}, {120}) : i8({}, {3});
    const Tensor w_scale = f32({c.per_channel ? c.m : 1}, scales(c.per_channel ? c.m : 1, 0.01f));
    const Tensor w_zp = i8({c.per_channel ? c.m : 1},
                           std::vector<int8_t>(static_cast<size_t>(c.per_channel ? c.m : 1), 0));
    const AttributeMap attrs{{"group", c.group},
                             {"strides", Ints{c.stride, c.stride}},
                             {"dilations", Ints{c.dilation, c.dilation}},
                             {"pads", c.pads}};
    const auto run = [&](bool constant_weights) {
      std::vector<OpInput> in{{x},         {f32({}, {0.02f}), true}, {x_zp, true},
                              {w, constant_weights}, {w_scale, true}, {w_zp, true},
                              {f32({}, {0.37f}), true}, {y_zp, true}};
      if (c.bias) in.push_back({random_bias(c.m, seed), true});
      return run_op("QLinearConv", attrs, in, {{c.y_dtype, y_dims}}, 10);
    };
    auto fast = run(true), reference = run(false);
    ASSERT_TRUE(fast.is_ok()) << fast.status().message();
    ASSERT_TRUE(reference.is_ok()) << reference.status().message();
    expect_within_one_step((*fast)[0], (*reference)[0], c.y_dtype,
                           "case with group " + std::to_string(c.group));
    ++seed;
  }
}

// The same for QLinearMatMul: batched A of both dtypes with a zero point, per-tensor and
// per-column B scales, and the bias input a fused Gemm adds.
// An NCHW 4-D tensor's bytes in NHWC order (1-byte elements).
Tensor to_channels_last(const Tensor& t) {
  const auto& d = t.dims();
  Tensor out = Tensor::uninitialized(t.dtype(), d);
  const auto in = t.values<uint8_t>();
  auto o = out.values<uint8_t>();
  size_t at = 0;
  for (int64_t n = 0; n < d[0]; ++n)
    for (int64_t h = 0; h < d[2]; ++h)
      for (int64_t w = 0; w < d[3]; ++w)
        for (int64_t c = 0; c < d[1]; ++c) o[at++] = in[((n * d[1] + c) * d[2] + h) * d[3] + w];
  return out;
}

// With its activation and output kept channels-last by the program (the layout attributes), a
// QLinearConv gives the NCHW result's bytes in NHWC order, on oneDNN's path (constant weights)
// and on the reference loop's (weights given at run time).
TEST(CpuQuant, QLinearConvReadsAndWritesChannelsLast) {
  const Ints x_dims{2, 8, 7, 5}, w_dims{16, 8, 3, 3}, y_dims{2, 16, 7, 5};
  const Tensor x = random_bytes(DType::kU8, x_dims, 3);
  const Tensor w = random_bytes(DType::kI8, w_dims, 4);
  const Tensor w_scale = f32({16}, scales(16, 0.01f));
  const Tensor w_zp = i8({16}, std::vector<int8_t>(16, 0));
  for (bool constant_weights : {true, false}) {
    const auto run = [&](const Tensor& input, bool channels_last) {
      AttributeMap attrs{{"pads", Ints{1, 1, 1, 1}}};
      if (channels_last) {
        attrs["_in_layouts"] = Ints{1};
        attrs["_out_layouts"] = Ints{1};
      }
      const std::vector<OpInput> in{{input},
                                    {f32({}, {0.02f}), true},
                                    {u8({}, {131}), true},
                                    {w, constant_weights},
                                    {w_scale, true},
                                    {w_zp, true},
                                    {f32({}, {0.37f}), true},
                                    {u8({}, {120}), true},
                                    {random_bias(16, 5), true}};
      return run_op("QLinearConv", attrs, in, {{DType::kU8, y_dims}}, 10);
    };
    auto nchw = run(x, false);
    auto nhwc = run(to_channels_last(x), true);
    ASSERT_TRUE(nchw.is_ok()) << nchw.status().message();
    ASSERT_TRUE(nhwc.is_ok()) << nhwc.status().message();
    const Tensor expected = to_channels_last((*nchw)[0]);
    const auto want = expected.values<uint8_t>();
    const auto got = (*nhwc)[0].values<uint8_t>();
    EXPECT_TRUE(std::equal(got.begin(), got.end(), want.begin(), want.end()))
        << (constant_weights ? "oneDNN" : "reference loop");
  }
}

TEST(CpuQuant, QLinearMatMulWithConstantWeightsMatchesTheReferenceLoop) {
  uint32_t seed = 100;
  for (DType a_dtype : {DType::kU8, DType::kI8}) {
    for (bool per_column : {false, true}) {
      for (bool bias : {false, true}) {
        const int64_t k = 37, n = 21;
        const Tensor a = random_bytes(a_dtype, {2, 5, k}, seed++);
        const Tensor b = random_bytes(DType::kI8, {k, n}, seed++);
        const Tensor a_zp = a_dtype == DType::kU8 ? u8({}, {97}) : i8({}, {-20});
        const int64_t b_count = per_column ? n : 1;
        const auto run = [&](bool constant_weights) {
          std::vector<OpInput> in{{a},
                                  {f32({}, {0.03f}), true},
                                  {a_zp, true},
                                  {b, constant_weights},
                                  {f32({b_count}, scales(b_count, 0.004f)), true},
                                  {i8({b_count}, std::vector<int8_t>(static_cast<size_t>(b_count), 0)), true},
                                  {f32({}, {0.11f}), true},
                                  {u8({}, {128}), true}};
          if (bias) in.push_back({random_bias(n, seed), true});
          return run_op("QLinearMatMul", {}, in, {{DType::kU8, {2, 5, n}}}, 10);
        };
        auto fast = run(true), reference = run(false);
        ASSERT_TRUE(fast.is_ok()) << fast.status().message();
        ASSERT_TRUE(reference.is_ok()) << reference.status().message();
        expect_within_one_step((*fast)[0], (*reference)[0], DType::kU8,
                               std::string(dtype_name(a_dtype)) + " per column " +
                                   std::to_string(per_column) + " bias " + std::to_string(bias));
      }
    }
  }
}

// Empty sums with constant weights (K = 0) stay out of oneDNN, which divides by zero-size dims:
// every output is the zero point (plus the bias).
TEST(CpuQuant, QLinearMatMulWithEmptyConstantWeightsGivesTheZeroPoint) {
  auto y = run_op("QLinearMatMul", {},
                  {{u8({2, 0}, {})},
                   {f32({}, {0.5f}), true},
                   {u8({}, {3}), true},
                   {i8({0, 3}, {}), true},
                   {f32({}, {0.25f}), true},
                   {i8({}, {0}), true},
                   {f32({}, {1.0f}), true},
                   {u8({}, {7}), true}},
                  {{DType::kU8, {2, 3}}}, 10);
  ASSERT_TRUE(y.is_ok()) << y.status().message();
  EXPECT_EQ(ints_of<uint8_t>((*y)[0]), (std::vector<int>(6, 7)));
}

// hsched.QdqBinary (the QDQ fusion's Add/Mul) against its three ops' float operations, on a
// tensor longer than the kernel's blocks: b a row shorter than a block (repeated), a suffix
// longer than a block (repeated, f32 and 8-bit), as long as a (f32 and 8-bit), one value.
TEST(CpuQuant, QdqBinaryMatchesDequantizeOpQuantize) {
  const Ints a_dims{3, 4, 500};
  const Tensor a = random_bytes(DType::kU8, a_dims, 21);
  const float a_scale = 0.03f, b_scale = 0.02f, y_scale = 0.05f;
  const int a_zp = 120, b_zp = -3, y_zp = 128;
  const auto random_floats = [](const Ints& dims, uint32_t seed) {
    Tensor t = Tensor::uninitialized(DType::kF32, dims);
    for (float& v : t.values<float>()) {
      seed = seed * 1664525u + 1013904223u;
      v = static_cast<float>(seed >> 8) / static_cast<float>(1u << 24) * 8.0f - 4.0f;
    }
    return t;
  };
  struct Case {
    Tensor b;
    bool add;
  };
  const std::vector<Case> cases = {{random_floats({500}, 1), true},
                                   {random_floats({4, 500}, 2), false},
                                   {random_floats(a_dims, 3), true},
                                   {random_bytes(DType::kI8, a_dims, 4), true},
                                   {random_floats({}, 5), false},
                                   {random_bytes(DType::kI8, {4, 500}, 6), false}};
  for (const Case& c : cases) {
    const bool b_float = c.b.dtype() == DType::kF32;
    std::vector<OpInput> in{{a}, {f32({}, {a_scale}), true}, {u8({}, {static_cast<uint8_t>(a_zp)}), true},
                            {c.b}};
    if (b_float) {
      in.push_back({Tensor(), false, true});
      in.push_back({Tensor(), false, true});
    } else {
      in.push_back({f32({}, {b_scale}), true});
      in.push_back({i8({}, {static_cast<int8_t>(b_zp)}), true});
    }
    in.push_back({f32({}, {y_scale}), true});
    in.push_back({u8({}, {static_cast<uint8_t>(y_zp)}), true});
    auto got = run_op("hsched.QdqBinary", {{"op", std::string(c.add ? "Add" : "Mul")}}, in,
                      {{DType::kU8, a_dims}}, 10);
    ASSERT_TRUE(got.is_ok()) << got.status().message();
    const auto av = a.values<uint8_t>();
    const auto y = (*got)[0].values<uint8_t>();
    const int64_t b_count = c.b.elements();
    for (size_t i = 0; i < av.size(); ++i) {
      const auto k = static_cast<size_t>(static_cast<int64_t>(i) % b_count);
      const float fa = static_cast<float>(int32_t{av[i]} - a_zp) * a_scale;
      const float fb = b_float ? c.b.values<float>()[k]
                               : static_cast<float>(int32_t{c.b.values<int8_t>()[k]} - b_zp) * b_scale;
      const float r = std::nearbyint((c.add ? fa + fb : fa * fb) / y_scale);
      const int want = std::clamp(static_cast<int>(r) + y_zp, 0, 255);
      ASSERT_EQ(int{y[i]}, want) << "b of " << b_count << " values, element " << i;
    }
  }
}

}  // namespace
}  // namespace hsched::cpu::test
