// The routes of `momenta serve`: a request (method, target, body) in, a
// response out, with no socket in sight (the HTTP layer, http_server.h,
// reads and writes them; tests call Handle directly).
//
//   GET  /api/arrays                         the served arrays (name, dtype, shape, buffer)
//   GET  /api/arrays/NAME/stats?range=P:Q&stat=S...        `query --range --json`'s line
//   GET  /api/arrays/NAME/overview?range=P:Q&bins=K&stat=S...[&snap=1]
//                                            {"name":..,"range":[P,Q],"bins":[<`query --bins --json` lines>]}
//   POST /api/arrays/NAME/ranges             NDJSON `--ranges` lines in, `--ranges --json` lines out
//   GET  /api/arrays/NAME/progressive?range=P:Q&stat=S     `--progressive --json` lines, streamed
//   GET  /api/arrays/NAME/log?since=T[&until=T&from=N&limit=N]   `log --json` lines
//   GET  /api/arrays/NAME/values?range=P:Q   `get --json`'s object (at most kMaxValues)
//   POST /api/arrays/NAME/update             `update` lines, with --writable only
//   GET  /  and  /explorer/FILE              the explorer's files, compiled in
//
// Errors: {"error":"<the CLI's one-line message>"} with 400 (malformed, or a
// range outside the array), 404 (no such array or route), 405, 413 (past a
// limit), 409 (the array is locked by another writer); 500 only for a
// failure of the server's own files (I/O, corruption), never for bad input.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "storage/util/status.h"
#include "tools/serve/served_arrays.h"

namespace momenta::serve {

inline constexpr uint64_t kMaxBins = 1 << 16;            // bins per overview
inline constexpr uint64_t kMaxValues = 1 << 16;          // raw values per /values
inline constexpr uint64_t kMaxRangesPerBatch = 1 << 16;  // lines per POST .../ranges
inline constexpr uint64_t kMaxLogRecords = 1 << 16;      // records per /log

struct ApiRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // "/api/arrays?..."
  std::string body;
};

struct ApiResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  // Set for a streamed answer: called after the header went out with each
  // line to write as soon as it is known; an error after lines went out
  // ends the stream with one {"error":...} line.
  std::function<void(const std::function<void(const std::string&)>& write)> stream;
};

struct ApiOptions {
  bool writable = false;  // POST .../update allowed
};

class Api {
 public:
  Api(ServedArrays& arrays, ApiOptions options) : arrays_(arrays), options_(options) {}
  ApiResponse Handle(const ApiRequest& request);

 private:
  ServedArrays& arrays_;
  ApiOptions options_;
};

// {"error":"..."} with the status an error of this code gets.
ApiResponse ErrorResponse(const Status& status);
ApiResponse ErrorResponse(int http_status, const std::string& message);

}  // namespace momenta::serve
