// ArrayFile: create / open / read / write over every backend, the sparse
// 2^40-element create, range checks, truncated and foreign files, never
// overwriting on create, and disk full (injected, and on a real 1 MiB tmpfs
// when the test may mount one) leaving the previous contents intact.
#include "storage/array/array_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>

#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using ::momenta::testing::ReadFileBytes;
using ::momenta::testing::ScratchDir;
using ::momenta::testing::TestSeed;
using ::momenta::testing::TmpfsMount;
using ::momenta::testing::WriteFileBytes;

constexpr DType kAll[] = {DType::kF8, DType::kF4, DType::kI8, DType::kI4, DType::kI2,
                          DType::kI1, DType::kU8, DType::kU4, DType::kU2, DType::kU1};

#define EXPECT_HAS(haystack, needle) EXPECT_NE((haystack).find(needle), std::string::npos) << (haystack)

IoOptions Pread() { return IoOptions{.kind = IoKind::kPread}; }

std::unique_ptr<ArrayFile> MustCreate(const std::string& path, DType t, std::vector<uint64_t> shape,
                                      IoOptions io = Pread()) {
  auto f = ArrayFile::Create(path, t, shape, io);
  EXPECT_OK(f);
  return f.ok() ? std::move(f).value() : nullptr;
}

std::unique_ptr<ArrayFile> MustOpen(const std::string& path, IoOptions io = Pread()) {
  auto f = ArrayFile::Open(path, io);
  EXPECT_OK(f);
  return f.ok() ? std::move(f).value() : nullptr;
}

// A random value of dtype t, extremes included.
Value RandomValue(DType t, std::mt19937_64& rng) {
  char bytes[8];
  const uint64_t r = rng();
  std::memcpy(bytes, &r, sizeof r);
  Value v = DecodeValue(t, bytes);
  if (v.kind == Value::Kind::kFloat && std::isnan(v.f)) v.f = std::nan("");  // one NaN pattern
  return v;
}

// Bitwise equality, any NaN equal to any NaN.
bool Same(const Value& a, const Value& b) {
  if (a.kind != b.kind) return false;
  if (a.kind == Value::Kind::kInt) return a.i == b.i;
  if (a.kind == Value::Kind::kUInt) return a.u == b.u;
  return std::memcmp(&a.f, &b.f, sizeof a.f) == 0 || (std::isnan(a.f) && std::isnan(b.f));
}

// Every backend; io_uring skips with the kernel's reason where refused.
class ArrayFileBackendTest : public ::testing::TestWithParam<IoKind> {
 protected:
  IoOptions io() const { return IoOptions{.kind = GetParam()}; }
  void SetUp() override {
    if (GetParam() != IoKind::kUring) return;
    const std::string probe = dir_.File("probe");
    WriteFileBytes(probe, "x");
    auto b = OpenIoBackend(probe, io());
    if (!b.ok()) GTEST_SKIP() << "io_uring: " << b.status().ToString();
  }
  ScratchDir dir_;
};

