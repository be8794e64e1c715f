// Errors as values. The library never exits or throws across its API: every
// fallible function returns Status or Result<T>. The CLI turns an error into
// one line on stderr and a non-zero exit.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

#include <fmt/format.h>

namespace hetplan {

enum class ErrorCode {
  kOk = 0,
  kInvalidArgument,  // bad option or parameter value
  kNotFound,         // a file or element that does not exist
  kParseError,       // malformed input file
  kUnsupported,      // valid input that hetplan cannot handle (control flow, ...)
  kInfeasible,       // the problem has no solution (operator supported nowhere)
  kLimitExceeded,    // a configured size or time limit
  kInternal,         // a bug: an invariant was violated
  kIoError,
};

// A failure with a message that names the file, the element and the fix.
class Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return {}; }
  bool ok() const { return code_ == ErrorCode::kOk; }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
};

template <typename... Args>
Status Error(ErrorCode code, fmt::format_string<Args...> f, Args&&... args) {
  return Status(code, fmt::format(f, std::forward<Args>(args)...));
}

// A message from a library (ONNX Runtime, protobuf, JSON) on one line, as
// hetplan's errors are: line breaks and tabs become spaces, trailing spaces go.
inline std::string OneLine(std::string s) {
  for (char& ch : s) {
    if (ch == '\n' || ch == '\r' || ch == '\t') ch = ' ';
  }
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

// A value or an error.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  // An error. An OK status carries no value, so it becomes an internal error
  // (a Result is ok() exactly when it holds a value, and then status() is OK).
  Result(Status status)  // NOLINT(google-explicit-constructor)
      : status_(status.ok() ? Status(ErrorCode::kInternal, "a Result was made from an OK status without a value "
                                                           "(a bug in hetplan)")
                            : std::move(status)) {}

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace hetplan

// Propagates an error Status from an expression returning Status.
#define HETPLAN_RETURN_IF_ERROR(expr)          \
  do {                                         \
    ::hetplan::Status _st = (expr);            \
    if (!_st.ok()) return _st;                 \
  } while (0)

#define HETPLAN_CONCAT_INNER(a, b) a##b
#define HETPLAN_CONCAT(a, b) HETPLAN_CONCAT_INNER(a, b)
// Declares `lhs` from a Result<T> expression or returns its error.
#define HETPLAN_ASSIGN_OR_RETURN(lhs, expr)                                   \
  auto HETPLAN_CONCAT(_res_, __LINE__) = (expr);                              \
  if (!HETPLAN_CONCAT(_res_, __LINE__).ok())                                  \
    return HETPLAN_CONCAT(_res_, __LINE__).status();                          \
  lhs = std::move(HETPLAN_CONCAT(_res_, __LINE__)).value()
