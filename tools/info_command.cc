// momenta info: an array's dtype, shape, layout, disk use and the state of its
// moment buffer (what the next command that opens it will do about it).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "buffers/buffered_array.h"
#include "storage/util/json_writer.h"
#include "tools/cli_common.h"
#include "tools/commands.h"

namespace momenta::cli {
namespace {

struct InfoArgs {
  CommonOptions common;
  std::string path;
};

// What `info` says of the buffer: its condition and what the next command
// that opens the array will do about it, with a rough time for a full pass.
std::string BufferStateText(const BufferCondition& c, ArrayFile& f) {
  using Kind = BufferCondition::Kind;
  const uint64_t pass = AllocatedBytes(f.path());
  // A rough rate: a streaming build reads about 1 GiB/s here (bench/README.md).
  const double seconds = static_cast<double>(pass) / (1 << 30);
  char rough[96];
  if (seconds < 1)
    std::snprintf(rough, sizeof rough, "one pass over %s allocated, under a second", FormatBytes(pass).c_str());
  else
    std::snprintf(rough, sizeof rough, "one pass over %s allocated, roughly %.0f s at 1 GiB/s",
                  FormatBytes(pass).c_str(), seconds);
  switch (c.kind) {
    case Kind::kCurrent:
      return "current";
    case Kind::kLiveWriter:
      return "current (a writer is updating it)";
    case Kind::kRecover:
      return "needs recovery: " + c.why + "; the next command replays the log";
    case Kind::kMissing:
      return "none yet: the next query builds it (" + std::string(rough) + ")";
    case Kind::kRebuild:
      return "stale: " + c.why + "; the next command rebuilds it (" + std::string(rough) + ")";
    case Kind::kForeign:
      return "belongs to another array: " + c.why + "; the next command sets it aside and builds a fresh one (" +
             std::string(rough) + ")";
  }
  return "unknown";
}

// info --json's "buffer" object: its state, and what the buffer is when it stays in place.
void BufferJson(const std::string& state, const std::optional<BufferDescription>& tree, JsonWriter& j) {
  j.Key("buffer").BeginObject().Key("state").String(state);
  if (tree) j.Key("kind").String(tree->kind);
  if (tree && tree->ola) {
    const BufferDescription::Ola& o = *tree->ola;
    j.Key("ola").BeginObject().Key("nodes").Int(o.nodes).Key("max_order").Int(o.max_order);
    j.Key("bin").UInt(o.bin).Key("levels").Int(o.levels).Key("slots").UInt(o.slots);
    j.Key("file_bytes").UInt(o.file_bytes).Key("growth").Double(o.growth).EndObject();
  }
  if (tree) {
    j.Key("order").Int(tree->order).Key("fanout").UInt(tree->fanout).Key("leaf_span").UInt(tree->leaf_span);
    j.Key("levels").Int(static_cast<int>(tree->levels.size())).Key("ram_from_level").Int(tree->ram_from_level);
    j.Key("ram_budget").UInt(tree->ram_budget).Key("ram_tier_bytes").UInt(tree->ram_tier_bytes);
    j.Key("disk_tier_bytes").UInt(tree->disk_tier_bytes);
    j.Key("updates_since_build").UInt(tree->updates_since_build);
  }
  j.EndObject();
}

// info's buffer lines: its state, and what the buffer is when it stays in place.
void PrintBuffer(const std::string& state, const std::optional<BufferDescription>& tree) {
  std::printf("buffer:      %s\n", state.c_str());
  if (tree) std::printf("  kind:      %s\n", tree->kind.c_str());
  if (tree && tree->ola) {
    const BufferDescription::Ola& o = *tree->ola;
    std::printf("  ola:       index orders 0..%d from %d-node stencils, bin %llu, %d levels, %llu slots (%s)\n",
                o.max_order, o.nodes, static_cast<unsigned long long>(o.bin), o.levels,
                static_cast<unsigned long long>(o.slots), FormatBytes(o.file_bytes).c_str());
    std::printf("  tree:      beside it for value mean/var, min/max and recovery:\n");
  } else if (tree && tree->kind == "ola") {
    std::printf("  ola:       missing or unreadable: the next command rebuilds it\n");
  }
  if (tree) {
    const int levels = static_cast<int>(tree->levels.size());
    std::printf("  moments:   index orders 0..%d, value mean/var, min/max\n", tree->order);
    std::printf("  levels:    %d (leaf = %s, fan-out %u)\n", levels, Counted(tree->leaf_span, "element").c_str(),
                tree->fanout);
    for (int k = levels; k >= 1; --k) {
      const BufferDescription::Level& l = tree->levels[k - 1];
      std::printf("    level %d: %s of %s, %s, %s\n", k, Counted(l.nodes, "node").c_str(),
                  Counted(l.span, "element").c_str(), FormatBytes(l.bytes).c_str(),
                  l.in_ram ? "RAM tier" : "disk tier");
    }
    std::printf("  RAM tier:  %s (budget %s)\n", FormatBytes(tree->ram_tier_bytes).c_str(),
                FormatBytes(tree->ram_budget).c_str());
    std::printf("  disk tier: %s\n", FormatBytes(tree->disk_tier_bytes).c_str());
  }
}

int RunInfo(const InfoArgs& a) {
  auto array = OpenArray(a.path, a.common, /*writable=*/false);
  if (!array.ok()) return Fail(array.status());
  ArrayFile& f = **array;
  const NpyHeader& h = f.header();
  auto size = f.io().Size();
  if (!size.ok()) return Fail(size.status());
  const std::string sidecar = SidecarPath(a.path, a.common.sidecar);
  std::error_code ec;
  const bool has_sidecar = std::filesystem::is_directory(sidecar, ec);
  const std::string version = std::to_string(h.major_version) + "." + std::to_string(h.minor_version);
  // The moment buffer as it is, and what the next command will do about it.
  BufferedArrayOptions inspect;
  inspect.sidecar = a.common.sidecar;
  inspect.io.kind = IoKind::kPread;
  auto info = BufferedArray::Describe(a.path, inspect);
  if (!info.ok()) return Fail(info.status());
  const std::string tree_state = BufferStateText(info->condition, f);
  const std::optional<BufferDescription>& tree = info->buffer;
  if (a.common.json) {
    JsonWriter j;
    j.BeginObject().Key("path").String(a.path).Key("dtype").String(DTypeName(f.dtype()));
    j.Key("shape").BeginArray();
    for (uint64_t d : h.shape) j.UInt(d);
    j.EndArray().Key("length").UInt(f.length()).Key("itemsize").UInt(f.itemsize());
    j.Key("npy_version").String(version).Key("data_offset").UInt(h.data_offset);
    j.Key("data_bytes").UInt(h.data_bytes()).Key("file_bytes").UInt(*size);
    j.Key("allocated_bytes").UInt(AllocatedBytes(a.path));
    j.Key("sidecar").String(sidecar).Key("sidecar_exists").Bool(has_sidecar);
    j.Key("io").String(f.io().Name());
    BufferJson(tree_state, tree, j);
    j.EndObject();
    std::printf("%s\n", j.str().c_str());
    return kExitOk;
  }
  std::string shape;
  for (size_t k = 0; k < h.shape.size(); ++k) shape += (k ? ", " : "") + std::to_string(h.shape[k]);
  if (h.shape.size() == 1) shape += ",";
  std::printf("path:        %s\n", a.path.c_str());
  std::printf("dtype:       %s\n", std::string(DTypeName(f.dtype())).c_str());
  std::printf("shape:       (%s)\n", shape.c_str());
  std::printf("length:      %s\n", Counted(f.length(), "element").c_str());
  std::printf("npy header:  v%s, data at byte %llu\n", version.c_str(), static_cast<unsigned long long>(h.data_offset));
  std::printf("data:        %s (file %s, %s allocated on disk)\n", FormatBytes(h.data_bytes()).c_str(),
              FormatBytes(*size).c_str(), FormatBytes(AllocatedBytes(a.path)).c_str());
  std::printf("sidecar:     %s (%s)\n", sidecar.c_str(), has_sidecar ? "present" : "not yet created");
  std::printf("io:          %s\n", f.io().Name().c_str());
  PrintBuffer(tree_state, tree);
  return kExitOk;
}

}  // namespace

void RegisterInfoCommand(CLI::App& app, Command* run) {
  auto a = std::make_shared<InfoArgs>();
  CLI::App* sub = app.add_subcommand("info", "show an array's dtype, shape, layout and disk use");
  sub->add_option("PATH", a->path, "array file (.npy)")->required();
  AddCommonOptions(sub, &a->common);
  sub->footer("Example: momenta info big.npy --json");
  sub->callback([a, run] { *run = [a] { return RunInfo(*a); }; });
}

}  // namespace momenta::cli
