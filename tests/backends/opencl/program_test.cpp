// ClProgram's replay (program.h): from the third run on, nodes whose every command is a kernel
// launch enqueue the kernels their second run recorded. Each run of one program must give the
// same bits as a program compiled afresh for that input, whose one run replays nothing. 8-bit
// quantized data (QuantizeLinear/DequantizeLinear) against the CPU. On the first OpenCL device
// (PoCL in CI; skipped, not passed, without one).
#include "backends/opencl/program.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "graph/onnx_builder.h"
#include "graph/onnx_import.h"
#include "program_test_util.h"

namespace hsched::opencl {
namespace {

// sigmoid(x) (reads the graph input: not replayable with fp32 storage in place) -> conv -> relu ->
// reshape -> MatMul -> softmax, and the relu's output with the sigmoid's added and concatenated.
Graph replay_graph() {
  OnnxBuilder b(17);
  b.input("x", DType::kF32, {1, 4, 8, 8});
  b.output("y", DType::kF32, {4, 16})
      .output("z", DType::kF32, {1, 4, 8, 8})
      .output("cat", DType::kF32, {1, 8, 8, 8});
  b.initializer_random("w", {4, 4, 3, 3}, 0.5f, 1).initializer_random("m", {64, 16}, 0.5f, 2);
  b.initializer_i64("shape", {2}, {4, 64});
  b.node("Sigmoid", {"x"}, {"s"}, "sigmoid");
  set_attr(b.node("Conv", {"s", "w"}, {"c"}, "conv"), "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("Relu", {"c"}, {"r"}, "relu");
  b.node("Reshape", {"r", "shape"}, {"flat"}, "reshape");
  b.node("MatMul", {"flat", "m"}, {"p"}, "matmul");
  b.node("Softmax", {"p"}, {"y"}, "softmax");
  b.node("Add", {"r", "s"}, {"z"}, "add");
  set_attr(b.node("Concat", {"r", "z"}, {"cat"}, "concat"), "axis", int64_t{1});
  auto graph = import_onnx_model(b.model(), {}, "cl_replay", {});
  EXPECT_TRUE(graph.is_ok()) << graph.status().message();
  return graph.is_ok() ? std::move(*graph) : Graph{};
}

Tensor input_for(int run) {
  Tensor x(DType::kF32, {1, 4, 8, 8});
  auto values = x.values<float>();
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] = static_cast<float>((static_cast<int>(i) * (run + 3)) % 17 - 8) / 8.0f;
  }
  return x;
}

std::vector<std::vector<float>> floats_of(const std::vector<Tensor>& tensors) {
  std::vector<std::vector<float>> out;
  for (const Tensor& t : tensors)
    out.emplace_back(t.values<float>().begin(), t.values<float>().end());
  return out;
}

using program_test::ClProgramTest;
using program_test::run_on_cpu;
using program_test::u8_ramp;

TEST_F(ClProgramTest, ReplayedRunsMatchFreshPrograms) {
  const std::shared_ptr<DeviceRuntime>& runtime = runtime_;
  const Graph graph = replay_graph();
  // From the third run: the conv (its relu fused), the MatMul (matmul_tiled), the softmax, the add
  // and the concat. The sigmoid reads x: bound in place per run with fp32 storage on a device
  // sharing host memory, so not replayed there; written into its own buffer otherwise (fp16
  // storage converts it there, as a discrete GPU writes it), so replayed.
  const bool in_place = runtime->info().host_unified_memory;
  for (const auto& [storage, replayed] :
       {std::pair{Storage::kFloat32, in_place ? 5 : 6}, std::pair{Storage::kFloat16, 6}}) {
    auto program = ClProgram::compile(graph, runtime, storage, 300000);
    ASSERT_TRUE(program.is_ok()) << program.status().message();
    for (int run = 0; run < 5; ++run) {
      EXPECT_EQ((*program)->replayed_steps(), run < 2 ? 0 : replayed)
          << storage_bytes(storage) << "-byte storage, before run " << run;
      auto outputs = (*program)->run({input_for(run)});
      ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
      auto fresh = ClProgram::compile(graph, runtime, storage, 300000);
      ASSERT_TRUE(fresh.is_ok()) << fresh.status().message();
      auto expected = (*fresh)->run({input_for(run)});
      ASSERT_TRUE(expected.is_ok()) << expected.status().message();
      EXPECT_EQ(floats_of(*outputs), floats_of(*expected))
          << storage_bytes(storage) << "-byte storage, run " << run;
    }
  }
}

// x -> Q (u8, zero point 128) -> DQ -> Conv (per-channel int8 weights) -> Q (i8, zero point -3)
// -> DQ, with both quantized values also graph outputs, and a u8 graph input dequantized: every
// value crossing the device's boundary in 8 bits, and the Q/DQ kernels per tensor and per axis.
Graph quantized_graph() {
  OnnxBuilder b(17);
  b.input("x", DType::kF32, {1, 4, 8, 8}).input("u", DType::kU8, {4});
  b.output("xq", DType::kU8, {1, 4, 8, 8})
      .output("cq", DType::kI8, {1, 4, 8, 8})
      .output("y", DType::kF32, {1, 4, 8, 8})
      .output("ud", DType::kF32, {4});
  b.initializer_f32("xs", {}, {0.02f})
      .initializer("xz", Tensor::from_vector(DType::kU8, {}, std::vector<uint8_t>{128}))
      .initializer("w", Tensor::from_vector(DType::kI8, {4, 4, 1, 1},
                                            std::vector<int8_t>{1, -7, 127, 9, -128, 3, 44, -90, 5,
                                                                17, 0, -1, 100, 60, -33, 2}))
      .initializer_f32("ws", {4}, {0.01f, 0.02f, 0.005f, 0.03f})
      .initializer_f32("cs", {}, {0.05f})
      .initializer("cz", Tensor::from_vector(DType::kI8, {}, std::vector<int8_t>{-3}))
      .initializer_f32("us", {}, {0.5f});
  b.node("QuantizeLinear", {"x", "xs", "xz"}, {"xq"}, "quantize_x");
  b.node("DequantizeLinear", {"xq", "xs", "xz"}, {"xd"}, "dequantize_x");
  set_attr(b.node("DequantizeLinear", {"w", "ws"}, {"wd"}, "dequantize_w"), "axis", int64_t{0});
  b.node("Conv", {"xd", "wd"}, {"c"}, "conv");
  b.node("QuantizeLinear", {"c", "cs", "cz"}, {"cq"}, "quantize_c");
  b.node("DequantizeLinear", {"cq", "cs", "cz"}, {"y"}, "dequantize_c");
  b.node("DequantizeLinear", {"u", "us", "xz"}, {"ud"}, "dequantize_u");
  auto graph = import_onnx_model(b.model(), {}, "cl_quantized", {});
  EXPECT_TRUE(graph.is_ok()) << graph.status().message();
  return graph.is_ok() ? std::move(*graph) : Graph{};
}

// Element i of a u8/i8/f32 tensor as a double.
double at(const Tensor& t, size_t i) {
  switch (t.dtype()) {
    case DType::kU8:
      return t.values<uint8_t>()[i];
    case DType::kI8:
      return t.values<int8_t>()[i];
    default:
      return t.values<float>()[i];
  }
}

TEST_F(ClProgramTest, QuantizedDataMatchesTheCpu) {
  const std::shared_ptr<DeviceRuntime>& runtime = runtime_;
  const Graph graph = quantized_graph();
  opencl_test::expect_every_node_accepted(graph);
  Tensor u(DType::kU8, {4});
  for (size_t i = 0; i < 4; ++i) u.values<uint8_t>()[i] = static_cast<uint8_t>(60 * i + 7);
  const std::vector<Tensor> inputs = {input_for(0), u};
  const std::vector<Tensor> expected = run_on_cpu(graph, inputs);
  ASSERT_FALSE(expected.empty());
  for (Storage storage : {Storage::kFloat32, Storage::kFloat16}) {
    auto program = ClProgram::compile(graph, runtime, storage, 300000);
    ASSERT_TRUE(program.is_ok()) << program.status().message();
    auto outputs = (*program)->run(inputs);
    ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
    ASSERT_EQ(outputs->size(), expected.size());
    // The quantization of x and the dequantization of u are exact in fp32 storage; the conv
    // sums floats where the CPU sums integers, and fp16 storage rounds x: a step at most (y:
    // 0.05, plus fp16's rounding of values up to about 6).
    const bool fp32 = storage == Storage::kFloat32;
    const double steps[] = {fp32 ? 0.0 : 1.0, 1.0, fp32 ? 0.05 : 0.055, 0.0};
    for (size_t o = 0; o < outputs->size(); ++o) {
      const Tensor& got = (*outputs)[o];
      const Tensor& want = expected[o];
      ASSERT_EQ(got.dtype(), want.dtype()) << "output " << o;
      ASSERT_EQ(got.dims(), want.dims()) << "output " << o;
      double worst = 0;
      for (size_t i = 0; i < static_cast<size_t>(got.elements()); ++i) {
        worst = std::max(worst, std::abs(at(got, i) - at(want, i)));
      }
      EXPECT_LE(worst, steps[o] + 1e-6)
          << "output " << o << ", " << storage_bytes(storage) << "-byte storage";
    }
  }
}

// The integer products (ops_quant.h) against the CPU: MatMulInteger with per-row and per-column
// zero points and a batch, ConvInteger with groups, QLinearMatMul (u8) and QLinearConv (i8,
// per-channel weight scales and zero points, an int32 bias, 1-D, strides and pads). int32 sums
// exactly; requantized outputs exactly in fp32 storage, within a step in fp16 (its scales).
TEST_F(ClProgramTest, IntegerProductsMatchTheCpu) {
  const std::shared_ptr<DeviceRuntime>& runtime = runtime_;
  const auto bytes = [](DType dtype, std::vector<int64_t> dims, int seed) {
    Tensor t(dtype, dims);
    for (size_t i = 0; i < static_cast<size_t>(t.elements()); ++i) {
      const int v = static_cast<int>((i * 37 + static_cast<size_t>(seed) * 11) % 256);
      if (dtype == DType::kU8)
        t.values<uint8_t>()[i] = static_cast<uint8_t>(v);
      else
        t.values<int8_t>()[i] = static_cast<int8_t>(v - 128);
    }
    return t;
  };
  OnnxBuilder b(17);
  b.input("a", DType::kU8, {2, 3, 5}).input("x", DType::kI8, {1, 4, 9});
  b.output("mm", DType::kI32, {2, 3, 4})
      .output("conv", DType::kI32, {1, 6, 4})
      .output("qmm", DType::kU8, {2, 3, 4})
      .output("qconv", DType::kI8, {1, 6, 5});
  b.initializer("b", bytes(DType::kU8, {5, 4}, 1))
      .initializer("za", Tensor::from_vector(DType::kU8, {3}, std::vector<uint8_t>{3, 200, 128}))
      .initializer("zb", Tensor::from_vector(DType::kU8, {4}, std::vector<uint8_t>{0, 9, 255, 77}))
      .initializer("w", bytes(DType::kI8, {6, 2, 3}, 2))
      .initializer("zx", Tensor::from_vector(DType::kI8, {}, std::vector<int8_t>{-5}))
      .initializer("zw",
                   Tensor::from_vector(DType::kI8, {6}, std::vector<int8_t>{0, 1, -1, 7, -8, 3}))
      .initializer_f32("sa", {}, {0.02f})
      .initializer_f32("sb", {4}, {0.01f, 0.03f, 0.005f, 0.02f})
      .initializer_f32("sy", {}, {0.7f})
      .initializer("zy", Tensor::from_vector(DType::kU8, {}, std::vector<uint8_t>{100}))
      .initializer_f32("sx", {}, {0.05f})
      .initializer_f32("sw", {6}, {0.01f, 0.02f, 0.03f, 0.04f, 0.05f, 0.06f})
      .initializer_f32("sq", {}, {0.4f})
      .initializer("zq", Tensor::from_vector(DType::kI8, {}, std::vector<int8_t>{-3}))
      .initializer("bias", Tensor::from_vector(DType::kI32, {6},
                                               std::vector<int32_t>{5, -900, 0, 1234, -7, 60000}));
  b.node("MatMulInteger", {"a", "b", "za", "zb"}, {"mm"}, "matmul_integer");
  onnx::NodeProto& conv = b.node("ConvInteger", {"x", "w", "zx", "zw"}, {"conv"}, "conv_integer");
  set_attr(conv, "group", 2);
  set_attr(conv, "strides", std::vector<int64_t>{2});
  b.node("QLinearMatMul", {"a", "sa", "za", "b", "sb", "zb", "sy", "zy"}, {"qmm"},
         "qlinear_matmul");
  onnx::NodeProto& qconv =
      b.node("QLinearConv", {"x", "sx", "zx", "w", "sw", "zw", "sq", "zq", "bias"}, {"qconv"},
             "qlinear_conv");
  set_attr(qconv, "group", 2);
  set_attr(qconv, "strides", std::vector<int64_t>{2});
  set_attr(qconv, "pads", std::vector<int64_t>{1, 1});
  auto graph = import_onnx_model(b.model(), {}, "cl_integer_products", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  opencl_test::expect_every_node_accepted(*graph);
  const std::vector<Tensor> inputs = {bytes(DType::kU8, {2, 3, 5}, 3),
                                      bytes(DType::kI8, {1, 4, 9}, 4)};
  const std::vector<Tensor> expected = run_on_cpu(*graph, inputs);
  ASSERT_FALSE(expected.empty());
  for (Storage storage : {Storage::kFloat32, Storage::kFloat16}) {
    auto program = ClProgram::compile(*graph, runtime, storage, 300000);
    ASSERT_TRUE(program.is_ok()) << program.status().message();
    auto outputs = (*program)->run(inputs);
    ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
    for (size_t o = 0; o < outputs->size(); ++o) {
      const Tensor& got = (*outputs)[o];
      const Tensor& want = expected[o];
      ASSERT_EQ(got.dtype(), want.dtype()) << o;
      ASSERT_EQ(got.dims(), want.dims()) << o;
      double worst = 0;
      for (size_t i = 0; i < static_cast<size_t>(got.elements()); ++i) {
        const double g = got.dtype() == DType::kI32 ? got.values<int32_t>()[i] : at(got, i);
        const double w = want.dtype() == DType::kI32 ? want.values<int32_t>()[i] : at(want, i);
        worst = std::max(worst, std::abs(g - w));
      }
      const bool exact = storage == Storage::kFloat32 || got.dtype() == DType::kI32;
      EXPECT_LE(worst, exact ? 0.0 : 1.0) << graph->value(graph->outputs()[o]).name << ", "
                                          << storage_bytes(storage) << "-byte storage";
    }
  }
}

// Integer arithmetic on 8-bit data (held as exact floats): wrapping Add, Sub, Mul, truncating Div
// (i8 -128 / -1 wraps), Mod with either sign rule, BitShift, and casts to and from 8 bits (out of
// range: truncated, saturated to int64, the low 8 bits): exactly the CPU's bytes; a zero divisor
// fails the run.
TEST_F(ClProgramTest, EightBitArithmeticWrapsAsTheCpus) {
  const std::shared_ptr<DeviceRuntime>& runtime = runtime_;
  OnnxBuilder b(17);
  b.input("u", DType::kU8, {6}).input("v", DType::kU8, {6});
  b.input("i", DType::kI8, {6}).input("j", DType::kI8, {6}).input("f", DType::kF32, {6});
  for (const char* name : {"add", "sub", "mul", "div", "shl", "shr"})
    b.output(name, DType::kU8, {6});
  for (const char* name : {"idiv", "imod", "ifmod", "f_to_i8"}) b.output(name, DType::kI8, {6});
  b.output("f_to_u8", DType::kU8, {6}).output("i8_to_i64", DType::kI64, {6});
  b.output("u8_to_f", DType::kF32, {6});
  b.node("Add", {"u", "v"}, {"add"}, "add");
  b.node("Sub", {"u", "v"}, {"sub"}, "sub");
  b.node("Mul", {"u", "v"}, {"mul"}, "mul");
  b.node("Div", {"u", "v"}, {"div"}, "div");
  set_attr(b.node("BitShift", {"u", "v"}, {"shl"}, "shl"), "direction", std::string("LEFT"));
  set_attr(b.node("BitShift", {"u", "v"}, {"shr"}, "shr"), "direction", std::string("RIGHT"));
  b.node("Div", {"i", "j"}, {"idiv"}, "idiv");
  b.node("Mod", {"i", "j"}, {"imod"}, "imod");
  set_attr(b.node("Mod", {"i", "j"}, {"ifmod"}, "ifmod"), "fmod", int64_t{1});
  set_attr(b.node("Cast", {"f"}, {"f_to_i8"}, "f_to_i8"), "to", int64_t{3});
  set_attr(b.node("Cast", {"f"}, {"f_to_u8"}, "f_to_u8"), "to", int64_t{2});
  set_attr(b.node("Cast", {"i"}, {"i8_to_i64"}, "i8_to_i64"), "to", int64_t{7});
  set_attr(b.node("Cast", {"u"}, {"u8_to_f"}, "u8_to_f"), "to", int64_t{1});
  auto graph = import_onnx_model(b.model(), {}, "cl_bytes", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  opencl_test::expect_every_node_accepted(*graph);
  const auto inputs = [](uint8_t divisor) {
    return std::vector<Tensor>{
        Tensor::from_vector(DType::kU8, {6}, std::vector<uint8_t>{200, 3, 255, 17, 128, 9}),
        Tensor::from_vector(DType::kU8, {6}, std::vector<uint8_t>{100, 7, 2, divisor, 9, 1}),
        Tensor::from_vector(DType::kI8, {6}, std::vector<int8_t>{-128, -7, 7, 100, -100, 0}),
        Tensor::from_vector(DType::kI8, {6}, std::vector<int8_t>{-1, 3, -3, 7, -7, 5}),
        Tensor::from_vector(DType::kF32, {6},
                            std::vector<float>{300.75f, -1.25f, 1e20f, NAN, 127.5f, -129.0f})};
  };
  const std::vector<Tensor> expected = run_on_cpu(*graph, inputs(4));
  ASSERT_FALSE(expected.empty());
  for (Storage storage : {Storage::kFloat32, Storage::kFloat16}) {
    auto program = ClProgram::compile(*graph, runtime, storage, 300000);
    ASSERT_TRUE(program.is_ok()) << program.status().message();
    auto outputs = (*program)->run(inputs(4));
    ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
    for (size_t o = 0; o < outputs->size(); ++o) {
      EXPECT_EQ(std::memcmp((*outputs)[o].raw(), expected[o].raw(), (*outputs)[o].byte_size()), 0)
          << graph->value(graph->outputs()[o]).name << ", " << storage_bytes(storage)
          << "-byte storage";
    }
    auto by_zero = (*program)->run(inputs(0));
    ASSERT_FALSE(by_zero.is_ok());
    EXPECT_NE(by_zero.status().message().find("integer division by zero"), std::string::npos)
        << by_zero.status().message();
  }
}

// DynamicQuantizeLinear: y, scale and zero point exactly the CPU's in fp32 storage (x spanning
// both signs, x all positive, x all zero), within a step in fp16 (its rounded scale).
TEST_F(ClProgramTest, DynamicQuantizeLinearMatchesTheCpu) {
  const std::shared_ptr<DeviceRuntime>& runtime = runtime_;
  OnnxBuilder b(17);
  b.input("x", DType::kF32, {3, 70});
  b.output("y", DType::kU8, {3, 70})
      .output("scale", DType::kF32, {})
      .output("zero", DType::kU8, {});
  b.node("DynamicQuantizeLinear", {"x"}, {"y", "scale", "zero"}, "dynamic_quantize");
  auto graph = import_onnx_model(b.model(), {}, "cl_dynamic_quantize", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  ASSERT_FALSE(check_node(*graph, graph->node(0)).has_value());
  auto cpu = cpu::CpuProgram::compile(*graph, {});
  ASSERT_TRUE(cpu.is_ok()) << cpu.status().message();
  for (Storage storage : {Storage::kFloat32, Storage::kFloat16}) {
    auto program = ClProgram::compile(*graph, runtime, storage, 300000);
    ASSERT_TRUE(program.is_ok()) << program.status().message();
    const bool fp32 = storage == Storage::kFloat32;
    for (int range = 0; range < 3; ++range) {
      Tensor x(DType::kF32, {3, 70});
      for (size_t i = 0; i < 210; ++i) {
        const float v = static_cast<float>((i * 53) % 97) / 13.0f;
        x.values<float>()[i] = range == 0 ? v - 3.1f : range == 1 ? v + 0.5f : 0.0f;
      }
      auto run = (*cpu)->run({x});
      ASSERT_TRUE(run.is_ok()) << run.status().message();
      const std::vector<Tensor>& expected = *run;
      auto outputs = (*program)->run({x});
      ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
      for (size_t o = 0; o < 3; ++o) {
        double worst = 0;
        for (size_t i = 0; i < static_cast<size_t>((*outputs)[o].elements()); ++i) {
          worst = std::max(worst, std::abs(at((*outputs)[o], i) - at(expected[o], i)));
        }
        const double allowed = fp32 ? 0.0 : o == 1 ? 1e-3 * at(expected[1], 0) : 1.0;
        EXPECT_LE(worst, allowed) << "output " << o << ", range " << range << ", "
                                  << storage_bytes(storage) << "-byte storage";
      }
    }
  }
}

// Ops that choose among their inputs' values (MaxPool, Max, Min, Clip) on 8-bit data, held as
// its integer values: exactly the CPU's bytes.
TEST_F(ClProgramTest, EightBitSelectionsAreExact) {
  const std::shared_ptr<DeviceRuntime>& runtime = runtime_;
  OnnxBuilder b(17);
  b.input("u", DType::kU8, {1, 2, 5, 5}).input("v", DType::kU8, {5}).input("i", DType::kI8, {7});
  b.output("pooled", DType::kU8, {1, 2, 4, 4})
      .output("maxed", DType::kU8, {1, 2, 5, 5})
      .output("mined", DType::kU8, {1, 2, 5, 5})
      .output("clipped", DType::kI8, {7});
  b.initializer("low", Tensor::from_vector(DType::kI8, {}, std::vector<int8_t>{-100}))
      .initializer("high", Tensor::from_vector(DType::kI8, {}, std::vector<int8_t>{90}));
  set_attr(b.node("MaxPool", {"u"}, {"pooled"}, "pool"), "kernel_shape",
           std::vector<int64_t>{2, 2});
  b.node("Max", {"u", "v"}, {"maxed"}, "max");
  b.node("Min", {"u", "v"}, {"mined"}, "min");
  b.node("Clip", {"i", "low", "high"}, {"clipped"}, "clip");
  auto graph = import_onnx_model(b.model(), {}, "cl_eight_bit", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  opencl_test::expect_every_node_accepted(*graph);
  const Tensor u = u8_ramp({1, 2, 5, 5}, 37);
  Tensor v(DType::kU8, {5}), i(DType::kI8, {7});
  for (size_t k = 0; k < 5; ++k) v.values<uint8_t>()[k] = static_cast<uint8_t>(60 * k);
  for (size_t k = 0; k < 7; ++k) i.values<int8_t>()[k] = static_cast<int8_t>(k * 41 - 128);
  const std::vector<Tensor> expected = run_on_cpu(*graph, {u, v, i});
  ASSERT_FALSE(expected.empty());
  for (Storage storage : {Storage::kFloat32, Storage::kFloat16}) {
    auto program = ClProgram::compile(*graph, runtime, storage, 300000);
    ASSERT_TRUE(program.is_ok()) << program.status().message();
    auto outputs = (*program)->run({u, v, i});
    ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
    for (size_t o = 0; o < outputs->size(); ++o) {
      ASSERT_EQ((*outputs)[o].dtype(), expected[o].dtype()) << "output " << o;
      ASSERT_EQ((*outputs)[o].byte_size(), expected[o].byte_size()) << "output " << o;
      EXPECT_EQ(std::memcmp((*outputs)[o].raw(), expected[o].raw(), (*outputs)[o].byte_size()), 0)
          << "output " << o << ", " << storage_bytes(storage) << "-byte storage";
    }
  }
}

}  // namespace
}  // namespace hsched::opencl
