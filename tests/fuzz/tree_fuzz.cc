// Fuzz target `tree`: the moment buffer file (buffers/tree/tree_file.h, format 3 in
// storage/ON_DISK.md) opened by a BufferedArray reader and asked one query.
//
// Set-up, once per process, on tmpfs (fuzz_scratch.h): an f8 array of 1536
// cells — data in its first and last file pages, a hole between (so the tree
// has never-written nodes), NaN, +inf and -inf sprinkled, a leaf of NaN only,
// a run of written zeros — and its clean tree with J = 2, leaf span 16,
// fan-out 4 (96, 24, 6, 2 nodes: four levels, the top two in the RAM tier).
// Every finite value is a multiple of 1/4 below 2^9 in magnitude.
//
// Input: bytes 0-1 and 2-3 choose the range (u16 LE, each mod 1537, swapped
// when p > q), bit 0 of byte 4 asks for min/max; then edits of 6 bytes
// [op, a (u16 LE), b (u16 LE), v] applied in turn to a copy of the clean
// tree file, where "node offset x" is byte 4096 + x % (current size - 4096):
//   op % 6 == 0  header byte a % 256 ^= v      1  node offset a ^= v
//            2   header byte a % 256 = v       3  zero b % 256 + 1 bytes at node offset a
//            4   copy v + 1 bytes from node offset a to node offset b (a splice)
//            5   resize the file to 4096 + a % (node bytes + 2 nodes) (cut, or extend with zeros)
// The damaged tree then goes one of two ways:
//   - direct (most inputs): written beside the clean one and opened as a
//     MomentTree; a tree a reader would query as it is (it opens, its header
//     is sealed clean, and it was built for this array, unchanged since) is
//     asked to summarize [p, q) straight away, as BufferedArray does with a
//     current buffer. Refusing it (a Status, Corruption or NotSupported) is
//     fine; an answer must be right.
//   - the whole reader (an input whose crc32c is 0 mod 64, and every tree
//     that opens but would need recovery): written as the sidecar's tree, and
//     a reader (that may write: it rebuilds what it finds damaged) opens the
//     array and summarizes [p, q). That path takes the lock, opens the log
//     and rebuilds on two threads: ~5 ms an input, 25 times the direct one;
//     chosen by a hash of the whole input so that mutations of a corpus entry
//     do not all inherit it.
//
// A node copied whole to another place (edit 4 with v >= 167 at node
// boundaries: a misdirected write) answered from format 2's checks, which
// did not bind the place; format 3 binds it, and this target checks that.
//
// Properties checked on every input:
//   - whole reader: Open and Summarize succeed: a reader with write access
//     rebuilds a damaged, stale or unreadable buffer rather than fail or
//     answer from it; direct: every error is a Status;
//   - the answer is bit for bit the one the undamaged tree gives (a rebuild
//     uses the same parameters, so it makes the same nodes): damage that
//     goes unseen cannot hide in low-order bits;
//   - the answer equals a plain loop over the cells: counts (cells, NaN,
//     +inf, -inf, finite) and the index moments Σ (i - p)^j a_i exactly
//     (every term and partial sum is a multiple of 1/4 below 2^42, exact in
//     double and long double however the tree groups them); min and max
//     exactly; the sum K·n + S1 and the central sum of squares within
//     kTolerance of the squares of the enclosing leaves (below).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "buffers/buffered_array.h"
#include "buffers/buffered_array_parts.h"
#include "buffers/tree/moment_tree.h"
#include "buffers/tree/range_query.h"
#include "buffers/tree/tree_seqlock.h"
#include "storage/array/array_file.h"
#include "storage/util/crc32c.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_scratch.h"

