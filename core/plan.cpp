// Names of the plan's reason enums (include/hsched/plan.h), as reports, JSON and configs print
// them: lower-case snake_case, stable across releases (report-schema.md lists them).
#include "hsched/plan.h"

namespace hsched {

const char* reason_code_name(ReasonCode code) {
  switch (code) {
    case ReasonCode::kOpUnsupported:
      return "op_unsupported";
    case ReasonCode::kDtypeUnsupported:
      return "dtype_unsupported";
    case ReasonCode::kAttributeUnsupported:
      return "attribute_unsupported";
    case ReasonCode::kShapeUnsupported:
      return "shape_unsupported";
    case ReasonCode::kPrecisionNotAllowed:
      return "precision_not_allowed";
    case ReasonCode::kDeviceAbsent:
      return "device_absent";
    case ReasonCode::kCompileFailed:
      return "compile_failed";
    case ReasonCode::kCompileTimeout:
      return "compile_timeout";
    case ReasonCode::kVerificationFailed:
      return "verification_failed";
    case ReasonCode::kMemoryExceeded:
      return "memory_exceeded";
    case ReasonCode::kDeviceLost:
      return "device_lost";
    case ReasonCode::kAccuracyBudget:
      return "accuracy_budget";
    case ReasonCode::kDriverUnsupported:
      return "driver_unsupported";
    case ReasonCode::kDeviceLimit:
      return "device_limit";
  }
  return "unknown";  // only reachable through a cast of an out-of-range integer
}

const char* placement_reason_name(PlacementReason reason) {
  switch (reason) {
    case PlacementReason::kFirstChoice:
      return "first_choice";
    case PlacementReason::kPolicy:
      return "policy";
    case PlacementReason::kCost:
      return "cost";
    case PlacementReason::kFallback:
      return "fallback";
    case PlacementReason::kSubstituted:
      return "substituted";
  }
  return "unknown";
}

}  // namespace hsched
