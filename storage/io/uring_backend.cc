// The io_uring backend (liburing). ReadBatch keeps up to queue_depth reads in
// flight across a batch of any length: a sliding window that submits the next
// request as each completion arrives. Each SQE carries its own request state
// (user_data -> Op); a short read is resubmitted for its remainder, 0 bytes is
// end of file, -EAGAIN / -EINTR are retried, -EIO of an O_DIRECT read is
// retried once through the page cache (below), other errors go through
// Status::FromErrno so the message reads as it would from pread.
//
// Two descriptors: a buffered one, and (when IoOptions::direct and the file
// system allows it) an O_DIRECT one. A read at least IoOptions::
// direct_min_bytes long whose offset, length and destination meet the
// file's direct-I/O alignment goes through O_DIRECT (a build's streaming
// reads: they pass the page cache by); any other (a query's end leaves and
// nodes; a NumPy file's data starts at byte 128, so most of its ranges) goes
// through the page cache, where it stays for the next read of the same
// bytes. The buffered descriptor has readahead off unless IoOptions::
// readahead (POSIX_FADV_RANDOM, this descriptor only), so a read that misses
// costs the device exactly its own pages. The two are coherent on Linux: a
// direct read first writes back dirty page-cache pages of its range.
//
// A buffered read needs no probe: at submission the ring copies what the
// page cache holds and sends the device only what it misses (no worker
// thread: the missing pages' completion wakes the request), so a batch of
// cached reads costs one io_uring_enter and a cold one one device round.
// Cache first (IoOptions::cache_first) is for the reads that would go
// direct: before such a request goes to the ring, cachestat(2) asks whether
// the page cache holds all of it; if so, one preadv2(RWF_NOWAIT) on the
// buffered descriptor copies it from there and it never reaches the ring
// (one filled in part, a page evicted meanwhile, continues there). Without
// cachestat (before Linux 6.5) or RWF_NOWAIT (EOPNOTSUPP) it turns off for
// the backend.
//
// ReadStream (a build's pass over a whole array) keeps one window over its
// whole list of requests: a landed request's slot takes the next request at
// once, whichever of the caller's chunks it belongs to, so the window never
// drains between chunks; and the thread sleeps until half the window has
// landed rather than waking on each completion (StreamReads, below).
//
// ReadBatchWith another io_uring backend runs both files' reads through this
// backend's ring in one window (a query's array ends and buffer nodes), with
// the peer's plain descriptors (only our own are registered as fixed files).
//
// Writes, Sync and Allocate are plain pwrite / fdatasync / fallocate on the
// buffered descriptor: writes are rare next to reads here and a synchronous
// pwrite keeps their error handling (ENOSPC) identical to the other backends.
//
// Compiled only when liburing is found (MOMENTA_HAVE_URING).
#include <fcntl.h>
#include <liburing.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cerrno>
#include <cstring>
#include <vector>

#include "storage/io/io_backends_internal.h"
#include "storage/io/posix_file.h"
#include "storage/io/read_flow.h"
#include "storage/io/read_log.h"

namespace momenta::internal {
namespace {

// The largest read one SQE asks for; longer requests continue as "short
// reads" (the kernel caps a read at about 2 GiB anyway).
constexpr size_t kMaxSqeBytes = size_t{1} << 30;
constexpr unsigned kMaxDepth = 4096;
constexpr uint64_t kPage = 4096;  // cachestat counts pages of this size (x86-64)

// An io_uring instance, torn down on destruction.
class Ring {
 public:
  Ring() = default;
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;
  ~Ring() {
    if (initialized_) io_uring_queue_exit(&ring_);
  }

