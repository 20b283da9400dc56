// Empty arrays (length 0: shapes (0,), (3, 0)): every command and the
// BufferedArray API work on them — no division by a zero length, leaf count
// or level count — and a create that fails leaves no file behind.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "buffers/buffered_array.h"
#include "buffers/buffered_array_parts.h"
#include "buffers/tree/moment_tree.h"
#include "buffers/tree/tree_layout.h"
#include "storage/array/array_file.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using testing::CommandResult;
using testing::ReadFileBytes;
using testing::RunCli;
using testing::RunCommand;
using testing::RunPython;
using testing::ScratchDir;
using testing::WriteFileBytes;

#define SKIP_WITHOUT_NUMPY() \
  if (!testing::HaveNumpy()) GTEST_SKIP() << "no NumPy for /usr/bin/python3"

std::string Describe(const CommandResult& r) {
  return "exit " + std::to_string(r.exit_code) + " signal " + std::to_string(r.signal) + "\nstdout: " + r.out +
         "\nstderr: " + r.err;
}

// Exit 1 with one line on stderr that mentions `needle`.
void ExpectCleanFailure(const CommandResult& r, const std::string& needle) {
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << Describe(r);
  EXPECT_NE(r.err.find(needle), std::string::npos) << "missing '" << needle << "': " << Describe(r);
}

TEST(EmptyArrayTest, LayoutOfAnEmptyArrayHasNoLevelsAndAPositiveLeafSpan) {
  for (bool disk_tier : {true, false}) {
    TreeLayoutParams p;
    p.length = 0;
    p.disk_tier = disk_tier;
    const TreeLayout t(p);
    SCOPED_TRACE(disk_tier ? "disk tier" : "RAM only");
    EXPECT_EQ(t.levels(), 0);
    EXPECT_EQ(t.total_nodes(), 0u);
    EXPECT_EQ(t.ram_nodes(), 0u);
    EXPECT_GE(t.leaf_span(), 1u);
    EXPECT_EQ(t.ram_from(), 1);
    EXPECT_TRUE(t.Decompose(0, 0).runs.empty());
  }
  TreeLayoutParams p;
  p.length = 0;
  p.leaf_span = 4096;
  EXPECT_EQ(TreeLayout(p).leaf_span(), 4096u);
}

