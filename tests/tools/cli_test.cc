// The momenta CLI end to end: exit codes (0 ok, 1 runtime, 2 usage), one-line
// errors naming the file, and bad input leaving files exactly as they were.
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "tests/test_util.h"

namespace momenta {
namespace {

using testing::CommandResult;
using testing::ReadFileBytes;
using testing::RunCli;
using testing::ScratchDir;
using testing::WriteFileBytes;

// The error is exactly one line, starts with "momenta: " and mentions `needle`.
void ExpectOneLineError(const CommandResult& r, const std::string& needle) {
  EXPECT_EQ(r.err.rfind("momenta: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << "missing '" << needle << "' in: " << r.err;
}

TEST(CliTest, VersionAndHelp) {
  auto v = RunCli({"--version"});
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_NE(v.out.find("momenta 0."), std::string::npos) << v.out;
  // The commit it was built from, in parentheses (a hash, "-dirty" with
  // uncommitted changes, "unknown" outside git): bench reports name it.
  EXPECT_TRUE(std::regex_search(v.out, std::regex(R"(\(([0-9a-f]{7,}(-dirty)?|unknown)\))"))) << v.out;
  auto h = RunCli({"--help"});
  EXPECT_EQ(h.exit_code, 0);
  for (const char* cmd : {"create", "info", "get", "set", "import", "export"}) {
    SCOPED_TRACE(cmd);
    EXPECT_NE(h.out.find(cmd), std::string::npos);
    auto sub = RunCli({cmd, "--help"});
    EXPECT_EQ(sub.exit_code, 0);
    EXPECT_NE(sub.out.find("Example"), std::string::npos) << sub.out;
  }
}

TEST(CliTest, UsageErrorsExitTwo) {
  ScratchDir dir;
  const std::string a = dir.File("a.npy");
  EXPECT_EQ(RunCli({}).exit_code, 2);
  EXPECT_EQ(RunCli({"frobnicate"}).exit_code, 2);
  EXPECT_EQ(RunCli({"create", a}).exit_code, 2);                     // no --length
  EXPECT_EQ(RunCli({"create", a, "--length", "ten"}).exit_code, 2);  // not a count
  EXPECT_EQ(RunCli({"create", a, "--length", "10", "--dtype", "c16"}).exit_code, 2);
  EXPECT_EQ(RunCli({"create", a, "--length", "10", "--io", "floppy"}).exit_code, 2);
  EXPECT_EQ(RunCli({"create", a, "--length", "10", "--bogus"}).exit_code, 2);
  EXPECT_FALSE(std::filesystem::exists(a));
  ASSERT_EQ(RunCli({"create", a, "--length", "10"}).exit_code, 0);
  EXPECT_EQ(RunCli({"get", a}).exit_code, 2);  // INDEX missing
  EXPECT_EQ(RunCli({"get", a, "abc"}).exit_code, 2);
  EXPECT_EQ(RunCli({"export", a, dir.File("o.csv"), "--range", "1-3"}).exit_code, 2);
}

// A create whose buffer cannot be made (its sidecar under a plain file) leaves
// no array behind, so the retry does not meet "File exists" (the library's
// create-with-rollback, which momenta.create uses too).
TEST(CliTest, CreateThatFailsLeavesNothingBehind) {
  ScratchDir dir;
  const std::string a = dir.File("a.npy");
  WriteFileBytes(dir.File("plain"), "x");
  auto failed = RunCli({"create", a, "--length", "100", "--sidecar", dir.File("plain") + "/side"});
  EXPECT_EQ(failed.exit_code, 1) << failed.err;
  EXPECT_FALSE(std::filesystem::exists(a));
  auto retried = RunCli({"create", a, "--length", "100", "--sidecar", dir.File("side")});
  EXPECT_EQ(retried.exit_code, 0) << retried.err;
}

TEST(CliTest, CreateSetGetInfoRoundTrip) {
  ScratchDir dir;
  const std::string a = dir.File("a.npy");
  auto c = RunCli({"create", a, "--length", "3*2^10", "--dtype", "i4"});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  ASSERT_EQ(RunCli({"set", a, "5", "7", "-8", "2147483647"}).exit_code, 0);
  ASSERT_EQ(RunCli({"set", a, "-1", "--", "-2147483648"}).exit_code, 0);
  auto g = RunCli({"get", a, "4", "--count", "5"});
  ASSERT_EQ(g.exit_code, 0) << g.err;
  EXPECT_EQ(g.out, "0\n7\n-8\n2147483647\n0\n");
  auto last = RunCli({"get", a, "3071"});
  EXPECT_EQ(last.out, "-2147483648\n");
  auto j = RunCli({"get", a, "5", "--count", "2", "--json"});
  EXPECT_EQ(j.out, "{\"path\":\"" + a + "\",\"index\":5,\"values\":[7,-8]}\n");
  auto info = RunCli({"info", a, "--json"});
  ASSERT_EQ(info.exit_code, 0) << info.err;
  EXPECT_NE(info.out.find("\"dtype\":\"i4\""), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("\"length\":3072"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("\"data_offset\":4096"), std::string::npos) << info.out;
  for (const char* io : {"pread", "mmap", "uring", "auto"}) {
    SCOPED_TRACE(io);
    auto r = RunCli({"get", a, "6", "--io", io});
    if (std::string(io) == "uring" && r.exit_code != 0 && r.err.find("io_uring unavailable") != std::string::npos)
      continue;  // kernel refuses rings here; the backend tests cover the fallback
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "-8\n");
  }
}

TEST(CliTest, SparseTerabyteCreate) {
  ScratchDir dir;
  const std::string a = dir.File("big.npy");
  auto c = RunCli({"create", a, "--length", "2^40", "--json"});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  struct stat st;
  ASSERT_EQ(::stat(a.c_str(), &st), 0);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), 4096 + (uint64_t{8} << 40));
  EXPECT_LT(static_cast<uint64_t>(st.st_blocks) * 512, uint64_t{1} << 20);
  ASSERT_EQ(RunCli({"set", a, "1099511627775", "42.5"}).exit_code, 0);
  EXPECT_EQ(RunCli({"get", a, "-1"}).out, "42.5\n");
}

TEST(CliTest, RuntimeErrorsNameTheFileAndChangeNothing) {
  ScratchDir dir;
  const std::string a = dir.File("a.npy");
  ASSERT_EQ(RunCli({"create", a, "--length", "10", "--dtype", "u1"}).exit_code, 0);
  ASSERT_EQ(RunCli({"set", a, "0", "1", "2", "3"}).exit_code, 0);
  const std::string before = ReadFileBytes(a);

  auto exists = RunCli({"create", a, "--length", "5"});
  EXPECT_EQ(exists.exit_code, 1);
  ExpectOneLineError(exists, a);

  auto missing = RunCli({"info", dir.File("nope.npy")});
  EXPECT_EQ(missing.exit_code, 1);
  ExpectOneLineError(missing, dir.File("nope.npy"));

  for (const auto& [args, needle] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"set", a, "0", "300"}, "300"},
           {{"set", a, "0", "1.5"}, "1.5"},
           {{"set", a, "0", "nan"}, "nan"},
           {{"set", a, "0", "-1"}, "-1"},
           {{"set", a, "8", "1", "2", "3"}, "outside"},
           {{"set", a, "10", "1"}, "outside"},
           {{"get", a, "10"}, "outside"},
           {{"get", a, "8", "--count", "3"}, "outside"},
           {{"export", a, dir.File("o.csv"), "--range", "5:11"}, "not a range"},
           {{"export", a, dir.File("o.csv"), "--range", "6:5"}, "not a range"},
       }) {
    SCOPED_TRACE(::testing::PrintToString(args));
    auto r = RunCli(args);
    EXPECT_EQ(r.exit_code, 1);
    ExpectOneLineError(r, needle);
    EXPECT_EQ(ReadFileBytes(a), before);
  }
  EXPECT_FALSE(std::filesystem::exists(dir.File("o.csv")));

  const std::string foreign = dir.File("foreign.npy");
  WriteFileBytes(foreign, "hello, I am a text file\n");
  auto f = RunCli({"get", foreign, "0"});
  EXPECT_EQ(f.exit_code, 1);
  ExpectOneLineError(f, foreign);

  const std::string truncated = dir.File("truncated.npy");
  WriteFileBytes(truncated, before.substr(0, 4096 + 5));
  auto t = RunCli({"get", truncated, "0"});
  EXPECT_EQ(t.exit_code, 1);
  ExpectOneLineError(t, truncated);
}

