// ClProgram's QDQ fusions (step_plan.cpp, node_fusion_quant.cpp): Convs, MatMuls, binary ops,
// LayerNorms and moves between DequantizeLinear and QuantizeLinear nodes run on the 8-bit data in
// one kernel each, against the CPU. On the first OpenCL device (PoCL in CI; skipped, not passed,
// without one).
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/opencl/kernels/node_ops.h"
#include "backends/opencl/program.h"
#include "graph/onnx_builder.h"
#include "graph/onnx_import.h"
#include "program_test_util.h"

namespace hsched::opencl {
namespace {

using program_test::ClProgramTest;
using program_test::expect_a_step_apart;
using program_test::expect_kernels_a_step_apart;
using program_test::quantized_linear;
using program_test::run_on_cpu;
using program_test::u8_ramp;

// DequantizeLinear -> Conv -> QuantizeLinear in one kernel (the QDQ format's convolution): u8 x
// (zero point 131) by int8 weights scaled per output channel into i8 (zero point -5), through
// each kernel a Conv may run (`algorithm`), against the CPU, which runs the nodes as QLinearConv
// (int32 sums). The device sums the same integers exactly in fp32; its requantization rounds
// x_scale * w_scale / y_scale in another order than the CPU's, so a tie may land a step away.
struct QdqConvCase {
  const char* name;
  int64_t channels, out_channels, kernel, group, size;
  ConvAlgorithm algorithm;
};

// Built as a Graph: the import refuses the forcing attribute. With `activation`, the result goes
// on through DequantizeLinear -> activation -> QuantizeLinear (MobileNet-V3's HardSwish).
Graph qdq_conv_graph(const QdqConvCase& c, const char* activation = nullptr) {
  Graph g;
  g.name = "cl_qdq_conv";
  g.opset = 17;
  const int64_t pad = c.kernel / 2, per_group = c.channels / c.group;
  std::vector<int8_t> w(static_cast<size_t>(c.out_channels * per_group * c.kernel * c.kernel));
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int8_t>((i * 7919 + 13) % 255 - 127);
  std::vector<float> w_scales;
  for (int64_t o = 0; o < c.out_channels; ++o) w_scales.push_back(0.004f + 0.001f * (o % 5));
  const float k = static_cast<float>(per_group * c.kernel * c.kernel);
  const auto f32 = [](std::vector<int64_t> dims, std::vector<float> values) {
    return Tensor::from_vector(DType::kF32, std::move(dims), std::move(values));
  };
  const ValueId x = g.add_value("x", DType::kU8, Shape({1, c.channels, c.size, c.size}));
  const ValueId xs = g.add_constant("xs", f32({}, {0.03f}));
  const ValueId xz =
      g.add_constant("xz", Tensor::from_vector(DType::kU8, {}, std::vector<uint8_t>{131}));
  const ValueId wq = g.add_constant(
      "w", Tensor::from_vector(DType::kI8, {c.out_channels, per_group, c.kernel, c.kernel}, w));
  const ValueId ws = g.add_constant("ws", f32({c.out_channels}, w_scales));
  const ValueId ys = g.add_constant("ys", f32({}, {0.05f * std::sqrt(k)}));
  const ValueId yz =
      g.add_constant("yz", Tensor::from_vector(DType::kI8, {}, std::vector<int8_t>{-5}));
  const ValueId xd = g.add_value("xd", DType::kF32, Shape({1, c.channels, c.size, c.size}));
  const ValueId wd =
      g.add_value("wd", DType::kF32, Shape({c.out_channels, per_group, c.kernel, c.kernel}));
  const Shape y_shape({1, c.out_channels, c.size, c.size});
  const ValueId conv = g.add_value("c", DType::kF32, y_shape);
  const ValueId y = g.add_value("y", DType::kI8, y_shape);
  g.add_input(x);
  g.add_node({"dequantize_x", "DequantizeLinear", "", {x, xs, xz}, {xd}, {}});
  g.add_node({"dequantize_w", "DequantizeLinear", "", {wq, ws}, {wd}, {{"axis", int64_t{0}}}});
  g.add_node({"conv",
              "Conv",
              "",
              {xd, wd},
              {conv},
              {{"pads", std::vector<int64_t>{pad, pad, pad, pad}},
               {"kernel_shape", std::vector<int64_t>{c.kernel, c.kernel}},
               {"group", c.group},
               {kConvAlgorithmAttr, static_cast<int64_t>(c.algorithm)}}});
  g.add_node({"quantize_y", "QuantizeLinear", "", {conv, ys, yz}, {y}, {}});
  if (activation == nullptr) {
    g.add_output(y);
    return g;
  }
  const ValueId yd = g.add_value("yd", DType::kF32, y_shape);
  const ValueId a = g.add_value("a", DType::kF32, y_shape);
  // (A step of y moves the activation's output by at most 1.5 y steps: its scale 1.6 of y's
  // keeps a tie in y a step in z.)
  const ValueId as = g.add_constant("as", f32({}, {1.6f * 0.05f * std::sqrt(k)}));
  const ValueId az =
      g.add_constant("az", Tensor::from_vector(DType::kI8, {}, std::vector<int8_t>{-100}));
  const ValueId z = g.add_value("z", DType::kI8, y_shape);
  g.add_output(z);
  g.add_node({"dequantize_y", "DequantizeLinear", "", {y, ys, yz}, {yd}, {}});
  g.add_node({"activation", activation, "", {yd}, {a}, {}});
  g.add_node({"quantize_a", "QuantizeLinear", "", {a, as, az}, {z}, {}});
  return g;
}

// With a HardSwish between its own DequantizeLinear and QuantizeLinear after the Conv, the Conv
// requantizes, activates and quantizes again in its epilogue: still one kernel.
TEST_F(ClProgramTest, QdqConvRunsAsOneKernelMatchingTheCpu) {
  const std::shared_ptr<DeviceRuntime>& runtime = runtime_;
  const QdqConvCase cases[] = {
      {"implicit GEMM 3x3", 8, 16, 3, 1, 10, ConvAlgorithm::kImplicitGemm},
      {"implicit GEMM 1x1", 24, 16, 1, 1, 9, ConvAlgorithm::kImplicitGemm},
      {"implicit GEMM split over K", 256, 8, 3, 1, 4, ConvAlgorithm::kImplicitGemm},
      {"im2col + GEMM", 8, 16, 3, 1, 10, ConvAlgorithm::kIm2colGemm},
      {"direct, depthwise", 8, 8, 3, 8, 10, ConvAlgorithm::kDirect},
      {"direct, 3 output channels a work item", 16, 3, 3, 1, 10, ConvAlgorithm::kDirect},
      {"a work group per output", 64, 4, 3, 1, 3, ConvAlgorithm::kRows},
  };
  Tensor x;
  for (const QdqConvCase& c : cases) {
    x = Tensor(DType::kU8, {1, c.channels, c.size, c.size});
    auto bytes = x.values<uint8_t>();
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>((i * 131 + 7) % 256);
    for (const char* activation : {"", "HardSwish"}) {
      const Graph graph = qdq_conv_graph(c, *activation != 0 ? activation : nullptr);
      opencl_test::expect_every_node_accepted(graph);
      const std::vector<Tensor> expected = run_on_cpu(graph, {x});
      ASSERT_FALSE(expected.empty()) << c.name;
      for (Storage storage : {Storage::kFloat32, Storage::kFloat16}) {
        const std::string where = std::string(c.name) + " " + activation + ", " +
                                  std::to_string(storage_bytes(storage)) + "-byte storage";
        auto program = ClProgram::compile(graph, runtime, storage, 300000);
        ASSERT_TRUE(program.is_ok()) << where << ": " << program.status().message();
        EXPECT_EQ((*program)->stats().kernels, 1) << where;  // every DQ and Q absorbed
        auto outputs = (*program)->run({x});
        ASSERT_TRUE(outputs.is_ok()) << where << ": " << outputs.status().message();
        // fp16 storage rounds the weights' scales (11 bits): more ties fall the other way.
        expect_a_step_apart((*outputs)[0], expected[0], storage == Storage::kFloat32 ? 100 : 50,
                            where);
      }
    }
  }
}

// DequantizeLinear -> move -> QuantizeLinear of the same parameters runs the move on the 8-bit
// data: a Reshape (a view, no kernel), a Transpose and a Split (a kernel each); a Transpose
// quantized with another scale keeps its three kernels. Exactly the CPU's bytes.
TEST_F(ClProgramTest, QuantizedMovesRunOnTheEightBitData) {
  const std::shared_ptr<DeviceRuntime>& runtime = runtime_;
  OnnxBuilder b(17);
  b.input("x", DType::kU8, {2, 3, 4});
  b.output("t", DType::kU8, {4, 3, 2})
      .output("s0", DType::kU8, {2, 2})
      .output("s1", DType::kU8, {2, 10})
      .output("other", DType::kU8, {4, 3, 2});
  b.initializer_f32("xs", {}, {0.1f})
      .initializer("xz", Tensor::from_vector(DType::kU8, {}, std::vector<uint8_t>{7}))
      .initializer_f32("os", {}, {0.3f})
      .initializer_i64("shape", {2}, {2, 12})
      .initializer_i64("split", {2}, {2, 10});
  const auto dq = [&](const std::string& in, const std::string& out) {
    b.node("DequantizeLinear", {in, "xs", "xz"}, {out}, "dq_" + in);
  };
  const auto q = [&](const std::string& in, const std::string& out, const char* scale) {
    b.node("QuantizeLinear", {in, scale, "xz"}, {out}, "q_" + out);
  };
  dq("x", "xd");
  b.node("Reshape", {"xd", "shape"}, {"r"}, "reshape");
  q("r", "rq", "xs");
  dq("rq", "rd");
  set_attr(b.node("Split", {"rd", "split"}, {"a", "c"}, "split"), "axis", int64_t{1});
  q("a", "s0", "xs");
  q("c", "s1", "xs");
  set_attr(b.node("Transpose", {"xd"}, {"td"}, "transpose"), "perm", std::vector<int64_t>{2, 1, 0});
  q("td", "t", "xs");
  set_attr(b.node("Transpose", {"xd"}, {"od"}, "transpose_other"), "perm",
           std::vector<int64_t>{2, 1, 0});
  q("od", "other", "os");
  auto graph = import_onnx_model(b.model(), {}, "cl_quantized_moves", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  opencl_test::expect_every_node_accepted(*graph);
  const Tensor x = u8_ramp({2, 3, 4}, 53);
  const std::vector<Tensor> expected = run_on_cpu(*graph, {x});
  ASSERT_FALSE(expected.empty());
  for (Storage storage : {Storage::kFloat32, Storage::kFloat16}) {
    auto program = ClProgram::compile(*graph, runtime, storage, 300000);
    ASSERT_TRUE(program.is_ok()) << program.status().message();
    // The Split and the first Transpose on the 8-bit data; x's DequantizeLinear (read by the
    // other Transpose too), that Transpose and its QuantizeLinear.
    EXPECT_EQ((*program)->stats().kernels, 5);
    auto outputs = (*program)->run({x});
    ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
    for (size_t o = 0; o < outputs->size(); ++o) {
      ASSERT_EQ((*outputs)[o].byte_size(), expected[o].byte_size()) << "output " << o;
      EXPECT_EQ(std::memcmp((*outputs)[o].raw(), expected[o].raw(), (*outputs)[o].byte_size()), 0)
          << "output " << o << ", " << storage_bytes(storage) << "-byte storage";
    }
  }
}

// DequantizeLinear of int32 constants (a QDQ model's biases, per channel) runs on the device,
// once at compile: the differences from the zero points exact (2^31 - 1 less -5 overflows 32
// bits), the CPU's values; each run is the Add alone.
TEST_F(ClProgramTest, Int32BiasesDequantizeOnTheDevice) {
  OnnxBuilder b(17);
  b.input("x", DType::kF32, {2, 4});
  b.output("y", DType::kF32, {2, 4});
  b.initializer(
       "bq", Tensor::from_vector(DType::kI32, {4},
                                 std::vector<int32_t>{2147483647, -2147483647 - 1, 123456789, -7}))
      .initializer("bz", Tensor::from_vector(DType::kI32, {4}, std::vector<int32_t>{-5, 3, 0, 9}))
      .initializer_f32("bs", {4}, {1e-6f, 2e-6f, 3e-3f, 0.5f});
  set_attr(b.node("DequantizeLinear", {"bq", "bs", "bz"}, {"bias"}, "dq_bias"), "axis", int64_t{0});
  b.node("Add", {"x", "bias"}, {"y"}, "add");
  auto graph = import_onnx_model(b.model(), {}, "cl_int32_bias", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  opencl_test::expect_every_node_accepted(*graph);
  Tensor x(DType::kF32, {2, 4});
  auto values = x.values<float>();
  for (size_t i = 0; i < values.size(); ++i) values[i] = 0.25f * static_cast<float>(i) - 1.0f;
  const std::vector<Tensor> expected = run_on_cpu(*graph, {x});
  ASSERT_FALSE(expected.empty());
  auto program = ClProgram::compile(*graph, runtime_, Storage::kFloat32, 300000);
  ASSERT_TRUE(program.is_ok()) << program.status().message();
  EXPECT_EQ((*program)->stats().constant_steps, 1);
  EXPECT_EQ((*program)->stats().kernels, 1);
  auto outputs = (*program)->run({x});
  ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
  const std::span<const float> got = (*outputs)[0].values<float>();
  const std::span<const float> want = expected[0].values<float>();
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], want[i]) << "element " << i;
}

// Binary ops between DequantizeLinear and QuantizeLinear nodes run as one kernel each: an Add of
// two dequantized inputs (u8 by a broadcast i8) quantized to u8, exactly the CPU's bytes; a Mul
// of a dequantized input by a float one; a Mul by a constant that a MatMul takes as its factor
// (that fusion wins), its DequantizeLinear a kernel of its own.
TEST_F(ClProgramTest, QdqBinaryOpsRunAsOneKernel) {
  const std::shared_ptr<DeviceRuntime>& runtime = runtime_;
  OnnxBuilder b(17);
  b.input("a", DType::kU8, {2, 3, 4})
      .input("b", DType::kI8, {4})
      .input("f", DType::kF32, {2, 3, 4})
      .input("m", DType::kU8, {3, 4});
  b.output("sum", DType::kU8, {2, 3, 4})
      .output("product", DType::kF32, {2, 3, 4})
      .output("mm", DType::kF32, {3, 5});
  b.initializer_f32("as", {}, {0.05f})
      .initializer("az", Tensor::from_vector(DType::kU8, {}, std::vector<uint8_t>{100}))
      .initializer_f32("bs", {}, {0.02f})
      .initializer("bz", Tensor::from_vector(DType::kI8, {}, std::vector<int8_t>{-3}))
      .initializer_f32("ys", {}, {0.07f})
      .initializer("yz", Tensor::from_vector(DType::kU8, {}, std::vector<uint8_t>{90}))
      .initializer_f32("half", {}, {0.5f})
      .initializer_random("w", {4, 5}, 0.5f, 3);
  b.node("DequantizeLinear", {"a", "as", "az"}, {"ad"}, "dq_a");
  b.node("DequantizeLinear", {"b", "bs", "bz"}, {"bd"}, "dq_b");
  b.node("Add", {"ad", "bd"}, {"s"}, "add");
  b.node("QuantizeLinear", {"s", "ys", "yz"}, {"sum"}, "q_sum");
  b.node("Mul", {"ad", "f"}, {"product"}, "mul");
  b.node("DequantizeLinear", {"m", "as", "az"}, {"md"}, "dq_m");
  b.node("Mul", {"md", "half"}, {"scaled"}, "scale");
  b.node("MatMul", {"scaled", "w"}, {"mm"}, "matmul");
  auto graph = import_onnx_model(b.model(), {}, "cl_qdq_binary", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  opencl_test::expect_every_node_accepted(*graph);
  const Tensor a = u8_ramp({2, 3, 4}, 53), m = u8_ramp({3, 4}, 31);
  Tensor bt(DType::kI8, {4}), f(DType::kF32, {2, 3, 4});
  for (size_t k = 0; k < 24; ++k) f.values<float>()[k] = static_cast<float>(k % 7) * 0.25f - 0.5f;
  for (size_t k = 0; k < 4; ++k) bt.values<int8_t>()[k] = static_cast<int8_t>(k * 70 - 120);
  const std::vector<Tensor> inputs = {a, bt, f, m};
  const std::vector<Tensor> expected = run_on_cpu(*graph, inputs);
  ASSERT_FALSE(expected.empty());
  for (Storage storage : {Storage::kFloat32, Storage::kFloat16}) {
    auto program = ClProgram::compile(*graph, runtime, storage, 300000);
    ASSERT_TRUE(program.is_ok()) << program.status().message();
    EXPECT_EQ((*program)->stats().kernels, 4);  // add, mul, dq_m, matmul
    auto outputs = (*program)->run(inputs);
    ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
    const std::string where = std::to_string(storage_bytes(storage)) + "-byte storage";
    ASSERT_EQ((*outputs)[0].byte_size(), expected[0].byte_size());
    EXPECT_EQ(std::memcmp((*outputs)[0].raw(), expected[0].raw(), (*outputs)[0].byte_size()), 0)
        << where;
    const double tolerance = storage == Storage::kFloat32 ? 1e-5 : 1e-2;
    for (size_t o = 1; o < 3; ++o) {
      const auto got = (*outputs)[o].values<float>();
      const auto want = expected[o].values<float>();
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_NEAR(got[i], want[i], tolerance * (1 + std::abs(want[i])))
            << "output " << o << " element " << i << ", " << where;
      }
    }
  }
}

// DequantizeLinear -> MatMul -> QuantizeLinear in one tiled launch: u8 activations by int8
// weights scaled per column, and by another dequantized activation (attention's products), each
// quantized to i8; against the CPU (QLinearMatMul's int32 sums for the first, fp32 between the
// Q/DQ nodes for the second), a step at most and rarely.
TEST_F(ClProgramTest, QdqMatMulsRunAsOneKernel) {
  const std::shared_ptr<DeviceRuntime>& runtime = runtime_;
  OnnxBuilder b(17);
  b.input("a", DType::kU8, {2, 3, 40}).input("c", DType::kU8, {2, 40, 6});
  b.output("y", DType::kI8, {2, 3, 5}).output("z", DType::kI8, {2, 3, 6});
  std::vector<int8_t> w(40 * 5);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int8_t>((i * 7919 + 5) % 255 - 127);
  b.initializer_f32("as", {}, {0.04f})
      .initializer("az", Tensor::from_vector(DType::kU8, {}, std::vector<uint8_t>{120}))
      .initializer_f32("cs", {}, {0.03f})
      .initializer("cz", Tensor::from_vector(DType::kU8, {}, std::vector<uint8_t>{9}))
      .initializer("w", Tensor::from_vector(DType::kI8, {40, 5}, w))
      .initializer_f32("ws", {5}, {0.004f, 0.005f, 0.006f, 0.007f, 0.008f})
      .initializer_f32("ys", {}, {0.9f})
      .initializer("yz", Tensor::from_vector(DType::kI8, {}, std::vector<int8_t>{2}));
  b.node("DequantizeLinear", {"a", "as", "az"}, {"ad"}, "dq_a");
  b.node("DequantizeLinear", {"c", "cs", "cz"}, {"cd"}, "dq_c");
  set_attr(b.node("DequantizeLinear", {"w", "ws"}, {"wd"}, "dq_w"), "axis", int64_t{1});
  b.node("MatMul", {"ad", "wd"}, {"p"}, "linear");
  b.node("QuantizeLinear", {"p", "ys", "yz"}, {"y"}, "q_y");
  b.node("MatMul", {"ad", "cd"}, {"q"}, "attention");
  b.node("QuantizeLinear", {"q", "ys", "yz"}, {"z"}, "q_z");
  auto graph = import_onnx_model(b.model(), {}, "cl_qdq_matmul", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  opencl_test::expect_every_node_accepted(*graph);
  const Tensor a = u8_ramp({2, 3, 40}, 53), c = u8_ramp({2, 40, 6}, 29);
  const std::vector<Tensor> expected = run_on_cpu(*graph, {a, c});
  ASSERT_FALSE(expected.empty());
  for (Storage storage : {Storage::kFloat32, Storage::kFloat16}) {
    auto program = ClProgram::compile(*graph, runtime, storage, 300000);
    ASSERT_TRUE(program.is_ok()) << program.status().message();
    EXPECT_EQ((*program)->stats().kernels, 2);  // every DQ and Q in the products
    auto outputs = (*program)->run({a, c});
    ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
    for (size_t o = 0; o < 2; ++o) {
      expect_a_step_apart((*outputs)[o], expected[o], 10,
                          "output " + std::to_string(o) + ", " +
                              std::to_string(storage_bytes(storage)) + "-byte storage");
    }
  }
}

// DequantizeLinear -> Gemm -> QuantizeLinear in one tiled launch: a classifier's head as ONNX
// Runtime's quantizer writes it (B [N, K] transposed, int8 scaled per row, an int32 bias
// dequantized per channel, which runs once at compile), and B [K, N] scaled per column with alpha
// 0.5 and a float bias; one row and three; against the CPU, a step at most and rarely. A Gemm
// adding C with beta 0.5 keeps its DequantizeLinear and QuantizeLinear kernels.
TEST_F(ClProgramTest, QdqGemmsRunAsOneKernel) {
  constexpr int64_t kN = 24;
  std::vector<int8_t> w(kN * 40);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int8_t>((i * 7919 + 5) % 255 - 127);
  std::vector<float> ws, bias_scales;
  std::vector<int32_t> bias;
  for (int64_t n = 0; n < kN; ++n) {
    ws.push_back(0.002f + 0.001f * static_cast<float>(n % 7));
    bias_scales.push_back(0.04f * ws.back());
    bias.push_back(static_cast<int32_t>((n * 1237) % 6001) - 3000);
  }
  for (const int64_t m : {1, 3}) {
    for (const float beta : {1.0f, 0.5f}) {
      OnnxBuilder b(17);
      b.input("a", DType::kU8, {m, 40});
      b.output("y", DType::kI8, {m, kN}).output("z", DType::kI8, {m, kN});
      b.initializer_f32("as", {}, {0.04f})
          .initializer("az", Tensor::from_vector(DType::kU8, {}, std::vector<uint8_t>{120}))
          .initializer("w", Tensor::from_vector(DType::kI8, {kN, 40}, w))
          .initializer("w2", Tensor::from_vector(DType::kI8, {40, kN}, w))
          .initializer_f32("ws", {kN}, ws)
          .initializer("b", Tensor::from_vector(DType::kI32, {kN}, bias))
          .initializer_f32("bs", {kN}, bias_scales)
          .initializer_random("c", {kN}, 1.0f, 3)
          .initializer_f32("ys", {}, {0.25f})
          .initializer("yz", Tensor::from_vector(DType::kI8, {}, std::vector<int8_t>{3}));
      b.node("DequantizeLinear", {"a", "as", "az"}, {"ad"}, "dq_a");
      set_attr(b.node("DequantizeLinear", {"w", "ws"}, {"wd"}, "dq_w"), "axis", 0);
      set_attr(b.node("DequantizeLinear", {"w2", "ws"}, {"w2d"}, "dq_w2"), "axis", 1);
      set_attr(b.node("DequantizeLinear", {"b", "bs"}, {"bd"}, "dq_b"), "axis", 0);
      auto& head = b.node("Gemm", {"ad", "wd", "bd"}, {"p"}, "head");
      set_attr(head, "transB", 1);
      set_attr(head, "beta", beta);
      set_attr(b.node("Gemm", {"ad", "w2d", "c"}, {"q"}, "linear"), "alpha", 0.5f);
      b.node("QuantizeLinear", {"p", "ys", "yz"}, {"y"}, "q_y");
      b.node("QuantizeLinear", {"q", "ys", "yz"}, {"z"}, "q_z");
      auto graph = import_onnx_model(b.model(), {}, "cl_qdq_gemm", {});
      ASSERT_TRUE(graph.is_ok()) << graph.status().message();
      opencl_test::expect_every_node_accepted(*graph);
      const Tensor a = u8_ramp({m, 40}, 53);
      const std::vector<Tensor> expected = run_on_cpu(*graph, {a});
      ASSERT_FALSE(expected.empty());
      for (Storage storage : {Storage::kFloat32, Storage::kFloat16}) {
        const std::string where = std::to_string(m) + " rows, beta " + std::to_string(beta) + ", " +
                                  std::to_string(storage_bytes(storage)) + "-byte storage";
        auto program = ClProgram::compile(*graph, runtime_, storage, 300000);
        ASSERT_TRUE(program.is_ok()) << program.status().message();
        // beta 0.5: the head's Gemm, its A's DequantizeLinear and its QuantizeLinear apart.
        EXPECT_EQ((*program)->stats().kernels, beta == 1.0f ? 2 : 4) << where;
        auto outputs = (*program)->run({a});
        ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
        for (size_t o = 0; o < 2; ++o) {
          expect_a_step_apart((*outputs)[o], expected[o], 12,
                              "output " + std::to_string(o) + ", " + where);
        }
      }
    }
  }
}

// DequantizeLinear of each input -> Concat -> QuantizeLinear as one step (a fire module's
// QLinearConcat in ONNX Runtime's terms): each input's copy requantized from its own scale and
// zero point to the output's (copy_rows), u8 in, i8 out, along the channels and the last axis;
// against the CPU, a step apart at most and rarely.
TEST_F(ClProgramTest, QdqConcatRequantizesEachInputInItsCopy) {
  for (const int64_t axis : {1, -1}) {
    OnnxBuilder b(17);
    using Dims = std::vector<int64_t>;
    const Dims x1_dims = axis == 1 ? Dims{2, 5, 40} : Dims{2, 3, 80};
    b.input("x0", DType::kU8, {2, 3, 40}).input("x1", DType::kU8, x1_dims);
    b.output("y", DType::kI8, axis == 1 ? Dims{2, 8, 40} : Dims{2, 3, 120});
    b.initializer_f32("s0", {}, {0.02f})
        .initializer("z0", Tensor::from_vector(DType::kU8, {}, std::vector<uint8_t>{100}))
        .initializer_f32("s1", {}, {0.013f})
        .initializer("z1", Tensor::from_vector(DType::kU8, {}, std::vector<uint8_t>{7}))
        .initializer_f32("ys", {}, {0.0231f})
        .initializer("yz", Tensor::from_vector(DType::kI8, {}, std::vector<int8_t>{-20}));
    b.node("DequantizeLinear", {"x0", "s0", "z0"}, {"d0"}, "dq_0");
    b.node("DequantizeLinear", {"x1", "s1", "z1"}, {"d1"}, "dq_1");
    set_attr(b.node("Concat", {"d0", "d1"}, {"c"}, "concat"), "axis", axis);
    b.node("QuantizeLinear", {"c", "ys", "yz"}, {"y"}, "q_y");
    auto graph = import_onnx_model(b.model(), {}, "cl_qdq_concat", {});
    ASSERT_TRUE(graph.is_ok()) << graph.status().message();
    opencl_test::expect_every_node_accepted(*graph);
    const Tensor x0 = u8_ramp({2, 3, 40}, 37);
    const Tensor x1 = u8_ramp(x1_dims, 53);
    const std::vector<Tensor> expected = run_on_cpu(*graph, {x0, x1});
    ASSERT_FALSE(expected.empty());
    for (Storage storage : {Storage::kFloat32, Storage::kFloat16}) {
      const std::string where = "axis " + std::to_string(axis) + ", " +
                                std::to_string(storage_bytes(storage)) + "-byte storage";
      auto program = ClProgram::compile(*graph, runtime_, storage, 300000);
      ASSERT_TRUE(program.is_ok()) << program.status().message();
      EXPECT_EQ((*program)->stats().kernels, 1) << where;
      auto outputs = (*program)->run({x0, x1});
      ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
      expect_a_step_apart((*outputs)[0], expected[0], 20, where);
    }
  }
}

// A Concat of a float Conv's output (written in place) and a dequantized input, quantized: not
// the QDQ Concat (every input must come dequantized), the Conv still writes in place and the
// QuantizeLinear still runs (fused, it was skipped with the Concat's step: y never written).
TEST_F(ClProgramTest, ConcatOfAConvAndADequantizedInputKeepsItsQuantizeLinear) {
  OnnxBuilder b(17);
  b.input("x", DType::kF32, {1, 4, 6, 6}).input("q", DType::kU8, {1, 2, 6, 6});
  b.output("y", DType::kI8, {1, 5, 6, 6});
  b.initializer_random("w", {3, 4, 1, 1}, 0.5f, 11)
      .initializer_f32("s", {}, {0.02f})
      .initializer("z", Tensor::from_vector(DType::kU8, {}, std::vector<uint8_t>{128}))
      .initializer_f32("ys", {}, {0.0213f})
      .initializer("yz", Tensor::from_vector(DType::kI8, {}, std::vector<int8_t>{1}));
  b.node("Conv", {"x", "w"}, {"c"}, "conv");
  b.node("DequantizeLinear", {"q", "s", "z"}, {"d"}, "dq");
  set_attr(b.node("Concat", {"c", "d"}, {"cat"}, "concat"), "axis", 1);
  b.node("QuantizeLinear", {"cat", "ys", "yz"}, {"y"}, "q_y");
  auto graph = import_onnx_model(b.model(), {}, "cl_concat_conv_dq", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  Tensor x(DType::kF32, {1, 4, 6, 6});
  auto xs = x.values<float>();
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(i % 17) * 0.1f - 0.8f;
  const Tensor q = u8_ramp({1, 2, 6, 6}, 41);
  const std::vector<Tensor> expected = run_on_cpu(*graph, {x, q});
  ASSERT_FALSE(expected.empty());
  auto program = ClProgram::compile(*graph, runtime_, Storage::kFloat32, 300000);
  ASSERT_TRUE(program.is_ok()) << program.status().message();
  auto outputs = (*program)->run({x, q});
  ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
  expect_a_step_apart((*outputs)[0], expected[0], 20, "a Conv and a dequantized input");
}

// DequantizeLinear -> MatMul -> QuantizeLinear -> DequantizeLinear -> bias Add -> QuantizeLinear
// (ONNX Runtime's quantizer on a Linear exported as MatMul and Add) as one launch: the product's
// integers requantized with the bias added between, the bias a dequantized int8 row or 8-bit
// integers of their own scale (what that quantizer makes of it); batch 2 and one row; against the
// CPU, a step apart at most and rarely.
TEST_F(ClProgramTest, QdqLinearAddsItsBiasAfterTheProductsQuantization) {
  for (const bool row_input : {false, true}) {
    for (const int64_t m : {1, 3}) {
      OnnxBuilder b(17);
      b.input("a", DType::kU8, {2, m, 40}).input("r", DType::kI8, {24});
      b.output("y", DType::kI8, {2, m, 24});
      quantized_linear(b);
      b.initializer_f32("ys", {}, {0.31f})
          .initializer("yz", Tensor::from_vector(DType::kI8, {}, std::vector<int8_t>{-3}));
      b.node("DequantizeLinear", {row_input ? "r" : "bq", "bs"}, {"bd"}, "dq_bias");
      b.node("Add", {"pd", "bd"}, {"s"}, "bias");
      b.node("QuantizeLinear", {"s", "ys", "yz"}, {"y"}, "q_y");
      auto graph = import_onnx_model(b.model(), {}, "cl_qdq_linear", {});
      ASSERT_TRUE(graph.is_ok()) << graph.status().message();
      opencl_test::expect_every_node_accepted(*graph);
      const Tensor a = u8_ramp({2, m, 40}, 53);
      std::vector<int8_t> row(24);
      for (size_t i = 0; i < row.size(); ++i) row[i] = static_cast<int8_t>(i * 11 % 200 - 100);
      const Tensor r = Tensor::from_vector(DType::kI8, {24}, row);
      // (A row dequantized from a constant runs once, at compile.)
      expect_kernels_a_step_apart(runtime_, *graph, 1,
                                  std::string(row_input ? "an 8-bit row" : "a float row") + ", " +
                                      std::to_string(m) + " rows",
                                  {a, r}, 12);
    }
  }
}

// A MatMul of int8 weights scaled per column then a float bias Add, float out (what ONNX
// Runtime's MatMulIntegerToFloat is read as): the bias goes in the product's input 2 although the
// column scales took a later slot first (it was dropped: every output off by its column's bias).
TEST_F(ClProgramTest, PerColumnQuantizedMatMulKeepsItsBias) {
  OnnxBuilder b(17);
  b.input("a", DType::kU8, {4, 40}).output("y", DType::kF32, {4, 5});
  std::vector<int8_t> w(40 * 5);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int8_t>((i * 7919 + 5) % 255 - 127);
  b.initializer_f32("as", {}, {0.04f})
      .initializer("az", Tensor::from_vector(DType::kU8, {}, std::vector<uint8_t>{120}))
      .initializer("w", Tensor::from_vector(DType::kI8, {40, 5}, w))
      .initializer_f32("ws", {5}, {0.004f, 0.005f, 0.006f, 0.007f, 0.008f})
      .initializer_f32("bias", {5}, {1.5f, -2.0f, 0.25f, 3.0f, -0.75f});
  b.node("DequantizeLinear", {"a", "as", "az"}, {"ad"}, "dq_a");
  set_attr(b.node("DequantizeLinear", {"w", "ws"}, {"wd"}, "dq_w"), "axis", int64_t{1});
  b.node("MatMul", {"ad", "wd"}, {"p"}, "linear");
  b.node("Add", {"p", "bias"}, {"y"}, "bias");
  auto graph = import_onnx_model(b.model(), {}, "cl_qdq_matmul_bias", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  const Tensor a = u8_ramp({4, 40}, 53);
  const std::vector<Tensor> expected = run_on_cpu(*graph, {a});
  ASSERT_FALSE(expected.empty());
  auto program = ClProgram::compile(*graph, runtime_, Storage::kFloat32, 300000);
  ASSERT_TRUE(program.is_ok()) << program.status().message();
  EXPECT_EQ((*program)->stats().kernels, 1);  // the bias in the product's epilogue
  auto outputs = (*program)->run({a});
  ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
  const std::span<const float> got = (*outputs)[0].values<float>();
  const std::span<const float> want = expected[0].values<float>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4f) << i;
}

// `graph` (u8 x [2, 3, 40] in, i8 y out: a one-input op between its DequantizeLinear and
// QuantizeLinear), every node accepted, as one kernel (expect_kernels_a_step_apart).
void expect_one_kernel_a_step_apart(const std::shared_ptr<DeviceRuntime>& runtime,
                                    const Graph& graph, const std::string& what) {
  opencl_test::expect_every_node_accepted(graph);
  expect_kernels_a_step_apart(runtime, graph, 1, what);
}

// DequantizeLinear -> LayerNormalization -> QuantizeLinear in one kernel (layer_norm_rows_q), u8
// in, i8 out, against the CPU's fp32 between the Q/DQ nodes: a step apart at most, rarely.
TEST_F(ClProgramTest, QdqLayerNormRunsAsOneKernel) {
  const std::shared_ptr<DeviceRuntime>& runtime = runtime_;
  OnnxBuilder b(17);
  b.input("x", DType::kU8, {2, 3, 40});
  b.output("y", DType::kI8, {2, 3, 40});
  b.initializer_f32("xs", {}, {0.05f})
      .initializer("xz", Tensor::from_vector(DType::kU8, {}, std::vector<uint8_t>{110}))
      .initializer_random("gamma", {40}, 1.0f, 5)
      .initializer_random("beta", {40}, 0.5f, 6)
      .initializer_f32("ys", {}, {0.02f})
      .initializer("yz", Tensor::from_vector(DType::kI8, {}, std::vector<int8_t>{-4}));
  b.node("DequantizeLinear", {"x", "xs", "xz"}, {"xd"}, "dq_x");
  b.node("LayerNormalization", {"xd", "gamma", "beta"}, {"n"}, "norm");
  b.node("QuantizeLinear", {"n", "ys", "yz"}, {"y"}, "q_y");
  auto graph = import_onnx_model(b.model(), {}, "cl_qdq_layer_norm", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  expect_one_kernel_a_step_apart(runtime, *graph, "LayerNormalization");
}

// DequantizeLinear -> op -> QuantizeLinear in one kernel, u8 in, i8 out, against the CPU's fp32
// between the Q/DQ nodes (a step apart at most, rarely): Softmax and LogSoftmax along rows of 40
// (softmax_rows_q), GELU's Erf and a Sigmoid (unary_q), GlobalAveragePool (row_mean_rows).
TEST_F(ClProgramTest, QdqSoftmaxesAndActivationsRunAsOneKernel) {
  const std::shared_ptr<DeviceRuntime>& runtime = runtime_;
  struct Case {
    const char* op;
    float y_scale;
    int8_t y_zero;
    int64_t y_size;
  };
  for (const Case& c : {Case{"Softmax", 1.0f / 256, -128, 40}, Case{"LogSoftmax", 0.05f, 100, 40},
                        Case{"Erf", 1.0f / 127, 0, 40}, Case{"Sigmoid", 1.0f / 256, -128, 40},
                        Case{"GlobalAveragePool", 0.0037f, 0, 1}}) {
    OnnxBuilder b(17);
    b.input("x", DType::kU8, {2, 3, 40});
    b.output("y", DType::kI8, {2, 3, c.y_size});
    b.initializer_f32("xs", {}, {0.01f})
        .initializer("xz", Tensor::from_vector(DType::kU8, {}, std::vector<uint8_t>{110}))
        .initializer_f32("ys", {}, {c.y_scale})
        .initializer("yz", Tensor::from_vector(DType::kI8, {}, std::vector<int8_t>{c.y_zero}));
    b.node("DequantizeLinear", {"x", "xs", "xz"}, {"xd"}, "dq_x");
    b.node(c.op, {"xd"}, {"v"}, "op");
    b.node("QuantizeLinear", {"v", "ys", "yz"}, {"y"}, "q_y");
    auto graph = import_onnx_model(b.model(), {}, "cl_qdq_one_input", {});
    ASSERT_TRUE(graph.is_ok()) << graph.status().message();
    expect_one_kernel_a_step_apart(runtime, *graph, c.op);
  }
}

// DequantizeLinear -> Softmax -> QuantizeLinear of one 8-bit type over the last axis: ONNX
// Runtime's QLinearSoftmax, one kernel. On a CPU device (PoCL) and on rows too short for a work
// group each, its table and order (qlinear_softmax_rows): the CPU's bytes, ONNX Runtime's (rows
// of 3 and 7 ran the float ops apart before, 1 step off in a third of the values).
TEST_F(ClProgramTest, QLinearSoftmaxIsTheCpusBytes) {
  const std::shared_ptr<DeviceRuntime>& runtime = runtime_;
  auto kernels = runtime->kernels(Storage::kFloat32, 300000);
  ASSERT_TRUE(kernels.is_ok()) << kernels.status().message();
  if (!(*kernels)->ordered_sums()) GTEST_SKIP() << "not a CPU device";
  for (const int64_t size : {int64_t{3}, int64_t{7}, int64_t{40}, int64_t{197}}) {
    for (const float y_scale : {1.0f / 255, 1.0f / 256}) {
      SCOPED_TRACE("rows of " + std::to_string(size) + ", y_scale " + std::to_string(y_scale));
      OnnxBuilder b(17);
      b.input("x", DType::kU8, {2, 3, size});
      b.output("y", DType::kU8, {2, 3, size});
      b.initializer_f32("xs", {}, {0.07f})
          .initializer("xz", Tensor::from_vector(DType::kU8, {}, std::vector<uint8_t>{110}))
          .initializer_f32("ys", {}, {y_scale})
          .initializer("yz", Tensor::from_vector(DType::kU8, {}, std::vector<uint8_t>{0}));
      b.node("DequantizeLinear", {"x", "xs", "xz"}, {"xd"}, "dq_x");
      b.node("Softmax", {"xd"}, {"p"}, "softmax");
      b.node("QuantizeLinear", {"p", "ys", "yz"}, {"y"}, "q_y");
      auto graph = import_onnx_model(b.model(), {}, "cl_qlinear_softmax", {});
      ASSERT_TRUE(graph.is_ok()) << graph.status().message();
      const std::vector<Tensor> inputs = {u8_ramp({2, 3, size}, 37)};
      const std::vector<Tensor> expected = run_on_cpu(*graph, inputs);
      auto program = ClProgram::compile(*graph, runtime, Storage::kFloat32, 300000);
      ASSERT_TRUE(program.is_ok()) << program.status().message();
      EXPECT_EQ((*program)->stats().kernels, 1);
      auto outputs = (*program)->run(inputs);
      ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
      const auto got = (*outputs)[0].values<uint8_t>();
      const auto want = expected[0].values<uint8_t>();
      EXPECT_TRUE(std::equal(got.begin(), got.end(), want.begin(), want.end()));
    }
  }
}

}  // namespace
}  // namespace hsched::opencl
