// momenta export: write elements [P, Q) of an array to a .npy, raw or CSV
// file, written beside the destination and renamed into place (transfer_files.h).
#include <fcntl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "storage/cancel.h"
#include "storage/posix_file.h"
#include "tools/cli_common.h"
#include "tools/cli_signals.h"
#include "tools/commands.h"
#include "tools/text_values.h"
#include "tools/transfer_files.h"

namespace momenta::cli {
namespace {

struct ExportArgs {
  CommonOptions common;
  std::string path, dest;
  std::string range = ":";
  std::string format = "auto";
  bool force = false;
};

// Writes bytes to a file descriptor (the pending file or stdout).
class ByteSink {
 public:
  ByteSink(int fd, std::string name) : fd_(fd), name_(std::move(name)) {}
  Status Append(const char* data, size_t n) {
    for (size_t done = 0; done < n;) {
      // A signal ends a blocked write early (EINTR, or a short count).
      MOMENTA_RETURN_IF_ERROR(CheckCancel(name_));
      ssize_t w = ::write(fd_, data + done, n - done);
      if (w < 0) {
        if (errno == EINTR) continue;
        return Status::FromErrno(name_, errno);
      }
      done += static_cast<size_t>(w);
    }
    return Status::OK();
  }

 private:
  const int fd_;
  const std::string name_;
};

Status ExportStream(ArrayFile& in, IndexRange r, Format format, ByteSink& sink,
                    const std::string& label) {
  const uint64_t per_chunk = std::max<uint64_t>(1, kChunkBytes / in.itemsize());
  std::vector<char> raw(per_chunk * in.itemsize());
  std::vector<Value> values;
  std::string text;
  Progress progress(label, r.size() * in.itemsize());
  for (uint64_t at = r.begin; at < r.end; at += per_chunk) {
    MOMENTA_RETURN_IF_ERROR(CheckCancel(in.path()));
    const uint64_t n = std::min(per_chunk, r.end - at);
    if (format == Format::kRaw) {
      MOMENTA_RETURN_IF_ERROR(in.ReadRaw(at, n, raw.data()));
      MOMENTA_RETURN_IF_ERROR(sink.Append(raw.data(), n * in.itemsize()));
    } else {
      MOMENTA_RETURN_IF_ERROR(in.ReadValues(at, n, &values));
      text.clear();
      for (uint64_t k = 0; k < n; ++k) {
        text += FormatValue(in.dtype(), values[k]);
        text += '\n';
      }
      MOMENTA_RETURN_IF_ERROR(sink.Append(text.data(), text.size()));
    }
    progress.Update((at + n - r.begin) * in.itemsize());
  }
  return Status::OK();
}

Status ExportNpy(ArrayFile& in, IndexRange r, const ExportArgs& a, PendingFile& pending) {
  std::vector<uint64_t> shape{r.size()};
  if (r.begin == 0 && r.end == in.length()) shape = in.header().shape;  // whole array keeps its shape
  auto dest = CreateDest(pending, in.dtype(), shape, a.common);
  if (!dest.ok()) return dest.status();
  ArrayFile& out = **dest;
  const uint64_t per_chunk = std::max<uint64_t>(1, kChunkBytes / in.itemsize());
  std::vector<char> raw(per_chunk * in.itemsize());
  Progress progress("export " + a.path, r.size() * in.itemsize());
  for (uint64_t at = r.begin; at < r.end; at += per_chunk) {
    MOMENTA_RETURN_IF_ERROR(CheckCancel(in.path()));
    const uint64_t n = std::min(per_chunk, r.end - at);
    MOMENTA_RETURN_IF_ERROR(in.ReadRaw(at, n, raw.data()));
    // DEST starts as a hole: zeros stay one (a sparse array stays sparse).
    if (!AllZero(raw.data(), n * in.itemsize())) MOMENTA_RETURN_IF_ERROR(out.WriteRaw(at - r.begin, n, raw.data()));
    progress.Update((at + n - r.begin) * in.itemsize());
  }
  return out.Sync();
}

int RunExport(const ExportArgs& a) {
  auto format = ResolveFormat(a.format, a.dest);
  if (!format.ok()) return UsageFail(format.status().ToString());
  auto array = OpenArray(a.path, a.common, /*writable=*/false);
  if (!array.ok()) return Fail(array.status());
  ArrayFile& in = **array;
  auto range = ParseRange(a.range, in.length());
  if (!range.ok()) return FailParse(range.status());
  if (a.dest == "-") {
    if (*format == Format::kNpy) return UsageFail("export to stdout needs --format raw or csv");
    if (*format == Format::kRaw && ::isatty(STDOUT_FILENO) == 1)
      return UsageFail("export: stdout is a terminal, refusing to write binary (raw) data to it; "
                       "redirect stdout (> FILE or | PROGRAM) or use --format csv");
    InstallCancelHandlers();
    ByteSink sink(STDOUT_FILENO, "stdout");
    if (Status s = ExportStream(in, *range, *format, sink, "export"); !s.ok()) return FailOrInterrupted(s);
    return kExitOk;
  }
  if (Status s = CheckDestination(a.dest, a.force); !s.ok()) return Fail(s);
  InstallCancelHandlers();
  PendingFile pending(a.dest);
  Status s;
  if (*format == Format::kNpy) {
    s = ExportNpy(in, *range, a, pending);
  } else {
    auto fd = OpenFile(pending.temp(), O_WRONLY | O_CREAT | O_EXCL);
    if (!fd.ok()) return Fail(fd.status());
    ByteSink sink(fd->get(), a.dest);
    s = ExportStream(in, *range, *format, sink, "export " + a.path);
    if (s.ok()) s = SyncData(fd->get(), a.dest);
  }
  if (s.code() == Status::Code::kInterrupted) return FailInterrupted(s, a.dest + " was not created");
  if (!s.ok()) return Fail(s);
  if (Status c = pending.Commit(); !c.ok()) return Fail(c);
  return kExitOk;
}

}  // namespace

void RegisterExportCommand(CLI::App& app, Command* run) {
  auto a = std::make_shared<ExportArgs>();
  CLI::App* sub = app.add_subcommand("export", "write elements [P, Q) of an array to a .npy, raw or CSV file");
  sub->add_option("PATH", a->path, "array file (.npy)")->required();
  sub->add_option("DEST", a->dest, "output file; - writes raw (not to a terminal) or csv to stdout")->required();
  sub->add_option("--range,-r", a->range,
                  "half-open range P:Q (negative counts from the end; never clipped: P > Q or a side past the end "
                  "is refused)")
      ->capture_default_str();
  sub->add_option("--format", a->format, "auto (by DEST's extension), npy, raw, csv")->capture_default_str();
  sub->add_flag("--force", a->force, "replace DEST if it exists");
  AddCommonOptions(sub, &a->common, /*with_json=*/false);
  sub->footer("Example: momenta export big.npy part.csv --range 1000:2000");
  sub->callback([a, run] { *run = [a] { return RunExport(*a); }; });
}

}  // namespace momenta::cli