  // Returns 0 or -errno from the kernel.
  int Init(unsigned entries) {
    io_uring_params params{};
    // COOP_TASKRUN (5.19+): completions are not signalled with an IPI; we
    // always enter the kernel to wait anyway. Retried without on older kernels.
    params.flags = IORING_SETUP_COOP_TASKRUN;
    int rc = io_uring_queue_init_params(entries, &ring_, &params);
    if (rc == -EINVAL) {
      params = io_uring_params{};
      rc = io_uring_queue_init_params(entries, &ring_, &params);
    }
    initialized_ = rc == 0;
    return rc;
  }
  // A ring for one thread only whose completions wait until that thread
  // asks for them (DEFER_TASKRUN, Linux 6.1): it is woken once the number of
  // completions it waits for is there, not once per completion. 0 or -errno
  // (-EINVAL before 6.1).
  int InitDeferred(unsigned entries) {
    io_uring_params params{};
    params.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
    const int rc = io_uring_queue_init_params(entries, &ring_, &params);
    initialized_ = rc == 0;
    return rc;
  }
  io_uring* get() { return &ring_; }

 private:
  io_uring ring_{};
  bool initialized_ = false;
};

class UringBackend final : public FdBackend {
 public:
  UringBackend(std::string path, FileDescriptor buffered, FileDescriptor direct, DirectIoAlignment align,
               size_t direct_min_bytes, unsigned depth, bool cache_first)
      : FdBackend(std::move(path), std::move(buffered)),
        direct_fd_(std::move(direct)),
        align_(align),
        direct_min_bytes_(direct_min_bytes),
        cache_first_(cache_first),
        ops_(depth) {
    free_.reserve(depth);
    for (Op& op : ops_) free_.push_back(&op);
  }

  // Sets the ring up; 0 or -errno of the setup.
  int Start() {
    int rc = ring_.Init(static_cast<unsigned>(ops_.size()));
    if (rc != 0) return rc;
    started_ = true;
    // Registered files spare the kernel a descriptor lookup per read; without
    // them (old kernel, limits) plain descriptors work the same.
    const int fds[2] = {fd(), direct_fd_.get()};
    fixed_files_ = io_uring_register_files(ring_.get(), fds, direct_fd_.valid() ? 2 : 1) == 0;
    return 0;
  }

  std::string Name() const override { return direct_fd_.valid() ? "io_uring (O_DIRECT)" : "io_uring"; }

  Status Read(uint64_t offset, size_t length, char* dest) override {
    const ReadRequest request{offset, length, dest};
    return ReadBatch(std::span<const ReadRequest>(&request, 1));
  }

  Status ReadBatch(std::span<const ReadRequest> requests) override { return RunBatch(requests, nullptr, {}); }
  // A build's stream: one window over the whole list, reaped in batches.
  Status StreamReads(std::span<const ReadRequest> requests, ReadFlow& flow) override;
  // With another io_uring backend, both files' reads share this ring's window.
  Status ReadBatchWith(std::span<const ReadRequest> mine, IoBackend& other,
                       std::span<const ReadRequest> theirs) override {
    auto* peer = dynamic_cast<UringBackend*>(&other);
    if (peer == nullptr || peer == this) return IoBackend::ReadBatchWith(mine, other, theirs);
    return RunBatch(mine, peer, theirs);
  }

 private:
  // One request in flight. Its address is the SQE's user_data.
  struct Op {
    const ReadRequest* request = nullptr;
    UringBackend* file = nullptr;  // whose descriptors the read uses
    size_t done = 0;               // bytes [0, done) of the request are filled
    bool direct = false;           // the SQE in flight reads through O_DIRECT
    bool buffered = false;         // from now on through the page cache (an O_DIRECT read failed)
  };

