// A program embedding momenta through its installed headers and libraries:
// it touches every layer it links (the array file, the buffer with io_uring
// when the kernel grants a ring, the statistics), so a missing library or
// dependency on the link line fails to link.
#include <cstdio>
#include <vector>

#include "buffers/buffered_array.h"
#include "buffers/statistics.h"
#include "storage/array_file.h"

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
  std::printf("ok\n");
  return 0;
}
