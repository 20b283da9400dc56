// momenta root / site / ask: the distributed monitor over TCP.
//   root  listens for sites and queries, owns the parameters (stream/net/root_server.h)
//   site  runs the protocol over an update log or a 'TIMESTAMP ITEM' stream
//         and reports to the root (stream/net/site_client.h)
//   ask   one query over the root's line protocol (stream/net/root_query.h)
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <memory>
#include <optional>

#include "storage/log_segments.h"
#include "storage/posix_file.h"
#include "storage/sidecar.h"
#include "stream/window/arrival_hold.h"
#include "stream/window/item_mapping.h"
#include "stream/net/query_client.h"
#include "stream/net/root_server.h"
#include "stream/net/site_client.h"
#include "tools/commands.h"
#include "tools/stop_signals.h"
#include "tools/stream_input.h"

namespace momenta::cli {
namespace {

std::atomic<RootServer*> g_root{nullptr};

// The token is the file's first line (trailing blanks dropped); empty files are refused.
Result<std::string> ReadToken(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno(path, errno);
  std::string text;
  char buf[512];
  ssize_t n = 0;
  while ((n = read(fd, buf, sizeof buf)) > 0 && text.size() < 4096) text.append(buf, static_cast<size_t>(n));
  close(fd);
  if (n < 0) return Status::FromErrno(path, errno);
  text = text.substr(0, text.find('\n'));
  while (!text.empty() && (text.back() == '\r' || text.back() == ' ' || text.back() == '\t')) text.pop_back();
  if (text.empty()) return Status::InvalidArgument(path, "the token file is empty");
  if (text.size() > kMaxHandshakeString) return Status::InvalidArgument(path, "the token is longer than 256 bytes");
  return text;
}

Status WritePortFile(const std::string& path, uint16_t port) {
  return ReplaceFile(path, path + ".tmp", std::to_string(port) + "\n", /*sync=*/false).status();
}

// ---------------------------------------------------------------- root

struct RootArgs {
  std::string listen = "127.0.0.1:7070", window, tardiness = "0", token_file, port_file;
  double eps = 0;
  uint32_t max_frame = kDefaultMaxPayload;
  size_t max_connections = 512;
  int64_t handshake_ms = 5000, idle_ms = 30000;
};

int RunRoot(const RootArgs& a) {
  // The handler stops the server's loop (Stop is async-signal-safe).
  InstallStopSignals([] {
    if (RootServer* r = g_root.load()) r->Stop();
  });
  auto listen = ParseHostPort(a.listen, "--listen");
  if (!listen.ok()) return UsageFail(listen.status().ToString());
  auto window = ParseDuration(a.window, "--window");
  if (!window.ok()) return UsageFail(window.status().ToString());
  auto tardiness = ParseDuration(a.tardiness, "--tardiness");
  if (!tardiness.ok()) return UsageFail(tardiness.status().ToString());
  if (Status st = CheckEps(a.eps, "--eps"); !st.ok()) return UsageFail(st.ToString());
  RootServerOptions o;
  o.listen = *listen;
  o.params.eps = a.eps;
  o.params.spec = {*window, *tardiness};
  if (Status st = ValidateWindowSpec(o.params.spec); !st.ok()) return UsageFail(st.ToString());
  if (!a.token_file.empty()) {
    auto token = ReadToken(a.token_file);
    if (!token.ok()) return Fail(token.status());
    o.token = *token;
  }
  o.max_payload = a.max_frame;
  o.max_connections = a.max_connections;
  o.handshake_timeout = std::chrono::milliseconds(a.handshake_ms);
  o.site_idle_timeout = std::chrono::milliseconds(a.idle_ms);
  auto server = RootServer::Start(o);
  if (!server.ok()) return Fail(server.status());
  const uint16_t port = (*server)->port();
  std::fprintf(stderr, "momenta root: listening on %s, %s%s\n", HostPort{listen->host, port}.ToString().c_str(),
               o.params.ToString().c_str(), o.token.empty() ? "" : ", token required");
  if (!a.port_file.empty()) {
    if (Status st = WritePortFile(a.port_file, port); !st.ok()) return Fail(st);
  }
  g_root = server->get();
  if (StopRequested()) (*server)->Stop();  // a signal before g_root was set
  Status st = (*server)->Run();
  g_root = nullptr;
  if (!st.ok()) return Fail(st);
  std::fprintf(stderr, "momenta root: stopped\n");
  return StopRequested() ? StopExitCode() : kExitOk;
}

// ---------------------------------------------------------------- site

struct SiteArgs {
  std::string root, id, log, input, item = "index", token_file, clock = "data";
  std::string sidecar;  // --sidecar DIR: where the --log array's log lives
  std::string heartbeat = "1s", tick = "100ms", connect_timeout = "30s";
  bool once = false;
};

// "TIMESTAMP ITEM" lines, or a bare "TIMESTAMP" (data clock: the clock moves
// on with no item). Waits with poll so the site keeps its heartbeat.
class LineReader {
 public:
  LineReader(int fd, std::string name, ItemMapping mapping, bool wall)
      : lines_(fd, std::move(name)), mapping_(mapping), wall_(wall) {}
  // 1: an item (*has_item) or a tick; 0: nothing within `wait`; -1: end of input.
  Result<int> Next(int64_t* ts, int64_t* item, bool* has_item, std::chrono::milliseconds wait) {
    while (true) {
      std::string_view line;
      auto got = lines_.Next(&line, wait);
      if (!got.ok()) return got.status();
      if (*got == LineBuffer::Got::kEnd) return -1;
      if (*got == LineBuffer::Got::kNothing) return 0;
      const size_t first = line.find_first_not_of(" \t\r");
      if (first == std::string_view::npos) continue;
      const size_t gap = line.find_first_of(" \t", first);
      const bool one = gap == std::string_view::npos || line.find_first_not_of(" \t\r", gap) == std::string_view::npos;
      if (one) {
        std::string word(line.substr(first, gap == std::string_view::npos ? std::string_view::npos : gap - first));
        while (!word.empty() && word.back() == '\r') word.pop_back();
        if (wall_) {  // a bare ITEM, stamped now
          auto it = mapping_.FromText(word);
          if (!it.ok()) return Status::InvalidArgument(lines_.where(), it.status().ToString());
          *ts = WallMillis();
          *item = *it;
          *has_item = true;
          return 1;
        }
        auto r = std::from_chars(word.data(), word.data() + word.size(), *ts);
        if (r.ec != std::errc() || r.ptr != word.data() + word.size() || *ts < -kMaxTime || *ts > kMaxTime)
          return Status::InvalidArgument(lines_.where(), "'" + word + "' is not a timestamp");
        *has_item = false;
        return 1;
      }
      MOMENTA_RETURN_IF_ERROR(ParseTimedItem(line, mapping_, lines_.name(), lines_.line_number(), ts, item));
      *has_item = true;
      return 1;
    }
  }

