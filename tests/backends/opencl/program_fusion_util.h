// The fixture of the ClProgram fusion tests (program_fusion_test.cpp,
// program_transformer_test.cpp): a graph of fused steps compiled on the first OpenCL device
// (PoCL in CI; skipped, not passed, without one) against the CPU backend.
#pragma once

#include <cmath>
#include <memory>

#include <gtest/gtest.h>

#include "backends/cpu/program.h"
#include "backends/opencl/program.h"
#include "opencl_test_util.h"
#include "support/temp_dir.h"

namespace hsched::opencl::fusion_test {

// A graph of fused steps (x its one input) against the CPU: compiled in `storage`, `kernels`
// steps with `fused` nodes absorbed, every output of `runs` runs (the third replays) within
// atol + rtol |cpu|.
struct Fused {
  int kernels = 0;
  int fused = 0;
};
inline void expect_fused_matches_cpu(const Graph& graph,
                                     const std::shared_ptr<DeviceRuntime>& runtime,
                                     const std::vector<Tensor>& inputs, Storage storage, Fused want,
                                     double atol, double rtol, int runs = 1) {
  auto cpu = cpu::CpuProgram::compile(graph, {});
  ASSERT_TRUE(cpu.is_ok()) << cpu.status().message();
  auto expected = (*cpu)->run(inputs);
  ASSERT_TRUE(expected.is_ok()) << expected.status().message();
  auto program = ClProgram::compile(graph, runtime, storage, 300000);
  ASSERT_TRUE(program.is_ok()) << program.status().message();
  EXPECT_EQ((*program)->stats().kernels, want.kernels);
  EXPECT_EQ((*program)->stats().fused_epilogues, want.fused);
  for (int run = 0; run < runs; ++run) {
    auto got = (*program)->run(inputs);
    ASSERT_TRUE(got.is_ok()) << got.status().message();
    for (size_t o = 0; o < got->size(); ++o) {
      const auto g = (*got)[o].values<float>();
      const auto w = (*expected)[o].values<float>();
      for (size_t i = 0; i < g.size(); ++i) {
        ASSERT_NEAR(g[i], w[i], atol + rtol * std::abs(w[i]))
            << graph.value(graph.outputs()[o]).name << "[" << i << "], " << storage_bytes(storage)
            << "-byte storage, run " << run;
      }
    }
  }
}

inline void expect_fused_matches_cpu(const Graph& graph,
                                     const std::shared_ptr<DeviceRuntime>& runtime, const Tensor& x,
                                     Storage storage, Fused want, double atol, double rtol,
                                     int runs = 1) {
  expect_fused_matches_cpu(graph, runtime, std::vector<Tensor>{x}, storage, want, atol, rtol, runs);
}

// The first OpenCL device's runtime, once for the suite; skipped without a device.
class ClFusionTest : public opencl_test::SuiteRuntimeTest {};

}  // namespace hsched::opencl::fusion_test
