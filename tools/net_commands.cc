// momenta root / ask: the distributed monitor's root over TCP, and queries to it
// (momenta site is site_command.cc).
//   root  listens for sites and queries, owns the parameters (stream/net/root_server.h)
//   ask   one query over the root's line protocol (stream/net/root_query.h)
#include <fcntl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <memory>
#include <optional>

#include "storage/io/posix_file.h"
#include "storage/util/cancel.h"
#include "storage/util/stop_token.h"
#include "stream/net/query_client.h"
#include "stream/net/root_server.h"
#include "tools/cli_common.h"
#include "tools/cli_parse.h"
#include "tools/cli_signals.h"
#include "tools/commands.h"
#include "tools/token_file.h"

namespace momenta::cli {
namespace {

std::atomic<RootServer*> g_root{nullptr};

Status WritePortFile(const std::string& path, uint16_t port) {
  return ReplaceFile(path, path + ".tmp", std::to_string(port) + "\n", /*sync=*/false).status();
}

// ---------------------------------------------------------------- root

struct RootArgs {
  std::string listen = "127.0.0.1:7070", window, tardiness = "0", token_file, port_file, forget_after = "0";
  size_t max_held = size_t{1} << 16;
  double eps = 0;
  uint32_t max_frame = kDefaultMaxPayload;
  size_t max_connections = 512;
  int64_t handshake_ms = 5000, idle_ms = 30000;
};

int RunRoot(const RootArgs& a) {
  // The handler stops the server's loop (Stop is async-signal-safe).
  InstallCancelHandlers([] {
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
  o.max_connections_word = "--max-connections";
  auto forget_after = ParseDuration(a.forget_after, "--forget-after");
  if (!forget_after.ok()) return UsageFail(forget_after.status().ToString());
  o.forget_after = std::chrono::milliseconds(*forget_after);
  o.max_held = a.max_held;
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
  if (CancelRequested()) (*server)->Stop();  // a signal before g_root was set
  Status st = (*server)->Run();
  g_root = nullptr;
  if (!st.ok()) return Fail(st);
  std::fprintf(stderr, "momenta root: stopped\n");
  return CancelRequested() ? StopExitCode() : kExitOk;
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
  if (a.words.empty())
    return UsageFail(
        "no query: count | item J|NAME | frequent PHI | quantile PHI | items | sites | stats | forget SITE");
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
    FiniteNumber(sub->add_option("--eps", a->eps, "error bound the root answers within (handed to every site)"))
        ->required();
    sub->add_option("--window", a->window,
                    "window length W in time units (or 250ms, 10s, 5m, 2h, 1d: the units then read as milliseconds)")
        ->required();
    sub->add_option("--tardiness", a->tardiness, "items may arrive up to T late (T < W)")->capture_default_str();
    sub->add_option("--token-file", a->token_file, "sites must present the token in this file's first line");
    sub->add_option("--port-file", a->port_file, "write the port bound to this file once listening");
    NonNegative(sub->add_option("--max-frame", a->max_frame, "largest frame payload accepted, bytes (e.g. 2^20)"),
                UINT32_MAX)
        ->capture_default_str();
    CountIn(sub->add_option("--max-connections", a->max_connections,
                            "connections of every kind; sites get what the 64 pending and 64 query ones cannot take"),
            130, uint64_t{1} << 20)
        ->capture_default_str();
    NonNegative(
        sub->add_option("--handshake-timeout", a->handshake_ms, "close peers silent this long after connecting, ms"))
        ->capture_default_str();
    NonNegative(sub->add_option("--idle-timeout", a->idle_ms, "close sites silent this long, ms"))
        ->capture_default_str();
    sub->add_option("--forget-after", a->forget_after,
                    "forget a site stale this long (e.g. 1h; 0: never; `ask ROOT forget SITE` at once)")
        ->capture_default_str();
    sub->add_option("--max-held", a->max_held,
                    "messages a site may run ahead of the others' time before it is left out as 'ahead' "
                    "(~65 bytes each)")
        ->check(CLI::Range(size_t{1}, size_t{1} << 30))
        ->capture_default_str();
    sub->footer(
        "Example:\n"
        "  momenta root --listen 127.0.0.1:7070 --eps 0.01 --window 1m\n"
        "At most 64 connections before their handshake and 64 query connections (a query line must\n"
        "end within 2 s); the rest of 512 are for sites. Site names outside 1-64 letters, digits, '.',\n"
        "'_', '-' are refused at the handshake. The root raises its open-file limit to fit\n"
        "--max-connections when the hard limit allows, and says so when it does not.\n"
        "Every answer holds for one time, as_of: the smallest clock of the live sites. A site's reports\n"
        "stamped later are held until the others reach them (at most --max-held messages a site; past\n"
        "that it is left out as 'ahead' until they do). A site whose input ended is 'finished': the\n"
        "root keeps its final state and counts it until its items leave the window.\n"
        "Stops within a second on Ctrl-C (exit 130) or SIGTERM (exit 143). Keeps nothing on disk:\n"
        "restarted, it gets every site's state back as the sites reconnect.");
    sub->callback([a, run] { *run = [a] { return RunRoot(*a); }; });
  }
  RegisterSiteCommand(app, run);  // between root and ask in --help
  {
    auto a = std::make_shared<AskArgs>();
    CLI::App* sub = app.add_subcommand(
        "ask", "ask a root: count, item J, frequent PHI, quantile PHI, items, sites, stats; forget SITE");
    sub->add_option("address", a->root, "the root's HOST:PORT")->required();
    sub->add_option(
           "query", a->words,
           "count | item J|NAME | frequent PHI | quantile PHI | items | sites | stats | forget SITE (drop a stale "
           "or finished site)")
        ->required();
    Integer64(sub->add_option("--at", a->at,
                              "wait until every live site has reported time T (sites report only times nothing "
                              "stamped at or before can still change; finished and stale sites are not waited "
                              "for), then answer: the same answer whenever asked"));
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
