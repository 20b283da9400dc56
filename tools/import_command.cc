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

#include "storage/cancel.h"
#include "storage/posix_file.h"
#include "tools/buffer_options.h"
#include "tools/cli_common.h"
#include "tools/cli_signals.h"
#include "tools/commands.h"
#include "tools/text_values.h"
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
    return Status::InvalidArgument("stdin", "holds a .npy file, but import reads stdin as text "
                                            "(give the file's path instead of -)");
  if (text->find('\0') != std::string::npos)
    return Status::InvalidArgument("stdin", "holds binary data, but import reads stdin as text "
                                            "(for raw binary give a file path and --dtype)");
  return text;
}

struct ImportArgs {
  CommonOptions common;
  std::string src, dest;
  std::string dtype;
  std::string format = "auto";
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
        if (!v.ok())
          return v.status().WithContext(a.src + ": element " + std::to_string(at + k));
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
  sub->add_flag("--force", a->force, "replace DEST if it exists");
  AddBufferFlags(sub, &a->buffer);
  for (const char* flag : {"--buffer", "--order", "--bin", "--ram-budget", "--disk-tier", "--leaf", "--fanout"})
    sub->get_option(flag)->each([a](const std::string&) { a->build = true; });
  AddCommonOptions(sub, &a->common, /*with_json=*/false);
  sub->footer("Examples: momenta import numbers.csv a.npy --dtype i4\n"
              "          momenta import samples.bin a.npy --dtype f4");
  sub->callback([a, run] { *run = [a] { return RunImport(*a); }; });
}

}  // namespace momenta::cli
