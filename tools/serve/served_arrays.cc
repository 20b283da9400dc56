#include "tools/serve/served_arrays.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "tools/cli_common.h"  // PrintNotice

namespace momenta::serve {
namespace {

std::string NameOf(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  if (name.size() > 4 && name.ends_with(".npy")) name.resize(name.size() - 4);
  return name;
}

// The paths a PATH argument stands for: itself, or a folder's .npy files.
Result<std::vector<std::string>> Expand(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    std::vector<std::string> out;
    for (const auto& entry : std::filesystem::directory_iterator(path, ec))
      if (entry.path().extension() == ".npy" && entry.is_regular_file(ec)) out.push_back(entry.path().string());
    if (ec) return Status::FromErrno(path, ec.value());
    std::sort(out.begin(), out.end());
    return out;
  }
  if (!std::filesystem::exists(path, ec)) return Status::NotFound(path, "no such file or folder");
  return std::vector<std::string>{path};
}

}  // namespace

Status ServedArrays::Reopen(ServedArray& s) {
  BufferedArrayOptions options;
  options.io.kind = io_;
  options.io.writable = false;
  options.sidecar = s.sidecar;
  std::vector<std::string> notices;
  auto array = BufferedArray::Open(s.path, options, &notices);
  for (const auto& n : notices) cli::PrintNotice(s.name + ": " + n);
  if (!array.ok()) return array.status();
  struct stat st;
  if (::stat(s.path.c_str(), &st) != 0) return Status::FromErrno(s.path, errno);
  s.array = std::move(array).value();
  s.dev = st.st_dev;
  s.ino = st.st_ino;
  return Status::OK();
}

Result<std::unique_ptr<ServedArrays>> ServedArrays::Open(const std::vector<std::string>& paths,
                                                         const std::string& sidecar, IoKind io) {
  auto served = std::make_unique<ServedArrays>();
  served->io_ = io;
  std::set<std::string> names;
  for (const std::string& arg : paths) {
    auto files = Expand(arg);
    if (!files.ok()) return files.status();
    for (const std::string& path : *files) {
      auto s = std::make_unique<ServedArray>();
      s->name = NameOf(path);
      s->path = path;
      s->sidecar = sidecar;
      if (!names.insert(s->name).second)
        return Status::InvalidArgument(path, "another served array is named '" + s->name + "' already");
      MOMENTA_RETURN_IF_ERROR(served->Reopen(*s));
      served->arrays_.push_back(std::move(s));
    }
  }
  if (served->arrays_.empty()) return Status::InvalidArgument("serve", "no .npy file to serve in the paths given");
  return served;
}

std::vector<std::string> ServedArrays::Names() const {
  std::vector<std::string> out;
  for (const auto& s : arrays_) out.push_back(s->name);
  return out;
}

void ServedArrays::SetTimeAxes(const std::map<std::string, TimeAxis>& axes) {
  for (const auto& s : arrays_) {
    auto it = axes.find(s->name);
    if (it != axes.end()) s->time = it->second;
  }
}

const TimeAxis* ServedArrays::TimeAxisOf(const std::string& name) const {
  for (const auto& s : arrays_)
    if (s->name == name) return s->time ? &*s->time : nullptr;
  return nullptr;
}

Result<Lease> ServedArrays::Acquire(const std::string& name) {
  for (const auto& s : arrays_) {
    if (s->name != name) continue;
    std::unique_lock<std::mutex> lock(s->mu);
    struct stat st;
    if (::stat(s->path.c_str(), &st) != 0) {
      if (errno == ENOENT) return Status::NotFound(name, s->path + " was removed since the server opened it");
      return Status::FromErrno(s->path, errno);
    }
    if (st.st_dev != s->dev || st.st_ino != s->ino) {  // replaced: the new file from now on
      cli::PrintNotice(name + ": " + s->path + " was replaced; reopening it");
      const Status reopened = Reopen(*s);
      if (!reopened.ok()) {
        s->array.reset();
        s->ino = 0;
        return reopened.WithContext(name + " (replaced)");
      }
    }
    if (!s->array) return Status::NotFound(name, s->path + " could not be reopened");
    return Lease(s.get(), std::move(lock));
  }
  return Status::NotFound(name, "no such array is served");
}

}  // namespace momenta::serve
