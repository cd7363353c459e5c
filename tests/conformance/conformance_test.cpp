// Cross-backend conformance (as ggml's test-backend-ops and IREE's CTS): every case of
// op_cases.cpp on every device of this machine, per column (cpu, opencl, npu), in fp32 and, where
// it applies, fp16. A node check() accepts must compile, run and match the CPU's fp32 result; a
// node it refuses must say why (a reason code and a detail). A device that is not present skips
// its tests (the NPU column needs ZE_ENABLE_ALT_DRIVERS, which CTest sets). One test per
// (column, case): Ops/ConformanceTest.MatchesCpuReference/opencl_Conv_1x1.
//
// OpsMatrix.DocsAreUpToDate compares docs/ops.md with the table; with HSCHED_OPS_MD=path it
// writes the page there instead (scripts/gen-ops-md.sh).
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <tuple>

#include <gtest/gtest.h>

#include "conformance/harness.h"
#include "conformance/op_cases.h"
#include "conformance/ops_matrix.h"

namespace hsched::conformance {
namespace {

std::vector<Precision> precisions_of(const OpCase& op_case) {
  if (op_case.fp16) return {Precision::kFp32, Precision::kFp16};
  return {Precision::kFp32};
}

class ConformanceTest : public ::testing::TestWithParam<std::tuple<Slot, size_t>> {};

TEST_P(ConformanceTest, MatchesCpuReference) {
  const auto [slot, index] = GetParam();
  const OpCase& op_case = op_cases().at(index);
  const std::vector<Device*>& devices = slot_devices(slot);
  if (devices.empty()) GTEST_SKIP() << "no " << slot_name(slot) << " device on this machine";
  for (Device* device : devices) {
    for (Precision precision : precisions_of(op_case)) {
      const std::string where =
          device->profile().id + " " + precision_name(precision) + " " + op_case.name;
      SCOPED_TRACE(where);
      const Outcome outcome = run_case(*device, slot, op_case, precision);
      const KnownGap* gap = find_known_gap(slot, op_case.name, precision);
      if (outcome.rejection) {
        // A refusal names its reason; a known gap for a refused node is out of date.
        EXPECT_FALSE(outcome.rejection->detail.empty())
            << where << ": refused (" << reason_code_name(outcome.rejection->reason)
            << ") without a detail";
        EXPECT_EQ(gap, nullptr) << where << ": listed as a known gap in harness.cpp, but check() "
                                << "refuses it: remove it from known_gaps()";
        continue;
      }
      if (gap != nullptr) {
        EXPECT_FALSE(outcome.passed) << where << ": known gap (" << gap->reason
                                     << ") no longer reproduces: remove it from known_gaps()";
        continue;
      }
      EXPECT_TRUE(outcome.passed) << where << ": " << outcome.failure;
    }
  }
}

std::string case_test_name(const ::testing::TestParamInfo<std::tuple<Slot, size_t>>& info) {
  return std::string(slot_name(std::get<0>(info.param))) + "_" +
         op_cases().at(std::get<1>(info.param)).name;
}

INSTANTIATE_TEST_SUITE_P(Ops, ConformanceTest,
                         ::testing::Combine(::testing::ValuesIn(kSlots),
                                            ::testing::Range<size_t>(0, op_cases().size())),
                         case_test_name);

// The table itself: names unique (they name tests), each input and output well formed.
TEST(OpCasesTest, TableIsWellFormed) {
  EXPECT_GE(op_cases().size(), 40u);
  std::set<std::string> names;
  for (const OpCase& op_case : op_cases()) {
    EXPECT_TRUE(names.insert(op_case.name).second) << "duplicate case " << op_case.name;
    const Graph graph = build_graph(op_case);
    EXPECT_EQ(graph.nodes().size(), 1u);
    EXPECT_FALSE(graph.inputs().empty()) << op_case.name << ": needs a graph input (else folded)";
    EXPECT_EQ(make_inputs(op_case).size(), graph.inputs().size()) << op_case.name;
  }
}

// Seeded inputs are the same on every call (and so on every machine: no std distribution).
TEST(OpCasesTest, InputsAreSeededFromTheCaseName) {
  const OpCase* conv = find_op_case("Conv_1x1");
  ASSERT_NE(conv, nullptr);
  const std::vector<Tensor> a = make_inputs(*conv);
  const std::vector<Tensor> b = make_inputs(*conv);
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(a[0].byte_size(), b[0].byte_size());
  EXPECT_EQ(std::memcmp(a[0].raw(), b[0].raw(), a[0].byte_size()), 0);
  const std::vector<Tensor> other = make_inputs(*find_op_case("Relu"));
  EXPECT_NE(a[0].values<float>()[0], other[0].values<float>()[0]);
}

// CompileOptions{} (cpu_threads 0: "every core", backend.h) compiles on the CPU; it used to fail
// with "--threads must be at least 1", so every CPU reference of this table failed.
TEST(OpCasesTest, CpuCompilesWithDefaultOptions) {
  Device* cpu = matrix_device(Slot::kCpu);
  ASSERT_NE(cpu, nullptr);
  const OpCase* relu = find_op_case("Relu");
  auto program = cpu->compile(build_graph(*relu), CompileOptions{});
  ASSERT_TRUE(program.is_ok()) << program.status().message();
  auto outputs = (*program)->run(make_inputs(*relu), nullptr);
  ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
  EXPECT_EQ(outputs->size(), 1u);
}

TEST(OpsMatrix, DocsAreUpToDate) {
  if (!has_matrix_devices()) {
    GTEST_SKIP() << "docs/ops.md describes cpu, opencl on PoCL and the simulated npu; "
                    "this machine lacks one of them";
  }
  const std::string page = ops_markdown();
  if (const char* out = std::getenv("HSCHED_OPS_MD"); out != nullptr && *out != '\0') {
    std::ofstream file(out, std::ios::binary | std::ios::trunc);
    file << page;
    ASSERT_TRUE(file.good()) << "cannot write " << out;
    return;
  }
  const std::filesystem::path committed = std::filesystem::path(HSCHED_SOURCE_DIR) / "docs/ops.md";
  std::ifstream file(committed, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  EXPECT_TRUE(text.str() == page)
      << "docs/ops.md is out of date with tests/conformance/op_cases.cpp: run "
         "scripts/gen-ops-md.sh";
}

}  // namespace
}  // namespace hsched::conformance
