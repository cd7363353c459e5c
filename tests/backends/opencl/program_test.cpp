// ClProgram's replay (program.h): from the third run on, nodes whose every command is a kernel
// launch enqueue the kernels their second run recorded. Each run of one program must give the
// same bits as a program compiled afresh for that input, whose one run replays nothing. On the
// first OpenCL device (PoCL in CI; skipped, not passed, without one).
#include "backends/opencl/program.h"

#include <gtest/gtest.h>

#include "graph/onnx_builder.h"
#include "graph/onnx_import.h"
#include "opencl_test_util.h"
#include "support/temp_dir.h"

namespace hsched::opencl {
namespace {

// sigmoid(x) (reads the graph input: not replayable) -> conv -> relu -> reshape -> MatMul (CLBlast:
// not replayable) -> softmax, and the relu's output with the sigmoid's added and concatenated.
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

TEST(ClProgramTest, ReplayedRunsMatchFreshPrograms) {
  test::TempDir cache_dir;
  const std::shared_ptr<DeviceRuntime> runtime = opencl_test::first_runtime(cache_dir);
  if (!runtime) GTEST_SKIP() << "no OpenCL platform or device on this machine";
  const Graph graph = replay_graph();
  // From the third run: the conv (its relu fused), the softmax, the add and the concat; not the
  // MatMul (CLBlast). The sigmoid reads x: bound in place per run with fp32 storage on a device
  // sharing host memory, so not replayed there; written into its own buffer otherwise (fp16
  // storage converts it there, as a discrete GPU writes it), so replayed.
  const bool in_place = runtime->info().host_unified_memory;
  for (const auto& [storage, replayed] :
       {std::pair{Storage::kFloat32, in_place ? 4 : 5}, std::pair{Storage::kFloat16, 5}}) {
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

}  // namespace
}  // namespace hsched::opencl
