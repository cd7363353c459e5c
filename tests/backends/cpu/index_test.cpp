// Conformance of the indexing kernels (index_kernels.cpp): Trilu, EyeLike, OneHot,
// ReverseSequence, GatherND, ScatterND, ScatterElements and Scatter against hand-computed
// outputs (most from the operators' own examples), and the malformed nodes and out-of-range data
// each must refuse: at creation for shapes and attributes, at run time for index values.
#include <limits>

#include "backends/cpu/op_test_util.h"

namespace hsched::cpu::test {
namespace {

template <typename T>
std::vector<T> values_of(const Tensor& t) {
  const auto v = t.values<T>();
  return {v.begin(), v.end()};
}

// Runs a one-output op; fails the test (and returns an empty tensor) on an error.
Tensor run1(const std::string& op, const AttributeMap& attrs, const std::vector<OpInput>& inputs,
            DType dtype, std::vector<int64_t> dims, int64_t opset = 17) {
  auto result = run_op(op, attrs, inputs, {{dtype, std::move(dims)}}, opset);
  EXPECT_TRUE(result.is_ok()) << result.status().message();
  return result.is_ok() ? std::move((*result)[0]) : Tensor();
}

Status run_status(const std::string& op, const AttributeMap& attrs,
                  const std::vector<OpInput>& inputs, DType dtype, std::vector<int64_t> dims,
                  int64_t opset = 17) {
  auto result = run_op(op, attrs, inputs, {{dtype, std::move(dims)}}, opset);
  return result.is_ok() ? Status::ok() : result.status();
}

// An InvalidArgument naming run_op's node, with `detail` in its one line.
void expect_invalid(const Status& status, const std::string& op, const std::string& detail) {
  ASSERT_FALSE(status.is_ok()) << op << " accepted a malformed node or out-of-range data";
  EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument) << status.message();
  EXPECT_NE(status.message().find("node 'test_" + op + "' (" + op + ")"), std::string::npos)
      << status.message();
  EXPECT_NE(status.message().find(detail), std::string::npos) << status.message();
  EXPECT_EQ(status.message().find('\n'), std::string::npos) << status.message();
}

const Tensor kMatrix = f32({3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});

// ---------------------------------------------------------------- Trilu

std::vector<float> trilu(bool upper, int64_t k, bool k_constant = true) {
  const AttributeMap attrs{{"upper", int64_t{upper ? 1 : 0}}};
  return values_of<float>(
      run1("Trilu", attrs, {{kMatrix}, {i64({}, {k}), k_constant}}, DType::kF32, {3, 4}, 14));
}

TEST(CpuIndex, TriluKeepsOneTriangle) {
  EXPECT_EQ(trilu(true, 0), (std::vector<float>{1, 2, 3, 4, 0, 6, 7, 8, 0, 0, 11, 12}));
  EXPECT_EQ(trilu(true, 1), (std::vector<float>{0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12}));
  EXPECT_EQ(trilu(false, 0), (std::vector<float>{1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0}));
  EXPECT_EQ(trilu(false, 2), (std::vector<float>{1, 2, 3, 0, 5, 6, 7, 8, 9, 10, 11, 12}));
  // k as a graph input, read on every run.
  EXPECT_EQ(trilu(false, -1, false), (std::vector<float>{0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0}));
  EXPECT_EQ(trilu(true, -1, false), (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 0, 10, 11, 12}));
  // k far outside the matrix: everything or nothing, no overflow.
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(trilu(true, kMax, false), std::vector<float>(12, 0.0f));
  EXPECT_EQ(trilu(false, kMax), values_of<float>(kMatrix));
  EXPECT_EQ(trilu(true, kMin), values_of<float>(kMatrix));
  EXPECT_EQ(trilu(false, kMin, false), std::vector<float>(12, 0.0f));
}

