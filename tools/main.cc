// The momenta command-line tool: parse with CLI11, run one subcommand, map
// every outcome to an exit code (0 ok, 1 runtime error, 2 usage error,
// 128 + N when signal N interrupted a long command).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

#include "revision.h"  // generated (tools/revision.cmake): MOMENTA_REVISION
#include "tools/commands.h"

namespace {

// "create, info, get, ..." in the order they were registered.
std::string SubcommandNames(const CLI::App& app) {
  std::string names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    names += (names.empty() ? "" : ", ") + sub->get_name();
  return names;
}

// A parse error before any subcommand was recognized: none was given, or the
// first word is not one. Both name the subcommands.
int NoSubcommand(const CLI::App& app, int argc, char** argv, const CLI::ParseError& e) {
  const std::string first = argc > 1 ? argv[1] : "";
  std::string problem;
  if (first.empty())
    problem = "a subcommand is required";
  else if (first[0] != '-')
    problem = "unknown subcommand '" + first + "'";
  else
    problem = e.what();
  std::fprintf(stderr, "momenta: %s; the subcommands are: %s\nRun 'momenta --help' for what each does.\n",
               problem.c_str(), SubcommandNames(app).c_str());
  return momenta::cli::kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace momenta::cli;
  CLI::App app{"momenta: external-memory arrays (.npy files) with fast range statistics"};
  app.set_version_flag("--version", "momenta 0.1.0 (" MOMENTA_REVISION ")");
  app.require_subcommand(1);
  Command run;
  RegisterArrayCommands(app, &run);
  RegisterImportCommand(app, &run);
  RegisterExportCommand(app, &run);
  RegisterQueryCommands(app, &run);
  RegisterLogCommand(app, &run);
  RegisterWindowCommand(app, &run);
  RegisterNetCommands(app, &run);
  RegisterShardCommand(app, &run);
  RegisterBenchCommand(app, &run);
  app.footer("Run 'momenta COMMAND --help' for a command's options and an example.");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version arrive here too, with exit code 0.
    if (e.get_exit_code() == 0) return app.exit(e) == 0 ? kExitOk : kExitUsage;
    if (app.get_subcommands().empty()) return NoSubcommand(app, argc, argv, e);
    std::fprintf(stderr, "momenta: %s\nRun with --help for more information.\n", e.what());
    return kExitUsage;
  }
  if (!run) return UsageFail("no command given");
  const int rc = run();
  std::fflush(stdout);
  if (std::ferror(stdout)) {
    std::fprintf(stderr, "momenta: IO error: stdout: write failed\n");
    return rc != kExitOk ? rc : kExitRuntime;  // a signal's 130 / 143 stays
  }
  return rc;
}
