// The sidecar belongs to one file: links share it or are refused,
// a sidecar of another array is set aside (its log kept, never misdecoded),
// and read-only data is queried by users who cannot write it, with the
// sidecar elsewhere when it must be built.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>

#include "buffers/buffered_array.h"
#include "buffers/tree/moment_tree.h"
#include "storage/array/sidecar.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

BufferedArrayOptions Options(bool writable) {
  BufferedArrayOptions o;
  o.io.writable = writable;
  o.io.kind = IoKind::kPread;
  return o;
}

void Create(const std::string& path, DType t, uint64_t n) {
  IoOptions io;
  io.writable = true;
  const uint64_t shape[] = {n};
  auto a = ArrayFile::Create(path, t, shape, io);
  ASSERT_OK(a);
}

void WriteOne(const std::string& path, uint64_t index, double v, std::vector<std::string>* notices = nullptr) {
  auto w = BufferedArray::Open(path, Options(true), notices);
  ASSERT_OK(w);
  std::vector<Value> values = {Value::Float(v)};
  ASSERT_OK((*w)->Write(index, values));
  ASSERT_OK((*w)->Close());
}

std::vector<std::string> Orphans(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename().string().find(".orphan-") != std::string::npos) out.push_back(e.path().string());
  return out;
}

TEST(SidecarTest, ASymlinkSharesTheFilesSidecarAndLock) {
  testing::ScratchDir dir;
  const std::string path = dir.File("a.npy"), link = dir.File("link.npy");
  Create(path, DType::kF8, 100);
  ASSERT_EQ(::symlink(path.c_str(), link.c_str()), 0);
  EXPECT_EQ(SidecarPath(link), SidecarPath(path));
  auto first = BufferedArray::Open(link, Options(true));
  ASSERT_OK(first);
  auto second = BufferedArray::Open(path, Options(true));
  ASSERT_FALSE(second.ok()) << "two writers of one file through two names";
  EXPECT_NE(second.status().ToString().find("locked by another writer"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(link + ".momenta"));
}

TEST(SidecarTest, AWriterRefusesAFileWithHardLinks) {
  testing::ScratchDir dir;
  const std::string path = dir.File("a.npy"), other = dir.File("b.npy");
  Create(path, DType::kF8, 100);
  ASSERT_EQ(::link(path.c_str(), other.c_str()), 0);
  auto w = BufferedArray::Open(other, Options(true));
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().ToString().find("hard links"), std::string::npos) << w.status().ToString();
  // The remedy is in the caller's words (the CLI's are "--sidecar DIR").
  EXPECT_NE(w.status().ToString().find("single name with BufferedArrayOptions::sidecar, or copy it"), std::string::npos)
      << w.status().ToString();
  BufferedArrayOptions worded = Options(true);
  worded.sidecar_advice = "the setting 'sidecar'";
  auto again = BufferedArray::Open(other, worded);
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.status().ToString().find("single name with the setting 'sidecar', or copy it"), std::string::npos)
      << again.status().ToString();
  // Readers are fine (each name's derived buffer is only derived state).
  auto r = BufferedArray::Open(other, Options(false));
  EXPECT_OK(r);
}

TEST(SidecarTest, ASidecarOfAnotherDtypeIsSetAsideWithItsLog) {
  testing::ScratchDir dir;
  const std::string path = dir.File("a.npy");
  Create(path, DType::kF8, 100);
  WriteOne(path, 1, 100);
  // np.save over it with another dtype: rm + create of an i4 array.
  ASSERT_EQ(::unlink(path.c_str()), 0);
  Create(path, DType::kI4, 100);
  std::vector<std::string> notices;
  auto w = BufferedArray::Open(path, Options(true), &notices);
  ASSERT_OK(w);
  ASSERT_FALSE(notices.empty());
  EXPECT_NE(notices.front().find("belonged to another array"), std::string::npos) << notices.front();
  EXPECT_EQ((*w)->applied_sequence(), 0u) << "a fresh log";
  auto orphans = Orphans(dir.path());
  ASSERT_EQ(orphans.size(), 1u);
  EXPECT_TRUE(std::filesystem::exists(orphans[0] + "/log")) << "the old log is kept";
  std::vector<Value> v = {Value::Int(7)};
  EXPECT_OK((*w)->Write(3, v));
}

