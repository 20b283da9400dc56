// The live pipeline end to end, as processes: this test is the
// producer, writing 'INDEX VALUE TIME' lines into two `momenta update --follow
// --ack` writers; two `momenta site --log` follow the arrays' update logs and
// report to one `momenta root`; `momenta ask` checks every answer against the
// exact window of the lines written, through a writer killed (SIGKILL) and
// restarted mid-stream and a site killed and restarted mid-stream; and an
// update is counted at the root within a heartbeat plus 100 ms (asserted with
// slack for a loaded machine; the delays are printed).
//
// Why the window is exact. Every line of an array sets its own element (no
// index twice) from 0 to a nonzero value, stamped later than every earlier line
// of that array. The writers run with the default --sync batch: an acknowledged
// group survives the kill of the process. An update that changes no value logs
// nothing, so a line leaves exactly one log record, once, however often it is
// sent: sent again after a kill, it logs nothing if its first copy was applied
// and its one record otherwise, with the same time. The log thus holds the
// records of a prefix of the array's lines, in order: every acknowledged line
// and perhaps some sent after it (the lines not acknowledged when the writer
// was killed are sent again to its successor). A site at clock c has read its
// log through the record stamped c, hence every line stamped <= c, so its
// window (c - W, c] is a function of c and the lines alone, whichever of the
// doubtful lines made it. An answer covers the sites it names, each at its own
// clock >= as_of (stream/net/root_state.h); `ask sites` before and after the
// answer brackets those clocks (a site's clock never goes back: a restarted
// site starts at its log's newest record). At a checkpoint every line is
// acknowledged and each site's clock is its array's last time, so the window is
// known exactly. What the root guarantees (docs/monitor.md, "What is guaranteed"):
// the count within (eps/24) c, an item's count within (11 eps/24) c.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "stream/protocol/site.h"
#include "tests/cli_background.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using testing::Background;
using testing::Lines;
using testing::RunCli;
using testing::ScratchDir;
using testing::WaitPortFile;
using Clock = std::chrono::steady_clock;

constexpr int64_t kWindow = 10000;    // W, in the logs' time units: 100 steps
constexpr double kEps = 0.05;         // the root's eps
constexpr int kHeartbeatMs = 200;     // the sites' --heartbeat
constexpr int kSlackMs = 2000;        // added to heartbeat + 100 ms: a loaded 2-core machine
constexpr uint64_t kRegion = 100000;  // --item index/100000: item K is elements [K*kRegion, (K+1)*kRegion)
constexpr int kItems = 8;             // an array holds kItems regions
constexpr int kMaxLinesPerStep = 5;   // per array and step s, stamped from 100s+1 on

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// The "key=value" words of an answer's first line.
std::map<std::string, std::string> Fields(const std::string& answer) {
  std::map<std::string, std::string> f;
  std::istringstream in(answer.substr(0, answer.find('\n')));
  for (std::string w; in >> w;)
    if (const size_t eq = w.find('='); eq != std::string::npos) f[w.substr(0, eq)] = w.substr(eq + 1);
  return f;
}

// One line of an array: element item * kRegion + n (n its place among the
// array's lines) set from 0 to `value` at `time`.
struct Line {
  int64_t time = 0;
  int64_t item = 0;
  uint64_t index = 0;
  int value = 0;
  std::string Text() const {
    return std::to_string(index) + " " + std::to_string(value) + " " + std::to_string(time) + "\n";
  }
};

// An array and its writer process. lines_ are in time order; [0, Acked())
// are acknowledged (by this writer or the killed ones before it), and the log
// holds the records of lines [0, n), each once, for some n in
// [Acked(), written_].
class Feed {
 public:
  Feed(std::string name, const ScratchDir& dir)
      : name_(std::move(name)), dir_(dir.path()), path_(dir.File(name_ + ".npy")) {}

  const std::string& name() const { return name_; }
  const std::string& path() const { return path_; }
  const std::vector<Line>& lines() const { return lines_; }
  size_t written() const { return written_; }

