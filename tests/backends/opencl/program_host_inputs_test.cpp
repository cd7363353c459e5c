// ClProgram with host inputs given per run (node_ops.h: shapes, starts, axes and k as integer
// graph inputs, read on the host from each run's tensors, or read back where the program made
// them; a Gather's indices, read on the device) and with int64 outputs (ArgMax/ArgMin indices):
// every run matches the CPU for the values it was given, including runs the kernels could have
// replayed; values that disagree with the planned shapes are an error of that run, and the next
// good run is still right. On the first OpenCL device (PoCL in CI; skipped, not passed, without
// one).
#include <cmath>

#include <gtest/gtest.h>

#include "backends/cpu/program.h"
#include "backends/opencl/program.h"
#include "graph/onnx_builder.h"
#include "graph/onnx_import.h"
#include "opencl_test_util.h"
#include "support/temp_dir.h"

namespace hsched::opencl {
namespace {

Graph host_inputs_graph() {
  OnnxBuilder b(17);
  b.input("x", DType::kF32, {4, 6})
      .input("starts", DType::kI64, {1})
      .input("ends", DType::kI64, {1})
      .input("shape", DType::kI64, {2})
      .input("idx", DType::kI64, {3})
      .input("axes", DType::kI64, {1})
      .input("k", DType::kI64, {});
  b.output("sliced", DType::kF32, {4, 3})
      .output("reshaped", DType::kF32, {3, 8})
      .output("gathered", DType::kF32, {4, 3})
      .output("summed", DType::kF32, {1, 6})
      .output("upper", DType::kF32, {4, 6})
      .output("argmax", DType::kI64, {4})
      .output("argmin", DType::kI64, {1, 6});
  b.initializer_i64("slice_axes", {1}, {1});
  b.node("Slice", {"x", "starts", "ends", "slice_axes"}, {"sliced"}, "slice");
  b.node("Reshape", {"x", "shape"}, {"reshaped"}, "reshape");
  set_attr(b.node("Gather", {"x", "idx"}, {"gathered"}, "gather"), "axis", int64_t{1});
  b.node("ReduceSum", {"x", "axes"}, {"summed"}, "sum");
  b.node("Trilu", {"x", "k"}, {"upper"}, "trilu");
  onnx::NodeProto& argmax = b.node("ArgMax", {"x"}, {"argmax"}, "argmax");
  set_attr(argmax, "axis", int64_t{1});
  set_attr(argmax, "keepdims", int64_t{0});
  set_attr(b.node("ArgMin", {"x"}, {"argmin"}, "argmin"), "select_last_index", int64_t{1});
  auto graph = import_onnx_model(b.model(), {}, "cl_host_inputs", {});
  EXPECT_TRUE(graph.is_ok()) << graph.status().message();
  return graph.is_ok() ? std::move(*graph) : Graph{};
}

Tensor ints(std::vector<int64_t> dims, std::vector<int64_t> values) {
  return Tensor::from_vector(DType::kI64, std::move(dims), values);
}

// Multiples of 1/8 with repeats (ties for ArgMax/ArgMin), exact in fp16 storage too.
std::vector<Tensor> inputs_for(int run, int64_t start, std::vector<int64_t> idx,
                               std::vector<int64_t> axes, int64_t k) {
  Tensor x(DType::kF32, {4, 6});
  auto values = x.values<float>();
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] = static_cast<float>((static_cast<int>(i) * (run + 5)) % 7 - 3) / 8.0f;
  }
  return {x,
          ints({1}, {start}),
          ints({1}, {start + 3}),
          ints({2}, {3, -1}),
          ints({3}, std::move(idx)),
          ints({1}, std::move(axes)),
          ints({}, {k})};
}

void expect_equal(const std::vector<Tensor>& got, const std::vector<Tensor>& want,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t o = 0; o < got.size(); ++o) {
    ASSERT_EQ(got[o].dtype(), want[o].dtype()) << what << ", output " << o;
    ASSERT_EQ(got[o].dims(), want[o].dims()) << what << ", output " << o;
    if (got[o].dtype() == DType::kI64) {
      const auto g = got[o].values<int64_t>(), w = want[o].values<int64_t>();
      EXPECT_EQ(std::vector<int64_t>(g.begin(), g.end()), std::vector<int64_t>(w.begin(), w.end()))
          << what << ", output " << o;
      continue;
    }
    const auto g = got[o].values<float>(), w = want[o].values<float>();
    for (size_t i = 0; i < g.size(); ++i) {
      EXPECT_NEAR(g[i], w[i], 1e-3) << what << ", output " << o << " [" << i << "]";
    }
  }
}

