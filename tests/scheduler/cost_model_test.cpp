// The cost model's figures on hand-built one-node graphs: roofline (compute- vs memory-bound),
// precision scaling of bytes, launch and compile costs, calibration, transfers.
#include "scheduler/cost_model.h"

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "scheduler/partitioner.h"

namespace hsched::sched {
namespace {

// 1 TFLOP/s fp32 and 2 TFLOP/s fp16 at 50% on conv/linear (25% elsewhere), 100 GB/s.
DeviceProfile gpu() {
  DeviceProfile device;
  device.id = "gpu0";
  device.kind = DeviceKind::kGpu;
  device.api = DeviceApi::kOpenCl;
  device.peak_gflops = {{Precision::kFp32, 1000}, {Precision::kFp16, 2000}};
  device.efficiency = {{OpClass::kConvLinear, 0.5}};
  device.default_efficiency = 0.25;
  device.memory_bandwidth_gbps = 100;
  return device;
}

DeviceProfile cpu() {
  DeviceProfile device;
  device.id = "cpu0";
  device.kind = DeviceKind::kCpu;
  device.api = DeviceApi::kHost;
  device.peak_gflops = {{Precision::kFp32, 500}};
  device.memory_bandwidth_gbps = 50;
  device.ops = {"*"};
  return device;
}

// Y [m, n] = A [m, k] x B [k, n] in f32: 2mnk FLOP, 4 (mk + kn + mn) bytes.
struct MatMulGraph {
  MatMulGraph(int64_t m, int64_t k, int64_t n) {
    const ValueId a = graph.add_value("a", DType::kF32, Shape{m, k});
    const ValueId b = graph.add_constant("b", Tensor(DType::kF32, {k, n}));
    const ValueId y = graph.add_value("y", DType::kF32, Shape{m, n});
    Node matmul;
    matmul.name = "matmul";
    matmul.op_type = "MatMul";
    matmul.inputs = {a, b};
    matmul.outputs = {y};
    node = graph.add_node(std::move(matmul));
    flop = 2.0 * static_cast<double>(m * n * k);
    bytes = 4.0 * static_cast<double>(m * k + k * n + m * n);
  }
  Graph graph;
  NodeId node = kNoNode;
  double flop = 0;
  double bytes = 0;
};

class CostModelTest : public ::testing::Test {
 protected:
  const DeviceProfile& device(int i) const { return target_.devices[static_cast<size_t>(i)]; }
  Target target_{"test", "hand-built", {cpu(), gpu()}};
};

TEST_F(CostModelTest, LargeMatMulIsComputeBound) {
  const MatMulGraph g(1024, 1024, 1024);
  const CostModel model(target_, 1);
  const auto [compute_ms, memory_ms] =
      model.roofline_ms(g.graph, g.node, device(1), Precision::kFp32);
  EXPECT_DOUBLE_EQ(compute_ms, g.flop / (1000 * 0.5 * 1e6));  // about 4.3 ms
  EXPECT_DOUBLE_EQ(memory_ms, g.bytes / (100 * 1e6));         // about 0.13 ms
  EXPECT_GT(compute_ms, memory_ms);
  EXPECT_DOUBLE_EQ(model.node_ms(g.graph, g.node, device(1), Precision::kFp32), compute_ms);
}

TEST_F(CostModelTest, MatrixVectorProductIsMemoryBound) {
  const MatMulGraph g(1, 4096, 4096);
  const CostModel model(target_, 1);
  const auto [compute_ms, memory_ms] =
      model.roofline_ms(g.graph, g.node, device(1), Precision::kFp32);
  EXPECT_DOUBLE_EQ(compute_ms, g.flop / (1000 * 0.5 * 1e6));  // about 0.07 ms
  EXPECT_DOUBLE_EQ(memory_ms, g.bytes / (100 * 1e6));         // about 0.67 ms
  EXPECT_GT(memory_ms, compute_ms);
  EXPECT_DOUBLE_EQ(model.node_ms(g.graph, g.node, device(1), Precision::kFp32), memory_ms);
}

TEST_F(CostModelTest, Fp16HalvesBytesAndUsesItsOwnPeak) {
  const MatMulGraph g(1, 4096, 4096);
  const CostModel model(target_, 1);
  const auto fp32 = model.roofline_ms(g.graph, g.node, device(1), Precision::kFp32);
  const auto fp16 = model.roofline_ms(g.graph, g.node, device(1), Precision::kFp16);
  EXPECT_DOUBLE_EQ(fp16.second, fp32.second / 2);
  EXPECT_DOUBLE_EQ(fp16.first, g.flop / (2000 * 0.5 * 1e6));
}

// Gather: only the float tensors (data, output) scale; int64 indices keep 8 bytes each.
TEST_F(CostModelTest, IntegerTensorsDoNotScaleWithPrecision) {
  Graph graph;
  const ValueId data = graph.add_value("data", DType::kF32, Shape{1000, 64});
  const ValueId indices = graph.add_value("indices", DType::kI64, Shape{100});
  const ValueId out = graph.add_value("out", DType::kF32, Shape{100, 64});
  Node gather;
  gather.name = "gather";
  gather.op_type = "Gather";
  gather.inputs = {data, indices};
  gather.outputs = {out};
  const NodeId node = graph.add_node(std::move(gather));
  const CostModel model(target_, 1);
  const auto fp32 = model.roofline_ms(graph, node, device(1), Precision::kFp32);
  const auto fp16 = model.roofline_ms(graph, node, device(1), Precision::kFp16);
  EXPECT_EQ(fp32.first, 0.0);  // data movement: no FLOP
  EXPECT_DOUBLE_EQ(fp32.second, (4.0 * 64000 + 8.0 * 100 + 4.0 * 6400) / (100 * 1e6));
  EXPECT_DOUBLE_EQ(fp16.second, (2.0 * 64000 + 8.0 * 100 + 2.0 * 6400) / (100 * 1e6));
}

TEST_F(CostModelTest, OpClassWithoutEfficiencyUsesTheDefault) {
  Graph graph;
  const ValueId x = graph.add_value("x", DType::kF32, Shape{1 << 20});
  const ValueId y = graph.add_value("y", DType::kF32, Shape{1 << 20});
  Node relu;
  relu.name = "relu";
  relu.op_type = "Relu";
  relu.inputs = {x};
  relu.outputs = {y};
  const NodeId node = graph.add_node(std::move(relu));
  const CostModel model(target_, 1);
  EXPECT_DOUBLE_EQ(model.roofline_ms(graph, node, device(1), Precision::kFp32).first,
                   (1 << 20) / (1000 * 0.25 * 1e6));
}

TEST_F(CostModelTest, LaunchOverheadAndAmortisedCompileAreAdded) {
  DeviceProfile& gpu = target_.devices[1];
  gpu.launch_overhead_ms = 0.02;
  gpu.compile_ms_per_node = 10;
  gpu.compile_ms_per_partition = 50;
  const MatMulGraph g(1024, 1024, 1024);
  const CostModel model(target_, 100);
  const double roofline = model.roofline_ms(g.graph, g.node, gpu, Precision::kFp32).first;
  EXPECT_DOUBLE_EQ(model.node_ms(g.graph, g.node, gpu, Precision::kFp32),
                   roofline + 0.02 + 10.0 / 100);
  EXPECT_DOUBLE_EQ(model.partition_overhead_ms(gpu), 50.0 / 100);
  // No run count below one: the compile is paid at least once.
  EXPECT_DOUBLE_EQ(CostModel(target_, 0).partition_overhead_ms(gpu), 50.0);
}

TEST_F(CostModelTest, PrecisionTheDeviceLacksIsNotAllowed) {
  const MatMulGraph g(64, 64, 64);
  const CostModel model(target_, 1);
  EXPECT_EQ(model.node_ms(g.graph, g.node, device(1), Precision::kInt8), kNotAllowed);
  EXPECT_EQ(model.node_ms(g.graph, g.node, device(0), Precision::kFp16), kNotAllowed);
  const auto roofline = model.roofline_ms(g.graph, g.node, device(1), Precision::kBf16);
  EXPECT_EQ(roofline.first, kNotAllowed);
  EXPECT_EQ(roofline.second, kNotAllowed);
}

TEST_F(CostModelTest, CalibrationReplacesTheRoofline) {
  const MatMulGraph g(1024, 1024, 1024);
  Calibration calibration;
  calibration.node_ms[{"gpu0", "matmul", Precision::kFp16}] = 1.25;
  target_.devices[1].compile_ms_per_node = 4;
  const CostModel model(target_, 2, calibration);
  const DeviceProfile& gpu = target_.devices[1];
  EXPECT_DOUBLE_EQ(model.node_ms(g.graph, g.node, gpu, Precision::kFp16), 1.25 + 4.0 / 2);
  // Other precisions and devices keep the roofline.
  EXPECT_NE(model.node_ms(g.graph, g.node, gpu, Precision::kFp32), 1.25 + 4.0 / 2);
}

// A discrete GPU over PCIe (16 GB/s, 10 us), an integrated one and an NPU sharing host memory.
class TransferTest : public CostModelTest {
 protected:
  TransferTest() {
    DeviceProfile& gpu = target_.devices[1];
    gpu.transfer_bandwidth_gbps = 16;
    gpu.transfer_latency_ms = 0.01;
    DeviceProfile igpu = gpu;
    igpu.id = "gpu1";
    igpu.zero_copy = true;
    igpu.transfer_latency_ms = 0.005;
    DeviceProfile npu = igpu;
    npu.id = "npu0";
    npu.kind = DeviceKind::kNpu;
    npu.api = DeviceApi::kLevelZero;
    npu.transfer_latency_ms = 0.02;
    target_.devices[0].zero_copy = true;
    target_.devices.push_back(igpu);
    target_.devices.push_back(npu);
  }
};

TEST_F(TransferTest, SameDeviceIsFree) {
  const CostModel model(target_, 1);
  EXPECT_EQ(model.transfer_ms(1 << 30, device(1), device(1)), 0.0);
  EXPECT_EQ(model.transfer_ms(1 << 30, device(0), device(0)), 0.0);
}

TEST_F(TransferTest, ZeroCopyPaysOnlyTheLargerSyncLatency) {
  const CostModel model(target_, 1);
  EXPECT_DOUBLE_EQ(model.transfer_ms(1 << 30, device(0), device(2)), 0.005);
  EXPECT_DOUBLE_EQ(model.transfer_ms(1 << 30, device(2), device(3)), 0.02);
  EXPECT_DOUBLE_EQ(model.transfer_ms(1 << 30, device(3), device(2)), 0.02);
}

TEST_F(TransferTest, PcieCopiesPayBandwidthAndLatencyPerHop) {
  const CostModel model(target_, 1);
  const int64_t bytes = 16'000'000;  // 1 ms at 16 GB/s
  EXPECT_DOUBLE_EQ(model.transfer_ms(bytes, device(0), device(1)), 1.0 + 0.01);
  EXPECT_DOUBLE_EQ(model.transfer_ms(bytes, device(1), device(0)), 1.0 + 0.01);
  // Discrete GPU to the NPU: over PCIe to the host, then the NPU's sync.
  EXPECT_DOUBLE_EQ(model.transfer_ms(bytes, device(1), device(3)), 1.0 + 0.01 + 0.02);
  // Two discrete devices: both hops through the host.
  DeviceProfile other = device(1);
  other.id = "gpu2";
  other.transfer_bandwidth_gbps = 8;
  EXPECT_DOUBLE_EQ(model.transfer_ms(bytes, device(1), other), (1.0 + 0.01) + (2.0 + 0.01));
}

}  // namespace
}  // namespace hsched::sched
