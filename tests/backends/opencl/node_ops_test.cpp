// Node-level conformance against the CPU backend: elementwise ops (Clip bounds as inputs and as
// attributes), binary broadcasting, Softmax (opset 13 and the older 2-D coercion), the
// normalizations (BatchNormalization in inference), GlobalAveragePool, MatMul/Gemm, Concat,
// Transpose and the views; and the rejections check_node must give. Spatial ops:
// node_ops_spatial_test.cpp.
#include <set>

#include "backends/opencl/device.h"
#include "backends/opencl/node_ops_test_util.h"

namespace hsched::opencl {
namespace {

using Ints = std::vector<int64_t>;

INSTANTIATE_TEST_SUITE_P(Storage, NodeOpsTest,
                         ::testing::Values(Storage::kFloat32, Storage::kFloat16),
                         [](const ::testing::TestParamInfo<Storage>& info) {
                           return info.param == Storage::kFloat32 ? "fp32" : "fp16";
                         });

TEST_P(NodeOpsTest, UnaryOpsMatchTheCpu) {
  const Shape shape = {2, 3, 37};
  for (const std::string op :
       {"Relu", "Sigmoid", "Tanh", "Erf", "Gelu", "Exp", "Neg", "Abs", "HardSwish"}) {
    expect_matches_cpu(op, op, {}, {input(shape, -3, 3)}, {shape});
  }
  for (const std::string op : {"Log", "Sqrt", "Reciprocal"}) {
    expect_matches_cpu(op, op, {}, {input(shape, 0.1f, 3)}, {shape});
  }
  expect_matches_cpu("LeakyRelu", "LeakyRelu", {{"alpha", 0.2f}}, {input(shape)}, {shape});
  expect_matches_cpu("LeakyRelu default", "LeakyRelu", {}, {input(shape)}, {shape});
  expect_matches_cpu("HardSigmoid", "HardSigmoid", {{"alpha", 0.3f}, {"beta", 0.4f}},
                     {input(shape, -4, 4)}, {shape});
  expect_matches_cpu("Gelu tanh", "Gelu", {{"approximate", std::string("tanh")}},
                     {input(shape, -3, 3)}, {shape});
}

TEST_P(NodeOpsTest, MathAndActivationOpsMatchTheCpu) {
  const Shape shape = {3, 41};
  for (const std::string op :
       {"Sin", "Cos", "Tan", "Atan", "Sinh", "Cosh", "Asinh", "Floor", "Ceil", "Round", "Sign",
        "Softplus", "Softsign", "Elu", "Selu", "ThresholdedRelu", "Shrink"}) {
    expect_matches_cpu(op, op, {}, {input(shape, -3, 3)}, {shape});
  }
  for (const std::string op : {"Asin", "Acos", "Atanh"}) {
    expect_matches_cpu(op, op, {}, {input(shape, -0.9f, 0.9f)}, {shape});
  }
  expect_matches_cpu("Acosh", "Acosh", {}, {input(shape, 1.1f, 4)}, {shape});
  expect_matches_cpu("Elu alpha", "Elu", {{"alpha", 0.5f}}, {input(shape, -3, 3)}, {shape});
  expect_matches_cpu("Selu alpha gamma", "Selu", {{"alpha", 2.0f}, {"gamma", 3.0f}},
                     {input(shape, -3, 3)}, {shape});
  expect_matches_cpu("Shrink lambd bias", "Shrink", {{"lambd", 1.5f}, {"bias", 1.5f}},
                     {input(shape, -3, 3)}, {shape});
  expect_matches_cpu("ThresholdedRelu alpha", "ThresholdedRelu", {{"alpha", 0.5f}},
                     {input(shape, -3, 3)}, {shape});
}

TEST_P(NodeOpsTest, ClipBoundsFromInputsOrAttributes) {
  const Shape shape = {5, 21};
  expect_matches_cpu("Clip inputs", "Clip", {},
                     {input(shape), host_floats({}, {-0.5f}), host_floats({}, {1.25f})}, {shape});
  expect_matches_cpu("Clip max only", "Clip", {},
                     {input(shape), omitted(), host_floats({}, {0.75f})}, {shape});
  expect_matches_cpu("Clip no bounds", "Clip", {}, {input(shape)}, {shape});
  expect_matches_cpu("Clip attributes (opset 6)", "Clip", {{"min", -1.0f}, {"max", 0.5f}},
                     {input(shape)}, {shape}, 6);
  // Bounds given at run time: device scalars.
  expect_matches_cpu("Clip run-time bounds", "Clip", {},
                     {input(shape), input({}, -1.0f, -0.5f), input({}, 0.5f, 1.0f)}, {shape});
  expect_matches_cpu("Clip run-time min only", "Clip", {}, {input(shape), input({}, -1.0f, 0)},
                     {shape});
  expect_matches_cpu("Clip run-time max, constant min", "Clip", {},
                     {input(shape), host_floats({}, {-0.5f}), input({}, 0, 1.0f)}, {shape});
}

TEST_P(NodeOpsTest, BinaryOpsBroadcast) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{2, 3, 4, 5}, {3, 1, 5}}, {{7}, {}}, {{1, 4, 1}, {3, 1, 6}}};
  for (const std::string op : {"Add", "Sub", "Mul", "Div", "Max", "Min"}) {
    for (const auto& [a, b] : cases) {
      const Shape y = *broadcast_shape(a, b);
      expect_matches_cpu(op, op, {}, {input(a), input(b, 0.5f, 2.0f)}, {y});
    }
  }
  expect_matches_cpu("Pow", "Pow", {}, {input({3, 8}, 0.2f, 2.0f), weight({8}, -1.5f, 2.0f)},
                     {{3, 8}});
  expect_matches_cpu("Add constant", "Add", {}, {input({2, 6}), weight({6})}, {{2, 6}});
}

