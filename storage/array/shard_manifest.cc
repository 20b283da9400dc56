#include "storage/array/shard_manifest.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "storage/util/json_writer.h"

namespace momenta {
namespace {

void EncodeCopy(JsonWriter& j, const ShardCopy& c) { j.Key("worker").String(c.worker).Key("path").String(c.path); }

}  // namespace

std::string EncodeShardManifest(const ShardManifest& m) {
  JsonWriter j;
  j.BeginObject().Key("format").String(kShardManifestFormat).Key("version").Int(kShardManifestVersion);
  j.Key("dtype").String(DTypeName(m.dtype)).Key("shape").BeginArray();
  for (uint64_t d : m.shape) j.UInt(d);
  j.EndArray().Key("order").Int(m.order).Key("shards").BeginArray();
  for (const ShardEntry& s : m.shards) {
    j.BeginObject().Key("start").UInt(s.start).Key("stop").UInt(s.stop);
    EncodeCopy(j, s.copies[0]);
    if (s.copies.size() > 1) {
      j.Key("replicas").BeginArray();
      for (size_t r = 1; r < s.copies.size(); ++r) {
        j.BeginObject();
        EncodeCopy(j, s.copies[r]);
        j.EndObject();
      }
      j.EndArray();
    }
    j.EndObject();
  }
  j.EndArray().EndObject();
  return j.str() + "\n";
}

Status WriteShardManifest(const std::string& path, const ShardManifest& manifest) {
  const std::string text = EncodeShardManifest(manifest);
  const std::string tmp = path + ".partial-" + std::to_string(::getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wx");
  if (!f) return Status::FromErrno(tmp, errno);
  const bool ok =
      std::fwrite(text.data(), 1, text.size(), f) == text.size() && std::fflush(f) == 0 && ::fsync(::fileno(f)) == 0;
  const int err = errno;
  std::fclose(f);
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = ok ? errno : err;
    ::unlink(tmp.c_str());
    return Status::FromErrno(path, e);
  }
  return Status::OK();
}

}  // namespace momenta
