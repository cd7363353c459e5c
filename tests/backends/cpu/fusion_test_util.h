// What the CPU program's fusion tests (fusion_test.cpp, int8_fusion_test.cpp) share: the
// activation shape of their small models and the comparison with the program run unfused.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cpu/program.h"
#include "op_test_util.h"

namespace hsched::cpu::test {

inline constexpr int64_t kChannels = 8, kGroups = 4, kSize = 6;

// Compiles `graph` unfused in NCHW and with `options`, runs both on `inputs` and expects the
// same first output. Returns the optimised program (null on failure) for checks of its stats.
inline std::unique_ptr<CpuProgram> expect_matches_unfused(const Graph& graph,
                                                          const std::vector<Tensor>& inputs,
                                                          CpuOptions options = {2, true, true},
                                                          double tolerance = 1e-4) {
  auto plain = CpuProgram::compile(graph, CpuOptions{2, false, false});
  auto fused = CpuProgram::compile(graph, options);
  EXPECT_TRUE(plain.is_ok()) << plain.status().message();
  EXPECT_TRUE(fused.is_ok()) << fused.status().message();
  if (!plain.is_ok() || !fused.is_ok()) return nullptr;
  auto want = (*plain)->run(inputs);
  auto got = (*fused)->run(inputs);
  EXPECT_TRUE(want.is_ok()) << want.status().message();
  EXPECT_TRUE(got.is_ok()) << got.status().message();
  if (want.is_ok() && got.is_ok()) {
    EXPECT_TRUE(all_close(got->at(0), want->at(0), tolerance, tolerance));
  }
  return std::move(fused).value();
}

}  // namespace hsched::cpu::test