  // Starts a writer and sends it every line from the first not acknowledged
  // on: the ones a killed writer may not have applied, and those held back.
  void StartWriter() {
    base_ = Acked();
    writer_ = std::make_unique<Background>(std::vector<std::string>{"update", path_, "--follow", "--ack"}, dir_,
                                           name_ + "-writer" + std::to_string(incarnation_++), /*stdin_pipe=*/true);
    std::string text;
    for (size_t n = base_; n < lines_.size(); ++n) text += lines_[n].Text();
    Send(text);
  }

  // The array's next line, sent at once while a writer runs (else held back).
  void Add(int64_t time, int64_t item, int value) {
    Line l;
    l.time = time;
    l.item = item;
    l.index = static_cast<uint64_t>(item) * kRegion + lines_.size();
    l.value = value;
    lines_.push_back(l);
    if (writer_) Send(l.Text());
  }

  // Lines acknowledged so far: base_ plus the COUNTs of the running writer's
  // "SEQ COUNT" lines (complete ones only). SEQ never goes back; the first
  // writer's SEQ is its line count (one record per line, sequences from 1).
  size_t Acked() const {
    if (!writer_) return base_;
    const std::string out = writer_->Out();
    size_t acked = base_;
    uint64_t last_seq = 0;
    for (const std::string& ack : Lines(out.substr(0, out.rfind('\n') + 1))) {
      unsigned long long seq = 0;
      size_t count = 0;
      EXPECT_EQ(std::sscanf(ack.c_str(), "%llu %zu", &seq, &count), 2) << name_ << ": " << ack;
      acked += count;
      EXPECT_GE(seq, last_seq) << name_ << " acknowledgments: " << out;
      EXPECT_GE(seq, acked) << name_ << ": fewer records than acknowledged lines: " << out;
      if (incarnation_ == 1) {
        EXPECT_EQ(seq, acked) << name_ << " acknowledgments: " << out;
      }
      last_seq = seq;
    }
    return acked;
  }

