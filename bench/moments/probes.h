// What the machine did: CPU and disk counters from /proc, memory and
// write-back figures, the load average. On a shared machine they tell which
// figures were measured while other processes competed.
#pragma once

#include <cstdint>
#include <string>

#include "bench/moments/common.h"

namespace momenta::moments_driver {

// A block device as /proc/diskstats names it; {0, 0} matches none.
struct DeviceId {
  unsigned major = 0, minor = 0;
};
// The device holding dir ({0, 0} when stat fails).
DeviceId DeviceOf(const std::string& dir);

// CPU use of the whole machine and of this process, and the device's
// traffic, at one moment.
struct Snapshot {
  Clock::time_point t;
  uint64_t busy = 0, mine = 0;           // clock ticks: all CPUs busy, this process (children included)
  uint64_t dev_read = 0, dev_write = 0;  // bytes the device moved since boot
  bool have_dev = false;                 // the device was found in /proc/diskstats
};
Snapshot TakeSnapshot(DeviceId device);

// What one phase of the run saw between two snapshots.
struct PhaseUse {
  std::string phase;
  double seconds = 0;
  double others_cores = 0;             // CPUs busy with other processes, on average
  double dev_read = 0, dev_write = 0;  // bytes the device moved in all, this run's included
  bool have_dev = false;
  // Other processes' disk use cannot be told apart reliably (io_uring's
  // O_DIRECT reads are not in /proc/self/io), so only CPU marks a busy phase.
  bool busy() const { return others_cores > 0.25; }
  // "other processes used 0.12 CPUs; the device moved ..."
  std::string Text() const;
};
PhaseUse UseBetween(std::string phase, const Snapshot& start, const Snapshot& end);

// The first three fields of /proc/loadavg, or "?".
std::string LoadAverage();
// A /proc/meminfo field in KiB (Dirty, ...); 0 when missing.
uint64_t MeminfoKiB(const char* key);
// A /proc/vmstat counter (nr_dirty_threshold, ...); 0 when missing.
uint64_t VmstatPages(const char* key);
// This thread's CPU time, user and kernel, in seconds.
double ThreadCpuSeconds();

}  // namespace momenta::moments_driver
