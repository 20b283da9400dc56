// momenta shard create: split a .npy into shard arrays (or make empty ones
// from --shape/--dtype), each in the folder of the worker that will hold it,
// and write the manifest of the sharded array — the format momenta.dask reads
// (python/momenta/_manifest.py has the schema): shards in index order, each
// [start, stop) of the flat index, its worker, its path, optional replicas.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "storage/array/array_file.h"
#include "storage/util/cancel.h"
#include "storage/util/json_writer.h"
#include "storage/io/posix_file.h"
#include "storage/array/sidecar.h"
#include "tools/buffer_options.h"
#include "tools/cli_common.h"
#include "tools/cli_signals.h"
#include "tools/commands.h"
#include "tools/transfer_files.h"

namespace momenta::cli {
namespace {

constexpr int kManifestVersion = 1;

struct ShardArgs {
  CommonOptions common;
  std::string src;          // a .npy, or empty with --shape
  std::string manifest;
  std::string shard_length;
  std::vector<std::string> placement;  // WORKER=FOLDER
  std::vector<std::string> shape;
  std::string dtype = "f8";
  int replicas = 0;
  BufferFlags buffer;
};

struct Place {
  std::string worker, folder;
};

struct ShardCopy {
  std::string worker, path;
};

struct ShardPlan {
  uint64_t start = 0, stop = 0;
  std::vector<ShardCopy> copies;  // the primary, then the replicas
};

// WORKER=FOLDER; the worker is everything before the last '=' (an address
// such as tcp://10.0.0.5:40113 or a worker's --name), the folder after it.
// The folder must be absolute: the manifest records it as the path its worker
// opens, and a relative one would name another folder on each machine (this
// one's working directory means nothing there). momenta.dask has the same rule.
Result<Place> ParsePlacement(const std::string& text) {
  const size_t eq = text.rfind('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    return Status::InvalidArgument("--placement", "'" + text + "' is not WORKER=FOLDER");
  const std::filesystem::path folder(text.substr(eq + 1));
  if (!folder.is_absolute())
    return Status::InvalidArgument("--placement", text + ": the folder is relative; give its absolute path on that "
                                   "worker (a relative one names another folder on each machine)");
  return Place{text.substr(0, eq), folder.lexically_normal().string()};
}

std::string ShardName(const std::string& stem, size_t k, int replica) {
  char name[64];
  if (replica == 0) std::snprintf(name, sizeof name, ".shard%05zu.npy", k);
  else std::snprintf(name, sizeof name, ".shard%05zu.r%d.npy", k, replica);
  return stem + name;
}

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

std::string ManifestJson(DType dtype, const std::vector<uint64_t>& shape, int order,
                         const std::vector<ShardPlan>& shards) {
  JsonWriter j;
  j.BeginObject().Key("format").String("momenta-sharded-array").Key("version").Int(kManifestVersion);
  j.Key("dtype").String(DTypeName(dtype)).Key("shape").BeginArray();
  for (uint64_t d : shape) j.UInt(d);
  j.EndArray().Key("order").Int(order).Key("shards").BeginArray();
  for (const ShardPlan& s : shards) {
    j.BeginObject().Key("start").UInt(s.start).Key("stop").UInt(s.stop);
    j.Key("worker").String(s.copies[0].worker).Key("path").String(s.copies[0].path);
    if (s.copies.size() > 1) {
      j.Key("replicas").BeginArray();
      for (size_t r = 1; r < s.copies.size(); ++r)
        j.BeginObject().Key("worker").String(s.copies[r].worker).Key("path").String(s.copies[r].path).EndObject();
      j.EndArray();
    }
    j.EndObject();
  }
  j.EndArray().EndObject();
  return j.str() + "\n";
}

// Writes `text` to `path` through a temporary file renamed over it.
Status WriteManifest(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".partial-" + std::to_string(::getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wx");
  if (!f) return Status::FromErrno(tmp, errno);
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size() && std::fflush(f) == 0 &&
                  ::fsync(::fileno(f)) == 0;
  const int err = errno;
  std::fclose(f);
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = ok ? errno : err;
    ::unlink(tmp.c_str());
    return Status::FromErrno(path, e);
  }
  return Status::OK();
}

int RunShardCreate(const ShardArgs& a) {
  if (a.src.empty() == a.shape.empty())
    return UsageFail("shard create takes a source .npy or --shape (with --dtype), one of the two");
  if (a.placement.empty()) return UsageFail("shard create needs at least one --placement WORKER=FOLDER");
  std::vector<Place> places;
  for (const auto& p : a.placement) {
    auto place = ParsePlacement(p);
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
  if (n == 0) return Fail(Status::InvalidArgument(a.src.empty() ? "--shape" : a.src, "the array is empty; a sharded array has at least one element"));

  const std::string stem = std::filesystem::path(a.manifest).stem().string();
  std::vector<ShardPlan> plan;
  for (uint64_t b = 0; b < n; b += *per) {
    ShardPlan s;
    s.start = b;
    s.stop = std::min(n, b + *per);
    const size_t k = plan.size();
    for (int r = 0; r <= a.replicas; ++r) {
      const Place& p = places[(k + r) % places.size()];
      s.copies.push_back({p.worker, p.folder + "/" + ShardName(stem, k, r)});
    }
    plan.push_back(std::move(s));
  }

  InstallCancelHandlers();
  Stopwatch timer;
  Cleanup cleanup;
  for (const ShardPlan& s : plan)
    for (const ShardCopy& c : s.copies) {
      Status st = MakeShard(c.path, dtype, s.stop - s.start, src.get(), s.start, a, *tree, cleanup);
      if (st.code() == Status::Code::kInterrupted) return FailInterrupted(st, "no shard was kept");
      if (!st.ok()) return Fail(st);
    }
  if (Status st = WriteManifest(a.manifest, ManifestJson(dtype, shape, tree->order, plan)); !st.ok())
    return Fail(st);
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
  NonNegative(sub->add_option("--replicas", a->replicas, "copies of each shard besides its primary, on the next placements"),
              INT32_MAX)
      ->capture_default_str();
  sub->add_option("--shape", a->shape, "shape of an empty sharded array, e.g. --shape 2^30 or 1024,1024")
      ->delimiter(',');
  sub->add_option("--dtype,-t", a->dtype, "dtype of an empty sharded array: f8 f4 i8 i4 i2 i1 u8 u4 u2 u1")
      ->capture_default_str();
  AddBufferFlags(sub, &a->buffer);
  AddCommonOptions(sub, &a->common, /*with_json=*/false);
  sub->footer("Example: momenta shard create big.npy --manifest big.json --shard-length 2^30 \\\n"
              "           --placement tcp://10.0.0.5:40113=/data/a --placement tcp://10.0.0.6:39001=/data/b\n"
              "Each FOLDER is where its worker will find the shards (a disk of that machine, mounted here or\n"
              "copied there); then momenta.dask.ShardedArray(\"big.json\", client) serves them.");
  sub->callback([a, run] { *run = [a] { return RunShardCreate(*a); }; });
}

}  // namespace momenta::cli
