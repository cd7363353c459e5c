// What the ClProgram tests of program_test.cpp and program_qdq_test.cpp share: their fixture and
// the CPU's outputs to compare against.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "opencl_test_util.h"
#include "support/cpu_run.h"

namespace hsched::opencl::program_test {

// The CPU program's outputs for `inputs` (empty, with a failure added, where it fails).
using test::run_on_cpu;

// A u8 tensor of `dims` whose element k is k * step mod 256: every byte value, scattered.
inline Tensor u8_ramp(std::vector<int64_t> dims, size_t step) {
  Tensor t(DType::kU8, std::move(dims));
  auto bytes = t.values<uint8_t>();
  for (size_t k = 0; k < bytes.size(); ++k) bytes[k] = static_cast<uint8_t>(k * step % 256);
  return t;
}

// i8 outputs against the CPU's: a step apart at most, on at most one element in `rarely`, and
// not mostly saturated (a saturated case would test little).
inline void expect_a_step_apart(const Tensor& got, const Tensor& want, int rarely,
                                const std::string& where) {
  const auto g = got.values<int8_t>();
  const auto w = want.values<int8_t>();
  ASSERT_EQ(g.size(), w.size()) << where;
  int worst = 0, off = 0, clamped = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    worst = std::max(worst, std::abs(g[i] - w[i]));
    off += g[i] != w[i];
    clamped += w[i] == -128 || w[i] == 127;
  }
  EXPECT_LE(worst, 1) << where;
  EXPECT_LE(off, static_cast<int>(g.size()) / rarely) << where;
  EXPECT_LT(clamped, static_cast<int>(g.size()) / 4) << where << ": mostly saturated";
}

// The first OpenCL device's runtime, once for the suite (program_test.cpp and
// program_qdq_test.cpp); skipped without a device.
class ClProgramTest : public opencl_test::SuiteRuntimeTest {};

}  // namespace hsched::opencl::program_test