namespace {

using namespace momenta;

constexpr uint64_t kN = 1536;
constexpr uint64_t kLeaf = 16;
constexpr uint32_t kFanout = 4;
constexpr int kOrder = 2;
constexpr size_t kEditBytes = 6;
// The value statistics are not exact: the tree keeps a shift K (a mean
// rounded to double) and S1 = Σ(a - K), S2 = Σ(a - K)² in long double, and
// merges and un-merges of partial leaves re-center and cancel. Each such step
// rounds at 2^-64 (5.4e-20) of the largest sum involved, which is at most the
// count times the largest square of the leaves the query touches; a query
// combines fewer than 40 nodes and partial leaves with a handful of
// operations each, so its error is below ~1e-17 of that scale. 1e-12 leaves
// a margin of 10^5 and is still 10^6 below what one wrong cell (a change of
// at least 1/4 against values below 2^9) would move these sums by. Low-bit
// damage that a tolerance cannot see is caught by the bit-for-bit check.
constexpr long double kTolerance = 1e-12L;

IoOptions PreadIo(bool writable) {
  IoOptions io;
  io.kind = IoKind::kPread;
  io.writable = writable;
  return io;
}

double CellValue(uint64_t i) {
  if (i >= 160 && i < 176) return std::nan("");  // a leaf of NaN only
  if (i >= 300 && i < 340) return 0.0;           // written zeros
  if (i % 23 == 3) return std::nan("");
  if (i % 97 == 5) return INFINITY;
  if (i % 89 == 7) return -INFINITY;
  return static_cast<double>(static_cast<int64_t>((i * 37) % 4001) - 2000) * 0.25;
}

struct World {
  std::string array_path, sidecar, tree_path, direct_path;
  std::string pristine;                       // the clean tree file
  std::unique_ptr<ArrayFile> array;           // for the pristine tree's answers
  std::unique_ptr<MomentTree> pristine_tree;  // a copy of the clean tree, never damaged
  std::vector<double> cells;                  // the array as written (holes are 0)
  BufferedArrayOptions reader;
};

void Require(const Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "tree_fuzz set-up: %s: %s\n", what, s.ToString().c_str());
    std::abort();
  }
}

void WriteWhole(const std::string& path, const std::string& bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  FUZZ_CHECK(fd >= 0, path.c_str());
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
    FUZZ_CHECK(w > 0, path.c_str());
    done += static_cast<size_t>(w);
  }
  ::close(fd);
}

std::string ReadWhole(const std::string& path) {
  std::string out;
  const int fd = ::open(path.c_str(), O_RDONLY);
  FUZZ_CHECK(fd >= 0, path.c_str());
  char buf[65536];
  for (ssize_t r; (r = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(r));
  ::close(fd);
  return out;
}

World& TheWorld() {
  static World* w = [] {
    auto* world = new World;
    const std::string dir = momenta::fuzz::FuzzScratchDir("tree");
    world->array_path = dir + "/a.npy";
    world->sidecar = dir + "/a.npy.momenta";
    world->tree_path = world->sidecar + "/tree";
    world->direct_path = dir + "/direct.tree";
    {
      const uint64_t shape[] = {kN};
      auto f = ArrayFile::Create(world->array_path, DType::kF8, shape, PreadIo(true));
      Require(f.status(), "create the array");
      std::vector<Value> first, last;
      for (uint64_t i = 0; i < 512; ++i) first.push_back(Value::Float(CellValue(i)));
      for (uint64_t i = 1024; i < 1300; ++i) last.push_back(Value::Float(CellValue(i)));
      Require((*f)->WriteValues(0, first), "write the first page");
      Require((*f)->WriteValues(1024, last), "write the last page");
      Require((*f)->Sync(), "sync the array");
    }
    world->reader.io = PreadIo(false);
    world->reader.sync = LogSync::kNone;
    world->reader.sidecar = world->sidecar;
    world->reader.tree.order = kOrder;
    world->reader.tree.leaf_span = kLeaf;
    world->reader.tree.fanout = kFanout;
    world->reader.tree.ram_budget = 8 * NodeCodec(kOrder).bytes();
    {
      BufferedArrayOptions writer = world->reader;
      writer.io = PreadIo(true);
      auto ba = BufferedArray::Open(world->array_path, writer);
      Require(ba.status(), "build the tree");
      FUZZ_CHECK(TreeOf(**ba).layout().levels() == 4, "the tree should have four levels");
      Require((*ba)->Close(), "close the writer");
    }
    world->pristine = ReadWhole(world->tree_path);
    WriteWhole(dir + "/pristine.tree", world->pristine);
    auto tree = MomentTree::Open(dir + "/pristine.tree", /*writable=*/false, PreadIo(false));
    Require(tree.status(), "open the pristine tree");
    world->pristine_tree = std::move(tree).value();
    auto array = ArrayFile::Open(world->array_path, PreadIo(false));
    Require(array.status(), "open the array");
    world->array = std::move(array).value();
    world->cells.resize(kN);
    Require(world->array->ReadDoubles(0, kN, world->cells.data()), "read the array");
    return world;
  }();
  return *w;
}

uint16_t U16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }

