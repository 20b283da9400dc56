// NumPy and momenta read each other's files: NumPy writes random arrays of
// every dtype (1-D and N-D, format 1.0, 2.0 and 3.0 headers) that momenta
// reads back value for value over every backend; momenta creates and writes
// arrays of every dtype that numpy.load(path, mmap_mode='r') maps with the
// same shape and values. Skips when /usr/bin/python3 has no numpy.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <sstream>

#include "storage/array/array_file.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using ::momenta::testing::HaveNumpy;
using ::momenta::testing::Lines;
using ::momenta::testing::ReadFileBytes;
using ::momenta::testing::RunPython;
using ::momenta::testing::ScratchDir;
using ::momenta::testing::TestSeed;
using ::momenta::testing::WriteFileBytes;

constexpr DType kAll[] = {DType::kF8, DType::kF4, DType::kI8, DType::kI4, DType::kI2,
                          DType::kI1, DType::kU8, DType::kU4, DType::kU2, DType::kU1};

#define SKIP_WITHOUT_NUMPY() \
  if (!HaveNumpy()) GTEST_SKIP() << "python3-numpy is not installed for /usr/bin/python3"

bool Same(const Value& a, const Value& b) {
  if (a.kind != b.kind) return false;
  if (a.kind == Value::Kind::kInt) return a.i == b.i;
  if (a.kind == Value::Kind::kUInt) return a.u == b.u;
  return std::memcmp(&a.f, &b.f, sizeof a.f) == 0 || (std::isnan(a.f) && std::isnan(b.f));
}

// "(6, 7, 8)" / "(1000,)" as Python prints a tuple.
std::string PyTuple(const std::vector<uint64_t>& shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + (shape.size() == 1 ? ",)" : ")");
}

// Writes, for each dtype, three arrays: 1-D in format 1.0, 3-D in 2.0, 2-D in
// 3.0, each with a .txt of its values in C order (repr of the exact value).
constexpr char kNumpyWriter[] = R"PY(
import numpy as np
rng = np.random.default_rng(SEED)
variants = [((1000,), (1, 0)), ((4, 5, 6), (2, 0)), ((7, 11), (3, 0))]
for code in ['f8', 'f4', 'i8', 'i4', 'i2', 'i1', 'u8', 'u4', 'u2', 'u1']:
    dt = np.dtype('<' + code)
    for shape, version in variants:
        n = int(np.prod(shape))
        if dt.kind == 'f':
            info = np.finfo(dt)
            top = 300 if code == 'f8' else 35
            a = rng.standard_normal(n) * 10.0 ** rng.integers(-top, top, n)
            a = a.astype(dt)
            a[:8] = [np.nan, np.inf, -np.inf, -0.0, info.max, -info.max, info.tiny, info.smallest_subnormal]
        else:
            info = np.iinfo(dt)
            a = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
            a[:2] = [info.min, info.max]
        a = a.reshape(shape)
        name = 'DIR/%s_v%d' % (code, version[0])
        with open(name + '.npy', 'wb') as f:
            np.lib.format.write_array(f, a, version=version)
        flat = a.ravel(order='C')
        with open(name + '.txt', 'w') as f:
            for x in flat:
                f.write((repr(float(x)) if dt.kind == 'f' else str(int(x))) + '\n')
print('ok')
)PY";

std::string Substitute(std::string code, const std::string& key, const std::string& value) {
  for (size_t at; (at = code.find(key)) != std::string::npos;) code.replace(at, key.size(), value);
  return code;
}

TEST(NumpyInteropTest, MomentaReadsWhatNumpyWrites) {
  SKIP_WITHOUT_NUMPY();
  const uint64_t seed = TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (rerun with MOMENTA_SEED=" + std::to_string(seed) + ")");
  ScratchDir dir;
  const std::string code =
      Substitute(Substitute(kNumpyWriter, "SEED", std::to_string(seed % (uint64_t{1} << 62))), "DIR", dir.path());
  const auto py = RunPython(code);
  ASSERT_EQ(py.exit_code, 0) << py.out << py.err;

  const struct {
    int version;
    std::vector<uint64_t> shape;
  } kVariants[] = {{1, {1000}}, {2, {4, 5, 6}}, {3, {7, 11}}};
  for (IoKind kind : {IoKind::kPread, IoKind::kMmap, IoKind::kUring}) {
    for (DType t : kAll) {
      for (const auto& v : kVariants) {
        const std::string base = dir.File(std::string(DTypeName(t)) + "_v" + std::to_string(v.version));
        SCOPED_TRACE(base + ".npy over " + std::string(IoKindName(kind)));
        auto f = ArrayFile::Open(base + ".npy", IoOptions{.kind = kind});
        if (!f.ok() && kind == IoKind::kUring && f.status().code() == Status::Code::kNotSupported) {
          std::cout << "[ skipped  ] io_uring: " << f.status().ToString() << "\n";
          goto next_backend;
        }
        ASSERT_OK(f);
        EXPECT_EQ((*f)->dtype(), t);
        EXPECT_EQ((*f)->header().shape, v.shape);
        EXPECT_EQ((*f)->header().major_version, v.version);
        const auto want = Lines(ReadFileBytes(base + ".txt"));
        ASSERT_EQ((*f)->length(), want.size());
        std::vector<Value> got;
        ASSERT_OK((*f)->ReadValues(0, want.size(), &got));
        for (size_t k = 0; k < want.size(); ++k) {
          auto w = ParseValue(t, want[k]);
          ASSERT_OK(w) << want[k] << ": " << w.status().ToString();
          ASSERT_TRUE(Same(got[k], *w)) << "#" << k << ": momenta read " << FormatValue(got[k]) << ", NumPy wrote "
                                        << want[k];
        }
      }
    }
  next_backend:;
  }
}

