// momenta bench: one command that benchmarks momenta on this machine against
// a plain scan, NumPy, DuckDB and the device's own limits (fio), and writes a
// Markdown table, a JSON file and (--plot) SVG charts.
//
// This file only checks the command line and hands over: the measuring is
// done by the orchestrator bench/momenta_bench/ (Python, run with Debian's
// /usr/bin/python3, which has NumPy and matplotlib), which runs this very
// binary as whole processes, the bench drivers, fio and node. It is found,
// in this order:
//   $MOMENTA_BENCH_HOME/momenta_bench           (an override, for development)
//   <bindir>/../share/momenta/bench/momenta_bench   (an install)
//   the source tree this binary was built from (a build tree)
// and the compiled drivers (scan_driver, net_monitor_driver) beside it:
//   <bindir>/../libexec/momenta, or the build tree's bench/ folder.
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "tools/cli_parse.h"
#include "tools/commands.h"

namespace momenta::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPython = "/usr/bin/python3";

struct BenchArgs {
  std::string preset;
  std::string dir = ".";
  std::string data_size;  // empty: the preset's
  std::string out = "momenta-bench";
  int rounds = 0;  // 0: the preset's
  bool keep = false, plot = false, json = false;
};

bool IsFile(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

// The folder holding this binary (/proc/self/exe resolved).
fs::path BinaryDir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe.parent_path();
}

// The orchestrator's package folder (its __main__.py), or empty.
fs::path FindOrchestrator() {
  std::vector<fs::path> candidates;
  if (const char* home = std::getenv("MOMENTA_BENCH_HOME"); home != nullptr && *home != '\0')
    candidates.push_back(fs::path(home) / "momenta_bench");
  candidates.push_back(BinaryDir() / ".." / "share" / "momenta" / "bench" / "momenta_bench");
#ifdef MOMENTA_BENCH_SOURCE_DIR
  candidates.push_back(fs::path(MOMENTA_BENCH_SOURCE_DIR) / "momenta_bench");
#endif
  for (const fs::path& c : candidates)
    if (IsFile(c / "__main__.py")) return fs::weakly_canonical(c);
  return {};
}

// The folder of the compiled bench drivers (scan_driver), or empty.
fs::path FindDrivers() {
  std::vector<fs::path> candidates{BinaryDir() / ".." / "libexec" / "momenta"};
#ifdef MOMENTA_BENCH_BINARY_DIR
  candidates.push_back(fs::path(MOMENTA_BENCH_BINARY_DIR));
#endif
  for (const fs::path& c : candidates)
    if (IsFile(c / "scan_driver")) return fs::weakly_canonical(c);
  return {};
}

