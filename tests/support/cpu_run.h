// Runs an imported graph on the CPU backend, for tests that check what a rewritten graph computes.
#pragma once

#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cpu/program.h"
#include "graph/graph.h"

namespace hsched::test {

// The outputs of one run, or none (the failure recorded) when the graph does not compile or run.
inline std::vector<Tensor> run_on_cpu(const Graph& graph, const std::vector<Tensor>& inputs) {
  auto program = cpu::CpuProgram::compile(graph, {});
  EXPECT_TRUE(program.is_ok()) << program.status().message();
  if (!program.is_ok()) return {};
  auto outputs = (*program)->run(inputs);
  EXPECT_TRUE(outputs.is_ok()) << outputs.status().message();
  return outputs.is_ok() ? std::move(outputs).value() : std::vector<Tensor>{};
}

}  // namespace hsched::test
