// Policy names and lookups, and the built-in default policy (include/hsched/policy.h).
// configs/policies/default.yaml states the same policy; config_test checks that they are equal.
#include "hsched/policy.h"

namespace hsched {

std::string choice_name(const Choice& choice) {
  return choice.device + "/" + precision_name(choice.precision);
}

const char* fallback_mode_name(FallbackMode mode) {
  switch (mode) {
    case FallbackMode::kAllow:
      return "allow";
    case FallbackMode::kWarn:
      return "warn";
    case FallbackMode::kError:
      return "error";
  }
  return "unknown";
}

const char* objective_name(Objective objective) {
  switch (objective) {
    case Objective::kLatency:
      return "latency";
    case Objective::kStrict:
      return "strict";
  }
  return "unknown";
}

const char* accuracy_metric_name(AccuracyMetric metric) {
  switch (metric) {
    case AccuracyMetric::kMaxRel:
      return "max_rel";
    case AccuracyMetric::kCosine:
      return "cosine";
  }
  return "unknown";
}

const std::vector<Choice>& Policy::choices_for(const std::string& op_type) const {
  if (auto it = op_choices.find(op_type); it != op_choices.end()) return it->second;
  if (auto it = choices.find(op_class_of(op_type)); it != choices.end()) return it->second;
  return default_choices;
}

Policy default_policy() {
  Policy policy;
  policy.name = "default";
  policy.source = "built-in";
  // The product's promise as first choices: conv/linear in fp16 on the GPU, else bf16 on the
  // NPU (NPU 3720 computes fp16 instead, through the substitute below), else the CPU; all other
  // work on the CPU. The cost model may take a later choice where the plan is faster (a cheap op
  // follows its GPU neighbours instead of costing two boundaries).
  policy.choices[OpClass::kConvLinear] = {
      {"gpu", Precision::kFp16}, {"npu", Precision::kBf16}, {"cpu", Precision::kFp32}};
  policy.default_choices = {
      {"cpu", Precision::kFp32}, {"gpu", Precision::kFp16}, {"npu", Precision::kFp16}};
  policy.precision_substitutes[Precision::kBf16] = {Precision::kFp16};
  policy.fallback = FallbackMode::kWarn;
  policy.objective = Objective::kLatency;
  // Output tolerances against the CPU fp32 reference, |got - want| <= atol + rtol * |want|.
  // fp32: reassociation only. fp16 (unit roundoff 2^-11 = 4.9e-4) and bf16 (2^-8 = 3.9e-3, eight
  // times coarser) lose about that much per layer, and errors grow over tens of layers, so they
  // get percent-level bounds; int8 (a step is 1/255 of a tensor's range) looser still.
  policy.tolerances = {
      {Precision::kFp32, {1e-4, 1e-3}},
      {Precision::kFp16, {1e-2, 5e-2}},
      {Precision::kBf16, {5e-2, 1e-1}},
      {Precision::kInt8, {1e-1, 2e-1}},
  };
  policy.expected_runs = 100;
  return policy;
}

}  // namespace hsched
