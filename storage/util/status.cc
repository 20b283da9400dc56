#include "storage/util/status.h"

#include <cstring>

namespace momenta {

namespace {

std::string_view KindName(Status::Code code) {
  switch (code) {
    case Status::Code::kOk:
      return "OK";
    case Status::Code::kIOError:
      return "IO error";
    case Status::Code::kCorruption:
      return "Corruption";
    case Status::Code::kInvalidArgument:
      return "Invalid argument";
    case Status::Code::kOutOfRange:
      return "Out of range";
    case Status::Code::kNotFound:
      return "Not found";
    case Status::Code::kNotSupported:
      return "Not supported";
    case Status::Code::kInterrupted:
      return "Interrupted";
  }
  return "Unknown";
}

}  // namespace

Status::Status(Code code, std::string_view context, std::string_view msg) : code_(code) {
  text_.reserve(context.size() + msg.size() + 2);
  text_.append(context);
  if (!context.empty() && !msg.empty()) text_.append(": ");
  text_.append(msg);
}

Status Status::FromErrno(std::string_view context, int err) {
  char buf[256];
  // GNU strerror_r returns the message pointer (maybe not buf).
  const char* msg = strerror_r(err, buf, sizeof buf);
  Status s(Code::kIOError, context, msg);
  s.errno_ = err;
  return s;
}

Status Status::WithNote(std::string_view note) const {
  if (ok()) return *this;
  Status s = *this;
  s.text_.append(" (").append(note).append(")");
  return s;
}

Status Status::WithContext(std::string_view context) const {
  if (ok() || context.empty()) return *this;
  Status s = *this;
  s.text_.insert(0, std::string(context) + ": ");
  return s;
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string out(KindName(code_));
  out.append(": ");
  out.append(text_);
  return out;
}

}  // namespace momenta
