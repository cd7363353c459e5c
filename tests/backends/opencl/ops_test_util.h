// The op layer's test fixture (ops_test.cpp, ops_conv_test.cpp): the first OpenCL device in
// both storages, random values, downloads, and the storage's tolerance. Its parameterized suite
// is instantiated once, in ops_test.cpp.
#pragma once

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/opencl/kernels/ops.h"
#include "backends/opencl/opencl_test_util.h"

namespace hsched::opencl {

inline int64_t count_of(const Shape& shape) {
  int64_t count = 1;
  for (int64_t dim : shape) count *= dim;
  return count;
}

inline std::vector<float> random_values(int64_t count, float low, float high, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(low, high);
  std::vector<float> values(static_cast<size_t>(count));
  for (float& v : values) v = dist(rng);
  return values;
}

// The op layer on the first device in both storages (opencl_test_util.h's StorageTest).
class OpenClOpsTest : public opencl_test::StorageTest {
 protected:
  // What the device sees of `values`: rounded to fp16 with fp16 storage.
  std::vector<float> stored(std::vector<float> values) const {
    for (float& v : values) v = round(v);
    return values;
  }
  cl::Buffer output(int64_t count) { return upload(std::vector<float>(count, NAN)); }
  using StorageTest::download;
  // Waits for `event`, then reads `count` elements back as floats.
  std::vector<float> download(const Result<cl::Event>& event, const cl::Buffer& buffer,
                              int64_t count) {
    EXPECT_TRUE(event.is_ok()) << event.status().message();
    if (!event.is_ok()) return {};
    EXPECT_EQ(event->wait(), CL_SUCCESS);
    return download(buffer, count);
  }

  void expect_close(const std::vector<float>& got, const std::vector<float>& want,
                    const std::string& what) const {
    ASSERT_EQ(got.size(), want.size()) << what;
    const float abs_tol = half() ? 5e-2f : 1e-4f;
    const float rel_tol = half() ? 5e-2f : 1e-3f;
    int failures = 0;
    for (size_t i = 0; i < got.size() && failures < 5; ++i) {
      if (!(std::fabs(got[i] - want[i]) <= abs_tol + rel_tol * std::fabs(want[i]))) {
        ADD_FAILURE() << what << " [" << i << "]: got " << got[i] << ", want " << want[i];
        ++failures;
      }
    }
  }
};

}  // namespace hsched::opencl
