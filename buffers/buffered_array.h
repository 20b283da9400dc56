// BufferedArray: the facade a program (and the CLI) uses — an array file and
// its moment buffer, kept consistent. It delegates: ArrayFile holds the
// elements, MomentTree the buffer, BuildTree fills it, SummarizeRange answers.
//
// Consistency: the buffer's header records the array's identity (device,
// inode, size, mtime, ctime) after every build and update batch, and a state
// flag that is "updating" while a batch is in progress. Open() rebuilds the
// buffer — with a notice — when it is missing, damaged, left mid-update, made
// for other parameters, or the array changed behind momenta's back; it never
// answers from a stale buffer.
//
// Not thread-safe. One writer per array (locking arrives with the update log).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "buffers/moment_tree.h"
#include "buffers/range_query.h"
#include "buffers/range_summary.h"
#include "buffers/tree_build.h"
#include "storage/array_file.h"
#include "storage/mapped_file.h"

namespace momenta {

struct BufferedArrayOptions {
  IoOptions io;               // io.writable: updates allowed
  TreeOptions tree;           // used whenever the buffer is (re)built
  BuildProgress progress;     // called during builds
};

// One scattered update: a[index] = value (value checked to fit the dtype).
struct IndexedValue {
  uint64_t index = 0;
  Value value;
};

// What Verify found.
struct VerifyReport {
  uint64_t nodes_checked = 0;
  uint64_t mismatches = 0;
  std::vector<std::string> examples;  // the first few mismatches, one line each
};

class BufferedArray {
 public:
  BufferedArray(const BufferedArray&) = delete;
  BufferedArray& operator=(const BufferedArray&) = delete;
  ~BufferedArray();

  // Opens `path` and its buffer "<path>.momenta/tree", building or rebuilding
  // the buffer when needed; each such event appends a one-line notice.
  static Result<std::unique_ptr<BufferedArray>> Open(const std::string& path,
                                                     const BufferedArrayOptions& options,
                                                     std::vector<std::string>* notices = nullptr);

  ArrayFile& array() { return *array_; }
  MomentTree& tree() { return *tree_; }
  const std::string& tree_path() const { return tree_path_; }
  uint64_t length() const { return array_->length(); }

  // The summary of [p, q). REQUIRES: p <= q <= length() (else OutOfRange)
  Result<RangeSummary> Summarize(uint64_t p, uint64_t q, bool need_extremes,
                                 QueryCost* cost = nullptr);

  // a[first + k] = values[k]: the array, then one node per level each.
  // Range and values are checked before anything changes.
  [[nodiscard]] Status Write(uint64_t first, std::span<const Value> values);
  // Scattered updates, applied in order (a later one to the same index wins).
  [[nodiscard]] Status Apply(std::span<const IndexedValue> updates);

  // Rebuilds the buffer from the array with `options` (e.g. another order).
  Result<BuildStats> Rebuild(const TreeOptions& options, const BuildProgress& progress = {});
  // Recomputes every node from the array into a scratch tree and compares.
  Result<VerifyReport> Verify(const BuildProgress& progress = {});

 private:
  BufferedArray(std::unique_ptr<ArrayFile> array, std::string tree_path, IoOptions io);

  Status CheckWritable() const;
  // Batch bracket: marks the buffer updating / records identity and clean.
  void BeginBatch();
  [[nodiscard]] Status EndBatch(uint64_t updates);
  // Applies a[index]: old -> new (raw element bytes) to every level.
  [[nodiscard]] Status ApplyToTree(uint64_t index, const char* old_bytes, const char* new_bytes);
  // Recomputes a leaf's summary from the array (after drift, or when an
  // extreme may have shrunk).
  [[nodiscard]] Status RefreshLeaf(uint64_t leaf);

  std::unique_ptr<ArrayFile> array_;
  std::unique_ptr<MomentTree> tree_;
  const std::string tree_path_;
  const IoOptions io_;
  // Maps the array writable for Apply (once).
  [[nodiscard]] Status MapArrayForUpdates();
  Status MappedAccessFailed(uint64_t index, bool writing) const;
  // Recomputes, bottom-up, the nodes queued in refresh_ and their ancestors.
  [[nodiscard]] Status FlushRefreshes();

  std::unique_ptr<MappedFile> array_map_;       // the array, writable, for Apply; null until used
  std::vector<std::vector<uint64_t>> refresh_;  // per level: nodes to recompute at batch end
  std::vector<char> leaf_scratch_;       // raw bytes of one leaf (extremes refresh)
  std::vector<double> leaf_doubles_;
};

}  // namespace momenta
