#include "tools/transfer_files.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "tools/cli_common.h"

namespace momenta::cli {
namespace {

constexpr std::string_view kPartial = ".partial-";

}  // namespace

Result<Format> ResolveFormat(const std::string& flag, const std::string& path) {
  std::string f = flag;
  if (f == "auto") {
    const std::string ext = std::filesystem::path(path).extension().string();
    if (ext == ".npy")
      f = "npy";
    else if (ext == ".csv" || ext == ".txt" || ext == ".tsv")
      f = "csv";
    else
      f = "raw";
  }
  if (f == "npy") return Format::kNpy;
  if (f == "raw") return Format::kRaw;
  if (f == "csv" || f == "text") return Format::kText;
  return Status::InvalidArgument("--format", "unknown format '" + flag + "' (auto, npy, raw, csv)");
}

bool AllZero(const char* data, size_t n) { return n == 0 || (data[0] == 0 && std::memcmp(data, data + 1, n - 1) == 0); }

PendingFile::PendingFile(std::string final_path)
    : final_(std::move(final_path)), temp_(final_ + std::string(kPartial) + std::to_string(::getpid())) {
  const std::filesystem::path d(final_);
  RemoveDeadTemporaries(d.has_parent_path() ? d.parent_path().string() : ".",
                        d.filename().string() + std::string(kPartial));
}

PendingFile::~PendingFile() {
  if (!committed_) ::unlink(temp_.c_str());
}

Status PendingFile::Commit() {
  if (::rename(temp_.c_str(), final_.c_str()) != 0) return Status::FromErrno(final_, errno);
  committed_ = true;
  return Status::OK();
}

Result<std::unique_ptr<ArrayFile>> CreateDest(const PendingFile& pending, DType dtype, std::span<const uint64_t> shape,
                                              const CommonOptions& common) {
  auto io = MakeIoOptions(common, /*writable=*/true);
  if (!io.ok()) return io.status();
  return ArrayFile::Create(pending.temp(), dtype, shape, *io);
}

Status CheckDestination(const std::string& dest, bool force) {
  std::error_code ec;
  if (!force && std::filesystem::exists(dest, ec))
    return Status::InvalidArgument(dest, "already exists (use --force to replace it)");
  return Status::OK();
}

}  // namespace momenta::cli
