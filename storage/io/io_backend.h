// IoBackend: the one interface through which momenta reads and writes the bytes
// of a file. Three implementations live in their own .cc files (pread, mmap,
// io_uring) and are reached only through OpenIoBackend() below.
//
// Offsets are absolute byte offsets in the file. No method keeps a pointer to
// the caller's buffers after it returns. A backend object is used by one thread
// at a time (callers that share one across threads serialize access).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "storage/io/extents.h"
#include "storage/util/status.h"

namespace momenta {

// One read of a batch: fill dest[0, length) from file bytes [offset, offset + length).
struct ReadRequest {
  uint64_t offset = 0;
  size_t length = 0;
  char* dest = nullptr;  // caller-owned, at least `length` bytes
};

struct IoOptions;  // below
class ReadFlow;    // storage/io/read_flow.h

class IoBackend {
 public:
  virtual ~IoBackend() = default;
  IoBackend(const IoBackend&) = delete;
  IoBackend& operator=(const IoBackend&) = delete;

  // "pread", "mmap" or "io_uring" (the latter may add " (O_DIRECT)").
  virtual std::string Name() const = 0;
  // The path the backend was opened with (used in every error message).
  const std::string& path() const { return path_; }
  // Whether queries reading through this backend may sum pieces whose pages
  // are all cached straight from a mapping of the file instead of reading
  // them (IoOptions::map_resident). False for a backend not opened by
  // OpenIoBackend (tests' faulty backends): every byte then goes through it.
  bool maps_resident() const { return maps_resident_; }

  // Reads exactly `length` bytes at `offset` into `dest`. Short reads are
  // retried; a range that reaches past the end of the file is an error
  // ("IO error: <path>: read past end of file (file shrank?)"), never a SIGBUS.
  [[nodiscard]] virtual Status Read(uint64_t offset, size_t length, char* dest) = 0;

  // Reads every request; same contract as Read for each. Requests may overlap
  // in the file but their destinations must not. The base version loops over
  // Read; io_uring overrides it to keep up to its queue depth in flight.
  // On error some destinations may already be filled.
  [[nodiscard]] virtual Status ReadBatch(std::span<const ReadRequest> requests);

  // Reads `mine` from this backend's file and `theirs` from `other`'s as one
  // batch where the backends allow it (two io_uring backends: one submission
  // on this backend's ring, so a query's array and buffer reads overlap);
  // otherwise one after the other. Same contract as ReadBatch for each.
  [[nodiscard]] virtual Status ReadBatchWith(std::span<const ReadRequest> mine, IoBackend& other,
                                             std::span<const ReadRequest> theirs);

  // Streams `requests` in order for a consumer on another thread (a build):
  // request i is queued only once flow.Allow has passed i, and flow.Landed
  // reports each prefix of requests that has landed, so the consumer can use
  // and free the destinations of early requests while later ones are read.
  // Same contract as ReadBatch for each request. io_uring keeps its window
  // full across the whole list and reaps completions in batches; the others
  // read one request after another. Returns when every request landed, or
  // after an error or flow.Stop once the reads in flight have landed; it
  // always ends with flow.Finish(). Blocks: run it on its own thread.
  [[nodiscard]] Status ReadStream(std::span<const ReadRequest> requests, ReadFlow& flow);

  // Writes all of `data` at `offset`, extending the file if needed. Either all
  // bytes are handed to the OS or an error is returned (e.g. ENOSPC:
  // "IO error: <path>: No space left on device"). Durable only after Sync().
  [[nodiscard]] virtual Status Write(uint64_t offset, std::span<const char> data) = 0;

  // Reserves disk blocks for file bytes [offset, offset + length) (fallocate,
  // size unchanged where the range lies inside the file) so that a Write into
  // a sparse hole cannot fail half-way for lack of space: ENOSPC shows up here,
  // before any byte changed. OK without effect where the file system has no
  // fallocate (EOPNOTSUPP).
  [[nodiscard]] virtual Status Allocate(uint64_t offset, uint64_t length) = 0;

  // fdatasync: every Write that returned OK before this call survives a crash.
  [[nodiscard]] virtual Status Sync() = 0;