TEST(CliTest, ImportExportRoundTrips) {
  ScratchDir dir;
  const std::string csv = dir.File("in.csv");
  WriteFileBytes(csv, "# a comment\n1\n-2.5\n\n3e2\r\n0.1 # a tail\n7\n");
  const std::string a = dir.File("a.npy");
  auto imp = RunCli({"import", csv, a});
  ASSERT_EQ(imp.exit_code, 0) << imp.err;
  EXPECT_EQ(RunCli({"get", a, "0", "--count", "5"}).out, "1\n-2.5\n300\n0.1\n7\n");

  // export -> raw -> import raw -> identical bytes of data
  ASSERT_EQ(RunCli({"export", a, dir.File("a.raw")}).exit_code, 0);
  EXPECT_EQ(ReadFileBytes(dir.File("a.raw")).size(), 5u * 8);
  ASSERT_EQ(RunCli({"import", dir.File("a.raw"), dir.File("b.npy"), "--dtype", "f8"}).exit_code, 0);
  EXPECT_EQ(ReadFileBytes(dir.File("b.npy")).substr(4096), ReadFileBytes(a).substr(4096));

  // export a slice to csv, to npy and to stdout
  ASSERT_EQ(RunCli({"export", a, dir.File("s.csv"), "--range", "1:3"}).exit_code, 0);
  EXPECT_EQ(ReadFileBytes(dir.File("s.csv")), "-2.5\n300\n");
  ASSERT_EQ(RunCli({"export", a, dir.File("s.npy"), "--range", "-2:"}).exit_code, 0);
  EXPECT_EQ(RunCli({"get", dir.File("s.npy"), "0", "--count", "2"}).out, "0.1\n7\n");
  EXPECT_EQ(RunCli({"export", a, "-", "--format", "csv", "--range", ":2"}).out, "1\n-2.5\n");

  // stdin import with a dtype
  auto in = RunCli({"import", "-", dir.File("i.npy"), "--dtype", "i2", "--format", "csv"}, "1\n2\n-3\n");
  ASSERT_EQ(in.exit_code, 0) << in.err;
  EXPECT_EQ(RunCli({"get", dir.File("i.npy"), "0", "--count", "3"}).out, "1\n2\n-3\n");

  // npy -> npy with a dtype conversion that fits, and one that does not
  ASSERT_EQ(RunCli({"import", dir.File("i.npy"), dir.File("j.npy"), "--dtype", "f4"}).exit_code, 0);
  EXPECT_EQ(RunCli({"get", dir.File("j.npy"), "2"}).out, "-3\n");
  auto bad = RunCli({"import", dir.File("i.npy"), dir.File("k.npy"), "--dtype", "u1"});
  EXPECT_EQ(bad.exit_code, 1);
  ExpectOneLineError(bad, "element 2");
  EXPECT_FALSE(std::filesystem::exists(dir.File("k.npy")));
}

