#include "tools/buffer_options.h"

#include <CLI/CLI.hpp>
#include <cstdio>

#include "buffers/tree/tree_options.h"  // kOlaMaxNodes, WithOlaBuffer

namespace momenta::cli {
void AddBufferFlags(CLI::App* sub, BufferFlags* flags) {
  CountIn(sub->add_option("--order", flags->order, "highest index-moment order J kept in the buffer (0..8)"), 0, 8)
      ->capture_default_str();
  sub->add_option("--ram-budget", flags->ram_budget,
                  "RAM tier size, e.g. 1M (default: 1 MiB per TiB of data, at least 64K)");
  sub->add_option("--disk-tier", flags->disk_tier,
                  "on: fine levels on disk (default); off: the paper's all-in-RAM bins")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  sub->add_option("--leaf", flags->leaf, "elements per disk-tier leaf (default: tree ~0.1% of the array)");
  CountIn(sub->add_option("--fanout", flags->fanout, "children per node above the leaves (2..64)"), 2, 64)
      ->capture_default_str();
  sub->add_option("--buffer", flags->buffer,
                  "buffer kind: hbb (hierarchical bins, the default) or ola (overlapped bins: one number per bin "
                  "for index moments up to --order, which it rounds up to odd, at most 7)")
      ->check(CLI::IsMember({"hbb", "ola"}))
      ->capture_default_str();
  sub->add_option("--bin", flags->bin, "--buffer ola: cells per bin (default 1024)");
}

Result<TreeOptions> MakeTreeOptions(const BufferFlags& flags) {
  TreeOptions t;
  t.order = flags.order;
  t.fanout = flags.fanout;
  t.disk_tier = flags.disk_tier == "on";
  auto budget = ParseBytes(flags.ram_budget);
  if (!budget.ok()) return budget.status();
  t.ram_budget = *budget;
  if (!flags.leaf.empty()) {
    auto leaf = ParseCount(flags.leaf, "--leaf");
    if (!leaf.ok() || *leaf == 0)
      return Status::InvalidArgument("--leaf", "'" + flags.leaf + "' is not a positive count");
    t.leaf_span = *leaf;
  }
  if (flags.buffer == "ola") {
    if (flags.order > kOlaMaxNodes - 1)
      return Status::InvalidArgument("--order", std::to_string(flags.order) +
                                                    ": the Ola buffer serves index moments up to order " +
                                                    std::to_string(kOlaMaxNodes - 1) + " (use --buffer hbb)");
    uint64_t bin = 0;  // the default
    if (!flags.bin.empty()) {
      auto parsed = ParseCount(flags.bin, "--bin");
      if (!parsed.ok() || *parsed < 2 || *parsed > UINT32_MAX)
        return Status::InvalidArgument("--bin", "'" + flags.bin + "' is not a count from 2 to 2^32 - 1");
      bin = *parsed;
    }
    t = WithOlaBuffer(t, flags.order, bin);  // N = J + 1 rounded up to even, a tree of order 0 beside
  } else if (!flags.bin.empty()) {
    return Status::InvalidArgument("--bin", "applies to --buffer ola only");
  }
  return t;
}

void AddWriteFlags(CLI::App* sub, WriteFlags* flags) {
  sub->add_option("--sync", flags->sync,
                  "update log durability: always (fdatasync per update batch before it applies), "
                  "batch (one fdatasync when the command ends), none (the OS decides)")
      ->check(CLI::IsMember({"always", "batch", "none"}))
      ->capture_default_str();
  sub->add_option("--time", flags->time, "timestamp of the updates in the log, ms since the epoch (default: now)");
  NonNegative(sub->add_option("--retain", flags->retain_ms,
                              "delete whole log segments older than MS >= 0 ms once checkpointed "
                              "(default: keep the whole log)"));
  sub->add_option("--log-segment", flags->log_segment,
                  "rotate the update log to a new segment past BYTES (\"16M\", \"2^24\"; 4K to 1G; default 64M): "
                  "a writer's open reads its last segment to find the log's end");
}

Result<LogChoice> ParseLogChoice(const WriteFlags& flags) {
  LogChoice log;
  auto sync = ParseLogSync(flags.sync, "--sync");
  if (!sync.ok()) return sync.status();
  log.sync = *sync;
  log.retain_ms = flags.retain_ms;
  if (!flags.log_segment.empty()) {
    auto bytes = ParseBytes(flags.log_segment, "--log-segment");
    if (!bytes.ok()) return bytes.status();
    if (*bytes < (uint64_t{4} << 10) || *bytes > (uint64_t{1} << 30))
      return Status::InvalidArgument("--log-segment", "'" + flags.log_segment + "' is not between 4K and 1G");
    log.segment_bytes = *bytes;
  }
  return log;
}

Result<BufferedArrayOptions> MakeBufferedOptions(const std::string& path, const CommonOptions& common, bool writable,
                                                 const TreeOptions& tree, const LogChoice& log, bool rebuild_on_open) {
  auto io = MakeIoOptions(common, writable);
  if (!io.ok()) return io.status();
  BufferedArrayOptions options;
  options.io = *io;
  options.tree = tree;
  options.sync = log.sync;
  options.retain_ms = log.retain_ms;
  options.log_segment_bytes = log.segment_bytes;
  options.sidecar = common.sidecar;
  options.rebuild_on_open = rebuild_on_open;
  options.build_advice = "run 'momenta build " + path + "'";
  options.sidecar_advice = "--sidecar DIR";
  // A progress bar on a TTY, created at the first report of a build.
  auto bar = std::make_shared<std::unique_ptr<Progress>>();
  options.progress = [bar, path](uint64_t done, uint64_t total) {
    if (!*bar) *bar = std::make_unique<Progress>("build " + path, total);
    (*bar)->Update(done);
  };
  return options;
}

Result<std::unique_ptr<BufferedArray>> OpenBuffered(const std::string& path, const CommonOptions& common, bool writable,
                                                    const TreeOptions& tree, const LogChoice& log, bool rebuild_on_open,
                                                    bool fresh_array) {
  auto options = MakeBufferedOptions(path, common, writable, tree, log, rebuild_on_open);
  if (!options.ok()) return options.status();
  options->fresh_array = fresh_array;
  // (A killed build's or verify's scratch tree is removed by the writer's open.)
  std::vector<std::string> notices;
  auto opened = BufferedArray::Open(path, *options, &notices);
  for (const auto& n : notices) PrintNotice(n);
  return opened;
}

}  // namespace momenta::cli
