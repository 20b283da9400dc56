// Status and Result<T>: errors as values.
//
// Every function that touches disk, network or untrusted bytes returns a
// [[nodiscard]] Status (or Result<T>). A message reads like
//   "IO error: data.npy: No space left on device"
//   "Corruption: data.npy: header is not a NumPy .npy header"
// i.e. "<kind>: <file or context>: <problem>", one line, no trailing newline.
// errno values are turned into text in exactly one place (Status::FromErrno).
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace momenta {

class [[nodiscard]] Status {
 public:
  enum class Code {
    kOk = 0,
    kIOError,          // the OS refused: open, read, write, sync, ring setup
    kCorruption,       // bytes on disk are not what their format promises
    kInvalidArgument,  // the caller asked for something malformed
    kOutOfRange,       // an index or range outside the array
    kNotFound,         // a file or item that does not exist
    kNotSupported,     // valid but not handled (e.g. big-endian dtype, no io_uring)
    kInterrupted,      // stopped on request (a signal) at a consistent point; see storage/util/cancel.h
  };

  Status() = default;  // OK
  static Status OK() { return Status(); }

  // "IO error: <context>: <strerror(err)>"
  static Status FromErrno(std::string_view context, int err);
  static Status IOError(std::string_view context, std::string_view msg) { return Status(Code::kIOError, context, msg); }
  static Status Corruption(std::string_view context, std::string_view msg) {
    return Status(Code::kCorruption, context, msg);
  }
  static Status InvalidArgument(std::string_view context, std::string_view msg) {
    return Status(Code::kInvalidArgument, context, msg);
  }
  static Status OutOfRange(std::string_view context, std::string_view msg) {
    return Status(Code::kOutOfRange, context, msg);
  }
  static Status NotFound(std::string_view context, std::string_view msg) {
    return Status(Code::kNotFound, context, msg);
  }
  static Status NotSupported(std::string_view context, std::string_view msg) {
    return Status(Code::kNotSupported, context, msg);
  }
  static Status Interrupted(std::string_view context, std::string_view msg) {
    return Status(Code::kInterrupted, context, msg);
  }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  int sys_errno() const { return errno_; }  // errno behind an IO error, else 0
  // The whole one-line message, "OK" when ok().
  std::string ToString() const;
  // The message without its kind: "<context>: <problem>" ("" when ok()). To
  // put an error inside another, use WithContext, never ToString (which
  // would say the kind twice).
  const std::string& message() const { return text_; }
  // The same error (code, errno) with " (<note>)" after its message, e.g.
  // "IO error: a.npy: No space left on device (nothing was applied)". OK stays OK.
  Status WithNote(std::string_view note) const;
  // The same error with "<context>: " before its text, e.g. "Invalid
  // argument: a.npy: var: the range is empty". OK stays OK.
  Status WithContext(std::string_view context) const;

 private:
  Status(Code code, std::string_view context, std::string_view msg);

  Code code_ = Code::kOk;
  int errno_ = 0;
  std::string text_;  // "<context>: <msg>" (empty when ok)
};

// A value or the Status that explains why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design
    assert(!status_.ok() && "Result built from an OK status carries no value");
  }

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  // REQUIRES: ok()
  T& value() & {
    assert(ok());
    return *value_;
  }
  const T& value() const& {
    assert(ok());
    return *value_;
  }
  T&& value() && {
    assert(ok());
    return std::move(*value_);
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

// Propagate a non-OK Status out of the current function.
#define MOMENTA_RETURN_IF_ERROR(expr) \
  do {                                \
    ::momenta::Status _st = (expr);   \
    if (!_st.ok()) return _st;        \
  } while (0)

}  // namespace momenta
