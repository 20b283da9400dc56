// The writer and reader children of the kill driver; see kill_children.h.
#include "bench/kill/kill_children.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <random>
#include <thread>
#include <vector>

#include "bench/kill/kill_util.h"

namespace momenta::kill {

BufferedArrayOptions KillArrayOptions(LogSync sync, bool writable) {
  BufferedArrayOptions o;
  o.io.writable = writable;
  o.io.kind = IoKind::kPread;
  o.sync = sync;
  o.tree.leaf_span = 64;  // 1024 leaves, fan-out 4: six levels
  o.tree.fanout = 4;
  o.tree.ram_budget = 4096;  // most levels in the disk tier
  o.log_segment_bytes = 16 << 10;
  o.retain_ms = 0;
  return o;
}

Result<std::unique_ptr<BufferedArray>> OpenWriter(const std::string& path, LogSync sync, int wait_ms,
                                                  std::vector<std::string>* notices) {
  const auto give_up = Clock::now() + std::chrono::milliseconds(wait_ms);
  while (true) {
    auto ba = BufferedArray::Open(path, KillArrayOptions(sync, true), notices);
    if (ba.ok() || ba.status().ToString().find("locked by another writer") == std::string::npos ||
        Clock::now() >= give_up)
      return ba;
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
}

namespace {

[[noreturn]] void ChildFails(int fd, uint32_t where, const std::string& what) {
  std::fprintf(stderr, "kill_driver child %d: %s\n", static_cast<int>(::getpid()), what.c_str());
  Event e;
  e.kind = kChildError;
  e.a = where;
  Send(fd, e);
  _exit(static_cast<int>(where));
}

void Say(int fd, uint32_t kind, uint64_t a = 0, uint64_t b = 0, uint64_t c = 0) {
  Event e;
  e.kind = kind;
  e.a = a;
  e.b = b;
  e.c = c;
  Send(fd, e);
}

// `reopen`: the open after this writer's own checkpoint (a clean state).
std::unique_ptr<BufferedArray> OpenAndSay(const std::string& path, LogSync sync, int fd, bool reopen) {
  Say(fd, kOpening, reopen ? 1 : 0);
  const auto t0 = Clock::now();
  auto ba = OpenWriter(path, sync, 20000);
  if (!ba.ok()) ChildFails(fd, 3, "writer open: " + ba.status().ToString());
  Say(fd, kOpened, (*ba)->applied_sequence(), static_cast<uint64_t>(MsSince(t0) * 1000), (*ba)->open_report().replayed);
  return std::move(ba).value();
}

}  // namespace

void RunWriterChild(const std::string& path, LogSync sync, const UpdateStream& stream, uint64_t seed, int fd) {
  DieWithParent();
  std::mt19937_64 rng(seed);
  std::unique_ptr<BufferedArray> ba = OpenAndSay(path, sync, fd, false);
  uint64_t u = ba->applied_sequence() + 1;  // sequence s holds update s (kill_model.h)
  std::vector<IndexedValue> batch;
  const uint64_t commit_every = 1 + rng() % 6;
  const uint64_t checkpoint_every = 2 + rng() % 12;
  for (uint64_t step = 1;; ++step) {
    const uint64_t pick = rng() % 100;
    const uint64_t n = pick < 70 ? 1 + rng() % 16 : pick < 95 ? 17 + rng() % 300 : 1000 + rng() % 5000;
    batch.clear();
    for (uint64_t k = 0; k < n; ++k)
      batch.push_back({stream.Index(u + k), Value::Int(static_cast<int64_t>(u + k)), kLogTimeNow});
    Say(fd, kIntent, u + n - 1);
    if (Status s = ba->Apply(batch); !s.ok()) ChildFails(fd, 4, "apply: " + s.ToString());
    u += n;
    Say(fd, kAcked, u - 1);
    if (step % commit_every == 0) {
      Say(fd, kCommitting);
      if (Status s = ba->Commit(); !s.ok()) ChildFails(fd, 5, "commit: " + s.ToString());
      Say(fd, kCommitted);
    }
    if (step % checkpoint_every == 0) {
      Say(fd, kCheckpointing);
      if (Status s = ba->Close(); !s.ok()) ChildFails(fd, 6, "close: " + s.ToString());
      ba.reset();
      ba = OpenAndSay(path, sync, fd, true);
      if (ba->applied_sequence() != u - 1)
        ChildFails(fd, 7,
                   "reopened at sequence " + std::to_string(ba->applied_sequence()) + ", not " + std::to_string(u - 1));
    }
  }
}

void RunReaderChild(const std::string& path, LogSync sync, const UpdateStream& stream, uint64_t seed, int fd,
                    int control_fd) {
  DieWithParent();
  SetNonBlocking(control_fd);
  std::mt19937_64 rng(seed);
  auto ba = BufferedArray::Open(path, KillArrayOptions(sync, false));
  if (!ba.ok()) ChildFails(fd, 10, "reader open: " + ba.status().ToString());
  int final_queries = -1;  // counting down once the driver closed control_fd
  while (final_queries != 0) {
    if (final_queries < 0) {
      char c;
      const ssize_t n = ::read(control_fd, &c, 1);
      if (n == 0) final_queries = 2;
    } else {
      --final_queries;
    }
    uint64_t p, q;
    if (rng() % 2) {  // around the hot range
      const uint64_t from = stream.hot_first() >= 8 ? stream.hot_first() - 8 : 0;
      p = std::min(kLength, from + rng() % (kHotLength + 16));
      q = std::min(kLength, p + rng() % 300);
    } else {
      p = rng() % kLength;
      q = p + rng() % (kLength - p + 1);
    }
    uint64_t as_of = 0;
    auto r = (*ba)->Summarize(p, q, false, nullptr, &as_of);
    if (!r.ok())
      ChildFails(fd, 11, "reader query " + std::to_string(p) + ":" + std::to_string(q) + ": " + r.status().ToString());
    Say(fd, kAnswer, p | (q << 32), static_cast<uint64_t>(static_cast<int64_t>(r->exact_sum)), as_of);
    std::this_thread::sleep_for(std::chrono::microseconds(300));
  }
  _exit(0);
}

}  // namespace momenta::kill
