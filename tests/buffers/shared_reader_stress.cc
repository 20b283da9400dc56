// Two query threads and a third (notices, applied_sequence) share one
// read-only BufferedArray while a writer process applies updates and, every
// 20th batch, rebuilds the buffer (retiring the tree file, so the readers
// reopen it under the exclusive lock). Every answer must be the exact one
// for the log sequence it reports. Built and run under ThreadSanitizer by CI
// (tools/setup.sh tsan; .ci/run), and as a short ctest case in the suite.
//
//   shared_reader_stress SECONDS [SEED]      exit 0: all answers exact, no error
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "buffers/algebra/moments.h"
#include "buffers/buffered_array.h"
#include "storage/array/array_file.h"
#include "tests/buffers/update_model.h"

namespace momenta {
namespace {

using testing::SumAfter;
constexpr uint64_t kLength = testing::kUpdateModelLength;

[[noreturn]] void Writer(const std::string& path, int ready) {
  auto ba = BufferedArray::Open(path, testing::UpdateModelWriterOptions());
  if (!ba.ok()) _exit(3);
  const char c = 1;
  if (write(ready, &c, 1) != 1) _exit(4);
  for (uint64_t u = 1, round = 1;; u += 2000, ++round) {
    if (!(*ba)->Apply(testing::UpdateBatch(u, 2000)).ok()) _exit(5);
    if (round % 20 == 0 && !(*ba)->Rebuild(testing::UpdateModelWriterOptions().tree).ok()) _exit(6);
  }
}

int Run(double seconds, uint64_t seed) {
  const char* tmp = getenv("TMPDIR");
  std::string dir_template = std::string(tmp && *tmp ? tmp : "/tmp") + "/momenta-stress-XXXXXX";
  std::vector<char> name(dir_template.begin(), dir_template.end());
  name.push_back('\0');
  if (mkdtemp(name.data()) == nullptr) return 2;
  const std::string dir = name.data(), path = dir + "/a.npy";
  struct Cleanup {
    std::string dir;
    ~Cleanup() { std::filesystem::remove_all(dir); }
  } cleanup{dir};
  IoOptions io;
  io.writable = true;
  const uint64_t shape[] = {kLength};
  if (!ArrayFile::Create(path, DType::kF8, shape, io).ok() ||
      !BufferedArray::Open(path, testing::UpdateModelWriterOptions()).ok()) {
    std::fprintf(stderr, "shared_reader_stress: cannot make %s\n", path.c_str());
    return 2;
  }
  int ready[2];
  if (pipe(ready) != 0) return 2;
  const pid_t pid = fork();  // before any thread: the child runs the writer alone
  if (pid == 0) Writer(path, ready[1]);
  char c;
  if (pid < 0 || read(ready[0], &c, 1) != 1) return 2;
  auto reader = BufferedArray::Open(path, BufferedArrayOptions{});
  if (!reader.ok()) {
    std::fprintf(stderr, "shared_reader_stress: %s\n", reader.status().ToString().c_str());
    return 2;
  }
  std::atomic<int> checked{0}, wrong{0}, errors{0};
  std::atomic<bool> stop{false};
  auto ask = [&](uint64_t thread_seed) {
    std::mt19937_64 rng(thread_seed);
    while (!stop.load()) {
      std::vector<IndexRange> ranges(1 + rng() % 4);
      for (IndexRange& r : ranges) {
        r = {rng() % kLength, rng() % (kLength + 1)};
        if (r.begin > r.end) std::swap(r.begin, r.end);
      }
      std::vector<RangeSummary> out;
      std::vector<uint64_t> as_of;
      const Status s = (*reader)->SummarizeBatch(ranges, false, &out, nullptr, &as_of);
      if (!s.ok()) {
        std::fprintf(stderr, "shared_reader_stress: %s\n", s.ToString().c_str());
        ++errors;
        continue;
      }
      for (size_t k = 0; k < ranges.size(); ++k, ++checked)
        if (Sum(out[k].index) != SumAfter(as_of[k], ranges[k].begin, ranges[k].end)) {
          std::fprintf(stderr, "shared_reader_stress: range %llu:%llu as of %llu is wrong\n",
                       static_cast<unsigned long long>(ranges[k].begin), static_cast<unsigned long long>(ranges[k].end),
                       static_cast<unsigned long long>(as_of[k]));
          ++wrong;
        }
    }
  };
  std::thread first(ask, seed), second(ask, seed + 1), notices([&] {
    while (!stop.load()) {
      (void)(*reader)->TakeNotices();
      (void)(*reader)->applied_sequence();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  first.join();
  second.join();
  notices.join();
  ::kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  std::printf("shared_reader_stress: seed %llu, %d answers checked, %d wrong, %d errors\n",
              static_cast<unsigned long long>(seed), checked.load(), wrong.load(), errors.load());
  return wrong.load() == 0 && errors.load() == 0 && checked.load() > 0 ? 0 : 1;
}

}  // namespace
}  // namespace momenta

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 2;
  const uint64_t seed = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : std::random_device{}();
  return momenta::Run(seconds, seed);
}
