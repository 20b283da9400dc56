// The buffer options shared by create, build and the commands that may
// (re)build a buffer, and opening an array with its buffer for the CLI.
#pragma once

#include <memory>
#include <string>

#include "buffers/buffered_array.h"
#include "tools/cli_common.h"

namespace momenta::cli {

struct BufferFlags {
  int order = 2;                 // --order J (index moments 0..J)
  std::string ram_budget;        // --ram-budget BYTES ("1M", "2^20"; default 2^-20 of the array)
  std::string disk_tier = "on";  // --disk-tier on|off
  std::string leaf;              // --leaf N elements per disk-tier leaf (default: ~0.1% tree)
  uint32_t fanout = 64;          // --fanout F
  std::string buffer = "hbb";    // --buffer hbb|ola: the buffer kind
  std::string bin;               // --bin B: cells per Ola bin (default 1024)
};

void AddBufferFlags(CLI::App* sub, BufferFlags* flags);

// The flags of commands that change an array: --sync, --time, --retain,
// --log-segment.
struct WriteFlags {
  std::string sync = "batch";  // --sync always|batch|none (the update log's policy)
  std::string time;            // --time T: ms since the epoch for every update (default: now)
  int64_t retain_ms = -1;      // --retain MS: delete log segments older than this (default: keep all)
  std::string log_segment;     // --log-segment BYTES: rotate the log past this size (default 64M)
};
void AddWriteFlags(CLI::App* sub, WriteFlags* flags);

// What a writer's update log is opened with.
struct LogChoice {
  LogSync sync = LogSync::kBatch;
  int64_t retain_ms = -1;
  uint64_t segment_bytes = uint64_t{64} << 20;
};
// --sync and --log-segment checked (InvalidArgument naming the flag: a
// usage error), --retain taken as it is.
Result<LogChoice> ParseLogChoice(const WriteFlags& flags);
// The time to stamp updates with: ParseTimeFlag (cli_parse.h).
// --buffer ola: an Ola buffer of N = J + 1 nodes rounded up to even (it
// serves orders 0..N−1; J = 8 is refused, naming hbb) beside a tree of order
// 0, which serves var, std, min and max.
Result<TreeOptions> MakeTreeOptions(const BufferFlags& flags);

// The options OpenBuffered opens PATH with (fresh_array aside): the CLI's
// backend and sidecar flags, its words of advice, a progress bar on a TTY.
Result<BufferedArrayOptions> MakeBufferedOptions(const std::string& path, const CommonOptions& common, bool writable,
                                                 const TreeOptions& tree = {}, const LogChoice& log = {},
                                                 bool rebuild_on_open = true);

// Opens PATH with its moment buffer, printing notices (fallback backend,
// rebuilds) on stderr and showing build progress on a TTY.
Result<std::unique_ptr<BufferedArray>> OpenBuffered(const std::string& path, const CommonOptions& common, bool writable,
                                                    const TreeOptions& tree = {}, const LogChoice& log = {},
                                                    bool rebuild_on_open = true, bool fresh_array = false);

}  // namespace momenta::cli