TEST(SidecarTest, ANewFileOfTheSameLayoutInPlaceIsForeignButAMovedOneIsNot) {
  testing::ScratchDir dir;
  const std::string path = dir.File("a.npy");
  Create(path, DType::kF8, 100);
  WriteOne(path, 1, 100);
  // Moved with its sidecar (cp -a keeps the modification time; the inode changes).
  const std::string moved = dir.File("b.npy");
  std::filesystem::copy(path, moved, std::filesystem::copy_options::none);
  std::filesystem::copy(SidecarPath(path), SidecarPath(moved), std::filesystem::copy_options::recursive);
  {
    struct stat st;
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    const struct timespec times[2] = {st.st_atim, st.st_mtim};
    ASSERT_EQ(::utimensat(AT_FDCWD, moved.c_str(), times, 0), 0);
  }
  std::vector<std::string> notices;
  {
    auto w = BufferedArray::Open(moved, Options(true), &notices);
    ASSERT_OK(w);
    EXPECT_EQ((*w)->applied_sequence(), 1u) << "the moved array keeps its log";
    for (const auto& n : notices) EXPECT_EQ(n.find("another array"), std::string::npos) << n;
  }
  // import --force or cp of other data into place: a new inode, new contents.
  const std::string temp = dir.File("new.npy");
  Create(temp, DType::kF8, 100);
  ASSERT_EQ(::rename(temp.c_str(), path.c_str()), 0);
  notices.clear();
  auto w = BufferedArray::Open(path, Options(true), &notices);
  ASSERT_OK(w);
  ASSERT_FALSE(notices.empty());
  EXPECT_NE(notices.front().find("belonged to another array"), std::string::npos) << notices.front();
  EXPECT_EQ((*w)->applied_sequence(), 0u);
}

TEST(SidecarTest, CliLogAndQueryNeverMisdecodeAnotherArraysLog) {
  testing::ScratchDir dir;
  const std::string path = dir.File("c.npy");
  ASSERT_EQ(testing::RunCli({"create", path, "--length", "10"}).exit_code, 0);
  ASSERT_EQ(testing::RunCli({"set", path, "0", "1"}).exit_code, 0);
  ASSERT_EQ(::unlink(path.c_str()), 0);
  Create(path, DType::kI4, 10);  // another dtype, not through the CLI (like np.save)
  auto log = testing::RunCli({"log", path});
  EXPECT_EQ(log.exit_code, 1) << log.out;
  EXPECT_NE(log.err.find("belongs to another array"), std::string::npos) << log.err;
  auto q = testing::RunCli({"query", path, "--range", "0:10", "--stat", "sum"});
  EXPECT_EQ(q.exit_code, 0) << q.err;
  EXPECT_EQ(q.out, "sum 0\n");
  EXPECT_NE(q.err.find("belonged to another array"), std::string::npos) << q.err;
  // `create` in place of a removed array never inherits its sidecar, even
  // when the new file has the old one's inode and layout.
  ASSERT_EQ(::unlink(path.c_str()), 0);
  ASSERT_EQ(testing::RunCli({"create", path, "--length", "10", "--dtype", "i4"}).exit_code, 0);
  auto fresh = testing::RunCli({"log", path});
  EXPECT_EQ(fresh.exit_code, 0) << fresh.err;
  EXPECT_EQ(fresh.out, "");
}

// The first folder on the way to `path` that other users may not pass
// through (no o+x), or "" when they reach it: a clone or $TMPDIR under a home
// folder of mode 700 is not reachable by nobody.
std::string UnreachableAncestor(const std::filesystem::path& path) {
  for (auto p = std::filesystem::canonical(path);; p = p.parent_path()) {
    struct stat st;
    if (::stat(p.c_str(), &st) != 0 || !(st.st_mode & S_IXOTH)) return p.string();
    if (p == p.root_path()) return "";
  }
}