  // What completion `res` of `op` means, for a batch and a stream alike:
  // true when the same request continues with a new SQE (a short read asks
  // for the rest; EAGAIN/EINTR ask again; an O_DIRECT read that raced a
  // writer's stores through its mapping can fail with EIO — "Direct I/O
  // collision with buffered writes" in the kernel log — though the device is
  // fine, so it is asked again through the page cache, where a real media
  // error fails too). Else the request is over; a failure becomes *error
  // when that is still OK (the first failure wins), and nothing continues
  // once *error is set.
  static bool Continues(Op* op, int res, Status* error) {
    const ReadRequest& r = *op->request;
    if (res > 0) {
      op->done += static_cast<size_t>(res);
      return op->done < r.length && error->ok();
    }
    if (res == -EAGAIN || res == -EINTR) return error->ok();
    if (res == -EIO && op->direct && error->ok()) {
      op->buffered = true;
      return true;
    }
    if (error->ok())
      *error = res == 0 ? ReadPastEnd(op->file->path(), r.offset, r.length) : Status::FromErrno(op->file->path(), -res);
    return false;
  }

  // Sets the ring up at the first batch; OK or why the ring cannot work.
  Status EnsureStarted() {
    if (!broken_.ok()) return broken_;
    if (started_) return Status::OK();
    if (const int rc = Start(); rc != 0) broken_ = Status::FromErrno(path(), -rc).WithNote("setting up its io_uring");
    return broken_;
  }

  // StreamReads' state: which requests are queued and which have landed.
  struct Stream {
    io_uring* ring;  // the stream's own ring, or the backend's
    bool fixed;      // `ring` has our descriptors registered
    std::span<const ReadRequest> requests;
    ReadFlow& flow;
    std::vector<bool> landed;  // per request
    size_t prefix = 0;         // requests [0, prefix) have landed
    size_t next = 0;           // requests [0, next) were handed to an op (or were empty / cached)
    size_t in_flight = 0;      // ops holding a request
    Status error;              // the first failure; once set, nothing new is queued
  };
  // Queues the stream's next requests into free ops, as far as the flow allows.
  void RefillStream(Stream& st);
  // Handles the completions in the ring: retries, landed requests, errors.
  void ReapStream(Stream& st);
  // Marks request i landed and moves the landed prefix on.
  static void LandStream(Stream& st, size_t i) {
    st.landed[i] = true;
    while (st.prefix < st.landed.size() && st.landed[st.prefix]) ++st.prefix;
  }

  // Reads `mine` from this file and `theirs` from `peer` (may be null) through
  // this backend's ring, up to its queue depth in flight.
  Status RunBatch(std::span<const ReadRequest> mine, UringBackend* peer, std::span<const ReadRequest> theirs);

  // When the page cache holds every page of `op`'s request (cachestat), reads
  // it from there without waiting (op->done grows) and returns true. Else, or
  // when a page went meanwhile, false: the ring reads the rest. The check
  // comes first because a RWF_NOWAIT read that misses still starts readahead
  // of its range, which would then race the O_DIRECT read of the same bytes.
  bool TakeCached(Op* op) {
    const ReadRequest& r = *op->request;
    UringBackend& file = *op->file;
    if (!file.cache_first_ || !file.GoesDirect(r) || !file.AllCached(r.offset, r.length)) return false;
    while (op->done < r.length) {
      iovec iov{r.dest + op->done, std::min(r.length - op->done, kMaxSqeBytes)};
      const ssize_t n = ::preadv2(file.fd(), &iov, 1, static_cast<off_t>(r.offset + op->done), RWF_NOWAIT);
      if (n > 0) {
        op->done += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno == EOPNOTSUPP) file.cache_first_ = false;
      return false;  // evicted meanwhile (EAGAIN), the end of the file or an error: the ring decides
    }
    return true;
  }

  // Whether the page cache holds every page of [offset, offset + length):
  // cachestat(2), Linux 6.5; before it (ENOSYS), cache_first_ turns off.
  bool AllCached(uint64_t offset, size_t length) {
    struct {
      uint64_t off, len;
    } range{offset, length};
    struct {
      uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
    } stat{};
    constexpr long kCachestat = 451;  // __NR_cachestat (x86-64 and the generic table)
    if (::syscall(kCachestat, fd(), &range, &stat, 0) != 0) {
      if (errno == ENOSYS || errno == EOPNOTSUPP) cache_first_ = false;
      return false;
    }
    const uint64_t pages = (offset + length + kPage - 1) / kPage - offset / kPage;
    return stat.nr_cache >= pages;
  }

