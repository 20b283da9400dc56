#include "tools/serve/update_route.h"

#include "storage/array/array_file.h"
#include "storage/util/json_writer.h"
#include "tools/update_parse.h"

namespace momenta::serve {

ApiResponse Update(Lease& lease, const Target& t, const std::string& body) {
  (void)t;
  uint64_t lines = 0;
  for (char c : body) lines += c == '\n';
  if (lines > kMaxUpdatesPerRequest)
    return ErrorResponse(413, "update: more than " + std::to_string(kMaxUpdatesPerRequest) + " lines in one request");
  BufferedArray& reader = lease.array();
  auto updates =
      cli::ParseUpdates(body, /*binary=*/false, "body", reader.array().dtype(), reader.length(), kLogTimeNow);
  if (!updates.ok()) return ErrorResponse(updates.status());
  BufferedArrayOptions options;
  options.io.writable = true;
  options.sidecar = lease.sidecar();
  auto writer = BufferedArray::Open(lease.path(), options);
  if (!writer.ok()) return ErrorResponse(writer.status());
  size_t applied = 0;
  const Status s = (*writer)->Apply(*updates, &applied);
  const Status closed = (*writer)->Close();
  if (!s.ok()) return ErrorResponse(s);
  if (!closed.ok()) return ErrorResponse(closed);
  JsonWriter j;
  j.BeginObject().Key("name").String(lease.name()).Key("applied").UInt(applied);
  j.Key("sequence").UInt((*writer)->applied_sequence()).EndObject();
  ApiResponse r;
  r.body = j.str() + "\n";
  return r;
}

}  // namespace momenta::serve
