// create, get, set: the commands that make and touch one array (info, which
// looks at one, is info_command.cc; registered here to keep --help's order).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "buffers/buffered_array.h"
#include "buffers/create_array.h"
#include "storage/util/json_writer.h"
#include "tools/buffer_options.h"
#include "tools/cli_common.h"
#include "tools/commands.h"

namespace momenta::cli {
namespace {

// ---- create ----------------------------------------------------------------

struct CreateArgs {
  CommonOptions common;
  std::string path;
  std::string length;
  std::vector<std::string> shape;
  std::string dtype = "f8";
  BufferFlags buffer;
};

int RunCreate(const CreateArgs& a) {
  auto dtype = ParseDTypeName(a.dtype);
  if (!dtype.ok()) return UsageFail(dtype.status().ToString());
  std::vector<uint64_t> shape;
  if (!a.shape.empty()) {
    if (!a.length.empty()) return UsageFail("give --length or --shape, not both");
    for (const auto& s : a.shape) {
      auto d = ParseCount(s, "--shape");
      if (!d.ok()) return FailParse(d.status());
      shape.push_back(*d);
    }
  } else {
    if (a.length.empty()) return UsageFail("create needs --length N (or --shape A,B,...)");
    auto n = ParseCount(a.length, "--length");
    if (!n.ok()) return FailParse(n.status());
    shape.push_back(*n);
  }
  auto io = MakeIoOptions(a.common, /*writable=*/true);
  if (!io.ok()) return UsageFail(io.status().ToString());
  auto tree = MakeTreeOptions(a.buffer);
  if (!tree.ok()) return UsageFail(tree.status().ToString());
  auto options = MakeBufferedOptions(a.path, a.common, /*writable=*/true, *tree);
  if (!options.ok()) return UsageFail(options.status().ToString());
  Stopwatch timer;
  std::vector<std::string> notices;
  auto buffered = CreateBufferedArray(a.path, *dtype, shape, *options, &notices);
  for (const auto& n : notices) PrintNotice(n);
  if (!buffered.ok()) return Fail(buffered.status());  // it left nothing behind
  BufferedArray& ba = **buffered;
  const double micros = timer.ElapsedMicros();
  const uint64_t bytes = ba.array().length() * ba.array().itemsize();
  const uint64_t allocated = AllocatedBytes(a.path);
  if (a.common.json) {
    JsonWriter j;
    j.BeginObject().Key("path").String(a.path).Key("dtype").String(DTypeName(*dtype));
    j.Key("shape").BeginArray();
    for (uint64_t d : shape) j.UInt(d);
    j.EndArray().Key("length").UInt(ba.length()).Key("data_bytes").UInt(bytes);
    j.Key("allocated_bytes").UInt(allocated).Key("elapsed_us").Double(micros).EndObject();
    std::printf("%s\n", j.str().c_str());
  } else {
    std::fprintf(stderr, "created %s: %llu x %s (%s of data, %s on disk) in %.1f ms\n", a.path.c_str(),
                 static_cast<unsigned long long>(ba.length()), std::string(DTypeName(*dtype)).c_str(),
                 FormatBytes(bytes).c_str(), FormatBytes(allocated).c_str(), micros / 1000);
  }
  return kExitOk;
}

// ---- get -------------------------------------------------------------------

struct GetArgs {
  CommonOptions common;
  std::string path;
  std::string index;
  std::string count = "1";
};

// Resolves a (possibly negative) element index and a count to a range.
// Malformed text is InvalidArgument (a usage error); a range outside the
// array is OutOfRange naming `path`.
Result<IndexRange> ResolveIndex(const std::string& path, std::string_view index, std::string_view count,
                                uint64_t length) {
  auto n = ParseCount(count, "--count");
  if (!n.ok()) return n.status();
  auto i = ParseIndex(index, "INDEX");
  if (!i.ok()) return i.status();
  const int64_t signed_length = static_cast<int64_t>(length);
  const int64_t first = *i < 0 ? *i + signed_length : *i;
  if (first < 0 || first > signed_length)
    return Status::OutOfRange(
        path, "index " + std::string(index) + " is outside the array (length " + std::to_string(length) + ")");
  const uint64_t begin = static_cast<uint64_t>(first);
  if (*n > length - begin)
    return Status::OutOfRange(path, "range " + std::to_string(begin) + ":" + std::to_string(begin + *n) +
                                        " is outside the array (length " + std::to_string(length) + ")");
  return IndexRange{begin, begin + *n};
}

int RunGet(const GetArgs& a) {
  auto array = OpenArray(a.path, a.common, /*writable=*/false);
  if (!array.ok()) return Fail(array.status());
  ArrayFile& f = **array;
  auto range = ResolveIndex(a.path, a.index, a.count, f.length());
  if (!range.ok()) return FailParse(range.status());
  constexpr uint64_t kChunk = 1 << 16;
  std::vector<Value> values;
  std::string out;
  if (a.common.json)
    out = "{\"path\":" + JsonWriter().String(a.path).str() + ",\"index\":" + std::to_string(range->begin) +
          ",\"values\":[";
  for (uint64_t at = range->begin; at < range->end; at += kChunk) {
    const uint64_t n = std::min(kChunk, range->end - at);
    if (Status s = f.ReadValues(at, n, &values); !s.ok()) return Fail(s);
    for (uint64_t k = 0; k < n; ++k) {
      if (a.common.json) {
        if (at + k != range->begin) out += ',';
        out += JsonWriter().ElementValue(values[k]).str();
      } else {
        out += FormatValue(f.dtype(), values[k]);
        out += '\n';
      }
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
    out.clear();
  }
  if (a.common.json) std::printf("]}\n");
  return kExitOk;
}

// ---- set -------------------------------------------------------------------

struct SetArgs {
  CommonOptions common;
  WriteFlags write;
  std::string path;
  std::string index;
  std::vector<std::string> values;
};

int RunSet(const SetArgs& a) {
  auto log = ParseLogChoice(a.write);
  auto time = ParseTimeFlag(a.write.time);
  if (!log.ok()) return UsageFail(log.status().ToString());
  if (!time.ok()) return UsageFail(time.status().ToString());
  auto buffered = OpenBuffered(a.path, a.common, /*writable=*/true, {}, *log);
  if (!buffered.ok()) return Fail(buffered.status());
  BufferedArray& ba = **buffered;
  ArrayFile& f = ba.array();
  // Check everything before the first byte changes: a bad value or range
  // leaves the file exactly as it was.
  auto range = ResolveIndex(a.path, a.index, std::to_string(a.values.size()), f.length());
  if (!range.ok()) return FailParse(range.status());
  std::vector<Value> parsed;
  parsed.reserve(a.values.size());
  for (const auto& text : a.values) {
    auto v = ParseValue(f.dtype(), text);
    if (!v.ok()) return Fail(v.status().WithContext(a.path));
    parsed.push_back(*v);
  }
  Stopwatch timer;
  if (Status s = ba.Write(range->begin, parsed, *time); !s.ok()) return Fail(s);
  if (Status s = ba.Close(); !s.ok()) return Fail(s);
  if (a.common.json) {
    JsonWriter j;
    j.BeginObject().Key("path").String(a.path).Key("index").UInt(range->begin);
    j.Key("count").UInt(parsed.size()).Key("elapsed_us").Double(timer.ElapsedMicros()).EndObject();
    std::printf("%s\n", j.str().c_str());
  }
  return kExitOk;
}

}  // namespace

void RegisterArrayCommands(CLI::App& app, Command* run) {
  {
    auto a = std::make_shared<CreateArgs>();
    CLI::App* sub =
        app.add_subcommand("create", "create a new sparse .npy array (instant, no disk used until written)");
    sub->add_option("PATH", a->path, "array file to create (must not exist)")->required();
    sub->add_option("--length,-n", a->length, "number of elements: 1000, 2^40, 3*2^20 (0: an empty array)");
    sub->add_option("--shape", a->shape, "N-D shape instead of --length, e.g. --shape 1024,1024")->delimiter(',');
    sub->add_option("--dtype,-t", a->dtype, "f8 f4 i8 i4 i2 i1 u8 u4 u2 u1")->capture_default_str();
    AddBufferFlags(sub, &a->buffer);
    AddCommonOptions(sub, &a->common);
    sub->footer("Example: momenta create big.npy --length 2^37 --dtype f8 --order 2");
    sub->callback([a, run] { *run = [a] { return RunCreate(*a); }; });
  }
  RegisterInfoCommand(app, run);
  {
    auto a = std::make_shared<GetArgs>();
    CLI::App* sub = app.add_subcommand("get", "print COUNT elements starting at INDEX, one per line");
    sub->add_option("PATH", a->path, "array file (.npy)")->required();
    sub->add_option("INDEX", a->index, "flat element index: 7, 2^30, -1 (negative counts from the end)")->required();
    sub->add_option("--count,-c", a->count, "number of consecutive elements")->capture_default_str();
    AddCommonOptions(sub, &a->common);
    sub->footer("Example: momenta get big.npy 1000 --count 5");
    sub->callback([a, run] { *run = [a] { return RunGet(*a); }; });
  }
  {
    auto a = std::make_shared<SetArgs>();
    CLI::App* sub = app.add_subcommand("set", "write consecutive VALUEs starting at INDEX");
    sub->add_option("PATH", a->path, "array file (.npy)")->required();
    sub->add_option("INDEX", a->index, "flat element index of the first value (negative counts from the end)")
        ->required();
    sub->add_option("VALUE", a->values, "values; each must fit the dtype exactly")->required();
    AddWriteFlags(sub, &a->write);
    AddCommonOptions(sub, &a->common);
    sub->footer(
        "Example: momenta set big.npy 1000 3.5 -2 7e3\n"
        "(put -- before negative first values if they look like options: set a.npy 0 -- -1)");
    sub->callback([a, run] { *run = [a] { return RunSet(*a); }; });
  }
}

}  // namespace momenta::cli
