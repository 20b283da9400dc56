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

#include "storage/io/posix_file.h"
#include "storage/util/cancel.h"
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

// The values of one CSV line: 1 for a 1-D (or 0-d) array, else the product
// of the dimensions after the first, so (N, K) writes K per line and
// (N, A, B) writes A*B (its trailing dimensions flattened in C order, as
// NumPy's a.reshape(N, -1)). 0 when a trailing dimension is 0 (no element).
uint64_t CsvRowSize(const NpyHeader& h) {
  uint64_t row = 1;
  for (size_t d = 1; d < h.shape.size(); ++d) row *= h.shape[d];
  return row;
}

// CSV rows are whole: an N-D array's range must start and end on a row.
Status CheckWholeRows(const ArrayFile& in, IndexRange r, const std::string& range) {
  const uint64_t row = CsvRowSize(in.header());
  if (row <= 1 || (r.begin % row == 0 && r.end % row == 0)) return Status::OK();
  return Status::OutOfRange(in.path(), "--range " + range + " (elements " + std::to_string(r.begin) + ":" +
                                           std::to_string(r.end) + ") cuts a CSV row: the array's rows are " +
                                           std::to_string(row) + " elements, so P and Q must be multiples of " +
                                           std::to_string(row));
}

// Writes elements r of `in` as raw bytes or as CSV lines, values separated
// by `delimiter` (a tab for a .tsv DEST, else a comma).
Status ExportStream(ArrayFile& in, IndexRange r, Format format, char delimiter, ByteSink& sink,
                    const std::string& label) {
  const uint64_t row = std::max<uint64_t>(1, CsvRowSize(in.header()));
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
        text += (at + k + 1) % row == 0 ? '\n' : delimiter;
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
  if (*format == Format::kText)
    if (Status s = CheckWholeRows(in, *range, a.range); !s.ok()) return Fail(s);
  if (a.dest == "-") {
    if (*format == Format::kNpy) return UsageFail("export to stdout needs --format raw or csv");
    if (*format == Format::kRaw && ::isatty(STDOUT_FILENO) == 1)
      return UsageFail(
          "export: stdout is a terminal, refusing to write binary (raw) data to it; "
          "redirect stdout (> FILE or | PROGRAM) or use --format csv");
    InstallCancelHandlers();
    ByteSink sink(STDOUT_FILENO, "stdout");
    if (Status s = ExportStream(in, *range, *format, ',', sink, "export"); !s.ok()) return FailOrInterrupted(s);
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
    const char delimiter = std::filesystem::path(a.dest).extension() == ".tsv" ? '\t' : ',';
    s = ExportStream(in, *range, *format, delimiter, sink, "export " + a.path);
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
  sub->footer(
      "CSV holds one row per line, laid out as numpy.savetxt(DEST, a, delimiter=',') lays it out (each\n"
      "value in the shortest form that reads back exactly): a 1-D array one value per line, an (N, K)\n"
      "array K values per line (tab-separated in a .tsv); more dimensions are flattened after the first\n"
      "((N, A, B) writes A*B values per line). --range counts elements, so for an N-D array P and Q\n"
      "must be multiples of the row size.\n"
      "Examples: momenta export big.npy part.csv --range 1000:2000\n"
      "          momenta export table.npy t.csv                # shape (N, 3): lines like 0,1.5,-2");
  sub->callback([a, run] { *run = [a] { return RunExport(*a); }; });
}

}  // namespace momenta::cli
