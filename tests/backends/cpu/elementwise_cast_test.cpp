// Conformance of Cast (f16/bf16 rounding, integer, bool and float conversions) and of the shape
// ops (Shape, Size, ConstantOfShape, Range, Dropout) against plain references.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cpu/elementwise_test_util.h"

namespace hsched::cpu::test {
namespace {

// --- Cast ---------------------------------------------------------------------------------------

Tensor cast(const Tensor& x, DType to) {
  return run1("Cast", {{"to", int64_t{dtype_to_onnx(to)}}}, {{x}}, to, x.dims());
}

TEST(ElementwiseCast, HalfConversionIsIeeeRoundToNearestEven) {
  // Every f16 pattern widens exactly.
  std::vector<uint16_t> all(65536);
  for (uint32_t i = 0; i < 65536; ++i) all[i] = static_cast<uint16_t>(i);
  const Tensor wide = cast(make<uint16_t>(DType::kF16, {65536}, all), DType::kF32);
  std::vector<float> values;  // finite halves, their midpoints and neighbours of those
  for (uint32_t i = 0; i < 65536; ++i) {
    const float w = wide.values<float>()[i];
    if ((i & 0x7c00u) == 0x7c00u) {
      EXPECT_TRUE(std::isnan(w) == ((i & 0x3ffu) != 0)) << i;
      if ((i & 0x3ffu) == 0) {
        EXPECT_EQ(w, (i & 0x8000u) ? -kInf : kInf);
      }
      continue;
    }
#ifdef __FLT16_MAX__
    EXPECT_EQ(w, static_cast<float>(std::bit_cast<_Float16>(static_cast<uint16_t>(i)))) << i;
#endif
    values.push_back(w);
    const uint16_t next_bits = static_cast<uint16_t>(i + 1);
    if ((next_bits & 0x7c00u) != 0x7c00u && (next_bits & 0x7fffu) != 0) {
      const float next = wide.values<float>()[next_bits];
      const float mid = static_cast<float>((static_cast<double>(w) + next) / 2);
      values.push_back(mid);
      values.push_back(std::nextafter(mid, kInf));
      values.push_back(std::nextafter(mid, -kInf));
    }
  }
  for (float v : {65504.0f, 65519.0f, 65520.0f, 1e6f, kInf, -kInf, 1e-8f, 2.98e-8f, 2.99e-8f}) {
    values.push_back(v);
    values.push_back(-v);
  }
  const auto n = static_cast<int64_t>(values.size());
  const Tensor narrow = cast(f32({n}, values), DType::kF16);
#ifdef __FLT16_MAX__
  for (int64_t i = 0; i < n; ++i) {
    const auto expected = std::bit_cast<uint16_t>(static_cast<_Float16>(values[i]));
    ASSERT_EQ(narrow.values<uint16_t>()[i], expected) << values[i];
  }
#endif
  // Known patterns, independent of the compiler's _Float16.
  const Tensor known =
      cast(f32({6}, {1.0f, -2.0f, 65504.0f, 65520.0f, 5.9604645e-8f, kNaN}), DType::kF16);
  const std::vector<uint16_t> bits = {0x3c00, 0xc000, 0x7bff, 0x7c00, 0x0001};
  for (size_t i = 0; i < bits.size(); ++i) EXPECT_EQ(known.values<uint16_t>()[i], bits[i]) << i;
  EXPECT_EQ(known.values<uint16_t>()[5] & 0x7c00u, 0x7c00u);
  EXPECT_NE(known.values<uint16_t>()[5] & 0x3ffu, 0u);
}

TEST(ElementwiseCast, BetweenIntegerBoolAndFloatTypes) {
  const Tensor x = f32({8}, {-2.7f, -0.5f, 0.0f, 0.5f, 2.7f, 300.0f, kNaN, -1.0f});
  EXPECT_TRUE(all_close(cast(x, DType::kI64), i64({8}, {-2, 0, 0, 0, 2, 300, 0, -1})));
  EXPECT_TRUE(all_close(cast(x, DType::kI32),
                        make<int32_t>(DType::kI32, {8}, {-2, 0, 0, 0, 2, 300, 0, -1})));
  EXPECT_TRUE(all_close(cast(x, DType::kU8),
                        make<uint8_t>(DType::kU8, {8}, {254, 0, 0, 0, 2, 44, 0, 255})));
  EXPECT_TRUE(
      all_close(cast(x, DType::kBool), make<uint8_t>(DType::kBool, {8}, {1, 1, 0, 1, 1, 1, 1, 1})));
  const Tensor mask = make<uint8_t>(DType::kBool, {3}, {1, 0, 1});
  EXPECT_TRUE(all_close(cast(mask, DType::kF32), f32({3}, {1.0f, 0.0f, 1.0f})));
  EXPECT_TRUE(all_close(cast(mask, DType::kI64), i64({3}, {1, 0, 1})));
  const Tensor big = i64({3}, {int64_t{1} << 33 | 5, -7, 0});
  EXPECT_TRUE(all_close(cast(big, DType::kI32), make<int32_t>(DType::kI32, {3}, {5, -7, 0})));
  EXPECT_TRUE(all_close(cast(big, DType::kBool), make<uint8_t>(DType::kBool, {3}, {1, 1, 0})));
  const Tensor ints = random_i64({100003}, 41, -100000, 100000);
  EXPECT_TRUE(all_close(cast(cast(ints, DType::kF32), DType::kI64), ints));
  EXPECT_TRUE(all_close(cast(cast(ints, DType::kI32), DType::kI64), ints));
  const Tensor r = random_f32({33}, 42, -100.0f, 100.0f);
  EXPECT_TRUE(all_close(cast(cast(r, DType::kBF16), DType::kF32), r, 0, 1.0 / 256));
  EXPECT_TRUE(all_close(cast(cast(r, DType::kF16), DType::kF32), r, 0, 1.0 / 2048));
  EXPECT_EQ(cast(f32({2}, {1.0f, 1.00390625f}), DType::kBF16).values<uint16_t>()[1], 0x3f80)
      << "ties round to even";
  EXPECT_TRUE(
      all_close(cast(Tensor(DType::kF32, {0, 3}), DType::kI64), Tensor(DType::kI64, {0, 3})));
  const Status to_string = run_status("Cast", {{"to", int64_t{8}}}, {{x}}, DType::kF32, {8});
  EXPECT_EQ(to_string.code(), ErrorCode::kUnimplemented);
  EXPECT_NE(to_string.message().find("STRING"), std::string::npos) << to_string.message();
}

TEST(ElementwiseCast, DoubleConvertsInDoubleWithoutUndefinedBehaviour) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor x = make<double>(DType::kF64, {6}, {1.5, -2.9, 0.1, 1e300, nan, std::ldexp(0.75, 64)});
  const Tensor to_f32 = cast(x, DType::kF32);
  const std::vector<float> f = {1.5f, -2.9f, 0.1f, kInf, kNaN, std::ldexp(0.75f, 64)};
  for (size_t i = 0; i < f.size(); ++i) {
    if (std::isnan(f[i])) {
      EXPECT_TRUE(std::isnan(to_f32.values<float>()[i]));
    } else {
      EXPECT_EQ(to_f32.values<float>()[i], f[i]) << i;
    }
  }
  const Tensor to_i64 = cast(x, DType::kI64);
  const std::vector<int64_t> ints = {1, -2, 0, std::numeric_limits<int64_t>::max(), 0,
                                     std::numeric_limits<int64_t>::max()};
  for (size_t i = 0; i < ints.size(); ++i) EXPECT_EQ(to_i64.values<int64_t>()[i], ints[i]) << i;
  // u64 takes [2^63, 2^64) as it is: 0.75 * 2^64.
  EXPECT_EQ(cast(x, DType::kU64).values<uint64_t>()[5], uint64_t{13835058055282163712u});
  EXPECT_EQ(cast(x, DType::kF16).values<uint16_t>()[0], 0x3e00u);  // 1.5
  // f32 widens exactly; 0.1f is not 0.1.
  const Tensor wide = cast(f32({2}, {0.1f, -kInf}), DType::kF64);
  EXPECT_EQ(wide.values<double>()[0], static_cast<double>(0.1f));
  EXPECT_EQ(wide.values<double>()[1], -std::numeric_limits<double>::infinity());
  EXPECT_EQ(cast(make<uint16_t>(DType::kBF16, {1}, {0x3fc0}), DType::kF64).values<double>()[0], 1.5);
  // f64 math stays in double: 1 + 2^-40 survives the round trip through a cast.
  const double fine = 1.0 + std::ldexp(1.0, -40);
  const Tensor same = cast(cast(make<double>(DType::kF64, {1}, {fine}), DType::kF64), DType::kF64);
  EXPECT_EQ(same.values<double>()[0], fine);
}

TEST(ElementwiseCast, WideUnsignedAndShortIntegersWrapLikeNumpy) {
  const Tensor u64 = make<uint64_t>(DType::kU64, {2}, {18446744073709551615u, 3});
  EXPECT_EQ(cast(u64, DType::kF64).values<double>()[0], 18446744073709551616.0);  // not -1
  EXPECT_EQ(cast(u64, DType::kF32).values<float>()[0], 18446744073709551616.0f);
  EXPECT_EQ(cast(u64, DType::kI64).values<int64_t>()[0], -1);
  EXPECT_EQ(cast(u64, DType::kU16).values<uint16_t>()[0], 65535);
  const Tensor i16 = make<int16_t>(DType::kI16, {3}, {-1, 32767, -32768});
  const Tensor as_u16 = cast(i16, DType::kU16);
  EXPECT_EQ(as_u16.values<uint16_t>()[0], 65535);
  EXPECT_EQ(as_u16.values<uint16_t>()[2], 32768);
  EXPECT_EQ(cast(as_u16, DType::kI16).values<int16_t>()[0], -1);
  EXPECT_EQ(cast(i16, DType::kU32).values<uint32_t>()[0], 4294967295u);
  EXPECT_EQ(cast(i16, DType::kF64).values<double>()[2], -32768.0);
  const Tensor u32 = make<uint32_t>(DType::kU32, {1}, {4294967295u});
  EXPECT_EQ(cast(u32, DType::kI64).values<int64_t>()[0], 4294967295);
  EXPECT_EQ(cast(u32, DType::kI32).values<int32_t>()[0], -1);
  EXPECT_EQ(cast(make<uint8_t>(DType::kBool, {1}, {1}), DType::kU64).values<uint64_t>()[0], 1u);
  EXPECT_EQ(cast(f32({2}, {-1.0f, 70000.0f}), DType::kU16).values<uint16_t>()[0], 65535);
}

// --- Shape, Size, ConstantOfShape, Range, Dropout ------------------------------------------------

TEST(ElementwiseShapeOps, ShapeSizeConstantOfShape) {
  const Tensor x(DType::kF32, {2, 3, 5, 7});
  EXPECT_TRUE(all_close(run1("Shape", {}, {{x}}, DType::kI64, {4}), i64({4}, {2, 3, 5, 7})));
  EXPECT_TRUE(all_close(
      run1("Shape", {{"start", int64_t{1}}, {"end", int64_t{-1}}}, {{x}}, DType::kI64, {2}),
      i64({2}, {3, 5})));
  EXPECT_TRUE(all_close(run1("Shape", {{"start", int64_t{-10}}}, {{x}}, DType::kI64, {4}),
                        i64({4}, {2, 3, 5, 7})));
  EXPECT_TRUE(all_close(run1("Size", {}, {{x}}, DType::kI64, {}), i64({}, {210})));
  EXPECT_TRUE(
      all_close(run1("Size", {}, {{Tensor(DType::kF32, {0, 3})}}, DType::kI64, {}), i64({}, {0})));

  const Tensor shape = i64({2}, {3, 4});
  EXPECT_TRUE(all_close(run1("ConstantOfShape", {}, {{shape}}, DType::kF32, {3, 4}),
                        Tensor(DType::kF32, {3, 4})));
  const AttributeMap seven = {{"value", i64({1}, {7})}};
  Tensor sevens(DType::kI64, {3, 4});
  for (int64_t& v : sevens.values<int64_t>()) v = 7;
  EXPECT_TRUE(all_close(run1("ConstantOfShape", seven, {{shape}}, DType::kI64, {3, 4}), sevens));
  EXPECT_TRUE(all_close(run1("ConstantOfShape", {{"value", f32({1}, {0.5f})}}, {{i64({2}, {0, 4})}},
                             DType::kF32, {0, 4}),
                        Tensor(DType::kF32, {0, 4})));
  EXPECT_FALSE(run_status("ConstantOfShape", seven, {{shape}}, DType::kF32, {3, 4}).is_ok());
}

TEST(ElementwiseShapeOps, RangeOfEachDtype) {
  EXPECT_TRUE(all_close(
      run1("Range", {}, {{i64({}, {10})}, {i64({}, {-3})}, {i64({}, {-4})}}, DType::kI64, {4}),
      i64({4}, {10, 6, 2, -2})));
  EXPECT_TRUE(all_close(run1("Range", {}, {{f32({}, {0.5f})}, {f32({}, {2.0f})}, {f32({}, {0.4f})}},
                             DType::kF32, {4}),
                        f32({4}, {0.5f, 0.9f, 1.3f, 1.7f})));
  const Tensor r32 = run1("Range", {},
                          {{make<int32_t>(DType::kI32, {}, {0})},
                           {make<int32_t>(DType::kI32, {}, {100003})},
                           {make<int32_t>(DType::kI32, {}, {1})}},
                          DType::kI32, {100003});
  EXPECT_EQ(r32.values<int32_t>()[100002], 100002);
  EXPECT_TRUE(all_close(
      run1("Range", {}, {{i64({}, {5})}, {i64({}, {1})}, {i64({}, {1})}}, DType::kI64, {0}),
      Tensor(DType::kI64, {0})));
  // Inputs that disagree with the planned length, or a zero delta, are refused.
  EXPECT_EQ(
      run_status("Range", {}, {{i64({}, {0})}, {i64({}, {9})}, {i64({}, {1})}}, DType::kI64, {4})
          .code(),
      ErrorCode::kInvalidArgument);
  EXPECT_EQ(
      run_status("Range", {}, {{i64({}, {0})}, {i64({}, {0})}, {i64({}, {0})}}, DType::kI64, {0})
          .code(),
      ErrorCode::kInvalidArgument);
}

TEST(ElementwiseShapeOps, DropoutIsIdentityWithTrueMask) {
  const Tensor x = random_f32({3, 33}, 51);
  auto result = run_op("Dropout", {}, {{x}, {f32({}, {0.3f})}},
                       {{DType::kF32, {3, 33}}, {DType::kBool, {3, 33}}});
  ASSERT_TRUE(result.is_ok()) << result.status().message();
  EXPECT_TRUE(all_close(result.value()[0], x));
  for (uint8_t m : result.value()[1].values<uint8_t>()) EXPECT_EQ(m, 1);
  const Status training = run_status(
      "Dropout", {}, {{x}, {f32({}, {0.3f})}, {make<uint8_t>(DType::kBool, {}, {1}), true}},
      DType::kF32, {3, 33});
  EXPECT_EQ(training.code(), ErrorCode::kUnimplemented);
}

}  // namespace
}  // namespace hsched::cpu::test
