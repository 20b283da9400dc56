// A program embedding momenta through its installed headers and libraries.
#include <cstdio>
#include <vector>

#include "storage/array_file.h"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const uint64_t shape[] = {1000};
  momenta::IoOptions io;
  io.writable = true;
  auto array = momenta::ArrayFile::Create(argv[1], momenta::DType::kF8, shape, io);
  if (!array.ok()) {
    std::fprintf(stderr, "%s\n", array.status().ToString().c_str());
    return 1;
  }
  const std::vector<momenta::Value> values{momenta::Value::Float(2.5)};
  if (!(*array)->WriteValues(7, values).ok()) return 1;
  double back = 0;
  if (!(*array)->ReadDoubles(7, 1, &back).ok() || back != 2.5) return 1;
  std::printf("ok\n");
  return 0;
}
