// Golden reports: every shared model planned for every shipped target with the default policy
// (strict: the promised placement) and the latency policy (the cost model chooses). The text
// report must equal tests/scheduler/golden/<model>.<target>.<policy>.txt (run with
// HSCHED_UPDATE_GOLDEN=1 to rewrite them after an intended change, then review the diff), and
// every plan keeps the structural promises of plan.h. Plans for this machine are checked for the
// same promises only: their figures depend on the machine.
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "graph/onnx_import.h"
#include "scheduler/planner/schedule.h"
#include "hsched/config.h"
#include "scheduler/config/discover.h"
#include "scheduler/plan_checks.h"
#include "scheduler/report/report.h"
#include "support/temp_dir.h"

namespace hsched {
namespace {

namespace fs = std::filesystem;

const char* const kModels[] = {"resnet18",      "mobilenet_v2",     "mobilenet_v3_small",
                               "squeezenet1_1", "convnext_atto",    "vit_tiny",
                               "bert_mini",     "vae_decoder_small"};
const char* const kTargets[] = {"core-ultra-7-155h", "core-ultra-7-258v", "arc-a770-desktop"};
const char* const kPolicies[] = {"default", "latency"};

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
