// What the CLI says is so: the bytes a query reports are the bytes it asked
// of the devices (a batch's reads merged); every count option takes the
// count forms (1000, 2^10, 3*2^20) and --bins 0 is a usage error; a range
// that is no range says why (P > Q, a side past the end); `log --tail` ends
// with 130/143 on SIGINT/SIGTERM; an error inside another says its kind once;
// counts agree with their nouns; a create too large for the file system names
// the limit.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "storage/io/mapped_file.h"
#include "tests/cli_background.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using testing::Background;
using testing::CommandResult;
using testing::Lines;
using testing::RunCli;
using testing::ScratchDir;

constexpr int kLength = 10000;  // i8: 80,000 bytes of data

bool Contains(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

// The unsigned number after "key": in a JSON text (-1 when absent).
long long JsonNumber(const std::string& json, const std::string& key) {
  std::smatch m;
  if (!std::regex_search(json, m, std::regex("\"" + key + "\":([0-9]+)"))) return -1;
  return std::stoll(m[1]);
}

int Count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

class CliTruthTest : public ::testing::Test {
 protected:
  // The array's pages out of the page cache, so a query reads its pieces
  // (cached ones it sums from a mapping and reads nothing). False when the
  // kernel kept some.
  bool DropArrayPages() const {
    const int fd = ::open(a_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    (void)::fdatasync(fd);
    (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
    auto map = MappedFile::Open(a_, /*writable=*/false);
    return map.ok() && !(*map)->AnyPageCached(0, (*map)->size());
  }

  void SetUp() override {
    a_ = dir_.File("a.npy");
    // Leaves of 64 i8 (512 bytes): eight leaves share a page of the array.
    auto c = RunCli({"create", a_, "--length", std::to_string(kLength), "--dtype", "i8", "--leaf", "64", "--fanout",
                     "4", "--ram-budget", "64K"});
    ASSERT_EQ(c.exit_code, 0) << c.err;
    std::string lines;
    for (int i = 0; i < kLength; ++i) lines += std::to_string(i) + " " + std::to_string(i % 97 - 40) + "\n";
    auto u = RunCli({"update", a_}, lines);
    ASSERT_EQ(u.exit_code, 0) << u.err;
  }
  ScratchDir dir_;
  std::string a_;
};

// One bin per element: each bin's reads would be a page; merged, a batch of
// bins reads each page once.
TEST_F(CliTruthTest, BinsReportTheBytesReadAfterMerging) {
  // 250 bins, one batch, all in the array's first page: that page, once.
  if (!DropArrayPages()) GTEST_SKIP() << "the kernel kept the array's pages cached";
  auto page = RunCli({"query", a_, "--range", "0:250", "--bins", "250", "--stat", "sum", "--json"});
  ASSERT_EQ(page.exit_code, 0) << page.err;
  ASSERT_EQ(Lines(page.out).size(), 250u);
  EXPECT_EQ(JsonNumber(Lines(page.err).back(), "array_bytes_read"), 4096) << page.err;  // not 250 pages
  EXPECT_EQ(JsonNumber(Lines(page.err).back(), "read_requests"), 1) << page.err;
  EXPECT_EQ(JsonNumber(Lines(page.err).back(), "covered_bytes"), 2000) << page.err;

  ASSERT_TRUE(DropArrayPages());
  auto j = RunCli({"query", a_, "--range", ":", "--bins", std::to_string(kLength), "--stat", "sum", "--json"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  ASSERT_EQ(Lines(j.out).size(), static_cast<size_t>(kLength));
  const std::string summary = Lines(j.err).back();
  EXPECT_EQ(JsonNumber(summary, "bins"), kLength) << summary;
  EXPECT_EQ(JsonNumber(summary, "covered_bytes"), 8 * kLength) << summary;
  const long long read = JsonNumber(summary, "array_bytes_read");
  EXPECT_GT(read, 0) << summary;
  // Batches of 256 bins, each reading its pages once (a page two batches
  // share is read by both); before merging: 10,000 pages, 39 MiB.
  const long long batches = (kLength + 255) / 256;
  EXPECT_LE(read, 8 * kLength + batches * 4096) << summary;
  EXPECT_LE(JsonNumber(summary, "read_requests"), 2 * batches) << summary;

  auto text = RunCli({"query", a_, "--range", ":", "--bins", std::to_string(kLength), "--stat", "sum"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_TRUE(std::regex_search(text.err, std::regex(R"(^\(10000 bins in [0-9]+ us; they cover 78\.1 KiB of the )"
                                                     R"(array; read [0-9.]+ (B|KiB) from the array and)")))
      << text.err;
}

// Overlapping ranges of a batch (up to 256 lines): their reads are merged, so
// what they report is at most the array, and the same for 1 and for 200
// copies of one range.
TEST_F(CliTruthTest, OverlappingRangesReportWhatWasRead) {
  std::string input;
  for (int k = 0; k < 200; ++k) input += std::to_string(k * 13 + 5) + ":" + std::to_string(kLength - k * 11 - 7) + "\n";
  testing::WriteFileBytes(dir_.File("r.txt"), input);  // a file: every line ready, one batch
  if (!DropArrayPages()) GTEST_SKIP() << "the kernel kept the array's pages cached";
  auto r = RunCli({"query", a_, "--ranges", dir_.File("r.txt"), "--stat", "sum", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string summary = Lines(r.err).back();
  EXPECT_EQ(JsonNumber(summary, "ranges"), 200) << summary;
  EXPECT_LE(JsonNumber(summary, "array_bytes_read"), 8 * kLength) << summary;
  std::string same;
  for (int k = 0; k < 200; ++k) same += "100:9900\n";
  testing::WriteFileBytes(dir_.File("same.txt"), same);
  ASSERT_TRUE(DropArrayPages());
  auto once = RunCli({"query", a_, "--ranges", "-", "--stat", "sum", "--json"}, "100:9900\n");
  ASSERT_TRUE(DropArrayPages());
  auto many = RunCli({"query", a_, "--ranges", dir_.File("same.txt"), "--stat", "sum", "--json"});
  ASSERT_EQ(once.exit_code, 0) << once.err;
  ASSERT_EQ(many.exit_code, 0) << many.err;
  EXPECT_EQ(JsonNumber(Lines(many.err).back(), "array_bytes_read"),
            JsonNumber(Lines(once.err).back(), "array_bytes_read"))
      << many.err;
  // One range whose two end leaves share a page reads that page once.
  ASSERT_TRUE(DropArrayPages());
  auto one = RunCli({"query", a_, "--range", "10:100", "--stat", "sum", "--json"});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(JsonNumber(one.out, "array_bytes_read"), 4096) << one.out;
  EXPECT_EQ(JsonNumber(one.out, "read_requests"), 1) << one.out;
}

TEST_F(CliTruthTest, EveryCountOptionTakesTheCountForms) {
  auto bins = RunCli({"query", a_, "--range", "0:2^10", "--bins", "2^3", "--stat", "count"});
  ASSERT_EQ(bins.exit_code, 0) << bins.err;
  EXPECT_EQ(Lines(bins.out).size(), 8u);
  EXPECT_EQ(Lines(bins.out)[0], "0:128 count 128");
  auto order = RunCli({"query", a_, "--range", "0:4", "--stat", "moment", "--order", "2^1", "--ddof", "1*2^0"});
  EXPECT_EQ(order.exit_code, 0) << order.err;
  EXPECT_EQ(RunCli({"query", a_, "--range", "0:4", "--stat", "polyfit", "--degree", "2^0"}).exit_code, 0);
  auto group = RunCli({"update", a_, "--follow", "--group", "2^10"}, "0 5\n");
  EXPECT_EQ(group.exit_code, 0) << group.err;
  EXPECT_EQ(RunCli({"build", a_, "--order", "2^1", "--fanout", "2^3", "--leaf", "2^7"}).exit_code, 0);
  const std::string w = dir_.File("w.txt");
  testing::WriteFileBytes(w, "1 1\n2 2\n");
  EXPECT_EQ(RunCli({"window", "--input", w, "--window", "10", "--eps", "0.1", "--top", "2^1"}).exit_code, 0);
  // Malformed and out-of-range counts are usage errors that name the option.
  for (const auto& [args, needle] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--bins", "2^x"}, "--bins: '2^x' is not a count (e.g. 1000, 2^20, 3*2^20)"},
           {{"--bins", "-1"}, "--bins: must be >= 0"},
           {{"--bins", "2^64"}, "--bins: '2^64' is larger than 2^63"},
           {{"--order", "2^4", "--stat", "moment"}, "--order: '2^4' is not in range 0 to 8"},
           {{"--ddof", "2^40"}, "--ddof: '2^40' is larger than 2147483647"},
       }) {
    std::vector<std::string> cmd = {"query", a_, "--range", "0:100", "--stat", "sum"};
    cmd.insert(cmd.end(), args.begin(), args.end());
    auto r = RunCli(cmd);
    EXPECT_EQ(r.exit_code, 2) << args[0] << " " << args[1] << ": " << r.err;
    EXPECT_TRUE(Contains(r.err, needle)) << r.err;
  }
  auto eps = RunCli({"window", "--input", w, "--window", "10", "--eps", "abc"});
  EXPECT_EQ(eps.exit_code, 2) << eps.err;
  EXPECT_TRUE(Contains(eps.err, "--eps: 'abc' is not a finite number")) << eps.err;  // not CLI11's "Could not convert"
  auto bad_group = RunCli({"update", a_, "--follow", "--group", "2^"}, "0 5\n");
  EXPECT_EQ(bad_group.exit_code, 2) << bad_group.err;
  EXPECT_TRUE(Contains(bad_group.err, "--group: '2^' is not a count")) << bad_group.err;
  // --bins 0 is refused (as Python's overview refuses bins=0), not one answer.
  auto zero = RunCli({"query", a_, "--range", "0:100", "--bins", "0", "--stat", "sum"});
  EXPECT_EQ(zero.exit_code, 2) << zero.err;
  EXPECT_EQ(zero.out, "");
  EXPECT_TRUE(Contains(zero.err, "--bins 0: the range 0:100 holds 100 elements; give 1 <= K <= 100")) << zero.err;
}

TEST_F(CliTruthTest, ARangeThatIsNoRangeSaysWhy) {
  for (const auto& [range, why] : std::vector<std::pair<std::string, std::string>>{
           {"500:100", "'500:100' is not a range of the array (length 10000): P > Q (500 > 100)"},
           {"0:2^30", "'0:2^30' is not a range of the array (length 10000): Q = 1073741824 is past its end"},
           {"20000:", "P = 20000 is past its end"},
           {"-20000:5", "P = -20000 reaches before its start"},
       }) {
    auto q = RunCli({"query", a_, "--range", range, "--stat", "sum"});
    EXPECT_EQ(q.exit_code, 1) << q.err;
    EXPECT_TRUE(Contains(q.err, "momenta: Out of range: " + a_ + ": --range: ")) << q.err;
    EXPECT_TRUE(Contains(q.err, why)) << q.err;
    auto e = RunCli({"export", a_, dir_.File("e.csv"), "--range", range});
    EXPECT_EQ(e.exit_code, 1) << e.err;
    EXPECT_TRUE(Contains(e.err, why)) << e.err;
  }
  auto line = RunCli({"query", a_, "--ranges", "-", "--stat", "sum"}, "7:3\n");
  EXPECT_EQ(line.exit_code, 1) << line.err;
  EXPECT_TRUE(Contains(line.err, "stdin:1: '7:3' is not a range of the array (length 10000): P > Q (7 > 3)"))
      << line.err;
}

TEST_F(CliTruthTest, LogTailEndsWithTheSignalsExitCode) {
  for (int sig : {SIGINT, SIGTERM}) {
    SCOPED_TRACE(sig);
    Background tail({"log", a_, "--tail"}, dir_.path(), "tail" + std::to_string(sig));
    ASSERT_TRUE(tail.WaitCatching(10000)) << tail.Err();
    tail.Kill(sig);
    EXPECT_EQ(tail.Wait(5000), 128 + sig) << tail.Err();
  }
}

// An error from inside another says its kind once.
TEST_F(CliTruthTest, AnErrorSaysItsKindOnce) {
  const std::string b = dir_.File("b.npy");
  ASSERT_EQ(RunCli({"create", b, "--length", "10", "--dtype", "i2"}).exit_code, 0);
  ASSERT_EQ(RunCli({"set", b, "3", "-1"}).exit_code, 0);
  const std::string csv = dir_.File("bad.csv");
  testing::WriteFileBytes(csv, "1\nx\n");
  const std::vector<std::pair<CommandResult, std::string>> cases = {
      {RunCli({"update", b}, "5 x\n"), "Invalid argument: stdin: line 1: 'x' is not a number"},
      {RunCli({"update", b}, "5 99999\n"), "Invalid argument: stdin: line 1: value '99999' does not fit dtype i2"},
      {RunCli({"import", csv, dir_.File("c.npy")}), "Invalid argument: " + csv + ": line 2: 'x' is not a number"},
      {RunCli({"import", b, dir_.File("d.npy"), "--dtype", "u1"}),
       "Invalid argument: " + b + ": element 3: value '-1' does not fit dtype u1"},
      {RunCli({"window", "--input", "-", "--window", "10", "--eps", "0.1"}, "1 x\n"),
       "Invalid argument: stdin:1: 'x' is not an integer"},
      {RunCli({"window", "--input", "-", "--clock", "wall", "--window", "10s", "--eps", "0.1"}, "x\n"),
       "Invalid argument: stdin:1: 'x' is not an integer"},
      {RunCli({"update", b, "--log-segment", "lots"}, "0 1\n"), "--log-segment: 'lots' is not a size"},
  };
  for (const auto& [r, needle] : cases) {
    EXPECT_LE(Count(r.err, "Invalid argument"), 1) << r.err;
    if (!needle.empty()) {
      EXPECT_NE(r.exit_code, 0) << r.err;
      EXPECT_TRUE(Contains(r.err, needle)) << "missing '" << needle << "' in: " << r.err;
    }
  }
}

TEST_F(CliTruthTest, CountsAgreeWithTheirNouns) {
  auto one = RunCli({"update", a_}, "3 1\n");
  EXPECT_TRUE(Contains(one.err, "applied 1 update to ")) << one.err;
  auto two = RunCli({"update", a_}, "3 1\n4 1\n");
  EXPECT_TRUE(Contains(two.err, "applied 2 updates to ")) << two.err;
  auto follow = RunCli({"update", a_, "--follow"}, "3 1\n");
  EXPECT_TRUE(Contains(follow.err, "applied 1 update to " + a_ + " in 1 group in ")) << follow.err;
  ASSERT_TRUE(DropArrayPages());  // else the cached piece is summed from the mapping: 0 requests
  auto range = RunCli({"query", a_, "--ranges", "-", "--stat", "sum"}, "0:10\n");
  EXPECT_TRUE(Contains(range.err, "(1 range answered in ")) << range.err;
  EXPECT_TRUE(Contains(range.err, "it covers 80 B of the array")) << range.err;
  EXPECT_TRUE(Contains(range.err, "in 1 request)")) << range.err;
  auto skipped = RunCli({"query", a_, "--ranges", "-", "--stat", "sum", "--on-error", "skip"}, "0:64\nx\n");
  EXPECT_TRUE(Contains(skipped.err, "(1 range answered, 1 line skipped in ")) << skipped.err;
  auto bin = RunCli({"query", a_, "--range", "0:64", "--bins", "1", "--stat", "sum"});
  EXPECT_TRUE(Contains(bin.err, "(1 bin in ")) << bin.err;
  ASSERT_TRUE(DropArrayPages());
  auto single = RunCli({"query", a_, "--range", "0:10", "--stat", "sum"});
  EXPECT_TRUE(Contains(single.err, "in 1 request)")) << single.err;
  auto verify = RunCli({"verify", a_});
  EXPECT_TRUE(std::regex_search(verify.err, std::regex(": [0-9]+ nodes checked, 0 mismatches"))) << verify.err;
  const std::string one_element = dir_.File("one.npy");
  ASSERT_EQ(RunCli({"create", one_element, "--length", "1", "--leaf", "64"}).exit_code, 0);
  auto info = RunCli({"info", one_element});
  EXPECT_TRUE(Contains(info.out, "length:      1 element\n")) << info.out;
  EXPECT_TRUE(Contains(info.out, "level 1: 1 node of 64 elements")) << info.out;
}

// 2^50 f8 elements are 8 PiB: past what ext4 (16 TiB) or FAT holds, within
// what xfs, btrfs or tmpfs hold (then there is nothing to check here).
TEST(CliTruthCreateTest, ATooLargeArrayNamesTheFileSystemsLimit) {
  ScratchDir dir;
  const std::string x = dir.File("x.npy");
  auto r = RunCli({"create", x, "--length", "2^50", "--dtype", "f8"});
  if (r.exit_code == 0) GTEST_SKIP() << "this file system holds an 8 PiB sparse file: no limit to name";
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(Contains(r.err, "momenta: IO error: " + x + ": File too large: the array (its header included) needs " +
                                  std::to_string((uint64_t{1} << 53) + 4096) +
                                  " bytes (8.0 PiB); the largest file "
                                  "this file system"))
      << r.err;
  // ext4 with 4 KiB blocks: 2^32 blocks less one, 17592186040320 bytes (16.0 TiB).
  EXPECT_TRUE(std::regex_search(r.err, std::regex(R"(holds is [0-9]+ bytes \([0-9.]+ [KMGTPE]iB\))"))) << r.err;
  EXPECT_FALSE(std::filesystem::exists(x));
}

}  // namespace
}  // namespace momenta
