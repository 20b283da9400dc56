// momenta import: make a new array from a .npy, raw binary or text/CSV file,
// written beside the destination and renamed into place (transfer_files.h).
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
#include "tools/buffer_options.h"
#include "tools/cli_common.h"
#include "tools/cli_signals.h"
#include "tools/commands.h"
#include "tools/text_table.h"
#include "tools/transfer_files.h"

namespace momenta::cli {
namespace {

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

// Reads all of `path` ("-" = stdin) as text. Binary bytes on stdin (a .npy
// file, raw data) are refused: only a file path can say what they are.
Result<std::string> ReadAllText(const std::string& path) {
  auto text = ReadWholeInput(path);
  if (!text.ok() || path != "-") return text;
  if (text->rfind("\x93NUMPY", 0) == 0)
    return Status::InvalidArgument("stdin",
                                   "holds a .npy file, but import reads stdin as text "
                                   "(give the file's path instead of -)");
  if (text->find('\0') != std::string::npos)
    return Status::InvalidArgument("stdin",
                                   "holds binary data, but import reads stdin as text "
                                   "(for raw binary give a file path and --dtype)");
  return text;
}

struct ImportArgs {
  CommonOptions common;
  std::string src, dest;
  std::string dtype;
  std::string format = "auto";
  std::string offset;     // raw: bytes of SRC skipped before the first element
  std::string skip_rows;  // text: lines skipped first (a header)
  std::string column;     // text: the one column taken (an index or a header name)
  bool force = false;
  BufferFlags buffer;  // --buffer, --order, ...: build the buffer so right after
  bool build = false;  // a buffer flag was given
};

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
        if (!v.ok()) return v.status().WithContext(a.src + ": element " + std::to_string(at + k));
        converted.push_back(*v);
      }
      MOMENTA_RETURN_IF_ERROR(out.WriteValues(at, converted));
    }
    progress.Update((at + n) * in.itemsize());
  }
  return out.Sync();
}

// The elements of a raw SRC: its bytes after `offset` (a WAV's 44-byte header,
// say), which must be whole elements.
Result<uint64_t> RawLength(const ImportArgs& a, uint64_t size, uint64_t offset, size_t item) {
  if (offset > size)
    return Status::InvalidArgument(a.src, "--offset " + std::to_string(offset) + " is past the end of the file (" +
                                              std::to_string(size) + " bytes)");
  const uint64_t bytes = size - offset;
  if (bytes % item != 0) {
    const std::string after = offset == 0 ? "" : " after --offset " + std::to_string(offset);
    return Status::InvalidArgument(a.src, "size " + std::to_string(bytes) + " bytes" + after +
                                              " is not a multiple of the itemsize " + std::to_string(item) +
                                              " of dtype " + a.dtype);
  }
  return bytes / item;
}

Status ImportRaw(const ImportArgs& a, uint64_t offset, PendingFile& pending) {
  if (a.dtype.empty()) return Status::InvalidArgument(a.src, "raw input needs --dtype (the element type of the bytes)");
  auto dtype = ParseDTypeName(a.dtype);
  if (!dtype.ok()) return dtype.status();
  IoOptions io_opts;
  io_opts.kind = IoKind::kPread;
  auto src = OpenIoBackend(a.src, io_opts);
  if (!src.ok()) return src.status();
  auto size = (*src)->Size();
  if (!size.ok()) return size.status();
  const size_t item = DTypeSize(*dtype);
  auto counted = RawLength(a, *size, offset, item);
  if (!counted.ok()) return counted.status();
  const uint64_t length = *counted;
  const uint64_t shape[] = {length};
  auto dest = CreateDest(pending, *dtype, shape, a.common);
  if (!dest.ok()) return dest.status();
  ArrayFile& out = **dest;
  std::vector<char> raw(kChunkBytes - kChunkBytes % item);
  Progress progress("import " + a.src, length * item);
  const uint64_t per_chunk = raw.size() / item;
  for (uint64_t at = 0; at < length; at += per_chunk) {
    MOMENTA_RETURN_IF_ERROR(CheckCancel(a.src));
    const uint64_t n = std::min(per_chunk, length - at);
    MOMENTA_RETURN_IF_ERROR((*src)->Read(offset + at * item, n * item, raw.data()));
    // Raw floats are taken as they are; raw integers always fit their dtype.
    if (!AllZero(raw.data(), n * item)) MOMENTA_RETURN_IF_ERROR(out.WriteRaw(at, n, raw.data()));
    progress.Update((at + n) * item);
  }
  return out.Sync();
}

// "in.csv: line 1 holds no number: skipped as a header (time, value)".
std::string HeaderNotice(const std::string& name, const TextTable& table) {
  std::string names;
  for (const auto& n : table.names) names += (names.empty() ? "" : ", ") + n;
  if (names.size() > 60) names = names.substr(0, 57) + "...";
  return name + ": line " + std::to_string(table.header_line) + " holds no number: skipped as a header (" + names + ")";
}

