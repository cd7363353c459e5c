// Devices' check(): the CPU's answers come from its real kernel registry; a profile's from its
// op list, precisions and the rules every device compiler applies (dtype, shape, attributes,
// memory). Each refusal is a Rejection naming what is at fault.
#include <string>

#include <gtest/gtest.h>

#include "backends/backend.h"
#include "scheduler/config/discover.h"
#include "scheduler/plan_checks.h"

namespace hsched {
namespace {

using test::test_device;

struct OneNode {
  Graph graph;
  NodeId node = kNoNode;
};

// x (dtype, dims) -> op -> y (same dtype and dims), built directly: no import, no folding.
OneNode one_node(const std::string& op, DType dtype, const std::vector<int64_t>& dims,
                 AttributeMap attributes = {}, const std::string& domain = "") {
  OneNode one;
  const ValueId x = one.graph.add_value("x", dtype, Shape(dims));
  const ValueId y = one.graph.add_value("y", dtype, Shape(dims));
  one.graph.add_input(x);
  one.graph.add_output(y);
  one.node = one.graph.add_node(Node{"n", op, domain, {x}, {y}, std::move(attributes)});
  return one;
}

// x -> Conv(x, w) -> y, stride 1 and "same" padding: y has x's size with w's output channels.
// `constant`: w is a constant (zeros), else a graph input.
OneNode conv(const std::vector<int64_t>& x, const std::vector<int64_t>& w, int64_t group = 1,
             bool constant = false) {
  OneNode one;
  std::vector<int64_t> y = x;
  y[1] = w[0];
  const ValueId xv = one.graph.add_value("x", DType::kF32, Shape(x));
  const ValueId wv = constant ? one.graph.add_constant("w", Tensor(DType::kF32, w))
                              : one.graph.add_value("w", DType::kF32, Shape(w));
  const ValueId yv = one.graph.add_value("y", DType::kF32, Shape(y));
  one.graph.add_input(xv);
  if (!constant) one.graph.add_input(wv);
  one.graph.add_output(yv);
  one.node = one.graph.add_node(Node{"conv", "Conv", "", {xv, wv}, {yv}, {{"group", group}}});
  return one;
}

DeviceProfile gpu(std::vector<std::string> ops = {"*"}) {
  return test_device("gpu0", DeviceKind::kGpu, DeviceApi::kOpenCl,
                     {{Precision::kFp32, 4000}, {Precision::kFp16, 8000}}, std::move(ops));
}

DeviceProfile cpu() {
  return test_device("cpu0", DeviceKind::kCpu, DeviceApi::kHost, {{Precision::kFp32, 500}}, {"*"});
}

void expect_rejected(const std::optional<Rejection>& rejection, ReasonCode reason,
                     const std::string& detail_part) {
  ASSERT_TRUE(rejection.has_value());
  EXPECT_EQ(rejection->reason, reason) << reason_code_name(rejection->reason);
  EXPECT_NE(rejection->detail.find(detail_part), std::string::npos) << rejection->detail;
}

TEST(CpuCapabilityTest, AnswersFromTheKernelRegistry) {
  const auto capability = config::backends().open(cpu());
  const OneNode relu = one_node("Relu", DType::kF32, {1, 8});
  EXPECT_FALSE(capability->check(relu.graph, relu.node, Precision::kFp32).has_value());

  const OneNode unique = one_node("Unique", DType::kF32, {3, 3});
  const auto rejection = capability->check(unique.graph, unique.node, Precision::kFp32);
  expect_rejected(rejection, ReasonCode::kOpUnsupported, "no kernel for op 'Unique'");
  EXPECT_EQ(rejection->device, "cpu0");
  EXPECT_EQ(rejection->node, unique.node);
}

TEST(CpuCapabilityTest, TakesWiderDtypesWhereAKernelDoes) {
  const auto capability = config::backends().open(cpu());
  for (DType dtype : {DType::kF64, DType::kI16, DType::kU16, DType::kU32, DType::kU64}) {
    const OneNode max = one_node("Max", dtype, {4});
    EXPECT_FALSE(capability->check(max.graph, max.node, Precision::kFp32).has_value())
        << dtype_name(dtype);
  }
}

// fp32 everywhere; bf16 only in convolutions and matmuls, and only on a CPU whose profile has a
// bf16 peak (AVX512_BF16); int8 likewise (a VNNI peak), with constant weights; no fp16.
TEST(CpuCapabilityTest, ComputesFp32Bf16AndInt8InConvolutionsAndMatMuls) {
  const auto capability = config::backends().open(cpu());
  const OneNode relu = one_node("Relu", DType::kF32, {1, 8});
  const auto fp16 = capability->check(relu.graph, relu.node, Precision::kFp16);
  expect_rejected(fp16, ReasonCode::kPrecisionNotAllowed, "fp32, bf16 and int8 only");
  EXPECT_EQ(fp16->precision, Precision::kFp16);
  expect_rejected(capability->check(relu.graph, relu.node, Precision::kInt8),
                  ReasonCode::kPrecisionNotAllowed, "int8 in Conv, MatMul and Gemm only");
  expect_rejected(capability->check(relu.graph, relu.node, Precision::kBf16),
                  ReasonCode::kPrecisionNotAllowed, "bf16 in Conv, ConvTranspose, MatMul and Gemm");
  const OneNode matmul = one_node("MatMul", DType::kF32, {4, 4});
  expect_rejected(capability->check(matmul.graph, matmul.node, Precision::kBf16),
                  ReasonCode::kPrecisionNotAllowed, "cpu0 does not compute bf16");
  DeviceProfile with_bf16 = cpu();
  with_bf16.peak_gflops[Precision::kBf16] = 1000;
  const auto bf16_cpu = config::backends().open(with_bf16);
  EXPECT_FALSE(bf16_cpu->check(matmul.graph, matmul.node, Precision::kBf16));
  // A convolution computes bf16 where that saves more than converting its input costs: a 3x3
  // convolution over 64 channels does; a depthwise one, a 1x1 projection to 24 channels and a
  // small 3x3 one at 7x7 stay fp32, with the figures.
  const OneNode wide = conv({1, 64, 56, 56}, {64, 64, 3, 3});
  EXPECT_FALSE(bf16_cpu->check(wide.graph, wide.node, Precision::kBf16));
  const OneNode depthwise = conv({1, 64, 56, 56}, {64, 1, 3, 3}, 64);
  expect_rejected(bf16_cpu->check(depthwise.graph, depthwise.node, Precision::kBf16),
                  ReasonCode::kPrecisionNotAllowed, "this convolution in fp32");
  expect_rejected(bf16_cpu->check(depthwise.graph, depthwise.node, Precision::kBf16),
                  ReasonCode::kPrecisionNotAllowed, "reduction 9;");
  const OneNode projection = conv({1, 144, 56, 56}, {24, 144, 1, 1});
  expect_rejected(bf16_cpu->check(projection.graph, projection.node, Precision::kBf16),
                  ReasonCode::kPrecisionNotAllowed, "24 per input value");
  const OneNode small = conv({1, 64, 7, 7}, {64, 64, 3, 3});
  expect_rejected(bf16_cpu->check(small.graph, small.node, Precision::kBf16),
                  ReasonCode::kPrecisionNotAllowed, "1.81 M multiply-adds");

  // int8: dynamic quantization needs constant weights, the profile's int8 peak (VNNI) and the
  // same size as bf16.
  const OneNode wide_constant = conv({1, 64, 56, 56}, {64, 64, 3, 3}, 1, true);
  expect_rejected(capability->check(wide_constant.graph, wide_constant.node, Precision::kInt8),
                  ReasonCode::kPrecisionNotAllowed, "cpu0 does not compute int8");
  DeviceProfile with_int8 = cpu();
  with_int8.peak_gflops[Precision::kInt8] = 2000;
  const auto int8_cpu = config::backends().open(with_int8);
  EXPECT_FALSE(int8_cpu->check(wide_constant.graph, wide_constant.node, Precision::kInt8));
  expect_rejected(int8_cpu->check(wide.graph, wide.node, Precision::kInt8),
                  ReasonCode::kPrecisionNotAllowed, "constant f32 weights");
  expect_rejected(int8_cpu->check(matmul.graph, matmul.node, Precision::kInt8),
                  ReasonCode::kPrecisionNotAllowed, "constant f32 weights");
  const OneNode depthwise_constant = conv({1, 64, 56, 56}, {64, 1, 3, 3}, 64, true);
  expect_rejected(
      int8_cpu->check(depthwise_constant.graph, depthwise_constant.node, Precision::kInt8),
      ReasonCode::kPrecisionNotAllowed, "int8 saves less than converting its input costs");
  expect_rejected(int8_cpu->check(relu.graph, relu.node, Precision::kInt8),
                  ReasonCode::kPrecisionNotAllowed, "int8 in Conv, MatMul and Gemm only");
}

TEST(CpuCapabilityTest, RefusesOtherDomainsAndOpsTheProfileDoesNotList) {
  const auto capability = config::backends().open(cpu());
  const OneNode custom = one_node("Relu", DType::kF32, {1, 8}, {}, "com.microsoft");
  expect_rejected(capability->check(custom.graph, custom.node, Precision::kFp32),
                  ReasonCode::kOpUnsupported, "com.microsoft");

  DeviceProfile narrow = cpu();
  narrow.ops = {"Conv"};
  const auto narrow_capability = config::backends().open(narrow);
  const OneNode relu = one_node("Relu", DType::kF32, {1, 8});
  expect_rejected(narrow_capability->check(relu.graph, relu.node, Precision::kFp32),
                  ReasonCode::kOpUnsupported, "not in cpu0's op list");
}

TEST(ProfileCapabilityTest, OpListAndPrecisions) {
  const auto capability = open_profile_device(gpu({"Relu"}));
  const OneNode relu = one_node("Relu", DType::kF32, {1, 8});
  EXPECT_FALSE(capability->check(relu.graph, relu.node, Precision::kFp16).has_value());
  expect_rejected(capability->check(relu.graph, relu.node, Precision::kBf16),
                  ReasonCode::kPrecisionNotAllowed, "gpu0 does not compute bf16");
  const OneNode tanh = one_node("Tanh", DType::kF32, {1, 8});
  expect_rejected(capability->check(tanh.graph, tanh.node, Precision::kFp16),
                  ReasonCode::kOpUnsupported, "'Tanh'");
}

TEST(ProfileCapabilityTest, ReducedPrecisionNeedsFloatData) {
  const auto capability = open_profile_device(gpu());
  const OneNode add = one_node("Neg", DType::kI64, {4});
  expect_rejected(capability->check(add.graph, add.node, Precision::kFp16),
                  ReasonCode::kDtypeUnsupported, "i64");
  EXPECT_FALSE(capability->check(add.graph, add.node, Precision::kFp32).has_value());
}

TEST(ProfileCapabilityTest, ShapesMustBeStaticAndOfBoundedRank) {
  const auto capability = open_profile_device(gpu());
  const OneNode dynamic = one_node("Relu", DType::kF32, {kDynamicDim, 8});
  expect_rejected(capability->check(dynamic.graph, dynamic.node, Precision::kFp32),
                  ReasonCode::kShapeUnsupported, "dynamic shape ?x8");
  const OneNode deep = one_node("Relu", DType::kF32, {1, 1, 1, 1, 1, 1, 1, 1, 2});
  expect_rejected(capability->check(deep.graph, deep.node, Precision::kFp32),
                  ReasonCode::kShapeUnsupported, "rank 9 > 8");
}

TEST(ProfileCapabilityTest, AttributeRulesNameAttributeAndValue) {
  // Cubic Resize and auto_pad: the OpenCL backend's (its check_node decides), refused on an NPU.
  const auto gpu_capability = open_profile_device(gpu());
  const auto npu_capability = open_profile_device(test_device(
      "npu0", DeviceKind::kNpu, DeviceApi::kLevelZero, {{Precision::kFp16, 5000}}, {"*"}));
  const OneNode cubic =
      one_node("Resize", DType::kF32, {1, 1, 4, 4}, {{"mode", std::string("cubic")}});
  EXPECT_FALSE(gpu_capability->check(cubic.graph, cubic.node, Precision::kFp16).has_value());
  expect_rejected(npu_capability->check(cubic.graph, cubic.node, Precision::kFp16),
                  ReasonCode::kAttributeUnsupported, "attribute mode=cubic");
  const OneNode same =
      one_node("Conv", DType::kF32, {1, 1, 4, 4}, {{"auto_pad", std::string("SAME_UPPER")}});
  EXPECT_FALSE(gpu_capability->check(same.graph, same.node, Precision::kFp16).has_value());
  expect_rejected(npu_capability->check(same.graph, same.node, Precision::kFp16),
                  ReasonCode::kAttributeUnsupported, "attribute auto_pad=SAME_UPPER");
  const OneNode transposed = one_node("ConvTranspose", DType::kF32, {1, 1, 4, 4},
                                      {{"auto_pad", std::string("SAME_LOWER")}});
  EXPECT_FALSE(
      gpu_capability->check(transposed.graph, transposed.node, Precision::kFp16).has_value());
  expect_rejected(npu_capability->check(transposed.graph, transposed.node, Precision::kFp16),
                  ReasonCode::kAttributeUnsupported, "attribute auto_pad=SAME_LOWER");

  // Reflect padding: fine on the GPU, refused by the NPU rule.
  const OneNode reflect = one_node("Pad", DType::kF32, {1, 4}, {{"mode", std::string("reflect")}});
  EXPECT_FALSE(gpu_capability->check(reflect.graph, reflect.node, Precision::kFp16).has_value());
  expect_rejected(npu_capability->check(reflect.graph, reflect.node, Precision::kFp16),
                  ReasonCode::kAttributeUnsupported, "attribute mode=reflect");
}

TEST(ProfileCapabilityTest, WeightsAndActivationsMustFitInMemory) {
  DeviceProfile small = gpu();
  small.memory_bytes = 6000;
  const auto capability = open_profile_device(small);
  // x and y: 1024 floats each: 8 KiB in fp32, 4 KiB in fp16.
  const OneNode relu = one_node("Relu", DType::kF32, {1, 1024});
  expect_rejected(capability->check(relu.graph, relu.node, Precision::kFp32),
                  ReasonCode::kMemoryExceeded, "gpu0 has");
  EXPECT_FALSE(capability->check(relu.graph, relu.node, Precision::kFp16).has_value());
}

}  // namespace
}  // namespace hsched