TEST_P(NodeOpsTest, SoftmaxOpset13AndCoerced2D) {
  const Shape shape = {2, 3, 4, 5};
  for (int64_t axis : {-1, 1, 2, 0}) {
    expect_matches_cpu("Softmax-13 axis " + std::to_string(axis), "Softmax", {{"axis", axis}},
                       {input(shape, -4, 4)}, {shape}, 13);
  }
  expect_matches_cpu("Softmax-13 default axis", "Softmax", {}, {input(shape, -4, 4)}, {shape}, 13);
  for (int64_t axis : {1, 2, -1}) {
    expect_matches_cpu("Softmax-11 axis " + std::to_string(axis), "Softmax", {{"axis", axis}},
                       {input(shape, -4, 4)}, {shape}, 11);
  }
  expect_matches_cpu("Softmax-11 default axis", "Softmax", {}, {input(shape, -4, 4)}, {shape}, 11);
  for (const char* op : {"LogSoftmax", "Hardmax"}) {
    for (int64_t axis : {0, 1, -1}) {
      expect_matches_cpu(std::string(op) + " axis " + std::to_string(axis), op, {{"axis", axis}},
                         {input(shape, -4, 4)}, {shape}, 13);
    }
    expect_matches_cpu(std::string(op) + "-11", op, {}, {input(shape, -4, 4)}, {shape}, 11);
  }
  expect_matches_cpu("LogSoftmax long rows", "LogSoftmax", {}, {input({3, 300}, -4, 4)}, {{3, 300}},
                     13);
}

