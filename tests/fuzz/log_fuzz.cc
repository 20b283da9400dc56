// Fuzz target `log`: update-log segments after a crash or worse — decoding
// (storage/log/log_codec.h, log_scan.h), the reader (log_reader.h) and the
// writer's recovery scan over a damaged folder (log_recovery.h).
//
// Input, made into a log folder on tmpfs (fuzz_scratch.h), emptied per input:
//   byte 0        segments = 1 + b % 3; (b >> 2) % 3 picks the high-water
//                 mark: 0 none, 1 a valid one (logged = reserved = byte 1,
//                 this boot), 2 the next 128 input bytes as the file
//   byte 1        the first segment's name: sequence 1 + b
//   then per segment: [gap u8][length u16 LE][bytes]; a segment's name is the
//   previous one's + gap (the last segment takes whatever is left).
// The seeds hold tests/data/golden_log_v1.log (dtype i4, sequences 7..12).
//
// Properties checked on every input:
//   - nothing crashes, and every error is a Status;
//   - every record the reader returns was written as part of a frame whose
//     header and payload checks hold (found by an independent scan of the
//     bytes), and their sequences strictly increase; a following reader
//     returns the same records;
//   - the writer's recovery (with the lock held) hands out a next sequence
//     above every sequence a reader returned (sequence numbers are never
//     reused), and a second recovery finds nothing more to cut and the same
//     next sequence;
//   - a writer then opens (with the dtype the log holds) and appends one
//     record, and a reader returns exactly the records it returned before,
//     then the new one with the sequence Append gave.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "storage/array/writer_lock.h"
#include "storage/log/log_codec.h"
#include "storage/log/log_mark.h"
#include "storage/log/log_reader.h"
#include "storage/log/log_recovery.h"
#include "storage/log/log_segments.h"
#include "storage/log/log_writer.h"
#include "storage/util/crc32c.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_scratch.h"

