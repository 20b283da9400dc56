// What the serving driver's phases share: its flags, the ranges it asks,
// dropping and warming the page cache, running the CLI as a whole process,
// and medians.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "buffers/buffered_array.h"

namespace momenta::serving {

struct Flags {
  std::string array;        // --array: an existing .npy with its buffer (required)
  std::string cli;          // --cli: the momenta binary (the CLI phase needs it)
  std::string fio = "fio";  // --fio: the fio binary (the coldfio part replays each cold query's reads through it)
  std::string parts = "inproc,coldfio,cli,batch,bins,threads,revisit";
  uint64_t seed = 20240601;
  uint64_t queries = 100;  // ranges per in-process set
  uint64_t cli_runs = 21;  // CLI runs per case (interleaved with --version)
  uint64_t batch = 2048;   // ranges per cold batch
  uint64_t bins = 1000;
  uint64_t min_len_log2 = 27;           // ranges of at least 2^27 elements (1 GiB of f8)
  double fio_iops = 0;                  // fio randread 16 KiB at depth 32, IOPS (the batch bound)
  double seconds = 2;                   // each threads measurement
  uint64_t revisit_reps = 3;            // revisit: drops per read policy
  std::string revisit_policy = "both";  // revisit: "kept", "direct" or both (one alone for strace -c)
  bool Wants(const char* part) const;
};
Flags ParseFlags(int argc, char** argv);

[[noreturn]] void Die(const std::string& message);
template <class T>
T Must(Result<T> r, const char* what) {
  if (!r.ok()) Die(std::string(what) + ": " + r.status().ToString());
  return std::move(r).value();
}
void Must(const Status& s, const char* what);

double Seconds();  // CLOCK_MONOTONIC
double Median(std::vector<double> v);
double Percentile(std::vector<double> v, double p);  // p in [0, 1]

// Ranges of at least 2^min_len_log2 elements: kind 0 has both ends inside
// data extents (the ends need device reads when cold), kind 1 anywhere (on a
// sparse array, ends mostly in holes: no I/O). Alternating, kind 0 first.
struct Range {
  uint64_t p = 0, q = 0;
  int kind = 0;
};
std::vector<Range> DrawRanges(const std::string& array, uint64_t length, uint64_t count, uint64_t min_len,
                              uint64_t seed);

// The array's and its sidecar's clean cached pages dropped (tree, identity),
// this process's read-only mappings of the array first let go of theirs.
void DropCaches(const std::string& array, const std::string& sidecar);
// The leaves at both ends of [p, q) read through the page cache, and the
// query asked once (its disk-tier nodes then cached): "warm".
void WarmEnds(const std::string& array, BufferedArray& ba, const Range& r);

// Runs argv as a process (stdout captured, stderr to /dev/null); its wall
// time in seconds, from fork to exit; dies unless it exits 0.
double RunTimed(const std::vector<std::string>& argv, std::string* out);

}  // namespace momenta::serving