TEST_P(NodeOpsTest, NormalizationsMatchTheCpu) {
  const Shape shape = {2, 4, 6, 5};
  expect_matches_cpu("LayerNormalization axis -1", "LayerNormalization", {},
                     {input(shape), weight({5}, 0.5f, 1.5f), weight({5})}, {shape});
  expect_matches_cpu("LayerNormalization axis 2 no bias", "LayerNormalization",
                     {{"axis", int64_t{2}}, {"epsilon", 1e-3f}},
                     {input(shape), weight({6, 5}, 0.5f, 1.5f)}, {shape});
  expect_matches_cpu("LayerNormalization with Mean and InvStdDev", "LayerNormalization",
                     {{"axis", int64_t{1}}},
                     {input(shape), weight({4, 6, 5}, 0.5f, 1.5f), weight({4, 6, 5})},
                     {shape, {2, 1, 1, 1}, {2, 1, 1, 1}});
  expect_matches_cpu("LayerNormalization rows longer than a work group", "LayerNormalization", {},
                     {input({5, 300}, -1, 3), weight({300}, 0.5f, 1.5f), weight({300})},
                     {{5, 300}});
  // Both ways of summing InstanceNormalization's statistics, whatever this device takes:
  // ONNX Runtime's order (a CPU device) and in parallel (a GPU).
  for (bool ordered : {true, false}) {
    SCOPED_TRACE(ordered ? "statistics in ONNX Runtime's order" : "statistics in parallel");
    kernels_ = ops().with_ordered_sums(ordered);
    expect_matches_cpu("InstanceNormalization", "InstanceNormalization", {{"epsilon", 1e-4f}},
                       {input(shape), weight({4}, 0.5f, 1.5f), weight({4})}, {shape});
    expect_matches_cpu("InstanceNormalization large rows", "InstanceNormalization", {},
                       {input({1, 3, 33, 31}, 0, 4), weight({3}, 0.5f, 1.5f), weight({3})},
                       {{1, 3, 33, 31}});
    // Few long rows: split into chunks of 4096 (the last one short) and merged.
    expect_matches_cpu("InstanceNormalization chunked rows", "InstanceNormalization", {},
                       {input({1, 3, 100, 100}, 1, 5), weight({3}, 0.5f, 1.5f), weight({3})},
                       {{1, 3, 100, 100}});
    expect_matches_cpu(
        "InstanceNormalization chunked GroupNorm", "InstanceNormalization", {{"epsilon", 1e-6f}},
        {input({2, 2, 12289}, -3, 1), weight({2}, 0.5f, 1.5f), weight({2})}, {{2, 2, 12289}});
    // 65 chunks a row: the merge's items take one or two chunks, then their tree.
    expect_matches_cpu(
        "InstanceNormalization rows of 65 chunks", "InstanceNormalization", {},
        {input({1, 2, 64 * 4096 + 1000}, 2, 4), weight({2}, 0.5f, 1.5f), weight({2})},
        {{1, 2, 64 * 4096 + 1000}});
    expect_matches_cpu("InstanceNormalization 1-D", "InstanceNormalization", {},
                       {input({3, 2, 7}), weight({2}), weight({2})}, {{3, 2, 7}});
  }
  kernels_.reset();
  expect_matches_cpu("GlobalAveragePool", "GlobalAveragePool", {}, {input(shape)}, {{2, 4, 1, 1}});
  expect_matches_cpu(
      "BatchNormalization", "BatchNormalization", {{"epsilon", 1e-3f}},
      {input(shape), weight({4}, 0.5f, 1.5f), weight({4}), weight({4}), weight({4}, 0.2f, 2.0f)},
      {shape});
  expect_matches_cpu(
      "BatchNormalization 2-D", "BatchNormalization", {},
      {input({3, 4}), weight({4}, 0.5f, 1.5f), weight({4}), weight({4}), weight({4}, 0.2f, 2.0f)},
      {{3, 4}});
}

TEST_P(NodeOpsTest, MatMulAndGemmMatchTheCpu) {
  expect_matches_cpu("MatMul 2-D", "MatMul", {}, {input({5, 7}), weight({7, 3})}, {{5, 3}});
  expect_matches_cpu("MatMul batched", "MatMul", {}, {input({2, 3, 4, 6}), input({3, 6, 5})},
                     {{2, 3, 4, 5}});
  expect_matches_cpu("MatMul 1-D A", "MatMul", {}, {input({6}), input({2, 6, 4})}, {{2, 4}});
  expect_matches_cpu("MatMul 1-D B", "MatMul", {}, {input({3, 6}), input({6})}, {{3}});
  for (int64_t trans_a : {0, 1}) {
    for (int64_t trans_b : {0, 1}) {
      const Shape a = trans_a ? Shape{9, 4} : Shape{4, 9};
      const Shape b = trans_b ? Shape{6, 9} : Shape{9, 6};
      expect_matches_cpu(
          "Gemm " + std::to_string(trans_a) + std::to_string(trans_b), "Gemm",
          {{"transA", trans_a}, {"transB", trans_b}, {"alpha", 0.5f}, {"beta", 2.0f}},
          {input(a), weight(b), weight({6})}, {{4, 6}});
    }
  }
  expect_matches_cpu("Gemm without C", "Gemm", {{"transB", int64_t{1}}},
                     {input({3, 8}), weight({5, 8})}, {{3, 5}});
}

