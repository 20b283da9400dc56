// WindowCount: the number of items in the sliding window, with relative error
// at most eps (an exponential histogram; stream/window/bucket_window.h).
//
// Estimate() is within eps * c of the true count c at every clock value, and
// exact when c < 1/(2 eps) or no bucket straddles the window's edge
// ([Low(), High()] always contains c). Memory: O((1/eps) log(eps N)) buckets
// of 40 bytes for N items in the window, plus one per timestamp of the last
// tau+1 time units.
//
// Same shape as every synopsis here: Update / AdvanceTo, Encode / Decode,
// queries. Merging two windows is not offered: the protocols combine sites at
// the root from their reports (stream/protocol/virtual_root.h), never synopses.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "stream/window/bucket_window.h"
#include "stream/window/window_spec.h"

namespace momenta {

class WindowCount {
 public:
  // InvalidArgument for a bad spec or eps outside (0, 1).
  static Result<WindowCount> Create(const WindowSpec& spec, double eps);

  // Moves the clock to t (expiring what falls out of the window).
  // REQUIRES: t >= now(), |t| <= kMaxTime
  void AdvanceTo(int64_t t);
  // Counts `count` items stamped ts. A timestamp after the clock moves the
  // clock there first (the data's own clock). Returns false, and counts them
  // as dropped, when they are later than the tardiness allows.
  // REQUIRES: |ts| <= kMaxTime
  bool Update(int64_t ts, uint64_t count = 1);

  double Estimate() const { return w_.CountEstimate(); }
  uint64_t Low() const { return w_.CountLow(); }
  uint64_t High() const { return w_.CountHigh(); }

  int64_t now() const { return w_.now(); }
  // When the estimates next change with no arrivals (BucketWindow::NextChange).
  int64_t NextChange() const { return w_.NextChange(); }
  double eps() const { return eps_; }
  const WindowSpec& spec() const { return w_.spec(); }
  uint64_t dropped() const { return dropped_; }
  size_t MemoryBytes() const { return sizeof(*this) + w_.ShellBytes(); }
  size_t bucket_count() const { return w_.bucket_count(); }

  std::string Encode() const;
  // Corruption for anything Encode could not have produced.
  static Result<WindowCount> Decode(std::string_view bytes);

 private:
  struct NoPayload {};
  struct Hooks {
    void Retire(WindowBucket<NoPayload>&) {}
    void Seal(WindowBucket<NoPayload>&, bool) {}
    void Detach(WindowBucket<NoPayload>&) {}
    void Drop(WindowBucket<NoPayload>&) {}
    void MergeGroup(WindowBucket<NoPayload>* const*, size_t, WindowBucket<NoPayload>&) {}
  };
  WindowCount(const WindowSpec& spec, double eps) : eps_(eps), w_(spec, 2 * eps) {}

  double eps_;
  BucketWindow<NoPayload> w_;  // lambda = 2 eps: the straddler's half is the error
  uint64_t dropped_ = 0;
};

}  // namespace momenta