 private:
  LineBuffer lines_;
  ItemMapping mapping_;
  bool wall_;
};

int RunSite(const SiteArgs& a) {
  if (a.log.empty() == a.input.empty()) return UsageFail("give exactly one of --log PATH or --input FILE|-");
  auto root = ParseHostPort(a.root, "--root");
  if (!root.ok()) return UsageFail(root.status().ToString());
  if (Status st = CheckSiteName(a.id); !st.ok()) return UsageFail("--id: " + st.ToString());
  auto mapping = ItemMapping::Parse(a.item);
  if (!mapping.ok()) return UsageFail(mapping.status().ToString());
  auto heartbeat = ParseDuration(a.heartbeat, "--heartbeat");
  if (!heartbeat.ok()) return UsageFail(heartbeat.status().ToString());
  auto tick = ParseDuration(a.tick, "--tick");
  if (!tick.ok() || *tick < 1) return UsageFail("--tick: must be a duration of at least 1 ms");
  auto connect_timeout = ParseDuration(a.connect_timeout, "--connect-timeout");
  if (!connect_timeout.ok()) return UsageFail(connect_timeout.status().ToString());
  if (*heartbeat < 1) return UsageFail("--heartbeat: must be at least 1 ms");
  const bool wall = a.clock == "wall";

  SiteClientOptions o;
  o.root = *root;
  o.name = a.id;
  // Reconnection attempts at most 5/8 of a heartbeat apart (backoff up to
  // half of one, plus its jitter; never under backoff_min nor over 2 s), so a
  // root that restarts has this site back within about one heartbeat however
  // long it was down. (With the 2 s cap alone, a root down a few seconds
  // waited up to 2.5 s for its sites.)
  o.backoff_max = std::clamp(std::chrono::milliseconds(*heartbeat / 2), o.backoff_min, o.backoff_max);
  if (!a.token_file.empty()) {
    auto token = ReadToken(a.token_file);
    if (!token.ok()) return Fail(token.status());
    o.token = *token;
  }
  // Open the input before connecting, so a missing file fails fast.
  std::unique_ptr<LineReader> lines;
  std::unique_ptr<LogSource> log;
  if (!a.input.empty()) {
    int fd = 0;
    if (a.input != "-") {
      fd = open(a.input.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) return Fail(Status::FromErrno(a.input, errno));
    }
    lines = std::make_unique<LineReader>(fd, a.input == "-" ? "stdin" : a.input, *mapping, wall);
  } else {
    LogReaderOptions lo;
    lo.follow = !a.once;
    auto reader = LogReader::Open(SidecarPath(a.log, a.sidecar) + "/log", lo);
    if (!reader.ok()) return Fail(reader.status());
    log = std::make_unique<LogSource>(std::move(*reader), *mapping, !a.once);
  }
  InstallStopSignals();
  o.cancel_fd = StopFd();
  auto client = SiteClient::Create(o);
  if (!client.ok()) return UsageFail(client.status().ToString());
  SiteClient& c = **client;
  if (Status st = c.ConnectWithin(std::chrono::milliseconds(*connect_timeout)); !st.ok())
    return StopRequested() ? StopExitCode() : Fail(st);

  using Clock = std::chrono::steady_clock;
  const auto beat = std::chrono::milliseconds(*heartbeat);
  auto last_sent = Clock::now();
  uint64_t frames_seen = c.sent().frames;
  auto note_sends = [&] {
    if (c.sent().frames != frames_seen) {
      frames_seen = c.sent().frames;
      last_sent = Clock::now();
    }
  };
  // The clock the site reports is always a complete time (arrival_hold.h):
  // nothing stamped at or before it can still arrive, so `ask --at T` gives
  // the same answer whenever it is asked.
  const int64_t tau = c.params().spec.tardiness;
  bool quiet = false;       // catching up: nothing reported before quiet_until
  int64_t quiet_until = 0;
  if (log && !wall) {
    // A site (re)started on a long log needs only the records its first
    // window can hold: those stamped before the newest one's time - W - tau
    // have left every window it will report. (It ran the protocol over the
    // whole log, so a restart took longer the older the log: found by
    // bench/kill_driver site, seconds per restart after ten minutes.) Until
    // it has read through that newest time it stays quiet (SetQuiet): the
    // windows of earlier times hold records it skipped, so no such clock
    // may reach the root; then its whole state goes out as one snapshot.
    const std::string log_dir = SidecarPath(a.log, a.sidecar) + "/log";
    auto times = ReadLogTimes(log_dir);
    if (!times.ok()) return Fail(times.status());
    if (times->newest) {
      const int64_t since = std::max(-kMaxTime, *times->newest - c.params().spec.window - tau);
      if (times->first && *times->first < since) {
        LogReaderOptions lo;
        lo.follow = !a.once;
        lo.since = since;
        auto reader = LogReader::Open(log_dir, lo);
        if (!reader.ok()) return Fail(reader.status());
        log = std::make_unique<LogSource>(std::move(*reader), *mapping, !a.once);
        PrintNotice("starting at time " + std::to_string(since) + " of the log (its newest record's time " +
                    std::to_string(*times->newest) + " minus the window and the tardiness): older records have left every window");
        quiet = true;
        quiet_until = *times->newest;
        c.SetQuiet(true);
      }
    }
  }
  ArrivalHold hold(tau);
  // Runs the protocol through time `upto`: each stamp's items as its own
  // tick (data clock) or all of them as tick `upto`, their stamps moved up
  // into [upto - tau, upto] (wall clock: at most --tick late); then, when
  // `to_clock`, an empty tick moves the site's clock to `upto` itself.
  std::vector<Arrival> group;
  auto run_through = [&](int64_t upto, bool to_clock) {
    if (!hold.taken() || upto > *hold.taken()) {
      const std::vector<Arrival> items = hold.Take(upto);
      if (wall) {
        group = items;
        for (Arrival& x : group) x.ts = std::max(x.ts, upto - tau);
        c.Tick(upto, group);
        return;
      }
      for (size_t i = 0; i < items.size();) {
        group.clear();
        size_t j = i;
        while (j < items.size() && items[j].ts == items[i].ts) group.push_back(items[j++]);
        c.Tick(items[i].ts, group);
        i = j;
      }
    }
    if (!wall && to_clock && (!c.clock() || *c.clock() < upto)) c.Tick(upto, {});
  };
  bool ended = false;
  int64_t next_tick = WallMillis();
  while (!StopRequested()) {
    int64_t ts = 0, item = 0;
    bool has_item = true;
    int got = 0;
    const auto wait = wall ? std::chrono::milliseconds(std::max<int64_t>(0, next_tick - WallMillis()))
                           : std::chrono::milliseconds(ended ? beat.count() : 50);
    if (!ended) {
      if (lines) {
        auto r = lines->Next(&ts, &item, &has_item, wait);
        if (!r.ok()) return Fail(r.status());
        got = *r;
      } else {
        auto r = log->Next(&ts, &item, wait);
        if (!r.ok()) return Fail(r.status());
        got = *r ? 1 : (a.once ? -1 : 0);
      }
      if (got < 0) ended = true;
    } else {
      SleepUnlessStopped(wait);
    }
    if (StopRequested()) break;
    if (wall) {
      // An item arrives when it is read, stamped at most now; more than tau
      // late it is dropped.
      const int64_t now = WallMillis();
      hold.Advance(now);
      if (got == 1 && has_item) hold.Add(std::min(ts, now), item);
      if (now >= next_tick || ended) {
        // Read to its end, the input has nothing more for any time.
        run_through(ended ? now : now - tau - 1, true);
        next_tick = now + *tick;
      }
    } else {
      if (got == 1 && has_item) hold.Add(ts, item);
      if (got == 1 && !has_item) hold.Advance(ts);  // a bare TIMESTAMP
      // Complete: everything when the input ended, and a followed log read
      // to its end (each `momenta update` appends its records in one piece;
      // a record appended later at or before a time already reported is
      // late). Otherwise what tardiness allows: clock - tau - 1.
      const bool whole = ended || (log && got == 0);
      const bool due = got != 1 || Clock::now() - last_sent >= beat;
      if (const auto upto = whole ? hold.clock() : hold.Complete()) run_through(*upto, due);
      if (quiet && hold.taken() && *hold.taken() >= quiet_until) {
        quiet = false;
        c.SetQuiet(false);
      }
      note_sends();
      if (!due) continue;  // busy: flush only now and then
    }
    // Idle (or due): the clock goes out.
    if (!wall || ended) c.Flush();  // live, the heartbeat tells the clock
    note_sends();
    if (ended && a.once) break;
    if (Clock::now() - last_sent >= beat) {
      c.Heartbeat();
      note_sends();
    }
  }
  if (hold.dropped() > 0)
    PrintNotice(std::to_string(hold.dropped()) + " item(s) arrived later than the tardiness allows; dropped");
  if (log && log->skipped() > 0)
    PrintNotice(std::to_string(log->skipped()) + " update(s) with a value off the grid (NaN) skipped");
  return StopRequested() ? StopExitCode() : kExitOk;
}

// ---------------------------------------------------------------- ask

struct AskArgs {
  std::string root;
  std::vector<std::string> words;
  std::optional<int64_t> at;
  int64_t wait_ms = 10000;
  bool json = false;
};

int RunAsk(const AskArgs& a) {
  auto root = ParseHostPort(a.root, "HOST:PORT");
  if (!root.ok()) return UsageFail(root.status().ToString());
  if (a.words.empty()) return UsageFail("no query: count | item J | frequent PHI | quantile PHI | items | sites | stats");
  std::string line;
  if (a.at) line = "at " + std::to_string(*a.at) + " wait " + std::to_string(a.wait_ms) + " ";
  for (size_t i = 0; i < a.words.size(); ++i) {
    if (i) line += ' ';
    line += a.words[i];
  }
  if (a.json) line += " json";
  const auto timeout = std::chrono::milliseconds(a.wait_ms + 10000);
  auto client = QueryClient::Connect(*root, std::chrono::milliseconds(5000));
  if (!client.ok()) return Fail(client.status());
  auto answer = (*client)->Ask(line, timeout);
  if (!answer.ok()) return Fail(answer.status());
  if (answer->rfind("error: ", 0) == 0) {
    std::fprintf(stderr, "momenta: root %s: %s\n", root->ToString().c_str(), answer->c_str() + 7);
    return answer->find("Invalid argument: query") != std::string::npos ? kExitUsage : kExitRuntime;
  }
  if (answer->rfind("{\"error\":", 0) == 0) {
    std::printf("%s\n", answer->c_str());
    return kExitRuntime;
  }
  std::printf("%s\n", answer->c_str());
  return kExitOk;
}

}  // namespace

void RegisterNetCommands(CLI::App& app, Command* run) {
  {
    auto a = std::make_shared<RootArgs>();
    CLI::App* sub = app.add_subcommand("root", "the monitor's root: sites report to it, `momenta ask` queries it");
    sub->add_option("--listen", a->listen, "HOST:PORT to listen on (port 0: any free port)")->capture_default_str();
    sub->add_option("--eps", a->eps, "error bound the root answers within (handed to every site)")->required();
    sub->add_option("--window", a->window, "window length W in time units (or 250ms, 10s, 5m, 2h, 1d)")->required();
    sub->add_option("--tardiness", a->tardiness, "items may arrive up to T late (T < W)")->capture_default_str();
    sub->add_option("--token-file", a->token_file, "sites must present the token in this file's first line");
    sub->add_option("--port-file", a->port_file, "write the port bound to this file once listening");
    sub->add_option("--max-frame", a->max_frame, "largest frame payload accepted, bytes")->capture_default_str();
    sub->add_option("--max-connections", a->max_connections,
                    "connections of every kind; sites get what the 64 pending and 64 query ones cannot take")
        ->check(CLI::Range(size_t{130}, size_t{1} << 20))
        ->capture_default_str();
    NonNegative(sub->add_option("--handshake-timeout", a->handshake_ms,
                                "close peers silent this long after connecting, ms"))
        ->capture_default_str();
    NonNegative(sub->add_option("--idle-timeout", a->idle_ms, "close sites silent this long, ms"))
        ->capture_default_str();
    sub->footer(
        "Example:\n"
        "  momenta root --listen 127.0.0.1:7070 --eps 0.01 --window 1m\n"
        "At most 64 connections before their handshake and 64 query connections (a query line must\n"
        "end within 2 s); the rest of 512 are for sites. Site names outside 1-64 letters, digits, '.',\n"
        "'_', '-' are refused at the handshake. The root raises its open-file limit to fit\n"
        "--max-connections when the hard limit allows, and says so when it does not.\n"
        "Stops within a second on Ctrl-C (exit 130) or SIGTERM (exit 143). Keeps nothing on disk:\n"
        "restarted, it gets every site's state back as the sites reconnect.");
    sub->callback([a, run] { *run = [a] { return RunRoot(*a); }; });
  }
  {
    auto a = std::make_shared<SiteArgs>();
    CLI::App* sub = app.add_subcommand(
        "site", "a monitored site: runs the protocol over an update log or a 'TIMESTAMP ITEM' stream, reports to a root");
    sub->add_option("--root", a->root, "the root's HOST:PORT")->required();
    sub->add_option("--id", a->id, "this site's name: 1-64 letters, digits, '.', '_' or '-' (the root refuses others)")
        ->required();
    sub->add_option("--log", a->log, "array file (.npy): tail its update log (times in ms)");
    sub->add_option("--sidecar", a->sidecar, "folder of the --log array's sidecar (default: PATH.momenta, or under $MOMENTA_SIDECAR_DIR)");
    sub->add_option("--input", a->input,
                    "text file of 'TIMESTAMP ITEM' lines ('TIMESTAMP' alone: the clock moves on), '-' for stdin");
    sub->add_option("--item", a->item, "the item: index, index/G (regions of G elements) or value/G")
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
        "Reconnects with backoff when the root goes away (attempts at most 5/8 of a heartbeat\n"
        "apart, and at most 2.5 s), and then resends its whole state.\n"
        "Reports time t only once nothing stamped <= t can still arrive: its data clock has passed\n"
        "t + tardiness, or the input ended (a followed log: read to its end); later items are dropped.\n"
        "Stops within a second on Ctrl-C (exit 130) or SIGTERM (exit 143), also while it connects.");
    sub->callback([a, run] { *run = [a] { return RunSite(*a); }; });
  }
  {
    auto a = std::make_shared<AskArgs>();
    CLI::App* sub = app.add_subcommand("ask", "ask a root: count, item J, frequent PHI, quantile PHI, items, sites, stats");
    sub->add_option("address", a->root, "the root's HOST:PORT")->required();
    sub->add_option("query", a->words, "count | item J | frequent PHI | quantile PHI | items | sites | stats")
        ->required();
    Integer64(sub->add_option("--at", a->at,
                              "wait until every live site has reported time T (sites report only times nothing "
                              "stamped at or before can still change), then answer: the same answer whenever asked"));
    NonNegative(sub->add_option("--wait", a->wait_ms, "with --at: give up after this many ms"))->capture_default_str();
    sub->add_flag("--json", a->json, "answer as one JSON object");
    sub->footer(
        "Examples:\n"
        "  momenta ask 127.0.0.1:7070 frequent 0.05\n"
        "  momenta ask 127.0.0.1:7070 count --at 120000 --json\n"
        "The root speaks lines, so 'echo \"frequent 0.05\" | nc -q1 127.0.0.1 7070' works too.");
    sub->callback([a, run] { *run = [a] { return RunAsk(*a); }; });
  }
}

}  // namespace momenta::cli
