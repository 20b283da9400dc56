// import and export: move data between momenta arrays and .npy, raw binary
// and text/CSV files. Every output is written to a temporary file
// DEST.partial-PID beside the destination and renamed into place only when
// complete, so a failure (bad value, disk full, SIGINT/SIGTERM) leaves no
// half-written destination behind; a temporary left by a killed process
// (SIGKILL) is removed by the next import or export to the same destination.
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

namespace momenta::cli {
namespace {

constexpr uint64_t kChunkBytes = 8 << 20;

enum class Format { kNpy, kRaw, kText };

Result<Format> ResolveFormat(const std::string& flag, const std::string& path) {
  std::string f = flag;
  if (f == "auto") {
    const std::string ext = std::filesystem::path(path).extension().string();
    if (ext == ".npy") f = "npy";
    else if (ext == ".csv" || ext == ".txt" || ext == ".tsv") f = "csv";
    else f = "raw";
  }
  if (f == "npy") return Format::kNpy;
  if (f == "raw") return Format::kRaw;
  if (f == "csv" || f == "text") return Format::kText;
  return Status::InvalidArgument("--format", "unknown format '" + flag + "' (auto, npy, raw, csv)");
}

// Converts a value to dtype `to`, refusing anything that does not fit exactly
// (integer range, fractions and NaN into integers).
Result<Value> ConvertValue(DType to, const Value& v) {
  if (v.kind == Value::Kind::kFloat) return ValueFromDouble(to, v.f);
  if (!DTypeIsInteger(to)) {
    auto f = v.kind == Value::Kind::kInt ? static_cast<double>(v.i) : static_cast<double>(v.u);
    return ValueFromDouble(to, f);
  }
  return ParseValue(to, FormatValue(v));  // integer to integer: exact range check
}

constexpr std::string_view kPartial = ".partial-";

// True when every byte of [data, data + n) is zero.
bool AllZero(const char* data, size_t n) {
  return n == 0 || (data[0] == 0 && std::memcmp(data, data + 1, n - 1) == 0);
}

// A destination being written: a temporary file renamed over `final_path` by
// Commit(); removed on destruction if never committed (also on an interrupt:
// the commands return through here).
class PendingFile {
 public:
  explicit PendingFile(std::string final_path)
      : final_(std::move(final_path)), temp_(final_ + std::string(kPartial) + std::to_string(::getpid())) {
    const std::filesystem::path d(final_);
    RemoveDeadTemporaries(d.has_parent_path() ? d.parent_path().string() : ".",
                          d.filename().string() + std::string(kPartial));
  }
  ~PendingFile() {
    if (!committed_) ::unlink(temp_.c_str());
  }
  const std::string& temp() const { return temp_; }
  Status Commit() {
    if (::rename(temp_.c_str(), final_.c_str()) != 0) return Status::FromErrno(final_, errno);
    committed_ = true;
    return Status::OK();
  }