TEST_P(ArrayFileBackendTest, CreateWriteReopenReadEveryDType) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (rerun with MOMENTA_SEED=" + std::to_string(seed) + ")");
  std::mt19937_64 rng(seed);
  for (DType t : kAll) {
    SCOPED_TRACE(std::string(DTypeName(t)));
    const std::string path = dir_.File(std::string(DTypeName(t)) + ".npy");
    const uint64_t n = 3001;
    std::vector<Value> want(n, DecodeValue(t, "\0\0\0\0\0\0\0\0"));  // holes read as zero
    {
      auto f = MustCreate(path, t, {n}, io());
      ASSERT_TRUE(f);
      EXPECT_EQ(f->length(), n);
      EXPECT_EQ(f->header().data_offset, kMomentaDataOffset);
      EXPECT_EQ(f->ByteOffset(7), kMomentaDataOffset + 7 * DTypeSize(t));
      // Random runs of values at random places.
      for (int k = 0; k < 20; ++k) {
        const uint64_t first = rng() % n;
        const uint64_t count = 1 + rng() % std::min<uint64_t>(200, n - first);
        std::vector<Value> run;
        for (uint64_t j = 0; j < count; ++j) run.push_back(RandomValue(t, rng));
        ASSERT_OK(f->WriteValues(first, run));
        std::copy(run.begin(), run.end(), want.begin() + static_cast<ptrdiff_t>(first));
      }
      // The extremes at the two ends.
      std::vector<Value> ends = {DecodeValue(t, "\xff\xff\xff\xff\xff\xff\xff\x7f"),
                                 DecodeValue(t, "\x00\x00\x00\x00\x00\x00\x00\x80")};
      ASSERT_OK(f->WriteValues(0, std::span(ends).first(1)));
      ASSERT_OK(f->WriteValues(n - 1, std::span(ends).last(1)));
      want[0] = ends[0];
      want[n - 1] = ends[1];
      ASSERT_OK(f->Sync());
      ASSERT_OK(f->CheckSize());
    }
    struct stat st;
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(static_cast<uint64_t>(st.st_size), kMomentaDataOffset + n * DTypeSize(t));

    auto f = MustOpen(path, io());
    ASSERT_TRUE(f);
    EXPECT_EQ(f->dtype(), t);
    EXPECT_EQ(f->header().shape, std::vector<uint64_t>{n});
    std::vector<Value> got;
    ASSERT_OK(f->ReadValues(0, n, &got));
    ASSERT_EQ(got.size(), n);
    for (uint64_t k = 0; k < n; ++k)
      ASSERT_TRUE(Same(got[k], want[k])) << "#" << k << ": " << FormatValue(got[k]) << " != " << FormatValue(want[k]);
    // Doubles and raw bytes agree with the values, also for a sub-range.
    std::vector<double> d(n - 10);
    ASSERT_OK(f->ReadDoubles(10, n - 10, d.data()));
    std::vector<char> raw((n - 10) * DTypeSize(t));
    ASSERT_OK(f->ReadRaw(10, n - 10, raw.data()));
    for (uint64_t k = 10; k < n; ++k) {
      const double w = static_cast<double>(want[k].AsLongDouble());
      ASSERT_TRUE(d[k - 10] == w || (std::isnan(w) && std::isnan(d[k - 10]))) << "#" << k;
      char enc[8];
      EncodeValue(t, want[k], enc);
      ASSERT_EQ(std::memcmp(enc, raw.data() + (k - 10) * DTypeSize(t), DTypeSize(t)), 0) << "#" << k;
    }
  }
}

TEST_P(ArrayFileBackendTest, NDimensionalArraysAreTheirFlatIndexSpace) {
  const std::string path = dir_.File("cube.npy");
  auto f = MustCreate(path, DType::kI4, {3, 4, 5}, io());
  ASSERT_TRUE(f);
  EXPECT_EQ(f->length(), 60u);
  std::vector<Value> v;
  for (int k = 0; k < 60; ++k) v.push_back(Value::Int(k * 7 - 100));
  ASSERT_OK(f->WriteValues(0, v));
  f.reset();
  f = MustOpen(path, io());
  ASSERT_TRUE(f);
  EXPECT_EQ(f->header().shape, (std::vector<uint64_t>{3, 4, 5}));
  std::vector<Value> got;
  ASSERT_OK(f->ReadValues(0, 60, &got));
  for (int k = 0; k < 60; ++k) EXPECT_EQ(got[k].i, k * 7 - 100);

  auto scalar = MustCreate(dir_.File("scalar.npy"), DType::kF8, {}, io());
  ASSERT_TRUE(scalar);
  EXPECT_EQ(scalar->length(), 1u);
  auto empty = MustCreate(dir_.File("empty.npy"), DType::kF8, {0}, io());
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->length(), 0u);
  EXPECT_EQ(empty->header().data_offset, 128u);  // see ArrayFile::Create
  EXPECT_OK(empty->ReadValues(0, 0, &got));
  EXPECT_TRUE(got.empty());
}

