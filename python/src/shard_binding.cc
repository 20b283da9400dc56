#include "python/src/shard_binding.h"

#include <pybind11/stl.h>

#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "buffers/shard_plan.h"
#include "python/src/py_status.h"
#include "storage/array/shard_manifest.h"

namespace momenta::python {
namespace {

// A shard as Python sees it: (start, stop, [(worker, path), ...]).
using PyCopy = std::pair<std::string, std::string>;
using PyShard = std::tuple<uint64_t, uint64_t, std::vector<PyCopy>>;

PyShard ToPython(const ShardEntry& s) {
  std::vector<PyCopy> copies;
  for (const ShardCopy& c : s.copies) copies.emplace_back(c.worker, c.path);
  return {s.start, s.stop, std::move(copies)};
}

ShardEntry FromPython(const PyShard& s) {
  ShardEntry e{std::get<0>(s), std::get<1>(s), {}};
  for (const auto& [worker, path] : std::get<2>(s)) e.copies.push_back({worker, path});
  if (e.copies.empty()) ThrowIfError(Status::InvalidArgument("shards", "a shard without a copy"));
  return e;
}

}  // namespace

void RegisterShards(py::module_& m) {
  m.attr("kShardManifestFormat") = kShardManifestFormat;
  m.attr("kShardManifestVersion") = kShardManifestVersion;
  // (worker, folder) checked (an absolute folder) and normalized; errors name "placement".
  m.def("_shard_place", [](const std::string& worker, const std::string& folder) {
    const ShardPlace p = ValueOrThrow(MakeShardPlace(worker, folder, "placement"));
    return std::make_pair(p.worker, p.folder);
  });
  // PlanShards over checked places: [(start, stop, [(worker, path), ...])].
  m.def("_plan_shards", [](uint64_t n, uint64_t shard_length, const std::vector<PyCopy>& pairs, int replicas,
                           const std::string& manifest_path) {
    if (n == 0 || shard_length == 0 || pairs.empty() || replicas < 0 || static_cast<size_t>(replicas) >= pairs.size())
      ThrowIfError(Status::InvalidArgument("shard_create", "no shards to plan"));
    std::vector<ShardPlace> places;
    for (const auto& [worker, folder] : pairs)
      places.push_back(ValueOrThrow(MakeShardPlace(worker, folder, "placement")));
    std::vector<PyShard> out;
    for (const ShardEntry& s : PlanShards(n, shard_length, places, replicas, manifest_path)) out.push_back(ToPython(s));
    return out;
  });
  // WriteShardManifest(path, {dtype, shape, order, shards}).
  m.def("_write_manifest", [](const std::string& path, const std::string& dtype, const std::vector<uint64_t>& shape,
                              int order, const std::vector<PyShard>& shards) {
    ShardManifest manifest{ValueOrThrow(ParseDTypeName(dtype)), shape, order, {}};
    for (const PyShard& s : shards) manifest.shards.push_back(FromPython(s));
    py::gil_scoped_release unlocked;  // a file written and synced
    ThrowIfError(WriteShardManifest(path, manifest));
  });
}

}  // namespace momenta::python