  bool DirectOk(uint64_t offset, size_t length, const char* dest) const {
    return direct_fd_.valid() && offset % align_.offset == 0 && length % align_.offset == 0 &&
           reinterpret_cast<uintptr_t>(dest) % align_.memory == 0;
  }
  // Whether request r, read from its start, goes through O_DIRECT: long
  // enough to stream past the cache, and aligned.
  bool GoesDirect(const ReadRequest& r) const {
    return r.length >= direct_min_bytes_ && DirectOk(r.offset, r.length, r.dest);
  }

  // Queues one SQE for the unread remainder of `op`. Never fails: at most
  // `depth` ops exist and the submission queue has at least that many slots.
  void Queue(Op* op) { QueueOn(op, ring_.get(), fixed_files_); }
  // Queue on `ring`, whose registered files (when `fixed`) are ours.
  void QueueOn(Op* op, io_uring* ring, bool fixed) {
    const ReadRequest& r = *op->request;
    const UringBackend& file = *op->file;
    const uint64_t offset = r.offset + op->done;
    char* dest = r.dest + op->done;
    size_t length = std::min(r.length - op->done, kMaxSqeBytes);
    const bool direct = !op->buffered && r.length >= file.direct_min_bytes_ && file.DirectOk(offset, length, dest);
    op->direct = direct;
    io_uring_sqe* sqe = io_uring_get_sqe(ring);
    assert(sqe != nullptr && "more ops in flight than submission slots");
    const int index = direct ? 1 : 0;
    if (fixed && &file == this) {  // only our own descriptors are registered
      io_uring_prep_read(sqe, index, dest, static_cast<unsigned>(length), offset);
      sqe->flags |= IOSQE_FIXED_FILE;
    } else {
      io_uring_prep_read(sqe, direct ? file.direct_fd_.get() : file.fd(), dest, static_cast<unsigned>(length), offset);
    }
    io_uring_sqe_set_data(sqe, op);
    if (ReadLog* log = ReadLog::Current()) log->Add(file.path(), offset, length, direct);
  }

