// One error type for the whole project: Status and Result<T>.
// Errors carry a code and a one-line message that names the file, node or key at fault.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace hsched {

enum class ErrorCode {
  kOk,
  kInvalidArgument,   // bad model, config, flag or input: the user's to fix
  kUnavailable,       // a device or file that is not there
  kUnimplemented,     // valid input that hsched does not handle (yet)
  kDeadlineExceeded,  // a compile or run that ran past its deadline
  kResourceExhausted,  // a device out of memory
  kInternal,          // a bug in hsched or a library it uses
};

const char* error_code_name(ErrorCode code);

class Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return {}; }
  bool is_ok() const { return code_ == ErrorCode::kOk; }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Returns a copy whose message is prefixed with `context: ` (e.g. the file name).
  Status with_context(const std::string& context) const;

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
};

inline Status invalid_argument(std::string message) {
  return {ErrorCode::kInvalidArgument, std::move(message)};
}
inline Status unimplemented(std::string message) {
  return {ErrorCode::kUnimplemented, std::move(message)};
}
inline Status internal_error(std::string message) {
  return {ErrorCode::kInternal, std::move(message)};
}

// A value or the Status explaining why there is none.
template <typename T>
class Result {
 public:
  Result(T value) : state_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Status status) : state_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!std::get<Status>(state_).is_ok());
  }

  bool is_ok() const { return std::holds_alternative<T>(state_); }
  const Status& status() const {
    static const Status kOkStatus;
    return is_ok() ? kOkStatus : std::get<Status>(state_);
  }
  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> state_;
};

}  // namespace hsched

// Returns the Status of `expr` from the enclosing function when it is not ok.
#define HSCHED_RETURN_IF_ERROR(expr)              \
  do {                                            \
    ::hsched::Status hsched_status_ = (expr);     \
    if (!hsched_status_.is_ok()) return hsched_status_; \
  } while (0)

#define HSCHED_CONCAT_INNER(a, b) a##b
#define HSCHED_CONCAT(a, b) HSCHED_CONCAT_INNER(a, b)
// `HSCHED_ASSIGN_OR_RETURN(auto x, make_x());` binds the value or returns the Status.
#define HSCHED_ASSIGN_OR_RETURN(lhs, expr) \
  HSCHED_ASSIGN_OR_RETURN_IMPL(HSCHED_CONCAT(hsched_result_, __LINE__), lhs, expr)
#define HSCHED_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.is_ok()) return tmp.status();             \
  lhs = std::move(tmp).value()
