// run_model MODEL_DIR [TARGET [POLICY]]: loads MODEL_DIR/model.onnx, plans it for TARGET
// (default: this machine) with POLICY (default: default), compiles the plan, runs it once on the
// first test input (MODEL_DIR/test_data_set_0, copied into the program's own buffer, which the
// run reads in place), prints the fallback report and compares the first output with the
// reference. Exits 0 when it matches.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "hsched/hsched.h"

namespace fs = std::filesystem;

int fail(const hsched::Status& status) {
  std::fprintf(stderr, "run_model: %s\n", status.message().c_str());
  return 1;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: run_model MODEL_DIR [TARGET [POLICY]]\n");
    return 2;
  }
  const fs::path dir = argv[1];
  const std::string target_name = argc > 2 ? argv[2] : hsched::kThisMachineTarget;
  std::printf("hsched %s (headers %s)\n", hsched::version(), HSCHED_VERSION_STRING);

  auto model = hsched::load_model(dir / "model.onnx");
  if (!model.is_ok()) return fail(model.status());
  auto target = hsched::resolve_target_or_discover(target_name);
  if (!target.is_ok()) return fail(target.status());
  auto policy = hsched::resolve_policy(argc > 3 ? argv[3] : "default");
  if (!policy.is_ok()) return fail(policy.status());
  auto plan = hsched::schedule(*model, *target, *policy);
  if (!plan.is_ok()) return fail(plan.status());
  auto report = hsched::format_report(*model, *plan, hsched::ReportFormat::kText);
  if (!report.is_ok()) return fail(report.status());
  std::printf("%s", report->c_str());

  auto executable = hsched::compile(*model, *plan);
  if (!executable.is_ok()) return fail(executable.status());

  // The caller's own buffer, filled from the test input; the run reads it in place.
  auto input = hsched::read_tensor_file(dir / "test_data_set_0" / "input_0.pb");
  if (!input.is_ok()) return fail(input.status());
  std::vector<float> buffer(input->values<float>().begin(), input->values<float>().end());
  const hsched::Tensor borrowed =
      hsched::Tensor::borrow(hsched::DType::kF32, input->dims(), buffer.data());
  auto outputs = (*executable)->run({borrowed});
  if (!outputs.is_ok()) return fail(outputs.status());

  auto expected = hsched::read_tensor_file(dir / "test_data_set_0" / "output_0.pb");
  if (!expected.is_ok()) return fail(expected.status());
  const auto got = (*outputs)[0].values<float>();
  const auto want = expected->values<float>();
  if (got.size() != want.size()) {
    std::fprintf(stderr, "run_model: output has %zu values, the reference %zu\n", got.size(),
                 want.size());
    return 1;
  }
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    worst = std::max(worst, std::abs(double(got[i]) - want[i]) / (1e-3 + std::abs(want[i])));
  }
  std::printf("output 0: %zu values, worst |got - want| / (1e-3 + |want|) = %.3g\n", got.size(),
              worst);
  return worst <= 1e-2 ? 0 : 1;
}
