// The persisted Ola buffer: "<array>.momenta/ola", beside the tree file,
// when the array's buffer kind is ola (`--buffer ola`; OLA.md).
//
//   bytes [0, 4096)                 OlaFileHeader (below), zero-padded
//   bytes [4096, 4096 + 4·blocks)   one check per block of slots (u32), then
//                                   zero padding to a multiple of 4096
//   bytes [slots_offset, ...)       layout.slots() doubles, in blocks of
//                                   kOlaBlockSlots (4 KiB)
//
// Block check: CRC32C of the block's index (u64) and its bytes, with bit 0
// forced to 1 so that a written check is never 0 (a zeroed table is damage).
// The explicit-levels storage is used (OlaStorage::kExplicitLevels): every
// level's windows are contiguous runs of slots, so a query reads a few
// blocks per level and end; in place a window of level ℓ lies at stride
// b^(ℓ−1), one block per point (OLA.md).
//
// The file is mapped shared, as the tree file is: a writer changes slots in
// place inside the tree's seqlock, and readers in other processes see them.
// States (OlaState): building until its build finished; clean when the slots
// describe the array as of log_sequence and identity `array` (both equal to
// the tree's when that is clean); updating from a writer's first change
// after a checkpoint until its next. A clean file is trusted only when
// params_crc and clean_crc hold; each block's check is verified by the
// query that reads it (CheckSlots).
//
// Recovery replays the log into it as into the tree (ReplayableFor): the
// writer applies each record to the array, the tree and this file, then
// moves the tree's log_sequence, so after a writer dies on this boot the
// mapped slots hold every record up to the tree's log_sequence, and of the
// next record some of its values and not others. That record's values are
// recomputed from the array (Recompute: each from ~2N·b values of the level
// below, O(N²·b·L) for the record), the later ones applied as deltas, and the
// blocks every record of the interrupted chunk touched resealed. A file
// that is building, clean as of another sequence, or updating after a
// machine crash (its pages may not have reached the disk), or whose header
// fails its checks, is rebuilt from the array.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "buffers/ola/ola_buffer.h"
#include "buffers/tree/tree_file.h"
#include "storage/io/mapped_file.h"
#include "storage/util/status.h"

namespace momenta {

inline constexpr uint64_t kOlaHeaderBytes = 4096;
inline constexpr uint64_t kOlaBlockSlots = 512;  // 4 KiB of doubles

enum OlaState : uint32_t {
  kOlaBuilding = 0,
  kOlaClean = 1,
  kOlaUpdating = 2,
};

struct OlaFileHeader {
  char magic[8];     // "MOMOLA\0\0"
  uint32_t version;  // 2 (1 had no max_abs_held: such a file is rebuilt)
  uint32_t state;    // OlaState
  // Parameters (the layout is OlaLayout::Make of these with max_levels = levels).
  uint32_t nodes;    // N
  uint32_t storage;  // OlaStorage (always kExplicitLevels in a file)
  uint64_t bin;      // b
  uint32_t levels;   // L
  uint32_t reserved0;
  uint64_t length;        // array cells
  uint64_t slots;         // layout.slots()
  uint32_t params_crc;    // CRC32C of magic .. slots, with state as 0
  uint32_t clean_crc;     // state kOlaClean: CRC32C of the header with state clean and clean_crc 0
  uint64_t log_sequence;  // clean: every log record <= this is in the slots
  // The largest |a_i| any cell has held since the build (version 2): the
  // build's max |a|, raised by every update's new value before its slots
  // change. The slots' rounding is stated for |a| at the largest each cell
  // has held (ola_buffer.h), which the tree's extremes (what the cells hold
  // now) do not bound once a cell has been overwritten; this does, so a
  // progressive bound through the levels holds after updates too.
  double max_abs_held;
  ArrayIdentity array;  // clean: the array's identity then
};

class OlaFile {
 public:
  // Builds the Ola buffer of `array` (a pass over its data extents; holes are
  // zeros, skipped) into a new file at `path`, state clean as of `sequence`
  // and `identity`, synced. InvalidArgument naming the array when a cell is
  // NaN or infinite (the Ola buffer holds finite values only).
  static Result<std::unique_ptr<OlaFile>> Build(const std::string& path, ArrayFile& array, const OlaOptions& options,
                                                uint64_t sequence, const ArrayIdentity& identity,
                                                uint64_t* bytes_read = nullptr);
  // Maps an existing file, checking its magic, version, size, params_crc and
  // that it was made for `options` and `length` cells (Corruption naming the
  // file otherwise). Block checks are left to CheckSlots.
  static Result<std::unique_ptr<OlaFile>> Open(const std::string& path, bool writable, const OlaOptions& options,
                                               uint64_t length);

