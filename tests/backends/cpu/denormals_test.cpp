// Subnormal floats on the CPU: flushed to zero by default on every thread a program uses (the
// host thread, the OpenMP team its kernels and oneDNN run on, its oneTBB arena), computed as
// IEEE with CpuOptions::flush_denormals off; the caller's own thread keeps its mode either way.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cpu/denormals.h"
#include "backends/cpu/program.h"

namespace hsched::cpu {
namespace {

constexpr float kSubnormal = 1e-40f;
static_assert(kSubnormal < std::numeric_limits<float>::min());

// y = x * twos (elementwise, wide enough for the TBB workers) and z = a @ identity (oneDNN).
Graph subnormal_graph(int64_t width, int64_t n) {
  Graph graph;
  const ValueId x = graph.add_value("x", DType::kF32, Shape({1, width}));
  graph.add_input(x);
  const ValueId twos = graph.add_constant(
      "twos", Tensor::from_vector(DType::kF32, {1, width},
                                  std::vector<float>(static_cast<size_t>(width), 2.0f)));
  const ValueId y = graph.add_value("y", DType::kF32, Shape({1, width}));
  Node mul;
  mul.name = "mul";
  mul.op_type = "Mul";
  mul.inputs = {x, twos};
  mul.outputs = {y};
  graph.add_node(mul);
  graph.add_output(y);

  const ValueId a = graph.add_value("a", DType::kF32, Shape({n, n}));
  graph.add_input(a);
  std::vector<float> identity(static_cast<size_t>(n * n), 0.0f);
  for (int64_t i = 0; i < n; ++i) identity[static_cast<size_t>(i * n + i)] = 1.0f;
  const ValueId eye = graph.add_constant("eye", Tensor::from_vector(DType::kF32, {n, n}, identity));
  const ValueId z = graph.add_value("z", DType::kF32, Shape({n, n}));
  Node matmul;
  matmul.name = "matmul";
  matmul.op_type = "MatMul";
  matmul.inputs = {a, eye};
  matmul.outputs = {z};
  graph.add_node(matmul);
  graph.add_output(z);
  return graph;
}

// How many elements of each output are still subnormal.
std::vector<int64_t> run_subnormals(bool flush) {
  constexpr int64_t kWidth = 1 << 18;  // several TBB chunks (kParallelGrain 32768)
  constexpr int64_t kN = 256;          // a oneDNN matmul that spreads over the team
  const Graph graph = subnormal_graph(kWidth, kN);
  CpuOptions options;
  options.flush_denormals = flush;
  auto program = CpuProgram::compile(graph, options);
  EXPECT_TRUE(program.is_ok()) << program.status().message();
  if (!program.is_ok()) return {-1, -1};
  std::vector<Tensor> inputs = {
      Tensor::from_vector(DType::kF32, {1, kWidth},
                          std::vector<float>(static_cast<size_t>(kWidth), kSubnormal)),
      Tensor::from_vector(DType::kF32, {kN, kN},
                          std::vector<float>(static_cast<size_t>(kN * kN), kSubnormal))};
  auto outputs = (*program)->run(inputs);
  EXPECT_TRUE(outputs.is_ok()) << outputs.status().message();
  if (!outputs.is_ok()) return {-1, -1};
  std::vector<int64_t> counts;
  for (const Tensor& output : *outputs) {
    int64_t subnormal = 0;
    for (float v : output.values<float>()) subnormal += std::fpclassify(v) == FP_SUBNORMAL;
    counts.push_back(subnormal);
  }
  return counts;
}

TEST(DenormalsTest, FlushedToZeroByDefault) {
  EXPECT_TRUE(CpuOptions{}.flush_denormals);
  EXPECT_EQ(run_subnormals(true), (std::vector<int64_t>{0, 0}));
  EXPECT_FALSE(thread_flushes_denormals()) << "the caller's thread keeps its own mode";
}

TEST(DenormalsTest, KeptWhenTurnedOff) {
  // Every element of y is x * 2; z's diagonal products are subnormal, the rest sums of them.
  const std::vector<int64_t> counts = run_subnormals(false);
  ASSERT_EQ(counts.size(), 2u);
  EXPECT_EQ(counts[0], int64_t{1} << 18);
  EXPECT_EQ(counts[1], 256 * 256);
  // And on again: the team and the arena's workers switch back.
  EXPECT_EQ(run_subnormals(true), (std::vector<int64_t>{0, 0}));
}

TEST(DenormalsTest, ScopeRestoresTheThreadsMode) {
  ASSERT_FALSE(thread_flushes_denormals());
  {
    const DenormalsScope scope(true);
    EXPECT_TRUE(thread_flushes_denormals());
    volatile float tiny = kSubnormal;
    EXPECT_EQ(tiny * 1.0f, 0.0f);
  }
  EXPECT_FALSE(thread_flushes_denormals());
}

}  // namespace
}  // namespace hsched::cpu
