// The persisted moment buffer: "<array>.momenta/tree".
//
//   bytes [0, 4096)         TreeFileHeader (below), zero-padded
//   bytes [4096, ...)       the node array: layout.total_nodes() nodes of
//                           header.node_bytes each, level 1 first (TreeLayout)
//
// The file is mapped shared (MappedFile): every process sees one copy, and
// reopening reads nothing. The header records the parameters the layout is
// rebuilt from and the identity of the array file it summarizes; a buffer
// whose identity differs from the array's (changed behind momenta's back) or
// whose state is not kClean is stale and must be rebuilt, never answered from.
// The header and every written node carry checks (formats 2 to 4, below and
// range_summary.h): damage is found by Open or by the query that reads it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "buffers/tree/tree_layout.h"
#include "storage/array/array_file.h"
#include "storage/io/mapped_file.h"
#include "storage/util/status.h"

namespace momenta {

// What identifies the bytes of an array file: if any of these changed, the
// buffer no longer describes the array.
struct ArrayIdentity {
  uint64_t device = 0;
  uint64_t inode = 0;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;
  bool operator==(const ArrayIdentity&) const = default;
};
Result<ArrayIdentity> IdentityOf(const std::string& array_path);

inline constexpr uint64_t kTreeHeaderBytes = 4096;

struct TreeFileHeader {
  char magic[8];     // "MOMTREE\0"
  uint32_t version;  // 4; 3 and 2 (before exact integer sums of squares) and 1 (before
                     // NaN counts and checks) are refused and rebuilt
  uint32_t state;    // TreeState
  // Parameters (the layout is a pure function of these).
  uint32_t order;  // J: index moments 0..J
  uint32_t fanout;
  uint64_t leaf_span;   // elements per level-1 node
  uint64_t ram_budget;  // bytes
  uint32_t disk_tier;   // 1 = two tiers, 0 = every level in RAM
  uint32_t node_bytes;
  uint64_t length;        // array elements
  uint32_t dtype;         // DType
  uint32_t ola_nodes;     // buffer kind: 0 hbb; N > 0 ola, an Ola buffer of N nodes in "ola" beside (ola_file.h)
  ArrayIdentity array;    // identity of the array when the buffer was last made consistent
  uint64_t log_sequence;  // every update-log record <= this is applied to array and nodes (while
                          // updating, records >= chunk_first_sequence may still owe their nodes)
  uint64_t updates_since_build;
  // Fields below were added within format 1 (files from before read them as 0).
  uint64_t checkpoint_sequence;  // nodes and this header were last made durable at this log sequence
  uint64_t boot_id;              // hash of the kernel boot id of the last writer (0: none)
  uint64_t write_epoch;          // seqlock: odd while a writer changes the array or nodes
  int64_t reader_wait_until_ns;  // a starved reader asks writers to pause until then (CLOCK_MONOTONIC)
  uint32_t durable_marks;        // 1: the last writer kept state changes durable (sync != none)
  uint32_t ola_bin;              // the Ola buffer's bin b (0 with ola_nodes 0)
  // First log sequence of the chunk being applied: nodes that records
  // [chunk_first_sequence, log_sequence] touched may owe a recomputation
  // (an extreme that shrank, drift) that a crash interrupted.
  uint64_t chunk_first_sequence;
  // Format 2: checks.
  uint32_t params_crc;  // CRC32C of magic, version, then order .. dtype (state left out)
  uint32_t clean_crc;   // state kTreeClean: CRC32C of the sealed header (SealedHeaderCrc)
  uint64_t top_mask;    // bit j: node j of the top level has been written (its check is not 0)
};
static_assert(sizeof(ArrayIdentity) == 40);
static_assert(sizeof(TreeFileHeader) ==
              8 + 4 + 4 + 4 + 4 + 8 + 8 + 4 + 4 + 8 + 4 + 4 + 40 + 8 + 8 + 8 + 8 + 8 + 8 + 4 + 4 + 8 + 4 + 4 + 8);

// The check fields of the header, formats 2 to 4 (the same).
//
// params_crc covers the fields the layout is derived from (they never change
// after Create) and is checked by every Open. clean_crc seals every other
// field except the ones that change under a clean header or matter only
// while it is not clean (reader_wait_until_ns, boot_id, durable_marks,
// chunk_first_sequence); it is checked by Open when the state is kTreeClean.
// CONTRACT: whoever changes a sealed field (state, array, log_sequence,
// checkpoint_sequence, updates_since_build, write_epoch, top_mask) of a clean
// header, or makes a header clean, calls MomentTree::MarkClean or
// SealHeader (FlushHeader seals too) before another process may open it.
// While the state is not clean only params_crc protects the header: damage to
// log_sequence then is not detected (the nodes' checks still are).
// A field added later is sealed unless SealedHeaderCrc zeroes it: a field
// that may change while the header is clean must be zeroed there.
uint32_t ParamsCrc(const TreeFileHeader& h);
// The clean seal of `h` as if its state were kTreeClean.
uint32_t SealedHeaderCrc(const TreeFileHeader& h);
static_assert(sizeof(TreeFileHeader) <= 4096);

// A hash of this boot of the kernel (/proc/sys/kernel/random/boot_id): a
// writer's mapped stores survive its own crash but not the machine's, so
// recovery trusts the page cache only when the boot id is the same.
uint64_t CurrentBootId();

enum TreeState : uint32_t {
  kTreeBuilding = 0,  // a build never finished
  kTreeClean = 1,     // nodes describe the array with identity `array`
  kTreeUpdating = 2,  // an update batch began and did not end
  kTreeRetired = 3,   // replaced by a rebuilt file: readers reopen the path
};

}  // namespace momenta