TEST_P(ArrayFileBackendTest, LargeReadsCrossChunks) {
  // 3 * 8 MiB + a bit of u8: ReadRaw splits into pieces and batches.
  const uint64_t n = (uint64_t{3} << 20) + 123;
  const std::string path = dir_.File("big.npy");
  auto f = MustCreate(path, DType::kU8, {n}, io());
  ASSERT_TRUE(f);
  std::vector<uint64_t> data(n);
  for (uint64_t k = 0; k < n; ++k) data[k] = k * 0x9E3779B97F4A7C15ull;
  ASSERT_OK(f->WriteRaw(0, n, reinterpret_cast<const char*>(data.data())));
  std::vector<uint64_t> back(n - 5);
  ASSERT_OK(f->ReadRaw(5, n - 5, reinterpret_cast<char*>(back.data())));
  for (uint64_t k = 5; k < n; ++k) ASSERT_EQ(back[k - 5], data[k]) << "#" << k;
  std::vector<double> d(n);
  ASSERT_OK(f->ReadDoubles(0, n, d.data()));
  for (uint64_t k = 0; k < n; k += 4099) ASSERT_EQ(d[k], static_cast<double>(data[k])) << "#" << k;
  std::vector<Value> v;
  ASSERT_OK(f->ReadValues(n - 2, 2, &v));
  EXPECT_EQ(v[1].u, data[n - 1]);
}

INSTANTIATE_TEST_SUITE_P(AllBackends, ArrayFileBackendTest,
                         ::testing::Values(IoKind::kPread, IoKind::kMmap, IoKind::kUring),
                         [](const auto& info) { return std::string(IoKindName(info.param)); });

TEST(ArrayFileTest, SidecarPath) {
  EXPECT_EQ(SidecarPath("data.npy"), "data.npy.momenta");
  EXPECT_EQ(SidecarPath("a/b/x.npy"), "a/b/x.npy.momenta");
}

TEST(ArrayFileTest, SparseCreateOf2To40ElementsIsInstantAndSmall) {
  ScratchDir dir;
  const std::string path = dir.File("huge.npy");
  const uint64_t n = uint64_t{1} << 40;
  const auto start = std::chrono::steady_clock::now();
  auto f = ArrayFile::Create(path, DType::kF8, std::vector<uint64_t>{n}, Pread());
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!f.ok() && f.status().sys_errno() == EFBIG)
    GTEST_SKIP() << "this file system cannot hold an 8 TiB sparse file: " << f.status().ToString();
  ASSERT_OK(f);
  EXPECT_LT(seconds, 1.0);
  EXPECT_EQ((*f)->length(), n);
  // Touch both ends.
  const Value v[] = {Value::Float(-1.5)};
  ASSERT_OK((*f)->WriteValues(n - 1, v));
  ASSERT_OK((*f)->WriteValues(0, v));
  double d[2] = {7, 7};
  ASSERT_OK((*f)->ReadDoubles(n - 2, 2, d));
  EXPECT_EQ(d[0], 0.0);
  EXPECT_EQ(d[1], -1.5);
  ASSERT_OK((*f)->Sync());
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), kMomentaDataOffset + 8 * n);
  EXPECT_LT(static_cast<uint64_t>(st.st_blocks) * 512, uint64_t{1} << 20);
  std::cout << "[ sparse   ] 2^40 x f8 created in " << seconds * 1e3 << " ms, " << st.st_blocks * 512
            << " bytes allocated\n";
}