  // The file's current size in bytes (fstat; reflects writes by others).
  [[nodiscard]] virtual Result<uint64_t> Size() = 0;

  // Where [begin, end) may hold data (storage/io/extents.h), over the backend's
  // own descriptor where it has one (no open per call: a writer asks per batch).
  [[nodiscard]] virtual Result<std::vector<ByteRange>> DataExtents(uint64_t begin, uint64_t end) {
    return momenta::DataExtents(path(), begin, end);
  }

 protected:
  explicit IoBackend(std::string path) : path_(std::move(path)) {}
  // ReadStream without the final flow.Finish(). The base version reads one
  // request after another.
  [[nodiscard]] virtual Status StreamReads(std::span<const ReadRequest> requests, ReadFlow& flow);

 private:
  friend Result<std::unique_ptr<IoBackend>> OpenIoBackend(const std::string&, const IoOptions&, std::string*);
  const std::string path_;
  bool maps_resident_ = false;
};

enum class IoKind { kAuto, kUring, kMmap, kPread };

// "auto" | "uring" | "mmap" | "pread"
std::string_view IoKindName(IoKind kind);
// The kind IoKindName gives `text`; else InvalidArgument naming `what`, the
// caller's word for where the text came from (a CLI says "--io").
Result<IoKind> ParseIoKind(std::string_view text, const std::string& what);

struct IoOptions {
  IoKind kind = IoKind::kAuto;
  bool writable = false;
  // io_uring only: requests kept in flight by ReadBatch.
  unsigned queue_depth = 32;
  // io_uring only: read through an O_DIRECT descriptor whenever a request is
  // at least direct_min_bytes long and its offset, length and buffer meet
  // the file's direct-I/O alignment; others go through the page cache.
  // Off: always the page cache.
  bool direct = true;
  // io_uring only: the shortest read that goes through O_DIRECT. Shorter
  // reads (a query's end leaves and nodes, a batch's coalesced groups) go
  // through the page cache and leave their pages there, so a range asked
  // again is answered from memory (readahead off, below: a cold read brings
  // in only the pages it asks for). Longer reads (a build's, a scan's) stream
  // past the cache instead of evicting what everything else on the machine
  // keeps there (a build reads 1 MiB requests). 0: every aligned read direct.
  size_t direct_min_bytes = size_t{1} << 20;
  // io_uring only: the kernel's readahead on the buffered descriptor. Off
  // (POSIX_FADV_RANDOM): a read that misses brings in only its own pages.
  bool readahead = false;
  // io_uring only: a read that would go through O_DIRECT first asks the page
  // cache (cachestat, then preadv2 RWF_NOWAIT when it holds all of it), so
  // data already cached is copied rather than read from the device again.
  // Reads through the page cache need no such probe: the ring copies cached
  // pages at submission and sends only the missing ones to the device.
  bool cache_first = true;
  // Queries (any backend): a piece of the array whose pages are all in the
  // page cache (one mincore per piece) is summed straight from a read-only
  // mapping of the file (ArrayFile::ReadMapping) instead of copied out by a
  // read; the other pieces are read as before, in one batch. Off: every
  // piece is read.
  bool map_resident = true;
};

// Opens an existing file with the requested backend. With kAuto, io_uring is
// probed at run time; if ring setup fails the pread backend is used and
// *notice (when non-null) is set to one line saying which backend was chosen
// and why, e.g. "io_uring unavailable (Operation not permitted): using pread".
// A named backend that cannot start is an error, not a fallback.
Result<std::unique_ptr<IoBackend>> OpenIoBackend(const std::string& path, const IoOptions& options,
                                                 std::string* notice = nullptr);

// Alignment that O_DIRECT needs for memory and for file offsets/lengths on the
// file system holding `path` (statx STATX_DIOALIGN, else the logical block
// size, else 4096). 0 when the file system refuses O_DIRECT altogether.
struct DirectIoAlignment {
  uint32_t memory = 0;
  uint32_t offset = 0;
};
DirectIoAlignment ProbeDirectIoAlignment(const std::string& path);

}  // namespace momenta
