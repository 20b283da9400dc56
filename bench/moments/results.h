// What the phases measure and the report prints: plain values, filled in
// phase by phase (a part left out by --parts leaves its fields empty).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "buffers/buffered_array.h"
#include "buffers/tree/range_query.h"

namespace momenta::moments_driver {

// The array's data: where the regions start, and whether a kept setup was reused.
struct Setup {
  std::vector<uint64_t> starts;  // element index of each region, sorted
  bool reused = false;
  double write_seconds = 0;
};

// A query range [p, q) of elements.
struct Range {
  uint64_t p = 0, q = 0;
  int kind = 0;  // 0: both ends inside written regions; 1: anywhere
};

// The ranges every part queries, drawn once from the seed.
struct QuerySet {
  std::vector<Range> ranges;       // cold queries; kinds alternate, 0 first
  std::vector<Range> scan_ranges;  // data at both ends, short enough to scan
};

// momenta's answer over a range: sum, mean, var, or min and max.
struct Answer {
  long double sum = 0, mean = 0, var = 0;
  double min = 0, max = 0;
};

// One timed cold query.
struct Sample {
  double seconds = 0;
  QueryCost cost;
  Answer answer;
  int kind = 0;  // the range's kind
};

// The samples of one set of cold queries, in the order of the ranges.
struct QueryRun {
  std::string label;
  std::vector<Sample> samples;
};

// One timed Rebuild.
struct BuildRun {
  double wall = 0;     // the whole Rebuild call
  double seconds = 0;  // BuildStats::seconds (the streaming pass and the upper levels)
  uint64_t bytes = 0;  // data bytes the build read
};

// Where a build's time goes, in GB/s.
struct BuildBreakdown {
  double read_chunked_gbs = 0;        // the build's read pattern alone
  double read_64_gbs = 0;             // the same bytes, 64 MiB per batch
  double read_window_gbs = 0;         // the same bytes, 256 MiB per batch
  double cpu1_gbs = 0, cpu2_gbs = 0;  // summarizing in-memory leaves, 1 and 2 threads
};

// One range scanned by bench/scan_numpy.py.
struct NumpyScan {
  double seconds = 0;
  long double sum = 0;
};

struct Report {
  Setup setup;
  uint64_t data_on_disk = 0;
  std::string tiers_on, tiers_off;
  std::vector<BuildRun> builds_on;
  BuildRun build_off;
  double first_open = 0;      // seconds of the first Open when it built the buffer
  uint64_t leaf_off = 0;      // leaf span with the disk tier off
  double off_scratch_ms = 0;  // allocating a query's scratch with the disk tier off
  bool have_breakdown = false;
  BuildBreakdown breakdown;
  QueryRun on, on_ext, off, off_ext;
  std::vector<Range> scan_ranges;
  std::vector<Sample> scan_momenta;
  std::vector<double> scan_cpp;
  std::vector<NumpyScan> scan_numpy;
  bool have_updates = false;
  double upd_burst = 0, upd_single = 0, upd_sustained = 0;
  double upd_floor = 0, upd_floor_pwrite = 0, upd_hot_cpu = 0, upd_hot = 0, upd_hot_single = 0;
  uint64_t hot_pages = 0;
  double sustained_apply_s = 0, sustained_sync_s = 0;
  double dirty_after_burst_mib = 0, dirty_threshold_mib = 0, dirty_background_mib = 0;
  uint64_t updates_total = 0;
  std::map<std::string, double> upd_backend;  // burst rate per other I/O backend
  double t_stat = 0;                          // seconds of one stat() of the array
  bool have_verify = false;
  VerifyReport verify;
  double verify_seconds = 0;
};

}  // namespace momenta::moments_driver
