// momenta bench: points to the benchmark. The benchmark of momenta on this
// machine (against a plain scan, NumPy, DuckDB and the device's limits, fio)
// is a script beside the benchmarks, bench/momenta_bench/, not part of this
// binary: it drives fio, node, the compiled bench drivers and
// bench/ingest_driver.py, none of which momenta ships or needs. This command
// runs nothing; it says how to run the script, whatever it is given.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <string>

#include "tools/cli_common.h"
#include "tools/commands.h"

namespace momenta::cli {
namespace {

int PointToBench() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  std::fprintf(stderr,
               "momenta: bench is a script beside the benchmarks, not part of this binary; from momenta's source "
               "tree (its bench targets built), run\n"
               "  /usr/bin/python3 bench/momenta_bench --preset quick --cli %s\n"
               "bench/README.md (\"momenta bench\") says what it measures, what it needs and its options\n",
               ec ? "momenta" : self.c_str());
  return kExitUsage;
}

}  // namespace

void RegisterBenchCommand(CLI::App& app, Command* run) {
  CLI::App* sub =
      app.add_subcommand("bench", "how to benchmark momenta on this machine (a script beside the benchmarks)");
  sub->allow_extras();
  sub->footer("The benchmark is bench/momenta_bench/ in momenta's source tree (bench/README.md).");
  sub->callback([run] { *run = [] { return PointToBench(); }; });
}

}  // namespace momenta::cli
