// The manifest of a sharded array: a JSON file listing its shards in index
// order, each an array of its own on the worker that holds it. The one writer
// of the format: `momenta shard create` and momenta.dask.shard_create both
// write through here; momenta.dask reads it (python/momenta/_manifest.py,
// which checks every field and names the shard of anything wrong).
//
//   {"format":"momenta-sharded-array","version":1,
//    "dtype":"f8",                  every shard's dtype
//    "shape":[1000000],             the whole array's; shards split its flat (C-order) index
//    "order":2,                     every shard's buffer order J
//    "shards":[{"start":0,"stop":250000,          the shard holds [start, stop)
//               "worker":"tcp://10.0.0.5:40113",  a Dask worker: address, --name or host
//               "path":"/data/a/big.shard00000.npy",
//               "replicas":[{"worker":"...","path":"..."}]},   optional
//              ...]}
//
// Written as one line and a newline. Shards are contiguous and non-empty, from
// 0 to the shape's product; paths are absolute, as their worker sees them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "storage/npy/dtype.h"
#include "storage/util/status.h"

namespace momenta {

inline constexpr int kShardManifestVersion = 1;
inline constexpr char kShardManifestFormat[] = "momenta-sharded-array";

// One copy of a shard: the worker that holds it and its path there.
struct ShardCopy {
  std::string worker, path;
};

// A shard: [start, stop) of the whole array's flat index, and its copies (the
// primary, then the replicas).
struct ShardEntry {
  uint64_t start = 0, stop = 0;
  std::vector<ShardCopy> copies;
};

struct ShardManifest {
  DType dtype = DType::kF8;
  std::vector<uint64_t> shape;
  int order = 2;
  std::vector<ShardEntry> shards;
};

// The manifest's bytes. REQUIRES: every shard has at least one copy.
std::string EncodeShardManifest(const ShardManifest& manifest);

// Writes the manifest to `path` through a temporary file (path.partial-PID,
// created exclusively) that is synced and renamed over it. An IO error names
// the file; the temporary is removed on failure.
[[nodiscard]] Status WriteShardManifest(const std::string& path, const ShardManifest& manifest);

}  // namespace momenta