// The clean tree with the input's edits applied (see the top of the file).
std::string Damaged(const std::string& pristine, const uint8_t* edits, size_t size) {
  std::string b = pristine;
  const uint64_t node_bytes = NodeCodec(kOrder).bytes();
  const uint64_t full_area = pristine.size() - kTreeHeaderBytes;
  for (size_t k = 0; k + kEditBytes <= size; k += kEditBytes) {
    const uint8_t op = edits[k] % 6, v = edits[k + 5];
    const uint16_t a = U16(edits + k + 1), c = U16(edits + k + 3);
    const uint64_t area = b.size() > kTreeHeaderBytes ? b.size() - kTreeHeaderBytes : 0;
    switch (op) {
      case 0:
        b[a % 256] = static_cast<char>(b[a % 256] ^ v);
        break;
      case 2:
        b[a % 256] = static_cast<char>(v);
        break;
      case 1:
        if (area > 0) b[kTreeHeaderBytes + a % area] = static_cast<char>(b[kTreeHeaderBytes + a % area] ^ v);
        break;
      case 3:
        if (area > 0) {
          const uint64_t at = a % area, n = std::min<uint64_t>(c % 256 + 1, area - at);
          std::memset(b.data() + kTreeHeaderBytes + at, 0, n);
        }
        break;
      case 4:
        if (area > 0) {
          const uint64_t from = a % area, to = c % area;
          const uint64_t n = std::min<uint64_t>({uint64_t{v} + 1, area - from, area - to});
          std::memmove(b.data() + kTreeHeaderBytes + to, b.data() + kTreeHeaderBytes + from, n);
        }
        break;
      case 5:
        b.resize(kTreeHeaderBytes + a % (full_area + 2 * node_bytes), '\0');
        break;
    }
  }
  return b;
}

// The sidecar as the clean build left it, holding `tree` as its buffer: the
// log and locks a reader's recovery makes are removed so inputs stay apart.
void ResetSidecar(const World& w, const std::string& tree) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(w.sidecar)) {
    const std::string name = e.path().filename().string();
    if (name != "identity" && name != "tree") std::filesystem::remove_all(e.path(), ec);
  }
  WriteWhole(w.tree_path, tree);
}