  const FileDescriptor direct_fd_;  // invalid when O_DIRECT is off or refused
  const DirectIoAlignment align_;   // meaningful only when direct_fd_ is valid
  const size_t direct_min_bytes_;   // IoOptions::direct_min_bytes
  bool cache_first_;                // IoOptions::cache_first, until the file system refuses RWF_NOWAIT
  Ring ring_;
  bool started_ = false;      // the ring is set up (Start; lazily, once rings are known to work)
  bool fixed_files_ = false;  // fds registered: index 0 buffered, 1 direct
  std::vector<Op> ops_;       // queue_depth slots, never resized (SQEs point into it)
  std::vector<Op*> free_;     // slots not in flight
  Status broken_;             // set when the ring itself failed; every later call returns it
};

// Submission policy. The first window (up to queue_depth reads) goes to the
// kernel in one io_uring_enter. After that, each completion's slot is refilled
// with the next request and submitted at once, one SQE per enter, instead of
// collecting the refills into one submit. A device that completes requests in
// lumps (a virtio disk completes a kick's worth together) would otherwise get
// the whole window back at once and idle while we hand it over again; the
// trickle keeps it streaming. fio submits the same way by default; batching
// the refills cost about a fifth of the random-read IOPS in bench/README.md.
// Once every request is handed out (always, for a batch no deeper than the
// window: a query's reads), the wait is for all in flight at once.
Status UringBackend::RunBatch(std::span<const ReadRequest> mine, UringBackend* peer,
                              std::span<const ReadRequest> theirs) {
  if (!broken_.ok()) return broken_;
  if (!started_) {
    if (const int rc = Start(); rc != 0) {
      broken_ = Status::FromErrno(path(), -rc).WithNote("setting up its io_uring");
      return broken_;
    }
  }
  io_uring* ring = ring_.get();
  if (ReadLog* log = ReadLog::Current()) log->NextRound();
  Status error;          // the first failure; once set, nothing new is queued
  size_t next = 0;       // requests [0, next) of mine, then of theirs, have been handed to an op
  size_t in_flight = 0;  // ops holding a request
  const size_t total = mine.size() + theirs.size();
  auto request_at = [&](size_t k) -> const ReadRequest& { return k < mine.size() ? mine[k] : theirs[k - mine.size()]; };
  // Gives `op` the next non-empty request and queues its SQE; false when
  // there is none (or an error stopped the batch).
  // Requests the page cache fills whole never take a slot of the ring.
  auto take_next = [&](Op* op) {
    while (error.ok() && next < total) {
      if (request_at(next).length == 0) {
        ++next;
        continue;
      }
      UringBackend* file = next < mine.size() ? this : peer;
      *op = Op{&request_at(next++), file, 0, false, false};
      if (TakeCached(op)) continue;
      Queue(op);
      return true;
    }
    return false;
  };

  while (!free_.empty() && take_next(free_.back())) {
    free_.pop_back();
    ++in_flight;
  }
  while (in_flight > 0) {
    // With nothing left to hand out, no completion frees a slot we could
    // refill: wait for every read in flight in one enter (a cold query's
    // whole batch: one sleep, one wakeup) rather than one completion at a
    // time. A short read or retry queues again and the loop comes back.
    const unsigned wait = next >= total ? static_cast<unsigned>(in_flight) : 1;
    if (ReadLog* log = ReadLog::Current()) log->AddWait();
    const int rc = io_uring_submit_and_wait(ring, wait);  // also submits anything queued
    if (rc < 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) {
      // The ring refused to enter. Reads already in flight may still land in
      // the caller's buffers; this backend stops here for good.
      broken_ = Status::FromErrno(path(), -rc);
      return broken_;
    }

    unsigned head;
    unsigned seen = 0;
    io_uring_cqe* cqe;
    io_uring_for_each_cqe(ring, head, cqe) {
      ++seen;
      Op* op = static_cast<Op*>(io_uring_cqe_get_data(cqe));
      const bool again = Continues(op, cqe->res, &error);  // the same request continues with a new SQE
      if (again) {
        Queue(op);
      } else if (!take_next(op)) {
        free_.push_back(op);
        --in_flight;
        continue;
      }
      // A failure here leaves the SQE queued for the submit_and_wait above.
      (void)io_uring_submit(ring);
    }
    io_uring_cq_advance(ring, seen);
  }
  return error;
}

// The stream's policy (a build reading a whole array in order). The window
// never drains: a landed request's slot takes the next request of the list
// whatever chunk of the caller's it belongs to. And the reading thread sleeps
// until half the window has landed, then refills that half with one
// io_uring_enter, instead of waking on every completion as RunBatch does: on
// a loaded machine each wake-up of the reading thread waits for a CPU, and
// with half the window (16 MiB at depth 32 of 1 MiB) still in flight the
// device has work for longer than such a wait.
//
// The stream has a ring of its own where the kernel allows it (DEFER_TASKRUN:
// the reading thread is woken once half the window has landed; on the shared
// ring an O_DIRECT completion wakes it to post each completion, however many
// it waits for), set up on the reading thread and gone when it returns; else
// it uses the backend's ring.
Status UringBackend::StreamReads(std::span<const ReadRequest> requests, ReadFlow& flow) {
  Ring own;
  io_uring* ring = own.get();
  bool fixed = false;  // the own ring has no registered files
  if (own.InitDeferred(static_cast<unsigned>(ops_.size())) != 0) {
    MOMENTA_RETURN_IF_ERROR(EnsureStarted());
    ring = ring_.get();
    fixed = fixed_files_;
  }
  Stream st{ring, fixed, requests, flow, std::vector<bool>(requests.size(), false)};
  const size_t batch = std::max<size_t>(1, ops_.size() / 2);
  while (true) {
    RefillStream(st);
    flow.Landed(st.prefix);
    if (st.in_flight == 0) {
      if (!st.error.ok() || st.next == requests.size()) break;
      if (!flow.WaitAllowed(st.next)) break;  // the consumer stopped the stream
      continue;
    }
    const int rc = io_uring_submit_and_wait(ring, static_cast<unsigned>(std::min(st.in_flight, batch)));
    if (rc < 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) {
      broken_ = Status::FromErrno(path(), -rc);  // reads in flight may still land: the backend stops for good
      return broken_;
    }
    ReapStream(st);
  }
  return st.error;
}

void UringBackend::RefillStream(Stream& st) {
  while (!free_.empty() && st.error.ok() && st.next < st.requests.size() && st.flow.Allowed(st.next)) {
    const size_t i = st.next++;
    Op* op = free_.back();
    *op = Op{&st.requests[i], this, 0, false, false};
    if (st.requests[i].length == 0 || TakeCached(op)) {
      LandStream(st, i);
      continue;
    }
    QueueOn(op, st.ring, st.fixed);
    free_.pop_back();
    ++st.in_flight;
  }
}

void UringBackend::ReapStream(Stream& st) {
  io_uring* ring = st.ring;
  unsigned head;
  unsigned seen = 0;
  io_uring_cqe* cqe;
  io_uring_for_each_cqe(ring, head, cqe) {
    ++seen;
    Op* op = static_cast<Op*>(io_uring_cqe_get_data(cqe));
    const ReadRequest& r = *op->request;
    const bool again = Continues(op, cqe->res, &st.error);  // its new SQE is submitted with the next wait
    if (again) {
      QueueOn(op, st.ring, st.fixed);
      continue;
    }
    if (op->done == r.length) LandStream(st, static_cast<size_t>(op->request - st.requests.data()));
    free_.push_back(op);
    --st.in_flight;
  }
  io_uring_cq_advance(ring, seen);
}

}  // namespace

Result<std::unique_ptr<IoBackend>> OpenUringBackend(const std::string& path, const IoOptions& options) {
  auto buffered = OpenFile(path, options.writable ? O_RDWR : O_RDONLY);
  if (!buffered.ok()) return buffered.status();
  // Advice only: a file system that ignores it reads ahead as before.
  if (!options.readahead) (void)::posix_fadvise(buffered->get(), 0, 0, POSIX_FADV_RANDOM);

  FileDescriptor direct;
  DirectIoAlignment align;
  if (options.direct) {
    align = ProbeDirectIoAlignment(path);
    if (align.offset != 0 && align.memory != 0) {
      auto fd = OpenFile(path, O_RDONLY | O_DIRECT);
      if (fd.ok()) direct = std::move(fd).value();  // refused: page cache only
    }
  }

  const unsigned depth = std::clamp(options.queue_depth, 1u, kMaxDepth);
  auto backend = std::make_unique<UringBackend>(path, std::move(buffered).value(), std::move(direct), align,
                                                options.direct_min_bytes, depth, options.cache_first);
  // The first backend of the process sets its ring up now: that is the probe
  // kAuto falls back on. Once one ring worked, the others are set up at
  // their first batch of their own, so a backend that only ever reads as a
  // peer (the tree's, through the array's ring) never pays for one.
  static std::atomic<bool> rings_work{false};
  if (rings_work.load(std::memory_order_relaxed)) return std::unique_ptr<IoBackend>(std::move(backend));
  if (int rc = backend->Start(); rc != 0) {
    char buf[128];
    const char* reason = strerror_r(-rc, buf, sizeof buf);  // GNU: returns the text
    return Status::NotSupported("", "io_uring unavailable (" + std::string(reason) + ")");
  }
  rings_work.store(true, std::memory_order_relaxed);
  return std::unique_ptr<IoBackend>(std::move(backend));
}

}  // namespace momenta::internal
