// ArrayStore: stores land in the file (seen by a fresh open after Sync),
// loads see the page cache as it is, and a fault becomes a Status naming the
// file and the element: a file truncated under the mapping, and a store into
// a hole on a full disk (a 1 MiB tmpfs, when the test may mount one).
#include "storage/array/array_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <vector>

#include "storage/array/array_file.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using ::momenta::testing::ScratchDir;
using ::momenta::testing::TmpfsMount;

IoOptions Pread() { return IoOptions{.kind = IoKind::kPread}; }

std::unique_ptr<ArrayFile> MustCreate(const std::string& path, uint64_t n) {
  const std::vector<uint64_t> shape = {n};
  auto f = ArrayFile::Create(path, DType::kI4, shape, Pread());
  EXPECT_OK(f);
  return f.ok() ? std::move(f).value() : nullptr;
}

std::unique_ptr<ArrayStore> MustOpenStore(ArrayFile& array) {
  auto store = array.OpenStore();
  EXPECT_OK(store);
  return store.ok() ? std::move(store).value() : nullptr;
}

TEST(ArrayStoreTest, StoresReachTheFileAndLoadsSeeThem) {
  ScratchDir dir;
  const std::string path = dir.File("a.npy");
  auto array = MustCreate(path, 5000);
  ASSERT_TRUE(array);
  auto store = MustOpenStore(*array);
  ASSERT_TRUE(store);
  EXPECT_EQ(store->path(), path);
  for (uint64_t k = 0; k < 5000; k += 7) {
    const int32_t v = static_cast<int32_t>(k * 3 - 100);
    store->PrepareForStore(k);
    ASSERT_OK(store->Store(k, reinterpret_cast<const char*>(&v)));
  }
  int32_t one = 0;
  ASSERT_OK(store->Load(700, reinterpret_cast<char*>(&one)));
  EXPECT_EQ(one, 700 * 3 - 100);
  std::vector<int32_t> range(21);
  ASSERT_OK(store->LoadRange(4970, 21, reinterpret_cast<char*>(range.data())));
  for (uint64_t k = 4970; k < 4991; ++k)
    EXPECT_EQ(range[k - 4970], k % 7 == 0 ? static_cast<int32_t>(k * 3 - 100) : 0) << "element " << k;
  ASSERT_OK(store->LoadRange(0, 0, nullptr));

  ASSERT_OK(array->Sync());
  store.reset();
  array.reset();
  auto reopened = ArrayFile::Open(path, Pread());
  ASSERT_OK(reopened);
  std::vector<Value> values;
  ASSERT_OK((*reopened)->ReadValues(0, 5000, &values));
  for (uint64_t k = 0; k < 5000; ++k)
    ASSERT_EQ(values[k].i, k % 7 == 0 ? static_cast<int64_t>(k * 3) - 100 : 0) << "element " << k;
}

TEST(ArrayStoreTest, ATruncatedFileIsAnErrorNamingTheElement) {
  ScratchDir dir;
  const std::string path = dir.File("a.npy");
  auto array = MustCreate(path, 1 << 20);  // 4 MiB of data after a 4 KiB header
  ASSERT_TRUE(array);
  auto store = MustOpenStore(*array);
  ASSERT_TRUE(store);
  ASSERT_EQ(::truncate(path.c_str(), 8192), 0);  // elements past 1024 lose their pages
  int32_t v = 5;
  EXPECT_OK(store->Store(10, reinterpret_cast<const char*>(&v)));  // still inside the file
  const uint64_t gone = 600000;
  EXPECT_EQ(store->Load(gone, reinterpret_cast<char*>(&v)).ToString(),
            "IO error: " + path + ": cannot read element 600000 (the file shrank, or the disk is full)");
  EXPECT_EQ(store->Store(gone, reinterpret_cast<const char*>(&v)).ToString(),
            "IO error: " + path + ": cannot write element 600000 (the file shrank, or the disk is full)");
  // A new store sees the file shorter than its header says.
  auto again = array->OpenStore();
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().ToString(), "IO error: " + path + ": file is shorter than its header says (it shrank?)");
}

TEST(ArrayStoreTest, AStoreIntoAHoleOnAFullDiskIsNoSpace) {
  ScratchDir dir;
  const std::string mnt = dir.File("mnt");
  std::filesystem::create_directory(mnt);
  TmpfsMount tmpfs(mnt);
  if (!tmpfs.mounted()) GTEST_SKIP() << "cannot mount a 1 MiB tmpfs (" << tmpfs.error() << ")";
  const std::string path = mnt + "/full.npy";
  auto array = MustCreate(path, uint64_t{1} << 20);  // 4 MiB, sparse: fits until written
  ASSERT_TRUE(array);
  auto store = MustOpenStore(*array);
  ASSERT_TRUE(store);
  // One element per page until the pages run out: a fault, reported as ENOSPC.
  Status s;
  uint64_t k = 0;
  const int32_t zero = 0;
  for (; k < (uint64_t{1} << 20) && s.ok(); k += 1024) s = store->Store(k, reinterpret_cast<const char*>(&zero));
  ASSERT_FALSE(s.ok()) << "the 1 MiB tmpfs took " << k << " elements' pages";
  EXPECT_EQ(s.ToString(), "IO error: " + path + ": No space left on device");
}

}  // namespace
}  // namespace momenta
