#include "tools/serve/api.h"

#include <limits>
#include <string_view>

#include "storage/array/array_file.h"
#include "storage/array/sidecar.h"
#include "storage/log/log_codec.h"
#include "storage/log/log_reader.h"
#include "storage/util/json_writer.h"
#include "tools/cli_common.h"
#include "tools/cli_parse.h"
#include "tools/log_json.h"
#include "tools/query_answers.h"
#include "tools/query_batch.h"
#include "tools/query_progressive.h"
#include "tools/serve/array_listing.h"
#include "tools/serve/explorer_files.h"
#include "tools/serve/params.h"
#include "tools/serve/update_route.h"

namespace momenta::serve {
namespace {

using Code = Status::Code;

ApiResponse Json(std::string body, int status = 200) {
  ApiResponse r;
  r.status = status;
  r.body = std::move(body);
  r.body += '\n';
  return r;
}

ApiResponse TooLarge(const std::string& what, uint64_t most) {
  return ErrorResponse(413, what + ": more than " + std::to_string(most) + " in one request");
}

// range=P:Q as --range takes it (absent: the whole array).
Result<IndexRange> RangeParam(const Target& t, uint64_t length) {
  const std::string* text = t.Get("range");
  return cli::ParseRange(text ? *text : ":", length, "range");
}

ApiResponse Stats(Lease& lease, const Target& t) {
  auto req = GetStatRequest(t, /*stats_required=*/true);
  if (!req.ok()) return ErrorResponse(req.status());
  auto range = RangeParam(t, lease.array().length());
  if (!range.ok()) return ErrorResponse(range.status());
  cli::Stopwatch timer;
  QueryCost cost;
  auto answers = cli::AnswerRange(lease.array(), req->stats, req->params, *range, &cost);
  if (!answers.ok()) return ErrorResponse(answers.status());
  return Json(cli::RangeAnswerJson(lease.array(), lease.name(), *range, *answers, timer.ElapsedMicros(), cost));
}

ApiResponse Overview(Lease& lease, const Target& t) {
  auto req = GetStatRequest(t, /*stats_required=*/true);
  if (!req.ok()) return ErrorResponse(req.status());
  auto range = RangeParam(t, lease.array().length());
  if (!range.ok()) return ErrorResponse(range.status());
  auto bins = GetCount(t, "bins", 0, std::numeric_limits<int64_t>::max(), 0);
  if (!bins.ok()) return ErrorResponse(bins.status());
  auto bin_size = GetCount(t, "bin_size", 0, std::numeric_limits<int64_t>::max(), 0);
  if (!bin_size.ok()) return ErrorResponse(bin_size.status());
  auto snap = GetFlag(t, "snap");
  if (!snap.ok()) return ErrorResponse(snap.status());
  if (*bins == 0 && *bin_size == 0) return ErrorResponse(400, "overview: give bins=K (how many) or bin_size=N");
  if (*bins > 0 && *bin_size > 0) return ErrorResponse(400, "overview: give bins=K or bin_size=N, not both");
  if (const Status usage = cli::CheckBins(*range, *bins, *bin_size); !usage.ok()) return ErrorResponse(usage);
  const uint64_t count = *bin_size > 0 ? (range->size() + *bin_size - 1) / *bin_size : *bins;
  if (count > kMaxBins) return TooLarge("bins", kMaxBins);
  const cli::QuerySpec spec{lease.name(), req->stats, req->params, /*json=*/true};
  auto lines = cli::AnswerBinLines(lease.array(), spec, *range, *bins, *bin_size, *snap);
  if (!lines.ok()) return ErrorResponse(lines.status());
  std::string body = "{\"name\":" + JsonWriter().String(lease.name()).str() + ",\"range\":" + cli::RangeJson(*range);
  if (*snap) body += ",\"leaf\":" + std::to_string(lines->leaf);
  body += ",\"bins\":[";
  for (size_t k = 0; k < lines->lines.size(); ++k) (body += k ? "," : "") += lines->lines[k];
  return Json(body + "]}");
}

ApiResponse Ranges(Lease& lease, const Target& t, const std::string& body) {
  auto req = GetStatRequest(t, /*stats_required=*/false);
  if (!req.ok()) return ErrorResponse(req.status());
  uint64_t lines = 0;
  for (char c : body) lines += c == '\n';
  if (lines > kMaxRangesPerBatch) return TooLarge("ranges", kMaxRangesPerBatch);
  const cli::QuerySpec spec{lease.name(), req->stats, req->params, /*json=*/true};
  ApiResponse r;
  r.content_type = "application/x-ndjson";
  cli::BatchTotals totals;
  const Status s = cli::AnswerRangeText(lease.array(), spec, body, "body", &r.body, &totals);
  if (!s.ok()) return ErrorResponse(s);
  return r;
}

ApiResponse Progressive(std::shared_ptr<Lease> lease, const Target& t) {
  auto req = GetStatRequest(t, /*stats_required=*/true);
  if (!req.ok()) return ErrorResponse(req.status());
  if (req->stats.size() != 1 || !cli::ServedProgressively(req->stats[0]))
    return ErrorResponse(400, std::string("progressive: answers one stat at a time (") + cli::kProgressiveStats + ")");
  auto range = RangeParam(t, lease->array().length());
  if (!range.ok()) return ErrorResponse(range.status());
  auto approx = GetFlag(t, "approx");
  if (!approx.ok()) return ErrorResponse(approx.status());
  ApiResponse r;
  r.content_type = "application/x-ndjson";
  const Stat stat = req->stats[0];
  r.stream = [lease, stat, range = *range, approx = *approx](const std::function<void(const std::string&)>& write) {
    const Status s = cli::StreamProgressive(lease->array(), lease->name(), stat, range, approx, /*json=*/true, write);
    if (!s.ok()) write(JsonWriter().BeginObject().Key("error").String(s.ToString()).EndObject().str() + "\n");
  };
  return r;
}

ApiResponse Log(Lease& lease, const Target& t) {
  auto since = cli::ParseTimeMs(t.Get("since") ? *t.Get("since") : "", std::numeric_limits<int64_t>::min(), "since");
  if (!since.ok()) return ErrorResponse(since.status());
  auto until = cli::ParseTimeMs(t.Get("until") ? *t.Get("until") : "", std::numeric_limits<int64_t>::max(), "until");
  if (!until.ok()) return ErrorResponse(until.status());
  auto from = GetCount(t, "from", 0, std::numeric_limits<int64_t>::max(), 0);
  if (!from.ok()) return ErrorResponse(from.status());
  auto limit = GetCount(t, "limit", 1, kMaxLogRecords, kMaxLogRecords);
  if (!limit.ok()) return ErrorResponse(limit.status());
  LogReaderOptions options;
  options.from_sequence = *from;
  options.since = *since;
  options.until = *until;
  options.out_of_order = true;
  ApiResponse r;
  r.content_type = "application/x-ndjson";
  auto reader = LogReader::Open(SidecarPath(lease.path(), lease.sidecar()) + "/log", options);
  if (!reader.ok()) return reader.status().code() == Code::kNotFound ? r : ErrorResponse(reader.status());
  const DType dtype = lease.array().array().dtype();
  LogRecord rec;
  for (uint64_t n = 0; n < *limit; ++n) {
    auto more = (*reader)->Next(&rec);
    if (!more.ok()) return ErrorResponse(more.status());
    if (!*more) break;
    r.body += cli::LogRecordJson(dtype, rec) + "\n";
  }
  return r;
}

ApiResponse Values(Lease& lease, const Target& t) {
  auto range = RangeParam(t, lease.array().length());
  if (!range.ok()) return ErrorResponse(range.status());
  if (range->size() > kMaxValues) return TooLarge("values", kMaxValues);
  std::vector<Value> values;
  if (Status s = lease.array().array().ReadValues(range->begin, range->size(), &values); !s.ok())
    return ErrorResponse(s);
  std::string out = "{\"path\":" + JsonWriter().String(lease.name()).str() +
                    ",\"index\":" + std::to_string(range->begin) + ",\"values\":[";
  for (size_t k = 0; k < values.size(); ++k) (out += k ? "," : "") += JsonWriter().ElementValue(values[k]).str();
  return Json(out + "]}");
}

ApiResponse StaticFile(const std::string& name) {
  for (const EmbeddedFile& f : ExplorerFiles())
    if (name == f.name) {
      ApiResponse r;
      r.content_type = f.content_type;
      r.body.assign(reinterpret_cast<const char*>(f.data), f.size);
      return r;
    }
  return ErrorResponse(404, "no such file: " + name);
}

}  // namespace

ApiResponse ErrorResponse(int http_status, const std::string& message) {
  return Json(JsonWriter().BeginObject().Key("error").String(message).EndObject().str(), http_status);
}

ApiResponse ErrorResponse(const Status& status) {
  int http = 500;
  switch (status.code()) {
    case Code::kInvalidArgument:
    case Code::kOutOfRange:
      http = 400;
      break;
    case Code::kNotFound:
      http = 404;
      break;
    case Code::kNotSupported:
      http = 400;
      break;
    case Code::kInterrupted:
      http = 503;
      break;
    case Code::kIOError:
      http = status.message().find("locked by another writer") != std::string::npos ? 409 : 500;
      break;
    default:
      break;
  }
  return ErrorResponse(http, status.ToString());
}

ApiResponse Api::Handle(const ApiRequest& request) {
  bool too_large = false;
  auto target = ParseTarget(request.target, &too_large);
  if (!target.ok()) return too_large ? ErrorResponse(413, target.status().ToString()) : ErrorResponse(target.status());
  if (target->All("stat").size() > kMaxStatsPerRequest) return TooLarge("stat", kMaxStatsPerRequest);
  const std::vector<std::string>& seg = target->segments;
  const bool get = request.method == "GET";
  if (seg.empty()) return get ? StaticFile("index.html") : ErrorResponse(405, "/: GET only");
  if (seg[0] == "explorer" && seg.size() == 2 && get) return StaticFile(seg[1]);
  if (seg[0] != "api" || seg.size() < 2 || seg[1] != "arrays") return ErrorResponse(404, "no such route");
  if (seg.size() == 2) return get ? Json(ListArrays(arrays_)) : ErrorResponse(405, "/api/arrays: GET only");
  if (seg.size() != 4)
    return ErrorResponse(404, "no such route: /api/arrays/NAME/{stats,overview,ranges,progressive,log,values,update}");
  auto leased = arrays_.Acquire(seg[2]);
  if (!leased.ok()) return ErrorResponse(leased.status());
  auto lease = std::make_shared<Lease>(std::move(leased).value());
  const std::string& what = seg[3];
  const bool post = request.method == "POST";
  if (what == "ranges") return post ? Ranges(*lease, *target, request.body) : ErrorResponse(405, "ranges: POST only");
  if (what == "update") {
    if (!post) return ErrorResponse(405, "update: POST only");
    if (!options_.writable) return ErrorResponse(403, "update: the server is read-only (start it with --writable)");
    return Update(*lease, *target, request.body);
  }
  if (!get) return ErrorResponse(405, what + ": GET only");
  if (what == "stats") return Stats(*lease, *target);
  if (what == "overview") return Overview(*lease, *target);
  if (what == "progressive") return Progressive(lease, *target);
  if (what == "log") return Log(*lease, *target);
  if (what == "values") return Values(*lease, *target);
  return ErrorResponse(404, "no such route: " + what);
}

}  // namespace momenta::serve