TEST(ArrayFileTest, OutOfRangeIsAnErrorAndChangesNothing) {
  ScratchDir dir;
  const std::string path = dir.File("data.npy");
  auto f = MustCreate(path, DType::kI2, {10});
  ASSERT_TRUE(f);
  std::vector<Value> v;
  char raw[64];
  double d[16];
  const Status past = f->ReadValues(10, 1, &v);
  EXPECT_EQ(past.code(), Status::Code::kOutOfRange);
  EXPECT_EQ(past.ToString(), "Out of range: " + path + ": index 10 is past the end (length 10)");
  const Status range = f->ReadRaw(5, 7, raw);
  EXPECT_EQ(range.ToString(), "Out of range: " + path + ": range 5:12 is outside the array (length 10)");
  EXPECT_EQ(f->ReadDoubles(11, 0, d).code(), Status::Code::kOutOfRange);
  EXPECT_HAS(f->CheckRange(2, ~uint64_t{0}).ToString(), "range 2:18446744073709551617 is outside");
  EXPECT_OK(f->CheckRange(10, 0));  // the empty range at the end
  EXPECT_OK(f->CheckRange(0, 10));

  const std::string before = ReadFileBytes(path);
  const std::vector<Value> three(3, Value::Int(5));
  EXPECT_EQ(f->WriteValues(8, three).code(), Status::Code::kOutOfRange);
  EXPECT_EQ(f->WriteRaw(~uint64_t{0}, 2, raw).code(), Status::Code::kOutOfRange);
  // A value that does not fit is refused before anything is written.
  const std::vector<Value> bad = {Value::Int(1), Value::Int(40000)};
  const Status s = f->WriteValues(0, bad);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_HAS(s.ToString(), "value 40000 does not fit dtype i2");
  EXPECT_EQ(ReadFileBytes(path), before);
}

TEST(ArrayFileTest, TruncatedAndForeignFilesAreRejected) {
  ScratchDir dir;
  const std::string path = dir.File("t.npy");
  {
    auto f = MustCreate(path, DType::kF8, {100});
    ASSERT_TRUE(f);
  }
  // Data cut short.
  ASSERT_EQ(::truncate(path.c_str(), kMomentaDataOffset + 5 * 8), 0);
  auto r = ArrayFile::Open(path, Pread());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kCorruption);
  EXPECT_EQ(r.status().ToString(), "Corruption: " + path +
                                       ": file is 4136 bytes, shorter than the 4896 bytes its header "
                                       "promises (4096 + 100 elements of f8); truncated?");
  // Header cut short.
  ASSERT_EQ(::truncate(path.c_str(), 100), 0);
  r = ArrayFile::Open(path, Pread());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().ToString(),
            "Corruption: " + path + ": file is 100 bytes, shorter than its 4096-byte .npy header");
  // Preamble cut short, and an empty file.
  for (uint64_t size : {7u, 0u}) {
    ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(size)), 0);
    r = ArrayFile::Open(path, Pread());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().ToString(), "Corruption: " + path + ": file is " + std::to_string(size) +
                                         " bytes, shorter than the 12-byte .npy preamble");
  }
  // Something else entirely.
  WriteFileBytes(path, "hi");
  r = ArrayFile::Open(path, Pread());
  ASSERT_FALSE(r.ok());
  EXPECT_HAS(r.status().ToString(), "not a NumPy .npy file");
  WriteFileBytes(path, std::string(5000, 'x'));
  r = ArrayFile::Open(path, Pread());
  ASSERT_FALSE(r.ok());
  EXPECT_HAS(r.status().ToString(), path + ": not a NumPy .npy file");
  // Missing.
  r = ArrayFile::Open(dir.File("missing.npy"), Pread());
  ASSERT_FALSE(r.ok());
  EXPECT_HAS(r.status().ToString(), "missing.npy: No such file or directory");
}

TEST(ArrayFileTest, CheckSizeNoticesAFileThatShrank) {
  ScratchDir dir;
  const std::string path = dir.File("s.npy");
  auto f = MustCreate(path, DType::kU4, {1000});
  ASSERT_TRUE(f);
  EXPECT_OK(f->CheckSize());
  ASSERT_EQ(::truncate(path.c_str(), 5000), 0);
  const Status s = f->CheckSize();
  EXPECT_EQ(s.code(), Status::Code::kIOError);
  EXPECT_EQ(s.ToString(), "IO error: " + path +
                              ": file is 5000 bytes, shorter than the 8096 bytes its header "
                              "promises (it shrank?)");
  std::vector<Value> v;
  EXPECT_FALSE(f->ReadValues(990, 10, &v).ok());  // a read past the end is an error too
}

