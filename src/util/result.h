// Errors as values. Functions inside a module return Status or Result<T>; only the CLI's top level
// prints an error and turns it into an exit code.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace sat {

// Exit codes shared by every command.
enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,  // the work itself failed (a run crashed, a file could not be written)
  kExitUsage = 2,    // bad input: unknown field, bad interval, malformed spec
  kExitInterrupted = 130,
};

struct Error {
  std::string message;
  int exit_code = kExitFailure;
};

inline Error UsageError(std::string message) { return Error{std::move(message), kExitUsage}; }

// Status: OK, or an Error. Cheap when OK.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error e) : error_(std::move(e)) {}  // NOLINT: implicit so `return Error{...}` works
  static Status Ok() { return Status(); }
  bool ok() const { return !error_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Error& error() const { return *error_; }
  const std::string& message() const { return error_->message; }

 private:
  std::optional<Error> error_;
};

// Result<T>: a value, or an Error.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT
  Result(Error e) : v_(std::move(e)) {}      // NOLINT
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  // The value: *r, and r-> for its members (docs/design.md, "Errors"); value() is the dialect code moves off.
  [[deprecated("use *r (docs/design.md, Errors)")]] T& value() & { return std::get<0>(v_); }
  [[deprecated("use *r (docs/design.md, Errors)")]] const T& value() const& { return std::get<0>(v_); }
  [[deprecated("use *std::move(r) (docs/design.md, Errors)")]] T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &std::get<0>(v_); }
  const T* operator->() const { return &std::get<0>(v_); }
  T& operator*() & { return std::get<0>(v_); }
  const T& operator*() const& { return std::get<0>(v_); }
  T&& operator*() && { return std::get<0>(std::move(v_)); }
  const Error& error() const { return std::get<1>(v_); }
  Status status() const { return ok() ? Status() : Status(error()); }

 private:
  std::variant<T, Error> v_;
};

}  // namespace sat
