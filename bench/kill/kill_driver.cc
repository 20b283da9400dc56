// A thousand kills: SIGKILL a writer at random moments, over and
// over, and check after each kill that nothing acknowledged was lost, that
// the buffer verifies and that every answer was exact; the same for the
// network monitor's `momenta site` and `momenta root` processes.
//
//   kill_driver POLICY KILLS SEED DIR [--cli PATH] [--cli-every N]
//               [--max-delay-ms D] [--heartbeat-ms H] [--quiet]
//
// POLICY: always | batch | none | all (the three in turn) for writer rounds;
// site | root | net (both) for monitor rounds. SEED 0 picks one (printed
// either way). DIR: a scratch folder "DIR/kill-PID" is made there (refused
// when less than 512 MiB is free) and removed at the end, also on Ctrl-C.
// Exit status 0 when every check passed, 3 when one failed, 2 usage, 1 setup.
//
// What a writer promises under a process kill (SIGKILL, not power loss: the
// page cache survives), from storage/log/log_writer.h and buffers/buffered_array.h:
// under every policy an update's log frame is written to the kernel before
// BufferedArray::Apply returns (kAlways also fdatasyncs it first; kBatch
// syncs at Commit, kNone never), so EVERY UPDATE WHOSE Apply RETURNED OK
// SURVIVES A PROCESS KILL, under always, batch and none alike. The policies
// differ only after a machine crash, which this driver does not simulate.
// "Acknowledged" is therefore the same for the three: Apply returned. An
// update whose Apply had not returned may or may not survive (its chunk's
// frame may be in the log); if it does, it is in the array and the buffer.
//
// A writer round (bench/kill/kill_writer.cc): a forked writer opens the array
// (recovering what the last kill left), applies the stream of kill_model.h
// (scattered and hot-range updates in batches of 1..6000), commits every 1..6
// batches and checkpoints (Close, whose checkpoint also deletes log segments
// it no longer needs, then Open) every 2..13; 16 KiB log segments rotate
// every ~300 records. It tells the driver over a pipe what it begins and
// what returned. A forked reader queries random range sums meanwhile and
// reports each answer with its log sequence. After a random delay (a quarter
// of them under 3 ms, so in the open) the writer gets SIGKILL. Then, in 3 of
// 4 rounds, the reader is stopped (its last queries run after the kill: it
// must not wait on the dead writer) and the driver reopens the array as a
// writer (the recovery) and checks, exactly (i8 data, exact integer sums):
//   - the last update in the array, L (the array's maximum), is at least
//     every update ever acknowledged (else: lost), at most the last begun;
//   - the buffer's log sequence is L, and the log's records after the last
//     check are dense, end at L, and are record by record the model's update
//     (index, old value, new value);
//   - the array equals the model after updates 1..L, element by element;
//   - Verify() (what `momenta verify` runs) finds no node that differs, and
//     every 10th check the real `momenta verify` process exits 0;
//   - every reader answer equals the model's sum at the answer's log
//     sequence, which lies between the last check and L; 8 sums from the
//     reopened writer equal the model's.
// In the 4th round the reader stops before the kill and nobody recovers:
// the next round's writer (or reader) does, and may be killed doing it; its
// state is checked at the next check (acknowledged updates accumulate, so
// nothing escapes). A failing round prints its number; the seed and the
// round reproduce its randomness (RoundSeed), the exact kill moment is timing.
//
// Monitor rounds (bench/kill/kill_net.cc) are described there.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "bench/kill/kill_net.h"
#include "bench/kill/kill_util.h"
#include "bench/kill/kill_writer.h"
#include "storage/util/parse_number.h"

