// The update log's folder: where it is, how segment files are named, which
// segments it holds. A segment is named by the sequence number of its first
// record, 20 decimal digits: "00000000000000000001.log" (names sort in
// sequence order). Other files in the folder (the writer's lock) are ignored.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "storage/io/posix_file.h"  // SyncDirectory, for the log files
#include "storage/util/status.h"

namespace momenta {

// "<array>.momenta/log"
std::string LogDirPath(const std::string& array_path);

std::string LogSegmentName(uint64_t first_sequence);
// The first sequence a segment name stands for; nullopt for any other name.
std::optional<uint64_t> ParseLogSegmentName(std::string_view name);

struct LogSegmentFile {
  uint64_t first_sequence = 0;  // from the name
  std::string path;             // "<dir>/<name>"
};

// The segments in `dir`, in sequence order. NotFound ("Not found: <dir>: no
// update log here") when the folder does not exist.
Result<std::vector<LogSegmentFile>> ListLogSegments(const std::string& dir);

}  // namespace momenta
