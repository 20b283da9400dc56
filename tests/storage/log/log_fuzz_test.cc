// The log reader and recovery against hostile bytes: random files where
// segments should be, and valid logs with random bytes flipped, inserted,
// removed, zeroed or duplicated. Nothing may crash or hang; every record that
// comes back must be one that was written, in increasing sequence order; the
// writer must reopen the damaged log and go on. Seeds are printed.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "storage/log/log_codec.h"
#include "storage/log/log_reader.h"
#include "storage/log/log_segments.h"
#include "storage/log/log_writer.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using testing::ReadFileBytes;
using testing::ScratchDir;
using testing::WriteFileBytes;

// Reads the whole log (plain, then following); returns the records, checking
// order. Errors are allowed (the bytes are hostile); crashes are not.
std::vector<LogRecord> ReadAllChecked(const std::string& log, bool follow) {
  std::vector<LogRecord> out;
  LogReaderOptions o;
  o.follow = follow;
  auto reader = LogReader::Open(log, o);
  if (!reader.ok()) return out;
  LogRecord r;
  for (int guard = 0; guard < 1000000; ++guard) {
    auto got = (*reader)->Next(&r);
    if (!got.ok() || !*got) break;
    if (!out.empty()) {
      EXPECT_GT(r.sequence, out.back().sequence);
    }
    out.push_back(r);
  }
  for (const LogDamage& d : (*reader)->damage()) EXPECT_FALSE(d.ToString().empty());
  return out;
}

TEST(LogFuzzTest, RandomBytesWhereSegmentsShouldBe) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (rerun with MOMENTA_SEED)");
  std::mt19937_64 rng(seed);
  for (int round = 0; round < 300; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    ScratchDir dir;
    const std::string log = dir.File("log");
    std::filesystem::create_directories(log);
    const int files = 1 + static_cast<int>(rng() % 3);
    for (int f = 0; f < files; ++f) {
      const uint64_t first = 1 + rng() % 50 + static_cast<uint64_t>(f) * 50;
      std::string bytes;
      if (rng() % 2) {  // a valid header, then noise: the frames get fuzzed
        const LogSegmentHeader h = MakeLogSegmentHeader(first, DType::kF8, 0);
        bytes.assign(reinterpret_cast<const char*>(&h), sizeof h);
      }
      const size_t n = rng() % 4096;
      for (size_t k = 0; k < n; ++k) bytes.push_back(static_cast<char>(rng()));
      // Sometimes a real frame in the noise.
      if (rng() % 2 && bytes.size() > 64) {
        std::vector<LogRecord> recs(1 + rng() % 4);
        for (size_t k = 0; k < recs.size(); ++k) recs[k].sequence = first + 3 + k;
        std::string frame;
        AppendLogFrame(recs, &frame);
        bytes.insert(64 + rng() % (bytes.size() - 63), frame);
      }
      WriteFileBytes(log + "/" + LogSegmentName(first), bytes);
    }
    const auto plain = ReadAllChecked(log, false);
    const auto followed = ReadAllChecked(log, true);
    EXPECT_EQ(plain.size(), followed.size());
    LogWriterOptions o;
    auto w = LogWriter::Open(log, o);
    if (!w.ok()) continue;  // e.g. refused: another dtype. Never a crash.
    uint64_t max_seen = 0;
    for (const auto& r : plain) max_seen = std::max(max_seen, r.sequence);
    LogRecord rec;
    auto first = (*w)->Append({&rec, 1});
    ASSERT_OK(first);
    w->reset();
    const auto after = ReadAllChecked(log, false);
    ASSERT_FALSE(after.empty());
    EXPECT_EQ(after.back().sequence, *first);
  }
}

TEST(LogFuzzTest, MutatedValidLogs) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (rerun with MOMENTA_SEED)");
  std::mt19937_64 rng(seed);
  for (int round = 0; round < 200; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    ScratchDir dir;
    const std::string log = dir.File("log");
    LogWriterOptions o;
    o.sync = LogSync::kNone;
    o.segment_bytes = 512 + rng() % 2048;
    std::map<uint64_t, LogRecord> written;
    {
      auto w = LogWriter::Open(log, o);
      ASSERT_OK(w);
      const int frames = 1 + static_cast<int>(rng() % 30);
      for (int f = 0; f < frames; ++f) {
        std::vector<LogRecord> recs(1 + rng() % 12);
        for (auto& r : recs) {
          r.index = rng();
          r.time = static_cast<int64_t>(rng());
          r.old_raw = rng();
          r.new_raw = rng();
        }
        auto first = (*w)->Append(recs);
        ASSERT_OK(first);
        for (size_t k = 0; k < recs.size(); ++k) {
          recs[k].sequence = *first + k;
          written[*first + k] = recs[k];
        }
      }
    }
    auto segments = ListLogSegments(log);
    ASSERT_OK(segments);
    const int mutations = 1 + static_cast<int>(rng() % 4);
    for (int m = 0; m < mutations; ++m) {
      const std::string& path = (*segments)[rng() % segments->size()].path;
      std::string bytes = ReadFileBytes(path);
      const size_t at = bytes.empty() ? 0 : rng() % bytes.size();
      const size_t len = std::min<size_t>(1 + rng() % 100, bytes.size() - at);
      switch (rng() % 6) {
        case 0:
          if (!bytes.empty()) bytes[at] = static_cast<char>(bytes[at] ^ (1 + rng() % 255));
          break;
        case 1:
          bytes.resize(at);
          break;
        case 2:
          bytes.insert(at, std::string(1 + rng() % 100, static_cast<char>(rng())));
          break;
        case 3:
          bytes.erase(at, len);
          break;
        case 4:
          bytes.replace(at, len, std::string(len, '\0'));
          break;
        case 5:
          bytes.insert(rng() % (bytes.size() + 1), bytes.substr(at, len));
          break;
      }
      WriteFileBytes(path, bytes);
    }
    for (bool follow : {false, true}) {
      for (const LogRecord& r : ReadAllChecked(log, follow)) {
        auto it = written.find(r.sequence);
        ASSERT_TRUE(it != written.end()) << "sequence " << r.sequence << " was never written";
        ASSERT_EQ(r, it->second) << "sequence " << r.sequence;
      }
    }
    // The writer reopens the damaged log and goes on past everything readable.
    auto w = LogWriter::Open(log, o);
    ASSERT_OK(w);
    LogRecord extra;
    extra.index = 77;
    auto first = (*w)->Append({&extra, 1});
    ASSERT_OK(first);
    w->reset();
    const auto after = ReadAllChecked(log, false);
    ASSERT_FALSE(after.empty());
    EXPECT_EQ(after.back().sequence, *first);
    EXPECT_EQ(after.back().index, 77u);
  }
}

}  // namespace
}  // namespace momenta