TEST_P(NodeOpsTest, ConcatAndTransposeMatchTheCpu) {
  expect_matches_cpu("Concat axis 1 of 3", "Concat", {{"axis", int64_t{1}}},
                     {input({2, 3, 4}), input({2, 1, 4}), weight({2, 5, 4})}, {{2, 9, 4}});
  expect_matches_cpu("Concat axis 0", "Concat", {{"axis", int64_t{0}}},
                     {input({1, 6}), input({3, 6})}, {{4, 6}});
  expect_matches_cpu("Concat axis -1", "Concat", {{"axis", int64_t{-1}}},
                     {input({2, 2, 3}), input({2, 2, 5})}, {{2, 2, 8}});
  expect_matches_cpu("Concat one input", "Concat", {{"axis", int64_t{0}}}, {input({4, 2})},
                     {{4, 2}});
  const Shape x = {2, 3, 4, 5};
  const std::vector<std::pair<Ints, Shape>> perms = {{{0, 2, 3, 1}, {2, 4, 5, 3}},
                                                     {{3, 2, 1, 0}, {5, 4, 3, 2}},
                                                     {{1, 0, 2, 3}, {3, 2, 4, 5}},
                                                     {{}, {5, 4, 3, 2}}};
  for (const auto& [perm, y] : perms) {
    AttributeMap attrs;
    if (!perm.empty()) attrs["perm"] = perm;
    expect_matches_cpu("Transpose rank 4", "Transpose", attrs, {input(x)}, {y});
  }
  expect_matches_cpu("Transpose rank 6", "Transpose", {{"perm", Ints{5, 0, 3, 1, 4, 2}}},
                     {input({2, 1, 3, 2, 2, 3})}, {{3, 2, 2, 1, 2, 3}});
}

TEST_P(NodeOpsTest, SplitAndGatherMatchTheCpu) {
  expect_matches_cpu("Split sizes input", "Split", {{"axis", int64_t{1}}},
                     {input({2, 6, 3}), host_ints({3}, {2, 3, 1})},
                     {{2, 2, 3}, {2, 3, 3}, {2, 1, 3}});
  expect_matches_cpu("Split equal", "Split", {{"axis", int64_t{-1}}}, {input({3, 4, 6})},
                     {{3, 4, 2}, {3, 4, 2}, {3, 4, 2}});
  expect_matches_cpu("Split attribute (opset 11)", "Split",
                     {{"axis", int64_t{0}}, {"split", Ints{1, 4}}}, {input({5, 7})},
                     {{1, 7}, {4, 7}}, 11);
  expect_matches_cpu("Gather scalar index", "Gather", {{"axis", int64_t{1}}},
                     {input({2, 5, 8}), host_ints({}, {0})}, {{2, 8}});
  expect_matches_cpu("Gather negative indices", "Gather", {{"axis", int64_t{0}}},
                     {input({6, 3}), host_ints({3}, {2, -1, 0})}, {{3, 3}});
  expect_matches_cpu("Gather 2-D indices", "Gather", {{"axis", int64_t{-1}}},
                     {input({2, 3, 7}), host_ints({2, 2}, {6, 1, 0, 3})}, {{2, 3, 2, 2}});
}

TEST_P(NodeOpsTest, ExpandAndCastToFloat) {
  expect_matches_cpu("Expand", "Expand", {}, {input({3, 1}), host_ints({3}, {2, 1, 4})},
                     {{2, 3, 4}});
  expect_matches_cpu("Expand to a smaller rank", "Expand", {},
                     {input({2, 1, 5}), host_ints({2}, {3, 1})}, {{2, 3, 5}});
  expect_matches_cpu("Cast to float", "Cast", {{"to", int64_t{1}}}, {input({4, 5})}, {{4, 5}});
}

