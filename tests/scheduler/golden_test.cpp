// Golden reports: every shared model planned for every shipped target with the default policy
// (the promised placement as first choices, the cost model removing boundaries), the strict
// policy (the promised placement, whatever the cost) and the latency policy (any device). The
// text report must equal tests/scheduler/golden/<model>.<target>.<policy>.txt (run with
// HSCHED_UPDATE_GOLDEN=1 to rewrite them after an intended change, then review the diff), and
// every plan keeps the structural promises of plan.h. The default plan is predicted no slower
// than the best single device, with at most 8 partitions on the CNNs; the demo model's default
// plan on the 155H has no CPU partition between two GPU partitions. Plans for this machine are
// checked for the structural promises only: their figures depend on the machine.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "graph/onnx_import.h"
#include "hsched/config.h"
#include "hsched/model.h"
#include "scheduler/config/discover.h"
#include "scheduler/plan_checks.h"
#include "scheduler/planner/schedule.h"
#include "scheduler/report/report.h"
#include "support/temp_dir.h"

namespace hsched {
namespace {

namespace fs = std::filesystem;

const char* const kModels[] = {"resnet18",      "mobilenet_v2",     "mobilenet_v3_small",
                               "squeezenet1_1", "convnext_atto",    "vit_tiny",
                               "bert_mini",     "vae_decoder_small"};
const char* const kTargets[] = {"core-ultra-7-155h", "core-ultra-7-258v", "arc-a770-desktop"};
const char* const kPolicies[] = {"default", "strict", "latency"};
const std::set<std::string> kCnns = {"resnet18",      "mobilenet_v2",  "mobilenet_v3_small",
                                     "squeezenet1_1", "convnext_atto", "vae_decoder_small"};

fs::path golden_dir() { return fs::path(HSCHED_SOURCE_DIR) / "tests" / "scheduler" / "golden"; }

bool update_golden() {
  const char* env = std::getenv("HSCHED_UPDATE_GOLDEN");
  return env != nullptr && std::string(env) == "1";
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The model imported once per test program (import dominates the test's time).
const Graph* model_graph(const std::string& name) {
  static std::map<std::string, std::optional<Graph>> cache;
  auto [it, inserted] = cache.try_emplace(name);
  if (inserted) {
    const fs::path path = test::models_dir() / name / "model.onnx";
    if (fs::exists(path)) {
      auto graph = import_onnx_file(path, {});
      EXPECT_TRUE(graph.is_ok()) << graph.status().message();
      if (graph.is_ok()) it->second = std::move(graph).value();
    }
  }
  return it->second ? &*it->second : nullptr;
}

class GoldenTest
    : public ::testing::TestWithParam<std::tuple<const char*, const char*, const char*>> {};

TEST_P(GoldenTest, ReportMatchesAndPlanHoldsItsPromises) {
  const auto [model, target_name, policy_name] = GetParam();
  const Graph* graph = model_graph(model);
  if (graph == nullptr) GTEST_SKIP() << "model " << model << " not in " << test::models_dir();
  auto target = resolve_target(target_name);
  ASSERT_TRUE(target.is_ok()) << target.status().message();
  auto policy = resolve_policy(policy_name);
  ASSERT_TRUE(policy.is_ok()) << policy.status().message();
  auto plan = schedule(*graph, *target, *policy);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  test::expect_plan_invariants(*graph, *plan);
  if (std::string(policy_name) == "default") {
    double best = INFINITY;
    for (const auto& [device, ms] : plan->single_device_ms) best = std::min(best, ms);
    EXPECT_LE(plan->predicted_ms, best * (1 + 1e-9)) << model << " on " << target_name;
    if (kCnns.count(model)) {
      EXPECT_LE(plan->partitions.size(), 8u) << model << " on " << target_name;
    }
  }
  plan->model = model;  // not the machine-dependent path
  auto report = format_report(*graph, *plan, ReportFormat::kText);
  ASSERT_TRUE(report.is_ok()) << report.status().message();

  const fs::path golden =
      golden_dir() / (std::string(model) + "." + target_name + "." + policy_name + ".txt");
  if (update_golden()) {
    fs::create_directories(golden_dir());
    std::ofstream(golden, std::ios::binary | std::ios::trunc) << *report;
    GTEST_SKIP() << "rewrote " << golden;
  }
  ASSERT_TRUE(fs::exists(golden)) << golden << " missing: run with HSCHED_UPDATE_GOLDEN=1";
  EXPECT_EQ(*report, read_file(golden))
      << "report differs from " << golden << " (HSCHED_UPDATE_GOLDEN=1 rewrites it)";
}

std::string test_name(const ::testing::TestParamInfo<GoldenTest::ParamType>& info) {
  std::string name = std::string(std::get<0>(info.param)) + "_" + std::get<1>(info.param) + "_" +
                     std::get<2>(info.param);
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(SharedModels, GoldenTest,
                         ::testing::Combine(::testing::ValuesIn(kModels),
                                            ::testing::ValuesIn(kTargets),
                                            ::testing::ValuesIn(kPolicies)),
                         test_name);

TEST(DemoModelTest, DefaultPlanOn155hHasNoCpuPartitionBetweenGpuPartitions) {
  auto model = demo_model();
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  auto target = resolve_target("core-ultra-7-155h");
  ASSERT_TRUE(target.is_ok()) << target.status().message();
  auto plan = schedule(*model, *target, default_policy());
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  size_t first_gpu = plan->partitions.size(), last_gpu = 0;
  for (size_t p = 0; p < plan->partitions.size(); ++p) {
    if (plan->partitions[p].device != "gpu0") continue;
    first_gpu = std::min(first_gpu, p);
    last_gpu = p;
  }
  ASSERT_LT(first_gpu, plan->partitions.size()) << "nothing on the GPU";
  for (size_t p = first_gpu; p <= last_gpu; ++p) {
    EXPECT_EQ(plan->partitions[p].device, "gpu0") << "partition " << p;
  }
  double best = INFINITY;
  for (const auto& [device, ms] : plan->single_device_ms) best = std::min(best, ms);
  EXPECT_LE(plan->predicted_ms, best);
}

class ThisMachineTest : public ::testing::TestWithParam<const char*> {};

TEST_P(ThisMachineTest, PlanHoldsItsPromises) {
  const Graph* graph = model_graph(GetParam());
  if (graph == nullptr) GTEST_SKIP() << "model " << GetParam() << " not in " << test::models_dir();
  auto plan = schedule(*graph);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  test::expect_plan_invariants(*graph, *plan);
  // This machine has only its CPU so far: every node there, in fp32, in one partition.
  const Target target = discover_target();
  if (target.devices.size() == 1) {
    EXPECT_EQ(plan->partitions.size(), 1u);
    EXPECT_TRUE(plan->transfers.empty());
    EXPECT_DOUBLE_EQ(plan->predicted_ms, plan->single_device_ms.at("cpu0"));
  }
  for (const NodePlacement& p : plan->nodes) {
    EXPECT_TRUE(plan->target.find(p.device)->present) << p.device;
  }
}

INSTANTIATE_TEST_SUITE_P(SharedModels, ThisMachineTest, ::testing::ValuesIn(kModels));

}  // namespace
}  // namespace hsched