TEST(ArrayFileTest, CreateNeverOverwrites) {
  ScratchDir dir;
  const std::string path = dir.File("taken.npy");
  WriteFileBytes(path, "precious bytes");
  auto f = ArrayFile::Create(path, DType::kF8, std::vector<uint64_t>{10}, Pread());
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().ToString(), "IO error: " + path + ": File exists");
  EXPECT_EQ(ReadFileBytes(path), "precious bytes");

  // An existing momenta array is not replaced either.
  const std::string arr = dir.File("a.npy");
  {
    auto a = MustCreate(arr, DType::kI1, {4});
    ASSERT_TRUE(a);
    const std::vector<Value> v(4, Value::Int(9));
    ASSERT_OK(a->WriteValues(0, v));
  }
  const std::string before = ReadFileBytes(arr);
  EXPECT_FALSE(ArrayFile::Create(arr, DType::kI1, std::vector<uint64_t>{4}, Pread()).ok());
  EXPECT_EQ(ReadFileBytes(arr), before);
}

TEST(ArrayFileTest, FailedCreateLeavesNothingBehind) {
  ScratchDir dir;
  // A shape too large to describe: refused before any file exists.
  const std::string a = dir.File("a.npy");
  auto f = ArrayFile::Create(a, DType::kF8, std::vector<uint64_t>{uint64_t{1} << 61}, Pread());
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), Status::Code::kInvalidArgument);
  EXPECT_HAS(f.status().ToString(), "too large");
  EXPECT_FALSE(std::filesystem::exists(a));
  // In a folder that does not exist.
  f = ArrayFile::Create(dir.File("no/such/dir.npy"), DType::kF8, std::vector<uint64_t>{1}, Pread());
  ASSERT_FALSE(f.ok());
  EXPECT_HAS(f.status().ToString(), "No such file or directory");
  // A size the file system refuses (ftruncate EFBIG on ext4, tmpfs, ...):
  // the half-made file is removed again.
  const std::string b = dir.File("b.npy");
  f = ArrayFile::Create(b, DType::kU1, std::vector<uint64_t>{uint64_t{1} << 62}, Pread());
  if (f.ok()) GTEST_SKIP() << "this file system holds 4 EiB sparse files";
  EXPECT_EQ(f.status().code(), Status::Code::kIOError) << f.status().ToString();
  EXPECT_FALSE(std::filesystem::exists(b));
}

// A backend that forwards to a real one but fails Allocate and/or Write with
// ENOSPC, and counts the calls that reached it.
class FullDiskBackend final : public IoBackend {
 public:
  FullDiskBackend(std::unique_ptr<IoBackend> inner, bool fail_allocate, bool fail_write)
      : IoBackend(inner->path()), inner_(std::move(inner)), fail_allocate_(fail_allocate), fail_write_(fail_write) {}
  std::string Name() const override { return "full-disk(" + inner_->Name() + ")"; }
  Status Read(uint64_t offset, size_t length, char* dest) override { return inner_->Read(offset, length, dest); }
  Status Write(uint64_t offset, std::span<const char> data) override {
    ++writes;
    if (fail_write_) return Status::FromErrno(path(), ENOSPC);
    return inner_->Write(offset, data);
  }
  Status Allocate(uint64_t offset, uint64_t length) override {
    ++allocates;
    if (fail_allocate_) return Status::FromErrno(path(), ENOSPC);
    return inner_->Allocate(offset, length);
  }
  Status Sync() override { return inner_->Sync(); }
  Result<uint64_t> Size() override { return inner_->Size(); }