int RunBench(const BenchArgs& a) {
  uint64_t data_bytes = 0;  // 0: the preset's
  if (!a.data_size.empty()) {
    auto bytes = ParseBytes(a.data_size, "--data-size");
    if (!bytes.ok() || *bytes < (uint64_t{64} << 20))
      return UsageFail("--data-size: '" + a.data_size + "' is not a size of at least 64M (e.g. 1G, 16G)");
    data_bytes = *bytes;
  }
  struct stat st{};
  if (::stat(a.dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return UsageFail("--dir: '" + a.dir + "' is not a folder");
  if (::access(kPython, X_OK) != 0) {
    std::fprintf(stderr, "momenta: bench needs %s with NumPy (apt-get install python3 python3-numpy)\n", kPython);
    return kExitRuntime;
  }
  const fs::path orchestrator = FindOrchestrator();
  if (orchestrator.empty()) {
    std::fprintf(stderr,
                 "momenta: bench: its scripts (momenta_bench/) are neither installed beside this binary "
                 "(share/momenta/bench) nor in its source tree; set MOMENTA_BENCH_HOME to the repository's bench/ folder\n");
    return kExitRuntime;
  }
  const fs::path drivers = FindDrivers();
  // -B: no __pycache__ written into the source tree or the install.
  std::vector<std::string> args{kPython, "-B", orchestrator.string(), "--cli", (BinaryDir() / "momenta").string(),
                                "--preset", a.preset, "--dir", a.dir, "--out", a.out};
  if (!drivers.empty()) args.insert(args.end(), {"--drivers", drivers.string()});
  if (data_bytes > 0) args.insert(args.end(), {"--data-size", std::to_string(data_bytes)});
  if (a.rounds > 0) args.insert(args.end(), {"--rounds", std::to_string(a.rounds)});
  if (a.keep) args.push_back("--keep");
  if (a.plot) args.push_back("--plot");
  if (a.json) args.push_back("--json");
  std::vector<char*> argv;
  for (std::string& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  ::execv(kPython, argv.data());
  std::fprintf(stderr, "momenta: bench: cannot run %s: %s\n", kPython, std::strerror(errno));
  return kExitRuntime;
}

}  // namespace

void RegisterBenchCommand(CLI::App& app, Command* run) {
  auto* args = new BenchArgs;  // lives as long as the app (main() runs the command)
  CLI::App* sub = app.add_subcommand(
      "bench", "benchmark momenta on this machine against a scan, NumPy, DuckDB and the device's limits (fio)");
  sub->add_option("--preset", args->preset,
                  "quick: a sparse 16 GiB array with 1 GiB of data, a few minutes; terabyte: a sparse 1 TiB "
                  "(2^37 f8) array with --data-size of data in scattered regions, about an hour")
      ->required()
      ->check(CLI::IsMember({"quick", "terabyte"}));
  sub->add_option("--dir", args->dir, "folder for the array, its buffers and fio's files (default: .)");
  sub->add_option("--data-size", args->data_size,
                  "bytes of data written into the sparse array (quick: 1G, terabyte: 16G; at least 64M, at most a quarter of the array)");
  sub->add_option("--out", args->out, "PREFIX of the results: PREFIX.md, PREFIX.json, PREFIX-*.svg")
      ->default_str("momenta-bench");
  CountIn(sub->add_option("--rounds", args->rounds, "interleaved rounds per figure (default: the preset's)"), 1, 100);
  sub->add_flag("--keep", args->keep, "keep the array, its buffers and fio's file (otherwise removed, also on Ctrl-C)");
  sub->add_flag("--plot", args->plot, "draw SVG charts with matplotlib (Debian's python3-matplotlib)");
  sub->add_flag("--json", args->json, "print the JSON document on stdout instead of the Markdown table");
  sub->footer(
      "Measures, interleaved (momenta, then its reference) with medians and p99:\n"
      "  query latency, cold (array and sidecar dropped from the page cache) and warm, for ranges of 1\n"
      "    element to the whole array, for sum, moments (order 2), var, min/max: in process (the\n"
      "    query's own time) and as a whole CLI process; the default buffer (hbb), the paper's\n"
      "    all-in-RAM bins (--disk-tier off), Ola (--buffer ola), a plain scan through the same I/O\n"
      "    backend, NumPy memmap, DuckDB (when found: MOMENTA_BENCH_DUCKDB=FOLDER where\n"
      "    `npm install @duckdb/node-api` ran); bytes read per query (asked, and delivered by the\n"
      "    device) and the process's RAM; every sum checked against the scan;\n"
      "  batches and overviews (queries/s against fio's random reads at depth 32);\n"
      "  build time against fio's sequential read of the data; the first query on an unbuilt array;\n"
      "  updates (bench/ingest_driver.py): hot, scattered, sequential, each per sync policy, against\n"
      "    fio's random writes; --follow ack latency per sync policy against fio's fdatasync per write;\n"
      "  the monitor (net_monitor_driver): summarizer ingest rate and traffic against naive, eps 0.01;\n"
      "  the device's limits (fio), the machine, and how busy it was in each phase.\n"
      "Needs fio and /usr/bin/python3 with NumPy (matplotlib for --plot); root for the update bench\n"
      "(it drops the page cache). Checks free space first; removes what it made unless --keep.\n"
      "Example: momenta bench --preset quick --plot --out results/quick\n"
      "         momenta bench --preset terabyte --dir /mnt/big --data-size 16G --plot");
  sub->callback([run, args] { *run = [args] { return RunBench(*args); }; });
}

}  // namespace momenta::cli
