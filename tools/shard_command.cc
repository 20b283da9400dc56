// momenta shard create: split a .npy into shard arrays (or make empty ones
// from --shape/--dtype), each in the folder of the worker that will hold it,
// and write the manifest of the sharded array — the format momenta.dask reads.
// The plan (which elements, which workers, which file names) and the manifest
// are the library's (buffers/shard_plan.h, storage/array/shard_manifest.h),
// which momenta.dask.shard_create uses too.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "buffers/shard_plan.h"
#include "storage/array/array_file.h"
#include "storage/array/shard_manifest.h"
#include "storage/array/sidecar.h"
#include "storage/io/posix_file.h"
#include "storage/util/cancel.h"
#include "tools/buffer_options.h"
#include "tools/cli_common.h"
#include "tools/cli_signals.h"
#include "tools/commands.h"
#include "tools/transfer_files.h"

namespace momenta::cli {
namespace {

struct ShardArgs {
  CommonOptions common;
  std::string src;  // a .npy, or empty with --shape
  std::string manifest;
  std::string shard_length;
  std::vector<std::string> placement;  // WORKER=FOLDER
  std::vector<std::string> shape;
  std::string dtype = "f8";
  int replicas = 0;
  BufferFlags buffer;
};

// Removes what a failed create made: the shard files and their sidecars.
struct Cleanup {
  std::vector<std::string> made;
  bool keep = false;
  ~Cleanup() {
    if (keep) return;
    std::error_code ec;
    for (const auto& p : made) {
      ::unlink(p.c_str());
      std::filesystem::remove_all(SidecarPath(p, ""), ec);
    }
  }
};

// One shard copy at `path`: `length` elements of `dtype`, [first, first +
// length) of `src` (null: all holes), then its buffer built.
Status MakeShard(const std::string& path, DType dtype, uint64_t length, ArrayFile* src, uint64_t first,
                 const ShardArgs& a, const TreeOptions& tree, Cleanup& cleanup) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  if (ec) return Status::IOError(std::filesystem::path(path).parent_path().string(), ec.message());
  if (std::filesystem::exists(std::filesystem::symlink_status(path, ec)))
    return Status::InvalidArgument(path, "exists; a shard is never written over");
  auto io = MakeIoOptions(a.common, /*writable=*/true);
  if (!io.ok()) return io.status();
  const uint64_t shape[] = {length};
  std::string notice;
  auto out = ArrayFile::Create(path, dtype, shape, *io, &notice);
  PrintNotice(notice);
  if (!out.ok()) return out.status();
  cleanup.made.push_back(path);
  if (src) {
    const uint64_t per_chunk = std::max<uint64_t>(1, kChunkBytes / src->itemsize());
    std::vector<char> raw(per_chunk * src->itemsize());
    for (uint64_t at = 0; at < length; at += per_chunk) {
      MOMENTA_RETURN_IF_ERROR(CheckCancel(path));
      const uint64_t n = std::min(per_chunk, length - at);
      MOMENTA_RETURN_IF_ERROR(src->ReadRaw(first + at, n, raw.data()));
      // A shard starts as holes: zeros stay holes (a sparse source stays sparse).
      if (!AllZero(raw.data(), n * src->itemsize())) MOMENTA_RETURN_IF_ERROR((*out)->WriteRaw(at, n, raw.data()));
    }
    MOMENTA_RETURN_IF_ERROR((*out)->Sync());
  }
  out->reset();
  CommonOptions quiet = a.common;
  quiet.sidecar.clear();  // each shard keeps its sidecar beside it
  auto built = OpenBuffered(path, quiet, /*writable=*/true, tree, {}, /*rebuild_on_open=*/true,
                            /*fresh_array=*/true);
  if (!built.ok()) return built.status();
  return (*built)->Close();
}

int RunShardCreate(const ShardArgs& a) {
  if (a.src.empty() == a.shape.empty())
    return UsageFail("shard create takes a source .npy or --shape (with --dtype), one of the two");
  if (a.placement.empty()) return UsageFail("shard create needs at least one --placement WORKER=FOLDER");
  std::vector<ShardPlace> places;
  for (const auto& p : a.placement) {
    auto place = ParseShardPlace(p, "--placement");
    if (!place.ok()) return UsageFail(place.status().ToString());
    places.push_back(*place);
  }
  if (a.replicas < 0 || static_cast<size_t>(a.replicas) >= places.size())
    return UsageFail("--replicas " + std::to_string(a.replicas) + ": give 0 <= R < the number of placements (" +
                     std::to_string(places.size()) + ")");
  auto per = ParseCount(a.shard_length, "--shard-length");
  if (!per.ok()) return FailParse(per.status());
  if (*per == 0) return UsageFail("--shard-length must be at least 1");
  auto tree = MakeTreeOptions(a.buffer);
  if (!tree.ok()) return UsageFail(tree.status().ToString());
  if (std::filesystem::exists(a.manifest)) return Fail(Status::InvalidArgument(a.manifest, "exists"));

  DType dtype;
  std::vector<uint64_t> shape;
  std::unique_ptr<ArrayFile> src;
  if (!a.src.empty()) {
    auto opened = OpenArray(a.src, a.common, /*writable=*/false);
    if (!opened.ok()) return Fail(opened.status());
    src = std::move(*opened);
    dtype = src->dtype();
    shape = src->header().shape;
  } else {
    auto t = ParseDTypeName(a.dtype);
    if (!t.ok()) return UsageFail(t.status().ToString());
    dtype = *t;
    for (const auto& s : a.shape) {
      auto d = ParseCount(s, "--shape");
      if (!d.ok()) return FailParse(d.status());
      shape.push_back(*d);
    }
  }
  uint64_t n = 1;
  for (uint64_t d : shape) n *= d;
  if (n == 0)
    return Fail(Status::InvalidArgument(a.src.empty() ? "--shape" : a.src,
                                        "the array is empty; a sharded array has at least one element"));

  const std::vector<ShardEntry> plan = PlanShards(n, *per, places, a.replicas, a.manifest);

  InstallCancelHandlers();
  Stopwatch timer;
  Cleanup cleanup;
  for (const ShardEntry& s : plan)
    for (const ShardCopy& c : s.copies) {
      Status st = MakeShard(c.path, dtype, s.stop - s.start, src.get(), s.start, a, *tree, cleanup);
      if (st.code() == Status::Code::kInterrupted) return FailInterrupted(st, "no shard was kept");
      if (!st.ok()) return Fail(st);
    }
  if (Status st = WriteShardManifest(a.manifest, {dtype, shape, tree->order, plan}); !st.ok()) return Fail(st);
  cleanup.keep = true;
  std::fprintf(stderr, "created %s of %s (%llu x %s) and %s in %.1f ms\n", Counted(plan.size(), "shard").c_str(),
               a.src.empty() ? "an empty array" : a.src.c_str(), static_cast<unsigned long long>(n),
               std::string(DTypeName(dtype)).c_str(), a.manifest.c_str(), timer.ElapsedMicros() / 1000);
  return kExitOk;
}

}  // namespace

