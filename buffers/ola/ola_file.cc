#include "buffers/ola/ola_file.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>

#include "storage/io/extents.h"
#include "storage/util/crc32c.h"

namespace momenta {
namespace {

constexpr char kMagic[8] = {'M', 'O', 'M', 'O', 'L', 'A', 0, 0};
constexpr uint32_t kVersion = 2;
// Cells read per step of a build.
constexpr uint64_t kBuildStep = uint64_t{1} << 20;

uint64_t Blocks(uint64_t slots) { return (slots + kOlaBlockSlots - 1) / kOlaBlockSlots; }
uint64_t RoundUp(uint64_t v, uint64_t to) { return (v + to - 1) / to * to; }
uint64_t SlotsOffset(uint64_t slots) { return RoundUp(kOlaHeaderBytes + 4 * Blocks(slots), 4096); }
uint64_t FileBytes(uint64_t slots) { return SlotsOffset(slots) + RoundUp(slots * sizeof(double), 4096); }

static_assert(offsetof(OlaFileHeader, max_abs_held) % alignof(double) == 0, "loaded and stored atomically");
static_assert(sizeof(OlaFileHeader) <= kOlaHeaderBytes);

// Over magic .. slots with the state left out (it changes; clean_crc covers it).
uint32_t ParamsCrcOf(const OlaFileHeader& h) {
  OlaFileHeader copy = h;
  copy.state = 0;
  return Crc32c(&copy, offsetof(OlaFileHeader, params_crc));
}

uint32_t CleanCrcOf(const OlaFileHeader& h) {
  OlaFileHeader copy = h;
  copy.state = kOlaClean;
  copy.clean_crc = 0;
  return Crc32c(&copy, sizeof(copy));
}

Status Bad(const std::string& path, const std::string& what) {
  return Status::Corruption(path, "Ola buffer " + what + " (it is rebuilt from the array)");
}

}  // namespace

OlaOptions OlaFileOptions(int nodes, uint64_t bin) {
  OlaOptions o;
  o.nodes = nodes;
  o.bin = bin;
  o.storage = OlaStorage::kExplicitLevels;
  return o;
}

uint32_t OlaFile::BlockCheck(uint64_t block) const {
  const uint64_t first = block * kOlaBlockSlots;
  const uint64_t n = std::min(kOlaBlockSlots, layout().slots() - first);
  uint32_t crc = Crc32c(&block, sizeof(block));
  crc = Crc32cExtend(crc, slot_data() + first, n * sizeof(double));
  return crc | 1;
}

Result<std::unique_ptr<OlaFile>> OlaFile::Build(const std::string& path, ArrayFile& array, const OlaOptions& options,
                                                uint64_t sequence, const ArrayIdentity& identity,
                                                uint64_t* bytes_read) {
  auto layout = OlaLayout::Make(options, array.length());
  if (!layout.ok()) return layout.status().WithNote(array.path());
  // Level 1 and up from the array's data extents, in order; holes are zeros.
  OlaBuffer::Builder builder(*layout);
  const uint64_t n = array.length(), item = array.itemsize();
  uint64_t read = 0;
  double max_abs = 0;  // over the cells read; holes are zeros
  if (n > 0) {
    auto extents = DataExtents(array.path(), array.ByteOffset(0), array.ByteOffset(n));
    if (!extents.ok()) return extents.status();
    std::vector<double> cells;
    uint64_t next = 0;  // cells appended
    for (const ByteRange& e : *extents) {
      // The whole elements the extent touches.
      const uint64_t first = std::max<uint64_t>(next, (e.begin - array.ByteOffset(0)) / item);
      const uint64_t end = std::min<uint64_t>(n, (e.end - array.ByteOffset(0) + item - 1) / item);
      if (first >= end) continue;
      MOMENTA_RETURN_IF_ERROR(builder.AppendZeros(first - next));
      for (uint64_t at = first; at < end; at += kBuildStep) {
        const uint64_t count = std::min(kBuildStep, end - at);
        cells.resize(count);
        MOMENTA_RETURN_IF_ERROR(array.ReadDoubles(at, count, cells.data()));
        read += count * item;
        for (double v : cells) max_abs = std::max(max_abs, std::fabs(v));  // NaN: refused by Append below
        if (Status s = builder.Append(cells); !s.ok()) {
          std::string why = s.ToString();
          if (why.rfind("ola: ", 0) == 0) why.erase(0, 5);
          return Status::InvalidArgument(array.path(), why + "; build it with --buffer hbb");
        }
      }
      next = end;
    }
    MOMENTA_RETURN_IF_ERROR(builder.AppendZeros(n - next));
  }
  if (bytes_read) *bytes_read = read;
  OlaBuffer built = builder.Finish();

  const uint64_t slots = layout->slots();
  auto file = MappedFile::Create(path, FileBytes(slots), /*allocate_all=*/true);
  if (!file.ok()) return file.status();
  char* base = (*file)->data();
  std::memcpy(base + SlotsOffset(slots), built.slots().data(), slots * sizeof(double));
  OlaFileHeader& h = *reinterpret_cast<OlaFileHeader*>(base);
  std::memcpy(h.magic, kMagic, sizeof(kMagic));
  h.version = kVersion;
  h.state = kOlaBuilding;
  h.nodes = static_cast<uint32_t>(layout->nodes());
  h.storage = static_cast<uint32_t>(layout->storage());
  h.bin = layout->bin();
  h.levels = static_cast<uint32_t>(layout->levels());
  h.length = n;
  h.slots = slots;
  h.max_abs_held = max_abs;
  h.params_crc = ParamsCrcOf(h);
  const uint64_t slots_offset = SlotsOffset(slots);
  auto view = OlaBuffer::OverSlots(*layout, {reinterpret_cast<double*>(base + slots_offset), slots});
  std::unique_ptr<OlaFile> out(new OlaFile(std::move(file).value(), std::move(view), slots_offset));
  for (uint64_t b = 0; b < Blocks(slots); ++b) out->checks()[b] = out->BlockCheck(b);
  MOMENTA_RETURN_IF_ERROR(out->MarkClean(sequence, identity, /*durable=*/true));
  return out;
}

Result<std::unique_ptr<OlaFile>> OlaFile::Open(const std::string& path, bool writable, const OlaOptions& options,
                                               uint64_t length) {
  auto layout = OlaLayout::Make(options, length);
  if (!layout.ok()) return layout.status().WithNote(path);
  auto file = MappedFile::Open(path, writable);
  if (!file.ok()) return file.status();
  // A fault reads its page, not a readahead window of the file (a cold
  // query reads a few blocks, asked for together by CheckSlots).
  (*file)->AdviseRandomAccess();
  if ((*file)->size() < kOlaHeaderBytes) return Bad(path, "file is shorter than its header");
  const OlaFileHeader& h = *reinterpret_cast<const OlaFileHeader*>((*file)->data());
  if (std::memcmp(h.magic, kMagic, sizeof(kMagic)) != 0) return Bad(path, "file has no Ola magic");
  if (h.version != kVersion) return Bad(path, "file has format version " + std::to_string(h.version));
  if (h.params_crc != ParamsCrcOf(h)) return Bad(path, "header fails its check");
  if (h.nodes != static_cast<uint32_t>(layout->nodes()) || h.bin != layout->bin() ||
      h.levels != static_cast<uint32_t>(layout->levels()) || h.length != length || h.slots != layout->slots() ||
      h.storage != static_cast<uint32_t>(layout->storage()))
    return Bad(path, "file was made for other parameters or another array length");
  if ((*file)->size() != FileBytes(h.slots)) return Bad(path, "file has the wrong size");
  const uint64_t slots_offset = SlotsOffset(h.slots);
  auto view = OlaBuffer::OverSlots(
      *layout, {reinterpret_cast<double*>((*file)->data() + slots_offset), static_cast<size_t>(h.slots)});
  return std::unique_ptr<OlaFile>(new OlaFile(std::move(file).value(), std::move(view), slots_offset));
}

std::string OlaFile::CleanFor(uint64_t sequence, const ArrayIdentity& identity) const {
  const OlaFileHeader& h = header();
  if (h.state == kOlaBuilding) return "its last build did not finish";
  if (h.state == kOlaUpdating) return "a writer stopped while changing it";
  if (h.state != kOlaClean) return "its state is unknown";
  if (h.clean_crc != CleanCrcOf(h)) return "its header fails its check";
  if (h.log_sequence != sequence)
    return "it reflects log sequence " + std::to_string(h.log_sequence) + ", the tree " + std::to_string(sequence);
  if (!(h.array == identity)) return "it was made for another state of the array file";
  return "";
}

Status OlaFile::CheckSlots(std::span<const IndexRange> runs) const {
  // A cold file: every block's read (and its check's) asked for at once, so
  // the faults below find them in flight rather than reading one at a time.
  for (const IndexRange& r : runs) {
    if (r.begin >= r.end) continue;
    const uint64_t b0 = r.begin / kOlaBlockSlots, b1 = (r.end - 1) / kOlaBlockSlots;
    file_->Prefetch(slots_offset_ + b0 * kOlaBlockSlots * sizeof(double),
                    (b1 - b0 + 1) * kOlaBlockSlots * sizeof(double));
    file_->Prefetch(kOlaHeaderBytes + b0 * 4, (b1 - b0 + 1) * 4);
  }
  uint64_t checked_to = 0;  // blocks [0, checked_to) of the runs so far were checked (runs ascend)
  for (const IndexRange& r : runs) {
    if (r.begin >= r.end) continue;
    for (uint64_t b = std::max(checked_to, r.begin / kOlaBlockSlots); b <= (r.end - 1) / kOlaBlockSlots; ++b) {
      if (checks()[b] != BlockCheck(b))
        return Status::Corruption(path(), "Ola buffer block " + std::to_string(b) + " (slots " +
                                              std::to_string(b * kOlaBlockSlots) + "..) fails its check");
      checked_to = b + 1;
    }
  }
  return Status::OK();
}

double OlaFile::max_abs_held() const {
  // A writer in another process may raise it meanwhile: one aligned 8-byte load.
  const double m = std::atomic_ref<double>(const_cast<double&>(header().max_abs_held)).load(std::memory_order_acquire);
  return std::isfinite(m) && m >= 0 ? m : std::numeric_limits<double>::infinity();
}

void OlaFile::Held(double value) {
  // Raised before the slots change (Update), so that a reader or a recovery
  // never sees a slot holding a value the header does not cover.
  std::atomic_ref<double> held(header().max_abs_held);
  const double v = std::fabs(value);
  if (!(v <= held.load(std::memory_order_relaxed))) held.store(v, std::memory_order_release);
}

Status OlaFile::Update(uint64_t i, double old_value, double new_value) {
  Held(new_value);
  return buffer_.Update(i, old_value, new_value, &changed_);
}

void OlaFile::Touch(uint64_t i) {
  for (const auto& [level, point] : buffer_.PointsOf(i)) changed_.push_back(layout().SlotOf(level, point));
}

Status OlaFile::Recompute(uint64_t i, const OlaBuffer::CellReader& read) {
  return buffer_.Recompute(buffer_.PointsOf(i), read, &changed_);
}

std::string OlaFile::ReplayableFor(uint64_t sequence, bool tree_updating) const {
  const OlaFileHeader& h = header();
  if (h.state == kOlaUpdating) return tree_updating ? "" : "a writer stopped while changing it";
  if (h.state != kOlaClean) return CleanFor(sequence, h.array);
  if (h.clean_crc != CleanCrcOf(h)) return "its header fails its check";
  if (h.log_sequence != sequence)
    return "it reflects log sequence " + std::to_string(h.log_sequence) + ", the tree " + std::to_string(sequence);
  return "";
}

void OlaFile::Seal() {
  std::sort(changed_.begin(), changed_.end());
  uint64_t last = UINT64_MAX;
  for (uint64_t slot : changed_) {
    const uint64_t b = slot / kOlaBlockSlots;
    if (b == last) continue;
    checks()[b] = BlockCheck(b);
    last = b;
  }
  changed_.clear();
}

Status OlaFile::MarkUpdating(bool durable) {
  header().state = kOlaUpdating;
  if (!durable) return Status::OK();
  return file_->Flush(0, kOlaHeaderBytes);
}

Status OlaFile::MarkClean(uint64_t sequence, const ArrayIdentity& identity, bool durable) {
  Seal();
  if (durable) MOMENTA_RETURN_IF_ERROR(file_->Flush(kOlaHeaderBytes, file_->size() - kOlaHeaderBytes));
  OlaFileHeader& h = header();
  h.log_sequence = sequence;
  h.array = identity;
  h.state = kOlaClean;
  h.clean_crc = CleanCrcOf(h);
  if (!durable) return Status::OK();
  return file_->Flush(0, kOlaHeaderBytes);
}

}  // namespace momenta
