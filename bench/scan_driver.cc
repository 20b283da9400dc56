// A plain scan through momenta's own I/O backend, without its buffer: the
// reference `momenta bench` puts beside every query (the cost a program pays
// that reads the range to answer it).
//
//   scan_driver ARRAY.npy P:Q [P:Q ...]
//
// Opens the f8 array as the CLI does (IoOptions{}: io_uring when the kernel
// allows, O_DIRECT where aligned) and, per range, reads elements [P, Q) in
// 8 MiB page-aligned chunks, four in flight per ReadBatch, summing with
// bench/moments' Exact. Prints one JSON line per range:
//   {"range":[P,Q],"elapsed_us":T,"bytes_read":B,"sum":S,"var":V,"min":m,"max":M,"io":"..."}
// (var: population). Cold only if the caller dropped the page cache. A bad
// argument or a failed read: one line on stderr, exit 1.
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "bench/moments/reference.h"
#include "storage/array/array_file.h"

namespace {

using momenta::moments_driver::Exact;
using Clock = std::chrono::steady_clock;

constexpr uint64_t kChunk = 8 << 20;  // bytes per read request
constexpr int kInFlight = 4;          // requests per ReadBatch
constexpr uint64_t kAlign = 4096;

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "scan_driver: %s\n", message.c_str());
  std::exit(1);
}

bool ParseRange(const std::string& text, uint64_t length, uint64_t* p, uint64_t* q) {
  char* end = nullptr;
  *p = std::strtoull(text.c_str(), &end, 10);
  if (end == text.c_str() || *end != ':') return false;
  const char* rest = end + 1;
  *q = std::strtoull(rest, &end, 10);
  return end != rest && *end == '\0' && *p <= *q && *q <= length;
}

// Scans elements [p, q): every byte of the aligned cover read, the elements
// inside summed. *bytes gets the bytes read.
Exact Scan(momenta::ArrayFile& array, char* buf, uint64_t p, uint64_t q, uint64_t* bytes) {
  Exact e;
  *bytes = 0;
  if (p == q) return e;
  const uint64_t first = array.ByteOffset(p), last = array.ByteOffset(q);
  uint64_t at = first / kAlign * kAlign;
  auto size = array.io().Size();
  if (!size.ok()) Die(size.status().ToString());
  const uint64_t end = std::min<uint64_t>(*size, (last + kAlign - 1) / kAlign * kAlign);
  while (at < end) {
    std::vector<momenta::ReadRequest> batch;
    for (int i = 0; i < kInFlight && at < end; ++i) {
      const uint64_t n = std::min(kChunk, end - at);
      batch.push_back({at, static_cast<size_t>(n), buf + i * kChunk});
      at += n;
    }
    if (auto s = array.io().ReadBatch(batch); !s.ok()) Die(s.ToString());
    for (const momenta::ReadRequest& r : batch) {
      *bytes += r.length;
      const uint64_t lo = std::max(r.offset, first), hi = std::min(r.offset + r.length, last);
      if (lo < hi) e.Add(reinterpret_cast<const double*>(r.dest + (lo - r.offset)), (hi - lo) / 8);
    }
  }
  return e;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) Die("usage: scan_driver ARRAY.npy P:Q [P:Q ...]");
  auto array = momenta::ArrayFile::Open(argv[1], momenta::IoOptions{});
  if (!array.ok()) Die(array.status().ToString());
  if ((*array)->dtype() != momenta::DType::kF8) Die(std::string(argv[1]) + ": not an f8 array");
  // Element offsets are 8-aligned (the header is 4096 bytes), so a chunk
  // boundary never splits an element.
  if ((*array)->ByteOffset(0) % 8 != 0) Die(std::string(argv[1]) + ": elements not 8-byte aligned");
  auto* buf = static_cast<char*>(std::aligned_alloc(kAlign, kChunk * kInFlight));
  if (buf == nullptr) Die("out of memory");
  for (int i = 2; i < argc; ++i) {
    uint64_t p = 0, q = 0;
    if (!ParseRange(argv[i], (*array)->length(), &p, &q))
      Die(std::string("'") + argv[i] + "' is not a range P:Q inside the array");
    const auto t0 = Clock::now();
    uint64_t bytes = 0;
    const Exact e = Scan(**array, buf, p, q, &bytes);
    const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    std::printf("{\"range\":[%" PRIu64 ",%" PRIu64 "],\"elapsed_us\":%.3f,\"bytes_read\":%" PRIu64
                ",\"sum\":%.17Lg,\"var\":%.17Lg,\"min\":%.17g,\"max\":%.17g,\"io\":\"%s\"}\n",
                p, q, us, bytes, e.sum, e.n ? e.var() : 0.0L, e.n ? e.min : 0.0, e.n ? e.max : 0.0,
                (*array)->io().Name().c_str());
  }
  std::free(buf);
  return 0;
}
