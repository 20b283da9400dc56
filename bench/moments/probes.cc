#include "bench/moments/probes.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "bench/moments/files.h"
#include "bench/moments/format.h"

namespace momenta::moments_driver {
namespace {

uint64_t MachineBusyTicks() {
  uint64_t busy = 0;
  if (FILE* f = std::fopen("/proc/stat", "r")) {
    unsigned long long v[8] = {0};
    if (std::fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
                    &v[7]) == 8)
      busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
    std::fclose(f);
  }
  return busy;
}

uint64_t OwnTicks() {
  std::string stat;
  if (!ReadFileText("/proc/self/stat", &stat)) return 0;
  const size_t close = stat.rfind(')');
  unsigned long long ut = 0, st = 0, cut = 0, cst = 0;
  // After ") ": state(3) ppid(4) ... utime(14) stime(15) cutime(16) cstime(17).
  if (close != std::string::npos &&
      std::sscanf(stat.c_str() + close + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu", &ut, &st,
                  &cut, &cst) == 4)
    return ut + st + cut + cst;
  return 0;
}

void ReadDiskstats(DeviceId device, Snapshot* s) {
  FILE* f = std::fopen("/proc/diskstats", "r");
  if (f == nullptr) return;
  unsigned major, minor;
  char name[64];
  unsigned long long f1, f2, sectors_read, f4, f5, f6, sectors_written;
  char line[512];
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::sscanf(line, "%u %u %63s %llu %llu %llu %llu %llu %llu %llu", &major, &minor, name, &f1, &f2,
                    &sectors_read, &f4, &f5, &f6, &sectors_written) == 10 &&
        major == device.major && minor == device.minor) {
      s->dev_read = sectors_read * 512;
      s->dev_write = sectors_written * 512;
      s->have_dev = true;
    }
  }
  std::fclose(f);
}

// The counter after a text "key<sep>" in the file at path; 0 when missing.
uint64_t CounterAfter(const char* path, const char* key, char sep) {
  std::string text;
  if (!ReadFileText(path, &text)) return 0;
  const size_t at = text.find(std::string(key) + sep);
  return at == std::string::npos ? 0 : std::strtoull(text.c_str() + at + std::strlen(key) + 1, nullptr, 10);
}

}  // namespace

DeviceId DeviceOf(const std::string& dir) {
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) return {};
  return {major(st.st_dev), minor(st.st_dev)};
}

Snapshot TakeSnapshot(DeviceId device) {
  Snapshot s;
  s.t = Clock::now();
  s.busy = MachineBusyTicks();
  s.mine = OwnTicks();
  ReadDiskstats(device, &s);
  return s;
}

std::string PhaseUse::Text() const {
  std::string s = Fmt("other processes used %.2f CPUs", others_cores);
  if (have_dev)
    s += "; the device moved " + Bytes(dev_read) + " read, " + Bytes(dev_write) + " written (this run's included)";
  return s;
}

PhaseUse UseBetween(std::string phase, const Snapshot& start, const Snapshot& end) {
  PhaseUse u;
  u.phase = std::move(phase);
  u.seconds = std::chrono::duration<double>(end.t - start.t).count();
  const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  const double others = static_cast<double>(end.busy - start.busy) - static_cast<double>(end.mine - start.mine);
  u.others_cores = std::max(0.0, others / ticks / std::max(u.seconds, 1e-3));
  u.have_dev = end.have_dev;
  const auto delta = [](uint64_t a, uint64_t b) { return b > a ? static_cast<double>(b - a) : 0.0; };
  u.dev_read = delta(start.dev_read, end.dev_read);
  u.dev_write = delta(start.dev_write, end.dev_write);
  return u;
}

std::string LoadAverage() {
  FILE* f = std::fopen("/proc/loadavg", "r");
  if (f == nullptr) return "?";
  char buf[128] = {0};
  if (std::fgets(buf, sizeof buf, f) == nullptr) buf[0] = 0;
  std::fclose(f);
  std::string s = buf;
  const size_t cut = s.find(' ', s.find(' ', s.find(' ') + 1) + 1);
  return s.substr(0, cut);
}

uint64_t MeminfoKiB(const char* key) { return CounterAfter("/proc/meminfo", key, ':'); }
uint64_t VmstatPages(const char* key) { return CounterAfter("/proc/vmstat", key, ' '); }

double ThreadCpuSeconds() {
  timespec ts;
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace momenta::moments_driver