TEST_P(NodeOpsTest, ReductionsMatchTheCpu) {
  const Shape x{2, 3, 4};
  expect_matches_cpu("ReduceSum axes input", "ReduceSum", {}, {input(x), host_ints({1}, {1})},
                     {{2, 1, 4}}, 13);
  expect_matches_cpu("ReduceSum noop with empty axes", "ReduceSum",
                     {{"noop_with_empty_axes", int64_t{1}}}, {input(x)}, {x}, 13);
  expect_matches_cpu("ReduceMean two axes, keepdims 0", "ReduceMean",
                     {{"axes", Ints{0, 2}}, {"keepdims", int64_t{0}}}, {input(x)}, {{3}}, 13);
  // Over trailing axes: rows of 49 (a work group each), of 4 (a work item each).
  expect_matches_cpu("ReduceMean spatial axes, keepdims 0", "ReduceMean",
                     {{"axes", Ints{2, 3}}, {"keepdims", int64_t{0}}}, {input({2, 6, 7, 7})},
                     {{2, 6}}, 13);
  expect_matches_cpu("ReduceMean last axis", "ReduceMean", {{"axes", Ints{-1}}}, {input(x)},
                     {{2, 3, 1}}, 13);
  expect_matches_cpu("ReduceMax every axis", "ReduceMax", {}, {input(x)}, {{1, 1, 1}}, 13);
  expect_matches_cpu("ReduceMin last axis", "ReduceMin", {{"axes", Ints{-1}}}, {input(x)},
                     {{2, 3, 1}}, 13);
  expect_matches_cpu("ReduceProd", "ReduceProd", {{"axes", Ints{1}}}, {input(x, 0.5f, 1.5f)},
                     {{2, 1, 4}}, 13);
  for (const char* op : {"ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSumExp"}) {
    expect_matches_cpu(op, op, {{"axes", Ints{0, 1}}}, {input(x)}, {{1, 1, 4}}, 13);
  }
  expect_matches_cpu("ReduceLogSum", "ReduceLogSum", {{"axes", Ints{2}}}, {input(x, 0.1f, 2.0f)},
                     {{2, 3, 1}}, 13);
  expect_matches_cpu("ReduceMean rank 6", "ReduceMean", {{"axes", Ints{1, 3, 5}}},
                     {input({2, 3, 1, 2, 2, 5})}, {{2, 1, 1, 1, 2, 1}}, 13);
}

TEST_P(NodeOpsTest, VariadicAndBinaryOpsMatchTheCpu) {
  for (const char* op : {"Sum", "Mean", "Max", "Min"}) {
    expect_matches_cpu(std::string(op) + " of one", op, {}, {input({3, 4})}, {{3, 4}});
    expect_matches_cpu(std::string(op) + " of three", op, {},
                       {input({2, 3, 4}), input({3, 1}), input({4})}, {{2, 3, 4}});
  }
  expect_matches_cpu("Sum of two broadcast", "Sum", {}, {input({3, 1}), input({1, 5})}, {{3, 5}});
  expect_matches_cpu("PRelu", "PRelu", {}, {input({2, 3, 4}), weight({3, 1})}, {{2, 3, 4}});
  expect_matches_cpu("Mod fmod", "Mod", {{"fmod", int64_t{1}}},
                     {input({4, 5}, -6, 6), input({5}, 0.5f, 2.0f)}, {{4, 5}});
}

TEST_P(NodeOpsTest, DepthSpaceAndGlobalMaxPoolMatchTheCpu) {
  expect_matches_cpu("DepthToSpace DCR", "DepthToSpace", {{"blocksize", int64_t{2}}},
                     {input({2, 8, 3, 5})}, {{2, 2, 6, 10}});
  expect_matches_cpu("DepthToSpace CRD", "DepthToSpace",
                     {{"blocksize", int64_t{2}}, {"mode", std::string("CRD")}},
                     {input({1, 12, 2, 3})}, {{1, 3, 4, 6}});
  expect_matches_cpu("SpaceToDepth", "SpaceToDepth", {{"blocksize", int64_t{3}}},
                     {input({2, 2, 6, 9})}, {{2, 18, 2, 3}});
  expect_matches_cpu("GlobalMaxPool", "GlobalMaxPool", {}, {input({2, 3, 7, 5})}, {{2, 3, 1, 1}});
}

