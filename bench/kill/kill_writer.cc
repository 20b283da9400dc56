// Writer rounds of the kill driver; see kill_writer.h and kill_driver.cc.
#include "bench/kill/kill_writer.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>

#include "bench/kill/kill_children.h"
#include "bench/kill/kill_model.h"
#include "bench/kill/kill_util.h"
#include "storage/array/array_file.h"
#include "storage/log/log_reader.h"
#include "storage/log/log_segments.h"

namespace momenta::kill {
namespace {

struct Answer {
  uint64_t p = 0, q = 0;
  int64_t sum = 0;
  uint64_t as_of = 0;
  uint64_t round = 0;
};

class WriterRun {
 public:
  explicit WriterRun(const WriterRunOptions& o) : o_(o), stream_(o.seed), model_(stream_), path_(o.dir + "/a.npy") {}
  WriterRunReport Run();

 private:
  // One kill; false when the run cannot go on.
  bool Round(uint64_t round);
  // The driver's reopen after a kill and every check; false when it cannot go on.
  bool Check(uint64_t round);
  void CheckLogAndAnswers(uint64_t round, uint64_t last);
  void Fail(uint64_t round, uint64_t* counter, const std::string& what, uint64_t count = 1);

  const WriterRunOptions o_;
  const UpdateStream stream_;
  Model model_;  // the array after updates 1..checked_ (checked_ == model_.prefix())
  const std::string path_;
  WriterRunReport r_;
  uint64_t acked_ = 0;   // the highest update any writer saw acknowledged
  uint64_t intent_ = 0;  // the highest update any writer began to apply
  bool last_deferred_ = false;
  std::vector<Answer> pending_;  // reader answers since the last check
};

WriterRunReport WriterRun::Run() {
  const auto t0 = Clock::now();
  {
    IoOptions io;
    io.writable = true;
    const uint64_t shape[] = {kLength};
    auto created = ArrayFile::Create(path_, DType::kI8, shape, io);
    if (!created.ok()) {
      Fail(0, &r_.other_failures, "create: " + created.status().ToString());
      return r_;
    }
    created->reset();
    auto ba = OpenWriter(path_, o_.sync, 1000);  // builds the (empty) buffer
    if (!ba.ok() || !(*ba)->Close().ok()) {
      Fail(0, &r_.other_failures, "first open: " + (ba.ok() ? std::string("close") : ba.status().ToString()));
      return r_;
    }
  }
  for (uint64_t round = 0; round < o_.kills && !StopRequested(); ++round) {
    if (!Round(round)) break;
    if (o_.verbose && (round + 1) % 100 == 0)
      std::fprintf(stderr, "kill_driver %s: %llu kills, %llu updates acknowledged, %.0f s\n",
                   std::string(LogSyncName(o_.sync)).c_str(), static_cast<unsigned long long>(round + 1),
                   static_cast<unsigned long long>(acked_), MsSince(t0) / 1000);
  }
  r_.acknowledged = acked_;
  r_.applied = model_.prefix();
  r_.seconds = MsSince(t0) / 1000;
  return r_;
}

void WriterRun::Fail(uint64_t round, uint64_t* counter, const std::string& what, uint64_t count) {
  *counter += count;
  if (r_.failures.size() < 20) r_.failures.push_back("round " + std::to_string(round) + ": " + what);
  if (o_.verbose)
    std::fprintf(stderr, "kill_driver: round %llu: %s\n", static_cast<unsigned long long>(round), what.c_str());
}

bool WriterRun::Round(uint64_t round) {
  std::mt19937_64 rng(RoundSeed(o_.seed, 1, round));
  const uint64_t writer_seed = rng(), reader_seed = rng();
  const bool defer = rng() % 4 == 0 && round + 1 < o_.kills;
  // A quarter of the kills come within 3 ms: mostly in the writer's open
  // (the recovery of a deferred kill's state, or a plain open).
  const double delay_ms = std::uniform_real_distribution<double>(0, rng() % 4 == 0 ? 3.0 : o_.max_delay_ms)(rng);

  int wfd[2], rfd[2], cfd[2];
  if (pipe2(wfd, O_CLOEXEC) != 0) return false;
  const auto start = Clock::now();
  const pid_t writer = fork();
  if (writer < 0) return false;
  if (writer == 0) {
    close(wfd[0]);
    RunWriterChild(path_, o_.sync, stream_, writer_seed, wfd[1]);
  }
  RegisterChild(writer);
  close(wfd[1]);
  if (pipe2(rfd, O_CLOEXEC) != 0 || pipe2(cfd, O_CLOEXEC) != 0) return false;
  const pid_t reader = fork();
  if (reader < 0) return false;
  if (reader == 0) {
    close(rfd[0]);
    close(cfd[1]);
    close(wfd[0]);
    RunReaderChild(path_, o_.sync, stream_, reader_seed, rfd[1], cfd[0]);
  }
  RegisterChild(reader);
  close(rfd[1]);
  close(cfd[0]);
  SetNonBlocking(wfd[0]);
  SetNonBlocking(rfd[0]);

  std::vector<Event> wev, rev;
  DrainUntil({wfd[0], rfd[0]}, {&wev, &rev}, start + std::chrono::microseconds(static_cast<int64_t>(delay_ms * 1000)));
  // The reader's end: it finishes its query, makes two more, and exits
  // within a bounded time (it never waits on a dead writer).
  auto stop_reader = [&] {
    close(cfd[1]);
    const auto give_up = Clock::now() + std::chrono::seconds(20);
    while (true) {
      DrainUntil({rfd[0]}, {&rev}, Clock::now() + std::chrono::milliseconds(2));
      const int status = WaitChild(reader, 0);
      if (status != -1) {
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
          Fail(round, &r_.other_failures, "the reader ended with status " + std::to_string(status));
        break;
      }
      if (Clock::now() >= give_up || StopRequested()) {
        if (!StopRequested()) Fail(round, &r_.other_failures, "the reader did not finish within 20 s of the kill");
        KillAndReap(reader);
        break;
      }
    }
    Drain(rfd[0], &rev);
    close(rfd[0]);
  };
  // A deferred kill leaves its state to the next writer's open: the reader
  // must not recover it first, so it stops before the kill.
  if (defer) stop_reader();
  ::kill(writer, SIGKILL);
  int status = 0;
  while (waitpid(writer, &status, 0) < 0 && errno == EINTR) {}
  UnregisterChild(writer);
  if (!defer) stop_reader();
  while (Drain(wfd[0], &wev)) {}
  close(wfd[0]);
  if (StopRequested()) return false;
  ++r_.kills;
  if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
    Fail(round, &r_.other_failures,
         "the writer ended by itself (exit " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")");

  // Where the kill landed, and what the writer saw acknowledged.
  std::string phase = "start";
  bool recovered = false;  // this writer's first open returned
  for (const Event& e : wev) {
    switch (e.kind) {
      case kOpening:
        phase = e.a ? "reopen" : "open";
        break;
      case kOpened:
        if (last_deferred_ && !recovered) r_.child_recovery_ms.push_back(static_cast<double>(e.b) / 1000);
        recovered = true;
        phase = "idle";
        break;
      case kIntent:
        phase = "apply";
        intent_ = std::max(intent_, e.a);
        break;
      case kAcked:
        phase = "idle";
        acked_ = std::max(acked_, e.a);
        break;
      case kCommitting:
        phase = "commit";
        break;
      case kCommitted:
        phase = "idle";
        break;
      case kCheckpointing:
        phase = "checkpoint";
        break;
      case kChildError:
        Fail(round, &r_.other_failures, "the writer failed at step " + std::to_string(e.a));
        break;
      default:
        break;
    }
  }
  ++r_.phase[phase];
  if (last_deferred_ && !recovered) ++r_.killed_in_recovery;
  for (const Event& e : rev) {
    if (e.kind == kAnswer) pending_.push_back({e.a & 0xffffffffu, e.a >> 32, static_cast<int64_t>(e.b), e.c, round});
    if (e.kind == kChildError) Fail(round, &r_.other_failures, "the reader failed at step " + std::to_string(e.a));
  }
  // A deferred kill whose state no writer opened yet stays deferred.
  last_deferred_ = defer || (last_deferred_ && !recovered);
  if (defer) {
    ++r_.deferred;
    return true;
  }
  last_deferred_ = false;
  return Check(round);
}

bool WriterRun::Check(uint64_t round) {
  ++r_.checks;
  std::vector<std::string> notices;
  const auto t0 = Clock::now();
  auto ba = OpenWriter(path_, o_.sync, 20000, &notices);
  r_.reopen_ms.push_back(MsSince(t0));
  if (!ba.ok()) {
    Fail(round, &r_.other_failures, "reopen after the kill: " + ba.status().ToString());
    return false;
  }
  std::vector<int64_t> a(kLength);
  if (Status s = (*ba)->array().ReadRaw(0, kLength, reinterpret_cast<char*>(a.data())); !s.ok()) {
    Fail(round, &r_.other_failures, "read: " + s.ToString());
    return false;
  }
  const uint64_t last = static_cast<uint64_t>(std::max<int64_t>(0, *std::max_element(a.begin(), a.end())));
  const uint64_t checked = model_.prefix();
  if ((*ba)->applied_sequence() != last)
    Fail(round, &r_.wrong_answers,
         "the buffer is at log sequence " + std::to_string((*ba)->applied_sequence()) +
             " but the array's last update is " + std::to_string(last));
  if (last < acked_)
    Fail(round, &r_.lost,
         "updates " + std::to_string(last + 1) + ".." + std::to_string(acked_) +
             " were acknowledged and are not in the array",
         acked_ - last);
  if (last > intent_)
    Fail(round, &r_.wrong_answers, "update " + std::to_string(last) + " is in the array, but no writer began it");
  if (last < checked) {
    Fail(round, &r_.lost, "the array went back from update " + std::to_string(checked) + " to " + std::to_string(last),
         checked - last);
    return false;
  }
  if (last > acked_) r_.unacked_survived += last - std::max(acked_, checked);
  CheckLogAndAnswers(round, last);

  uint64_t wrong_elements = 0, first_wrong = 0;
  for (uint64_t i = 0; i < kLength; ++i)
    if (a[i] != model_.at(i) && wrong_elements++ == 0) first_wrong = i;
  if (wrong_elements > 0)
    Fail(round, &r_.wrong_answers,
         std::to_string(wrong_elements) + " element(s) differ from the model after update " + std::to_string(last) +
             ", first a[" + std::to_string(first_wrong) + "] = " + std::to_string(a[first_wrong]) + ", model " +
             std::to_string(model_.at(first_wrong)));
  auto report = (*ba)->Verify();
  if (!report.ok()) {
    Fail(round, &r_.verify_failures, "verify: " + report.status().ToString());
  } else if (report->mismatches > 0) {
    Fail(round, &r_.verify_failures,
         "verify: " + std::to_string(report->mismatches) + " node(s) differ, " + report->examples.front());
  }
  std::mt19937_64 rng(RoundSeed(o_.seed, 2, round));
  for (int k = 0; k < 8; ++k) {
    const uint64_t p = rng() % kLength, q = p + rng() % (kLength - p + 1);
    auto s = (*ba)->Summarize(p, q, false);
    ++r_.driver_answers;
    if (!s.ok() || static_cast<int64_t>(s->exact_sum) != model_.Sum(p, q))
      Fail(round, &r_.wrong_answers,
           "the reopened writer's sum over " + std::to_string(p) + ":" + std::to_string(q) + " is " +
               (s.ok() ? std::to_string(static_cast<int64_t>(s->exact_sum)) : s.status().ToString()) + ", model " +
               std::to_string(model_.Sum(p, q)));
  }
  if (Status s = (*ba)->Close(); !s.ok()) Fail(round, &r_.other_failures, "close: " + s.ToString());
  ba->reset();
  if (o_.cli_every > 0 && r_.checks % o_.cli_every == 0) {
    std::string out, err;
    const int code = RunToEnd({o_.cli, "verify", path_}, o_.dir, 60000, &out, &err);
    ++r_.cli_verifies;
    if (code != 0) Fail(round, &r_.verify_failures, "momenta verify exited " + std::to_string(code) + ": " + out + err);
  }
  return true;
}

// The log after the last check against the model, record by record, and
// each reader answer against the model at its log sequence; leaves the
// model at `last`.
void WriterRun::CheckLogAndAnswers(uint64_t round, uint64_t last) {
  const uint64_t checked = model_.prefix();
  std::vector<LogRecord> records;
  LogReaderOptions ro;
  ro.from_sequence = checked + 1;
  auto reader = LogReader::Open(LogDirPath(path_), ro);
  if (reader.ok()) {
    LogRecord rec;
    while (true) {
      auto more = (*reader)->Next(&rec);
      if (!more.ok()) {
        Fail(round, &r_.other_failures, "log: " + more.status().ToString());
        break;
      }
      if (!*more) break;
      records.push_back(rec);
    }
    if (!(*reader)->damage().empty())
      Fail(round, &r_.other_failures, "log damage after recovery: " + (*reader)->damage().front().ToString());
  } else if (reader.status().code() != Status::Code::kNotFound || last > 0) {
    Fail(round, &r_.other_failures, "log: " + reader.status().ToString());
  }
  const uint64_t first = records.empty() ? last + 1 : records.front().sequence;
  for (size_t k = 0; k < records.size(); ++k)
    if (records[k].sequence != first + k) {
      Fail(round, &r_.wrong_answers,
           "log sequences jump from " + std::to_string(first + k - 1) + " to " + std::to_string(records[k].sequence));
      records.resize(k);
      break;
    }
  if (last > checked && (records.empty() || records.back().sequence != last))
    Fail(round, &r_.wrong_answers,
         "the log ends at " + (records.empty() ? std::string("nothing new") : std::to_string(records.back().sequence)) +
             ", the array at update " + std::to_string(last));

  std::sort(pending_.begin(), pending_.end(), [](const Answer& x, const Answer& y) { return x.as_of < y.as_of; });
  size_t next = 0;
  auto answer_at = [&](uint64_t u) {
    for (; next < pending_.size() && pending_[next].as_of <= u; ++next) {
      const Answer& x = pending_[next];
      ++r_.reader_answers;
      if (x.as_of < u) {
        Fail(x.round, &r_.wrong_answers,
             "a reader answered as of sequence " + std::to_string(x.as_of) + ", before the state it started from");
      } else if (x.sum != model_.Sum(x.p, x.q)) {
        Fail(x.round, &r_.wrong_answers,
             "a reader's sum over " + std::to_string(x.p) + ":" + std::to_string(x.q) + " as of " +
                 std::to_string(x.as_of) + " is " + std::to_string(x.sum) + ", model " +
                 std::to_string(model_.Sum(x.p, x.q)));
      }
    }
  };
  answer_at(checked);
  for (uint64_t u = checked + 1; u <= last; ++u) {
    if (u >= first && u - first < records.size()) {
      const LogRecord& rec = records[u - first];
      const uint64_t i = stream_.Index(u);
      int64_t old_value, new_value;
      std::memcpy(&old_value, &rec.old_raw, 8);
      std::memcpy(&new_value, &rec.new_raw, 8);
      ++r_.log_records_checked;
      if (rec.index != i || new_value != static_cast<int64_t>(u) || old_value != model_.at(i))
        Fail(round, &r_.wrong_answers,
             "log record " + std::to_string(u) + " is a[" + std::to_string(rec.index) +
                 "]: " + std::to_string(old_value) + " -> " + std::to_string(new_value) + ", model a[" +
                 std::to_string(i) + "]: " + std::to_string(model_.at(i)) + " -> " + std::to_string(u));
    }
    model_.AdvanceTo(u);
    answer_at(u);
  }
  for (; next < pending_.size(); ++next) {
    ++r_.reader_answers;
    Fail(pending_[next].round, &r_.lost,
         "a reader answered as of sequence " + std::to_string(pending_[next].as_of) +
             ", after the last update that survived (" + std::to_string(last) + ")");
  }
  pending_.clear();
}

}  // namespace

WriterRunReport RunWriterKills(const WriterRunOptions& options) { return WriterRun(options).Run(); }

}  // namespace momenta::kill
