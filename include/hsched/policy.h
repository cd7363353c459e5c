// Precision policies (configs/policies/*.yaml): where each op class may run, in which precision,
// in order of preference; what to do when a node falls back; accuracy tolerances; objective.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hsched/device.h"

namespace hsched {

// One allowed placement: a device selector (kind, API or id, as in match_devices) and the
// precision requested there.
struct Choice {
  std::string device;  // "gpu", "npu", "cpu", "opencl", "gpu0"...
  Precision precision = Precision::kFp32;
};
std::string choice_name(const Choice& choice);  // "gpu/fp16"

enum class FallbackMode { kAllow, kWarn, kError };
enum class Objective { kLatency, kStrict };
const char* fallback_mode_name(FallbackMode mode);
const char* objective_name(Objective objective);

struct Tolerance {
  double atol = 1e-4;
  double rtol = 1e-3;
};

enum class AccuracyMetric { kMaxRel, kCosine };
const char* accuracy_metric_name(AccuracyMetric metric);  // "max_rel", "cosine"

// A policy's accuracy budget (`accuracy:`): how far a node planned in a reduced precision may
// stray from the same node in fp32, both run on the node's inputs as the fp32 model computes them
// from sample inputs when the plan is compiled. A node past it is planned again without that
// precision on that device (reason accuracy_budget), so it keeps a higher one.
struct AccuracyBudget {
  AccuracyMetric metric = AccuracyMetric::kMaxRel;
  // Per precision: for max_rel, the largest |reduced - fp32| over the largest |fp32| of any
  // output of the node; for cosine, the smallest cosine similarity of an output's two values. A
  // precision left out has no budget.
  std::map<Precision, double> limits;
};

struct Policy {
  std::string name;    // "default", "latency"...
  std::string source;  // the YAML file it came from, or "built-in"

  // Allowed choices per op class, most preferred first. A class without an entry uses
  // `default_choices`. The CPU in fp32 is the implicit last resort of every list unless
  // `fallback` is kError (then a node none of its choices supports fails the plan).
  std::map<OpClass, std::vector<Choice>> choices;
  std::vector<Choice> default_choices;
  // Per-op overrides (op type -> choices), checked before the op's class.
  std::map<std::string, std::vector<Choice>> op_choices;

  // When a device lacks a requested precision: substitutes to try on that same device, in order
  // (e.g. bf16 -> [fp16] for NPU 3720, which computes fp16). Without an entry the choice is
  // rejected with precision_not_allowed and the next choice is tried.
  std::map<Precision, std::vector<Precision>> precision_substitutes;

  FallbackMode fallback = FallbackMode::kWarn;
  Objective objective = Objective::kLatency;
  std::map<Precision, Tolerance> tolerances;
  std::optional<AccuracyBudget> accuracy;
  int64_t expected_runs = 100;  // compile cost is amortised over this many runs
  // Run every non-CPU partition's outputs against the CPU in fp32 (the executor's verify).
  bool verify = false;
  // Forced split for testing and diagnosis: > 0 alternates the devices of `default_choices`
  // every `split_every` nodes (topological order) where supported, cost ignored.
  int split_every = 0;

  // The choices for one op type (op override, else class, else default), without the implicit
  // CPU fp32 last resort.
  const std::vector<Choice>& choices_for(const std::string& op_type) const;
};

// The built-in default policy (same as configs/policies/default.yaml): FP16 conv/linear to the
// GPU, BF16/INT8 work to the NPU, everything else and every fallback to the CPU.
Policy default_policy();

}  // namespace hsched