  const std::string& path() const { return file_->path(); }
  OlaFileHeader& header() { return *reinterpret_cast<OlaFileHeader*>(file_->data()); }
  const OlaFileHeader& header() const { return *reinterpret_cast<const OlaFileHeader*>(file_->data()); }
  const OlaBuffer& buffer() const { return buffer_; }
  const OlaLayout& layout() const { return buffer_.layout(); }
  uint64_t file_bytes() const { return file_->size(); }

  // "" when the header is clean, its seal holds and it describes the array
  // as of `sequence` and `identity`; else why not, in a phrase.
  std::string CleanFor(uint64_t sequence, const ArrayIdentity& identity) const;
  // OK when every block holding a slot of `runs` passes its check;
  // Corruption naming the file and the block otherwise.
  [[nodiscard]] Status CheckSlots(std::span<const IndexRange> runs) const;

  // The largest |a| a cell has held since the build (the header's
  // max_abs_held); +inf when the header's value is not a finite magnitude
  // (damage: no bound is then taken from it).
  double max_abs_held() const;

  // ---- writers ----
  // Cell i: old -> new (finite), its blocks listed for Seal; max_abs_held
  // raised to |new| first.
  [[nodiscard]] Status Update(uint64_t i, double old_value, double new_value);
  // Recovery: a replayed record stored `value` (max_abs_held raised to it).
  void Held(double value);
  // Recovery (the tree's replay, buffer_recover.cc): cell i's values were
  // changed by an update already applied; its blocks are listed for Seal.
  void Touch(uint64_t i);
  // Recovery: an update of cell i may have reached some of its values and
  // not others (a writer killed inside OlaBuffer::Update); they are
  // recomputed from the array as `read` gives it (OlaBuffer::Recompute) and
  // their blocks listed for Seal.
  [[nodiscard]] Status Recompute(uint64_t i, const OlaBuffer::CellReader& read);
  // "" when recovery may replay the log into this file rather than rebuild
  // it: clean as of `sequence` (the tree's log_sequence), or — when the tree
  // says a writer died mid-update on this boot (`tree_updating`), so the
  // mapped pages are exact up to that sequence but for the record after it —
  // updating, or clean as of `sequence`. Else why not, in a phrase.
  std::string ReplayableFor(uint64_t sequence, bool tree_updating) const;
  // Recomputes the checks of the blocks changed since the last Seal.
  void Seal();
  // The header says updating (on disk when `durable`).
  [[nodiscard]] Status MarkUpdating(bool durable);
  // Slots on disk (when `durable`), then a clean sealed header as of
  // `sequence` and `identity` (on disk when `durable`).
  [[nodiscard]] Status MarkClean(uint64_t sequence, const ArrayIdentity& identity, bool durable);

 private:
  OlaFile(std::unique_ptr<MappedFile> file, OlaBuffer buffer, uint64_t slots_offset)
      : file_(std::move(file)), buffer_(std::move(buffer)), slots_offset_(slots_offset) {}
  uint32_t* checks() { return reinterpret_cast<uint32_t*>(file_->data() + kOlaHeaderBytes); }
  const uint32_t* checks() const { return reinterpret_cast<const uint32_t*>(file_->data() + kOlaHeaderBytes); }
  const double* slot_data() const { return reinterpret_cast<const double*>(file_->data() + slots_offset_); }
  uint32_t BlockCheck(uint64_t block) const;

  std::unique_ptr<MappedFile> file_;
  OlaBuffer buffer_;  // a view over the mapped slots
  uint64_t slots_offset_;
  std::vector<uint64_t> changed_;  // slots changed since the last Seal
};

// The options of the file kept beside a tree whose header names an Ola kind
// (nodes N > 0 and bin b): explicit levels, as many as the layout allows.
OlaOptions OlaFileOptions(int nodes, uint64_t bin);

}  // namespace momenta