TEST_P(NodeOpsTest, SliceMatchesTheCpu) {
  expect_matches_cpu("Slice steps and negative axes", "Slice", {},
                     {input({4, 6, 5}), host_ints({2}, {1, -1}), host_ints({2}, {4, 0}),
                      host_ints({2}, {0, -1}), host_ints({2}, {2, -2})},
                     {{2, 6, 2}});
  expect_matches_cpu(
      "Slice clamped ends", "Slice", {},
      {input({3, 8}), host_ints({1}, {2}), host_ints({1}, {INT64_MAX}), host_ints({1}, {1})},
      {{3, 6}});
  expect_matches_cpu(
      "Slice of rank 7 (merged to 3)", "Slice", {},
      {input({2, 4, 3, 2, 2, 1, 3}), host_ints({1}, {1}), host_ints({1}, {3}), host_ints({1}, {1})},
      {{2, 2, 3, 2, 2, 1, 3}});
  expect_matches_cpu("Slice attributes (opset 9)", "Slice",
                     {{"starts", Ints{0, 1}}, {"ends", Ints{2, 3}}, {"axes", Ints{0, 2}}},
                     {input({3, 2, 4})}, {{2, 2, 2}}, 9);
}

TEST_P(NodeOpsTest, TriluMatchesTheCpu) {
  expect_matches_cpu("Trilu upper", "Trilu", {}, {input({2, 4, 5})}, {{2, 4, 5}});
  expect_matches_cpu("Trilu lower, k -1", "Trilu", {{"upper", int64_t{0}}},
                     {input({3, 6}), host_ints({}, {-1})}, {{3, 6}});
  expect_matches_cpu("Trilu k past the matrix", "Trilu", {},
                     {input({5, 3}), host_ints({}, {INT64_MAX})}, {{5, 3}});
}

TEST_P(NodeOpsTest, PadAndTileMatchTheCpu) {
  for (const char* mode : {"constant", "edge", "reflect", "wrap"}) {
    expect_matches_cpu(
        std::string("Pad ") + mode, "Pad", {{"mode", std::string(mode)}},
        {input({2, 3, 4}), host_ints({6}, {0, 2, 1, 1, 1, 3}), host_floats({}, {1.5f})},
        {{3, 6, 8}}, 18);
  }
  expect_matches_cpu("Pad cropping, axes", "Pad", {{"mode", std::string("reflect")}},
                     {input({3, 5}), host_ints({2}, {-1, 4}), omitted(), host_ints({1}, {1})},
                     {{3, 8}}, 18);
  expect_matches_cpu("Pad attributes (opset 2)", "Pad",
                     {{"pads", Ints{1, 0, 0, 2}}, {"value", 2.0f}}, {input({2, 3})}, {{3, 5}}, 2);
  expect_matches_cpu("Tile", "Tile", {}, {input({2, 1, 3}), host_ints({3}, {2, 3, 1})},
                     {{4, 3, 3}});
}

TEST_P(NodeOpsTest, DetMatchesTheCpu) {
  expect_matches_cpu("Det 2x2", "Det", {}, {input({2, 2})}, {{}});
  expect_matches_cpu("Det batch of 5x5", "Det", {}, {input({2, 3, 5, 5})}, {{2, 3}});
}

TEST_P(NodeOpsTest, LrnAndEyeLikeMatchTheCpu) {
  expect_matches_cpu("LRN", "LRN", {{"size", int64_t{3}}, {"alpha", 0.02f}, {"beta", 0.6f}},
                     {input({2, 5, 3, 4})}, {{2, 5, 3, 4}});
  expect_matches_cpu("LRN even size, defaults", "LRN", {{"size", int64_t{4}}}, {input({1, 6, 7})},
                     {{1, 6, 7}});
  expect_matches_cpu("EyeLike k 1", "EyeLike", {{"k", int64_t{1}}}, {input({3, 5})}, {{3, 5}});
}

