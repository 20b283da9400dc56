#include "buffers/shard_plan.h"

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <filesystem>

namespace momenta {

Result<ShardPlace> MakeShardPlace(const std::string& worker, const std::string& folder, const std::string& what) {
  const std::filesystem::path path(folder);
  if (!path.is_absolute())
    return Status::InvalidArgument(what, worker + "=" + folder +
                                             ": the folder is relative; give its absolute path on that worker (a "
                                             "relative one names another folder on each machine)");
  std::string normal = path.lexically_normal().string();
  if (normal.size() > 1 && normal.back() == '/') normal.pop_back();
  return ShardPlace{worker, normal};
}

Result<ShardPlace> ParseShardPlace(const std::string& text, const std::string& what) {
  const size_t eq = text.rfind('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    return Status::InvalidArgument(what, "'" + text + "' is not WORKER=FOLDER");
  return MakeShardPlace(text.substr(0, eq), text.substr(eq + 1), what);
}

std::string ShardFileName(std::string_view stem, size_t k, int replica) {
  char name[64];
  if (replica == 0)
    std::snprintf(name, sizeof name, ".shard%05zu.npy", k);
  else
    std::snprintf(name, sizeof name, ".shard%05zu.r%d.npy", k, replica);
  return std::string(stem) + name;
}

std::vector<ShardEntry> PlanShards(uint64_t n, uint64_t shard_length, std::span<const ShardPlace> places, int replicas,
                                   const std::string& manifest_path) {
  assert(n > 0 && shard_length > 0 && !places.empty());
  assert(replicas >= 0 && static_cast<size_t>(replicas) < places.size());
  const std::string stem = std::filesystem::path(manifest_path).stem().string();
  std::vector<ShardEntry> plan;
  for (uint64_t b = 0; b < n; b += std::min(shard_length, n - b)) {
    ShardEntry s;
    s.start = b;
    s.stop = b + std::min(shard_length, n - b);
    const size_t k = plan.size();
    for (int r = 0; r <= replicas; ++r) {
      const ShardPlace& p = places[(k + r) % places.size()];
      const std::string sep = p.folder.back() == '/' ? "" : "/";
      s.copies.push_back({p.worker, p.folder + sep + ShardFileName(stem, k, r)});
    }
    plan.push_back(std::move(s));
  }
  return plan;
}

}  // namespace momenta
