// Each file of subcommands registers its commands on the app; the parsed
// subcommand's callback stores the work in *run, which main() executes.
#pragma once

#include "tools/cli_common.h"

namespace momenta::cli {

void RegisterArrayCommands(CLI::App& app, Command* run);  // create info get set
void RegisterInfoCommand(CLI::App& app, Command* run);    // info (by RegisterArrayCommands)
void RegisterImportCommand(CLI::App& app, Command* run);  // import
void RegisterExportCommand(CLI::App& app, Command* run);  // export
void RegisterQueryCommands(CLI::App& app, Command* run);  // query build verify update
void RegisterUpdateCommand(CLI::App& app, Command* run);  // update (by RegisterQueryCommands)
void RegisterLogCommand(CLI::App& app, Command* run);     // log
void RegisterWindowCommand(CLI::App& app, Command* run);  // window
void RegisterNetCommands(CLI::App& app, Command* run);    // root site ask
void RegisterSiteCommand(CLI::App& app, Command* run);    // site (by RegisterNetCommands)
void RegisterShardCommand(CLI::App& app, Command* run);   // shard create
void RegisterBenchCommand(CLI::App& app, Command* run);   // bench

}  // namespace momenta::cli
