// Shared by the data-movement conformance tests (layout_test.cpp, pad_resize_test.cpp): value
// patterns for any dtype and the index-mapping reference every op is checked against.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <random>

#include "backends/cpu/op_test_util.h"

namespace hsched::cpu::test {

using Index = std::vector<int64_t>;
using Source = std::function<std::optional<Index>(const Index&)>;

inline int64_t count(const std::vector<int64_t>& dims) {
  return std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<>());
}

// Distinct values per element, for any dtype: f32 gets small exact floats, bool 0/1, the rest
// pseudo-random bytes (data movement must not care what they mean).
inline Tensor pattern(DType dtype, std::vector<int64_t> dims, uint32_t seed = 1) {
  Tensor t(dtype, std::move(dims));
  const int64_t n = t.elements();
  if (dtype == DType::kF32) {
    auto v = t.values<float>();
    for (int64_t i = 0; i < n; ++i)
      v[static_cast<size_t>(i)] = static_cast<float>(i % 4099) * 0.25f + static_cast<float>(seed);
  } else if (dtype == DType::kBool) {
    auto v = t.values<uint8_t>();
    for (int64_t i = 0; i < n; ++i)
      v[static_cast<size_t>(i)] = static_cast<uint8_t>(((i * 7 + seed) / 3) % 2);
  } else {
    std::mt19937 rng(seed);
    for (size_t b = 0; b < t.byte_size(); ++b) t.raw()[b] = static_cast<std::byte>(rng());
  }
  return t;
}

// The reference for every op here: output element at multi-index `o` is the input element at
// source(o), or `fill` (one element's bytes) when source returns nullopt.
inline Tensor reference(const Tensor& in, const std::vector<int64_t>& out_dims, const Source& source,
                 const std::vector<std::byte>& fill = {}) {
  Tensor out(in.dtype(), out_dims);
  const size_t elem = dtype_size(in.dtype());
  const auto in_strides = [&] {
    std::vector<int64_t> s(in.dims().size(), 1);
    for (size_t i = s.size(); i-- > 1;) s[i - 1] = s[i] * in.dims()[i];
    return s;
  }();
  Index index(out_dims.size(), 0);
  for (int64_t e = 0; e < out.elements(); ++e) {
    const auto src = source(index);
    std::byte* dst = out.raw() + static_cast<size_t>(e) * elem;
    if (src) {
      int64_t off = 0;
      for (size_t a = 0; a < src->size(); ++a) {
        EXPECT_TRUE((*src)[a] >= 0 && (*src)[a] < in.dims()[a]) << "reference out of range";
        off += (*src)[a] * in_strides[a];
      }
      std::memcpy(dst, in.raw() + static_cast<size_t>(off) * elem, elem);
    } else {
      std::memcpy(dst, fill.data(), elem);
    }
    for (size_t a = out_dims.size(); a-- > 0;) {
      if (++index[a] < out_dims[a]) break;
      index[a] = 0;
    }
  }
  return out;
}

// Runs a one-output op and returns its output, failing the test on an error.
inline Tensor run1(const std::string& op, const AttributeMap& attrs, const std::vector<OpInput>& inputs,
            DType dtype, const std::vector<int64_t>& out_dims, int64_t opset = 17) {
  auto result = run_op(op, attrs, inputs, {{dtype, out_dims}}, opset);
  EXPECT_TRUE(result.is_ok()) << result.status().message();
  if (!result.is_ok()) return Tensor(dtype, out_dims);
  return std::move(result.value()[0]);
}

inline constexpr DType kAllTypes[] = {DType::kF32, DType::kI64, DType::kI32, DType::kBool,
                           DType::kU8,  DType::kI8,  DType::kF16};

}  // namespace hsched::cpu::test