namespace {

using namespace momenta;

const std::string& LogDir() {
  static const std::string dir = momenta::fuzz::FuzzScratchDir("log") + "/log";
  return dir;
}

void WriteFile(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  FUZZ_CHECK(out.good(), path.c_str());
}

std::string RecordBytes(const LogRecord& r) { return std::string(reinterpret_cast<const char*>(&r), sizeof r); }

// Every record of every frame anywhere in `bytes` (past a segment header)
// whose frame header and payload checks hold: an independent scan, without
// the reader's resume rules, of what a reader may return.
void ValidFramesAnywhere(std::string_view bytes, std::set<std::string>* records) {
  for (size_t at = sizeof(LogSegmentHeader); at + sizeof(LogFrameHeader) <= bytes.size(); ++at) {
    LogFrameHeader h;
    std::memcpy(&h, bytes.data() + at, sizeof h);
    if (Crc32c(&h, offsetof(LogFrameHeader, header_crc)) != h.header_crc) continue;
    if (h.count == 0 || h.count > kMaxFrameRecords || h.payload_bytes != uint64_t{h.count} * sizeof(LogRecord))
      continue;
    if (h.payload_bytes > bytes.size() - at - sizeof h) continue;
    const char* payload = bytes.data() + at + sizeof h;
    if (Crc32c(payload, h.payload_bytes) != h.payload_crc) continue;
    for (uint32_t k = 0; k < h.count; ++k)
      records->insert(std::string(payload + k * sizeof(LogRecord), sizeof(LogRecord)));
  }
}

// The whole log as a reader returns it (plain or following), with its
// sequences checked to increase. Errors end the read (hostile bytes may be
// refused: a newer format version); `*failed` says so.
std::vector<LogRecord> ReadAll(bool follow, bool* failed) {
  std::vector<LogRecord> out;
  *failed = false;
  LogReaderOptions o;
  o.follow = follow;
  auto reader = LogReader::Open(LogDir(), o);
  if (!reader.ok()) {
    *failed = true;
    return out;
  }
  LogRecord r;
  for (;;) {
    auto got = (*reader)->Next(&r);
    if (!got.ok()) {
      *failed = true;
      break;
    }
    if (!*got) break;
    FUZZ_CHECK(out.empty() || r.sequence > out.back().sequence, "the reader's sequences do not increase");
    out.push_back(r);
  }
  for (const LogDamage& d : (*reader)->damage()) FUZZ_CHECK(!d.ToString().empty(), "an empty damage report");
  return out;
}

// The folder the input describes (see the top of the file). Returns the
// valid frames' records of every segment written.
std::set<std::string> MakeLog(const uint8_t* data, size_t size) {
  std::error_code ec;
  std::filesystem::remove_all(LogDir(), ec);
  std::filesystem::create_directories(LogDir());
  std::set<std::string> valid;
  const int segments = 1 + data[0] % 3;
  const int mark = (data[0] >> 2) % 3;
  uint64_t name = 1 + uint64_t{data[1]};
  size_t at = 2;
  if (mark == 1) {
    auto m = LogMarkFile::Open(LogDir(), std::nullopt, data[1], data[1], /*sync=*/false);
    FUZZ_CHECK(m.ok(), m.status().ToString().c_str());
  } else if (mark == 2) {
    const size_t n = std::min<size_t>(128, size - at);
    WriteFile(LogMarkPath(LogDir()), std::string_view(reinterpret_cast<const char*>(data + at), n));
    at += n;
  }
  for (int s = 0; s < segments && at < size; ++s) {
    if (s > 0) {
      name += data[at++];
      if (at >= size) break;
    }
    size_t length = size - at;
    if (s + 1 < segments && size - at >= 2) {
      length = std::min<size_t>(data[at] | (data[at + 1] << 8), size - at - 2);
      at += 2;
    }
    const std::string_view bytes(reinterpret_cast<const char*>(data + at), length);
    WriteFile(LogDir() + "/" + LogSegmentName(name), bytes);
    ValidFramesAnywhere(bytes, &valid);
    at += length;
  }
  return valid;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  LogDir();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const std::set<std::string> valid = MakeLog(data, size);

  bool failed = false, follow_failed = false;
  const std::vector<LogRecord> before = ReadAll(false, &failed);
  for (const LogRecord& r : before)
    FUZZ_CHECK(valid.count(RecordBytes(r)) == 1, "the reader returned a record of no valid frame");
  const std::vector<LogRecord> followed = ReadAll(true, &follow_failed);
  if (!failed && !follow_failed) FUZZ_CHECK(followed == before, "a following reader returned other records");

  LogRecovery first;
  {
    auto lock = WriterLock::Acquire(LogDir() + "/writer.lock", LogDir());
    FUZZ_CHECK(lock.ok(), lock.status().ToString().c_str());
    auto recovery = RecoverLog(LogDir());
    if (!recovery.ok()) return 0;  // refused (a newer format): the writer must refuse too
    first = std::move(recovery).value();
  }
  for (const LogDamage& d : first.damage) FUZZ_CHECK(!d.ToString().empty(), "an empty recovery report");
  if (!before.empty())
    FUZZ_CHECK(first.next_sequence > before.back().sequence, "recovery would hand out a sequence a reader saw");

  LogWriterOptions o;
  o.dtype = first.dtype.value_or(DType::kF8);
  o.sync = LogSync::kNone;
  // Segments rotate past 16 KiB (inputs are smaller, so most appends go to
  // the recovered segment), and the writer then reserves at most that much
  // ahead instead of 1 MiB: a tmpfs fallocate and its trim at Close were a
  // third of each input's time.
  o.segment_bytes = 16 << 10;
  auto writer = LogWriter::Open(LogDir(), o);
  FUZZ_CHECK(writer.ok(), writer.status().ToString().c_str());
  FUZZ_CHECK((*writer)->recovery().bytes_cut == 0, "a second recovery cut more");
  FUZZ_CHECK((*writer)->recovery().next_sequence == first.next_sequence, "a second recovery moved the sequence");
  LogRecord fresh;
  fresh.time = 1234;
  fresh.index = 42;
  fresh.new_raw = 7;
  auto appended = (*writer)->Append({&fresh, 1});
  FUZZ_CHECK(appended.ok(), appended.status().ToString().c_str());
  FUZZ_CHECK((*writer)->Close().ok(), "close");
  writer->reset();

  if (failed) return 0;
  const std::vector<LogRecord> after = ReadAll(false, &failed);
  FUZZ_CHECK(!failed, "the log read before the append no longer reads");
  FUZZ_CHECK(after.size() == before.size() + 1, "reading after the append returned other records");
  FUZZ_CHECK(std::equal(before.begin(), before.end(), after.begin()), "the records before the append changed");
  FUZZ_CHECK(after.back().sequence == *appended && after.back().index == 42, "the appended record is not last");
  return 0;
}
