// What import and export share: the file formats, the chunk they copy by, and
// the destination being written. Every output is written to a temporary file
// DEST.partial-PID beside the destination and renamed into place only when
// complete, so a failure (bad value, disk full, SIGINT/SIGTERM) leaves no
// half-written destination behind; a temporary left by a killed process
// (SIGKILL) is removed by the next import or export to the same destination.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "storage/array/array_file.h"
#include "storage/util/status.h"
#include "tools/cli_common.h"

namespace momenta::cli {

inline constexpr uint64_t kChunkBytes = 8 << 20;

enum class Format { kNpy, kRaw, kText };

// --format: auto (by the extension of `path`: .npy; .csv, .txt, .tsv; else
// raw), npy, raw, csv (or text).
Result<Format> ResolveFormat(const std::string& flag, const std::string& path);

// True when every byte of [data, data + n) is zero.
bool AllZero(const char* data, size_t n);

// A destination being written: a temporary file renamed over `final_path` by
// Commit(); removed on destruction if never committed (also on an interrupt:
// the commands return through here).
class PendingFile {
 public:
  explicit PendingFile(std::string final_path);
  ~PendingFile();
  PendingFile(const PendingFile&) = delete;
  PendingFile& operator=(const PendingFile&) = delete;
  const std::string& temp() const { return temp_; }
  Status Commit();

 private:
  const std::string final_;
  const std::string temp_;
  bool committed_ = false;
};

// The new array at pending.temp(), opened with the I/O options of `common`.
Result<std::unique_ptr<ArrayFile>> CreateDest(const PendingFile& pending, DType dtype, std::span<const uint64_t> shape,
                                              const CommonOptions& common);

// InvalidArgument when `dest` exists and not `force`.
Status CheckDestination(const std::string& dest, bool force);

}  // namespace momenta::cli
