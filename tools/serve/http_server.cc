#include "tools/serve/http_server.h"

#include <sys/resource.h>
#include <zlib.h>

#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

namespace momenta::serve {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

constexpr size_t kMaxHeader = 16 << 10;
constexpr size_t kGzipAbove = 1024;  // smaller bodies are sent as they are

struct Shared {
  Api& api;
  const HttpOptions& options;
  std::atomic<size_t> connections{0};
};

// `body` as a gzip member (zlib's deflate with the gzip wrapper); nullopt if zlib fails.
std::optional<std::string> Gzip(const std::string& body) {
  z_stream z{};
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return std::nullopt;
  std::string out(deflateBound(&z, body.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(body.data()));
  z.avail_in = static_cast<uInt>(body.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) return std::nullopt;
  return out;
}

bool AcceptsGzip(const http::request<http::string_body>& req) {
  const auto it = req.find(http::field::accept_encoding);
  return it != req.end() && it->value().find("gzip") != beast::string_view::npos;
}

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, Shared& shared) : stream_(std::move(socket)), shared_(shared) { ++shared_.connections; }
  ~Session() { --shared_.connections; }

  void Start() {
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->Read(); });
  }

 private:
  void Read() {
    parser_.emplace();
    parser_->header_limit(kMaxHeader);
    parser_->body_limit(shared_.options.max_body);
    stream_.expires_after(shared_.options.request_timeout);  // once: bytes trickling in do not extend it
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, size_t) { self->OnRead(ec); });
  }

  void OnRead(beast::error_code ec) {
    if (ec == http::error::body_limit || ec == http::error::header_limit || ec == http::error::buffer_overflow) {
      const char* what = ec == http::error::body_limit ? "request body" : "request header";
      const size_t most = ec == http::error::body_limit ? shared_.options.max_body : kMaxHeader;
      ApiResponse r = ErrorResponse(413, std::string(what) + ": larger than " + std::to_string(most) + " bytes");
      Send(std::move(r), 11, /*keep_alive=*/false, /*gzip=*/false);
      return;
    }
    if (ec) return Close();  // end of stream, timeout, reset: nothing to answer
    http::request<http::string_body> req = parser_->release();
    const bool keep_alive = req.keep_alive();
    const unsigned version = req.version();  // answered in kind: an HTTP/1.0 client (ab) gets "Connection: keep-alive"
    if (!shared_.options.token.empty()) {
      const auto it = req.find(http::field::authorization);
      if (it == req.end() || it->value() != "Bearer " + shared_.options.token)
        return Send(ErrorResponse(401, "this server asks for a bearer token (Authorization: Bearer TOKEN)"), version,
                    keep_alive, false);
    }
    ApiRequest request{std::string(req.method_string()), std::string(req.target()), std::move(req.body())};
    ApiResponse response = shared_.api.Handle(request);
    if (response.stream) return Stream(response, version, keep_alive);
    Send(std::move(response), version, keep_alive, AcceptsGzip(req));
  }

  void Send(ApiResponse r, unsigned version, bool keep_alive, bool gzip) {
    auto res = std::make_shared<http::response<http::string_body>>(static_cast<http::status>(r.status), version);
    res->set(http::field::server, "momenta");
    res->set(http::field::content_type, r.content_type);
    if (gzip && r.body.size() > kGzipAbove)
      if (auto zipped = Gzip(r.body)) {
        r.body = std::move(*zipped);
        res->set(http::field::content_encoding, "gzip");
      }
    res->body() = std::move(r.body);
    res->keep_alive(keep_alive);
    res->prepare_payload();
    stream_.expires_after(shared_.options.request_timeout);
    http::async_write(stream_, *res, [self = shared_from_this(), res](beast::error_code ec, size_t) {
      if (ec || !res->keep_alive()) return self->Close();
      self->Read();
    });
  }

  // A streamed answer: chunked, each line written as it is known. The
  // writes are blocking: the lines are few and short (a progressive
  // answer's bounds), so the socket's buffer takes them.
  void Stream(const ApiResponse& r, unsigned version, bool keep_alive) {
    const bool chunked = version >= 11;  // an HTTP/1.0 client gets the lines raw and reads to the close
    http::response<http::empty_body> res{static_cast<http::status>(r.status), version};
    res.set(http::field::server, "momenta");
    res.set(http::field::content_type, r.content_type);
    res.chunked(chunked);
    res.keep_alive(keep_alive && chunked);
    http::response_serializer<http::empty_body> sr{res};
    beast::error_code ec;
    stream_.expires_never();
    http::write_header(stream_.socket(), sr, ec);
    r.stream([&](const std::string& line) {
      if (ec) return;
      if (chunked)
        net::write(stream_.socket(), http::make_chunk(net::buffer(line)), ec);
      else
        net::write(stream_.socket(), net::buffer(line), ec);
    });
    if (!ec && chunked) net::write(stream_.socket(), http::make_chunk_last(), ec);
    if (ec || !res.keep_alive()) return Close();
    Read();
  }

  void Close() {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    stream_.socket().close(ec);
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  Shared& shared_;
};