  // Waits until every line written is acknowledged.
  bool WaitAcked(int wait_ms) const {
    const auto deadline = Clock::now() + std::chrono::milliseconds(wait_ms);
    while (Acked() < written_) {
      if (Clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  }

  // SIGKILL: what it acknowledged stays acknowledged.
  void KillWriter() {
    writer_->Kill(SIGKILL);
    writer_->Wait(5000);
    base_ = Acked();
    writer_.reset();
  }

  // Ends the writer by closing its input; its exit code.
  int CloseWriter() {
    writer_->CloseStdin();
    const int code = writer_->Wait(10000);
    base_ = Acked();
    return code;
  }

  std::string WriterErr() const { return writer_ ? writer_->Err() : std::string("(no writer)"); }

  // The lines stamped in (c - W, c] among the first `upto` (of `item` only,
  // when given): the site's exact window at clock c.
  int64_t Window(int64_t c, size_t upto, std::optional<int64_t> item = std::nullopt) const {
    int64_t n = 0;
    for (size_t k = 0; k < upto && k < lines_.size(); ++k)
      n += lines_[k].time > c - kWindow && lines_[k].time <= c && (!item || lines_[k].item == *item);
    return n;
  }

  // The log's records must be those of lines [0, n) for some n in
  // [Acked(), written_], in order, each once: returns n (-1 when not).
  int64_t CheckLog() const {
    auto r = RunCli({"log", path_});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const auto records = Lines(r.out);
    bool ok = records.size() >= Acked() && records.size() <= written_;
    uint64_t last_seq = 0;
    for (size_t k = 0; ok && k < records.size(); ++k) {
      unsigned long long seq = 0, index = 0;
      long long time = 0;
      double old_value = -1, new_value = -1;
      const int fields =
          std::sscanf(records[k].c_str(), "%llu %lld %llu %lf %lf", &seq, &time, &index, &old_value, &new_value);
      ok = fields == 5 && seq > last_seq && time == lines_[k].time && index == lines_[k].index && old_value == 0 &&
           new_value == lines_[k].value;
      last_seq = seq;
    }
    EXPECT_TRUE(ok) << name_ << ": " << records.size() << " records for " << Acked() << " acknowledged and " << written_
                    << " written lines:\n"
                    << r.out << r.err;
    return ok ? static_cast<int64_t>(records.size()) : -1;
  }

 private:
  void Send(const std::string& text) {
    EXPECT_TRUE(writer_->WriteStdin(text)) << name_ << " writer: " << writer_->Err();
    written_ = lines_.size();
  }

  const std::string name_, dir_, path_;
  std::vector<Line> lines_;
  size_t written_ = 0;  // lines_[0, written_) went to some writer
  size_t base_ = 0;     // lines acknowledged by the writers before the running one
  int incarnation_ = 0;
  std::unique_ptr<Background> writer_;
};

// A site's row in `ask sites`.
struct SiteRow {
  std::string state;  // live, stale, syncing
  std::optional<int64_t> clock;
};

// An `ask --at T count` started in a thread right after the lines stamped T
// were written: how long from their writing until the root had counted them
// (an upper bound: it includes starting `ask`).
struct Probe {
  int64_t time = 0;
  Clock::time_point sent;
  double ms = -1;
  int exit_code = -1;
  std::string answer;
};

class LivePipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    seed_ = testing::TestSeed();
    rng_.seed(seed_);
    std::printf("[ seed     ] MOMENTA_SEED=%llu\n", static_cast<unsigned long long>(seed_));
    root_ = std::make_unique<Background>(
        std::vector<std::string>{"root", "--listen", "127.0.0.1:0", "--port-file", dir_.File("port"), "--eps",
                                 std::to_string(kEps), "--window", std::to_string(kWindow)},
        dir_.path(), "root");
    const uint16_t port = WaitPortFile(dir_.File("port"), 5000);
    ASSERT_NE(port, 0) << root_->Err();
    addr_ = "127.0.0.1:" + std::to_string(port);
    for (const char* name : {"east", "west"}) {
      feeds_.push_back(std::make_unique<Feed>(name, dir_));
      ASSERT_EQ(RunCli({"create", feeds_.back()->path(), "--length", std::to_string(kItems * kRegion)}).exit_code, 0);
      feeds_.back()->StartWriter();
      sites_.emplace_back();
      StartSite(feeds_.size() - 1);
    }
    // Both connected (a site with nothing logged yet has no clock: listed
    // live, not covered).
    ASSERT_TRUE(AskUntil({"sites"}, "\neast live", 10000)) << Diagnostics();
    ASSERT_TRUE(AskUntil({"sites"}, "\nwest live", 10000)) << Diagnostics();
  }

  void StartSite(size_t s) {
    const Feed& f = *feeds_[s];
    sites_[s] =
        std::make_unique<Background>(std::vector<std::string>{"site", "--root", addr_, "--id", f.name(), "--log",
                                                              f.path(), "--item", "index/" + std::to_string(kRegion),
                                                              "--heartbeat", std::to_string(kHeartbeatMs) + "ms"},
                                     dir_.path(), f.name() + "-site" + std::to_string(site_starts_++));
  }

  std::string Ask(const std::vector<std::string>& query) {
    std::vector<std::string> args = {"ask", addr_};
    args.insert(args.end(), query.begin(), query.end());
    auto r = RunCli(args);
    EXPECT_EQ(r.exit_code, 0) << r.err << Diagnostics();
    return r.out;
  }

