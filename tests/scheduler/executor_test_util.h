// Shared by the executor's tests: a graph an OpenCL plan splits, its CPU reference, the plan of
// `--devices opencl`, and the fixture that skips without an OpenCL device.
#pragma once

#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cpu/program.h"
#include "backends/opencl/opencl_test_util.h"
#include "graph/graph.h"
#include "hsched/config.h"
#include "scheduler/config/discover.h"
#include "scheduler/planner/schedule.h"
#include "support/temp_dir.h"

namespace hsched::test {

inline Tensor random_tensor(const std::vector<int64_t>& dims, uint32_t seed) {
  Tensor t(DType::kF32, dims);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (float& v : t.values<float>()) v = dist(rng);
  return t;
}

// x[1,3,8,8] -> Conv(4, 3x3, pad 1) -> Relu -> CumSum(axis 1) -> Conv(2, 1x1) -> y. CumSum has
// no OpenCL kernel: an OpenCL plan splits into OpenCL, CPU, OpenCL partitions.
inline Graph split_graph() {
  Graph g;
  g.name = "split";
  g.opset = 17;
  const ValueId x = g.add_value("x", DType::kF32, Shape({1, 3, 8, 8}));
  g.add_input(x);
  const ValueId w1 = g.add_constant("w1", random_tensor({4, 3, 3, 3}, 1));
  const ValueId b1 = g.add_constant("b1", random_tensor({4}, 2));
  const ValueId c1 = g.add_value("c1", DType::kF32, Shape({1, 4, 8, 8}));
  const ValueId r1 = g.add_value("r1", DType::kF32, Shape({1, 4, 8, 8}));
  const ValueId axis =
      g.add_constant("axis", Tensor::from_vector(DType::kI64, {}, std::vector<int64_t>{1}));
  const ValueId s1 = g.add_value("s1", DType::kF32, Shape({1, 4, 8, 8}));
  const ValueId w2 = g.add_constant("w2", random_tensor({2, 4, 1, 1}, 3));
  const ValueId y = g.add_value("y", DType::kF32, Shape({1, 2, 8, 8}));
  Node conv1{"conv1", "Conv", "", {x, w1, b1}, {c1}, {}};
  conv1.attributes["pads"] = Attribute(std::vector<int64_t>{1, 1, 1, 1});
  g.add_node(conv1);
  g.add_node(Node{"relu1", "Relu", "", {c1}, {r1}, {}});
  g.add_node(Node{"sum1", "CumSum", "", {r1, axis}, {s1}, {}});
  g.add_node(Node{"conv2", "Conv", "", {s1, w2}, {y}, {}});
  g.add_output(y);
  return g;
}

inline std::vector<Tensor> cpu_reference(const Graph& graph, const std::vector<Tensor>& inputs) {
  auto program = cpu::CpuProgram::compile(graph, cpu::CpuOptions{});
  EXPECT_TRUE(program.is_ok()) << program.status().message();
  auto outputs = (*program)->run(inputs);
  EXPECT_TRUE(outputs.is_ok()) << outputs.status().message();
  return std::move(outputs).value();
}

inline void expect_close(const Tensor& actual, const Tensor& expected, float atol, float rtol) {
  ASSERT_EQ(actual.dims(), expected.dims());
  const auto a = actual.values<float>();
  const auto b = expected.values<float>();
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_LE(std::abs(a[i] - b[i]), atol + rtol * std::abs(b[i])) << "element " << i;
  }
}

// The plan of `--devices opencl`: this machine restricted to its OpenCL devices and the host.
inline Plan opencl_plan(const Graph& graph, Precision precision) {
  auto target = restrict_devices(discover_target(), "opencl");
  EXPECT_TRUE(target.is_ok()) << target.status().message();
  auto plan = schedule(graph, *target, devices_policy("opencl", precision));
  EXPECT_TRUE(plan.is_ok()) << plan.status().message();
  return std::move(plan).value();
}

inline int nodes_on_api(const Plan& plan, DeviceApi api) {
  int count = 0;
  for (const NodePlacement& placement : plan.nodes) {
    count += plan.target.find(placement.device)->api == api ? 1 : 0;
  }
  return count;
}

class ExecutorOpenClTest : public ::testing::TestWithParam<Precision> {
 protected:
  void SetUp() override {
    if (opencl_test::first_device() == std::nullopt) {
      GTEST_SKIP() << "no OpenCL platform or device on this machine";
    }
  }
  test::TempDir cache_dir_;
};

}  // namespace hsched::test
