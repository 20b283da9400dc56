#include "tools/cli_common.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdio>
#include <iostream>

namespace momenta::cli {

void AddCommonOptions(CLI::App* sub, CommonOptions* opts, bool with_json) {
  sub->add_option("--io", opts->io, "I/O backend: auto (io_uring when the kernel allows), uring, mmap, pread")
      ->check(CLI::IsMember({"auto", "uring", "mmap", "pread"}))
      ->capture_default_str();
  if (with_json) sub->add_flag("--json", opts->json, "print data as JSON on stdout");
  sub->add_option("--sidecar", opts->sidecar,
                  "folder of the array's buffer and log (default: PATH.momenta beside it, or under "
                  "$MOMENTA_SIDECAR_DIR)");
}

int Fail(const Status& status) {
  std::fprintf(stderr, "momenta: %s\n", status.ToString().c_str());
  return kExitRuntime;
}

int UsageFail(std::string_view message) {
  std::fprintf(stderr, "momenta: %.*s\nRun with --help for more information.\n",
               static_cast<int>(message.size()), message.data());
  return kExitUsage;
}

int FailParse(const Status& status) {
  if (status.code() == Status::Code::kInvalidArgument) return UsageFail(status.ToString());
  return Fail(status);
}

namespace {

Result<uint64_t> ParseUnsigned(std::string_view text, std::string_view what) {
  uint64_t v = 0;
  auto res = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || res.ec != std::errc() || res.ptr != text.data() + text.size())
    return Status::InvalidArgument(what, "'" + std::string(text) + "' is not a non-negative integer");
  return v;
}

Result<int64_t> ParseSigned(std::string_view text, std::string_view what) {
  int64_t v = 0;
  auto res = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || res.ec != std::errc() || res.ptr != text.data() + text.size())
    return Status::InvalidArgument(what, "'" + std::string(text) + "' is not an integer");
  return v;
}

constexpr uint64_t kCountLimit = uint64_t{1} << 63;

Status TooLarge(std::string_view text) {
  return Status::InvalidArgument("count", "'" + std::string(text) + "' is larger than 2^63");
}

}  // namespace

Result<uint64_t> ParseCount(std::string_view text) {
  uint64_t product = 1;
  size_t start = 0;
  while (true) {
    size_t star = text.find('*', start);
    std::string_view term = text.substr(start, star == std::string_view::npos ? text.npos : star - start);
    uint64_t value;
    if (size_t caret = term.find('^'); caret != std::string_view::npos) {
      auto base = ParseUnsigned(term.substr(0, caret), "count");
      auto exp = ParseUnsigned(term.substr(caret + 1), "count");
      if (!base.ok()) return base.status();
      if (!exp.ok()) return exp.status();
      value = 1;
      for (uint64_t k = 0; k < *exp && value != 0; ++k)
        if (__builtin_mul_overflow(value, *base, &value) || value > kCountLimit) return TooLarge(text);
    } else {
      auto v = ParseUnsigned(term, "count");
      if (!v.ok()) return v.status();
      value = *v;
    }
    if (__builtin_mul_overflow(product, value, &product) || product > kCountLimit) return TooLarge(text);
    if (star == std::string_view::npos) break;
    start = star + 1;
  }
  return product;
}

Result<IndexRange> ParseRange(std::string_view text, uint64_t length) {
  size_t colon = text.find(':');
  if (colon == std::string_view::npos || text.find(':', colon + 1) != std::string_view::npos)
    return Status::InvalidArgument("--range", "'" + std::string(text) + "' is not of the form P:Q");
  auto side = [&](std::string_view s, uint64_t dflt) -> Result<int64_t> {
    if (s.empty()) return static_cast<int64_t>(dflt);
    return ParseSigned(s, "--range");
  };
  auto p = side(text.substr(0, colon), 0);
  auto q = side(text.substr(colon + 1), length);
  if (!p.ok()) return p.status();
  if (!q.ok()) return q.status();
  const int64_t n = static_cast<int64_t>(length);
  int64_t b = *p < 0 ? *p + n : *p;
  int64_t e = *q < 0 ? *q + n : *q;
  if (b < 0 || e < 0 || b > n || e > n || b > e)
    return Status::OutOfRange("--range", "'" + std::string(text) +
                                             "' is not a range of the array (length " +
                                             std::to_string(length) + ")");
  return IndexRange{static_cast<uint64_t>(b), static_cast<uint64_t>(e)};
}

Result<IoOptions> MakeIoOptions(const CommonOptions& opts, bool writable) {
  auto kind = ParseIoKind(opts.io);
  if (!kind.ok()) return kind.status();
  IoOptions io;
  io.kind = *kind;
  io.writable = writable;
  return io;
}

void PrintNotice(const std::string& notice) {
  if (!notice.empty()) std::fprintf(stderr, "momenta: note: %s\n", notice.c_str());
}

Result<std::unique_ptr<ArrayFile>> OpenArray(const std::string& path, const CommonOptions& opts,
                                            bool writable) {
  auto io = MakeIoOptions(opts, writable);
  if (!io.ok()) return io.status();
  std::string notice;
  auto array = ArrayFile::Open(path, *io, &notice);
  PrintNotice(notice);
  return array;
}

std::string FormatBytes(uint64_t bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 6) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  if (u == 0) std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  else std::snprintf(buf, sizeof buf, "%.1f %s", v, kUnits[u]);
  return buf;
}

Progress::Progress(std::string label, uint64_t total_bytes)
    : label_(std::move(label)), total_(total_bytes), enabled_(isatty(STDERR_FILENO) == 1) {}

Progress::~Progress() { Finish(); }

void Progress::Update(uint64_t done_bytes) {
  if (!enabled_ || finished_) return;
  auto now = std::chrono::steady_clock::now();
  if (now - last_draw_ < std::chrono::milliseconds(200)) return;
  last_draw_ = now;
  double pct = total_ ? 100.0 * static_cast<double>(done_bytes) / static_cast<double>(total_) : 100.0;
  std::fprintf(stderr, "\r%s: %5.1f%% (%s of %s)   ", label_.c_str(), pct,
               FormatBytes(done_bytes).c_str(), FormatBytes(total_).c_str());
  std::fflush(stderr);
}

void Progress::Finish() {
  if (!enabled_ || finished_) return;
  finished_ = true;
  if (last_draw_ != std::chrono::steady_clock::time_point{}) std::fprintf(stderr, "\r\033[K");
}

}  // namespace momenta::cli