TEST(CliTest, BadImportsLeaveNoDestination) {
  ScratchDir dir;
  WriteFileBytes(dir.File("bad.csv"), "1\n2\nthree\n");
  auto r = RunCli({"import", dir.File("bad.csv"), dir.File("d.npy")});
  EXPECT_EQ(r.exit_code, 1);
  ExpectOneLineError(r, "line 3");
  WriteFileBytes(dir.File("odd.raw"), std::string(13, 'x'));
  auto o = RunCli({"import", dir.File("odd.raw"), dir.File("d.npy"), "--dtype", "f8"});
  EXPECT_EQ(o.exit_code, 1);
  ExpectOneLineError(o, "multiple");
  auto n = RunCli({"import", dir.File("odd.raw"), dir.File("d.npy")});
  EXPECT_EQ(n.exit_code, 1);
  ExpectOneLineError(n, "--dtype");
  // An existing destination is never overwritten without --force.
  WriteFileBytes(dir.File("keep.npy"), "precious");
  WriteFileBytes(dir.File("ok.csv"), "1\n");
  auto k = RunCli({"import", dir.File("ok.csv"), dir.File("keep.npy")});
  EXPECT_EQ(k.exit_code, 1);
  EXPECT_EQ(ReadFileBytes(dir.File("keep.npy")), "precious");
  EXPECT_FALSE(std::filesystem::exists(dir.File("d.npy")));
  for (const auto& e : std::filesystem::directory_iterator(dir.path()))
    EXPECT_EQ(e.path().string().find(".partial-"), std::string::npos) << e.path();
}

