#include "storage/log/log_segments.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include "storage/array/array_file.h"
#include "storage/io/posix_file.h"

namespace momenta {

namespace {
constexpr size_t kNameDigits = 20;
constexpr std::string_view kSuffix = ".log";
}  // namespace

std::string LogDirPath(const std::string& array_path) { return SidecarPath(array_path) + "/log"; }

std::string LogSegmentName(uint64_t first_sequence) {
  char name[32];
  std::snprintf(name, sizeof name, "%020llu.log", static_cast<unsigned long long>(first_sequence));
  return name;
}

std::optional<uint64_t> ParseLogSegmentName(std::string_view name) {
  if (name.size() != kNameDigits + kSuffix.size() || !name.ends_with(kSuffix)) return std::nullopt;
  uint64_t value = 0;
  for (size_t i = 0; i < kNameDigits; ++i) {
    const char c = name[i];
    if (c < '0' || c > '9') return std::nullopt;
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (value > (UINT64_MAX - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  return value;
}

Result<std::vector<LogSegmentFile>> ListLogSegments(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) {
    if (errno == ENOENT) return Status::NotFound(dir, "no update log here");
    return Status::FromErrno(dir, errno);
  }
  std::vector<LogSegmentFile> out;
  errno = 0;
  while (const dirent* e = ::readdir(d)) {
    if (auto first = ParseLogSegmentName(e->d_name)) out.push_back({*first, dir + "/" + e->d_name});
    errno = 0;
  }
  const int err = errno;
  ::closedir(d);
  if (err != 0) return Status::FromErrno(dir, err);
  std::sort(out.begin(), out.end(),
            [](const LogSegmentFile& a, const LogSegmentFile& b) { return a.first_sequence < b.first_sequence; });
  return out;
}

}  // namespace momenta
