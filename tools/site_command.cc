// momenta site: a monitored site, running the protocol over an update log or
// a 'TIMESTAMP ITEM' stream (stream/drive/site_runner.h) and reporting to a
// root (stream/net/site_client.h).
#include <CLI/CLI.hpp>
#include <chrono>
#include <memory>

#include "storage/array/sidecar.h"
#include "storage/util/cancel.h"
#include "storage/util/stop_token.h"
#include "stream/drive/log_source.h"
#include "stream/drive/log_wait.h"
#include "stream/drive/site_runner.h"
#include "stream/drive/text_source.h"
#include "stream/net/site_client.h"
#include "stream/net/site_names.h"
#include "stream/window/item_mapping.h"
#include "tools/cli_common.h"
#include "tools/cli_parse.h"
#include "tools/cli_signals.h"
#include "tools/commands.h"
#include "tools/token_file.h"

namespace momenta::cli {
namespace {

struct SiteArgs {
  std::string root, id, log, input, item = "index", token_file, clock = "data";
  std::string sidecar;  // --sidecar DIR: where the --log array's log lives
  std::string heartbeat = "1s", tick = "100ms", connect_timeout = "30s";
  bool once = false;
};

// The site's input, opened before connecting so that a missing file fails fast.
Result<std::unique_ptr<ItemSource>> OpenSiteInput(const SiteArgs& a, const ItemMapping& mapping, StopToken stop) {
  if (a.input.empty()) {
    std::string log_dir = SidecarPath(a.log, a.sidecar) + "/log";
    if (!a.once) {  // a daemon may start before the data: wait for the log
      auto found = WaitForLogDir(a.log, a.sidecar, stop, PrintNotice);
      if (!found.ok()) return found.status();
      log_dir = *found;
    }
    auto log = LogSource::Open(log_dir, mapping, /*follow=*/!a.once, stop, PrintNotice);
    if (!log.ok()) return log.status();
    return std::unique_ptr<ItemSource>(std::move(*log));
  }
  const OneWord one_word = a.clock == "wall" ? OneWord::kItemNowTrimmed : OneWord::kTimestamp;
  auto text = TextSource::Open(a.input, mapping, one_word, stop);
  if (!text.ok()) return text.status();
  return std::unique_ptr<ItemSource>(std::move(*text));
}

int RunSite(const SiteArgs& a) {
  if (a.log.empty() == a.input.empty()) return UsageFail("give exactly one of --log PATH or --input FILE|-");
  auto root = ParseHostPort(a.root, "--root");
  if (!root.ok()) return UsageFail(root.status().ToString());
  if (Status st = CheckSiteName(a.id); !st.ok()) return UsageFail("--id: " + st.ToString());
  auto mapping = ItemMapping::Parse(a.item, "--item");
  if (!mapping.ok()) return UsageFail(mapping.status().ToString());
  const bool named = mapping->kind() == ItemMapping::Kind::kName;
  if (named && !a.log.empty())
    return UsageFail("--item name: an update log's items are indices or values; names come from --input");
  auto heartbeat = ParseDuration(a.heartbeat, "--heartbeat");
  if (!heartbeat.ok()) return UsageFail(heartbeat.status().ToString());
  auto tick = ParseDuration(a.tick, "--tick");
  if (!tick.ok() || *tick < 1) return UsageFail("--tick: must be a duration of at least 1 ms");
  auto connect_timeout = ParseDuration(a.connect_timeout, "--connect-timeout");
  if (!connect_timeout.ok()) return UsageFail(connect_timeout.status().ToString());
  if (*heartbeat < 1) return UsageFail("--heartbeat: must be at least 1 ms");

  SiteClientOptions o;
  o.root = *root;
  o.name = a.id;
  SetBackoffForHeartbeat(std::chrono::milliseconds(*heartbeat), &o);
  if (!a.token_file.empty()) {
    auto token = ReadToken(a.token_file);
    if (!token.ok()) return Fail(token.status());
    o.token = *token;
  }
  InstallCancelHandlers();
  const StopToken stop = StopToken::Cancel();
  auto source = OpenSiteInput(a, *mapping, stop);
  if (!source.ok()) return CancelRequested() ? StopExitCode() : Fail(source.status());
  SiteNames names;
  if (named)
    *source = std::make_unique<NotingSource>(std::move(*source),
                                             [&names](const TimedItem& x) { names.Note(x.item, x.name, x.ts); });
  o.cancel_fd = CancelFd();
  auto client = SiteClient::Create(o);
  if (!client.ok()) return UsageFail(client.status().ToString());
  if (named) (*client)->set_names(&names);
  if (Status st = (*client)->ConnectWithin(std::chrono::milliseconds(*connect_timeout)); !st.ok())
    return CancelRequested() ? StopExitCode() : Fail(st);

  if (a.clock == "wall" && !a.log.empty() && (*client)->params().spec.tardiness == 0)
    return UsageFail(
        "--clock wall on an update log drops every record when the root's tardiness is 0 (each is "
        "read after it is stamped): leave --clock at data to follow the log's own time, or start the "
        "root with --tardiness (e.g. 1s)");
  SiteLoopOptions loop;
  loop.heartbeat = std::chrono::milliseconds(*heartbeat);
  loop.tick_ms = *tick;
  loop.wall = a.clock == "wall";
  loop.once = a.once;
  loop.notice = PrintNotice;
  auto end = RunSiteLoop(**client, **source, loop, stop);
  if (!end.ok()) return Fail(end.status());
  if (end->dropped > 0)
    PrintNotice(Counted(end->dropped, "item") + " arrived later than the tardiness allows; dropped");
  if (names.collisions() > 0)
    PrintNotice(Counted(names.collisions(), "name") + " shared a 64-bit hash with another name: counted as one item");
  if (auto* log = dynamic_cast<const LogSource*>(source->get()); log && log->skipped() > 0)
    PrintNotice(Counted(log->skipped(), "update") + " with a value off the grid (NaN) skipped");
  return CancelRequested() ? StopExitCode() : kExitOk;
}

}  // namespace

void RegisterSiteCommand(CLI::App& app, Command* run) {
  auto a = std::make_shared<SiteArgs>();
  CLI::App* sub = app.add_subcommand(
      "site", "a monitored site: runs the protocol over an update log or a 'TIMESTAMP ITEM' stream, reports to a root");
  sub->add_option("--root", a->root, "the root's HOST:PORT")->required();
  sub->add_option("--id", a->id, "this site's name: 1-64 letters, digits, '.', '_' or '-' (the root refuses others)")
      ->required();
  sub->add_option("--log", a->log, "array file (.npy): tail its update log (times in ms; waits for it to appear)");
  sub->add_option("--sidecar", a->sidecar,
                  "folder of the --log array's sidecar (default: PATH.momenta, or under $MOMENTA_SIDECAR_DIR)");
  sub->add_option(
      "--input", a->input,
      "text file of 'TIMESTAMP ITEM' lines ('TIMESTAMP' alone: the clock moves on; '#' lines skipped), '-' for stdin");
  sub->add_option("--item", a->item,
                  "the item: index, index/G (regions of G elements), value/G or name (--input: any word, counted "
                  "by a 64-bit hash; the root answers with the names)")
      ->capture_default_str();
  sub->add_option("--token-file", a->token_file, "present the token in this file's first line");
  sub->add_option("--clock", a->clock, "data: the input's own timestamps; wall: live, the wall clock in ms")
      ->check(CLI::IsMember({"data", "wall"}))
      ->capture_default_str();
  sub->add_option("--heartbeat", a->heartbeat, "tell the root the clock at least this often")->capture_default_str();
  sub->add_option("--tick", a->tick, "wall clock: run the protocol this often")->capture_default_str();
  sub->add_option("--connect-timeout", a->connect_timeout, "give up if the root cannot be reached this long at start")
      ->capture_default_str();
  sub->add_flag("--once", a->once, "exit at the end of the input (default: keep the state at the root, tail the log)");
  sub->footer(
      "Examples:\n"
      "  momenta site --root 127.0.0.1:7070 --id east --log east.npy --item index/1000\n"
      "  tail -f events.txt | momenta site --root 10.0.0.5:7070 --id web1 --input - --clock wall\n"
      "  momenta site --root 10.0.0.5:7070 --id pkgs --input packages.txt --item name --once\n"
      "    (lines 'TIMESTAMP NAME': the root answers frequent, items and item NAME in names)\n"
      "Reconnects with backoff when the root goes away (attempts at most 5/8 of a heartbeat\n"
      "apart, and at most 2.5 s), and then resends its whole state.\n"
      "Reports time t only once nothing stamped <= t can still arrive: its data clock has passed\n"
      "t + tardiness, or the input ended (a followed log: read to its end); later items are dropped.\n"
      "Stops within a second on Ctrl-C (exit 130) or SIGTERM (exit 143), also while it connects.");
  sub->callback([a, run] { *run = [a] { return RunSite(*a); }; });
}

}  // namespace momenta::cli
