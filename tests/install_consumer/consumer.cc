// A program embedding momenta through its installed headers and libraries:
// it touches every layer it links (the array file, the buffer with io_uring
// when the kernel grants a ring, the statistics, the monitor's window and a
// site reporting to a root), so a missing library or dependency on the link
// line fails to link. run.cmake puts docs/embedding.md's "Embedding the monitor"
// block before this file: PrintWindow and ReportToRoot come from there.
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "buffers/algebra/statistics.h"
#include "buffers/buffered_array.h"
#include "storage/array/array_file.h"
#include "stream/net/root_server.h"

momenta::Status PrintWindow(const std::string& path);
momenta::Status ReportToRoot(const momenta::HostPort& root, const std::string& path);

// A window over three items, then a site reporting them to a root on a free port.
bool RunMonitor(const std::string& items) {
  std::FILE* f = std::fopen(items.c_str(), "w");
  if (f == nullptr || std::fputs("1 7\n2 7\n3 9\n", f) < 0 || std::fclose(f) != 0) return false;
  if (momenta::Status st = PrintWindow(items); !st.ok()) {
    std::fprintf(stderr, "%s\n", st.ToString().c_str());
    return false;
  }
  momenta::RootServerOptions options;
  options.params.eps = 0.01;
  options.params.spec = {/*window=*/60000, /*tardiness=*/0};
  options.log = [](const std::string&) {};
  auto root = momenta::RootServer::Start(options);
  if (!root.ok()) return false;
  std::thread serve([&] { (void)(*root)->Run(); });
  const momenta::Status st = ReportToRoot({"127.0.0.1", (*root)->port()}, items);
  (*root)->Stop();
  serve.join();
  if (!st.ok()) std::fprintf(stderr, "%s\n", st.ToString().c_str());
  return st.ok();
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const uint64_t shape[] = {1000};
  momenta::IoOptions io;
  io.writable = true;
  {
    auto array = momenta::ArrayFile::Create(argv[1], momenta::DType::kF8, shape, io);
    if (!array.ok()) {
      std::fprintf(stderr, "%s\n", array.status().ToString().c_str());
      return 1;
    }
    const std::vector<momenta::Value> values{momenta::Value::Float(2.5)};
    if (!(*array)->WriteValues(7, values).ok()) return 1;
    double back = 0;
    if (!(*array)->ReadDoubles(7, 1, &back).ok() || back != 2.5) return 1;
  }
  momenta::BufferedArrayOptions options;
  auto array = momenta::BufferedArray::Open(argv[1], options);
  if (!array.ok()) {
    std::fprintf(stderr, "%s\n", array.status().ToString().c_str());
    return 1;
  }
  auto range = (*array)->Summarize(0, 1000, /*need_extremes=*/false);
  if (!range.ok()) return 1;
  auto sum = momenta::ComputeStat(momenta::Stat::kSum, {}, *range, 0, (*array)->array().dtype());
  if (!sum.ok() || sum->values.empty() || sum->values[0] != 2.5L) return 1;
  if (!RunMonitor(std::string(argv[1]) + ".items")) return 1;
  std::printf("ok\n");
  return 0;
}