// Disk full on a small tmpfs: the import fails with ENOSPC, leaves nothing,
// and an array already there keeps its contents and still opens.
TEST(CliTest, DiskFull) {
  ScratchDir dir;
  const std::string mnt = dir.File("small");
  std::filesystem::create_directory(mnt);
  testing::TmpfsMount tmpfs(mnt, "256k");
  if (!tmpfs.mounted()) GTEST_SKIP() << "cannot mount a small tmpfs here (" << tmpfs.error() << ")";
  const std::string a = mnt + "/a.npy";
  ASSERT_EQ(RunCli({"create", a, "--length", "2^20", "--dtype", "f8"}).exit_code, 0);
  ASSERT_EQ(RunCli({"set", a, "0", "1", "2"}).exit_code, 0);
  std::string many = "1\n";
  for (int k = 0; k < 100000; ++k) many += "3\n";
  WriteFileBytes(dir.File("many.csv"), many);
  auto r = RunCli({"import", dir.File("many.csv"), mnt + "/b.npy"});
  EXPECT_EQ(r.exit_code, 1);
  ExpectOneLineError(r, "No space left on device");
  EXPECT_FALSE(std::filesystem::exists(mnt + "/b.npy"));
  // Writing far into the sparse array needs blocks the disk no longer has.
  std::vector<std::string> args{"set", a, "500000"};
  for (int k = 0; k < 40000; ++k) args.push_back("9");
  auto s = RunCli(args);
  EXPECT_EQ(s.exit_code, 1);
  ExpectOneLineError(s, "No space left on device");
  EXPECT_EQ(RunCli({"get", a, "0", "--count", "2"}).out, "1\n2\n");
  EXPECT_EQ(RunCli({"get", a, "500000"}).out, "0\n");
  // Scattered updates go through a mapping: a store into a hole on a full disk
  // is a fault, caught before anything changes and reported.
  {
    std::string filler(1 << 20, 'x');
    std::ofstream f(mnt + "/filler", std::ios::binary);
    f.write(filler.data(), filler.size());  // fills the file system (short write)
  }
  auto u = RunCli({"update", a}, "1 7\n900000 8\n");
  EXPECT_EQ(u.exit_code, 1);
  ExpectOneLineError(u, "No space left on device");
  EXPECT_EQ(u.signal, 0);
  EXPECT_EQ(RunCli({"get", a, "1"}).out, "2\n");
  ::unlink((mnt + "/filler").c_str());
  EXPECT_EQ(RunCli({"verify", a}).exit_code, 0);
  EXPECT_EQ(RunCli({"query", a, "--range", ":", "--stat", "sum"}).out, "sum 3\n");
}

}  // namespace
}  // namespace momenta
