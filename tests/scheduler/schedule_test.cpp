// schedule(): placements and their reasons, fallbacks and rejections as data, the policy's
// fallback modes, objectives and precision substitutes, --devices, discovery, determinism.
#include "scheduler/planner/schedule.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

#include "backends/cpu/device.h"
#include "hsched/config.h"
#include "scheduler/config/discover.h"
#include "scheduler/plan_checks.h"

namespace hsched {
namespace {

using test::expect_plan_invariants;
using test::import_built;
using test::test_target;

// x -> conv1 -> relu1 -> conv2 -> relu2 [-> tail] -> y; 64 channels at 56x56, so that each conv
// is ~0.23 GFLOP: worth a GPU on any sane profile.
// With `tail2`, a second tail node ("tail2") after the first.
Graph conv_net(const std::string& tail = "", const std::string& tail2 = "") {
  constexpr int64_t kC = 64, kHw = 56;
  OnnxBuilder b(17, "conv_net");
  b.input("x", DType::kF32, {1, kC, kHw, kHw}).output("y", DType::kF32, {1, kC, kHw, kHw});
  b.initializer_random("w1", {kC, kC, 3, 3}, 0.1f, 1)
      .initializer_random("w2", {kC, kC, 3, 3}, 0.1f, 2);
  set_attr(b.node("Conv", {"x", "w1"}, {"c1"}, "conv1"), "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("Relu", {"c1"}, {"r1"}, "relu1");
  set_attr(b.node("Conv", {"r1", "w2"}, {"c2"}, "conv2"), "pads", std::vector<int64_t>{1, 1, 1, 1});
  if (tail.empty()) {
    b.node("Relu", {"c2"}, {"y"}, "relu2");
  } else {
    b.node("Relu", {"c2"}, {"r2"}, "relu2");
    b.node(tail, {"r2"}, {tail2.empty() ? "y" : "t"}, "tail");
    if (!tail2.empty()) b.node(tail2, {"t"}, {"y"}, "tail2");
  }
  return import_built(b, "conv_net");
}

NodeId node_named(const Graph& graph, const std::string& name) {
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    if (graph.nodes()[n].name == name) return static_cast<NodeId>(n);
  }
  ADD_FAILURE() << "no node " << name;
  return 0;
}

// Every op to `device` in `precision` first (the implicit CPU fp32 after).
Policy everything_to(const std::string& device, Precision precision,
                     Objective objective = Objective::kLatency) {
  Policy policy;
  policy.name = "everything-to-" + device;
  policy.source = "built-in";
  policy.default_choices = {{device, precision}};
  policy.objective = objective;
  return policy;
}

Target core_ultra_155h() {
  auto target = resolve_target("core-ultra-7-155h");
  EXPECT_TRUE(target.is_ok()) << target.status().message();
  return target.is_ok() ? std::move(target).value() : Target();
}

TEST(ScheduleTest, ConvNetOn155hPutsConvsOnTheGpuInFp16) {
  const Graph graph = conv_net();
  auto strict = resolve_policy("strict");
  ASSERT_TRUE(strict.is_ok()) << strict.status().message();
  auto plan = schedule(graph, core_ultra_155h(), *strict);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  expect_plan_invariants(graph, *plan);
  for (const char* conv : {"conv1", "conv2"}) {
    const NodePlacement& p = plan->nodes[node_named(graph, conv)];
    EXPECT_EQ(p.device, "gpu0") << conv;
    EXPECT_EQ(p.precision, Precision::kFp16) << conv;
    EXPECT_EQ(p.reason, PlacementReason::kFirstChoice) << conv;
  }
  for (const char* relu : {"relu1", "relu2"}) {
    const NodePlacement& p = plan->nodes[node_named(graph, relu)];
    EXPECT_EQ(p.device, "cpu0") << relu;
    EXPECT_EQ(p.reason, PlacementReason::kPolicy) << relu;
    EXPECT_NE(p.detail.find("elementwise"), std::string::npos) << p.detail;
  }
  // gpu, cpu, gpu, cpu: four partitions; x in, c1 out, r1 in, c2 out.
  EXPECT_EQ(plan->partitions.size(), 4u);
  EXPECT_EQ(plan->transfers.size(), 4u);
  EXPECT_TRUE(plan->fallbacks.empty());
  // The strict plan is compared with each device alone among all the policy's choices: the CPU
  // can take every node.
  EXPECT_EQ(plan->single_device_ms.count("cpu0"), 1u);
  // The default policy has the same first choices but lets the relus follow the convs: one GPU
  // partition, no CPU partition between two GPU ones, no slower than one device.
  auto chosen = schedule(graph, core_ultra_155h(), default_policy());
  ASSERT_TRUE(chosen.is_ok()) << chosen.status().message();
  expect_plan_invariants(graph, *chosen);
  int gpu_partitions = 0;
  for (const Partition& p : chosen->partitions) gpu_partitions += p.device == "gpu0";
  EXPECT_LE(gpu_partitions, 1);
  ASSERT_EQ(chosen->single_device_ms.count("cpu0"), 1u);
  EXPECT_LE(chosen->predicted_ms, chosen->single_device_ms.at("cpu0"));
  EXPECT_LT(chosen->predicted_ms, plan->predicted_ms);
}

// One run as add_run_times predicts it: nodes, copies, run and dispatch overheads (the objective
// adds the amortised compile), and a wake-up for each partition that starts after another device's,
// the first one after the last (runs follow each other), and the team's wake-up when such a
// partition holds a Conv; a host partition after a host partition (the first after the last)
// pays the hand-over (wake_overhead_ms) alone. `host_after_host` counts those.
double expected_run_ms(const Graph& graph, const Plan& plan, int* host_after_host) {
  double sum = 0;
  for (const NodePlacement& p : plan.nodes) sum += p.predicted_ms;
  for (const Transfer& t : plan.transfers) sum += t.predicted_ms;
  const size_t count = plan.partitions.size();
  for (size_t i = 0; i < count; ++i) {
    const DeviceProfile& device = *plan.target.find(plan.partitions[i].device);
    sum += device.run_overhead_ms + device.dispatch_overhead_ms;
    if (plan.partitions[(i + count - 1) % count].device != plan.partitions[i].device) {
      sum += device.wake_overhead_ms;
      for (NodeId n : plan.partitions[i].nodes) {
        if (graph.node(n).op_type == "Conv") {
          sum += device.team_wake_overhead_ms;
          break;
        }
      }
    } else if (device.api == DeviceApi::kHost && count > 1) {
      sum += device.wake_overhead_ms;
      ++*host_after_host;
    }
  }
  return sum;
}

Target waking_target() {
  Target target = test_target({"Conv"}, {});
  target.devices[1].compile_ms_per_partition = 5;
  target.devices[0].wake_overhead_ms = 0.25;
  target.devices[1].wake_overhead_ms = 0.5;
  target.devices[1].team_wake_overhead_ms = 0.0625;  // its partitions hold the Convs
  target.devices[0].dispatch_overhead_ms = 0.03125;
  target.devices[1].dispatch_overhead_ms = 0.015625;
  return target;
}

TEST(ScheduleTest, PredictionIsTheSumOfNodesTransfersAndPartitionOverheads) {
  const Graph graph = conv_net();
  Policy policy = default_policy();
  policy.expected_runs = 10;
  auto plan = schedule(graph, waking_target(), policy);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  ASSERT_GT(plan->partitions.size(), 1u);
  int host_after_host = 0;
  const double sum = expected_run_ms(graph, *plan, &host_after_host);
  EXPECT_NEAR(plan->predicted_run_ms, sum, 1e-9 * sum);
}

// Two CPU branches, a GPU conv on one, an Add of both on the CPU: the plan starts and ends on
// the host, so its first partition follows its last (runs follow each other) and is handed over
// all the same.
TEST(ScheduleTest, AHostPartitionAfterAHostPartitionPaysTheHandOver) {
  constexpr int64_t kC = 64, kHw = 56;
  OnnxBuilder b(17, "two_branches");
  b.input("a", DType::kF32, {1, kC, kHw, kHw}).input("b", DType::kF32, {1, kC, kHw, kHw});
  b.output("y", DType::kF32, {1, kC, kHw, kHw});
  b.initializer_random("w", {kC, kC, 3, 3}, 0.1f, 1);
  b.node("Sigmoid", {"a"}, {"sa"}, "sigmoid_a");
  b.node("Tanh", {"b"}, {"tb"}, "tanh_b");
  set_attr(b.node("Conv", {"sa", "w"}, {"c"}, "conv"), "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("Add", {"c", "tb"}, {"y"}, "add");
  const Graph graph = import_built(b, "two_branches");
  Policy policy = default_policy();
  policy.expected_runs = 1000000;
  auto plan = schedule(graph, waking_target(), policy);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  int host_after_host = 0;
  const double sum = expected_run_ms(graph, *plan, &host_after_host);
  ASSERT_GE(host_after_host, 1) << plan->partitions.size() << " partitions";
  EXPECT_NEAR(plan->predicted_run_ms, sum, 1e-9 * sum);
}

// An OpenCL partition of more kernels than kStreamKnee pays stream_overhead_ms for each past it:
// a chain of 200 Relus, 71 past.
TEST(ScheduleTest, AnOpenClPartitionPastTheStreamKneePaysPerKernel) {
  constexpr int kNodes = 200;
  OnnxBuilder b(17, "relu_chain");
  b.input("x", DType::kF32, {1, 64}).output("y", DType::kF32, {1, 64});
  std::string x = "x";
  for (int i = 0; i < kNodes; ++i) {
    const std::string y = i + 1 == kNodes ? "y" : "t" + std::to_string(i);
    b.node("Relu", {x}, {y});
    x = y;
  }
  const Graph graph = import_built(b, "relu_chain");
  Target target = test_target({"Relu"}, {});
  const auto gpu_partition_ms = [&](const Target& with) {
    auto plan = schedule(graph, with, everything_to("gpu", Precision::kFp32, Objective::kStrict));
    EXPECT_TRUE(plan.is_ok()) << plan.status().message();
    if (!plan.is_ok() || plan->partitions.size() != 1 || plan->partitions[0].device != "gpu0") {
      ADD_FAILURE() << "not one gpu0 partition";
      return 0.0;
    }
    return plan->partitions[0].run_ms;
  };
  const double plain = gpu_partition_ms(target);
  target.devices[1].stream_overhead_ms = 0.004;
  EXPECT_NEAR(gpu_partition_ms(target) - plain, (kNodes - kStreamKnee) * 0.004, 1e-9);
}

// conv_net -> Abs -> Sigmoid, the GPU lacking Sigmoid: "the GPU alone" is the GPU with the host
// taking the Sigmoid. With the GPU's launches dear, moving relu2 and the Abs to the host too is
// predicted faster: by 5.5% at 0.05 ms a launch (less than the margin a split must clear: the
// GPU-with-host plan is chosen), by more than 10% at 0.08 ms (the split is kept).
TEST(ScheduleTest, ASplitMustClearTheMarginOverTheGpuWithItsHostFallback) {
  const Graph graph = conv_net("Abs", "Sigmoid");
  Target target = test_target({"Conv", "Relu", "Abs"}, {});
  const auto host_nodes = [&](double launch_ms) {
    target.devices[1].launch_overhead_ms = launch_ms;
    auto plan = schedule(graph, target, everything_to("gpu", Precision::kFp32));
    EXPECT_TRUE(plan.is_ok()) << plan.status().message();
    std::vector<std::string> names;
    if (!plan.is_ok()) return names;
    expect_plan_invariants(graph, *plan);
    EXPECT_EQ(plan->partitions.size(), 2u);
    for (const NodePlacement& p : plan->nodes) {
      if (p.device == "cpu0") names.push_back(graph.node(p.node).name);
    }
    return names;
  };
  EXPECT_EQ(host_nodes(0.05), (std::vector<std::string>{"tail2"}));
  EXPECT_EQ(host_nodes(0.08), (std::vector<std::string>{"relu2", "tail", "tail2"}));
}

TEST(ScheduleTest, OpTheGpuLacksFallsBackToTheCpuWithOpUnsupported) {
  const Graph graph = conv_net("Sigmoid");
  auto plan =
      schedule(graph, test_target({"Conv", "Relu"}, {}), everything_to("gpu", Precision::kFp16));
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  expect_plan_invariants(graph, *plan);
  const NodeId tail = node_named(graph, "tail");
  EXPECT_EQ(plan->nodes[tail].device, "cpu0");
  EXPECT_EQ(plan->nodes[tail].reason, PlacementReason::kFallback);
  EXPECT_NE(plan->nodes[tail].detail.find("op_unsupported"), std::string::npos);
  ASSERT_EQ(plan->fallbacks.size(), 1u);
  const Fallback& fallback = plan->fallbacks[0];
  EXPECT_EQ(fallback.node, tail);
  EXPECT_EQ(choice_name(fallback.wanted), "gpu/fp16");
  EXPECT_EQ(fallback.device, "cpu0");
  EXPECT_EQ(fallback.reason, ReasonCode::kOpUnsupported);
  EXPECT_NE(fallback.detail.find("Sigmoid"), std::string::npos) << fallback.detail;
  ASSERT_EQ(plan->rejections.size(), 1u);
  EXPECT_EQ(plan->rejections[0].device, "gpu0");
  EXPECT_EQ(plan->nodes[node_named(graph, "conv1")].device, "gpu0");
}

TEST(ScheduleTest, CpuOnlyPolicyKeepsEverythingOnTheCpu) {
  const Graph graph = conv_net();
  auto policy = resolve_policy("cpu-only");
  ASSERT_TRUE(policy.is_ok()) << policy.status().message();
  auto plan = schedule(graph, core_ultra_155h(), *policy);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  expect_plan_invariants(graph, *plan);
  for (const NodePlacement& p : plan->nodes) {
    EXPECT_EQ(p.device, "cpu0");
    EXPECT_EQ(p.precision, Precision::kFp32);
  }
  EXPECT_EQ(plan->partitions.size(), 1u);
  EXPECT_TRUE(plan->transfers.empty());
  EXPECT_TRUE(plan->fallbacks.empty());
}

TEST(ScheduleTest, FallbackErrorGroupsTheOffendingNodesOnOneLine) {
  const Graph graph = conv_net("Sigmoid");
  Policy policy = everything_to("gpu", Precision::kFp16);
  policy.name = "gpu-or-nothing";
  policy.fallback = FallbackMode::kError;
  auto plan = schedule(graph, test_target({"Conv"}, {}), policy);
  ASSERT_FALSE(plan.is_ok());
  EXPECT_EQ(plan.status().code(), ErrorCode::kInvalidArgument);
  const std::string& message = plan.status().message();
  EXPECT_EQ(message.find('\n'), std::string::npos);
  EXPECT_NE(message.find("policy gpu-or-nothing forbids fallback: 3 nodes"), std::string::npos)
      << message;
  for (const char* group : {"2 Relu (node 'relu1', node 'relu2'): gpu0/fp16 op_unsupported",
                            "node 'tail' (Sigmoid): gpu0/fp16 op_unsupported"}) {
    EXPECT_NE(message.find(group), std::string::npos) << message;
  }
  EXPECT_NE(message.find("`hsched report`"), std::string::npos) << message;
  EXPECT_EQ(message.find("conv1"), std::string::npos) << message;
}

// Hundreds of offenders (an INT8 model on a policy without its ops) still give one short line:
// counts per op and reason, a few names, never every node.
TEST(ScheduleTest, FallbackErrorStaysShortForManyNodes) {
  OnnxBuilder b(17);
  constexpr int kChain = 400;
  b.input("x", DType::kF32, {1, 8}).output("y", DType::kF32, {1, 8});
  std::string previous = "x";
  for (int i = 0; i < kChain; ++i) {
    const std::string next = i + 1 == kChain ? "y" : "v" + std::to_string(i);
    b.node(i % 2 ? "Relu" : "Sigmoid", {previous}, {next},
           "node_with_a_long_name_" + std::to_string(i));
    previous = next;
  }
  const Graph graph = import_built(b);
  Policy policy = everything_to("gpu", Precision::kFp16);
  policy.name = "gpu-or-nothing";
  policy.fallback = FallbackMode::kError;
  auto plan = schedule(graph, test_target({"Conv"}, {}), policy);
  ASSERT_FALSE(plan.is_ok());
  const std::string& message = plan.status().message();
  EXPECT_EQ(message.find('\n'), std::string::npos);
  EXPECT_LT(message.size(), 1000u) << message;
  EXPECT_NE(message.find("forbids fallback: 400 nodes: 200 Sigmoid (node "), std::string::npos)
      << message;
  EXPECT_NE(message.find("200 Relu (node "), std::string::npos) << message;
  EXPECT_EQ(message.find("node_with_a_long_name_399"), std::string::npos) << message;
}

TEST(ScheduleTest, StrictTakesTheFirstSupportedChoiceLatencyWeighsCost) {
  OnnxBuilder b(17);
  b.input("x", DType::kF32, {1, 8}).output("y", DType::kF32, {1, 8});
  b.node("Relu", {"x"}, {"y"}, "relu");
  const Graph graph = import_built(b);
  Target target = test_target({"Relu"}, {});
  target.devices[1].launch_overhead_ms = 1;  // a tiny op: the GPU's launch dominates

  auto strict = schedule(graph, target, everything_to("gpu", Precision::kFp16, Objective::kStrict));
  ASSERT_TRUE(strict.is_ok()) << strict.status().message();
  EXPECT_EQ(strict->nodes[0].device, "gpu0");
  EXPECT_EQ(strict->nodes[0].precision, Precision::kFp16);
  EXPECT_EQ(strict->nodes[0].reason, PlacementReason::kFirstChoice);

  auto latency = schedule(graph, target, everything_to("gpu", Precision::kFp16));
  ASSERT_TRUE(latency.is_ok()) << latency.status().message();
  const NodePlacement& p = latency->nodes[0];
  EXPECT_EQ(p.device, "cpu0");
  EXPECT_EQ(p.reason, PlacementReason::kCost);
  EXPECT_NE(p.detail.find("gpu0/fp16 1.0"), std::string::npos) << p.detail;
  EXPECT_NE(p.detail.find(" > cpu0/fp32 0.0"), std::string::npos) << p.detail;
  EXPECT_TRUE(latency->fallbacks.empty());
  EXPECT_TRUE(latency->rejections.empty());
  expect_plan_invariants(graph, *latency);
}

TEST(ScheduleTest, PrecisionSubstitutesAreTriedOnTheSameDevice) {
  const Graph graph = conv_net();
  const Target target = test_target({}, {"Conv", "Relu"});
  Policy policy = everything_to("npu", Precision::kBf16, Objective::kStrict);
  policy.precision_substitutes[Precision::kBf16] = {Precision::kFp16};
  auto plan = schedule(graph, target, policy);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  for (const NodePlacement& p : plan->nodes) {
    EXPECT_EQ(p.device, "npu0");
    EXPECT_EQ(p.precision, Precision::kFp16);
    EXPECT_EQ(p.reason, PlacementReason::kSubstituted);
    EXPECT_EQ(p.detail, "bf16 requested; npu0 computes fp16");
  }
  EXPECT_TRUE(plan->fallbacks.empty());
  ASSERT_EQ(plan->rejections.size(), graph.nodes().size());
  EXPECT_EQ(plan->rejections[0].reason, ReasonCode::kPrecisionNotAllowed);
  EXPECT_EQ(plan->rejections[0].precision, Precision::kBf16);

  // Without a substitute the choice is rejected and the node falls back.
  policy.precision_substitutes.clear();
  plan = schedule(graph, target, policy);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  ASSERT_EQ(plan->fallbacks.size(), graph.nodes().size());
  for (const NodePlacement& p : plan->nodes) EXPECT_EQ(p.device, "cpu0");
  EXPECT_EQ(plan->fallbacks[0].reason, ReasonCode::kPrecisionNotAllowed);
}

// On a calibrated device under the latency objective each node takes the precision measured
// faster, but fp16 has to beat fp32 by 5% (less is calibration noise, and costs accuracy).
TEST(ScheduleTest, CalibratedDeviceKeepsFp32UnlessFp16IsClearlyFaster) {
  const Graph graph = conv_net();
  Target target = test_target({"Conv", "Relu"}, {});
  DeviceProfile& gpu = target.devices[1];
  ASSERT_EQ(gpu.id, "gpu0");
  Policy policy = everything_to("gpu0", Precision::kFp16);
  policy.default_choices.push_back({"gpu0", Precision::kFp32});
  const auto conv_precision = [&](double fp16_ms) {
    gpu.curves[{CostClass::kConv, Precision::kFp32}] = {{"flat", 1e12, 0.010, 0}};
    gpu.curves[{CostClass::kConv, Precision::kFp16}] = {{"flat", 1e12, fp16_ms, 0}};
    const Result<Plan> plan = schedule(graph, target, policy);
    EXPECT_TRUE(plan.is_ok()) << plan.status().message();
    if (!plan.is_ok()) return Precision::kInt8;
    const NodePlacement& conv = plan->nodes[static_cast<size_t>(node_named(graph, "conv1"))];
    EXPECT_EQ(conv.device, "gpu0");
    return conv.precision;
  };
  EXPECT_EQ(conv_precision(0.0098), Precision::kFp32);
  EXPECT_EQ(conv_precision(0.0090), Precision::kFp16);
  EXPECT_EQ(conv_precision(0.0120), Precision::kFp32);
}

TEST(ScheduleTest, ChoicesNoDeviceMatchesAreDeviceAbsentRejections) {
  const Graph graph = conv_net();
  auto cpu_only = restrict_devices(test_target({"Conv"}, {"Conv"}), "cpu");
  ASSERT_TRUE(cpu_only.is_ok()) << cpu_only.status().message();
  auto plan = schedule(graph, *cpu_only, default_policy());
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  const NodeId conv = node_named(graph, "conv1");
  EXPECT_EQ(plan->nodes[conv].device, "cpu0");
  EXPECT_EQ(plan->nodes[conv].reason, PlacementReason::kFallback);
  ASSERT_EQ(plan->fallbacks.size(), 2u);  // the two convs
  EXPECT_EQ(plan->fallbacks[0].reason, ReasonCode::kDeviceAbsent);
  EXPECT_NE(plan->fallbacks[0].detail.find("matches 'gpu'"), std::string::npos);
  std::vector<std::string> absent;
  for (const Rejection& r : plan->rejections) {
    if (r.node == conv) absent.push_back(r.device);
    EXPECT_EQ(r.reason, ReasonCode::kDeviceAbsent);
  }
  EXPECT_EQ(absent, (std::vector<std::string>{"gpu", "npu"}));
}

TEST(ScheduleTest, DevicesListKeepsTheHostCpuAsTheLastResort) {
  const Graph graph = conv_net();
  auto gpu_only = restrict_devices(test_target({"Conv"}, {}), "gpu0");
  ASSERT_TRUE(gpu_only.is_ok()) << gpu_only.status().message();
  ASSERT_EQ(gpu_only->devices.size(), 2u);
  EXPECT_EQ(gpu_only->devices[0].id, "cpu0");
  EXPECT_EQ(gpu_only->devices[1].id, "gpu0");
  auto plan = schedule(graph, *gpu_only, devices_policy("gpu0", Precision::kFp16));
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  EXPECT_EQ(plan->nodes[node_named(graph, "conv1")].device, "gpu0");
  EXPECT_EQ(plan->nodes[node_named(graph, "conv1")].precision, Precision::kFp16);
  EXPECT_EQ(plan->nodes[node_named(graph, "relu1")].device, "cpu0");  // the GPU lacks Relu
  EXPECT_EQ(plan->nodes[node_named(graph, "relu1")].reason, PlacementReason::kFallback);
  // What the list names, without the host it keeps anyway (hsched calibrate measures that).
  auto listed = listed_devices(test_target({"Conv"}, {}), "gpu0");
  ASSERT_TRUE(listed.is_ok()) << listed.status().message();
  EXPECT_EQ(*listed, std::set<std::string>{"gpu0"});
  auto both = listed_devices(test_target({"Conv"}, {}), "cpu,gpu0");
  ASSERT_TRUE(both.is_ok()) << both.status().message();
  EXPECT_EQ(*both, (std::set<std::string>{"cpu0", "gpu0"}));

  auto unknown = restrict_devices(test_target({}, {}), "cpu,tpu");
  ASSERT_FALSE(unknown.is_ok());
  EXPECT_NE(unknown.status().message().find("--devices: unknown or absent device 'tpu'"),
            std::string::npos)
      << unknown.status().message();
}

TEST(ScheduleTest, SamePlanEveryTime) {
  const Graph graph = conv_net("Sigmoid");
  const Target target = test_target({"Conv", "Relu"}, {"Conv"});
  const Policy policy = default_policy();
  auto first = schedule(graph, target, policy);
  auto second = schedule(graph, target, policy);
  ASSERT_TRUE(first.is_ok() && second.is_ok());
  ASSERT_EQ(first->nodes.size(), second->nodes.size());
  for (size_t n = 0; n < first->nodes.size(); ++n) {
    const NodePlacement& a = first->nodes[n];
    const NodePlacement& b = second->nodes[n];
    EXPECT_EQ(a.device, b.device);
    EXPECT_EQ(a.precision, b.precision);
    EXPECT_EQ(a.partition, b.partition);
    EXPECT_EQ(a.reason, b.reason);
    EXPECT_EQ(a.detail, b.detail);
    EXPECT_EQ(a.predicted_ms, b.predicted_ms);
  }
  ASSERT_EQ(first->partitions.size(), second->partitions.size());
  for (size_t p = 0; p < first->partitions.size(); ++p) {
    EXPECT_EQ(first->partitions[p].nodes, second->partitions[p].nodes);
  }
  EXPECT_EQ(first->transfers.size(), second->transfers.size());
  EXPECT_EQ(first->rejections.size(), second->rejections.size());
  EXPECT_EQ(first->predicted_ms, second->predicted_ms);
}

TEST(DiscoverTest, CpuFiguresFollowFromTheFacts) {
  cpu::CpuFacts facts;
  facts.name = "Test CPU";
  facts.cores = 8;
  facts.ghz = 3.0;
  facts.fp32_flop_per_cycle = 32;
  const DeviceProfile cpu = cpu::cpu_profile(facts);
  EXPECT_EQ(cpu.id, "cpu0");
  EXPECT_EQ(cpu.kind, DeviceKind::kCpu);
  EXPECT_EQ(cpu.api, DeviceApi::kHost);
  EXPECT_TRUE(cpu.present);
  EXPECT_DOUBLE_EQ(cpu.peak_gflops.at(Precision::kFp32), 8 * 3.0 * 32);
  EXPECT_EQ(cpu.precisions(), std::vector<Precision>{Precision::kFp32});
  EXPECT_GT(cpu.memory_bandwidth_gbps, 0);
  EXPECT_TRUE(cpu.supports_op("Conv"));
}

// `--devices cpu --precision bf16`: a CPU with AVX512_BF16 computes the convolutions in bf16
// (twice the fp32 peak) and substitutes fp32 for the rest, in one partition; one without it
// substitutes fp32 everywhere.
TEST(DiscoverTest, CpuBf16ComputesConvolutionsInBf16WhereTheCpuHasIt) {
  cpu::CpuFacts facts;
  facts.cores = 2;
  facts.ghz = 3.0;
  facts.fp32_flop_per_cycle = 32;
  const Graph graph = conv_net();
  for (const bool bf16 : {true, false}) {
    SCOPED_TRACE(bf16 ? "AVX512_BF16" : "no AVX512_BF16");
    facts.bf16 = bf16;
    Target target;
    target.name = "bf16-test";
    target.devices = {cpu::cpu_profile(facts)};
    EXPECT_EQ(target.devices[0].peak_gflops.count(Precision::kBf16), bf16 ? 1u : 0u);
    auto plan = schedule(graph, target, devices_policy("cpu", Precision::kBf16));
    ASSERT_TRUE(plan.is_ok()) << plan.status().message();
    expect_plan_invariants(graph, *plan);
    EXPECT_EQ(plan->partitions.size(), 1u);
    for (const NodePlacement& p : plan->nodes) {
      const Node& node = graph.node(p.node);
      SCOPED_TRACE(node.name + ": " + p.detail);
      const bool conv = node.op_type == "Conv";
      EXPECT_EQ(p.precision, conv && bf16 ? Precision::kBf16 : Precision::kFp32);
      EXPECT_EQ(p.reason, conv && bf16 ? PlacementReason::kPolicy : PlacementReason::kSubstituted);
    }
  }
}

TEST(DiscoverTest, DiscoverersAreNumberedPerKind) {
  auto gpus = [] {
    return std::vector<DeviceProfile>{
        test::test_device("x", DeviceKind::kGpu, DeviceApi::kOpenCl, {}, {}),
        test::test_device("y", DeviceKind::kGpu, DeviceApi::kLevelZero, {}, {})};
  };
  const Target target = config::discover_target({config::default_discoverers()[0], gpus});
  EXPECT_EQ(target.name, "this-machine");
  EXPECT_EQ(target.source, "discovered");
  ASSERT_EQ(target.devices.size(), 3u);
  EXPECT_EQ(target.devices[0].id, "cpu0");
  EXPECT_EQ(target.devices[1].id, "gpu0");
  EXPECT_EQ(target.devices[2].id, "gpu1");
  for (const DeviceProfile& device : target.devices) EXPECT_TRUE(device.present);
}

TEST(DiscoverTest, ThisMachineResolvesByNameAndPlans) {
  auto target = resolve_target_or_discover("this-machine");
  ASSERT_TRUE(target.is_ok()) << target.status().message();
  ASSERT_FALSE(target->devices.empty());
  EXPECT_EQ(target->devices[0].id, "cpu0");
  EXPECT_GT(target->devices[0].peak_gflops.at(Precision::kFp32), 0);
  const Graph graph = conv_net();
  auto plan = schedule(graph);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  expect_plan_invariants(graph, *plan);
  EXPECT_EQ(plan->target.name, "this-machine");
  EXPECT_EQ(plan->policy.name, "default");
}

// x [64, 32] -> MatMul -> GELU as PyTorch exports it (Div, Erf, Add, Mul, Mul) -> y: the CPU
// runs the GELU inside the MatMul's step.
Graph matmul_gelu() {
  OnnxBuilder b(17, "matmul_gelu");
  b.input("x", DType::kF32, {64, 32}).output("y", DType::kF32, {64, 32});
  b.initializer_random("w", {32, 32}, 0.1f, 1);
  b.initializer_f32("sqrt2", {}, {1.41421356f})
      .initializer_f32("one", {}, {1.0f})
      .initializer_f32("half", {}, {0.5f});
  b.node("MatMul", {"x", "w"}, {"mm"}, "matmul");
  b.node("Div", {"mm", "sqrt2"}, {"div"}, "div");
  b.node("Erf", {"div"}, {"erf"}, "erf");
  b.node("Add", {"erf", "one"}, {"add"}, "add");
  b.node("Mul", {"mm", "add"}, {"mul"}, "mul");
  b.node("Mul", {"mul", "half"}, {"y"}, "half");
  return import_built(b, "matmul_gelu");
}

TEST(ScheduleTest, FusedTranscendentalIsChargedItsMeasuredEpilogue) {
  const Graph graph = matmul_gelu();
  Target target = test_target({}, {});
  target.devices.resize(1);
  DeviceProfile& cpu = target.devices[0];
  ASSERT_EQ(cpu.api, DeviceApi::kHost);
  // One point beyond every node here: each node of a class takes that point's time.
  for (CostClass c : {CostClass::kGemm, CostClass::kElementwise, CostClass::kTranscendental}) {
    cpu.curves[{c, Precision::kFp32}] = {{"flat", 1e12, 1.0, 0}};
  }
  const auto erf_ms = [&](const Target& t) {
    const Result<Plan> plan = schedule(graph, t, everything_to("cpu0", Precision::kFp32));
    EXPECT_TRUE(plan.is_ok()) << plan.status().message();
    const NodeId erf = node_named(graph, "erf");
    EXPECT_DOUBLE_EQ(plan->nodes[static_cast<size_t>(node_named(graph, "div"))].predicted_ms, 0);
    return plan->nodes[static_cast<size_t>(erf)].predicted_ms;
  };
  // Without an epilogue curve the fused Erf is charged as if it ran alone.
  EXPECT_DOUBLE_EQ(erf_ms(target), 1.0);
  cpu.curves[{CostClass::kEpilogue, Precision::kFp32}] = {{"flat", 1e12, 0.25, 0}};
  EXPECT_DOUBLE_EQ(erf_ms(target), 0.25);
}

}  // namespace
}  // namespace hsched

namespace hsched {
namespace {

// x -> relu -> sin -> relu -> sin ... : six NPU islands (Sin is not in the NPU's op list) on a
// 155H whose NPU holds at most 4 partitions. The two smallest islands move to the CPU with reason
// device_limit; the plan keeps 4 NPU partitions.
TEST(ScheduleTest, ADeviceHoldsNoMorePartitionsThanItsLimit) {
  OnnxBuilder b(17, "islands");
  b.input("x", DType::kF32, {1, 64, 32, 32}).output("y", DType::kF32, {1, 64, 32, 32});
  std::string last = "x";
  for (int k = 0; k < 6; ++k) {
    const std::string relu = "relu" + std::to_string(k), sin = "sin" + std::to_string(k);
    b.node("Relu", {last}, {relu + "_out"}, relu);
    b.node("Sin", {relu + "_out"}, {k == 5 ? std::string("y") : sin + "_out"}, sin);
    last = sin + "_out";
  }
  const Graph graph = import_built(b, "islands");
  Target target = core_ultra_155h();
  for (DeviceProfile& device : target.devices) {
    if (device.id == "npu0") device.max_partitions = 4;
  }
  auto plan = schedule(graph, target, everything_to("npu0", Precision::kFp16, Objective::kStrict));
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  expect_plan_invariants(graph, *plan);
  size_t on_npu = 0;
  for (const Partition& partition : plan->partitions) on_npu += partition.device == "npu0";
  EXPECT_EQ(on_npu, 4u);
  size_t limited = 0;
  for (const Fallback& fallback : plan->fallbacks) {
    if (fallback.reason != ReasonCode::kDeviceLimit) continue;
    ++limited;
    EXPECT_EQ(fallback.device, "cpu0");
    EXPECT_NE(fallback.detail.find("at most 4 partitions"), std::string::npos) << fallback.detail;
  }
  EXPECT_EQ(limited, 2u);
  // Without the limit: six.
  for (DeviceProfile& device : target.devices) device.max_partitions = 0;
  auto unlimited =
      schedule(graph, target, everything_to("npu0", Precision::kFp16, Objective::kStrict));
  ASSERT_TRUE(unlimited.is_ok());
  on_npu = 0;
  for (const Partition& partition : unlimited->partitions) on_npu += partition.device == "npu0";
  EXPECT_EQ(on_npu, 6u);
}

}  // namespace
}  // namespace hsched
