// Writer rounds of the kill driver: a writer child SIGKILLed at random
// moments under one sync policy, a reader child querying meanwhile, and
// after each kill the driver's own reopen (recovery) and exact checks.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "storage/log/log_writer.h"

namespace momenta::kill {

struct WriterRunOptions {
  LogSync sync = LogSync::kBatch;
  uint64_t kills = 1000;
  uint64_t seed = 1;
  std::string dir;           // an empty folder of its own
  std::string cli;           // the momenta binary (for `momenta verify`)
  uint64_t cli_every = 10;   // `momenta verify` after every N-th check
  double max_delay_ms = 40;  // the kill lands in [0, max_delay_ms) after the writer starts
  bool verbose = false;
};

struct WriterRunReport {
  uint64_t kills = 0;
  // Where the kill landed, by the writer's last event: start (before its first
  // event), open (its first open: recovery), apply, commit, checkpoint
  // (Close), reopen (the open after its own checkpoint), idle (between steps).
  std::map<std::string, uint64_t> phase;
  uint64_t deferred = 0;            // kills left unrecovered for the next writer (its open recovers)
  uint64_t killed_in_recovery = 0;  // ... and that writer killed in that open
  uint64_t checks = 0;              // reopen + verify + model checks
  uint64_t acknowledged = 0;        // updates acknowledged (Apply returned), all checked present
  uint64_t applied = 0;             // updates in the array at the end (acknowledged or not)
  uint64_t unacked_survived = 0;    // updates logged but not yet acknowledged when killed, summed over checks
  uint64_t log_records_checked = 0;
  uint64_t reader_answers = 0, driver_answers = 0, cli_verifies = 0;
  uint64_t lost = 0, verify_failures = 0, wrong_answers = 0, other_failures = 0;
  std::vector<double> reopen_ms;          // the driver's reopen (recovery) after a kill
  std::vector<double> child_recovery_ms;  // a writer's open of a state a kill left
  double seconds = 0;
  std::vector<std::string> failures;  // the first few, one line each, with the round
  bool ok() const { return lost == 0 && verify_failures == 0 && wrong_answers == 0 && other_failures == 0; }
};

WriterRunReport RunWriterKills(const WriterRunOptions& options);

}  // namespace momenta::kill