  bool AskUntil(const std::vector<std::string>& query, const std::string& want, int wait_ms) {
    const auto deadline = Clock::now() + std::chrono::milliseconds(wait_ms);
    while (Clock::now() < deadline) {
      std::vector<std::string> args = {"ask", addr_};
      args.insert(args.end(), query.begin(), query.end());
      auto r = RunCli(args);
      if (r.exit_code == 0 && r.out.find(want) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  std::map<std::string, SiteRow> Sites() {
    std::map<std::string, SiteRow> rows;
    const auto lines = Lines(Ask({"sites"}));
    for (size_t k = 1; k < lines.size(); ++k) {
      std::istringstream in(lines[k]);
      std::string name;
      SiteRow row;
      in >> name >> row.state;
      const auto f = Fields(lines[k]);
      if (f.count("clock") && f.at("clock") != "none") row.clock = std::stoll(f.at("clock"));
      if (!name.empty()) rows[name] = row;
    }
    return rows;
  }

  // The feeds an answer covers (the sites not named in not_covered).
  std::vector<size_t> Covered(const std::map<std::string, std::string>& f) const {
    std::vector<size_t> covered;
    const std::string uncovered = f.count("not_covered") ? "," + f.at("not_covered") + "," : "";
    for (size_t s = 0; s < feeds_.size(); ++s)
      if (uncovered.find("," + feeds_[s]->name() + ",") == std::string::npos) covered.push_back(s);
    return covered;
  }

  // Step s: 1 to kMaxLinesPerStep lines per array (east: `east_lines`, at
  // most 99, when given), stamped 100s+1, 100s+2, ...; items skewed (east:
  // item 0 hot, west: item 5).
  void Step(int64_t s, int east_lines = 0) {
    step_sent_ = Clock::now();
    last_time_ = std::numeric_limits<int64_t>::max();
    for (size_t a = 0; a < feeds_.size(); ++a) {
      const int64_t hot = a == 0 ? 0 : 5;
      const int lines = a == 0 && east_lines > 0 ? east_lines : 1 + static_cast<int>(rng_() % kMaxLinesPerStep);
      for (int k = 1; k <= lines; ++k) {
        const int64_t item = rng_() % 10 < 4 ? hot : static_cast<int64_t>(rng_() % kItems);
        feeds_[a]->Add(100 * s + k, item, 1 + static_cast<int>(rng_() % 9));
      }
      last_time_ = std::min(last_time_, feeds_[a]->lines().back().time);
    }
  }

  // An answer taken while lines stream: every covered site is held at as_of
  // (its clock, before and after, at or past it), so the answer is within
  // eps of the exact count over the windows ending at as_of.
  void CheckOnTheWay() {
    const auto before = Sites();
    const int64_t item = static_cast<int64_t>(rng_() % kItems);
    const std::string count = Ask({"count"});
    const std::string item_answer = Ask({"item", std::to_string(item)});
    const auto after = Sites();
    const double eps_b = BasicCountEps(kEps), alpha = ApproxCountAlpha(kEps);
    for (const std::string* answer : {&count, &item_answer}) {
      const auto f = Fields(*answer);
      ASSERT_TRUE(f.count("as_of") && f.at("as_of") != "none" && f.count("count")) << *answer << Diagnostics();
      const int64_t as_of = std::stoll(f.at("as_of"));
      const double estimate = std::stod(f.at("count"));
      const auto covered = Covered(f);
      ASSERT_FALSE(covered.empty()) << *answer;
      if (covered.size() < feeds_.size()) ++partial_answers_;
      double lo = 0, hi = 0, lo_item = 0, hi_item = 0;
      for (size_t s : covered) {
        const Feed& feed = *feeds_[s];
        const std::string& name = feed.name();
        // The root holds every covered site at as_of (a site ahead is held
        // back to it): its window ends there, whatever its clock.
        const int64_t from = as_of, to = as_of;
        if (before.count(name) && before.at(name).clock) {
          ASSERT_LE(*before.at(name).clock, feed.lines()[feed.written() - 1].time) << name << Diagnostics();
        }
        if (after.count(name) && after.at(name).clock) {
          ASSERT_LE(as_of, *after.at(name).clock)
              << name << ": covered, yet behind as_of: " << *answer << Diagnostics();
        }
        // The window changes only at a line's time: those in [from, to] and from itself.
        std::vector<int64_t> clocks = {from};
        for (size_t n = 0; n < feed.written(); ++n)
          if (feed.lines()[n].time > from && feed.lines()[n].time <= to) clocks.push_back(feed.lines()[n].time);
        int64_t min_c = std::numeric_limits<int64_t>::max(), max_c = 0;
        int64_t min_j = min_c, max_j = 0;
        for (int64_t c : clocks) {
          const int64_t w = feed.Window(c, feed.written()), wj = feed.Window(c, feed.written(), item);
          min_c = std::min(min_c, w), max_c = std::max(max_c, w);
          min_j = std::min(min_j, wj), max_j = std::max(max_j, wj);
        }
        lo += static_cast<double>(min_c), hi += static_cast<double>(max_c);
        lo_item += static_cast<double>(min_j), hi_item += static_cast<double>(max_j);
      }
      if (answer == &count) {
        EXPECT_GE(estimate, lo - eps_b * lo - 1e-9) << *answer << " exact in [" << lo << ", " << hi << "]";
        EXPECT_LE(estimate, hi + eps_b * hi + 1e-9) << *answer << " exact in [" << lo << ", " << hi << "]";
      } else {
        EXPECT_GE(estimate, lo_item - alpha * hi - 1e-9)
            << *answer << " exact in [" << lo_item << ", " << hi_item << "] of at most " << hi;
        EXPECT_LE(estimate, hi_item + alpha * hi + 1e-9)
            << *answer << " exact in [" << lo_item << ", " << hi_item << "] of at most " << hi;
      }
      widest_ = std::max(widest_, hi - lo);
      ++checks_;
    }
  }

  // Every line acknowledged, both sites caught up (each at its array's last
  // time, as_of the smaller): the answers against the exact window. (A site
  // that never catches up fails here: the log not followed live.)
  void Checkpoint(const std::string& what) {
    SCOPED_TRACE(what);
    for (const auto& f : feeds_) ASSERT_TRUE(f->WaitAcked(10000)) << f->name() << ": " << f->WriterErr();
    // Each site at its own array's last time (`--at` waits for the smaller only).
    const auto deadline = Clock::now() + std::chrono::seconds(15);
    for (bool caught_up = false; !caught_up;) {
      ASSERT_LT(Clock::now(), deadline) << "the sites did not reach their arrays' last times: " << Ask({"sites"})
                                        << Diagnostics();
      const auto rows = Sites();
      caught_up = true;
      for (const auto& f : feeds_) {
        const auto row = rows.find(f->name());
        caught_up = caught_up && row != rows.end() && row->second.state == "live" &&
                    row->second.clock == f->lines().back().time;
      }
      if (!caught_up) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    const std::string at = std::to_string(last_time_);
    const double eps_b = BasicCountEps(kEps), alpha = ApproxCountAlpha(kEps);
    // Every answer is for as_of: each site's window ending there (a site
    // whose last line is later is held back to it).
    const auto count = Fields(Ask({"count", "--at", at}));
    EXPECT_EQ(count.at("as_of"), at);
    const int64_t as_of = std::stoll(count.at("as_of"));
    int64_t exact = 0;
    std::vector<int64_t> exact_items(kItems, 0);
    for (const auto& f : feeds_) {
      exact += f->Window(as_of, f->written());
      for (int64_t j = 0; j < kItems; ++j) exact_items[j] += f->Window(as_of, f->written(), j);
    }
    const double c = static_cast<double>(exact);
    EXPECT_EQ(count.at("sites"), "2/2");
    EXPECT_NEAR(std::stod(count.at("count")), c, eps_b * c + 1e-9) << "as_of=" << at;
    // Every item the root holds (an item it does not hold counts 0).
    std::map<int64_t, double> held;
    const auto items = Lines(Ask({"items", "--at", at}));
    for (size_t k = 1; k < items.size(); ++k) {
      std::istringstream in(items[k]);
      int64_t j = 0;
      double v = 0;
      if (in >> j >> v) held[j] = v;
    }
    int64_t hottest = 0;
    for (int64_t j = 0; j < kItems; ++j) {
      EXPECT_NEAR(held.count(j) ? held[j] : 0, static_cast<double>(exact_items[j]), alpha * c + 1e-9)
          << "item " << j << " of " << c;
      if (exact_items[j] > exact_items[hottest]) hottest = j;
    }
    const auto direct = Fields(Ask({"item", std::to_string(hottest), "--at", at}));
    EXPECT_EQ(std::stod(direct.at("count")), held[hottest]) << "item " << hottest;
    // Each site at as_of, its own count within eps of its window there.
    const auto lines = Lines(Ask({"sites"}));
    ASSERT_EQ(lines.size(), 1 + feeds_.size());
    for (size_t k = 1; k < lines.size(); ++k) {
      std::istringstream in(lines[k]);
      std::string name, state;
      in >> name >> state;
      const auto f = Fields(lines[k]);
      const auto it = std::find_if(feeds_.begin(), feeds_.end(), [&](const auto& x) { return x->name() == name; });
      ASSERT_NE(it, feeds_.end()) << lines[k];
      EXPECT_EQ(state, "live") << lines[k];
      const int64_t clock = (*it)->lines().back().time;
      EXPECT_EQ(f.at("clock"), std::to_string(clock)) << lines[k];
      const double cs = static_cast<double>((*it)->Window(as_of, (*it)->written()));
      EXPECT_NEAR(std::stod(f.at("count")), cs, eps_b * cs + 1e-9) << lines[k];
    }
    std::printf("[ checkpt  ] %s: as_of=%s count %s (exact %lld), item %lld %s (exact %lld)\n", what.c_str(),
                at.c_str(), count.at("count").c_str(), static_cast<long long>(exact), static_cast<long long>(hottest),
                direct.at("count").c_str(), static_cast<long long>(exact_items[hottest]));
  }

  void StartProbe() {
    auto p = std::make_unique<Probe>();
    p->time = last_time_;
    p->sent = step_sent_;
    Probe* raw = p.get();
    probes_.push_back(std::move(p));
    probers_.emplace_back([raw, addr = addr_] {
      auto r = RunCli({"ask", addr, "count", "--at", std::to_string(raw->time), "--wait", "5000"});
      raw->ms = Ms(Clock::now() - raw->sent);
      raw->exit_code = r.exit_code;
      raw->answer = r.out + r.err;
    });
  }

  void JoinProbes() {
    for (auto& t : probers_) t.join();
    probers_.clear();
  }

  // Runs steps [from, to), a step about every 10 ms, with a check every 20.
  void Stream(int64_t from, int64_t to) {
    for (int64_t s = from; s < to; ++s) {
      Step(s);
      if (s % 20 == 0) CheckOnTheWay();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  std::string Diagnostics() const {
    std::string d = "\n--- root:\n" + root_->Err();
    for (size_t s = 0; s < feeds_.size(); ++s) {
      d += "--- " + feeds_[s]->name() + " writer:\n" + feeds_[s]->WriterErr();
      if (s < sites_.size() && sites_[s]) d += "--- " + feeds_[s]->name() + " site:\n" + sites_[s]->Err();
    }
    return d;
  }

  ScratchDir dir_;
  uint64_t seed_ = 0;
  std::mt19937_64 rng_;
  std::unique_ptr<Background> root_;
  std::string addr_;
  std::vector<std::unique_ptr<Feed>> feeds_;        // east, west
  std::vector<std::unique_ptr<Background>> sites_;  // their sites, same order
  int site_starts_ = 0;
  int64_t last_time_ = 0;        // the smallest of the arrays' last times: as_of once they are counted
  Clock::time_point step_sent_;  // when the last step's first line was written
  std::vector<std::unique_ptr<Probe>> probes_;
  std::vector<std::thread> probers_;
  uint64_t checks_ = 0, partial_answers_ = 0;
  double widest_ = 0;  // the widest bracket of an exact count on the way
};

TEST_F(LivePipelineTest, AnswersStayWithinEpsOfTheAcknowledgedWindowThroughKills) {
  SCOPED_TRACE("MOMENTA_SEED=" + std::to_string(seed_));
  Feed& east = *feeds_[0];
  Feed& west = *feeds_[1];
  // 1. Streaming, with the root's delay probed now and then.
  for (int64_t s = 1; s < 100; s += 20) {
    Stream(s, s + 10);
    StartProbe();
    Stream(s + 10, s + 20);
  }
  JoinProbes();
  Checkpoint("streaming");

  // 2. The east writer killed with lines in flight (a burst written a few ms
  // before, not yet all acknowledged), its lines held back, then a new writer
  // sent every line from the first not acknowledged on.
  Stream(101, 120);
  Step(120, 50);
  std::this_thread::sleep_for(std::chrono::milliseconds(5 + rng_() % 15));  // about the group's closing
  const size_t acked_before = east.Acked();
  east.KillWriter();
  const size_t doubtful = east.written() - east.Acked();
  const int64_t logged = east.CheckLog();  // the acknowledged lines are all there
  std::printf(
      "[ writer   ] east killed: %zu lines acknowledged (%zu just before the kill), %zu not, of which "
      "the log held %lld\n",
      east.Acked(), acked_before, doubtful, static_cast<long long>(logged - static_cast<int64_t>(east.Acked())));
  Stream(121, 150);  // east's lines held back; its site's clock stays
  east.StartWriter();
  Stream(150, 200);
  Checkpoint("east writer restarted");
  EXPECT_EQ(east.CheckLog(), static_cast<int64_t>(east.written()));  // each line once, none lost

  // 3. The west site killed: west leaves the answers until its successor
  // has re-read the last window of its log (west's writer goes on).
  Stream(200, 220);
  sites_[1]->Kill(SIGKILL);
  sites_[1]->Wait(5000);
  EXPECT_TRUE(AskUntil({"sites"}, "west stale", 5000)) << Diagnostics();
  CheckOnTheWay();
  Stream(220, 250);
  StartSite(1);
  Stream(250, 300);
  Checkpoint("west site restarted");
  EXPECT_GT(partial_answers_, 0u);  // some answers covered east alone

  // 4. More probes while streaming, then some after a pause (an idle site).
  for (int64_t s = 300; s < 340; s += 10) {
    Stream(s, s + 9);
    StartProbe();
    Stream(s + 9, s + 10);
  }
  JoinProbes();
  for (int64_t s = 340; s < 345; ++s) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2 * kHeartbeatMs));
    Step(s);
    StartProbe();
    JoinProbes();
  }
  Checkpoint("end");
  EXPECT_EQ(east.CheckLog(), static_cast<int64_t>(east.written()));
  EXPECT_EQ(west.CheckLog(), static_cast<int64_t>(west.written()));

  // The root counted each probed line within a heartbeat plus 100 ms (plus slack).
  std::string delays;
  int within = 0;
  double worst = 0;
  for (const auto& p : probes_) {
    EXPECT_EQ(p->exit_code, 0) << "ask --at " << p->time << ": " << p->answer << Diagnostics();
    const auto f = Fields(p->answer);
    EXPECT_TRUE(f.count("as_of") && f.at("as_of") != "none" && std::stoll(f.at("as_of")) >= p->time &&
                f.at("sites") == "2/2")
        << p->time << ": " << p->answer;
    EXPECT_LE(p->ms, kHeartbeatMs + 100 + kSlackMs) << "ask --at " << p->time << ": " << p->answer;
    char one[32];
    std::snprintf(one, sizeof one, " %.0f", p->ms);
    delays += one;
    within += p->ms <= kHeartbeatMs + 100;
    worst = std::max(worst, p->ms);
  }
  std::printf(
      "[ delay    ] written -> counted at the root, ms (9 streaming, then 5 idle):%s; %d of %zu within "
      "heartbeat %d ms + 100 ms, worst %.0f ms\n",
      delays.c_str(), within, probes_.size(), kHeartbeatMs, worst);
  std::printf("[ answers  ] %llu checked on the way (%llu covering one site), widest bracket of the exact count %.0f\n",
              static_cast<unsigned long long>(checks_), static_cast<unsigned long long>(partial_answers_), widest_);

  // Orderly ends: the writers at the end of their input, sites and root on SIGTERM.
  for (const auto& f : feeds_) EXPECT_EQ(f->CloseWriter(), 0) << f->WriterErr();
  for (const auto& site : sites_) {
    site->Kill(SIGTERM);
    EXPECT_EQ(site->Wait(10000), 143) << site->Err();
    EXPECT_EQ(site->Err().find("dropped"), std::string::npos) << site->Err();  // no line came late
  }
  root_->Kill(SIGTERM);
  EXPECT_EQ(root_->Wait(10000), 143) << root_->Err();
}

}  // namespace
}  // namespace momenta
