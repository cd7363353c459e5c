// Integer data on the OpenCL device (ops_integer.h: int32 and int64 held as such): arithmetic
// (Pow too) with broadcasting and two's-complement wrapping, Div and both Mod sign rules,
// comparisons, Where, Trilu, the casts among float, bool, int32 and int64, Pad, Tile and a view,
// each exactly the CPU backend's values; a zero divisor fails the run as on the CPU. On the first
// OpenCL device (PoCL in CI; skipped, not passed, without one).
#include <cmath>
#include <cstring>
#include <limits>

#include <gtest/gtest.h>

#include "backends/cpu/program.h"
#include "backends/opencl/program.h"
#include "graph/onnx_builder.h"
#include "graph/onnx_import.h"
#include "opencl_test_util.h"
#include "support/temp_dir.h"

namespace hsched::opencl {
namespace {

Graph integer_graph() {
  OnnxBuilder b(17);
  b.input("a", DType::kI64, {2, 3})
      .input("b", DType::kI64, {3})
      .input("c", DType::kI32, {2, 3})
      .input("d", DType::kI32, {2, 3})
      .input("f", DType::kF32, {2, 3})
      .input("cond", DType::kBool, {2, 3});
  const char* i64_outputs[] = {"add", "sub", "mul", "div",     "mod",          "fmod", "max",
                               "min", "sel", "tri", "widened", "bools_as_i64", "pow"};
  for (const char* name : i64_outputs) b.output(name, DType::kI64, {2, 3});
  b.output("eq", DType::kBool, {2, 3})
      .output("lt", DType::kBool, {2, 3})
      .output("ge", DType::kBool, {2, 3})
      .output("truncated", DType::kI32, {2, 3})
      .output("narrowed", DType::kI32, {2, 3})
      .output("as_float", DType::kF32, {2, 3})
      .output("as_bool", DType::kBool, {2, 3})
      .output("reshaped", DType::kI64, {3, 2})
      .output("padded", DType::kI64, {2, 5})
      .output("tiled", DType::kI32, {2, 6})
      .output("expanded", DType::kI64, {2, 2, 3})
      .output("expanded_i32", DType::kI32, {2, 3});
  b.initializer_i64("k", {}, {-1}).initializer_i64("shape", {2}, {3, 2});
  b.initializer_i64("pads", {4}, {0, 1, 0, 1}).initializer_i64("repeats", {2}, {1, 2});
  b.initializer_i64("to", {3}, {2, 2, 3}).initializer_i64("to_rows", {2}, {2, 1});
  b.node("Add", {"a", "b"}, {"add"}, "add");
  b.node("Sub", {"a", "b"}, {"sub"}, "sub");
  b.node("Mul", {"a", "b"}, {"mul"}, "mul");
  b.node("Div", {"a", "b"}, {"div"}, "div");
  b.node("Mod", {"a", "b"}, {"mod"}, "mod");
  set_attr(b.node("Mod", {"a", "b"}, {"fmod"}, "fmod"), "fmod", int64_t{1});
  b.node("Max", {"a", "b"}, {"max"}, "max");
  b.node("Pow", {"a", "b"}, {"pow"}, "pow");
  b.node("Min", {"a", "b"}, {"min"}, "min");
  b.node("Where", {"cond", "a", "b"}, {"sel"}, "where");
  set_attr(b.node("Trilu", {"a", "k"}, {"tri"}, "trilu"), "upper", int64_t{0});
  b.node("Equal", {"c", "d"}, {"eq"}, "equal");
  b.node("Less", {"c", "d"}, {"lt"}, "less");
  b.node("GreaterOrEqual", {"a", "b"}, {"ge"}, "greater_or_equal");
  set_attr(b.node("Cast", {"f"}, {"truncated"}, "cast_f_i32"), "to", int64_t{6});
  set_attr(b.node("Cast", {"c"}, {"widened"}, "cast_i32_i64"), "to", int64_t{7});
  set_attr(b.node("Cast", {"a"}, {"narrowed"}, "cast_i64_i32"), "to", int64_t{6});
  set_attr(b.node("Cast", {"a"}, {"as_float"}, "cast_i64_f"), "to", int64_t{1});
  set_attr(b.node("Cast", {"c"}, {"as_bool"}, "cast_i32_b"), "to", int64_t{9});
  set_attr(b.node("Cast", {"cond"}, {"bools_as_i64"}, "cast_b_i64"), "to", int64_t{7});
  b.node("Reshape", {"a", "shape"}, {"reshaped"}, "reshape");
  set_attr(b.node("Pad", {"a", "pads"}, {"padded"}, "pad"), "mode", std::string("reflect"));
  b.node("Tile", {"c", "repeats"}, {"tiled"}, "tile");
  b.node("Expand", {"b", "to"}, {"expanded"}, "expand");               // [3] -> [2, 2, 3]
  b.node("Expand", {"c", "to_rows"}, {"expanded_i32"}, "expand_i32");  // [2, 3] by [2, 1]
  auto graph = import_onnx_model(b.model(), {}, "cl_integers", {});
  EXPECT_TRUE(graph.is_ok()) << graph.status().message();
  return graph.is_ok() ? std::move(*graph) : Graph{};
}

std::vector<Tensor> integer_inputs(int64_t divisor) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  return {Tensor::from_vector(DType::kI64, {2, 3}, std::vector<int64_t>{kMin, -7, 9, kMax, 13, 0}),
          Tensor::from_vector(DType::kI64, {3}, std::vector<int64_t>{-1, divisor, -4}),
          Tensor::from_vector(DType::kI32, {2, 3}, std::vector<int32_t>{-5, 0, 7, INT32_MIN, 3, 9}),
          Tensor::from_vector(DType::kI32, {2, 3}, std::vector<int32_t>{-5, 1, 6, 0, 3, 10}),
          Tensor::from_vector(DType::kF32, {2, 3},
                              std::vector<float>{-2.7f, 2.5f, nan, 3e9f, -3e9f, 0.5f}),
          Tensor::from_vector(DType::kBool, {2, 3}, std::vector<uint8_t>{1, 0, 1, 1, 0, 0})};
}

// The first OpenCL device's runtime, once for the suite; skipped without a device.
class ClProgramIntegerTest : public opencl_test::SuiteRuntimeTest {};

TEST_F(ClProgramIntegerTest, IntegerOpsGiveTheCpusValues) {
  const std::shared_ptr<DeviceRuntime>& runtime = runtime_;
  const Graph graph = integer_graph();
  opencl_test::expect_every_node_accepted(graph);
  auto cpu = cpu::CpuProgram::compile(graph, {});
  ASSERT_TRUE(cpu.is_ok()) << cpu.status().message();
  const std::vector<Tensor> inputs = integer_inputs(3);
  auto expected = (*cpu)->run(inputs);
  ASSERT_TRUE(expected.is_ok()) << expected.status().message();
  for (Storage storage : {Storage::kFloat32, Storage::kFloat16}) {
    SCOPED_TRACE(storage == Storage::kFloat32 ? "fp32 storage" : "fp16 storage");
    auto program = ClProgram::compile(graph, runtime, storage, 300000);
    ASSERT_TRUE(program.is_ok()) << program.status().message();
    for (int run = 0; run < 3; ++run) {  // the third replays recorded kernels
      auto outputs = (*program)->run(inputs);
      ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
      ASSERT_EQ(outputs->size(), expected->size());
      for (size_t o = 0; o < outputs->size(); ++o) {
        const Tensor& got = (*outputs)[o];
        const Tensor& want = (*expected)[o];
        const std::string name = graph.value(graph.outputs()[o]).name;
        ASSERT_EQ(got.dtype(), want.dtype()) << name;
        ASSERT_EQ(got.dims(), want.dims()) << name;
        // fp16 storage holds neither 3e9 (f, cast to int32) nor 2^63 (a, cast to float).
        const bool past_fp16 = name == "truncated" || name == "as_float";
        if (past_fp16 && storage == Storage::kFloat16) continue;
        EXPECT_EQ(std::memcmp(got.raw(), want.raw(), got.byte_size()), 0)
            << name << ", run " << run;
      }
    }
    auto divided_by_zero = (*program)->run(integer_inputs(0));
    ASSERT_FALSE(divided_by_zero.is_ok());
    EXPECT_NE(divided_by_zero.status().message().find("integer division by zero"),
              std::string::npos)
        << divided_by_zero.status().message();
    EXPECT_NE(divided_by_zero.status().message().find("'div'"), std::string::npos)
        << divided_by_zero.status().message();
    auto again = (*program)->run(inputs);
    ASSERT_TRUE(again.is_ok()) << again.status().message();
  }
}

// int16, uint16, uint32 and uint64 (the ops the CPU takes them for): Mod's sign rule and
// INT16_MIN % -1, Max, Min, BitShift (by the width or more: 0): exactly the CPU's.
TEST_F(ClProgramIntegerTest, NarrowAndUnsignedIntegersGiveTheCpusValues) {
  const std::shared_ptr<DeviceRuntime>& runtime = runtime_;
  OnnxBuilder b(17);
  b.input("s", DType::kI16, {4}).input("t", DType::kI16, {4}).input("u", DType::kU16, {4});
  b.input("w", DType::kU32, {4}).input("q", DType::kU64, {4}).input("n", DType::kU64, {4});
  b.output("mod", DType::kI16, {4})
      .output("max", DType::kI16, {4})
      .output("min", DType::kU16, {4})
      .output("max32", DType::kU32, {4})
      .output("left", DType::kU64, {4})
      .output("right", DType::kU64, {4});
  b.node("Mod", {"s", "t"}, {"mod"}, "mod");
  b.node("Max", {"s", "t"}, {"max"}, "max");
  b.node("Min", {"u", "u"}, {"min"}, "min");
  b.node("Max", {"w", "w"}, {"max32"}, "max32");
  set_attr(b.node("BitShift", {"q", "n"}, {"left"}, "left"), "direction", std::string("LEFT"));
  set_attr(b.node("BitShift", {"q", "n"}, {"right"}, "right"), "direction", std::string("RIGHT"));
  auto graph = import_onnx_model(b.model(), {}, "cl_narrow", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  opencl_test::expect_every_node_accepted(*graph);
  const std::vector<Tensor> inputs = {
      Tensor::from_vector(DType::kI16, {4}, std::vector<int16_t>{-7, 7, -32768, 5}),
      Tensor::from_vector(DType::kI16, {4}, std::vector<int16_t>{3, -3, -1, 5}),
      Tensor::from_vector(DType::kU16, {4}, std::vector<uint16_t>{0, 1, 65535, 40000}),
      Tensor::from_vector(DType::kU32, {4}, std::vector<uint32_t>{0, 1, 4000000000u, 7}),
      Tensor::from_vector(DType::kU64, {4},
                          std::vector<uint64_t>{1, (uint64_t{1} << 63) + 5, 7, 255}),
      Tensor::from_vector(DType::kU64, {4}, std::vector<uint64_t>{1, 1, 64, 63})};
  auto cpu = cpu::CpuProgram::compile(*graph, {});
  ASSERT_TRUE(cpu.is_ok()) << cpu.status().message();
  auto expected = (*cpu)->run(inputs);
  ASSERT_TRUE(expected.is_ok()) << expected.status().message();
  auto program = ClProgram::compile(*graph, runtime, Storage::kFloat32, 300000);
  ASSERT_TRUE(program.is_ok()) << program.status().message();
  auto outputs = (*program)->run(inputs);
  ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
  for (size_t o = 0; o < outputs->size(); ++o) {
    ASSERT_EQ((*outputs)[o].dtype(), (*expected)[o].dtype()) << o;
    EXPECT_EQ(std::memcmp((*outputs)[o].raw(), (*expected)[o].raw(), (*outputs)[o].byte_size()), 0)
        << graph->value(graph->outputs()[o]).name;
  }
}

// float16 data held as raw halves: Cast to and from float (to float16 rounding to nearest
// even), CastLike, Max, Min and Mod: exactly the CPU's bits, in both storage types.
TEST_F(ClProgramIntegerTest, Float16DataGivesTheCpusBits) {
  const std::shared_ptr<DeviceRuntime>& runtime = runtime_;
  OnnxBuilder b(17);
  b.input("h", DType::kF16, {2, 3}).input("g", DType::kF16, {3}).input("f", DType::kF32, {2, 3});
  b.output("widened", DType::kF32, {2, 3})
      .output("narrowed", DType::kF16, {2, 3})
      .output("like", DType::kF16, {2, 3})
      .output("max", DType::kF16, {2, 3})
      .output("min", DType::kF16, {2, 3})
      .output("mod", DType::kF16, {2, 3});
  set_attr(b.node("Cast", {"h"}, {"widened"}, "widen"), "to", int64_t{1});
  set_attr(b.node("Cast", {"f"}, {"narrowed"}, "narrow"), "to", int64_t{10});
  b.node("CastLike", {"f", "h"}, {"like"}, "cast_like");
  b.node("Max", {"h", "g"}, {"max"}, "max");
  b.node("Min", {"h", "g"}, {"min"}, "min");
  set_attr(b.node("Mod", {"h", "g"}, {"mod"}, "mod"), "fmod", int64_t{1});
  auto graph = import_onnx_model(b.model(), {}, "cl_half", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  opencl_test::expect_every_node_accepted(*graph);
  // Halves: 1.5, -2.25, 65504, 0.1 (rounded), -0, 3 and 2, -0.5, 0.75.
  const std::vector<Tensor> inputs = {
      Tensor::from_vector(DType::kF16, {2, 3},
                          std::vector<uint16_t>{0x3E00, 0xC080, 0x7BFF, 0x2E66, 0x8000, 0x4200}),
      Tensor::from_vector(DType::kF16, {3}, std::vector<uint16_t>{0x4000, 0xB800, 0x3A00}),
      Tensor::from_vector(DType::kF32, {2, 3},
                          std::vector<float>{0.1f, -70000.0f, 1e-8f, 2049.0f, 2051.0f, -0.0f})};
  auto cpu = cpu::CpuProgram::compile(*graph, {});
  ASSERT_TRUE(cpu.is_ok()) << cpu.status().message();
  auto expected = (*cpu)->run(inputs);
  ASSERT_TRUE(expected.is_ok()) << expected.status().message();
  for (Storage storage : {Storage::kFloat32, Storage::kFloat16}) {
    SCOPED_TRACE(storage == Storage::kFloat32 ? "fp32 storage" : "fp16 storage");
    auto program = ClProgram::compile(*graph, runtime, storage, 300000);
    ASSERT_TRUE(program.is_ok()) << program.status().message();
    auto outputs = (*program)->run(inputs);
    ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
    for (size_t o = 0; o < outputs->size(); ++o) {
      const std::string name = graph->value(graph->outputs()[o]).name;
      // fp16 storage rounds f to fp16 on the way in (then to float16 again: the same bits, but
      // 1e-8 and -70000 leave fp16's range), so narrowing is checked in fp32 storage only.
      if (storage == Storage::kFloat16 && (name == "narrowed" || name == "like")) continue;
      ASSERT_EQ((*outputs)[o].dtype(), (*expected)[o].dtype()) << name;
      EXPECT_EQ(std::memcmp((*outputs)[o].raw(), (*expected)[o].raw(), (*outputs)[o].byte_size()),
                0)
          << name;
    }
  }
}

// GatherElements, ScatterElements (add), GatherND, ScatterND and TopK (ties, a NaN) by int64
// indices given on the device: the CPU's values in both storage types (the data are multiples of
// 1/8, exact in fp16); an index out of range fails the run naming the nodes that check, and the
// next run is right.
TEST_F(ClProgramIntegerTest, GathersScattersAndTopKGiveTheCpusValues) {
  const std::shared_ptr<DeviceRuntime>& runtime = runtime_;
  OnnxBuilder b(17);
  b.input("x", DType::kF32, {3, 4})
      .input("idx", DType::kI64, {3, 2})
      .input("upd", DType::kF32, {3, 2})
      .input("rows", DType::kI64, {2, 1})
      .input("row_upd", DType::kF32, {2, 4})
      .input("k", DType::kI64, {1})
      .input("x7", DType::kF32, {2, 3, 2, 1, 2, 2, 3})
      .input("idx7", DType::kI64, {2, 1, 2, 1, 2, 2, 3});
  b.output("gathered7", DType::kF32, {2, 1, 2, 1, 2, 2, 3})
      .output("gathered", DType::kF32, {3, 2})
      .output("scattered", DType::kF32, {3, 4})
      .output("gathered_nd", DType::kF32, {2, 4})
      .output("scattered_nd", DType::kF32, {3, 4})
      .output("top", DType::kF32, {3, 2})
      .output("top_at", DType::kI64, {3, 2});
  // Rank 7: the axes after the gather axis merge into one.
  set_attr(b.node("GatherElements", {"x7", "idx7"}, {"gathered7"}, "gather_elements7"), "axis", 1);
  set_attr(b.node("GatherElements", {"x", "idx"}, {"gathered"}, "gather_elements"), "axis", 1);
  onnx::NodeProto& scatter =
      b.node("ScatterElements", {"x", "idx", "upd"}, {"scattered"}, "scatter_elements");
  set_attr(scatter, "axis", 1);
  set_attr(scatter, "reduction", std::string("add"));
  b.node("GatherND", {"x", "rows"}, {"gathered_nd"}, "gather_nd");
  b.node("ScatterND", {"x", "rows", "row_upd"}, {"scattered_nd"}, "scatter_nd");
  b.node("TopK", {"x", "k"}, {"top", "top_at"}, "top_k");
  auto graph = import_onnx_model(b.model(), {}, "cl_gathers", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  opencl_test::expect_every_node_accepted(*graph);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor x7(DType::kF32, {2, 3, 2, 1, 2, 2, 3}), idx7(DType::kI64, {2, 1, 2, 1, 2, 2, 3});
  for (size_t i = 0; i < 144; ++i) x7.values<float>()[i] = static_cast<float>(i) / 8.0f;
  for (size_t i = 0; i < 48; ++i) idx7.values<int64_t>()[i] = static_cast<int64_t>(i % 3) - 1;
  const auto inputs = [&](int64_t index) {
    return std::vector<Tensor>{
        Tensor::from_vector(DType::kF32, {3, 4},
                            std::vector<float>{0.5f, -1, 0.5f, 2, nan, 0.25f, 3, 3, -2, -2, 1, 0}),
        Tensor::from_vector(DType::kI64, {3, 2}, std::vector<int64_t>{0, 0, -1, 2, 3, index}),
        Tensor::from_vector(DType::kF32, {3, 2}, std::vector<float>{1, 2, 0.125f, -4, 8, 0.5f}),
        Tensor::from_vector(DType::kI64, {2, 1}, std::vector<int64_t>{2, -3}),
        Tensor::from_vector(DType::kF32, {2, 4}, std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}),
        Tensor::from_vector(DType::kI64, {1}, std::vector<int64_t>{2}),
        x7,
        idx7};
  };
  auto cpu = cpu::CpuProgram::compile(*graph, {});
  ASSERT_TRUE(cpu.is_ok()) << cpu.status().message();
  auto expected = (*cpu)->run(inputs(1));
  ASSERT_TRUE(expected.is_ok()) << expected.status().message();
  for (Storage storage : {Storage::kFloat32, Storage::kFloat16}) {
    SCOPED_TRACE(storage == Storage::kFloat32 ? "fp32 storage" : "fp16 storage");
    auto program = ClProgram::compile(*graph, runtime, storage, 300000);
    ASSERT_TRUE(program.is_ok()) << program.status().message();
    for (int run = 0; run < 3; ++run) {
      auto outputs = (*program)->run(inputs(run == 1 ? 9 : 1));  // run 1: an index past 4
      if (run == 1) {
        ASSERT_FALSE(outputs.is_ok());
        EXPECT_NE(outputs.status().message().find("index out of range"), std::string::npos)
            << outputs.status().message();
        EXPECT_NE(outputs.status().message().find("'gather_elements'"), std::string::npos)
            << outputs.status().message();
        continue;
      }
      ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
      for (size_t o = 0; o < outputs->size(); ++o) {
        const Tensor& got = (*outputs)[o];
        const Tensor& want = (*expected)[o];
        ASSERT_EQ(got.dtype(), want.dtype()) << o;
        ASSERT_EQ(got.dims(), want.dims()) << o;
        if (got.dtype() == DType::kF32) {  // NaN's bits change through fp16 storage
          for (size_t i = 0; i < static_cast<size_t>(got.elements()); ++i) {
            const float g = got.values<float>()[i], w = want.values<float>()[i];
            EXPECT_TRUE(g == w || (std::isnan(g) && std::isnan(w)))
                << graph->value(graph->outputs()[o]).name << " [" << i << "], run " << run << ": "
                << g << " vs " << w;
          }
          continue;
        }
        EXPECT_EQ(std::memcmp(got.raw(), want.raw(), got.byte_size()), 0)
            << graph->value(graph->outputs()[o]).name << ", run " << run;
      }
    }
  }
}

// ConstantOfShape, Range (float and int32), OneHot and ReverseSequence, their shapes, bounds,
// depth and lengths given per run: the CPU's values; a length past the time axis fails the run.
TEST_F(ClProgramIntegerTest, GeneratorsGiveTheCpusValues) {
  const std::shared_ptr<DeviceRuntime>& runtime = runtime_;
  OnnxBuilder b(17);
  b.input("shape", DType::kI64, {2})
      .input("start", DType::kF32, {})
      .input("limit", DType::kF32, {})
      .input("delta", DType::kF32, {})
      .input("istart", DType::kI32, {})
      .input("ilimit", DType::kI32, {})
      .input("idelta", DType::kI32, {})
      .input("idx", DType::kI64, {2, 2})
      .input("depth", DType::kI64, {})
      .input("x", DType::kF32, {4, 3})
      .input("lens", DType::kI64, {3});
  b.output("filled", DType::kI64, {2, 3})
      .output("ramp", DType::kF32, {5})
      .output("iramp", DType::kI32, {4})
      .output("hot", DType::kF32, {2, 3, 2})
      .output("reversed", DType::kF32, {4, 3});
  b.initializer_f32("values", {2}, {-1.0f, 2.5f});
  onnx::AttributeProto* value =
      b.node("ConstantOfShape", {"shape"}, {"filled"}, "constant_of_shape").add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  value->mutable_t()->add_dims(1);
  value->mutable_t()->add_int64_data(-7);
  b.node("Range", {"start", "limit", "delta"}, {"ramp"}, "range");
  b.node("Range", {"istart", "ilimit", "idelta"}, {"iramp"}, "int_range");
  set_attr(b.node("OneHot", {"idx", "depth", "values"}, {"hot"}, "one_hot"), "axis", 1);
  onnx::NodeProto& reverse =
      b.node("ReverseSequence", {"x", "lens"}, {"reversed"}, "reverse_sequence");
  set_attr(reverse, "batch_axis", 1);
  set_attr(reverse, "time_axis", 0);
  auto graph = import_onnx_model(b.model(), {}, "cl_generators", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  opencl_test::expect_every_node_accepted(*graph);
  const auto scalar = [](DType dtype, double v) {
    if (dtype == DType::kF32) return Tensor::from_vector(dtype, {}, std::vector<float>{float(v)});
    if (dtype == DType::kI32)
      return Tensor::from_vector(dtype, {}, std::vector<int32_t>{int32_t(v)});
    return Tensor::from_vector(dtype, {}, std::vector<int64_t>{int64_t(v)});
  };
  const auto inputs = [&](int64_t last_len) {
    Tensor x(DType::kF32, {4, 3});
    for (size_t i = 0; i < 12; ++i) x.values<float>()[i] = static_cast<float>(i) / 8.0f;
    return std::vector<Tensor>{
        Tensor::from_vector(DType::kI64, {2}, std::vector<int64_t>{2, 3}),
        scalar(DType::kF32, 0.5),
        scalar(DType::kF32, 2.25),
        scalar(DType::kF32, 0.375),
        scalar(DType::kI32, 9),
        scalar(DType::kI32, 1),
        scalar(DType::kI32, -2),
        Tensor::from_vector(DType::kI64, {2, 2}, std::vector<int64_t>{0, -1, 2, 7}),
        scalar(DType::kI64, 3),
        x,
        Tensor::from_vector(DType::kI64, {3}, std::vector<int64_t>{4, 0, last_len})};
  };
  auto cpu = cpu::CpuProgram::compile(*graph, {});
  ASSERT_TRUE(cpu.is_ok()) << cpu.status().message();
  auto expected = (*cpu)->run(inputs(2));
  ASSERT_TRUE(expected.is_ok()) << expected.status().message();
  for (Storage storage : {Storage::kFloat32, Storage::kFloat16}) {
    SCOPED_TRACE(storage == Storage::kFloat32 ? "fp32 storage" : "fp16 storage");
    auto program = ClProgram::compile(*graph, runtime, storage, 300000);
    ASSERT_TRUE(program.is_ok()) << program.status().message();
    auto outputs = (*program)->run(inputs(2));
    ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
    for (size_t o = 0; o < outputs->size(); ++o) {
      ASSERT_EQ((*outputs)[o].dtype(), (*expected)[o].dtype()) << o;
      ASSERT_EQ((*outputs)[o].dims(), (*expected)[o].dims()) << o;
      EXPECT_EQ(std::memcmp((*outputs)[o].raw(), (*expected)[o].raw(), (*outputs)[o].byte_size()),
                0)
          << graph->value(graph->outputs()[o]).name;
    }
    auto past = (*program)->run(inputs(5));
    ASSERT_FALSE(past.is_ok());
    EXPECT_NE(past.status().message().find("'reverse_sequence'"), std::string::npos)
        << past.status().message();
  }
}

}  // namespace
}  // namespace hsched::opencl
