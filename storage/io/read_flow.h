// ReadFlow: the hand-over between one thread that streams a long list of reads
// (IoBackend::ReadStream) and one that consumes what landed and frees the
// destinations for later requests (a build summing chunk k while chunk k + 1
// is read into the buffer chunk k - 1 used).
//
// Both counts only grow. The consumer allows requests [0, allowed) to be
// queued (their destinations are free); the reader reports that requests
// [0, landed) have all landed. Each side sleeps only until the count it needs
// is reached: the reader wakes the consumer once when the prefix it waits for
// has landed, not on every completion.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <mutex>

namespace momenta {

class ReadFlow {
 public:
  // The consumer's side.
  // Requests [0, n) may be queued from now on (n below the current bound: no change).
  void Allow(size_t n);
  // Asks the reader to queue nothing more (an error or a cancel on the
  // consumer's side): ReadStream returns once its reads in flight landed.
  void Stop();
  // Blocks until requests [0, n) have landed (true) or the stream ended
  // without them (false: it failed or was stopped; its Status says why).
  bool WaitLanded(size_t n);

  // The reader's side.
  // Requests [0, n) have landed.
  void Landed(size_t n);
  // Blocks until request `next` may be queued (true) or Stop was called (false).
  bool WaitAllowed(size_t next);
  // Whether request `next` may be queued now (never blocks).
  bool Allowed(size_t next);
  bool Stopped();
  // The stream returned: wakes a consumer waiting for what will never land.
  void Finish();

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  size_t allowed_ = 0;
  size_t landed_ = 0;
  size_t wanted_ = 0;  // the prefix the consumer sleeps for (0: it is not asleep)
  bool stopped_ = false;
  bool finished_ = false;
};

}  // namespace momenta
