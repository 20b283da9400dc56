// Progressive answers: how wide the first interval of a
// progressive sum is, relative to the answer, and what it costs, for range
// lengths from 10^3 to the whole array (relative to the answer |s| and to
// Σ|a|, the scale of the buffer's accuracy bound); in process (OlaProgressiveSum:
// the first bound, every refinement, the ordinary query; with --buffer ola the
// refinements go through the Ola levels, reading no cell) and as whole `momenta
// query --approx` / `--progressive` processes. bench/README.md, "Progressive
// answers", has the figures and the command.
//
//   progressive_driver [--length N] [--ranges R] [--data normal|alternating] [--dir D]
//                      [--buffer hbb|ola] [--nodes N] [--bin B]
//
// --buffer ola: an Ola buffer of N stencil nodes (default 4: orders 0..3) and
// bins of B cells (default 1024) beside its order-0 tree; hbb (the default):
// the default buffer at its default order.
//
// The array (f8, N cells, default 2^25 = 256 MiB) is written to D (default
// $TMPDIR or /tmp) and removed at the end; the page cache is warm (it was
// just written). The exact answer of each range is a long-double sum of the
// cells kept in memory.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "buffers/buffered_array.h"
#include "buffers/buffered_array_parts.h"
#include "buffers/ola/ola_progressive.h"
#include "storage/array/array_file.h"

extern char** environ;

namespace {

using namespace momenta;
using Clock = std::chrono::steady_clock;

double Micros(Clock::time_point from) { return std::chrono::duration<double, std::micro>(Clock::now() - from).count(); }

double Median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Wall time of one CLI process (stdout and stderr to /dev/null), µs; -1 on failure.
double TimeProcess(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  const auto start = Clock::now();
  pid_t pid;
  if (posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) != 0) return -1;
  int status = 0;
  waitpid(pid, &status, 0);
  const double us = Micros(start);
  posix_spawn_file_actions_destroy(&actions);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? us : -1;
}

struct Buffer {
  std::string kind = "hbb";
  int nodes = 4;
  uint64_t bin = 1024;
};

