// Models are untrusted: every CPU kernel checks, when it is created, that what it will read and
// write fits the real shapes of its inputs and outputs, and refuses a contradiction with one
// InvalidArgument line naming the node and op. Each case here once read or wrote out of bounds
// (or threw) on a crafted node.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "backends/cpu/kernels/norm_fusion.h"
#include "backends/cpu/op_test_util.h"
#include "backends/cpu/program.h"

namespace hsched::cpu::test {
namespace {

// The kernel was refused as InvalidArgument, naming run_op's node ("test_<op>") and its op, with
// `detail` somewhere in the line.
template <typename T>
void expect_invalid(const Result<T>& result, const std::string& op, const std::string& detail) {
  ASSERT_FALSE(result.is_ok()) << op << " accepted a malformed node";
  EXPECT_EQ(result.status().code(), ErrorCode::kInvalidArgument) << result.status().message();
  const std::string& message = result.status().message();
  EXPECT_NE(message.find("node 'test_" + op + "' (" + op + ")"), std::string::npos) << message;
  EXPECT_NE(message.find(detail), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

// ---------------------------------------------------------------- Split

// split = [N + k, -k] adds up to N; with the second output omitted the first would copy N + k
// rows out of an N-row input.
TEST(CpuMalformed, SplitNegativeSizeIsRefused) {
  for (int64_t k : {1, 1000}) {
    const Tensor x = random_f32({4, 8}, 1);
    auto result = run_op("Split", {{"axis", int64_t{0}}},
                         {{x}, {i64({2}, {4 + k, -k}), true}},
                         {{DType::kF32, {4 + k, 8}}, {DType::kF32, {-k, 8}, true}}, 13);
    expect_invalid(result, "Split", "must be >= 0");
  }
  // The same through the opset-11 attribute.
  auto result = run_op("Split", {{"axis", int64_t{1}}, {"split", std::vector<int64_t>{10, -2}}},
                       {{random_f32({2, 8}, 2)}},
                       {{DType::kF32, {2, 10}}, {DType::kF32, {2, -2}, true}}, 11);
  expect_invalid(result, "Split", "must be >= 0");
}

TEST(CpuMalformed, SplitSizesMustAddUp) {
  auto result = run_op("Split", {{"axis", int64_t{0}}}, {{random_f32({4, 2}, 3)}, {i64({2}, {3, 3}), true}},
                       {{DType::kF32, {3, 2}}, {DType::kF32, {3, 2}, true}}, 13);
  expect_invalid(result, "Split", "add up");
}

// A later output wider than the input's element would be aliased past the input's bytes.
TEST(CpuMalformed, SplitOutputDtypeMustMatch) {
  auto result = run_op("Split", {{"axis", int64_t{0}}}, {{random_f32({4, 2}, 3)}},
                       {{DType::kF32, {2, 2}}, {DType::kI64, {2, 2}}}, 13);
  expect_invalid(result, "Split", "dtype");
}

// An omitted output is simply not produced.
TEST(CpuMalformed, SplitWithOmittedLaterOutputStillRuns) {
  const Tensor x = random_f32({4, 3}, 4);
  auto result = run_op("Split", {{"axis", int64_t{0}}}, {{x}, {i64({2}, {1, 3}), true}},
                       {{DType::kF32, {1, 3}}, {DType::kF32, {3, 3}, true}}, 13);
  ASSERT_TRUE(result.is_ok()) << result.status().message();
  EXPECT_TRUE(all_close(result.value()[0], f32({1, 3}, {x.values<float>()[0], x.values<float>()[1],
                                                       x.values<float>()[2]})));
}

// ---------------------------------------------------------------- Gemm / MatMul

// B's inner dimension must be A's K: oneDNN would read K * N floats from a smaller B.
TEST(CpuMalformed, GemmInnerDimensionMustMatch) {
  auto result = run_op("Gemm", {}, {{random_f32({1, 4096}, 1)}, {random_f32({16, 8}, 2), true}},
                       {{DType::kF32, {1, 8}}});
  expect_invalid(result, "Gemm", "disagree on K");
  // transA / transB decide which axes are K.
  result = run_op("Gemm", {{"transA", int64_t{1}}, {"transB", int64_t{1}}},
                  {{random_f32({64, 2}, 1)}, {random_f32({8, 16}, 2)}}, {{DType::kF32, {2, 8}}});
  expect_invalid(result, "Gemm", "disagree on K");
  result = run_op("Gemm", {{"transB", int64_t{1}}},
                  {{random_f32({2, 16}, 1)}, {random_f32({16, 8}, 2), true}},
                  {{DType::kF32, {2, 16}}});
  expect_invalid(result, "Gemm", "disagree on K");
}

TEST(CpuMalformed, GemmOutputAndCMustFit) {
  // The output declared smaller than [M, N]: the primitive would write past it.
  auto result = run_op("Gemm", {}, {{random_f32({4, 8}, 1)}, {random_f32({8, 16}, 2), true}},
                       {{DType::kF32, {1, 16}}});
  expect_invalid(result, "Gemm", "output shape");
  // C must broadcast to [M, N]: a [1, 32] row would be read as 16 of 32, a [8, 16] one past.
  for (const std::vector<int64_t>& c : std::vector<std::vector<int64_t>>{{1, 32}, {8, 16}, {2, 4, 16}}) {
    result = run_op("Gemm", {}, {{random_f32({4, 8}, 1)}, {random_f32({8, 16}, 2), true},
                                 {random_f32(c, 3), true}},
                    {{DType::kF32, {4, 16}}});
    expect_invalid(result, "Gemm", "does not broadcast");
  }
  // An f16 output would get 4 bytes per element written into 2.
  result = run_op("Gemm", {}, {{random_f32({4, 8}, 1)}, {random_f32({8, 16}, 2), true}},
                  {{DType::kF16, {4, 16}}});
  expect_invalid(result, "Gemm", "output is");
}

TEST(CpuMalformed, MatMulShapesMustAgree) {
  auto result = run_op("MatMul", {}, {{random_f32({3, 64}, 1)}, {random_f32({16, 8}, 2), true}},
                       {{DType::kF32, {3, 8}}});
  expect_invalid(result, "MatMul", "disagree on K");
  result = run_op("MatMul", {}, {{random_f32({2, 3, 4, 5}, 1)}, {random_f32({3, 5, 6}, 2)}},
                  {{DType::kF32, {2, 3, 4, 6}}});
  ASSERT_TRUE(result.is_ok()) << result.status().message();
  result = run_op("MatMul", {}, {{random_f32({2, 3, 4, 5}, 1)}, {random_f32({2, 5, 6}, 2)}},
                  {{DType::kF32, {2, 3, 4, 6}}});
  expect_invalid(result, "MatMul", "do not broadcast");
  // The output must be what the inputs give, not merely as large.
  result = run_op("MatMul", {}, {{random_f32({4, 5}, 1)}, {random_f32({5, 6}, 2)}},
                  {{DType::kF32, {2, 6}}});
  expect_invalid(result, "MatMul", "output shape");
  result = run_op("MatMul", {}, {{random_f32({5}, 1)}, {random_f32({2, 5, 6}, 2)}},
                  {{DType::kF32, {2, 6}}});
  ASSERT_TRUE(result.is_ok()) << result.status().message();
  result = run_op("MatMul", {}, {{random_f32({5}, 1)}, {random_f32({2, 5, 6}, 2)}},
                  {{DType::kF32, {2, 1, 6}}});
  expect_invalid(result, "MatMul", "output shape");
}

// ---------------------------------------------------------------- Conv / ConvTranspose

TEST(CpuMalformed, ConvWeightsMustMatchChannels) {
  const Tensor x = random_f32({1, 4, 6, 6}, 1);
  struct Case {
    std::vector<int64_t> w;
    int64_t group;
    std::vector<int64_t> y;
  };
  const Case cases[] = {
      {{2, 1, 3, 3}, 1, {1, 2, 4, 4}},     // w[1] * group != C_in: the reorder over-reads
      {{8, 4, 3, 3}, 1, {1, 2, 4, 4}},     // w[0] != C_out
      {{4, 2, 3, 3}, 3, {1, 4, 4, 4}},     // C_in not divisible by group
      {{3, 2, 3, 3}, 2, {1, 3, 4, 4}},     // C_out not divisible by group
      {{2, 4, 3}, 1, {1, 2, 4, 4}},        // kernel rank below the input's
      {{2, 4, 3, 3, 3}, 1, {1, 2, 4, 4}},  // and above
  };
  for (const Case& c : cases) {
    auto result = run_op("Conv", {{"group", c.group}}, {{x}, {random_f32(c.w, 2), true}},
                         {{DType::kF32, c.y}});
    expect_invalid(result, "Conv", "");
  }
  // The same weights as a runtime input (reordered on each run).
  auto result = run_op("Conv", {}, {{x}, {random_f32({2, 1, 3, 3}, 2)}}, {{DType::kF32, {1, 2, 4, 4}}});
  expect_invalid(result, "Conv", "weights");
  // kernel_shape must be the weights' spatial dims.
  result = run_op("Conv", {{"kernel_shape", std::vector<int64_t>{1, 1}}},
                  {{x}, {random_f32({2, 4, 3, 3}, 2), true}}, {{DType::kF32, {1, 2, 6, 6}}});
  expect_invalid(result, "Conv", "kernel_shape");
  // The bias holds one value per output channel.
  result = run_op("Conv", {}, {{x}, {random_f32({2, 4, 3, 3}, 2), true}, {random_f32({1}, 3), true}},
                  {{DType::kF32, {1, 2, 4, 4}}});
  expect_invalid(result, "Conv", "bias");
  // A well-formed grouped Conv is still accepted.
  result = run_op("Conv", {{"group", int64_t{2}}}, {{x}, {random_f32({6, 2, 3, 3}, 2), true},
                                                     {random_f32({6}, 3), true}},
                  {{DType::kF32, {1, 6, 4, 4}}});
  EXPECT_TRUE(result.is_ok()) << result.status().message();
}

TEST(CpuMalformed, ConvTransposeWeightsMustMatchChannels) {
  const Tensor x = random_f32({1, 4, 3, 3}, 1);
  // [C_in, C_out / group, k...]: w[0] must be C_in.
  auto result = run_op("ConvTranspose", {}, {{x}, {random_f32({2, 2, 3, 3}, 2), true}},
                       {{DType::kF32, {1, 2, 5, 5}}});
  expect_invalid(result, "ConvTranspose", "weights");
  // w[1] * group must be C_out.
  result = run_op("ConvTranspose", {{"group", int64_t{2}}},
                  {{x}, {random_f32({4, 1, 3, 3}, 2), true}}, {{DType::kF32, {1, 4, 5, 5}}});
  expect_invalid(result, "ConvTranspose", "weights");
  result = run_op("ConvTranspose", {{"group", int64_t{2}}},
                  {{x}, {random_f32({4, 2, 3, 3}, 2), true}, {random_f32({4}, 3), true}},
                  {{DType::kF32, {1, 4, 5, 5}}});
  EXPECT_TRUE(result.is_ok()) << result.status().message();
}

TEST(CpuMalformed, PoolOutputMustKeepChannels) {
  auto result = run_op("MaxPool", {{"kernel_shape", std::vector<int64_t>{2, 2}}},
                       {{random_f32({1, 2, 4, 4}, 1)}}, {{DType::kF32, {1, 8, 3, 3}}});
  expect_invalid(result, "MaxPool", "does not match");
}

// ---------------------------------------------------------------- Pad

// begin = INT64_MIN with end = INT64_MAX gives an output of one element, whose source index
// (i - begin) overflowed.
TEST(CpuMalformed, PadsBeyondTheAxisAreRefused) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  auto result = run_op("Pad", {{"mode", std::string("edge")}},
                       {{random_f32({2}, 1)}, {i64({2}, {kMin, kMax}), true}},
                       {{DType::kF32, {1}}}, 13);
  expect_invalid(result, "Pad", "do not fit axis 0");
  // Removing more than the axis holds, then padding it back.
  result = run_op("Pad", {}, {{random_f32({4}, 1)}, {i64({2}, {-6, 3}), true}},
                  {{DType::kF32, {1}}}, 13);
  expect_invalid(result, "Pad", "do not fit axis 0");
  result = run_op("Pad", {}, {{random_f32({4}, 1)}, {i64({2}, {-1, 2}), true}},
                  {{DType::kF32, {5}}}, 13);
  ASSERT_TRUE(result.is_ok()) << result.status().message();
}

// ---------------------------------------------------------------- zero-size values

// oneDNN divides by a zero-size dim (SIGFPE, found by the compile+run fuzzer): a MatMul with no
// rows and a pool of an empty image run nothing; an empty K with a non-empty output is refused.
TEST(CpuMalformed, ZeroSizeValuesNeverReachOneDnn) {
  auto result = run_op("MatMul", {}, {{Tensor(DType::kF32, {2, 0, 8})}, {random_f32({8, 3}, 1)}},
                       {{DType::kF32, {2, 0, 3}}});
  ASSERT_TRUE(result.is_ok()) << result.status().message();
  EXPECT_EQ((*result)[0].elements(), 0);
  result = run_op("MaxPool", {{"kernel_shape", std::vector<int64_t>{2, 2}}},
                  {{Tensor(DType::kF32, {1, 4, 0, 0})}}, {{DType::kF32, {1, 4, 0, 0}}});
  ASSERT_TRUE(result.is_ok()) << result.status().message();
  result = run_op("MatMul", {}, {{Tensor(DType::kF32, {4, 0})}, {Tensor(DType::kF32, {0, 3})}},
                  {{DType::kF32, {4, 3}}});
  ASSERT_FALSE(result.is_ok());
  EXPECT_EQ(result.status().code(), ErrorCode::kUnimplemented) << result.status().message();
  EXPECT_NE(result.status().message().find("is empty"), std::string::npos)
      << result.status().message();
}

// ---------------------------------------------------------------- omitted first output

Graph relu_then(const std::string& op, bool omit_first) {
  Graph graph;
  const ValueId x = graph.add_value("x", DType::kF32, Shape({4, 2}));
  graph.add_input(x);
  Node relu;
  relu.name = "relu";
  relu.op_type = "Relu";
  relu.inputs = {x};
  const ValueId r = graph.add_value("r", DType::kF32, Shape({4, 2}));
  relu.outputs = {r};
  graph.add_node(relu);
  Node split;
  split.name = "split";
  split.op_type = op;
  split.inputs = {r};
  const ValueId a = graph.add_value("a", DType::kF32, Shape({2, 2}));
  const ValueId b = graph.add_value("b", DType::kF32, Shape({2, 2}));
  split.outputs = {omit_first ? kNoValue : a, b};
  graph.add_node(split);
  graph.add_output(b);
  return graph;
}

TEST(CpuMalformed, OmittedFirstOutputIsRefused) {
  const Graph graph = relu_then("Split", true);
  // The analysis the cost model uses neither throws nor reports steps away.
  const std::vector<bool> without = nodes_without_steps(graph);
  EXPECT_EQ(without, std::vector<bool>(graph.nodes().size(), false));
  auto program = CpuProgram::compile(graph, CpuOptions{});
  ASSERT_FALSE(program.is_ok());
  EXPECT_EQ(program.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(program.status().message().find("node 'split' (Split): its first output is omitted"),
            std::string::npos)
      << program.status().message();
  // With the first output there, the same graph compiles and runs.
  auto whole = CpuProgram::compile(relu_then("Split", false), CpuOptions{});
  ASSERT_TRUE(whole.is_ok()) << whole.status().message();
  auto out = (*whole)->run({random_f32({4, 2}, 1)});
  ASSERT_TRUE(out.is_ok()) << out.status().message();
}

// ---------------------------------------------------------------- audit: other kernels

// Ops that read as many elements as they write: a larger declared output read past the input.
TEST(CpuMalformed, CopyingOpsNeedTheInputShape) {
  const Tensor x = random_f32({2, 3}, 1);
  for (const char* op : {"Identity", "Dropout"}) {
    expect_invalid(run_op(op, {}, {{x}}, {{DType::kF32, {64, 3}}}), op, "differs from input");
  }
  expect_invalid(run_op("Cast", {{"to", int64_t{7}}}, {{x}}, {{DType::kI64, {64, 3}}}), "Cast",
                 "differs from input");
}

// A channel LayerNorm (built by the fusion pass) reads Scale and B as one float per channel.
TEST(CpuMalformed, ChannelLayerNormParamsHoldOnePerChannel) {
  const std::string op = kChannelLayerNormOp;
  const Tensor x = random_f32({1, 8, 2, 2}, 1);
  expect_invalid(run_op(op, {}, {{x}, {random_f32({1}, 2), true}}, {{DType::kF32, {1, 8, 2, 2}}}),
                 op, "one per channel");
  expect_invalid(run_op(op, {}, {{x}, {random_f32({8}, 2), true}, {random_f32({1}, 3), true}},
                        {{DType::kF32, {1, 8, 2, 2}}}),
                 op, "one per channel");
  expect_invalid(run_op(op, {}, {{x}, {Tensor(DType::kF32, {8}), false, true}},
                        {{DType::kF32, {1, 8, 2, 2}}}),
                 op, "missing input 1");
}

// NaN roi values gave NaN coordinates that survived the clamps as arbitrary indices.
TEST(CpuMalformed, ResizeNanRoiIsRefused) {
  const float nan = std::nanf("");
  auto result = run_op("Resize",
                       {{"mode", std::string("linear")},
                        {"coordinate_transformation_mode", std::string("tf_crop_and_resize")}},
                       {{random_f32({1, 1, 4, 4}, 1)},
                        {f32({8}, {0, 0, nan, nan, 1, 1, nan, nan}), true},
                        {f32({4}, {1, 1, 2, 2}), true}},
                       {{DType::kF32, {1, 1, 8, 8}}});
  expect_invalid(result, "Resize", "no input coordinate");
}

// blocksize * blocksize overflowed (then divided by): refused before it is formed.
TEST(CpuMalformed, DepthToSpaceHugeBlocksizeIsRefused) {
  const Tensor x = random_f32({1, 4, 2, 2}, 1);
  expect_invalid(run_op("DepthToSpace", {{"blocksize", int64_t{1} << 32}}, {{x}},
                        {{DType::kF32, {1, 4, 2, 2}}}),
                 "DepthToSpace", "blocksize");
  expect_invalid(run_op("SpaceToDepth", {{"blocksize", int64_t{1} << 32}}, {{x}},
                        {{DType::kF32, {1, 4, 2, 2}}}),
                 "SpaceToDepth", "blocksize");
}

// x -> op(constant `w` of 4 floats) -> y, through a compiled program.
Result<std::unique_ptr<CpuProgram>> compile_two_nodes(const std::function<void(Graph&, ValueId)>& add) {
  Graph graph;
  const ValueId x = graph.add_value("x", DType::kF32, Shape({1, 4, 3, 3}));
  graph.add_input(x);
  add(graph, x);
  return CpuProgram::compile(graph, CpuOptions{});
}

Node make_node(const std::string& name, const std::string& op, std::vector<ValueId> inputs,
               std::vector<ValueId> outputs) {
  Node node;
  node.name = name;
  node.op_type = op;
  node.inputs = std::move(inputs);
  node.outputs = std::move(outputs);
  return node;
}

void expect_program_refused(const Result<std::unique_ptr<CpuProgram>>& program,
                            const std::string& node, const std::string& detail) {
  ASSERT_FALSE(program.is_ok());
  EXPECT_EQ(program.status().code(), ErrorCode::kInvalidArgument) << program.status().message();
  EXPECT_NE(program.status().message().find(node), std::string::npos)
      << program.status().message();
  EXPECT_NE(program.status().message().find(detail), std::string::npos)
      << program.status().message();
}

// A Reshape of a constant to a larger declared shape was aliased to the constant's bytes, and
// its reader read past them.
TEST(CpuMalformed, ReshapeOfConstantMustKeepItsSize) {
  auto program = compile_two_nodes([](Graph& graph, ValueId x) {
    const ValueId w = graph.add_constant("w", random_f32({4}, 1));
    const ValueId shape = graph.add_constant("shape", i64({4}, {1, 4, 3, 3}));
    const ValueId big = graph.add_value("big", DType::kF32, Shape({1, 4, 3, 3}));
    graph.add_node(make_node("reshape", "Reshape", {w, shape}, {big}));
    const ValueId y = graph.add_value("y", DType::kF32, Shape({1, 4, 3, 3}));
    graph.add_node(make_node("add", "Add", {x, big}, {y}));
    graph.add_output(y);
  });
  expect_program_refused(program, "node 'reshape' (Reshape)", "elements");
}

// Conv -> Mul by a per-channel constant scales the weights and bias at compile time: a bias of
// the wrong length divided by zero (block = 1 / channels) or indexed past the scales.
TEST(CpuMalformed, ConvScaleFusionChecksTheBias) {
  for (int64_t bias_len : {1, 7}) {
    auto program = compile_two_nodes([&](Graph& graph, ValueId x) {
      const ValueId w = graph.add_constant("w", random_f32({4, 4, 1, 1}, 1));
      const ValueId b = graph.add_constant("b", random_f32({bias_len}, 2));
      const ValueId c = graph.add_value("c", DType::kF32, Shape({1, 4, 3, 3}));
      graph.add_node(make_node("conv", "Conv", {x, w, b}, {c}));
      const ValueId s = graph.add_constant("s", random_f32({1, 4, 1, 1}, 3));
      const ValueId y = graph.add_value("y", DType::kF32, Shape({1, 4, 3, 3}));
      graph.add_node(make_node("mul", "Mul", {c, s}, {y}));
      graph.add_output(y);
    });
    expect_program_refused(program, "node 'conv' (Conv)", "bias");
  }
}

// A constant whose bytes are fewer than its declared shape says: every reader would size its
// reads by the declared shape.
TEST(CpuMalformed, ConstantMustHoldItsDeclaredShape) {
  auto program = compile_two_nodes([](Graph& graph, ValueId x) {
    const ValueId w = graph.add_constant("w", random_f32({4}, 1));
    graph.value(w).shape = Shape({1, 4, 3, 3});
    const ValueId y = graph.add_value("y", DType::kF32, Shape({1, 4, 3, 3}));
    graph.add_node(make_node("add", "Add", {x, w}, {y}));
    graph.add_output(y);
  });
  ASSERT_FALSE(program.is_ok());
  EXPECT_EQ(program.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(program.status().message().find("tensor 'w' holds"), std::string::npos)
      << program.status().message();
}

}  // namespace
}  // namespace hsched::cpu::test
