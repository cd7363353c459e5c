#include "op_test_util.h"

#include <random>

namespace hsched::cpu::test {

Tensor random_f32(std::vector<int64_t> dims, uint32_t seed, float lo, float hi) {
  Tensor t(DType::kF32, std::move(dims));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (float& v : t.values<float>()) v = dist(rng);
  return t;
}

::testing::AssertionResult all_close(const Tensor& actual, const Tensor& expected, double atol,
                                     double rtol) {
  if (actual.dims() != expected.dims()) {
    return ::testing::AssertionFailure() << "shape " << actual.shape().to_string() << " vs "
                                         << expected.shape().to_string();
  }
  if (actual.dtype() != expected.dtype()) {
    return ::testing::AssertionFailure() << "dtype " << dtype_name(actual.dtype()) << " vs "
                                         << dtype_name(expected.dtype());
  }
  if (actual.dtype() != DType::kF32) {
    if (actual.byte_size() == 0 ||
        std::memcmp(actual.raw(), expected.raw(), actual.byte_size()) == 0) {
      return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure() << "non-float values differ";
  }
  const auto a = actual.values<float>();
  const auto b = expected.values<float>();
  double worst = 0;
  size_t worst_at = 0;
  bool ok = true;
  for (size_t i = 0; i < a.size(); ++i) {
    const double err = std::fabs(static_cast<double>(a[i]) - b[i]);
    const double allowed = atol + rtol * std::fabs(b[i]);
    if (!(err <= allowed)) {
      ok = false;
      if (!(err <= worst)) {
        worst = err;
        worst_at = i;
      }
    }
  }
  if (ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "worst element " << worst_at << ": " << a[worst_at]
                                       << " vs " << b[worst_at] << " (|diff| " << worst << ")";
}

}  // namespace hsched::cpu::test