int Run(uint64_t n, int ranges, const std::string& data, const std::string& dir, const Buffer& buffer) {
  const std::string path = dir + "/progressive-" + std::to_string(getpid()) + ".npy";
  std::vector<double> cells(n);
  std::mt19937_64 rng(42);
  std::normal_distribution<double> normal(5, 1);
  for (uint64_t i = 0; i < n; ++i)
    cells[i] = data == "alternating" ? (i % 2 ? -1.0 : 1.0) * (1 + static_cast<double>(i % 7)) : normal(rng);
  {
    IoOptions io;
    io.writable = true;
    io.kind = IoKind::kPread;
    const uint64_t shape[] = {n};
    auto f = ArrayFile::Create(path, DType::kF8, shape, io);
    if (!f.ok()) return std::fprintf(stderr, "%s\n", f.status().ToString().c_str()), 1;
    Status s = (*f)->WriteRaw(0, n, reinterpret_cast<const char*>(cells.data()));
    if (!s.ok()) return std::fprintf(stderr, "%s\n", s.ToString().c_str()), 1;
  }
  BufferedArrayOptions options;
  if (buffer.kind == "ola") {
    options.tree.order = 0;
    options.tree.ola_nodes = buffer.nodes;
    options.tree.ola_bin = buffer.bin;
  }
  auto ba = BufferedArray::Open(path, options);
  if (!ba.ok()) return std::fprintf(stderr, "%s\n", ba.status().ToString().c_str()), 1;
  BufferedArray& a = **ba;
  std::string kind = "hbb";
  if (const OlaFile* ola = OlaOf(a))
    kind = "ola (N " + std::to_string(ola->layout().nodes()) + ", bin " + std::to_string(ola->layout().bin()) + ", " +
           std::to_string(ola->layout().levels()) + " levels)";
  std::printf("# f8, %llu cells (%s), buffer %s, leaf %llu cells, data %s, io %s, %d ranges per length (warm cache)\n",
              static_cast<unsigned long long>(n), std::to_string(n * 8 >> 20).append(" MiB").c_str(), kind.c_str(),
              static_cast<unsigned long long>(TreeOf(a).layout().leaf_span()), data.c_str(),
              a.array().io().Name().c_str(), ranges);
  std::printf("%-10s %12s %12s %12s %10s %10s %8s %12s %10s %10s %10s\n", "length", "first_w/|s|", "max_first_w",
              "first_w/S|a|", "first_us", "all_us", "steps", "last_w/|s|", "query_us", "cli_approx", "cli_prog");
  std::vector<uint64_t> lengths;
  for (uint64_t l = 1000; l < n; l *= 10) lengths.push_back(l);
  lengths.push_back(n);
  for (uint64_t len : lengths) {
    std::vector<double> first_w, first_w_abs, first_us, all_us, steps, last_w, query_us, cli_a, cli_p;
    for (int r = 0; r < (len == n ? 1 : ranges); ++r) {
      const uint64_t p = len == n ? 0 : rng() % (n - len + 1), q = p + len;
      long double exact = 0, abs_sum = 0;
      for (uint64_t i = p; i < q; ++i) exact += cells[i], abs_sum += std::fabs(cells[i]);
      const double scale = std::fabs(static_cast<double>(exact));
      auto t0 = Clock::now();
      OlaProgressiveSum ps(TreeOf(a), OlaOf(a), a.array(), p, q);
      auto b = ps.Start();
      const double t_first = Micros(t0);
      if (!b.ok()) return std::fprintf(stderr, "%s\n", b.status().ToString().c_str()), 1;
      first_w.push_back((b->upper - b->lower) / scale);
      first_w_abs.push_back((b->upper - b->lower) / static_cast<double>(abs_sum));
      first_us.push_back(t_first);
      int k = 0;
      while (!ps.done()) {
        b = ps.Next();
        if (!b.ok()) return std::fprintf(stderr, "%s\n", b.status().ToString().c_str()), 1;
        ++k;
      }
      all_us.push_back(Micros(t0));
      steps.push_back(k);
      last_w.push_back((b->upper - b->lower) / scale);
      t0 = Clock::now();
      auto s = a.Summarize(p, q, false);
      query_us.push_back(Micros(t0));
      if (!s.ok()) return 1;
      if (r < 5) {
        const std::string range = std::to_string(p) + ":" + std::to_string(q);
        cli_a.push_back(
            TimeProcess({MOMENTA_CLI_PATH, "query", path, "--range", range, "--stat", "sum", "--approx", "--json"}));
        cli_p.push_back(TimeProcess(
            {MOMENTA_CLI_PATH, "query", path, "--range", range, "--stat", "sum", "--progressive", "--json"}));
      }
    }
    std::printf("%-10llu %12.3g %12.3g %12.3g %10.1f %10.1f %8.0f %12.3g %10.1f %10.0f %10.0f\n",
                static_cast<unsigned long long>(len), Median(first_w),
                *std::max_element(first_w.begin(), first_w.end()), Median(first_w_abs), Median(first_us),
                Median(all_us), Median(steps), Median(last_w), Median(query_us), Median(cli_a), Median(cli_p));
  }
  ba->reset();
  std::error_code ec;
  std::filesystem::remove(path, ec);
  std::filesystem::remove_all(path + ".momenta", ec);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t n = uint64_t{1} << 25;
  int ranges = 30;
  std::string data = "normal";
  Buffer buffer;
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = tmp && *tmp ? tmp : "/tmp";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--length")
      n = std::strtoull(value.c_str(), nullptr, 0);
    else if (flag == "--ranges")
      ranges = std::atoi(value.c_str());
    else if (flag == "--data")
      data = value;
    else if (flag == "--dir")
      dir = value;
    else if (flag == "--buffer")
      buffer.kind = value;
    else if (flag == "--nodes")
      buffer.nodes = std::atoi(value.c_str());
    else if (flag == "--bin")
      buffer.bin = std::strtoull(value.c_str(), nullptr, 0);
    else
      return std::fprintf(stderr,
                          "usage: progressive_driver [--length N] [--ranges R] [--data normal|alternating] [--dir D] "
                          "[--buffer hbb|ola] [--nodes N] [--bin B]\n"),
             2;
  }
  if (n < 2000 || ranges < 1 || (data != "normal" && data != "alternating"))
    return std::fprintf(stderr, "progressive_driver: --length >= 2000, --ranges >= 1, --data normal|alternating\n"), 2;
  if (buffer.kind != "hbb" && buffer.kind != "ola")
    return std::fprintf(stderr, "progressive_driver: --buffer hbb|ola\n"), 2;
  return Run(n, ranges, data, dir, buffer);
}
