#include "hsched/status.h"

namespace hsched {

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk: return "ok";
    case ErrorCode::kInvalidArgument: return "invalid_argument";
    case ErrorCode::kUnavailable: return "unavailable";
    case ErrorCode::kUnimplemented: return "unimplemented";
    case ErrorCode::kDeadlineExceeded: return "deadline_exceeded";
    case ErrorCode::kResourceExhausted: return "resource_exhausted";
    case ErrorCode::kInternal: return "internal";
  }
  return "unknown";
}

Status Status::with_context(const std::string& context) const {
  if (is_ok() || context.empty()) return *this;
  return {code_, context + ": " + message_};
}

}  // namespace hsched