// Rows of K values import as shape (N, K) (tools/text_table.h); a header
// found by its content is said on stderr, as it is skipped.
Status ImportText(const ImportArgs& a, uint64_t skip_rows, PendingFile& pending) {
  auto dtype = ParseDTypeName(a.dtype.empty() ? "f8" : a.dtype);
  if (!dtype.ok()) return dtype.status();
  TextTableOptions opts;
  opts.column = a.column;
  opts.skip_rows = skip_rows;
  auto text = ReadAllText(a.src);
  if (!text.ok()) return text.status();
  const std::string name = a.src == "-" ? "stdin" : a.src;
  // Pass 1 checks every value and row, so bad input stops the import before any output.
  auto table = ScanTextTable(*text, *dtype, name, opts);
  if (!table.ok()) return table.status();
  if (table->header_detected) PrintNotice(HeaderNotice(name, *table));
  const std::vector<uint64_t> shape = table->Shape();
  auto dest = CreateDest(pending, *dtype, shape, a.common);
  if (!dest.ok()) return dest.status();
  ArrayFile& out = **dest;
  const uint64_t count = out.length();
  std::vector<Value> batch;
  uint64_t at = 0;
  Progress progress("import " + a.src, text->size());
  MOMENTA_RETURN_IF_ERROR(ForEachTableValue(*text, *table, name, [&](std::string_view tok, uint64_t) {
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
  if (!a.offset.empty() && *format != Format::kRaw)
    return UsageFail("--offset applies to raw input only (--format raw)");
  if ((!a.skip_rows.empty() || !a.column.empty()) && *format != Format::kText)
    return UsageFail(std::string(a.column.empty() ? "--skip-rows" : "--column") +
                     " applies to text/CSV input only (--format csv)");
  auto offset = ParseCount(a.offset.empty() ? "0" : a.offset, "--offset");
  if (!offset.ok()) return FailParse(offset.status());
  auto skip_rows = ParseCount(a.skip_rows.empty() ? "0" : a.skip_rows, "--skip-rows");
  if (!skip_rows.ok()) return FailParse(skip_rows.status());
  if (Status s = CheckDestination(a.dest, a.force); !s.ok()) return Fail(s);
  InstallCancelHandlers();
  PendingFile pending(a.dest);
  Stopwatch timer;
  Status s;
  switch (*format) {
    case Format::kNpy:
      s = ImportNpy(a, a.dtype, pending);
      break;
    case Format::kRaw:
      s = ImportRaw(a, *offset, pending);
      break;
    case Format::kText:
      s = ImportText(a, *skip_rows, pending);
      break;
  }
  if (s.code() == Status::Code::kInterrupted) return FailInterrupted(s, a.dest + " was not created");
  if (!s.ok()) return Fail(s);
  if (Status c = pending.Commit(); !c.ok()) return Fail(c);
  std::fprintf(stderr, "imported %s into %s in %.1f ms\n", a.src.c_str(), a.dest.c_str(), timer.ElapsedMicros() / 1000);
  if (a.build) {  // the buffer asked for, built now (else the first query builds the default one)
    auto tree = MakeTreeOptions(a.buffer);
    if (!tree.ok()) return UsageFail(tree.status().ToString());
    auto ba = OpenBuffered(a.dest, a.common, /*writable=*/true, *tree, {}, /*rebuild_on_open=*/true,
                           /*fresh_array=*/true);
    if (!ba.ok()) return FailOrInterrupted(ba.status());
    if (Status s = (*ba)->Close(); !s.ok()) return Fail(s);
  }
  return kExitOk;
}

}  // namespace

void RegisterImportCommand(CLI::App& app, Command* run) {
  auto a = std::make_shared<ImportArgs>();
  CLI::App* sub = app.add_subcommand("import", "make a new array DEST from a .npy, raw binary or text/CSV file");
  sub->add_option("SRC", a->src, "source file; - reads text (as --format csv) from stdin")->required();
  sub->add_option("DEST", a->dest, "new array file (.npy)")->required();
  sub->add_option("--dtype,-t", a->dtype, "element type of DEST (raw: of SRC too); default: SRC's, f8 for text");
  sub->add_option("--format", a->format, "SRC format: auto (by extension: .npy, .csv/.txt, else raw), npy, raw, csv")
      ->capture_default_str();
  sub->add_option("--offset", a->offset, "raw: skip this many bytes of SRC first (e.g. 44, a WAV's header)");
  sub->add_option("--skip-rows", a->skip_rows,
                  "csv: skip the first N lines (a header; its last line names the columns for --column)");
  sub->add_option("--column", a->column,
                  "csv: import only column J (from 0; -1 is the last) or the one the header names");
  sub->add_flag("--force", a->force, "replace DEST if it exists");
  AddBufferFlags(sub, &a->buffer);
  for (const char* flag : {"--buffer", "--order", "--bin", "--ram-budget", "--disk-tier", "--leaf", "--fanout"})
    sub->get_option(flag)->each([a](const std::string&) { a->build = true; });
  AddCommonOptions(sub, &a->common, /*with_json=*/false);
  sub->footer(
      "Text/CSV is read as numpy.loadtxt reads it: each line holding values is a row, every row has\n"
      "the same number K of values (separated by commas, semicolons, blanks or tabs; '#' starts a\n"
      "comment), and rows of K > 1 values make an array of shape (N, K); one row makes (K,). A first\n"
      "line holding no number is a header: skipped, with a note on stderr.\n"
      "Examples: momenta import numbers.csv a.npy --dtype i4\n"
      "          momenta import table.csv t.npy                  # '0,1.5\\n1,2.5' -> shape (2, 2)\n"
      "          momenta import table.csv v.npy --column value   # one column, by index or header name\n"
      "          momenta import samples.bin a.npy --dtype f4\n"
      "          momenta import rec.wav s.npy --format raw --dtype i2 --offset 44   # after the header");
  sub->callback([a, run] { *run = [a] { return RunImport(*a); }; });
}

}  // namespace momenta::cli