TEST_P(NodeOpsTest, ViewsCopyTheBytes) {
  expect_matches_cpu("Identity", "Identity", {}, {input({3, 4})}, {{3, 4}});
  expect_matches_cpu("Dropout in inference", "Dropout", {},
                     {input({3, 4}), host_floats({}, {0.3f})}, {{3, 4}});
  expect_matches_cpu("Reshape", "Reshape", {}, {input({3, 4}), host_ints({2}, {2, 6})}, {{2, 6}});
  expect_matches_cpu("Flatten", "Flatten", {{"axis", int64_t{2}}}, {input({2, 3, 4})}, {{6, 4}});
  expect_matches_cpu("Squeeze", "Squeeze", {}, {input({1, 5, 1}), host_ints({1}, {0})}, {{5, 1}});
  expect_matches_cpu("Unsqueeze", "Unsqueeze", {}, {input({5}), host_ints({1}, {1})}, {{5, 1}});
}

// Every op the backend advertises has a conformance case in these files.
TEST(NodeOpsCheck, EverySupportedOpHasAConformanceCase) {
  // clang-format off
  const std::set<std::string> covered = {
      "Conv", "ConvTranspose", "Gemm", "MatMul", "MaxPool", "AveragePool", "GlobalAveragePool",
      "GlobalMaxPool", "Sum", "Mean", "PRelu", "Mod", "DepthToSpace", "SpaceToDepth",
      "LogSoftmax", "Hardmax", "Slice",
      "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sqrt", "Exp", "Log", "Neg", "Abs", "Reciprocal", "Erf",
      "Relu", "LeakyRelu", "Clip", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Gelu",
      "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh",
      "Floor", "Ceil", "Round", "Sign", "Softplus", "Softsign", "Elu", "Selu", "ThresholdedRelu",
      "Shrink",
      "IsInf",  // a bool output: tests/onnx_node (test_isinf*)
      "IsNaN", "Where",  // with bool values: tests/scheduler/executor_test.cpp
      "Cast", "Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "And", "Or", "Xor",
      "Not",  // likewise
      "Expand",
      "Softmax", "LayerNormalization", "InstanceNormalization", "BatchNormalization", "Resize",
      "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
      "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp",
      "Concat", "Split",
      "Gather", "Transpose", "Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze",
      "Trilu", "Dropout", "Pad", "Tile",
      "QuantizeLinear", "DequantizeLinear",  // with 8-bit values: program_test.cpp
      "ArgMax", "ArgMin",  // int64 outputs: program_host_inputs_test.cpp
      // int64 indices on the device: program_integer_test.cpp
      "GatherElements", "ScatterElements", "Scatter", "GatherND", "ScatterND", "TopK",
      "ConstantOfShape", "Range", "OneHot", "ReverseSequence",
      "LRN", "EyeLike", "Det",
      // integer products of 8-bit data: program_test.cpp
      "MatMulInteger", "ConvInteger", "QLinearMatMul", "QLinearConv",
      // integer and float16 data: program_integer_test.cpp
      "BitShift", "CastLike",
      "GridSample", "DFT", "STFT", "Upsample",  // node_ops_spatial_test.cpp
      "DynamicQuantizeLinear"};  // program_test.cpp
  // clang-format on
  for (const std::string& op : supported_ops()) EXPECT_TRUE(covered.count(op)) << op;
}

