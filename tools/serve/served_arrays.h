// The arrays `momenta serve` answers for: each opened once as a reader (no
// lock: writers elsewhere keep writing, and a reader's answers follow their
// updates, consistent with one log sequence) and kept open. A name is the
// file's name without ".npy"; only these names are reachable.
//
// A served file removed is reported (NotFound "NAME: PATH was removed");
// one replaced (another inode at its path) is reopened at the next request.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "buffers/buffered_array.h"
#include "storage/util/status.h"
#include "tools/serve/time_axis.h"

namespace momenta::serve {

struct ServedArray {
  std::string name;     // "big" for big.npy
  std::string path;     // as given (or found in a given folder)
  std::string sidecar;  // --sidecar (empty: SidecarPath's rules)
  std::mutex mu;        // one request at a time touches `array`
  std::unique_ptr<BufferedArray> array;
  std::optional<TimeAxis> time;  // --rate/--start; set before serving, then only read
  dev_t dev = 0;
  ino_t ino = 0;
};

// A served array held for one request (its mutex locked).
class Lease {
 public:
  Lease(ServedArray* served, std::unique_lock<std::mutex> lock) : served_(served), lock_(std::move(lock)) {}
  BufferedArray& array() { return *served_->array; }
  const std::string& name() const { return served_->name; }
  const std::string& path() const { return served_->path; }
  const std::string& sidecar() const { return served_->sidecar; }

 private:
  ServedArray* served_;
  std::unique_lock<std::mutex> lock_;
};

class ServedArrays {
 public:
  // Every PATH (a .npy file, or a folder: each .npy file in it, sorted),
  // opened as readers. Two arrays of one name, a path that is neither, or an
  // array that cannot be opened is an error naming it.
  static Result<std::unique_ptr<ServedArrays>> Open(const std::vector<std::string>& paths, const std::string& sidecar,
                                                    IoKind io);

  // The names, in the order served.
  std::vector<std::string> Names() const;
  // The array `name` for one request; NotFound for a name not served (or a
  // served file removed); a replaced file is reopened first.
  Result<Lease> Acquire(const std::string& name);

  // Gives the named arrays their time axes (names from Names()); before serving.
  void SetTimeAxes(const std::map<std::string, TimeAxis>& axes);
  // The time axis of `name`, or nullptr (none given, or no such array).
  const TimeAxis* TimeAxisOf(const std::string& name) const;

 private:
  Status Reopen(ServedArray& s);

  IoKind io_ = IoKind::kAuto;
  std::vector<std::unique_ptr<ServedArray>> arrays_;
};

}  // namespace momenta::serve
