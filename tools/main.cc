// The momenta command-line tool: parse with CLI11, run one subcommand, map
// every outcome to an exit code (0 ok, 1 runtime error, 2 usage error).
#include <CLI/CLI.hpp>
#include <cstdio>

#include "tools/commands.h"

int main(int argc, char** argv) {
  using namespace momenta::cli;
  CLI::App app{"momenta: external-memory arrays (.npy files) with fast range statistics"};
  app.set_version_flag("--version", "momenta 0.1.0");
  app.require_subcommand(1);
  Command run;
  RegisterArrayCommands(app, &run);
  RegisterTransferCommands(app, &run);
  RegisterQueryCommands(app, &run);
  RegisterLogCommand(app, &run);
  RegisterWindowCommand(app, &run);
  RegisterNetCommands(app, &run);
  app.footer("Run 'momenta COMMAND --help' for a command's options and an example.");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version arrive here too, with exit code 0.
    const int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitUsage;
  }
  if (!run) return UsageFail("no command given");
  const int rc = run();
  std::fflush(stdout);
  if (std::ferror(stdout)) {
    std::fprintf(stderr, "momenta: IO error: stdout: write failed\n");
    return kExitRuntime;
  }
  return rc;
}