bool Same(long double a, long double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

bool SameSummary(const RangeSummary& a, const RangeSummary& b, bool extremes) {
  if (a.count() != b.count() || !(a.nonfinite == b.nonfinite) || a.exact_sum != b.exact_sum ||
      !(a.exact_sumsq == b.exact_sumsq))
    return false;
  if (a.index.order() != b.index.order()) return false;
  for (int j = 0; j <= a.index.order(); ++j)
    if (!Same(a.index.moment(j), b.index.moment(j))) return false;
  if (a.values.count() != b.values.count() || !Same(a.values.shift(), b.values.shift()) ||
      !Same(a.values.sum_of_deviations(), b.values.sum_of_deviations()) ||
      !Same(a.values.sum_of_squared_deviations(), b.values.sum_of_squared_deviations()))
    return false;
  return !extremes || (Same(a.extremes.min, b.extremes.min) && Same(a.extremes.max, b.extremes.max));
}

// The answer against a plain loop over the cells (see the top of the file).
void CheckAgainstCells(const std::vector<double>& cells, const RangeSummary& got, uint64_t p, uint64_t q,
                       bool extremes) {
  NonFiniteCounts nonfinite;
  long double moment[kOrder + 1] = {};
  long double sum = 0;
  uint64_t finite = 0;
  double lo = INFINITY, hi = -INFINITY;
  for (uint64_t i = p; i < q; ++i) {
    const double a = cells[i];
    if (std::isnan(a)) {
      ++nonfinite.nan;
      continue;
    }
    lo = std::min(lo, a);
    hi = std::max(hi, a);
    if (std::isinf(a)) {
      ++(a > 0 ? nonfinite.pos_inf : nonfinite.neg_inf);
      continue;
    }
    ++finite;
    sum += a;
    const long double x = static_cast<long double>(i - p);
    moment[0] += a;
    moment[1] += x * a;
    moment[2] += x * x * a;
  }
  FUZZ_CHECK(got.count() == q - p, "cell count");
  FUZZ_CHECK(got.nonfinite == nonfinite, "NaN / infinity counts");
  FUZZ_CHECK(got.values.count() == finite, "finite count");
  FUZZ_CHECK(got.exact_sum == 0, "an f8 array has no exact integer sum");
  FUZZ_CHECK(got.index.order() == kOrder, "moment order");
  for (int j = 0; j <= kOrder; ++j) FUZZ_CHECK(got.index.moment(j) == moment[j], "index moment");
  if (extremes) {
    FUZZ_CHECK(got.extremes.min == lo, "min");
    FUZZ_CHECK(got.extremes.max == hi, "max");
  }
  if (finite == 0) return;
  // The scale: the squares of the finite cells of the leaves the range touches.
  long double scale = 1;
  const uint64_t from = p / kLeaf * kLeaf, to = std::min(kN, (q + kLeaf - 1) / kLeaf * kLeaf);
  for (uint64_t i = from; i < to; ++i)
    if (std::isfinite(cells[i])) scale += static_cast<long double>(cells[i]) * cells[i];
  const long double mean = sum / static_cast<long double>(finite);
  long double central = 0;
  for (uint64_t i = p; i < q; ++i)
    if (std::isfinite(cells[i])) central += (cells[i] - mean) * (cells[i] - mean);
  const long double got_sum =
      static_cast<long double>(got.values.shift()) * static_cast<long double>(finite) + got.values.sum_of_deviations();
  FUZZ_CHECK(std::fabs(got_sum - sum) <= kTolerance * scale, "sum of the finite values");
  FUZZ_CHECK(std::fabs(got.values.central_sum_of_squares() - central) <= kTolerance * scale, "central sum of squares");
}

// The whole reader's way: Open rebuilds what it must, and answers right.
void ThroughTheReader(World& w, const std::string& damaged, uint64_t p, uint64_t q, bool extremes,
                      const RangeSummary& want) {
  ResetSidecar(w, damaged);
  std::vector<std::string> notices;
  auto ba = BufferedArray::Open(w.array_path, w.reader, &notices);
  FUZZ_CHECK(ba.ok(), ba.status().ToString().c_str());
  auto got = (*ba)->Summarize(p, q, extremes);
  FUZZ_CHECK(got.ok(), got.status().ToString().c_str());
  FUZZ_CHECK(SameSummary(*got, want, extremes), "the answer differs from the undamaged tree's");
  CheckAgainstCells(w.cells, *got, p, q, extremes);
}

bool Refusal(const Status& s) {
  return s.code() == Status::Code::kCorruption || s.code() == Status::Code::kNotSupported;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  TheWorld();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  World& w = TheWorld();
  if (size < 5) return 0;
  uint64_t p = U16(data) % (kN + 1), q = U16(data + 2) % (kN + 1);
  if (p > q) std::swap(p, q);
  const bool extremes = (data[4] & 1) != 0;
  const std::string damaged = Damaged(w.pristine, data + 5, size - 5);

  // The undamaged tree's answer (checked against the cells through `got`,
  // which must equal it bit for bit).
  auto want = SummarizeRange(*w.pristine_tree, *w.array, p, q, extremes);
  FUZZ_CHECK(want.ok(), want.status().ToString().c_str());

  if (Crc32c(data, size) % 64 == 0) {
    ThroughTheReader(w, damaged, p, q, extremes, *want);
    return 0;
  }
  WriteWhole(w.direct_path, damaged);
  auto tree = MomentTree::Open(w.direct_path, /*writable=*/false, PreadIo(false));
  if (!tree.ok()) {
    FUZZ_CHECK(Refusal(tree.status()), tree.status().ToString().c_str());
    return 0;
  }
  // As BufferedArray::Classify: only a clean buffer of this array, unchanged
  // since it was built, is queried without recovery.
  const TreeFileHeader& h = (*tree)->header();
  auto id = IdentityOf(w.array_path);
  FUZZ_CHECK(id.ok(), id.status().ToString().c_str());
  if (h.state != kTreeClean || h.length != kN || h.dtype != static_cast<uint32_t>(DType::kF8) ||
      !SameContents(h.array, *id)) {
    tree->reset();
    ThroughTheReader(w, damaged, p, q, extremes, *want);
    return 0;
  }
  auto got = SummarizeRange(**tree, *w.array, p, q, extremes);
  if (!got.ok()) {
    FUZZ_CHECK(Refusal(got.status()), got.status().ToString().c_str());
    return 0;
  }
  FUZZ_CHECK(SameSummary(*got, *want, extremes), "the answer differs from the undamaged tree's");
  CheckAgainstCells(w.cells, *got, p, q, extremes);
  return 0;
}
