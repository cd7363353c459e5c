// The cost model's figures on hand-built one-node graphs: roofline (compute- vs memory-bound),
// precision scaling of bytes, launch and compile costs, calibration, transfers.
#include "scheduler/planner/cost_model.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "scheduler/planner/partitioner.h"

namespace hsched::planner {
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

// y = Relu(x) over `elements` floats.
struct ReluGraph {
  explicit ReluGraph(int64_t elements) {
    const ValueId x = graph.add_value("x", DType::kF32, Shape{elements});
    const ValueId y = graph.add_value("y", DType::kF32, Shape{elements});
    Node relu;
    relu.name = "relu";
    relu.op_type = "Relu";
    relu.inputs = {x};
    relu.outputs = {y};
    node = graph.add_node(std::move(relu));
  }
  Graph graph;
  NodeId node = kNoNode;
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
  // The table counts for the rows gathered (6400 floats), the int64 indices keep their size.
  EXPECT_DOUBLE_EQ(fp32.second, (4.0 * 6400 + 8.0 * 100 + 4.0 * 6400) / (100 * 1e6));
  EXPECT_DOUBLE_EQ(fp16.second, (2.0 * 6400 + 8.0 * 100 + 2.0 * 6400) / (100 * 1e6));
}

TEST_F(CostModelTest, OpClassWithoutEfficiencyUsesTheDefault) {
  const ReluGraph g(1 << 20);
  const CostModel model(target_, 1);
  EXPECT_DOUBLE_EQ(model.roofline_ms(g.graph, g.node, device(1), Precision::kFp32).first,
                   (1 << 20) / (1000 * 0.25 * 1e6));
}

TEST_F(CostModelTest, LaunchOverheadAndAmortisedCompileAreAdded) {
  DeviceProfile& gpu = target_.devices[1];
  gpu.launch_overhead_ms = 0.02;
  gpu.compile_ms_per_node = 10;
  gpu.compile_ms_per_partition = 50;
  gpu.run_overhead_ms = 0.03;
  const MatMulGraph g(1024, 1024, 1024);
  const CostModel model(target_, 100);
  const double roofline = model.roofline_ms(g.graph, g.node, gpu, Precision::kFp32).first;
  // A run's time, and apart from it the compile each node adds to the plan's objective.
  EXPECT_DOUBLE_EQ(model.node_ms(g.graph, g.node, gpu, Precision::kFp32), roofline + 0.02);
  EXPECT_DOUBLE_EQ(model.node_compile_ms(gpu), 10.0 / 100);
  EXPECT_DOUBLE_EQ(model.partition_overhead_ms(gpu), 0.03 + 50.0 / 100);
  gpu.run_overhead_ms = 0;
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

TEST_F(CostModelTest, CurveReplacesTheRooflineOfItsClassAndPrecision) {
  const MatMulGraph g(256, 256, 256);  // 33.6 MFLOP, a GEMM (256 rows)
  DeviceProfile& gpu = target_.devices[1];
  gpu.launch_overhead_ms = 0.5;  // not added to a measured time
  gpu.curves[{CostClass::kGemm, Precision::kFp16}] = {{"a", 1e6, 0.01, 0}, {"b", 1e10, 1.0, 0}};
  const CostModel model(target_, 1);
  // Log-log between (1e6, 0.01) and (1e10, 1.0): work^0.5 scaling, the work of a GEMM on an
  // OpenCL GPU counting 2^17 outputs more (node_work).
  const double work = g.flop * (256.0 * 256 + 131072) / (256.0 * 256);
  const double expected = 0.01 * std::pow(work / 1e6, 0.5);
  EXPECT_NEAR(model.node_ms(g.graph, g.node, gpu, Precision::kFp16), expected, 1e-12);
  // fp32 has no curve: the roofline stays.
  const double roofline = model.roofline_ms(g.graph, g.node, gpu, Precision::kFp32).first;
  EXPECT_DOUBLE_EQ(model.node_ms(g.graph, g.node, gpu, Precision::kFp32), roofline + 0.5);
  // A batch-1 product (one row) is a GEMV, another class: the roofline again.
  const MatMulGraph row(1, 256, 256);
  EXPECT_EQ(node_work(row.graph, row.node, Precision::kFp16, cpu()).cost_class, CostClass::kGemv);
  EXPECT_GT(model.node_ms(row.graph, row.node, gpu, Precision::kFp16), 0.5);
}

// A QDQ model's MatMul (both operands DequantizeLinear outputs) runs on the 8-bit data: on a
// device calibrated on QDQ graphs it costs their curve in whatever precision it is planned (an
// OpenCL GPU runs a QDQ graph in fp32), elsewhere the planned precision's curve. A MatMul with
// one operand in float is not such a layer.
TEST_F(CostModelTest, AQdqLayerCostsTheInt8CurveWhereCalibrated) {
  // y = DequantizeLinear(a8) x B [256, 256], B = DequantizeLinear(b8) where `quantized_b`.
  const auto product = [](bool quantized_b) {
    Graph graph;
    const auto dequantize = [&](const std::string& name, DType dtype, bool constant) {
      const ValueId q = constant ? graph.add_constant(name, Tensor(dtype, {256, 256}))
                                 : graph.add_value(name, dtype, Shape{256, 256});
      const ValueId scale = graph.add_constant(name + ".scale", Tensor(DType::kF32, {}));
      const ValueId y = graph.add_value(name + ".dq", DType::kF32, Shape{256, 256});
      Node node;
      node.op_type = "DequantizeLinear";
      node.inputs = {q, scale};
      node.outputs = {y};
      graph.add_node(std::move(node));
      return y;
    };
    const ValueId a = dequantize("a", DType::kU8, false);
    const ValueId b = quantized_b ? dequantize("b", DType::kI8, true)
                                  : graph.add_constant("b", Tensor(DType::kF32, {256, 256}));
    Node matmul;
    matmul.op_type = "MatMul";
    matmul.inputs = {a, b};
    matmul.outputs = {graph.add_value("y", DType::kF32, Shape{256, 256})};
    const NodeId node = graph.add_node(std::move(matmul));
    return std::make_pair(std::move(graph), node);
  };
  const auto [layer, node] = product(true);
  const auto [half, half_node] = product(false);
  EXPECT_TRUE(quantized_layer(layer, layer.node(node)));
  EXPECT_FALSE(quantized_layer(half, half.node(half_node)));  // B is float

  DeviceProfile& gpu = target_.devices[1];
  gpu.curves[{CostClass::kGemm, Precision::kFp32}] = {{"fp32", 1e6, 0.01, 0}};
  const double fp32_ms = CostModel(target_, 1).node_ms(layer, node, gpu, Precision::kFp32);
  gpu.qdq_curves[CostClass::kGemm] = {{"qdq", 1e6, 0.03, 0}};
  const CostModel model(target_, 1);
  EXPECT_NEAR(model.node_ms(layer, node, gpu, Precision::kFp32), 3 * fp32_ms, 1e-12);
  EXPECT_NEAR(model.node_ms(layer, node, gpu, Precision::kFp16), 3 * fp32_ms, 1e-12);
  EXPECT_NEAR(model.node_ms(half, half_node, gpu, Precision::kFp32), fp32_ms, 1e-12);
}

TEST(InterpolateTest, ClampsBelowAndKeepsTheLastRateAbove) {
  const Curve curve{{"a", 100, 1.0, 0}, {"b", 1000, 2.0, 0}, {"c", 10000, 10.0, 0}};
  EXPECT_DOUBLE_EQ(interpolate_ms(curve, 10), 1.0);  // nothing runs faster than the smallest
  EXPECT_DOUBLE_EQ(interpolate_ms(curve, 100), 1.0);
  EXPECT_NEAR(interpolate_ms(curve, 1000), 2.0, 1e-12);
  EXPECT_NEAR(interpolate_ms(curve, std::sqrt(100.0 * 1000.0)), std::sqrt(2.0), 1e-12);
  EXPECT_DOUBLE_EQ(interpolate_ms(curve, 20000), 20.0);  // 1 ms per 1000 beyond the last point
}

TEST(NodeWorkTest, BytesClassesCountBytesInThePrecision) {
  const ReluGraph g(1024);
  EXPECT_EQ(node_work(g.graph, g.node, Precision::kFp32, cpu()).cost_class,
            CostClass::kElementwise);
  EXPECT_DOUBLE_EQ(node_work(g.graph, g.node, Precision::kFp32, cpu()).work, 8192);
  EXPECT_DOUBLE_EQ(node_work(g.graph, g.node, Precision::kFp16, cpu()).work, 4096);
  // The byte classes use their fp32 curve in every precision.
  DeviceProfile device = cpu();
  device.curves[{CostClass::kElementwise, Precision::kFp32}] = {{"", 1000, 0.5, 0}};
  EXPECT_NE(find_curve(device, CostClass::kElementwise, Precision::kFp16), nullptr);
  EXPECT_EQ(find_curve(device, CostClass::kConv, Precision::kFp16), nullptr);
}

// One node of `op` reading x of `dims` into y of `out_dims`.
Graph one_node(const std::string& op, const std::vector<int64_t>& dims,
               const std::vector<int64_t>& out_dims) {
  Graph graph;
  Node node;
  node.name = "node";
  node.op_type = op;
  node.inputs = {graph.add_value("x", DType::kF32, Shape{dims})};
  node.outputs = {graph.add_value("y", DType::kF32, Shape{out_dims})};
  graph.add_node(std::move(node));
  return graph;
}

// A PoCL-like OpenCL device: a CPU, whose kernels fill it whatever their outputs.
DeviceProfile opencl_cpu() {
  DeviceProfile device = gpu();
  device.kind = DeviceKind::kCpu;
  return device;
}

// x [1, c, h, h] -> k x k Conv (same padding) -> y [1, oc, h, h].
Graph conv_node(int64_t c, int64_t oc, int64_t h, int64_t k = 3) {
  Graph graph;
  Node node;
  node.name = "conv";
  node.op_type = "Conv";
  node.inputs = {graph.add_value("x", DType::kF32, Shape{1, c, h, h}),
                 graph.add_constant("w", Tensor(DType::kF32, {oc, c, k, k}))};
  node.outputs = {graph.add_value("y", DType::kF32, Shape{1, oc, h, h})};
  node.attributes["kernel_shape"] = std::vector<int64_t>{k, k};
  const int64_t pad = k / 2;
  node.attributes["pads"] = std::vector<int64_t>{pad, pad, pad, pad};
  graph.add_node(std::move(node));
  return graph;
}

TEST(NodeWorkTest, ConvsCountTheFlopsOfTheirPaddedBlocksAndTiles) {
  // 32 channels to 5 at 256 x 256: the CPU (oneDNN) computes output channels in blocks of 16, so
  // 5 cost what 16 do; the OpenCL kernels compute whole 64-row tiles, so 5 outputs cost what 64
  // do there.
  const Graph five = conv_node(32, 5, 256);
  const Graph wide = conv_node(32, 64, 256);
  const double flops = 2.0 * 5 * 65536 * 32 * 9;
  EXPECT_DOUBLE_EQ(node_work(five, 0, Precision::kFp32, cpu()).work, flops * 16 / 5);
  EXPECT_DOUBLE_EQ(node_work(conv_node(32, 16, 256), 0, Precision::kFp32, cpu()).work,
                   flops * 16 / 5);
  const NodeWork on_opencl = node_work(five, 0, Precision::kFp32, opencl_cpu());
  EXPECT_EQ(on_opencl.cost_class, CostClass::kConv);
  EXPECT_DOUBLE_EQ(on_opencl.work, flops * 64 / 5);
  EXPECT_DOUBLE_EQ(on_opencl.work, node_work(wide, 0, Precision::kFp32, opencl_cpu()).work);
  // Channels filling the tiles: FLOPs either way (K = 288 is whole steps of 16).
  EXPECT_DOUBLE_EQ(node_work(wide, 0, Precision::kFp32, opencl_cpu()).work,
                   node_work(wide, 0, Precision::kFp32, cpu()).work);
  // On a GPU the same, with 2^17 outputs more: 64 x 65536 fill it (3% more).
  EXPECT_DOUBLE_EQ(node_work(five, 0, Precision::kFp32, gpu()).work,
                   on_opencl.work * (64.0 * 65536 + 131072) / (64.0 * 65536));
  // A VAE's last Conv, to 3 channels: the direct kernel computes only those, its FLOPs (the
  // CPU 16 channels' worth).
  const Graph rgb = conv_node(32, 3, 256);
  const double rgb_flops = 2.0 * 3 * 65536 * 32 * 9;
  EXPECT_DOUBLE_EQ(node_work(rgb, 0, Precision::kFp32, opencl_cpu()).work, rgb_flops);
  EXPECT_DOUBLE_EQ(node_work(rgb, 0, Precision::kFp32, cpu()).work, rgb_flops * 16 / 3);
}

TEST(NodeWorkTest, AGpuConvFollowsItsInputChannelsWhenItsOutputsAreFew) {
  // SqueezeNet's first fire module's 1x1 Convs at 55x55: 64 channels to 16 and 16 to 64, the
  // same FLOPs. Each work item loops over the input channels; with fewer outputs than fill the
  // GPU, that loop sets the time (on an H200 0.010 and 0.008 ms). Rows padded to 16 (16-wide
  // tiles) and 64 (32-wide), pixels to 3040, one split of K: 2 K (padded outputs + 2^17).
  const Graph squeeze = conv_node(64, 16, 55, 1);
  const Graph expand = conv_node(16, 64, 55, 1);
  EXPECT_DOUBLE_EQ(node_work(squeeze, 0, Precision::kFp32, cpu()).work,
                   node_work(expand, 0, Precision::kFp32, cpu()).work);
  const NodeWork on_gpu = node_work(squeeze, 0, Precision::kFp32, gpu());
  EXPECT_EQ(on_gpu.cost_class, CostClass::kPointwiseConv);
  EXPECT_DOUBLE_EQ(on_gpu.work, 2.0 * 64 * (16 * 3040 + 131072));
  EXPECT_DOUBLE_EQ(node_work(expand, 0, Precision::kFp32, gpu()).work,
                   2.0 * 16 * (64 * 3040 + 131072));
  // A PoCL-like OpenCL CPU device counts the padded tiles alone.
  EXPECT_DOUBLE_EQ(node_work(squeeze, 0, Precision::kFp32, opencl_cpu()).work,
                   2.0 * 64 * 16 * 3040);
}

TEST(NodeWorkTest, AChannelNormPaysPerPixel) {
  // ConvNeXt-atto's first norm (40 channels at 56x56) and one of as many bytes in 96 channels:
  // its Transpose to channels-last heads the fused step. Bytes read and written, and 1 KiB for
  // each of its pixels.
  const Graph atto = one_node("Transpose", {1, 40, 56, 56}, {1, 56, 56, 40});
  const Graph wide = one_node("Transpose", {1, 96, 36, 36}, {1, 36, 36, 96});
  const double bytes = 2.0 * 4 * 40 * 56 * 56;
  EXPECT_DOUBLE_EQ(node_work(atto, 0, Precision::kFp32, cpu()).work, bytes);
  const NodeWork norm = node_work(atto, 0, Precision::kFp32, cpu(), CostClass::kChannelNorm);
  EXPECT_EQ(norm.cost_class, CostClass::kChannelNorm);
  EXPECT_DOUBLE_EQ(norm.work, bytes + 1024.0 * 56 * 56);
  EXPECT_DOUBLE_EQ(node_work(wide, 0, Precision::kFp32, cpu(), CostClass::kChannelNorm).work,
                   2.0 * 4 * 96 * 36 * 36 + 1024.0 * 36 * 36);
}

TEST(NodeWorkTest, AGpuGemmFollowsItsDepthWhenItsOutputsAreFew) {
  // bert_mini's two MLP layers: the same FLOPs, four times the depth in the second. On the CPU
  // their work is their FLOPs; on an OpenCL GPU 2 K (outputs + 2^17), the second's 1.8x the
  // first's (measured 0.021 and 0.05 ms on an H200).
  const MatMulGraph up(128, 256, 1024);
  const MatMulGraph down(128, 1024, 256);
  EXPECT_DOUBLE_EQ(node_work(up.graph, up.node, Precision::kFp32, cpu()).work,
                   node_work(down.graph, down.node, Precision::kFp32, cpu()).work);
  EXPECT_DOUBLE_EQ(node_work(up.graph, up.node, Precision::kFp32, gpu()).work,
                   2.0 * 256 * (128 * 1024 + 131072));
  EXPECT_DOUBLE_EQ(node_work(down.graph, down.node, Precision::kFp32, gpu()).work,
                   2.0 * 1024 * (128 * 256 + 131072));
  // A PoCL-like OpenCL CPU device keeps FLOPs.
  EXPECT_DOUBLE_EQ(node_work(down.graph, down.node, Precision::kFp32, opencl_cpu()).work,
                   down.flop);
}

TEST_F(CostModelTest, AnOpenClSplitOrConcatPaysALaunchPerPiece) {
  Graph graph;
  Node split;
  split.name = "split";
  split.op_type = "Split";
  split.inputs = {graph.add_value("x", DType::kF32, Shape{192, 576})};
  for (const char* name : {"q", "k", "v"}) {
    split.outputs.push_back(graph.add_value(name, DType::kF32, Shape{192, 192}));
  }
  const NodeId node = graph.add_node(std::move(split));
  const auto opencl = config::backends().open(opencl_cpu());
  EXPECT_EQ(opencl->launches(graph, node), 3);
  // On an OpenCL GPU GroupNorm as exported (32 long rows) runs in 3 kernels, many short rows in
  // one; on a CPU device both in 2 (the statistics in ONNX Runtime's order, the normalisation).
  const Graph group_norm = one_node("InstanceNormalization", {1, 32, 65536}, {1, 32, 65536});
  const Graph instance_norm = one_node("InstanceNormalization", {1, 512, 64}, {1, 512, 64});
  const auto opencl_gpu = config::backends().open(gpu());
  EXPECT_EQ(opencl_gpu->launches(group_norm, 0), 3);
  EXPECT_EQ(opencl_gpu->launches(instance_norm, 0), 1);
  EXPECT_EQ(opencl->launches(group_norm, 0), 2);
  EXPECT_EQ(opencl->launches(instance_norm, 0), 2);
  DeviceProfile& gpu = target_.devices[1];
  gpu.curves[{CostClass::kDataMovement, Precision::kFp32}] = {{"a", 1e3, 0.01, 0},
                                                              {"b", 1e7, 0.1, 0}};
  const CostModel model(target_, 1);
  // Three copies of a third of the bytes each, against one copy of them all on the CPU.
  const double bytes = 2.0 * 192 * 576 * 4;
  EXPECT_NEAR(
      model.node_ms(graph, node, gpu, Precision::kFp32),
      3 * interpolate_ms(gpu.curves[{CostClass::kDataMovement, Precision::kFp32}], bytes / 3),
      1e-12);
  DeviceProfile host = cpu();
  host.curves = gpu.curves;
  EXPECT_NEAR(model.node_ms(graph, node, host, Precision::kFp32),
              interpolate_ms(gpu.curves[{CostClass::kDataMovement, Precision::kFp32}], bytes),
              1e-12);
}

TEST(NodeWorkTest, TranscendentalOpsAndGlobalPoolsHaveClassesOfTheirOwn) {
  // Sigmoid and Erf cost a polynomial per element: far from Relu's rate on a CPU.
  for (const std::string op : {"Sigmoid", "Erf", "Tanh", "Exp"}) {
    const NodeWork work = node_work(one_node(op, {1024}, {1024}), 0, Precision::kFp32, cpu());
    EXPECT_EQ(work.cost_class, CostClass::kTranscendental) << op;
    EXPECT_DOUBLE_EQ(work.work, 8192) << op;
  }
  for (const std::string op : {"Relu", "Add", "HardSwish"}) {
    EXPECT_EQ(node_work(one_node(op, {1024}, {1024}), 0, Precision::kFp32, cpu()).cost_class,
              CostClass::kElementwise)
        << op;
  }
  EXPECT_TRUE(computes_transcendental("Erf"));
  EXPECT_FALSE(computes_transcendental("Relu"));
  // A global pool reads every pixel and writes one value per channel.
  const NodeWork pool = node_work(one_node("GlobalAveragePool", {1, 16, 8, 8}, {1, 16, 1, 1}), 0,
                                  Precision::kFp32, cpu());
  EXPECT_EQ(pool.cost_class, CostClass::kGlobalPool);
  EXPECT_DOUBLE_EQ(pool.work, 4.0 * (16 * 64 + 16));
  EXPECT_EQ(node_work(one_node("MaxPool", {1, 16, 8, 8}, {1, 16, 8, 8}), 0, Precision::kFp32, cpu())
                .cost_class,
            CostClass::kPooling);
  // A QuantizeLinear or DequantizeLinear left as a step of its own: its class where calibrated
  // (the CPU), elementwise on a device without the curve.
  DeviceProfile host = cpu();
  for (const std::string op : {"QuantizeLinear", "DequantizeLinear"}) {
    const Graph graph = one_node(op, {1024}, {1024});
    EXPECT_EQ(node_work(graph, 0, Precision::kFp32, host).cost_class, CostClass::kElementwise);
    host.curves[{CostClass::kQuantize, Precision::kFp32}] = {{"", 1e3, 0.01, 0}};
    EXPECT_EQ(node_work(graph, 0, Precision::kFp32, host).cost_class, CostClass::kQuantize);
    host.curves.clear();
  }
  // Their names round-trip (the calibrated profile's YAML keys).
  for (CostClass c : {CostClass::kTranscendental, CostClass::kEpilogue, CostClass::kGlobalPool,
                      CostClass::kQuantize}) {
    EXPECT_EQ(parse_cost_class(cost_class_name(c)), c) << cost_class_name(c);
  }
}

// x [1, c, h, h] -> k x k Conv by `stride` (`group` groups) -> y [1, oc, h / stride, ...].
Graph strided_conv(int64_t c, int64_t oc, int64_t h, int64_t k, int64_t stride, int64_t group) {
  Graph graph;
  Node node;
  node.name = "conv";
  node.op_type = "Conv";
  node.inputs = {graph.add_value("x", DType::kF32, Shape{1, c, h, h}),
                 graph.add_constant("w", Tensor(DType::kF32, {oc, c / group, k, k}))};
  node.outputs = {graph.add_value("y", DType::kF32, Shape{1, oc, h / stride, h / stride})};
  node.attributes["kernel_shape"] = std::vector<int64_t>{k, k};
  node.attributes["strides"] = std::vector<int64_t>{stride, stride};
  node.attributes["group"] = group;
  graph.add_node(std::move(node));
  return graph;
}

TEST(NodeWorkTest, StemsAndStridedConvsHaveClassesOfTheirOwnWhereCalibrated) {
  const Graph stem = strided_conv(3, 32, 224, 3, 2, 1);          // MobileNetV2's first layer
  const Graph latent = strided_conv(4, 64, 32, 3, 1, 1);         // a VAE decoder's first
  const Graph downsample = strided_conv(128, 256, 28, 1, 2, 1);  // ResNet's 1x1 by 2
  const Graph depthwise = strided_conv(96, 96, 112, 3, 2, 96);   // MobileNetV2's by 2
  const Graph wide = strided_conv(64, 64, 56, 3, 1, 1);          // stride 1: as before
  DeviceProfile host = cpu();
  for (CostClass c : {CostClass::kStemConv, CostClass::kStridedConv,
                      CostClass::kStridedDepthwiseConv, CostClass::kConv}) {
    host.curves[{c, Precision::kFp32}] = {{"", 1e6, 0.01, 0}};
    EXPECT_EQ(parse_cost_class(cost_class_name(c)), c) << cost_class_name(c);
    EXPECT_TRUE(is_compute_class(c)) << cost_class_name(c);
  }
  const auto class_on = [](const Graph& g, const DeviceProfile& device) {
    return node_work(g, 0, Precision::kFp32, device).cost_class;
  };
  EXPECT_EQ(class_on(stem, host), CostClass::kStemConv);
  EXPECT_EQ(class_on(latent, host), CostClass::kConv);
  EXPECT_EQ(class_on(downsample, host), CostClass::kStridedConv);
  EXPECT_EQ(class_on(depthwise, host), CostClass::kStridedDepthwiseConv);
  EXPECT_EQ(class_on(wide, host), CostClass::kConv);
  // Their work is their FLOPs: 2 x outputs x reduction.
  EXPECT_DOUBLE_EQ(node_work(downsample, 0, Precision::kFp32, host).work,
                   2.0 * 256 * 14 * 14 * 128);
  // A device calibrated without those curves (a GPU, an earlier profile) times them on the class
  // they had before.
  EXPECT_EQ(class_on(stem, cpu()), CostClass::kConv);
  EXPECT_EQ(class_on(downsample, cpu()), CostClass::kPointwiseConv);
  EXPECT_EQ(class_on(depthwise, cpu()), CostClass::kDepthwiseConv);
  EXPECT_EQ(class_on(downsample, gpu()), CostClass::kPointwiseConv);
}

// A QDQ model's strided Conv costs the device's QDQ curve of the stride-1 class where its QDQ
// curves have no strided class (the CPU calibrates strided Convs in fp32 and bf16 only): on its
// fp32 strided curve, ResNet-18's 3x3 Convs by 2 were predicted at 2.8-3.9 times their time.
TEST(NodeWorkTest, AQdqStridedConvCostsTheStrideOneQdqCurve) {
  Graph graph;
  const auto dequantize = [&](ValueId q) {
    const ValueId y =
        graph.add_value(graph.value(q).name + ".dq", DType::kF32, graph.value(q).shape);
    Node node;
    node.op_type = "DequantizeLinear";
    node.inputs = {q, graph.add_constant(graph.value(q).name + ".scale", Tensor(DType::kF32, {}))};
    node.outputs = {y};
    graph.add_node(std::move(node));
    return y;
  };
  Node conv;
  conv.op_type = "Conv";
  conv.inputs = {dequantize(graph.add_value("x", DType::kU8, Shape{1, 64, 56, 56})),
                 dequantize(graph.add_constant("w", Tensor(DType::kI8, {128, 64, 3, 3})))};
  conv.outputs = {graph.add_value("y", DType::kF32, Shape{1, 128, 28, 28})};
  conv.attributes["kernel_shape"] = std::vector<int64_t>{3, 3};
  conv.attributes["strides"] = std::vector<int64_t>{2, 2};
  const NodeId node = graph.add_node(std::move(conv));
  Target target;
  target.devices = {cpu()};
  DeviceProfile& host = target.devices[0];
  host.curves[{CostClass::kStridedConv, Precision::kFp32}] = {{"", 1e6, 0.05, 0}};
  host.curves[{CostClass::kConv, Precision::kFp32}] = {{"", 1e6, 0.02, 0}};
  EXPECT_EQ(node_work(graph, node, Precision::kFp32, host).cost_class, CostClass::kStridedConv);
  host.qdq_curves[CostClass::kConv] = {{"", 1e6, 0.01, 0}};
  EXPECT_EQ(node_work(graph, node, Precision::kFp32, host).cost_class, CostClass::kConv);
  const double flop = 2.0 * 128 * 28 * 28 * 64 * 9;
  EXPECT_NEAR(CostModel(target, 1).node_ms(graph, node, host, Precision::kFp32), 0.01 * flop / 1e6,
              1e-9);
  // With a strided QDQ curve of its own, that one.
  host.qdq_curves[CostClass::kStridedConv] = {{"", 1e6, 0.03, 0}};
  EXPECT_NEAR(CostModel(target, 1).node_ms(graph, node, host, Precision::kFp32), 0.03 * flop / 1e6,
              1e-9);
}

// A Concat has a class of its own where calibrated (copies of its inputs), else data_movement's.
TEST(NodeWorkTest, AConcatIsTimedAsCopiesWhereCalibrated) {
  Graph graph;
  Node node;
  node.name = "concat";
  node.op_type = "Concat";
  node.inputs = {graph.add_value("a", DType::kF32, Shape{1, 64, 55, 55}),
                 graph.add_value("b", DType::kF32, Shape{1, 64, 55, 55})};
  node.outputs = {graph.add_value("y", DType::kF32, Shape{1, 128, 55, 55})};
  node.attributes["axis"] = int64_t{1};
  graph.add_node(std::move(node));
  EXPECT_EQ(parse_cost_class("concat"), CostClass::kConcat);
  EXPECT_FALSE(is_compute_class(CostClass::kConcat));
  DeviceProfile host = cpu();
  host.curves[{CostClass::kConcat, Precision::kFp32}] = {{"", 1e6, 0.01, 0}};
  const NodeWork work = node_work(graph, 0, Precision::kFp32, host);
  EXPECT_EQ(work.cost_class, CostClass::kConcat);
  EXPECT_DOUBLE_EQ(work.work, 2.0 * 2 * 64 * 55 * 55 * 4);  // both inputs read, the output written
  EXPECT_EQ(node_work(graph, 0, Precision::kFp32, cpu()).cost_class, CostClass::kDataMovement);
  // On OpenCL a point of the curve is a whole Concat of two inputs (two copy kernels): this one
  // costs one point; on data_movement's curve, one copy kernel a point, two of them.
  Target target;
  DeviceProfile& opencl = target.devices.emplace_back(gpu());
  const CostModel model(target, 1);
  opencl.curves[{CostClass::kDataMovement, Precision::kFp32}] = {{"", 1e3, 0.01, 0},
                                                                 {"", 1e7, 0.1, 0}};
  const double as_copies = model.node_ms(graph, 0, opencl, Precision::kFp32);
  opencl.curves[{CostClass::kConcat, Precision::kFp32}] = {{"", 1e3, 0.01, 0}, {"", 1e7, 0.1, 0}};
  const double as_concat = model.node_ms(graph, 0, opencl, Precision::kFp32);
  EXPECT_DOUBLE_EQ(
      as_concat,
      interpolate_ms(opencl.curves.at({CostClass::kConcat, Precision::kFp32}), work.work));
  EXPECT_DOUBLE_EQ(
      as_copies, 2 * interpolate_ms(opencl.curves.at({CostClass::kDataMovement, Precision::kFp32}),
                                    work.work / 2));
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
}  // namespace hsched::planner