// Runs every command on the empty array `a` (dtype `dtype`, NumPy shape text
// `shape`) and checks each answer; the array's bytes never change.
void CheckEveryCommand(const ScratchDir& dir, const std::string& a, const std::string& dtype,
                       const std::string& shape) {
  SCOPED_TRACE(a + " " + dtype + " " + shape);
  const std::string before = ReadFileBytes(a);

  auto info = RunCli({"info", a});
  ASSERT_EQ(info.exit_code, 0) << Describe(info);
  EXPECT_NE(info.out.find("shape:       " + shape), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("length:      0 elements"), std::string::npos) << info.out;

  ExpectCleanFailure(RunCli({"get", a, "0"}), "outside the array (length 0)");
  ExpectCleanFailure(RunCli({"get", a, "-1"}), "length 0");
  ExpectCleanFailure(RunCli({"set", a, "0", "1"}), "outside the array (length 0)");
  auto none = RunCli({"update", a}, "");
  EXPECT_EQ(none.exit_code, 0) << Describe(none);
  ExpectCleanFailure(RunCli({"update", a}, "0 1\n"), "outside the array (length 0)");
  auto log = RunCli({"log", a});
  EXPECT_EQ(log.exit_code, 0) << Describe(log);
  EXPECT_EQ(log.out, "");

  for (const char* range : {"0:0", ":", "0:", "-0:"}) {
    SCOPED_TRACE(range);
    auto q =
        RunCli({"query", a, "--range", range, "--stat", "count", "--stat", "sum", "--stat", "moments", "--order", "2"});
    EXPECT_EQ(q.exit_code, 0) << Describe(q);
    EXPECT_EQ(q.out, "count 0\nsum 0\nmoments 0 0 0\n");
  }
  auto json = RunCli({"query", a, "--range", "0:0", "--stat", "count", "--stat", "sum", "--json"});
  EXPECT_EQ(json.exit_code, 0) << Describe(json);
  EXPECT_NE(json.out.find("\"stats\":{\"count\":0,\"sum\":0}"), std::string::npos) << json.out;
  for (const char* stat : {"mean", "var", "std", "min", "max", "com", "spread"}) {
    SCOPED_TRACE(stat);
    ExpectCleanFailure(RunCli({"query", a, "--range", "0:0", "--stat", stat}), "empty");
  }
  ExpectCleanFailure(RunCli({"query", a, "--range", "0:1", "--stat", "sum"}), "length 0");
  ExpectCleanFailure(RunCli({"query", a, "--range", "-1:", "--stat", "sum"}), "length 0");

  for (const char* tier : {"off", "on"}) {
    auto build = RunCli({"build", a, "--disk-tier", tier});
    EXPECT_EQ(build.exit_code, 0) << Describe(build);
    auto verify = RunCli({"verify", a});
    EXPECT_EQ(verify.exit_code, 0) << Describe(verify);
    EXPECT_NE(verify.err.find("0 nodes checked, 0 mismatches"), std::string::npos) << verify.err;
    auto built = RunCli({"info", a});
    EXPECT_NE(built.out.find("levels:    0 (leaf = "), std::string::npos) << built.out;
  }

  // export to each format, then import each back.
  const std::string out_npy = dir.File("out.npy"), out_csv = dir.File("out.csv"), out_raw = dir.File("out.bin");
  for (const std::string& out : {out_npy, out_csv, out_raw}) {
    std::filesystem::remove(out);
    auto e = RunCli({"export", a, out});
    EXPECT_EQ(e.exit_code, 0) << out << ": " << Describe(e);
  }
  EXPECT_EQ(ReadFileBytes(out_csv), "");
  EXPECT_EQ(ReadFileBytes(out_raw), "");
  auto stdout_csv = RunCli({"export", a, "-", "--format", "csv"});
  EXPECT_EQ(stdout_csv.exit_code, 0) << Describe(stdout_csv);
  EXPECT_EQ(stdout_csv.out, "");
  struct Source {
    std::string path;
    std::vector<std::string> extra;
  };
  for (const Source& src :
       {Source{a, {}}, Source{out_npy, {}}, Source{out_csv, {}}, Source{out_raw, {"--dtype", dtype}}}) {
    SCOPED_TRACE("import " + src.path);
    const std::string dest = dir.File("imported.npy");
    std::filesystem::remove(dest);
    std::filesystem::remove_all(SidecarPath(dest));
    std::vector<std::string> args{"import", src.path, dest};
    args.insert(args.end(), src.extra.begin(), src.extra.end());
    auto i = RunCli(args);
    ASSERT_EQ(i.exit_code, 0) << Describe(i);
    auto q = RunCli({"query", dest, "--range", ":", "--stat", "count", "--stat", "sum"});
    EXPECT_EQ(q.exit_code, 0) << Describe(q);
    EXPECT_EQ(q.out, "count 0\nsum 0\n");
  }
  auto piped = RunCli({"import", "-", dir.File("piped.npy"), "--format", "csv"}, "");
  EXPECT_EQ(piped.exit_code, 0) << Describe(piped);
  std::filesystem::remove(dir.File("piped.npy"));
  std::filesystem::remove_all(SidecarPath(dir.File("piped.npy")));

  EXPECT_EQ(ReadFileBytes(a), before) << "a command changed the empty array's bytes";
  // NumPy reads what momenta wrote and exported, with the same dtype and shape.
  if (testing::HaveNumpy()) {
    auto py = RunPython(
        "import numpy as np\n"
        "for p in ['" +
        a + "', '" + out_npy +
        "']:\n"
        "    x = np.load(p, mmap_mode='r')\n"
        "    print(x.dtype.str, x.shape)\n");
    EXPECT_EQ(py.exit_code, 0) << Describe(py);
    const std::string line = "<" + dtype + " " + shape + "\n";
    const std::string want = (dtype == "u1" || dtype == "i1" ? "|" + dtype + " " + shape + "\n" : line);
    EXPECT_EQ(py.out, want + want);
  }
}

TEST(EmptyArrayTest, EveryCommandWorksOnEmptyArraysNumpyWrote) {
  SKIP_WITHOUT_NUMPY();
  const struct {
    const char* name;
    const char* shape;
    const char* dtype;
  } kCases[] = {{"flat", "(0,)", "f8"}, {"rows", "(3, 0)", "u1"}};
  for (const auto& c : kCases) {
    ScratchDir dir;
    const std::string a = dir.File(std::string(c.name) + ".npy");
    auto py =
        RunPython("import numpy as np\nnp.save('" + a + "', np.zeros(" + c.shape + ", dtype='" + c.dtype + "'))\n");
    ASSERT_EQ(py.exit_code, 0) << Describe(py);
    CheckEveryCommand(dir, a, c.dtype, c.shape);
  }
}

TEST(EmptyArrayTest, EveryCommandWorksOnEmptyArraysMomentaCreated) {
  const struct {
    std::vector<std::string> shape_args;
    const char* shape;
    const char* dtype;
  } kCases[] = {{{"--length", "0"}, "(0,)", "f8"}, {{"--shape", "3,0"}, "(3, 0)", "i4"}};
  for (const auto& c : kCases) {
    ScratchDir dir;
    const std::string a = dir.File("e.npy");
    std::vector<std::string> args{"create", a, "--dtype", c.dtype};
    args.insert(args.end(), c.shape_args.begin(), c.shape_args.end());
    auto r = RunCli(args);
    ASSERT_EQ(r.exit_code, 0) << Describe(r);
    CheckEveryCommand(dir, a, c.dtype, c.shape);
  }
}