// A copy of the CLI under `dir` (mode 755), so that running it as nobody does
// not depend on where the build lives. The copy goes with `dir`.
std::string CliCopyFor(const testing::ScratchDir& dir) {
  const std::string bin = dir.File("bin");
  std::filesystem::create_directory(bin);
  std::filesystem::copy_file(MOMENTA_CLI_PATH, bin + "/momenta");
  std::filesystem::permissions(bin, std::filesystem::perms(0755));
  std::filesystem::permissions(bin + "/momenta", std::filesystem::perms(0755));
  return bin + "/momenta";
}

// Runs `cli` as user nobody (65534), with `env` entries first.
testing::CommandResult RunAsNobody(const std::string& cli, const std::vector<std::string>& args,
                                   const std::vector<std::string>& env = {}) {
  std::vector<std::string> argv = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                   "/usr/bin/env"};
  argv.insert(argv.end(), env.begin(), env.end());
  argv.push_back(cli);
  argv.insert(argv.end(), args.begin(), args.end());
  return testing::RunCommand(argv);
}

TEST(SidecarTest, ReadOnlyDataIsQueriedByAUserWhoCannotWriteIt) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run a command as another user";
  if (::access("/usr/bin/setpriv", X_OK) != 0) GTEST_SKIP() << "no setpriv (util-linux)";
  testing::ScratchDir dir;
  ASSERT_EQ(::chmod(dir.path().c_str(), 0755), 0);
  if (const std::string closed = UnreachableAncestor(dir.path()); !closed.empty()) {
    GTEST_SKIP() << "other users cannot enter " << closed << " (set TMPDIR to a folder they can reach)";
  }
  const std::string cli = CliCopyFor(dir);
  const std::string path = dir.File("r.npy");
  ASSERT_EQ(testing::RunCli({"create", path, "--length", "1000"}).exit_code, 0);
  ASSERT_EQ(testing::RunCli({"set", path, "5", "2.5", "3.5"}).exit_code, 0);
  // The owner made the buffer; nobody may read everything, write nothing.
  auto q = RunAsNobody(cli, {"query", path, "--range", "0:1000", "--stat", "sum"});
  EXPECT_EQ(q.exit_code, 0) << q.err;
  EXPECT_EQ(q.out, "sum 6\n");
  auto info = RunAsNobody(cli, {"info", path});
  EXPECT_EQ(info.exit_code, 0) << info.err;
  EXPECT_NE(info.out.find("buffer:      current"), std::string::npos) << info.out;
  auto verify = RunAsNobody(cli, {"verify", path});
  EXPECT_EQ(verify.exit_code, 0) << verify.err;
  // Without a buffer: one line that says so and how to fix it.
  std::filesystem::remove(SidecarPath(path) + "/tree");
  auto missing = RunAsNobody(cli, {"query", path, "--range", "0:1000", "--stat", "sum"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("may not write there"), std::string::npos) << missing.err;
  EXPECT_NE(missing.err.find("--sidecar"), std::string::npos) << missing.err;
  EXPECT_NE(missing.err.find("run 'momenta build " + path + "' as a user who may"), std::string::npos) << missing.err;
  EXPECT_EQ(std::count(missing.err.begin(), missing.err.end(), '\n'), 1) << missing.err;
  // The sidecar elsewhere: a folder nobody may write.
  const std::string elsewhere = dir.File("mine");
  ASSERT_EQ(::mkdir(elsewhere.c_str(), 0777), 0);
  ASSERT_EQ(::chmod(elsewhere.c_str(), 0777), 0);
  auto env =
      RunAsNobody(cli, {"query", path, "--range", "0:1000", "--stat", "sum"}, {"MOMENTA_SIDECAR_DIR=" + elsewhere});
  EXPECT_EQ(env.exit_code, 0) << env.err;
  EXPECT_EQ(env.out, "sum 6\n");
  EXPECT_TRUE(std::filesystem::exists(elsewhere + SidecarPath(std::filesystem::canonical(path).string()) + "/tree"));
  const std::string explicit_dir = elsewhere + "/explicit";
  auto flag = RunAsNobody(cli, {"query", path, "--range", "5:7", "--stat", "sum", "--sidecar", explicit_dir});
  EXPECT_EQ(flag.exit_code, 0) << flag.err;
  EXPECT_EQ(flag.out, "sum 6\n");
  EXPECT_TRUE(std::filesystem::exists(explicit_dir + "/tree"));
}

}  // namespace
}  // namespace momenta