 private:
  const std::string final_;
  const std::string temp_;
  bool committed_ = false;
};

Status CheckDestination(const std::string& dest, bool force) {
  std::error_code ec;
  if (!force && std::filesystem::exists(dest, ec))
    return Status::InvalidArgument(dest, "already exists (use --force to replace it)");
  return Status::OK();
}

// Reads all of `path` ("-" = stdin) as text. Binary bytes on stdin (a .npy
// file, raw data) are refused: only a file path can say what they are.
Result<std::string> ReadAllText(const std::string& path) {
  auto text = ReadWholeInput(path);
  if (!text.ok() || path != "-") return text;
  if (text->rfind("\x93NUMPY", 0) == 0)
    return Status::InvalidArgument("stdin", "holds a .npy file, but import reads stdin as text "
                                            "(give the file's path instead of -)");
  if (text->find('\0') != std::string::npos)
    return Status::InvalidArgument("stdin", "holds binary data, but import reads stdin as text "
                                            "(for raw binary give a file path and --dtype)");
  return text;
}

// ---- import ----------------------------------------------------------------

struct ImportArgs {
  CommonOptions common;
  std::string src, dest;
  std::string dtype;
  std::string format = "auto";
  bool force = false;
};

Result<std::unique_ptr<ArrayFile>> CreateDest(const PendingFile& pending, DType dtype,
                                             std::span<const uint64_t> shape,
                                             const CommonOptions& common) {
  auto io = MakeIoOptions(common, /*writable=*/true);
  if (!io.ok()) return io.status();
  return ArrayFile::Create(pending.temp(), dtype, shape, *io);
}

Status ImportNpy(const ImportArgs& a, const std::string& dtype_flag, PendingFile& pending) {
  auto src = OpenArray(a.src, a.common, /*writable=*/false);
  if (!src.ok()) return src.status();
  ArrayFile& in = **src;
  DType to = in.dtype();
  if (!dtype_flag.empty()) {
    auto t = ParseDTypeName(dtype_flag);
    if (!t.ok()) return t.status();
    to = *t;
  }
  auto dest = CreateDest(pending, to, in.header().shape, a.common);
  if (!dest.ok()) return dest.status();
  ArrayFile& out = **dest;
  const uint64_t per_chunk = std::max<uint64_t>(1, kChunkBytes / in.itemsize());
  Progress progress("import " + a.src, in.header().data_bytes());
  std::vector<char> raw(per_chunk * in.itemsize());
  std::vector<Value> values, converted;
  for (uint64_t at = 0; at < in.length(); at += per_chunk) {
    MOMENTA_RETURN_IF_ERROR(CheckCancel(a.src));
    const uint64_t n = std::min(per_chunk, in.length() - at);
    if (to == in.dtype()) {
      MOMENTA_RETURN_IF_ERROR(in.ReadRaw(at, n, raw.data()));
      // DEST starts as a hole: zeros stay one (a sparse array stays sparse).
      if (!AllZero(raw.data(), n * in.itemsize())) MOMENTA_RETURN_IF_ERROR(out.WriteRaw(at, n, raw.data()));
    } else {
      MOMENTA_RETURN_IF_ERROR(in.ReadValues(at, n, &values));
      converted.clear();
      for (uint64_t k = 0; k < n; ++k) {
        auto v = ConvertValue(to, values[k]);
        if (!v.ok())
          return Status::InvalidArgument(a.src, "element " + std::to_string(at + k) + ": " +
                                                    v.status().ToString());
        converted.push_back(*v);
      }
      MOMENTA_RETURN_IF_ERROR(out.WriteValues(at, converted));
    }
    progress.Update((at + n) * in.itemsize());
  }
  return out.Sync();
}

Status ImportRaw(const ImportArgs& a, PendingFile& pending) {
  if (a.dtype.empty())
    return Status::InvalidArgument(a.src, "raw input needs --dtype (the element type of the bytes)");
  auto dtype = ParseDTypeName(a.dtype);
  if (!dtype.ok()) return dtype.status();
  IoOptions io_opts;
  io_opts.kind = IoKind::kPread;
  auto src = OpenIoBackend(a.src, io_opts);
  if (!src.ok()) return src.status();
  auto size = (*src)->Size();
  if (!size.ok()) return size.status();
  const size_t item = DTypeSize(*dtype);
  if (*size % item != 0)
    return Status::InvalidArgument(a.src, "size " + std::to_string(*size) +
                                              " bytes is not a multiple of the itemsize " +
                                              std::to_string(item) + " of dtype " + a.dtype);
  const uint64_t length = *size / item;
  const uint64_t shape[] = {length};
  auto dest = CreateDest(pending, *dtype, shape, a.common);
  if (!dest.ok()) return dest.status();
  ArrayFile& out = **dest;
  std::vector<char> raw(kChunkBytes - kChunkBytes % item);
  Progress progress("import " + a.src, *size);
  const uint64_t per_chunk = raw.size() / item;
  for (uint64_t at = 0; at < length; at += per_chunk) {
    MOMENTA_RETURN_IF_ERROR(CheckCancel(a.src));
    const uint64_t n = std::min(per_chunk, length - at);
    MOMENTA_RETURN_IF_ERROR((*src)->Read(at * item, n * item, raw.data()));
    // Raw floats are taken as they are; raw integers always fit their dtype.
    if (!AllZero(raw.data(), n * item)) MOMENTA_RETURN_IF_ERROR(out.WriteRaw(at, n, raw.data()));
    progress.Update((at + n) * item);
  }
  return out.Sync();
}

Status ImportText(const ImportArgs& a, PendingFile& pending) {
  auto dtype = ParseDTypeName(a.dtype.empty() ? "f8" : a.dtype);
  if (!dtype.ok()) return dtype.status();
  auto text = ReadAllText(a.src);
  if (!text.ok()) return text.status();
  // Pass 1 checks every value, so a bad one stops the import before any output.
  auto counted = CountTextValues(*text, *dtype, a.src);
  if (!counted.ok()) return counted.status();
  const uint64_t count = *counted;
  const uint64_t shape[] = {count};
  auto dest = CreateDest(pending, *dtype, shape, a.common);
  if (!dest.ok()) return dest.status();
  ArrayFile& out = **dest;
  std::vector<Value> batch;
  uint64_t at = 0;
  Progress progress("import " + a.src, text->size());
  MOMENTA_RETURN_IF_ERROR(ForEachTextValue(*text, a.src, [&](std::string_view tok, uint64_t) {
    batch.push_back(ParseValue(*dtype, tok).value());
    if (batch.size() == (1 << 20)) {
      MOMENTA_RETURN_IF_ERROR(out.WriteValues(at, batch));
      at += batch.size();
      batch.clear();
      progress.Update(static_cast<uint64_t>(static_cast<double>(at) / count * text->size()));
    }
    return Status::OK();
  }));
  MOMENTA_RETURN_IF_ERROR(out.WriteValues(at, batch));
  return out.Sync();
}

int RunImport(const ImportArgs& a) {
  // stdin has no extension to go by: it is text.
  auto format = a.src == "-" && a.format == "auto" ? Format::kText : ResolveFormat(a.format, a.src);
  if (!format.ok()) return UsageFail(format.status().ToString());
  if (a.src == "-" && *format != Format::kText)
    return UsageFail("import reads stdin (-) as text only; give a file path for .npy or raw input");
  if (Status s = CheckDestination(a.dest, a.force); !s.ok()) return Fail(s);
  InstallCancelHandlers();
  PendingFile pending(a.dest);
  Stopwatch timer;
  Status s;
  switch (*format) {
    case Format::kNpy: s = ImportNpy(a, a.dtype, pending); break;
    case Format::kRaw: s = ImportRaw(a, pending); break;
    case Format::kText: s = ImportText(a, pending); break;
  }
  if (s.code() == Status::Code::kInterrupted) return FailInterrupted(s, a.dest + " was not created");
  if (!s.ok()) return Fail(s);
  if (Status c = pending.Commit(); !c.ok()) return Fail(c);
  std::fprintf(stderr, "imported %s into %s in %.1f ms\n", a.src.c_str(), a.dest.c_str(),
               timer.ElapsedMicros() / 1000);
  return kExitOk;
}

// ---- export ----------------------------------------------------------------

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

void RegisterTransferCommands(CLI::App& app, Command* run) {
  {
    auto a = std::make_shared<ImportArgs>();
    CLI::App* sub = app.add_subcommand("import", "make a new array DEST from a .npy, raw binary or text/CSV file");
    sub->add_option("SRC", a->src, "source file; - reads text (as --format csv) from stdin")->required();
    sub->add_option("DEST", a->dest, "new array file (.npy)")->required();
    sub->add_option("--dtype,-t", a->dtype, "element type of DEST (raw: of SRC too); default: SRC's, f8 for text");
    sub->add_option("--format", a->format, "SRC format: auto (by extension: .npy, .csv/.txt, else raw), npy, raw, csv")
        ->capture_default_str();
    sub->add_flag("--force", a->force, "replace DEST if it exists");
    AddCommonOptions(sub, &a->common, /*with_json=*/false);
    sub->footer("Examples: momenta import numbers.csv a.npy --dtype i4\n"
                "          momenta import samples.bin a.npy --dtype f4");
    sub->callback([a, run] { *run = [a] { return RunImport(*a); }; });
  }
  {
    auto a = std::make_shared<ExportArgs>();
    CLI::App* sub = app.add_subcommand("export", "write elements [P, Q) of an array to a .npy, raw or CSV file");
    sub->add_option("PATH", a->path, "array file (.npy)")->required();
    sub->add_option("DEST", a->dest, "output file; - writes raw (not to a terminal) or csv to stdout")->required();
    sub->add_option("--range,-r", a->range, "half-open slice P:Q (negative counts from the end)")
        ->capture_default_str();
    sub->add_option("--format", a->format, "auto (by DEST's extension), npy, raw, csv")->capture_default_str();
    sub->add_flag("--force", a->force, "replace DEST if it exists");
    AddCommonOptions(sub, &a->common, /*with_json=*/false);
    sub->footer("Example: momenta export big.npy part.csv --range 1000:2000");
    sub->callback([a, run] { *run = [a] { return RunExport(*a); }; });
  }
}

}  // namespace momenta::cli