// The first OpenCL device's runtime, once for the suite; skipped without a device.
class ClProgramHostInputsTest : public opencl_test::SuiteRuntimeTest {};

TEST_F(ClProgramHostInputsTest, EachRunReadsItsOwnValuesAndMatchesTheCpu) {
  const std::shared_ptr<DeviceRuntime>& runtime = runtime_;
  const Graph graph = host_inputs_graph();
  opencl_test::expect_every_node_accepted(graph);
  auto cpu = cpu::CpuProgram::compile(graph, {});
  ASSERT_TRUE(cpu.is_ok()) << cpu.status().message();
  for (Storage storage : {Storage::kFloat32, Storage::kFloat16}) {
    SCOPED_TRACE(storage == Storage::kFloat32 ? "fp32 storage" : "fp16 storage");
    auto program = ClProgram::compile(graph, runtime, storage, 300000);
    ASSERT_TRUE(program.is_ok()) << program.status().message();
    // Runs 2 and later would replay recorded kernels: each run's values must still be read.
    for (int run = 0; run < 5; ++run) {
      const std::vector<Tensor> inputs = run % 2 == 0 ? inputs_for(run, 1, {0, 5, -1}, {0}, 1)
                                                      : inputs_for(run, 2, {3, 1, 2}, {-2}, -2);
      auto expected = (*cpu)->run(inputs);
      ASSERT_TRUE(expected.is_ok()) << expected.status().message();
      auto outputs = (*program)->run(inputs);
      ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
      expect_equal(*outputs, *expected, "run " + std::to_string(run));
    }
    // Values the planned shapes do not allow: an error naming the node, then a good run.
    const struct {
      std::vector<Tensor> inputs;
      const char* message;
    } bad[] = {
        {inputs_for(0, 5, {0, 1, 2}, {0}, 0), "slice"},          // 1 column, not 3
        {inputs_for(0, 1, {0, 6, 1}, {0}, 0), "out of range"},   // index 6 of 6
        {inputs_for(0, 1, {0, 1, 2}, {1}, 0), "the output is"},  // [4, 1], not [1, 6]
    };
    for (const auto& [inputs, message] : bad) {
      auto outputs = (*program)->run(inputs);
      ASSERT_FALSE(outputs.is_ok()) << message;
      EXPECT_NE(outputs.status().message().find(message), std::string::npos)
          << outputs.status().message();
    }
    const std::vector<Tensor> good = inputs_for(7, 0, {2, 2, 0}, {-2}, 0);
    auto expected = (*cpu)->run(good);
    ASSERT_TRUE(expected.is_ok()) << expected.status().message();
    auto outputs = (*program)->run(good);
    ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
    expect_equal(*outputs, *expected, "after the errors");
  }
}

// A Gather's int32 indices made per run are read on the device: each run's rows of a constant
// (negative from the end), the Gather's kernel replayed (a reader of the graph's inputs is not,
// where the device shares the host's memory: the Add); an index out of range fails its run.
TEST_F(ClProgramHostInputsTest, GatherReadsInt32IndicesOnTheDevice) {
  OnnxBuilder b(17);
  b.input("idx", DType::kI32, {2, 2});
  b.output("y", DType::kF32, {2, 2, 4});
  Tensor x(DType::kF32, {5, 4});
  auto values = x.values<float>();
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) / 4.0f;
  b.initializer("x", x).initializer("zero",
                                    Tensor::from_vector(DType::kI32, {}, std::vector<int32_t>{0}));
  b.node("Add", {"idx", "zero"}, {"rows"}, "rows");
  b.node("Gather", {"x", "rows"}, {"y"}, "gather");
  auto graph = import_onnx_model(b.model(), {}, "cl_gather_i32", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  opencl_test::expect_every_node_accepted(*graph);
  auto cpu = cpu::CpuProgram::compile(*graph, {});
  ASSERT_TRUE(cpu.is_ok()) << cpu.status().message();
  auto program = ClProgram::compile(*graph, runtime_, Storage::kFloat32, 300000);
  ASSERT_TRUE(program.is_ok()) << program.status().message();
  const auto idx = [](std::vector<int32_t> rows) {
    return Tensor::from_vector(DType::kI32, {2, 2}, std::move(rows));
  };
  for (const std::vector<int32_t>& rows :
       {std::vector<int32_t>{0, 4, 1, 1}, {-1, 2, 3, -5}, {4, 0, -2, 2}}) {
    const std::vector<Tensor> inputs = {idx(rows)};
    auto expected = (*cpu)->run(inputs);
    ASSERT_TRUE(expected.is_ok()) << expected.status().message();
    auto outputs = (*program)->run(inputs);
    ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
    expect_equal(*outputs, *expected, "rows " + std::to_string(rows[0]));
  }
  EXPECT_EQ((*program)->replayed_launches(), 1);
  auto bad = (*program)->run({idx({0, 5, 1, 1})});
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("out of range"), std::string::npos)
      << bad.status().message();
}