void RegisterShardCommand(CLI::App& app, Command* run) {
  CLI::App* shard = app.add_subcommand("shard", "sharded arrays: many arrays, one per worker, and their manifest");
  shard->require_subcommand(1);
  auto a = std::make_shared<ShardArgs>();
  CLI::App* sub = shard->add_subcommand("create", "split a .npy (or make an empty array) into shards and a manifest");
  sub->add_option("SRC", a->src, "source .npy (omit with --shape for an empty sharded array)");
  sub->add_option("--manifest,-m", a->manifest, "the manifest to write (JSON; must not exist)")->required();
  sub->add_option("--shard-length", a->shard_length, "elements per shard: 2^30, 3*2^20 (the last one shorter)")
      ->required();
  sub->add_option("--placement", a->placement,
                  "WORKER=FOLDER, repeated: shard k goes to placement k mod P (WORKER: a Dask worker's address or "
                  "--name; FOLDER: an absolute path, as that worker sees it)")
      ->required();
  NonNegative(
      sub->add_option("--replicas", a->replicas, "copies of each shard besides its primary, on the next placements"),
      INT32_MAX)
      ->capture_default_str();
  sub->add_option("--shape", a->shape, "shape of an empty sharded array, e.g. --shape 2^30 or 1024,1024")
      ->delimiter(',');
  sub->add_option("--dtype,-t", a->dtype, "dtype of an empty sharded array: f8 f4 i8 i4 i2 i1 u8 u4 u2 u1")
      ->capture_default_str();
  AddBufferFlags(sub, &a->buffer);
  AddCommonOptions(sub, &a->common, /*with_json=*/false);
  sub->footer(
      "Example: momenta shard create big.npy --manifest big.json --shard-length 2^30 \\\n"
      "           --placement tcp://10.0.0.5:40113=/data/a --placement tcp://10.0.0.6:39001=/data/b\n"
      "Each FOLDER is where its worker will find the shards (a disk of that machine, mounted here or\n"
      "copied there); then momenta.dask.ShardedArray(\"big.json\", client) serves them.");
  sub->callback([a, run] { *run = [a] { return RunShardCreate(*a); }; });
}

}  // namespace momenta::cli
