// Planning a sharded array: which elements each shard holds, which workers
// hold its copies, and the file name of each copy. The one planner:
// `momenta shard create` and momenta.dask.shard_create both plan here, so a
// sharded array made either way is laid out the same; the manifest that
// records the plan is storage/array/shard_manifest.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "storage/array/shard_manifest.h"
#include "storage/util/status.h"

namespace momenta {

// A worker and the folder, as that worker sees it, where its shards go.
struct ShardPlace {
  std::string worker, folder;
};

// A place from its worker and folder. The folder must be absolute: the
// manifest records it as the path its worker opens, and a relative one would
// name another folder on each machine. InvalidArgument naming `what` ("<what>:
// WORKER=FOLDER: the folder is relative; ..."); the folder is kept normalized.
Result<ShardPlace> MakeShardPlace(const std::string& worker, const std::string& folder, const std::string& what);

// "WORKER=FOLDER": the worker is everything before the last '=' (an address
// such as tcp://10.0.0.5:40113, or a worker's name), the folder after it;
// checked as MakeShardPlace.
Result<ShardPlace> ParseShardPlace(const std::string& text, const std::string& what);

// "<stem>.shardNNNNN.npy" for the primary (replica 0) of shard k,
// "<stem>.shardNNNNN.rR.npy" for replica R.
std::string ShardFileName(std::string_view stem, size_t k, int replica);

// The shards of an array of n elements in pieces of shard_length (the last one
// shorter): shard k's primary on places[k mod P], its replicas on the next
// `replicas` places round the list, each at FOLDER/ShardFileName(stem of
// manifest_path, k, r). REQUIRES: n > 0, shard_length > 0, !places.empty(),
// 0 <= replicas < places.size().
std::vector<ShardEntry> PlanShards(uint64_t n, uint64_t shard_length, std::span<const ShardPlace> places, int replicas,
                                   const std::string& manifest_path);

}  // namespace momenta
