// momenta serve: one long-lived process answering the arrays it was given
// over HTTP (tools/serve/: the routes in api.h, the HTTP side in
// http_server.h), for any language and the explorer page.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>

#include "storage/util/cancel.h"
#include "stream/net/net_socket.h"  // ParseHostPort
#include "tools/commands.h"
#include "tools/serve/api.h"
#include "tools/serve/http_server.h"
#include "tools/serve/served_arrays.h"
#include "tools/token_file.h"

namespace momenta::cli {
namespace {

struct ServeArgs {
  CommonOptions common;
  std::vector<std::string> paths;
  std::string listen = "127.0.0.1:8080";
  std::string port_file;
  int threads = 2;
  std::string token_file;
  bool writable = false;
  std::vector<std::string> rates;   // --rate [NAME=]HZ
  std::vector<std::string> starts;  // --start [NAME=]TIME
};

int RunServe(const ServeArgs& a) {
  auto hp = ParseHostPort(a.listen, "--listen");
  if (!hp.ok()) return UsageFail(hp.status().ToString());
  serve::HttpOptions http;
  http.host = hp->host;
  http.port = hp->port;
  http.port_file = a.port_file;
  http.threads = a.threads;
  if (!serve::IsLoopback(http.host) && a.token_file.empty())
    return UsageFail("serve: --listen " + a.listen +
                     " is not a loopback address: give --token-file F (clients then "
                     "send 'Authorization: Bearer TOKEN')");
  if (!a.token_file.empty()) {
    auto token = ReadToken(a.token_file);
    if (!token.ok()) return Fail(token.status());
    http.token = *token;
  }
  auto io = ParseIoKind(a.common.io, "--io");
  if (!io.ok()) return UsageFail(io.status().ToString());
  const Status values = serve::CheckTimeAxisValues(a.rates, a.starts);  // before opening: that may build buffers
  if (!values.ok()) return UsageFail(values.ToString());
  auto arrays = serve::ServedArrays::Open(a.paths, a.common.sidecar, *io);
  if (!arrays.ok()) return Fail(arrays.status());
  auto axes = serve::ResolveTimeAxes(a.rates, a.starts, (*arrays)->Names());
  if (!axes.ok()) return UsageFail(axes.status().ToString());
  (*arrays)->SetTimeAxes(*axes);
  serve::Api api(**arrays, serve::ApiOptions{a.writable});
  auto rc = serve::RunHttpServer(api, http);
  if (!rc.ok()) return Fail(rc.status());
  return *rc;
}

}  // namespace

void RegisterServeCommand(CLI::App& app, Command* run) {
  auto a = std::make_shared<ServeArgs>();
  CLI::App* sub = app.add_subcommand("serve", "answer arrays over HTTP (a JSON API and the explorer page at /)");
  sub->add_option("PATH", a->paths, "array files (.npy), or folders: every .npy in each")->required();
  sub->add_option("--listen", a->listen, "HOST:PORT to listen on (port 0: any free port)")->capture_default_str();
  sub->add_option("--port-file", a->port_file, "write the port listened on to this file once listening");
  CountIn(sub->add_option("--threads", a->threads, "threads answering requests"), 1, 256)->capture_default_str();
  sub->add_option("--token-file", a->token_file,
                  "a bearer token every request must send (required for a non-loopback --listen)");
  sub->add_option("--rate", a->rates,
                  "[NAME=]HZ: samples per second, of array NAME or of every array; with --start the explorer's "
                  "x axis shows times")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  sub->add_option("--start", a->starts,
                  "[NAME=]TIME: the time of element 0, ISO-8601 UTC (2026-01-02T03:04:05.5Z) or seconds since "
                  "the epoch; element i is at TIME + i/HZ")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  sub->add_flag("--writable", a->writable, "accept POST /api/arrays/NAME/update (updates through the log)");
  AddCommonOptions(sub, &a->common, /*with_json=*/false);
  sub->footer(
      "Example: momenta serve data/ --listen 127.0.0.1:8080\n"
      "         curl 'http://127.0.0.1:8080/api/arrays/big/stats?range=0:2^30&stat=mean&stat=std'\n"
      "Routes: /api/arrays, /api/arrays/NAME/{stats,overview,progressive,log,values} (GET),\n"
      "/api/arrays/NAME/{ranges,update} (POST); the explorer at /. docs/serve.md has them all.\n"
      "Arrays are opened once as readers: writers elsewhere keep writing and answers follow them.\n"
      "SIGINT or SIGTERM stops it (exit 130 / 143) after the answers in flight.");
  sub->callback([a, run] { *run = [a] { return RunServe(*a); }; });
}

}  // namespace momenta::cli
