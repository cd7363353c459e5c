// The accuracy budget at compile time (scheduler/runtime/accuracy_budget.cpp): a layer whose
// reduced precision (bf16 or int8 on the CPU, fp16 for bf16 on PoCL) passes the policy's budget on
// the sample inputs is planned again in fp32 with reason accuracy_budget; its neighbours keep
// theirs.
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cpu/device.h"
#include "backends/opencl/opencl_test_util.h"
#include "executor_test_util.h"
#include "hsched/config.h"
#include "scheduler/config/discover.h"
#include "scheduler/planner/schedule.h"
#include "scheduler/runtime/compile.h"

namespace hsched {
namespace {

using test::cpu_reference;
using test::ExecutorOpenClTest;
using test::expect_close;
using test::random_tensor;

// An accuracy budget keeps the one layer that blows it in fp32: x + 1000 -> MatMul by weights
// whose columns sum to 0 (the 1000 cancels, so bf16's step of 4 at 1000, or int8's step of 4 over
// [0, 1001], swamps x) beside a plain MatMul of x. Under `--devices cpu --precision P` with a
// max_rel budget for P, the plain one stays in P and the cancelling one is planned again in fp32
// (accuracy_budget). `reduced_error`: how close the plain layer's P output stays to fp32.
void expect_layer_over_budget_keeps_fp32(Precision precision, double budget, float reduced_error) {
  Graph g;
  g.name = "cancel";
  g.opset = 17;
  const ValueId x = g.add_value("x", DType::kF32, Shape({4, 64}));
  g.add_input(x);
  const ValueId offset =
      g.add_constant("offset", Tensor::from_vector(DType::kF32, {1}, std::vector<float>{1000}));
  Tensor centred = random_tensor({64, 16}, 11);
  for (int64_t col = 0; col < 16; ++col) {
    double mean = 0;
    for (int64_t row = 0; row < 64; ++row) mean += centred.values<float>()[row * 16 + col];
    for (int64_t row = 0; row < 64; ++row) {
      centred.values<float>()[row * 16 + col] -= static_cast<float>(mean / 64);
    }
  }
  const ValueId w_cancel = g.add_constant("w_cancel", centred);
  const ValueId w_plain = g.add_constant("w_plain", random_tensor({64, 16}, 12));
  const ValueId shifted = g.add_value("shifted", DType::kF32, Shape({4, 64}));
  const ValueId y_cancel = g.add_value("y_cancel", DType::kF32, Shape({4, 16}));
  const ValueId y_plain = g.add_value("y_plain", DType::kF32, Shape({4, 16}));
  g.add_node(Node{"shift", "Add", "", {x, offset}, {shifted}, {}});
  const NodeId cancel =
      g.add_node(Node{"cancel", "MatMul", "", {shifted, w_cancel}, {y_cancel}, {}});
  const NodeId plain = g.add_node(Node{"plain", "MatMul", "", {x, w_plain}, {y_plain}, {}});
  g.add_output(y_cancel);
  g.add_output(y_plain);

  Policy policy = devices_policy("cpu", precision);
  policy.accuracy = AccuracyBudget{AccuracyMetric::kMaxRel, {{precision, budget}}};
  auto plan = schedule(g, discover_target_for("cpu"), policy);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  EXPECT_EQ(plan->nodes[cancel].precision, precision);
  auto exe = compile(g, *plan, {});
  ASSERT_TRUE(exe.is_ok()) << exe.status().message();
  const Plan compiled = (*exe)->plan();
  EXPECT_EQ(compiled.nodes[plain].precision, precision);
  EXPECT_EQ(compiled.nodes[cancel].precision, Precision::kFp32);
  EXPECT_EQ((*exe)->stats().replans, 1);
  bool reported = false;
  char budget_text[64];
  std::snprintf(budget_text, sizeof(budget_text), "over the %s budget %g",
                precision_name(precision), budget);
  for (const Fallback& f : compiled.fallbacks) {
    if (f.node != cancel) continue;
    reported = true;
    EXPECT_EQ(f.reason, ReasonCode::kAccuracyBudget);
    EXPECT_NE(f.detail.find(budget_text), std::string::npos) << f.detail;
  }
  EXPECT_TRUE(reported);
  // Its outputs: the fp32 layer exact to fp32 rounding, the reduced one within its precision's.
  const std::vector<Tensor> inputs = {random_tensor({4, 64}, 13)};
  auto outputs = (*exe)->run(inputs);
  ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
  const std::vector<Tensor> want = cpu_reference(g, inputs);
  expect_close((*outputs)[0], want[0], 2e-3f, 1e-3f);
  expect_close((*outputs)[1], want[1], reduced_error, reduced_error);
}

TEST(AccuracyBudgetTest, LayerOverTheBf16BudgetKeepsFp32WithItsReason) {
  if (!cpu::probe_cpu().bf16) GTEST_SKIP() << "this CPU has no AVX512_BF16";
  expect_layer_over_budget_keeps_fp32(Precision::kBf16, 0.02, 5e-2f);
}

// int8 on the CPU: dynamic quantization (a scale per run over the activation's range).
TEST(AccuracyBudgetTest, LayerOverTheInt8BudgetKeepsFp32WithItsReason) {
  if (!cpu::probe_cpu().vnni) GTEST_SKIP() << "this CPU has no VNNI";
  expect_layer_over_budget_keeps_fp32(Precision::kInt8, 0.05, 1e-1f);
}

// x [4, 64] times a [64, 16] matrix of ones, planned with `--devices opencl --precision
// bf16`: PoCL computes fp16 for it (placement substituted).
struct OnesMatMul {
  Graph graph;
  NodeId matmul = kNoNode;
};

OnesMatMul ones_matmul() {
  OnesMatMul m;
  m.graph.name = "range";
  m.graph.opset = 17;
  const ValueId x = m.graph.add_value("x", DType::kF32, Shape({4, 64}));
  m.graph.add_input(x);
  Tensor ones(DType::kF32, {64, 16});
  for (float& w : ones.values<float>()) w = 1.0f;
  const ValueId w = m.graph.add_constant("w", ones);
  const ValueId y = m.graph.add_value("y", DType::kF32, Shape({4, 16}));
  m.matmul = m.graph.add_node(Node{"mm", "MatMul", "", {x, w}, {y}, {}});
  m.graph.add_output(y);
  return m;
}

Tensor filled(float value) {
  Tensor t(DType::kF32, {4, 64});
  for (float& v : t.values<float>()) v = value;
  return t;
}

// Compiles `m` with `sample` as the accuracy inputs: the MatMul is refused fp16 on the device
// (accuracy_budget, a detail starting `detail`) and planned again in fp32; its outputs equal the
// CPU's.
void expect_refused_fp16(const OnesMatMul& m, const Plan& plan, const std::string& cache_dir,
                         const Tensor& sample, const std::string& detail) {
  ExecutorOptions options;
  options.cache_dir = cache_dir;
  options.accuracy_inputs = {sample};
  auto exe = compile(m.graph, plan, options);
  ASSERT_TRUE(exe.is_ok()) << exe.status().message();
  const Plan ran = (*exe)->plan();
  // Planned again in a higher precision: fp32, on the device or elsewhere.
  EXPECT_EQ(ran.nodes[m.matmul].precision, Precision::kFp32);
  EXPECT_EQ((*exe)->stats().replans, 1);
  bool reported = false;
  for (const Rejection& r : ran.rejections) {
    if (r.node != m.matmul || r.reason != ReasonCode::kAccuracyBudget) continue;
    reported = true;
    EXPECT_EQ(r.device, plan.nodes[m.matmul].device);
    EXPECT_EQ(r.precision, Precision::kFp16);
    EXPECT_EQ(r.detail.rfind(detail, 0), 0U) << r.detail;
  }
  EXPECT_TRUE(reported);
  auto outputs = (*exe)->run({sample});
  ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
  expect_close((*outputs)[0], cpu_reference(m.graph, {sample})[0], 0.0f, 1e-5f);
}

// bf16 asked of a device that computes fp16 instead (PoCL under `--devices opencl --precision
// bf16`): a MatMul whose values pass fp16's 65504 on the sample inputs (x ~ 2000, 64 terms), or
// whose values all lie below fp16's smallest normal (x ~ 1e-7: fp16 holds them as noise), is
// refused fp16 on the device at compile time and planned again in fp32; the outputs stay equal
// to the CPU's. A small input keeps it in fp16.
TEST_F(ExecutorOpenClTest, Bf16MappedToFp16IsRefusedWhereValuesLeaveFp16sRange) {
  const OnesMatMul m = ones_matmul();
  auto plan =
      schedule(m.graph, discover_target_for("opencl"), devices_policy("opencl", Precision::kBf16));
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  ASSERT_EQ(plan->nodes[m.matmul].reason, PlacementReason::kSubstituted)
      << plan->nodes[m.matmul].detail;
  ASSERT_EQ(plan->nodes[m.matmul].precision, Precision::kFp16);
  const std::string cache = cache_dir_.path().string();
  expect_refused_fp16(m, *plan, cache, filled(2000.0f), "fp16 range: values up to 128000");
  expect_refused_fp16(m, *plan, cache, filled(1e-7f), "fp16 range: values at most 6.4e-06");

  ExecutorOptions options;
  options.cache_dir = cache;
  options.accuracy_inputs = {filled(2.0f)};
  auto kept = compile(m.graph, *plan, options);
  ASSERT_TRUE(kept.is_ok()) << kept.status().message();
  EXPECT_EQ((*kept)->plan().nodes[m.matmul].precision, Precision::kFp16);
  EXPECT_EQ((*kept)->stats().replans, 0);
}

}  // namespace
}  // namespace hsched