TEST(CpuIndex, TriluBatchedDefaultsAndOtherDtypes) {
  // No k, upper by default, two matrices of i64.
  const Tensor x = i64({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  EXPECT_EQ(values_of<int64_t>(run1("Trilu", {}, {{x}}, DType::kI64, {2, 2, 2}, 14)),
            (std::vector<int64_t>{1, 2, 0, 4, 5, 6, 0, 8}));
  const Tensor b = Tensor::from_vector(DType::kBool, {2, 3}, std::vector<uint8_t>{1, 1, 1, 1, 1, 1});
  EXPECT_EQ(values_of<uint8_t>(run1("Trilu", {{"upper", int64_t{0}}}, {{b}, {i32({1}, {1}), true}},
                                    DType::kBool, {2, 3}, 14)),
            (std::vector<uint8_t>{1, 1, 0, 1, 1, 1}));
  run1("Trilu", {}, {{Tensor(DType::kF32, {0, 5})}}, DType::kF32, {0, 5}, 14);  // empty
}

TEST(CpuIndex, TriluRefusesMalformedNodes) {
  expect_invalid(run_status("Trilu", {}, {{f32({4}, {1, 2, 3, 4})}}, DType::kF32, {4}, 14),
                 "Trilu", "rank >= 2");
  expect_invalid(
      run_status("Trilu", {}, {{kMatrix}, {i64({2}, {0, 1}), true}}, DType::kF32, {3, 4}, 14),
      "Trilu", "k must hold one value");
  expect_invalid(
      run_status("Trilu", {}, {{kMatrix}, {f32({}, {1}), true}}, DType::kF32, {3, 4}, 14),
      "Trilu", "int32 or int64");
  expect_invalid(run_status("Trilu", {}, {{kMatrix}}, DType::kF32, {4, 3}, 14), "Trilu",
                 "differs from input");
}

// ---------------------------------------------------------------- EyeLike

TEST(CpuIndex, EyeLikePutsOnesOnDiagonalK) {
  EXPECT_EQ(values_of<float>(run1("EyeLike", {{"k", int64_t{1}}}, {{kMatrix}}, DType::kF32,
                                  {3, 4}, 9)),
            (std::vector<float>{0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}));
  // dtype int32 (ONNX 6) from an f32 input, below the main diagonal.
  EXPECT_EQ(values_of<int32_t>(run1("EyeLike", {{"k", int64_t{-2}}, {"dtype", int64_t{6}}},
                                    {{kMatrix}}, DType::kI32, {3, 4}, 9)),
            (std::vector<int32_t>{0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0}));
  EXPECT_EQ(values_of<float>(run1("EyeLike", {{"k", std::numeric_limits<int64_t>::max()}},
                                  {{kMatrix}}, DType::kF32, {3, 4}, 9)),
            std::vector<float>(12, 0.0f));
}

TEST(CpuIndex, EyeLikeRefusesMalformedNodes) {
  expect_invalid(run_status("EyeLike", {}, {{f32({1, 2, 2}, {1, 2, 3, 4})}}, DType::kF32,
                            {1, 2, 2}, 9),
                 "EyeLike", "rank 2");
  expect_invalid(run_status("EyeLike", {{"dtype", int64_t{7}}}, {{kMatrix}}, DType::kF32, {3, 4}, 9),
                 "EyeLike", "differs from attribute dtype");
  const Status complex =  // complex64: no hsched dtype
      run_status("EyeLike", {{"dtype", int64_t{14}}}, {{kMatrix}}, DType::kF32, {3, 4}, 9);
  EXPECT_EQ(complex.code(), ErrorCode::kUnimplemented) << complex.message();
}

// ---------------------------------------------------------------- OneHot

TEST(CpuIndex, OneHotOnAnyAxisWithNegativeAndOutOfRangeIndices) {
  const Tensor indices = i64({3}, {0, -1, 5});  // 5 is outside [-4, 4): a row of `off`
  const Tensor values = f32({2}, {0, 3});
  EXPECT_EQ(values_of<float>(run1("OneHot", {}, {{indices}, {i64({}, {4}), true}, {values}},
                                  DType::kF32, {3, 4}, 11)),
            (std::vector<float>{3, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0}));
  // axis 0, depth and indices as float graph inputs (as in ONNX's own tests).
  EXPECT_EQ(values_of<float>(run1("OneHot", {{"axis", int64_t{0}}},
                                  {{f32({3}, {0, -1, 5})}, {f32({}, {4})}, {values}},
                                  DType::kF32, {4, 3}, 11)),
            (std::vector<float>{3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0}));
}

// OneHot-9/10 define valid indices as [0, depth): a negative index gives a row of `off`.
TEST(CpuIndex, OneHotBeforeOpset11DoesNotWrapNegativeIndices) {
  const Tensor indices = i64({3}, {0, -1, 3});
  const Tensor values = f32({2}, {0, 3});
  for (int64_t opset : {9, 10}) {
    EXPECT_EQ(values_of<float>(run1("OneHot", {}, {{indices}, {i64({}, {4}), true}, {values}},
                                    DType::kF32, {3, 4}, opset)),
              (std::vector<float>{3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3}))
        << "opset " << opset;
  }
}

TEST(CpuIndex, OneHotDepthMustMatchTheOutput) {
  const Tensor indices = i64({3}, {0, 1, 2});
  const Tensor values = f32({2}, {0, 1});
  // Constant depth: refused when the kernel is created.
  expect_invalid(run_status("OneHot", {}, {{indices}, {i64({}, {5}), true}, {values}}, DType::kF32,
                            {3, 4}, 11),
                 "OneHot", "differs from the output's 4");
  // Runtime depth: refused on the run.
  expect_invalid(
      run_status("OneHot", {}, {{indices}, {i64({}, {5})}, {values}}, DType::kF32, {3, 4}, 11),
      "OneHot", "fixed when the model was loaded");
  expect_invalid(run_status("OneHot", {}, {{indices}, {i64({}, {4}), true}, {values}}, DType::kF32,
                            {4, 4}, 11),
                 "OneHot", "should be");
  expect_invalid(run_status("OneHot", {{"axis", int64_t{2}}},
                            {{indices}, {i64({}, {4}), true}, {values}}, DType::kF32, {3, 4}, 11),
                 "OneHot", "axis 2 is out of range");
  expect_invalid(run_status("OneHot", {}, {{indices}, {i64({}, {4}), true}, {f32({3}, {0, 1, 2})}},
                            DType::kF32, {3, 4}, 11),
                 "OneHot", "values must be");
}

// ---------------------------------------------------------------- ReverseSequence

TEST(CpuIndex, ReverseSequenceBatchMajorAndTimeMajor) {
  std::vector<float> x(16);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  EXPECT_EQ(values_of<float>(run1("ReverseSequence",
                                  {{"batch_axis", int64_t{0}}, {"time_axis", int64_t{1}}},
                                  {{f32({4, 4}, x)}, {i64({4}, {1, 2, 3, 4})}}, DType::kF32,
                                  {4, 4}, 10)),
            (std::vector<float>{0, 1, 2, 3, 5, 4, 6, 7, 10, 9, 8, 11, 15, 14, 13, 12}));
  // Time-major [time 3, batch 2, 2] (the defaults), int32 lengths.
  x.resize(12);
  EXPECT_EQ(values_of<float>(run1("ReverseSequence", {}, {{f32({3, 2, 2}, x)}, {i32({2}, {3, 1})}},
                                  DType::kF32, {3, 2, 2}, 10)),
            (std::vector<float>{8, 9, 2, 3, 4, 5, 6, 7, 0, 1, 10, 11}));
}

TEST(CpuIndex, ReverseSequenceRefusesBadAxesAndLengths) {
  const Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  expect_invalid(run_status("ReverseSequence", {{"batch_axis", int64_t{1}}, {"time_axis", int64_t{1}}},
                            {{x}, {i64({3}, {1, 1, 1})}}, DType::kF32, {2, 3}, 10),
                 "ReverseSequence", "batch_axis and time_axis");
  expect_invalid(run_status("ReverseSequence", {}, {{x}, {i64({2}, {1, 1})}}, DType::kF32, {2, 3},
                            10),
                 "ReverseSequence", "one length per batch (3)");
  expect_invalid(run_status("ReverseSequence", {}, {{x}, {i64({3}, {1, 3, 1})}}, DType::kF32,
                            {2, 3}, 10),
                 "ReverseSequence", "sequence_lens[1] = 3 is outside [0, 2]");
  expect_invalid(run_status("ReverseSequence", {}, {{x}, {i64({3}, {1, -1, 1})}}, DType::kF32,
                            {2, 3}, 10),
                 "ReverseSequence", "is outside");
}

// ---------------------------------------------------------------- GatherND

TEST(CpuIndex, GatherNDOperatorExamples) {
  const Tensor d2 = i32({2, 2}, {0, 1, 2, 3});
  EXPECT_EQ(values_of<int32_t>(run1("GatherND", {}, {{d2}, {i64({2, 2}, {0, 0, 1, 1})}},
                                    DType::kI32, {2}, 13)),
            (std::vector<int32_t>{0, 3}));
  EXPECT_EQ(values_of<int32_t>(run1("GatherND", {}, {{d2}, {i64({2, 1}, {1, 0})}}, DType::kI32,
                                    {2, 2}, 13)),
            (std::vector<int32_t>{2, 3, 0, 1}));
  const Tensor d3 = f32({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  EXPECT_EQ(values_of<float>(run1("GatherND", {}, {{d3}, {i64({2, 2}, {0, 1, 1, 0})}}, DType::kF32,
                                  {2, 2}, 13)),
            (std::vector<float>{2, 3, 4, 5}));
  EXPECT_EQ(values_of<float>(run1("GatherND", {}, {{d3}, {i64({2, 1, 2}, {0, 1, 1, 0})}},
                                  DType::kF32, {2, 1, 2}, 13)),
            (std::vector<float>{2, 3, 4, 5}));
  EXPECT_EQ(values_of<float>(run1("GatherND", {{"batch_dims", int64_t{1}}},
                                  {{d3}, {i64({2, 1}, {1, 0})}}, DType::kF32, {2, 2}, 13)),
            (std::vector<float>{2, 3, 4, 5}));
  // Negative and int32 indices.
  EXPECT_EQ(values_of<int32_t>(run1("GatherND", {}, {{d2}, {i32({1, 2}, {-1, -2})}}, DType::kI32,
                                    {1}, 13)),
            (std::vector<int32_t>{2}));
}

TEST(CpuIndex, GatherNDRefusesMalformedNodesAndOutOfRangeIndices) {
  const Tensor d2 = f32({2, 2}, {0, 1, 2, 3});
  expect_invalid(run_status("GatherND", {}, {{d2}, {i64({1, 2}, {2, 0})}}, DType::kF32, {1}, 13),
                 "GatherND", "index 2 (at position 0) is out of range for axis 0 of size 2");
  expect_invalid(run_status("GatherND", {}, {{d2}, {i64({1, 2}, {0, -3})}}, DType::kF32, {1}, 13),
                 "GatherND", "out of range for axis 1");
  expect_invalid(run_status("GatherND", {{"batch_dims", int64_t{2}}},
                            {{d2}, {i64({2, 1}, {0, 0})}}, DType::kF32, {2}, 13),
                 "GatherND", "batch_dims 2");
  expect_invalid(run_status("GatherND", {}, {{d2}, {i64({1, 3}, {0, 0, 0})}}, DType::kF32, {1}, 13),
                 "GatherND", "do not address data");
  expect_invalid(run_status("GatherND", {}, {{d2}, {i64({1, 1}, {0})}}, DType::kF32, {1, 3}, 13),
                 "GatherND", "should be 1x2");
  expect_invalid(run_status("GatherND", {}, {{d2}, {f32({1, 1}, {0})}}, DType::kF32, {1, 2}, 13),
                 "GatherND", "int32 or int64");
}

// ---------------------------------------------------------------- ScatterND

TEST(CpuIndex, ScatterNDReplacesAndReduces) {
  const Tensor data = f32({8}, {1, 2, 3, 4, 5, 6, 7, 8});
  EXPECT_EQ(values_of<float>(run1("ScatterND", {},
                                  {{data}, {i64({4, 1}, {4, 3, 1, 7})}, {f32({4}, {9, 10, 11, 12})}},
                                  DType::kF32, {8}, 16)),
            (std::vector<float>{1, 11, 3, 10, 9, 6, 7, 12}));
  // Duplicate tuples accumulate, in order; slices of rows; negative index.
  const Tensor m = f32({2, 2}, {1, 2, 3, 4});
  const Tensor updates = f32({2, 2}, {10, 20, 30, 40});
  EXPECT_EQ(values_of<float>(run1("ScatterND", {{"reduction", std::string("add")}},
                                  {{m}, {i64({2, 1}, {0, -2})}, {updates}}, DType::kF32, {2, 2},
                                  16)),
            (std::vector<float>{41, 62, 3, 4}));
  EXPECT_EQ(values_of<float>(run1("ScatterND", {{"reduction", std::string("mul")}},
                                  {{m}, {i64({2, 1}, {1, 1})}, {updates}}, DType::kF32, {2, 2}, 16)),
            (std::vector<float>{1, 2, 900, 3200}));
  EXPECT_EQ(values_of<int64_t>(run1("ScatterND", {{"reduction", std::string("add")}},
                                    {{i64({2, 2}, {1, 2, 3, 4})}, {i32({2, 2}, {0, 1, 0, 1})},
                                     {i64({2}, {5, 6})}},
                                    DType::kI64, {2, 2}, 16)),
            (std::vector<int64_t>{1, 13, 3, 4}));
  EXPECT_EQ(values_of<int32_t>(run1("ScatterND", {{"reduction", std::string("max")}},
                                    {{i32({3}, {5, 5, 5})}, {i64({2, 1}, {0, 2})},
                                     {i32({2}, {1, 9})}},
                                    DType::kI32, {3}, 18)),
            (std::vector<int32_t>{5, 5, 9}));
}

TEST(CpuIndex, ScatterNDRefusesMalformedNodesAndOutOfRangeIndices) {
  const Tensor m = f32({2, 2}, {1, 2, 3, 4});
  const Tensor updates = f32({1, 2}, {10, 20});
  expect_invalid(
      run_status("ScatterND", {}, {{m}, {i64({1, 1}, {2})}, {updates}}, DType::kF32, {2, 2}, 16),
      "ScatterND", "index 2 (at position 0) is out of range for axis 0 of size 2");
  expect_invalid(run_status("ScatterND", {}, {{m}, {i64({1, 1}, {0})}, {f32({1, 3}, {1, 2, 3})}},
                            DType::kF32, {2, 2}, 16),
                 "ScatterND", "updates 1x3 should be 1x2");
  expect_invalid(run_status("ScatterND", {}, {{m}, {i64({1, 3}, {0, 0, 0})}, {f32({1}, {1})}},
                            DType::kF32, {2, 2}, 16),
                 "ScatterND", "do not address data");
  expect_invalid(run_status("ScatterND", {{"reduction", std::string("sub")}},
                            {{m}, {i64({1, 1}, {0})}, {updates}}, DType::kF32, {2, 2}, 16),
                 "ScatterND", "reduction 'sub'");
  const Tensor flags = Tensor::from_vector(DType::kBool, {2}, std::vector<uint8_t>{0, 1});
  const Status bools =
      run_status("ScatterND", {{"reduction", std::string("add")}},
                 {{flags}, {i64({1, 1}, {0})}, {flags.reshaped({1})}}, DType::kBool, {2}, 16);
  EXPECT_EQ(bools.code(), ErrorCode::kUnimplemented) << bools.message();
}

// ---------------------------------------------------------------- ScatterElements, Scatter

TEST(CpuIndex, ScatterElementsOperatorExamples) {
  const Tensor data = f32({1, 5}, {1, 2, 3, 4, 5});
  const Tensor updates = f32({1, 2}, {1.1f, 2.1f});
  const AttributeMap axis1{{"axis", int64_t{1}}};
  EXPECT_EQ(values_of<float>(run1("ScatterElements", axis1,
                                  {{data}, {i64({1, 2}, {1, 3})}, {updates}}, DType::kF32, {1, 5},
                                  13)),
            (std::vector<float>{1, 1.1f, 3, 2.1f, 5}));
  EXPECT_EQ(values_of<float>(run1("ScatterElements", axis1,
                                  {{data}, {i64({1, 2}, {1, -3})}, {updates}}, DType::kF32, {1, 5},
                                  13)),
            (std::vector<float>{1, 1.1f, 2.1f, 4, 5}));
  EXPECT_EQ(values_of<float>(run1("ScatterElements",
                                  {{"axis", int64_t{1}}, {"reduction", std::string("add")}},
                                  {{data}, {i64({1, 2}, {1, 1})}, {updates}}, DType::kF32, {1, 5},
                                  16)),
            (std::vector<float>{1, 2 + 1.1f + 2.1f, 3, 4, 5}));
  // Axis 0 (the default), indices smaller than data.
  const std::vector<float> expected{2, 1.1f, 0, 1, 0, 2.2f, 0, 2.1f, 1.2f};
  const Tensor zeros = f32({3, 3}, std::vector<float>(9, 0.0f));
  const Tensor idx = i64({2, 3}, {1, 0, 2, 0, 2, 1});
  const Tensor upd = f32({2, 3}, {1, 1.1f, 1.2f, 2, 2.1f, 2.2f});
  EXPECT_EQ(values_of<float>(run1("ScatterElements", {}, {{zeros}, {idx}, {upd}}, DType::kF32,
                                  {3, 3}, 13)),
            expected);
  EXPECT_EQ(values_of<float>(run1("Scatter", {}, {{zeros}, {idx}, {upd}}, DType::kF32, {3, 3}, 10)),
            expected);
  EXPECT_EQ(values_of<int64_t>(run1("ScatterElements",
                                    {{"axis", int64_t{-1}}, {"reduction", std::string("mul")}},
                                    {{i64({2, 2}, {1, 2, 3, 4})}, {i32({2, 1}, {1, 0})},
                                     {i64({2, 1}, {10, 100})}},
                                    DType::kI64, {2, 2}, 16)),
            (std::vector<int64_t>{1, 20, 300, 4}));
}

TEST(CpuIndex, ScatterElementsRefusesMalformedNodesAndOutOfRangeIndices) {
  const Tensor data = f32({2, 2}, {1, 2, 3, 4});
  const Tensor updates = f32({1, 2}, {10, 20});
  expect_invalid(run_status("ScatterElements", {}, {{data}, {i64({1, 2}, {0, 2})}, {updates}},
                            DType::kF32, {2, 2}, 13),
                 "ScatterElements", "index 2 (at position 1) is out of range for axis 0 of size 2");
  expect_invalid(run_status("Scatter", {{"axis", int64_t{1}}},
                            {{data}, {i64({1, 2}, {-3, 0})}, {updates}}, DType::kF32, {2, 2}, 10),
                 "Scatter", "out of range for axis 1");
  expect_invalid(run_status("ScatterElements", {{"axis", int64_t{2}}},
                            {{data}, {i64({1, 2}, {0, 0})}, {updates}}, DType::kF32, {2, 2}, 13),
                 "ScatterElements", "axis 2 is out of range for rank 2");
  // Indices wider than data off the axis would write past a row.
  expect_invalid(run_status("ScatterElements", {},
                            {{data}, {i64({1, 3}, {0, 0, 0})}, {f32({1, 3}, {1, 2, 3})}},
                            DType::kF32, {2, 2}, 13),
                 "ScatterElements", "exceed data");
  expect_invalid(run_status("ScatterElements", {},
                            {{data}, {i64({1, 2}, {0, 0})}, {f32({2, 1}, {1, 2})}}, DType::kF32,
                            {2, 2}, 13),
                 "ScatterElements", "must have one shape");
  expect_invalid(run_status("ScatterElements", {}, {{data}, {i64({1, 2}, {0, 0})}, {updates}},
                            DType::kF32, {4}, 13),
                 "ScatterElements", "should be data's shape");
}

}  // namespace
}  // namespace hsched::cpu::test