TEST(NodeOpsCheck, RejectionsNameTheReason) {
  auto expect_reason = [](const std::optional<Refusal>& got, ReasonCode reason,
                          const std::string& detail) {
    ASSERT_TRUE(got.has_value()) << detail;
    EXPECT_EQ(got->reason, reason) << got->detail;
    EXPECT_NE(got->detail.find(detail), std::string::npos) << got->detail;
  };
  expect_reason(check_one("NonZero", {}, {input({4})}, {{4}}), ReasonCode::kOpUnsupported,
                "no kernel for op NonZero");
  expect_reason(check_one("Gelu", {{"approximate", std::string("fast")}}, {input({4})}, {{4}}),
                ReasonCode::kAttributeUnsupported, "approximate=fast");
  expect_reason(check_one("Clip", {}, {input({4}), input({2}), omitted()}, {{4}}),
                ReasonCode::kShapeUnsupported, "not a scalar");
  expect_reason(check_one("LayerNormalization", {{"stash_type", int64_t{0}}},
                          {input({2, 4}), weight({4})}, {{2, 4}}),
                ReasonCode::kAttributeUnsupported, "stash_type=0");
  expect_reason(check_one("Transpose", {}, {input({1, 1, 1, 1, 1, 1, 2})}, {{2, 1, 1, 1, 1, 1, 1}}),
                ReasonCode::kShapeUnsupported, "rank > 6");
  expect_reason(check_one("Reshape", {}, {input({4, 2}), input({2})}, {{2, 4}}),
                ReasonCode::kAttributeUnsupported, "neither a constant");
  // Indices given per run are read on the device: integers only.
  expect_reason(check_one("Gather", {}, {input({4, 2}), input({2})}, {{2, 2}}),
                ReasonCode::kDtypeUnsupported, "Gather input 1 dtype f32");
  expect_reason(check_one("Gather", {}, {input({4, 2}), host_ints({1}, {4})}, {{1, 2}}),
                ReasonCode::kShapeUnsupported, "out of range");
  expect_reason(check_one("Softmax", {{"axis", int64_t{3}}}, {input({2, 3})}, {{2, 3}}),
                ReasonCode::kAttributeUnsupported, "axis=3");
  expect_reason(check_one("ReduceSum", {}, {input({2, 0, 3}), host_ints({1}, {1})}, {{2, 1, 3}}),
                ReasonCode::kShapeUnsupported, "over an empty axis");
  expect_reason(check_one("ReduceMax", {{"axes", Ints{1, -1}}}, {input({2, 3})}, {{2, 1}}),
                ReasonCode::kAttributeUnsupported, "given twice");
  expect_reason(check_one("Mod", {}, {input({4}), input({4})}, {{4}}),
                ReasonCode::kAttributeUnsupported, "fmod=0");
  expect_reason(
      check_one("DepthToSpace", {{"blocksize", int64_t{3}}}, {input({1, 8, 2, 2})}, {{1, 1, 6, 6}}),
      ReasonCode::kAttributeUnsupported, "blocksize 3");
  expect_reason(check_one("Sum", {}, {input({3, 1}), input({3, 1}), input({1, 4})}, {{3, 4}}),
                ReasonCode::kShapeUnsupported, "do not broadcast to its output");
  expect_reason(check_one("Relu", {}, {input({Shape{kDynamicDim, 3}})}, {{kDynamicDim, 3}}),
                ReasonCode::kShapeUnsupported, "shape");
  // A non-float data input.
  OneNodeGraph g = one_node_graph(
      "Relu", {}, {host_ints({3}, {1, 2, 3})}, {{3}}, 17, [](float v) { return v; }, 1);
  expect_reason(check_node(g.graph, g.graph.node(g.node)), ReasonCode::kDtypeUnsupported,
                "dtype i64");
}

// f64, i16 and the wider unsigned types are not held on the device: each node that reads or
// writes one is refused (the CPU runs it), with the dtype named.
TEST(NodeOpsCheck, WiderDtypesAreRefusedPerNode) {
  for (DType dtype : {DType::kF64, DType::kI16, DType::kU16, DType::kU32, DType::kU64}) {
    const std::string name(dtype_name(dtype));
    Graph graph;
    const ValueId x = graph.add_value("x", dtype, Shape({2, 3}));
    const ValueId f = graph.add_value("f", DType::kF32, Shape({2, 3}));
    const ValueId y = graph.add_value("y", dtype, Shape({2, 3}));
    const ValueId z = graph.add_value("z", dtype, Shape({2, 3}));
    graph.add_input(x);
    graph.add_input(f);
    graph.add_output(y);
    graph.add_output(z);
    const NodeId add = graph.add_node(Node{"add", "Add", "", {x, x}, {y}, {}});
    const NodeId cast =
        graph.add_node(Node{"cast", "Cast", "", {f}, {z}, {{"to", int64_t{dtype_to_onnx(dtype)}}}});
    for (NodeId id : {add, cast}) {
      const auto refusal = check_node(graph, graph.node(id));
      ASSERT_TRUE(refusal.has_value()) << name;
      EXPECT_EQ(refusal->reason, ReasonCode::kDtypeUnsupported) << refusal->detail;
      EXPECT_NE(refusal->detail.find("dtype " + name), std::string::npos) << refusal->detail;
    }
  }
}

}  // namespace
}  // namespace hsched::opencl
