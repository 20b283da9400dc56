// GroupWriter: group commit for a program that embeds a writer — any number
// of threads submit updates, one thread applies them in groups, and each
// submitter can wait until its updates are durable, without writing the
// batching itself. The CLI's `update --follow` follows the same rule in one
// thread (tools/update_follow.h).
//
// A group opens with the first update submitted after the last group closed
// and closes when `max_delay_ms` has passed since then or it holds
// `max_group` updates (or at Close). Closing it is one BufferedArray::Apply
// and one Commit, on the GroupWriter's own thread: readers (in any process)
// see a group's updates once it is applied, and once Commit returns they are
// durable per the array's sync policy (always: each log frame fdatasync'ed
// before it applied; batch: the Commit syncs the log; none: the page cache
// only, which survives a crash of the process but not of the machine).
//
//   auto gw = GroupWriter::Start(std::move(ba), {.max_delay_ms = 5});
//   auto ticket = (*gw)->Submit(updates);         // any thread; checked here
//   auto seq = (*gw)->WaitDurable(*ticket);       // the log sequence it reached
//
// Submit checks each update (index in range, value fits the dtype) before
// queueing any of them, so a bad update is refused to its submitter alone
// and never fails a group of others' updates. Tickets number submissions in
// order; a submission is in exactly one group, and groups are applied in
// ticket order (so a later update to the same index wins). After a group's
// Apply or Commit fails, that failure is the answer to every wait for it and
// for any later ticket, and later Submits are refused: the writer stops, as
// the CLI does, rather than apply updates past a hole.
//
// Thread-safe: Submit, WaitDurable, Write and groups() from any thread. The
// BufferedArray is the GroupWriter's for its lifetime: nothing else calls it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "buffers/buffered_array.h"

namespace momenta {

struct GroupWriterOptions {
  int64_t max_delay_ms = 10;  // a group closes this long after it opened
  size_t max_group = 65536;   // ... or once it holds this many updates
};

class GroupWriter {
 public:
  GroupWriter(const GroupWriter&) = delete;
  GroupWriter& operator=(const GroupWriter&) = delete;
  // Close(), ignoring its status.
  ~GroupWriter();

  // Takes a writer (BufferedArray opened with io.writable) and starts the
  // thread that applies groups. InvalidArgument for a reader, or options
  // with max_group 0 or a negative delay.
  static Result<std::unique_ptr<GroupWriter>> Start(std::unique_ptr<BufferedArray> ba,
                                                    const GroupWriterOptions& options = {});

  // Queues `updates` (all or none: each is checked first; OutOfRange or
  // InvalidArgument naming the array and the update's position) for the
  // open group; returns their ticket. Refused after Close or a failed group.
  Result<uint64_t> Submit(std::span<const IndexedValue> updates);
  // Blocks until the group holding `ticket` is applied and committed, and
  // returns a log sequence S such that every record up to S, this ticket's
  // updates included, is durable (the newest committed group's last
  // sequence; the array's sequence before the ticket when its updates
  // changed nothing). The failure of the first failed group, when that group
  // held this ticket or an earlier one. REQUIRES: `ticket` came from Submit.
  Result<uint64_t> WaitDurable(uint64_t ticket);
  // Submit, then WaitDurable.
  Result<uint64_t> Write(std::span<const IndexedValue> updates);

  // Closes the open group, waits for it, stops the thread, then closes the
  // array (checkpoint: reopening replays nothing). The first failure of any
  // group, else Close's. Idempotent.
  [[nodiscard]] Status Close();

  // Groups closed so far (applied and committed).
  uint64_t groups() const;
  const std::string& path() const { return path_; }

 private:
  GroupWriter(std::unique_ptr<BufferedArray> ba, const GroupWriterOptions& options);
  void Run();  // the applying thread
  // Applies and commits one group (on the applying thread, unlocked).
  Status ApplyGroup(const std::vector<IndexedValue>& updates);

  const std::unique_ptr<BufferedArray> ba_;
  const std::string path_;  // the array's
  const GroupWriterOptions options_;

  mutable std::mutex mu_;
  std::condition_variable work_;                  // the applying thread: an update came, or Close
  std::condition_variable done_;                  // waiters: a group was committed or failed
  std::vector<IndexedValue> open_;                // the open group's updates, in ticket order
  std::chrono::steady_clock::time_point opened_;  // when open_ got its first update
  uint64_t last_ticket_ = 0;                      // the newest ticket handed out
  uint64_t committed_ticket_ = 0;                 // every ticket <= this is durable
  uint64_t durable_sequence_ = 0;                 // the log sequence the newest commit reached
  uint64_t groups_ = 0;                           // groups committed
  uint64_t failed_ticket_ = 0;                    // != 0: tickets >= this one fail with failure_
  Status failure_;
  bool closing_ = false;
  bool closed_ = false;
  Status close_status_;
  std::thread thread_;
};

}  // namespace momenta