namespace momenta::kill {
namespace {

int Usage(const char* why) {
  std::fprintf(stderr,
               "kill_driver: %s\n"
               "usage: kill_driver always|batch|none|all|site|root|net KILLS SEED DIR [--cli PATH] [--cli-every N]\n"
               "                   [--max-delay-ms D] [--heartbeat-ms H] [--quiet]\n",
               why);
  return 2;
}

bool ParseU64(const char* text, uint64_t* out) { return ParseInteger(std::string_view(text), out); }

std::string Ms(double v) {
  char b[32];
  std::snprintf(b, sizeof b, v < 10 ? "%.2f" : "%.0f", v);
  return b;
}

void PrintWriterReport(const std::string& policy, const WriterRunReport& r) {
  std::string phases;
  for (const auto& [name, n] : r.phase) phases += (phases.empty() ? "" : ", ") + name + " " + std::to_string(n);
  std::printf("\n## --sync %s\n", policy.c_str());
  std::printf("kills %" PRIu64 " (%s); deferred to the next writer %" PRIu64
              ", of which killed again in that recovery %" PRIu64 "\n",
              r.kills, phases.c_str(), r.deferred, r.killed_in_recovery);
  std::printf("checks %" PRIu64 ": acknowledged updates %" PRIu64 " (all checked present), applied %" PRIu64
              ", unacknowledged but kept %" PRIu64 ", log records checked %" PRIu64 "\n",
              r.checks, r.acknowledged, r.applied, r.unacked_survived, r.log_records_checked);
  std::printf("answers checked: reader %" PRIu64 ", reopened writer %" PRIu64 "; momenta verify runs %" PRIu64 "\n",
              r.reader_answers, r.driver_answers, r.cli_verifies);
  std::printf(
      "reopen (recovery) after a kill: median %s ms, max %s ms; a writer's open of a killed state: median %s ms, max "
      "%s ms (%zu)\n",
      Ms(Median(r.reopen_ms)).c_str(), Ms(Max(r.reopen_ms)).c_str(), Ms(Median(r.child_recovery_ms)).c_str(),
      Ms(Max(r.child_recovery_ms)).c_str(), r.child_recovery_ms.size());
  std::printf("LOST %" PRIu64 ", VERIFY FAILURES %" PRIu64 ", WRONG ANSWERS %" PRIu64 ", other failures %" PRIu64
              "; wall %.0f s\n",
              r.lost, r.verify_failures, r.wrong_answers, r.other_failures, r.seconds);
  for (const std::string& f : r.failures) std::printf("  FAILED %s\n", f.c_str());
  std::fflush(stdout);
}

int Main(int argc, char** argv) {
  if (argc < 5) return Usage("four arguments needed");
  const std::string policy = argv[1];
  uint64_t kills = 0, seed = 0;
  if (!ParseU64(argv[2], &kills) || kills == 0) return Usage("KILLS must be a positive integer");
  if (!ParseU64(argv[3], &seed)) return Usage("SEED must be a non-negative integer");
  const std::string parent = argv[4];
#ifdef MOMENTA_CLI_PATH
  std::string cli = MOMENTA_CLI_PATH;
#else
  std::string cli = "momenta";
#endif
  uint64_t cli_every = 10, heartbeat_ms = 200;
  double max_delay_ms = 40;
  bool quiet = false;
  for (int i = 5; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    uint64_t v = 0;
    if (a == "--cli") {
      const char* p = value();
      if (!p) return Usage("--cli needs a path");
      cli = p;
    } else if (a == "--cli-every") {
      const char* p = value();
      if (!p || !ParseU64(p, &cli_every)) return Usage("--cli-every needs a count");
    } else if (a == "--max-delay-ms") {
      const char* p = value();
      if (!p || !ParseU64(p, &v) || v == 0) return Usage("--max-delay-ms needs a positive count");
      max_delay_ms = static_cast<double>(v);
    } else if (a == "--heartbeat-ms") {
      const char* p = value();
      if (!p || !ParseU64(p, &heartbeat_ms) || heartbeat_ms == 0) return Usage("--heartbeat-ms needs a positive count");
    } else if (a == "--quiet") {
      quiet = true;
    } else {
      return Usage(("unknown option " + a).c_str());
    }
  }
  std::vector<LogSync> policies;
  bool net_site = false, net_root = false;
  if (policy == "all") {
    policies = {LogSync::kAlways, LogSync::kBatch, LogSync::kNone};
  } else if (policy == "site" || policy == "root" || policy == "net") {
    net_site = policy != "root";
    net_root = policy != "site";
  } else {
    auto p = ParseLogSync(policy, "--sync");
    if (!p.ok()) return Usage("POLICY must be always, batch, none, all, site, root or net");
    policies = {*p};
  }
  if (seed == 0) seed = std::random_device{}() | (static_cast<uint64_t>(std::random_device{}()) << 32);
  std::printf("kill_driver %s %" PRIu64 " %" PRIu64 " %s  (seed %" PRIu64 ")\n", policy.c_str(), kills, seed,
              parent.c_str(), seed);
  std::fflush(stdout);

  InstallStopHandler();
  bool ok = true;
  {
    Scratch scratch;
    std::string error;
    if (!Scratch::Make(parent, uint64_t{512} << 20, &scratch, &error)) {
      std::fprintf(stderr, "kill_driver: %s\n", error.c_str());
      return 1;
    }
    for (LogSync sync : policies) {
      WriterRunOptions o;
      o.sync = sync;
      o.kills = kills;
      o.seed = seed;
      o.dir = scratch.File(std::string(LogSyncName(sync)));
      o.cli = cli;
      o.cli_every = cli_every;
      o.max_delay_ms = max_delay_ms;
      o.verbose = !quiet;
      std::error_code ec;
      std::filesystem::create_directories(o.dir, ec);
      const WriterRunReport r = RunWriterKills(o);
      KillRegisteredChildren();
      if (StopRequested()) break;
      PrintWriterReport(std::string(LogSyncName(sync)), r);
      ok = ok && r.ok() && r.kills == kills;
    }
    for (const bool root : {false, true}) {
      if (StopRequested() || (root ? !net_root : !net_site)) continue;
      NetRunOptions o;
      o.kill_root = root;
      o.kills = kills;
      o.seed = seed;
      o.dir = scratch.File(root ? "root" : "site");
      o.cli = cli;
      o.heartbeat_ms = heartbeat_ms;
      o.verbose = !quiet;
      std::error_code ec;
      std::filesystem::create_directories(o.dir, ec);
      const NetRunReport r = RunNetKills(o);
      KillRegisteredChildren();
      if (StopRequested()) break;
      PrintNetReport(r);
      ok = ok && r.ok() && r.kills == kills;
    }
    KillRegisteredChildren();
  }
  if (StopRequested()) {
    RemoveScratchNow();
    std::fprintf(stderr, "kill_driver: stopped; scratch folder removed\n");
    return 130;
  }
  std::printf("\n%s (seed %" PRIu64 ")\n", ok ? "ALL CHECKS PASSED" : "SOME CHECKS FAILED", seed);
  return ok ? 0 : 3;
}

}  // namespace
}  // namespace momenta::kill

int main(int argc, char** argv) { return momenta::kill::Main(argc, argv); }
