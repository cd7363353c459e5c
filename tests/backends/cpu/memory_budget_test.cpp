// A CPU program's memory budget: weights, constants folded at compile time, the activation
// arena and one run's outputs, checked at compile time against CpuOptions::memory_limit_bytes.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cpu/program.h"

namespace hsched::cpu {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

// x [1, n] -> Relu -> Relu -> y: a 4n-byte activation in the arena and a 4n-byte output.
Graph relu_chain(int64_t n) {
  Graph graph;
  const ValueId x = graph.add_value("x", DType::kF32, Shape({1, n}));
  graph.add_input(x);
  const ValueId h = graph.add_value("h", DType::kF32, Shape({1, n}));
  const ValueId y = graph.add_value("y", DType::kF32, Shape({1, n}));
  Node first;
  first.name = "relu_a";
  first.op_type = "Relu";
  first.inputs = {x};
  first.outputs = {h};
  graph.add_node(first);
  Node second = first;
  second.name = "relu_b";
  second.inputs = {h};
  second.outputs = {y};
  graph.add_node(second);
  graph.add_output(y);
  return graph;
}

TEST(MemoryBudgetTest, WithinTheLimitCompilesAndCounts) {
  CpuOptions options;
  options.memory_limit_bytes = 3 * kMiB;
  auto program = CpuProgram::compile(relu_chain(kMiB / 4), options);
  ASSERT_TRUE(program.is_ok()) << program.status().message();
  EXPECT_EQ((*program)->stats().arena_bytes, kMiB);
  EXPECT_EQ((*program)->stats().output_bytes, kMiB);
}

TEST(MemoryBudgetTest, ActivationsOverTheLimitAreRefused) {
  CpuOptions options;
  options.memory_limit_bytes = kMiB + kMiB / 2;  // arena 1 MiB + output 1 MiB do not fit
  auto program = CpuProgram::compile(relu_chain(kMiB / 4), options);
  ASSERT_FALSE(program.is_ok());
  EXPECT_EQ(program.status().code(), ErrorCode::kResourceExhausted);
  const std::string& message = program.status().message();
  EXPECT_EQ(message.rfind("memory_exceeded: ", 0), 0u) << message;
  EXPECT_NE(message.find("activations and outputs"), std::string::npos) << message;
  EXPECT_NE(message.find("limit of 2 MiB"), std::string::npos) << message;
}

// A fold that would blow up memory (a small constant expanded to 64 MiB) is refused before its
// output is allocated, naming the node.
TEST(MemoryBudgetTest, AFoldOverTheLimitIsRefusedNamingTheNode) {
  Graph graph;
  const ValueId one = graph.add_constant("one", Tensor::from_vector(DType::kF32, {1}, std::vector<float>{1}));
  const ValueId shape = graph.add_constant(
      "shape", Tensor::from_vector(DType::kI64, {1}, std::vector<int64_t>{16 * kMiB}));
  const ValueId big = graph.add_value("big", DType::kF32, Shape({16 * kMiB}));
  Node expand;
  expand.name = "blow_up";
  expand.op_type = "Expand";
  expand.inputs = {one, shape};
  expand.outputs = {big};
  graph.add_node(expand);
  const ValueId x = graph.add_value("x", DType::kF32, Shape({16 * kMiB}));
  graph.add_input(x);
  const ValueId y = graph.add_value("y", DType::kF32, Shape({16 * kMiB}));
  Node add;
  add.name = "add";
  add.op_type = "Add";
  add.inputs = {x, big};
  add.outputs = {y};
  graph.add_node(add);
  graph.add_output(y);
  CpuOptions options;
  options.memory_limit_bytes = 8 * kMiB;
  auto program = CpuProgram::compile(graph, options);
  ASSERT_FALSE(program.is_ok());
  EXPECT_EQ(program.status().code(), ErrorCode::kResourceExhausted);
  EXPECT_NE(program.status().message().find("folding"), std::string::npos)
      << program.status().message();
  EXPECT_NE(program.status().message().find("blow_up"), std::string::npos)
      << program.status().message();
}

TEST(MemoryBudgetTest, DefaultLimitIsTheMachinesMemory) {
  EXPECT_GT(physical_memory_bytes(), 64 * kMiB);
  auto program = CpuProgram::compile(relu_chain(16), CpuOptions{});
  ASSERT_TRUE(program.is_ok()) << program.status().message();
}

}  // namespace
}  // namespace hsched::cpu
