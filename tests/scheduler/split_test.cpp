// The forced split (policy.split_every): nodes alternate over the policy's default choices every
// K nodes of the execution order, fall back (with the rejection recorded) where their slot's
// device cannot take them, and still form valid partitions.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "scheduler/planner/schedule.h"
#include "hsched/config.h"
#include "scheduler/plan_checks.h"

namespace hsched {
namespace {

using test::expect_plan_invariants;
using test::import_built;
using test::test_target;

// x -> n0 -> n1 -> ... -> y, one node per op type given, on [1, 64] floats.
Graph chain(const std::vector<std::string>& ops) {
  OnnxBuilder b(17, "chain");
  b.input("x", DType::kF32, {1, 64}).output("y", DType::kF32, {1, 64});
  std::string in = "x";
  for (size_t i = 0; i < ops.size(); ++i) {
    const std::string out = i + 1 == ops.size() ? "y" : "v" + std::to_string(i);
    b.node(ops[i], {in}, {out}, "n" + std::to_string(i));
    in = out;
  }
  return import_built(b, "chain");
}

// x -> a -> {b -> c, d} -> add(c, d) -> e -> y: two branches that meet again.
Graph diamond() {
  OnnxBuilder b(17, "diamond");
  b.input("x", DType::kF32, {1, 64}).output("y", DType::kF32, {1, 64});
  b.node("Relu", {"x"}, {"a"}, "a");
  b.node("Relu", {"a"}, {"b"}, "b");
  b.node("Relu", {"b"}, {"c"}, "c");
  b.node("Relu", {"a"}, {"d"}, "d");
  b.node("Add", {"c", "d"}, {"s"}, "add");
  b.node("Relu", {"s"}, {"y"}, "e");
  return import_built(b, "diamond");
}

// The CPU and the GPU of the test target (the GPU runs `gpu_ops`), split every `k` nodes.
Target cpu_gpu(const std::vector<std::string>& gpu_ops) {
  auto target = restrict_devices(test_target(gpu_ops, {}), "cpu,gpu0");
  EXPECT_TRUE(target.is_ok()) << target.status().message();
  return target.is_ok() ? std::move(target).value() : Target();
}

Policy split_policy(const std::string& devices, int k) {
  Policy policy = devices_policy(devices, Precision::kFp32);
  policy.split_every = k;
  return policy;
}

std::vector<int> positions(const Graph& graph) {
  auto order = graph.topological_order();
  EXPECT_TRUE(order.is_ok());
  std::vector<int> position(graph.nodes().size(), -1);
  if (!order.is_ok()) return position;
  for (size_t i = 0; i < order->size(); ++i) position[(*order)[i]] = static_cast<int>(i);
  return position;
}

class SplitEveryTest : public ::testing::TestWithParam<int> {};

TEST_P(SplitEveryTest, ChainAlternatesEveryKNodes) {
  const int k = GetParam();
  const Graph graph = chain(std::vector<std::string>(8, "Relu"));
  auto plan = schedule(graph, cpu_gpu({"Relu"}), split_policy("cpu,gpu0", k));
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  expect_plan_invariants(graph, *plan, /*cost_chosen=*/false);
  const std::vector<int> position = positions(graph);
  for (const NodePlacement& p : plan->nodes) {
    const int slot = position[p.node] / k % 2;
    SCOPED_TRACE(node_label(graph, p.node));
    EXPECT_EQ(p.device, slot == 0 ? "cpu0" : "gpu0");
    EXPECT_EQ(p.precision, Precision::kFp32);
    EXPECT_EQ(p.reason, PlacementReason::kPolicy);
    EXPECT_EQ(p.detail, "split every " + std::to_string(k) + ": slot " + std::to_string(slot) +
                            " of cpu, gpu0");
  }
  // A chain cut every k nodes: one partition per run of k, alternating devices.
  ASSERT_EQ(plan->partitions.size(), static_cast<size_t>((8 + k - 1) / k));
  for (size_t p = 0; p < plan->partitions.size(); ++p) {
    EXPECT_EQ(plan->partitions[p].device, p % 2 == 0 ? "cpu0" : "gpu0");
  }
  EXPECT_TRUE(plan->fallbacks.empty());
  EXPECT_TRUE(plan->rejections.empty());
}

INSTANTIATE_TEST_SUITE_P(K, SplitEveryTest, ::testing::Values(1, 2, 3));

TEST(SplitTest, BranchesFormValidPartitionsOnBothDevices) {
  const Graph graph = diamond();
  for (int k : {1, 2, 3}) {
    SCOPED_TRACE("k " + std::to_string(k));
    auto plan = schedule(graph, cpu_gpu({"Relu", "Add"}), split_policy("cpu,gpu0", k));
    ASSERT_TRUE(plan.is_ok()) << plan.status().message();
    expect_plan_invariants(graph, *plan, /*cost_chosen=*/false);
    const std::vector<int> position = positions(graph);
    bool cpu = false, gpu = false;
    for (const NodePlacement& p : plan->nodes) {
      EXPECT_EQ(p.device, position[p.node] / k % 2 == 0 ? "cpu0" : "gpu0");
      cpu |= p.device == "cpu0";
      gpu |= p.device == "gpu0";
    }
    EXPECT_TRUE(cpu && gpu);
    EXPECT_GT(plan->partitions.size(), 1u);
    EXPECT_FALSE(plan->transfers.empty());
  }
}

// gpu, npu, cpu split every node: a node its slot's device lacks goes to the first other listed
// choice that takes it (the NPU before the CPU), with the rejection as the reason.
TEST(SplitTest, UnsupportedNodeGoesToTheNextChoiceInListOrder) {
  const Graph graph = chain({"Relu", "Sigmoid", "Relu", "Sigmoid", "Relu", "Tanh", "Tanh"});
  Policy policy;
  policy.name = "three";
  policy.default_choices = {{"gpu", Precision::kFp32}, {"npu", Precision::kFp16},
                            {"cpu", Precision::kFp32}};
  policy.split_every = 1;
  auto plan = schedule(graph, test_target({"Relu"}, {"Relu", "Sigmoid"}), policy);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  expect_plan_invariants(graph, *plan, /*cost_chosen=*/false);
  // n0..n6 want slots 0 1 2 0 1 2 0: gpu, npu, cpu, gpu, npu, cpu, gpu.
  const std::vector<std::string> where = {"gpu0", "npu0", "cpu0", "npu0", "npu0", "cpu0", "cpu0"};
  const std::vector<PlacementReason> why = {
      PlacementReason::kPolicy, PlacementReason::kPolicy,   PlacementReason::kPolicy,
      PlacementReason::kFallback, PlacementReason::kPolicy, PlacementReason::kPolicy,
      PlacementReason::kFallback};
  for (size_t n = 0; n < where.size(); ++n) {
    const NodePlacement& p = plan->nodes[n];
    SCOPED_TRACE(node_label(graph, p.node) + ": " + p.detail);
    EXPECT_EQ(p.device, where[n]);
    EXPECT_EQ(p.reason, why[n]);
  }
  EXPECT_EQ(plan->nodes[1].precision, Precision::kFp16);
  // Only what was asked is recorded: the slot's device, then the next choices until one took it.
  std::vector<std::string> asked;
  for (const Rejection& r : plan->rejections) {
    asked.push_back(std::to_string(r.node) + " " + r.device);
  }
  EXPECT_EQ(asked, (std::vector<std::string>{"3 gpu0", "6 gpu0", "6 npu0"}));
  ASSERT_FALSE(plan->rejections.empty());
  EXPECT_EQ(plan->nodes[3].detail, "split every 1: slot 0 of gpu, npu, cpu (gpu/fp32): gpu0/fp32 "
                                   "op_unsupported: " + plan->rejections[0].detail);
  ASSERT_EQ(plan->fallbacks.size(), 2u);
  for (const Fallback& fallback : plan->fallbacks) {
    EXPECT_EQ(choice_name(fallback.wanted), "gpu/fp32");
    EXPECT_EQ(fallback.reason, ReasonCode::kOpUnsupported);
  }
  EXPECT_EQ(plan->fallbacks[0].node, 3);
  EXPECT_EQ(plan->fallbacks[0].device, "npu0");
  EXPECT_EQ(plan->fallbacks[1].node, 6);
  EXPECT_EQ(plan->fallbacks[1].device, "cpu0");  // neither gpu nor npu runs Tanh
}

// Failures found after planning (compile timeout, verification) count as the device's answer.
TEST(SplitTest, LateRejectionMovesTheNodeAndSaysWhy) {
  const Graph graph = chain(std::vector<std::string>(4, "Relu"));
  const Rejection late{1, "gpu0", Precision::kFp32, ReasonCode::kCompileTimeout,
                       "partition 1 compiled past 30000 ms"};
  auto plan = schedule(graph, cpu_gpu({"Relu"}), split_policy("cpu,gpu0", 1), {late});
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  expect_plan_invariants(graph, *plan, /*cost_chosen=*/false);
  EXPECT_EQ(plan->nodes[1].device, "cpu0");
  EXPECT_EQ(plan->nodes[1].reason, PlacementReason::kFallback);
  EXPECT_NE(plan->nodes[1].detail.find("compile_timeout: partition 1 compiled past"),
            std::string::npos)
      << plan->nodes[1].detail;
  ASSERT_EQ(plan->fallbacks.size(), 1u);
  EXPECT_EQ(plan->fallbacks[0].reason, ReasonCode::kCompileTimeout);
  EXPECT_EQ(plan->nodes[3].device, "gpu0");
}

// The split ignores cost: a plan the cost model would never choose, the same every time.
TEST(SplitTest, IgnoresCostAndIsDeterministic) {
  const Graph graph = chain(std::vector<std::string>(6, "Relu"));
  const Target target = cpu_gpu({"Relu"});
  auto normal = schedule(graph, target, devices_policy("cpu,gpu0", Precision::kFp32));
  ASSERT_TRUE(normal.is_ok()) << normal.status().message();
  EXPECT_EQ(normal->partitions.size(), 1u);  // the CPU takes everything: first in the list
  auto first = schedule(graph, target, split_policy("cpu,gpu0", 1));
  auto second = schedule(graph, target, split_policy("cpu,gpu0", 1));
  ASSERT_TRUE(first.is_ok() && second.is_ok());
  EXPECT_EQ(first->partitions.size(), 6u);
  EXPECT_GT(first->predicted_ms, normal->predicted_ms);
  ASSERT_EQ(first->nodes.size(), second->nodes.size());
  for (size_t n = 0; n < first->nodes.size(); ++n) {
    EXPECT_EQ(first->nodes[n].device, second->nodes[n].device);
    EXPECT_EQ(first->nodes[n].partition, second->nodes[n].partition);
    EXPECT_EQ(first->nodes[n].detail, second->nodes[n].detail);
  }
  EXPECT_EQ(first->predicted_ms, second->predicted_ms);
}

}  // namespace
}  // namespace hsched
