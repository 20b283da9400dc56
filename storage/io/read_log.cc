#include "storage/io/read_log.h"

#include <set>

namespace momenta {
namespace {
thread_local ReadLog* current = nullptr;
}  // namespace

ReadLog::ReadLog() : outer_(current) { current = this; }
ReadLog::~ReadLog() { current = outer_; }
ReadLog* ReadLog::Current() { return current; }

uint64_t ReadLog::rounds() const {
  std::set<uint64_t> seen;
  for (const LoggedRead& r : reads_) seen.insert(r.round);
  return seen.size();
}

}  // namespace momenta