// MaxPool's Indices (int64, storage_order 0 and 1; ties go to the first tap), pads and strides:
// the CPU's values and indices.
TEST_F(ClProgramHostInputsTest, MaxPoolIndicesMatchTheCpu) {
  const std::shared_ptr<DeviceRuntime>& runtime = runtime_;
  OnnxBuilder b(17);
  b.input("x", DType::kF32, {2, 3, 5, 6});
  b.output("y", DType::kF32, {2, 3, 3, 3})
      .output("at", DType::kI64, {2, 3, 3, 3})
      .output("y_col", DType::kF32, {2, 3, 3, 3})
      .output("at_col", DType::kI64, {2, 3, 3, 3});
  for (int64_t order : {0, 1}) {
    onnx::NodeProto& pool =
        b.node("MaxPool", {"x"}, {order ? "y_col" : "y", order ? "at_col" : "at"},
               order ? "pool_col" : "pool");
    set_attr(pool, "kernel_shape", std::vector<int64_t>{3, 2});
    set_attr(pool, "strides", std::vector<int64_t>{2, 2});
    set_attr(pool, "pads", std::vector<int64_t>{1, 0, 1, 0});
    set_attr(pool, "storage_order", order);
  }
  auto graph = import_onnx_model(b.model(), {}, "cl_pool_indices", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  opencl_test::expect_every_node_accepted(*graph);
  Tensor x(DType::kF32, {2, 3, 5, 6});
  for (size_t i = 0; i < 180; ++i) x.values<float>()[i] = static_cast<float>((i * 7) % 5) / 4.0f;
  auto cpu = cpu::CpuProgram::compile(*graph, {});
  ASSERT_TRUE(cpu.is_ok()) << cpu.status().message();
  auto expected = (*cpu)->run({x});
  ASSERT_TRUE(expected.is_ok()) << expected.status().message();
  for (Storage storage : {Storage::kFloat32, Storage::kFloat16}) {
    auto program = ClProgram::compile(*graph, runtime, storage, 300000);
    ASSERT_TRUE(program.is_ok()) << program.status().message();
    auto outputs = (*program)->run({x});
    ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
    expect_equal(*outputs, *expected, storage == Storage::kFloat32 ? "fp32" : "fp16");
  }
}

// Indices made on the device (ArgMax) and read on the host by a later node of the same program
// (Gather's indices) are read back before that node: the CPU's values.
TEST_F(ClProgramHostInputsTest, HostInputsMadeOnTheDeviceAreReadBack) {
  const std::shared_ptr<DeviceRuntime>& runtime = runtime_;
  OnnxBuilder b(17);
  b.input("x", DType::kF32, {4, 6});
  b.output("y", DType::kF32, {6, 6});
  set_attr(b.node("ArgMax", {"x"}, {"rows"}, "argmax"), "keepdims", int64_t{0});
  b.node("Gather", {"x", "rows"}, {"y"}, "gather");
  auto graph = import_onnx_model(b.model(), {}, "cl_device_indices", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  auto cpu = cpu::CpuProgram::compile(*graph, {});
  ASSERT_TRUE(cpu.is_ok()) << cpu.status().message();
  for (Storage storage : {Storage::kFloat32, Storage::kFloat16}) {
    auto program = ClProgram::compile(*graph, runtime, storage, 300000);
    ASSERT_TRUE(program.is_ok()) << program.status().message();
    for (int run = 0; run < 3; ++run) {
      const std::vector<Tensor> inputs = {inputs_for(run, 0, {0, 1, 2}, {0}, 0)[0]};
      auto expected = (*cpu)->run(inputs);
      ASSERT_TRUE(expected.is_ok()) << expected.status().message();
      auto outputs = (*program)->run(inputs);
      ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
      expect_equal(*outputs, *expected, "run " + std::to_string(run));
    }
  }
}

}  // namespace
}  // namespace hsched::opencl