// Accepts connections until the acceptor closes.
void Accept(tcp::acceptor& acceptor, net::io_context& ioc, Shared& shared) {
  acceptor.async_accept(net::make_strand(ioc), [&acceptor, &ioc, &shared](beast::error_code ec, tcp::socket socket) {
    if (ec == net::error::operation_aborted || !acceptor.is_open()) return;
    if (!ec) {
      if (shared.connections.load() >= shared.options.max_connections) {
        static const std::string busy =
            "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nConnection: close\r\n"
            "Content-Length: 49\r\n\r\n{\"error\":\"too many connections; try again later\"}";
        beast::error_code ignored;
        socket.non_blocking(true, ignored);
        socket.write_some(net::buffer(busy), ignored);
        socket.close(ignored);
      } else {
        std::make_shared<Session>(std::move(socket), shared)->Start();
      }
    }
    Accept(acceptor, ioc, shared);
  });
}

Status WritePortFile(const std::string& path, uint16_t port) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << port << "\n";
    if (!out) return Status::IOError(path, "cannot write the port file");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return Status::FromErrno(path, ec.value());
  return Status::OK();
}

// Connections are file descriptors: the soft limit raised to the hard one.
void RaiseFileLimit() {
  struct rlimit rl;
  if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &rl);
  }
}

}  // namespace

bool IsLoopback(const std::string& host) {
  if (host == "localhost") return true;
  beast::error_code ec;
  const auto addr = net::ip::make_address(host, ec);
  return !ec && addr.is_loopback();
}

Result<int> RunHttpServer(Api& api, const HttpOptions& options) {
  RaiseFileLimit();
  net::io_context ioc(options.threads);
  beast::error_code ec;
  const auto addr = net::ip::make_address(options.host == "localhost" ? "127.0.0.1" : options.host, ec);
  if (ec) return Status::InvalidArgument("--listen", "'" + options.host + "' is not an IP address");
  const std::string where = options.host + ":" + std::to_string(options.port);
  tcp::acceptor acceptor(ioc);
  const tcp::endpoint endpoint(addr, options.port);
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) return Status::IOError(where, ec.message());
  const uint16_t port = acceptor.local_endpoint().port();
  if (!options.port_file.empty()) MOMENTA_RETURN_IF_ERROR(WritePortFile(options.port_file, port));
  std::fprintf(stderr, "momenta: serving on http://%s:%u\n", options.host.c_str(), port);
  Shared shared{api, options};
  Accept(acceptor, ioc, shared);
  // SIGINT/SIGTERM: stop accepting, let the answers in flight finish, then stop.
  int signal_number = 0;
  net::signal_set signals(ioc, SIGINT, SIGTERM);
  net::steady_timer grace(ioc);
  signals.async_wait([&](beast::error_code e, int sig) {
    if (e) return;
    signal_number = sig;
    beast::error_code ignored;
    acceptor.close(ignored);
    grace.expires_after(std::chrono::milliseconds(100));
    grace.async_wait([&](beast::error_code) { ioc.stop(); });
  });
  std::vector<std::thread> threads;
  for (int k = 1; k < options.threads; ++k) threads.emplace_back([&ioc] { ioc.run(); });
  ioc.run();
  for (auto& t : threads) t.join();
  return 128 + (signal_number ? signal_number : SIGTERM);
}

}  // namespace momenta::serve