// Checks every array listed in the manifest (path, dtype, shape, values file)
// with numpy.load(mmap_mode='r').
constexpr char kNumpyChecker[] = R"PY(
import numpy as np
bad = 0
for line in open('DIR/manifest.txt'):
    path, code, shape, values = line.rstrip('\n').split('|')
    a = np.load(path, mmap_mode='r')
    want_shape = eval(shape)
    problems = []
    if not isinstance(a, np.memmap): problems.append('not memory-mapped')
    if a.size and a.offset != 4096: problems.append('data offset %d' % a.offset)
    if a.dtype != np.dtype('<' + code): problems.append('dtype %s' % a.dtype.str)
    if a.shape != want_shape: problems.append('shape %r' % (a.shape,))
    if not a.flags.c_contiguous: problems.append('not C order')
    if values and not problems:
        dt = np.dtype('<' + code)
        text = open(values).read().split()
        want = np.array([float(x) if dt.kind == 'f' else int(x) for x in text], dtype=dt)
        flat = np.asarray(a).ravel(order='C')
        if flat.shape != want.shape:
            problems.append('%d values, want %d' % (flat.size, want.size))
        else:
            same = flat == want
            if dt.kind == 'f':
                same = (same & (np.signbit(flat) == np.signbit(want))) | (np.isnan(flat) & np.isnan(want))
            if not same.all():
                k = int(np.argmin(same))
                problems.append('values differ, first at #%d: %r, want %r' % (k, flat[k], want[k]))
    elif not values:
        if a.size and (a[(0,) * a.ndim] != 0 or a.reshape(-1)[-1] != 7): problems.append('ends')
    if problems:
        bad += 1
        print(path, '; '.join(problems))
print('checked')
raise SystemExit(1 if bad else 0)
)PY";

TEST(NumpyInteropTest, NumpyMapsWhatMomentaWrites) {
  SKIP_WITHOUT_NUMPY();
  const uint64_t seed = TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (rerun with MOMENTA_SEED=" + std::to_string(seed) + ")");
  std::mt19937_64 rng(seed);
  ScratchDir dir;
  std::string manifest;
  const std::vector<std::vector<uint64_t>> shapes = {{777}, {6, 7, 8}, {}, {0}, {3, 0, 2}};
  for (DType t : kAll) {
    for (size_t s = 0; s < shapes.size(); ++s) {
      const std::vector<uint64_t>& shape = shapes[s];
      const std::string base = dir.File(std::string(DTypeName(t)) + "_" + std::to_string(s));
      auto f = ArrayFile::Create(base + ".npy", t, shape, IoOptions{.kind = IoKind::kPread});
      ASSERT_OK(f);
      std::vector<Value> values;
      for (uint64_t k = 0; k < (*f)->length(); ++k) {
        char bytes[8];
        const uint64_t r = rng();
        std::memcpy(bytes, &r, sizeof r);
        values.push_back(DecodeValue(t, bytes));
      }
      ASSERT_OK((*f)->WriteValues(0, values));
      std::string text;
      for (const Value& v : values) text += FormatValue(v) + "\n";  // the exact value
      WriteFileBytes(base + ".txt", text);
      manifest += base + ".npy|" + std::string(DTypeName(t)) + "|" + PyTuple(shape) + "|" + base + ".txt\n";
    }
  }
  // A big sparse array: NumPy maps 2^32 elements without reading them.
  {
    const std::string big = dir.File("big_u1.npy");
    auto f =
        ArrayFile::Create(big, DType::kU1, std::vector<uint64_t>{uint64_t{1} << 32}, IoOptions{.kind = IoKind::kPread});
    ASSERT_OK(f);
    const Value seven[] = {Value::UInt(7)};
    ASSERT_OK((*f)->WriteValues((uint64_t{1} << 32) - 1, seven));
    manifest += big + "|u1|(4294967296,)|\n";
  }
  WriteFileBytes(dir.File("manifest.txt"), manifest);
  const auto py = RunPython(Substitute(kNumpyChecker, "DIR", dir.path()));
  EXPECT_EQ(py.exit_code, 0) << py.out << py.err;
  EXPECT_NE(py.out.find("checked"), std::string::npos) << py.out << py.err;
}

}  // namespace
}  // namespace momenta