  int writes = 0;
  int allocates = 0;

 private:
  std::unique_ptr<IoBackend> inner_;
  const bool fail_allocate_;
  const bool fail_write_;
};

TEST(ArrayFileTest, InjectedDiskFullFailsBeforeAnyByteChanges) {
  ScratchDir dir;
  const std::string path = dir.File("full.npy");
  std::vector<Value> old;
  for (int k = 0; k < 100; ++k) old.push_back(Value::Float(k + 0.25));
  {
    auto f = MustCreate(path, DType::kF8, {1000});
    ASSERT_TRUE(f);
    ASSERT_OK(f->WriteValues(0, old));
  }
  const std::string before = ReadFileBytes(path);
  const std::vector<Value> update(500, Value::Float(-1));

  for (const bool fail_write : {false, true}) {
    SCOPED_TRACE(fail_write ? "Write fails" : "Allocate fails");
    auto inner = OpenIoBackend(path, IoOptions{.kind = IoKind::kPread, .writable = true});
    ASSERT_OK(inner);
    auto* full = new FullDiskBackend(std::move(inner).value(), !fail_write, fail_write);
    auto f = ArrayFile::OpenWith(std::unique_ptr<IoBackend>(full));
    ASSERT_OK(f);
    Status s = (*f)->WriteValues(50, update);
    EXPECT_EQ(s.code(), Status::Code::kIOError);
    EXPECT_EQ(s.ToString(), "IO error: " + path + ": No space left on device");
    EXPECT_EQ(s.sys_errno(), ENOSPC);
    EXPECT_EQ(full->allocates, 1);
    EXPECT_EQ(full->writes, fail_write ? 1 : 0);  // Allocate comes first
    const char raw[8] = {};
    s = (*f)->WriteRaw(999, 1, raw);
    EXPECT_HAS(s.ToString(), "No space left on device");
    EXPECT_EQ(ReadFileBytes(path), before);
  }
  auto f = MustOpen(path);
  ASSERT_TRUE(f);
  std::vector<Value> got;
  ASSERT_OK(f->ReadValues(0, 100, &got));
  for (int k = 0; k < 100; ++k) EXPECT_EQ(got[k].f, k + 0.25);
}

TEST(ArrayFileTest, RealDiskFullOnATinyTmpfs) {
  ScratchDir dir;
  const std::string mnt = dir.File("mnt");
  ASSERT_EQ(::mkdir(mnt.c_str(), 0755), 0);
  TmpfsMount tmpfs(mnt);
  if (!tmpfs.mounted()) GTEST_SKIP() << "cannot mount a 1 MiB tmpfs (" << tmpfs.error() << ")";

  const std::string path = mnt + "/full.npy";
  const uint64_t n = uint64_t{1} << 20;  // 8 MiB of f8, sparse: fits until written
  auto f = MustCreate(path, DType::kF8, {n});
  ASSERT_TRUE(f);
  std::vector<Value> old;
  for (int k = 0; k < 1000; ++k) old.push_back(Value::Float(k * 3.0));
  ASSERT_OK(f->WriteValues(0, old));

  const std::vector<Value> big(300000, Value::Float(7));  // 2.4 MB > 1 MiB
  const Status s = f->WriteValues(100000, big);
  EXPECT_EQ(s.ToString(), "IO error: " + path + ": No space left on device");

  f.reset();
  f = MustOpen(path);
  ASSERT_TRUE(f);
  std::vector<Value> got;
  ASSERT_OK(f->ReadValues(0, 1000, &got));
  for (int k = 0; k < 1000; ++k) ASSERT_EQ(got[k].f, k * 3.0) << "#" << k;
  // Nothing of the failed write landed.
  std::vector<double> d(300000);
  ASSERT_OK(f->ReadDoubles(100000, d.size(), d.data()));
  for (size_t k = 0; k < d.size(); ++k) ASSERT_EQ(d[k], 0.0) << "#" << k;
}

}  // namespace
}  // namespace momenta