TEST(EmptyArrayTest, BufferedArrayOnAnEmptyArray) {
  ScratchDir dir;
  const std::string a = dir.File("e.npy");
  const uint64_t shape[] = {3, 0};
  IoOptions io;
  io.writable = true;
  ASSERT_OK(ArrayFile::Create(a, DType::kF8, shape, io));
  BufferedArrayOptions options;
  options.io.writable = true;
  {
    auto w = BufferedArray::Open(a, options);
    ASSERT_OK(w);
    BufferedArray& b = **w;
    EXPECT_EQ(b.length(), 0u);
    EXPECT_EQ(TreeOf(b).layout().levels(), 0);
    auto s = b.Summarize(0, 0, /*need_extremes=*/true);
    ASSERT_OK(s);
    EXPECT_EQ(s->count(), 0u);
    EXPECT_EQ(b.Summarize(0, 1, false).status().code(), Status::Code::kOutOfRange);
    EXPECT_OK(b.Write(0, std::vector<Value>{}));
    EXPECT_EQ(b.Write(0, std::vector<Value>{Value::Float(1)}).code(), Status::Code::kOutOfRange);
    EXPECT_OK(b.Apply(std::vector<IndexedValue>{}));
    const std::vector<IndexedValue> one{{0, Value::Float(1)}};
    EXPECT_EQ(b.Apply(one).code(), Status::Code::kOutOfRange);
    EXPECT_OK(b.Commit());
    auto rebuilt = b.Rebuild(TreeOptions{});
    ASSERT_OK(rebuilt);
    EXPECT_EQ(rebuilt->data_bytes_read, 0u);
    auto report = b.Verify();
    ASSERT_OK(report);
    EXPECT_EQ(report->mismatches, 0u);
    EXPECT_OK(b.Close());
  }
  auto r = BufferedArray::Open(a, BufferedArrayOptions{});
  ASSERT_OK(r);
  auto s = (*r)->Summarize(0, 0, false);
  ASSERT_OK(s);
  EXPECT_EQ(s->count(), 0u);
}

// After a failed create, neither the array nor its sidecar is there, and the
// retry is not refused with "File exists".
void ExpectNothingLeft(const std::string& a) {
  EXPECT_FALSE(std::filesystem::exists(a)) << a << " was left behind";
  EXPECT_FALSE(std::filesystem::exists(SidecarPath(a))) << SidecarPath(a) << " was left behind";
}

TEST(EmptyArrayTest, FailedCreateLeavesNothing) {
  ScratchDir dir;
  // 1. The error comes after the array file was made: its sidecar cannot be a folder.
  const std::string a = dir.File("a.npy");
  WriteFileBytes(SidecarPath(a), "in the way");
  ExpectCleanFailure(RunCli({"create", a, "--length", "0"}), SidecarPath(a));
  EXPECT_FALSE(std::filesystem::exists(a)) << "the array was left behind";
  EXPECT_EQ(ReadFileBytes(SidecarPath(a)), "in the way");  // not ours: untouched
  std::filesystem::remove(SidecarPath(a));
  EXPECT_EQ(RunCli({"create", a, "--length", "0"}).exit_code, 0);

  // 2. No room: files may not grow past 8 KiB (bash's ulimit -f counts KiB), so
  //    the 12 KiB array does not fit.
  const std::string b = dir.File("b.npy");
  auto full = RunCommand(
      {"/bin/bash", "-c", "trap '' XFSZ; ulimit -f 8; exec \"$0\" create \"$1\" --length 1000", MOMENTA_CLI_PATH, b});
  ExpectCleanFailure(full, "File too large");
  ExpectNothingLeft(b);

  // 3. A folder that does not exist or cannot be written.
  ExpectCleanFailure(RunCli({"create", dir.File("no/such/c.npy"), "--length", "0"}), "c.npy");
  ExpectNothingLeft(dir.File("no/such/c.npy"));
  if (::geteuid() != 0) {
    const std::string ro = dir.File("ro");
    std::filesystem::create_directory(ro);
    ::chmod(ro.c_str(), 0555);
    ExpectCleanFailure(RunCli({"create", ro + "/d.npy", "--length", "0"}), "d.npy");
    ExpectNothingLeft(ro + "/d.npy");
    ::chmod(ro.c_str(), 0755);
  }
}

}  // namespace
}  // namespace momenta
