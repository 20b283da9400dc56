#include "bench/serving/serve_util.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "buffers/buffered_array_parts.h"
#include "buffers/tree/moment_tree.h"
#include "storage/io/extents.h"
#include "storage/io/mapped_file.h"
#include "storage/util/parse_number.h"

namespace momenta::serving {

void Die(const std::string& message) {
  std::fprintf(stderr, "serve_driver: %s\n", message.c_str());
  std::exit(1);
}

void Must(const Status& s, const char* what) {
  if (!s.ok()) Die(std::string(what) + ": " + s.ToString());
}

// Built by appends: GCC 12 warns falsely (-Wrestrict) on "," + std::string.
bool Flags::Wants(const char* part) const {
  std::string list = ",", want = ",";
  list += parts;
  list += ',';
  want += part;
  want += ',';
  return list.find(want) != std::string::npos;
}

Flags ParseFlags(int argc, char** argv) {
  Flags f;
  for (int k = 1; k < argc; ++k) {
    const std::string a = argv[k];
    const size_t eq = a.find('=');
    if (a.rfind("--", 0) != 0 || eq == std::string::npos) Die("flags are --name=value; got '" + a + "'");
    const std::string name = a.substr(2, eq - 2), value = a.substr(eq + 1);
    auto integer = [&](uint64_t* out) {
      if (!ParseInteger(value, out)) Die("--" + name + ": '" + value + "' is not a whole number");
    };
    auto real = [&](double* out) {
      if (!ParseReal(value, out) || *out < 0) Die("--" + name + ": '" + value + "' is not a number >= 0");
    };
    if (name == "array")
      f.array = value;
    else if (name == "cli")
      f.cli = value;
    else if (name == "fio")
      f.fio = value;
    else if (name == "parts")
      f.parts = value;
    else if (name == "seed")
      integer(&f.seed);
    else if (name == "queries")
      integer(&f.queries);
    else if (name == "cli-runs")
      integer(&f.cli_runs);
    else if (name == "batch")
      integer(&f.batch);
    else if (name == "bins")
      integer(&f.bins);
    else if (name == "min-len-log2")
      integer(&f.min_len_log2);
    else if (name == "fio-iops")
      real(&f.fio_iops);
    else if (name == "seconds")
      real(&f.seconds);
    else if (name == "revisit-reps")
      integer(&f.revisit_reps);
    else if (name == "revisit-policy")
      f.revisit_policy = value;
    else
      Die("unknown flag --" + name);
  }
  if (f.array.empty()) Die("--array=PATH is required (an array with its buffer, e.g. moments_driver's kept one)");
  if (f.Wants("cli") && f.cli.empty()) Die("the cli part needs --cli=PATH of the momenta binary");
  if (f.revisit_policy != "both" && f.revisit_policy != "kept" && f.revisit_policy != "direct")
    Die("--revisit-policy: '" + f.revisit_policy + "' is not kept, direct or both");
  if (f.queries == 0 || f.batch == 0 || f.bins == 0 || f.cli_runs == 0) Die("counts must be positive");
  return f;
}

double Seconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5))];
}
double Median(std::vector<double> v) { return Percentile(std::move(v), 0.5); }

std::vector<Range> DrawRanges(const std::string& array, uint64_t length, uint64_t count, uint64_t min_len,
                              uint64_t seed) {
  constexpr uint64_t kHeader = 4096;  // momenta's arrays: elements start at byte 4096, 8 bytes each
  const auto extents = Must(DataExtents(array, kHeader, kHeader + length * 8), "DataExtents");
  std::vector<uint64_t> data_elements;  // element index at the start of each extent, and its length
  std::vector<uint64_t> extent_len;
  for (const ByteRange& e : extents) {
    data_elements.push_back((e.begin - kHeader) / 8);
    extent_len.push_back((e.end - e.begin) / 8);
  }
  std::mt19937_64 rng(seed);
  auto in_data = [&]() -> uint64_t {
    const size_t k = rng() % data_elements.size();
    return data_elements[k] + rng() % std::max<uint64_t>(1, extent_len[k]);
  };
  if (length <= min_len) Die("the array is shorter than --min-len-log2 allows");
  std::vector<Range> out;
  for (uint64_t n = 0; out.size() < count && n < 100 * count; ++n) {
    const int kind = out.size() % 2 == 0 && !data_elements.empty() ? 0 : 1;
    uint64_t a = kind == 0 ? in_data() : rng() % length;
    uint64_t b = kind == 0 ? in_data() : rng() % length;
    if (a > b) std::swap(a, b);
    if (b - a < min_len) continue;
    out.push_back({a, b, kind});
  }
  if (out.size() < count) Die("could not draw the ranges: too little data far enough apart");
  return out;
}

namespace {
void Advise(const std::string& path, int advice) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  (void)::posix_fadvise(fd, 0, 0, advice);
  ::close(fd);
}

}  // namespace

void DropCaches(const std::string& array, const std::string& sidecar) {
  ReleaseMappedPagesOf(array);  // a page this process maps is not dropped
  Advise(array, POSIX_FADV_DONTNEED);
  Advise(sidecar + "/tree", POSIX_FADV_DONTNEED);
  Advise(sidecar + "/identity", POSIX_FADV_DONTNEED);
}

void WarmEnds(const std::string& array, BufferedArray& ba, const Range& r) {
  const uint64_t leaf = TreeOf(ba).layout().leaf_span();
  const int fd = ::open(array.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) Die("open " + array);
  std::vector<char> bytes(leaf * 8 + 8192);
  for (uint64_t at : {r.p, r.q}) {
    const uint64_t first = at / leaf * leaf;
    if (::pread(fd, bytes.data(), bytes.size(), static_cast<off_t>(ba.array().ByteOffset(first))) < 0)
      Die("pread " + array);
  }
  ::close(fd);
  Must(ba.Summarize(r.p, r.q, false).status(), "warm-up query");
}

double RunTimed(const std::vector<std::string>& argv, std::string* out) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) Die("pipe");
  const double start = Seconds();
  const pid_t pid = fork();
  if (pid < 0) Die("fork");
  if (pid == 0) {
    dup2(pipe_fds[1], 1);
    const int null = ::open("/dev/null", O_WRONLY);
    dup2(null, 2);
    close(pipe_fds[0]);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(pipe_fds[1]);
  out->clear();
  char buf[4096];
  ssize_t n;
  while ((n = read(pipe_fds[0], buf, sizeof buf)) > 0) out->append(buf, static_cast<size_t>(n));
  close(pipe_fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  const double wall = Seconds() - start;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) Die(argv[0] + std::string(" failed: ") + argv.back());
  return wall;
}

}  // namespace momenta::serving
