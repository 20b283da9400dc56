// The driver's configuration: its flags (--name=value, parsed with CLI11)
// and its environment (MOMENTA_BENCH_DIR, _KEEP, _SEED), fixed before the
// first phase runs.
#pragma once

#include <cstdint>
#include <string>

#include "bench/moments/common.h"

namespace momenta::moments_driver {

struct Config {
  std::string dir;           // MOMENTA_BENCH_DIR, resolved (default: the current folder)
  bool keep = false;         // MOMENTA_BENCH_KEEP=1: keep the files, reuse a kept setup
  uint64_t seed = 20240601;  // MOMENTA_BENCH_SEED
  int length_log2 = 37;      // array elements: 2^37 f8 = 1 TiB
  int regions = 64;
  uint64_t region_mib = 128;
  int min_len_log2 = 27;  // queries: at least 2^27 elements (1 GiB)
  int queries = 200;      // cold queries, disk tier on
  int off_queries = 50;   // cold queries, disk tier off (each reads ~100 MiB)
  int scans = 5;
  int checks = 5;              // cold queries checked against an exact scan
  uint64_t scan_max_gib = 8;   // scan ranges: at most this long (then relaxed)
  uint64_t updates = 500'000;  // timed Apply updates in batches (a burst)
  uint64_t batch = 4096;
  uint64_t single_updates = 200'000;
  uint64_t sustained_updates = 4'000'000;  // then fdatasync: the write-back included
  uint64_t backend_updates = 500'000;      // per other I/O backend
  uint64_t hot_window_mib = 4;             // hot set: one window this long in each region
  int update_rounds = 5;                   // warm update figures are medians of this many rounds (>= 1)
  std::string parts = "build,queries,scans,off,updates";
  int builds = 2;                 // timed rebuilds with the disk tier on
  double fio_seq_mbs = 0;         // fio --rw=read --bs=1M --iodepth=32, MB/s
  double fio_rand_p50_us = 0;     // fio --rw=randread --bs=4k --iodepth=1, p50 clat
  double fio_rand64k_p50_us = 0;  // same with --bs=64k
  std::string numpy_script;       // bench/scan_numpy.py; empty: no NumPy scans
  std::string python = "/usr/bin/python3";

  uint64_t length() const { return uint64_t{1} << length_log2; }
  uint64_t region_elems() const { return region_mib * kMiB / 8; }
  uint64_t data_bytes() const { return static_cast<uint64_t>(regions) * region_mib * kMiB; }
  // Whether `part` (build, queries, scans, off, updates) is in --parts.
  bool Wants(const char* part) const;
};

// The flags and the environment, checked. --help prints the usage on stderr
// and exits 0; an unknown flag, a bad value or an inconsistent set dies
// (exit 1) with one line. Flags apply left to right: --quick sets the small
// setup's values, and a flag after it overrides one of them.
Config ParseConfig(int argc, char** argv);

}  // namespace momenta::moments_driver
