// Helpers the elementwise conformance tests share (elementwise_test.cpp,
// elementwise_cast_test.cpp).
#pragma once

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/op_test_util.h"

namespace hsched::cpu::test {

using Dims = std::vector<int64_t>;
inline constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
inline constexpr float kInf = std::numeric_limits<float>::infinity();

template <typename T>
inline Tensor make(DType dtype, const Dims& dims, const std::vector<T>& values) {
  return Tensor::from_vector(dtype, dims, values);
}

inline Tensor random_i64(const Dims& dims, uint32_t seed, int64_t lo, int64_t hi) {
  Tensor t(DType::kI64, dims);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> dist(lo, hi);
  for (int64_t& v : t.values<int64_t>()) v = dist(rng);
  return t;
}

inline Tensor random_bool(const Dims& dims, uint32_t seed) {
  Tensor t(DType::kBool, dims);
  std::mt19937 rng(seed);
  for (uint8_t& v : t.values<uint8_t>()) v = static_cast<uint8_t>(rng() & 1u);
  return t;
}

// Runs `op` expecting success and one output.
inline Tensor run1(const std::string& op, const AttributeMap& attrs,
                   const std::vector<OpInput>& inputs, DType out_dtype, const Dims& out_dims,
                   int64_t opset = 17) {
  auto result = run_op(op, attrs, inputs, {{out_dtype, out_dims}}, opset);
  EXPECT_TRUE(result.is_ok()) << op << ": " << result.status().message();
  if (!result.is_ok()) return Tensor(out_dtype, out_dims);
  return result.value()[0];
}

inline Status run_status(const std::string& op, const AttributeMap& attrs,
                         const std::vector<OpInput>& inputs, DType out_dtype, const Dims& out_dims,
                         int64_t opset = 17) {
  auto result = run_op(op, attrs, inputs, {{out_dtype, out_dims}}, opset);
  return result.is_ok() ? Status::ok() : result.status();
}

}  // namespace hsched::cpu::test
