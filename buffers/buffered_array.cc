#include "buffers/buffered_array.h"

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "storage/fault_guard.h"

namespace momenta {
namespace {

// Why the buffer at tree_path cannot be used for `array`, or "" when it can.
std::string StaleReason(MomentTree& tree, ArrayFile& array, const ArrayIdentity& identity) {
  const TreeFileHeader& h = tree.header();
  if (h.state == kTreeBuilding) return "its last build did not finish";
  if (h.state == kTreeUpdating) return "an update was interrupted";
  if (h.state != kTreeClean) return "its state is unknown";
  if (h.length != array.length() || h.dtype != static_cast<uint32_t>(array.dtype()))
    return "it was built for another array shape or dtype";
  if (!(h.array == identity)) return "the array changed since the buffer was last updated";
  return "";
}

// The tree options recorded in a header (to rebuild with the same ones).
TreeOptions OptionsOf(const TreeFileHeader& h) {
  TreeOptions o;
  o.order = static_cast<int>(h.order);
  o.ram_budget = h.ram_budget;
  o.disk_tier = h.disk_tier != 0;
  o.fanout = h.fanout;
  o.leaf_span = h.leaf_span;
  return o;
}

Result<std::unique_ptr<MomentTree>> BuildInto(const std::string& tree_path, ArrayFile& array,
                                              const TreeOptions& options, const IoOptions& io,
                                              const BuildProgress& progress, BuildStats* stats) {
  auto tree = MomentTree::Create(tree_path, array, options, io);
  if (!tree.ok()) return tree.status();
  auto built = BuildTree(array, **tree, progress);
  if (!built.ok()) return built.status();
  if (stats) *stats = *built;
  auto identity = IdentityOf(array.path());
  if (!identity.ok()) return identity.status();
  (*tree)->header().array = *identity;
  (*tree)->header().updates_since_build = 0;
  MOMENTA_RETURN_IF_ERROR((*tree)->Flush());
  (*tree)->header().state = kTreeClean;
  MOMENTA_RETURN_IF_ERROR((*tree)->Flush());
  return tree;
}

}  // namespace

BufferedArray::BufferedArray(std::unique_ptr<ArrayFile> array, std::string tree_path, IoOptions io)
    : array_(std::move(array)), tree_path_(std::move(tree_path)), io_(io) {}

BufferedArray::~BufferedArray() = default;

Result<std::unique_ptr<BufferedArray>> BufferedArray::Open(const std::string& path,
                                                           const BufferedArrayOptions& options,
                                                           std::vector<std::string>* notices) {
  std::string notice;
  auto array = ArrayFile::Open(path, options.io, &notice);
  if (!array.ok()) return array.status();
  if (notices && !notice.empty()) notices->push_back(notice);
  const std::string sidecar = SidecarPath(path);
  std::error_code ec;
  std::filesystem::create_directory(sidecar, ec);
  if (ec) return Status::IOError(sidecar, ec.message());
  std::unique_ptr<BufferedArray> self(
      new BufferedArray(std::move(array).value(), sidecar + "/tree", options.io));
  ArrayFile& a = *self->array_;
  auto identity = IdentityOf(path);
  if (!identity.ok()) return identity.status();

  std::string reason;
  TreeOptions build_options = options.tree;
  if (::access(self->tree_path_.c_str(), F_OK) != 0) {
    reason = "";  // first use: build quietly unless there is data to read
  } else {
    auto tree = MomentTree::Open(self->tree_path_, /*writable=*/true, options.io);
    if (!tree.ok()) {
      reason = tree.status().ToString();
    } else {
      reason = StaleReason(**tree, a, *identity);
      if (reason.empty()) {
        self->tree_ = std::move(tree).value();
        return self;
      }
      build_options = OptionsOf((*tree)->header());
    }
    if (notices) notices->push_back("rebuilding the moment buffer of " + path + ": " + reason);
  }
  BuildStats stats;
  auto tree = BuildInto(self->tree_path_, a, build_options, options.io, options.progress, &stats);
  if (!tree.ok()) return tree.status();
  self->tree_ = std::move(tree).value();
  return self;
}

Result<RangeSummary> BufferedArray::Summarize(uint64_t p, uint64_t q, bool need_extremes,
                                              QueryCost* cost) {
  if (p > q || q > array_->length())
    return Status::OutOfRange(array_->path(), "range " + std::to_string(p) + ":" + std::to_string(q) +
                                                  " is outside the array (length " +
                                                  std::to_string(array_->length()) + ")");
  return SummarizeRange(*tree_, *array_, p, q, need_extremes, cost);
}

void BufferedArray::BeginBatch() {
  tree_->header().state = kTreeUpdating;
  refresh_.assign(tree_->layout().levels() + 1, {});
}

Status BufferedArray::EndBatch(uint64_t updates) {
  MOMENTA_RETURN_IF_ERROR(FlushRefreshes());
  auto identity = IdentityOf(array_->path());
  if (!identity.ok()) return identity.status();
  TreeFileHeader& h = tree_->header();
  h.array = *identity;
  h.updates_since_build += updates;
  h.state = kTreeClean;
  return Status::OK();
}

Status BufferedArray::RefreshLeaf(uint64_t leaf) {
  const TreeLayout& layout = tree_->layout();
  const uint64_t first = layout.node_first(1, leaf);
  const uint64_t n = layout.node_end(1, leaf) - first;
  leaf_scratch_.resize(n * array_->itemsize());
  leaf_doubles_.resize(n);
  MOMENTA_RETURN_IF_ERROR(array_->ReadRaw(first, n, leaf_scratch_.data()));
  const RangeSummary fresh =
      RangeSummary::OfElements(tree_->order(), array_->dtype(), leaf_scratch_.data(), n, leaf_doubles_.data());
  tree_->codec().Encode(fresh, tree_->Node(1, leaf));
  return Status::OK();
}

Status BufferedArray::ApplyToTree(uint64_t index, const char* old_bytes, const char* new_bytes) {
  const DType t = array_->dtype();
  const double old_value = DecodeDouble(t, old_bytes);
  const double new_value = DecodeDouble(t, new_bytes);
  Int128 exact_delta = 0;
  if (DTypeIsInteger(t)) {
    const Value o = DecodeValue(t, old_bytes), n = DecodeValue(t, new_bytes);
    auto wide = [](const Value& v) -> Int128 {
      return v.kind == Value::Kind::kUInt ? static_cast<Int128>(v.u) : static_cast<Int128>(v.i);
    };
    exact_delta = wide(n) - wide(o);
  }
  const TreeLayout& layout = tree_->layout();
  const NodeCodec& codec = tree_->codec();
  for (int level = 1; level <= layout.levels(); ++level) {
    const uint64_t j = layout.NodeOf(level, index);
    const uint64_t first = layout.node_first(level, j);
    const uint64_t count = layout.node_end(level, j) - first;
    MOMENTA_RETURN_IF_ERROR(tree_->AllocateNodes(level, j, 1));
    const NodeCodec::UpdateOutcome outcome =
        codec.ApplyUpdate(tree_->Node(level, j), count, index - first, old_value, new_value, exact_delta);
    // Drift past the limit, or an extreme that may have shrunk: recompute the
    // node from data when the batch ends (the array may already hold later
    // values of this batch that the tree has not seen yet).
    if (outcome.drifted || outcome.extremes_may_shrink) refresh_[level].push_back(j);
  }
  return Status::OK();
}

Status BufferedArray::FlushRefreshes() {
  const TreeLayout& layout = tree_->layout();
  for (int level = 1; level <= layout.levels(); ++level) {
    std::vector<uint64_t>& nodes = refresh_[level];
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    for (uint64_t j : nodes) {
      MOMENTA_RETURN_IF_ERROR(level == 1 ? RefreshLeaf(j) : RecomputeFromChildren(*tree_, level, j));
      if (level < layout.levels()) refresh_[level + 1].push_back(j / layout.fanout());
    }
    nodes.clear();
  }
  return Status::OK();
}

Status BufferedArray::CheckWritable() const {
  if (io_.writable) return Status::OK();
  return Status::InvalidArgument(array_->path(), "opened read-only; updates need a writable open");
}

Status BufferedArray::Write(uint64_t first, std::span<const Value> values) {
  MOMENTA_RETURN_IF_ERROR(CheckWritable());
  MOMENTA_RETURN_IF_ERROR(array_->CheckRange(first, values.size()));
  const DType t = array_->dtype();
  const size_t item = array_->itemsize();
  for (const Value& v : values)
    if (!ValueFits(t, v))
      return Status::InvalidArgument(array_->path(), "value '" + FormatValue(v) +
                                                         "' does not fit dtype " + std::string(DTypeName(t)));
  std::vector<char> old_bytes(values.size() * item), new_bytes(values.size() * item);
  MOMENTA_RETURN_IF_ERROR(array_->ReadRaw(first, values.size(), old_bytes.data()));
  for (size_t k = 0; k < values.size(); ++k) EncodeValue(t, values[k], new_bytes.data() + k * item);
  BeginBatch();
  if (Status s = array_->WriteRaw(first, values.size(), new_bytes.data()); !s.ok()) {
    tree_->header().state = kTreeClean;  // nothing changed (blocks are reserved before writing)
    return s;
  }
  for (size_t k = 0; k < values.size(); ++k) {
    if (std::memcmp(old_bytes.data() + k * item, new_bytes.data() + k * item, item) == 0) continue;
    MOMENTA_RETURN_IF_ERROR(ApplyToTree(first + k, old_bytes.data() + k * item, new_bytes.data() + k * item));
  }
  return EndBatch(values.size());
}

Status BufferedArray::MapArrayForUpdates() {
  if (array_map_) return Status::OK();
  InstallFaultGuard();
  auto map = MappedFile::Open(array_->path(), /*writable=*/true);
  if (!map.ok()) return map.status();
  if ((*map)->size() < array_->ByteOffset(array_->length()))
    return Status::IOError(array_->path(), "file is shorter than its header says (it shrank?)");
  array_map_ = std::move(map).value();
  return Status::OK();
}

Status BufferedArray::MappedAccessFailed(uint64_t index, bool writing) const {
  struct statvfs fs;
  const bool full = ::statvfs(array_->path().c_str(), &fs) == 0 && fs.f_bavail == 0;
  if (full) return Status::FromErrno(array_->path(), ENOSPC);
  return Status::IOError(array_->path(), std::string("cannot ") + (writing ? "write" : "read") +
                                             " element " + std::to_string(index) +
                                             " (the file shrank, or the disk is full)");
}

Status BufferedArray::Apply(std::span<const IndexedValue> updates) {
  MOMENTA_RETURN_IF_ERROR(CheckWritable());
  const DType t = array_->dtype();
  const size_t item = array_->itemsize();
  for (const IndexedValue& u : updates) {
    MOMENTA_RETURN_IF_ERROR(array_->CheckRange(u.index, 1));
    if (!ValueFits(t, u.value))
      return Status::InvalidArgument(array_->path(), "value '" + FormatValue(u.value) +
                                                         "' does not fit dtype " + std::string(DTypeName(t)));
  }
  // Scattered single elements go through a shared writable mapping: no system
  // call per update. A fault (file truncated under us, or a store into a hole
  // on a full disk) is caught and reported; updates before it stay applied to
  // both the array and the buffer.
  MOMENTA_RETURN_IF_ERROR(MapArrayForUpdates());
  char* const base = array_map_->data();
  BeginBatch();
  char old_bytes[8], new_bytes[8];
  uint64_t applied = 0;
  for (const IndexedValue& u : updates) {
    char* element = base + array_->ByteOffset(u.index);
    if (!GuardedCopy(old_bytes, element, item)) {
      MOMENTA_RETURN_IF_ERROR(EndBatch(applied));
      return MappedAccessFailed(u.index, /*writing=*/false);
    }
    EncodeValue(t, u.value, new_bytes);
    if (std::memcmp(old_bytes, new_bytes, item) == 0) continue;
    if (!GuardedCopy(element, new_bytes, item)) {
      MOMENTA_RETURN_IF_ERROR(EndBatch(applied));
      return MappedAccessFailed(u.index, /*writing=*/true);
    }
    MOMENTA_RETURN_IF_ERROR(ApplyToTree(u.index, old_bytes, new_bytes));
    ++applied;
  }
  return EndBatch(applied);
}

Result<BuildStats> BufferedArray::Rebuild(const TreeOptions& options, const BuildProgress& progress) {
  tree_.reset();
  BuildStats stats;
  auto tree = BuildInto(tree_path_, *array_, options, io_, progress, &stats);
  if (!tree.ok()) return tree.status();
  tree_ = std::move(tree).value();
  return stats;
}

Result<VerifyReport> BufferedArray::Verify(const BuildProgress& progress) {
  const std::string scratch = tree_path_ + ".verify";
  auto fresh = BuildInto(scratch, *array_, OptionsOf(tree_->header()), io_, progress, nullptr);
  struct Remove {
    std::string path;
    ~Remove() { ::unlink(path.c_str()); }
  } remove{scratch};
  if (!fresh.ok()) return fresh.status();
  VerifyReport report;
  const TreeLayout& layout = tree_->layout();
  const int order = tree_->order();
  for (int level = 1; level <= layout.levels(); ++level) {
    for (uint64_t j = 0; j < layout.nodes(level); ++j) {
      ++report.nodes_checked;
      const RangeSummary stored = tree_->Summary(level, j);
      const RangeSummary exact = (*fresh)->Summary(level, j);
      // Tolerances: the moments' own scale (a few ulps of long double would
      // do after a build; updates drift by ~N·2^-64, see moments.h).
      std::string what;
      for (int m = 0; m <= order && what.empty(); ++m) {
        const long double a = stored.index.moment(m), b = exact.index.moment(m);
        const long double scale = std::max(std::fabs(a), std::fabs(b));
        if (std::fabs(a - b) > 1e-9L * scale + 1e-300L) what = "index moment " + std::to_string(m);
      }
      const long double va = stored.values.central_sum_of_squares(), vb = exact.values.central_sum_of_squares();
      if (what.empty() && std::fabs(va - vb) > 1e-6L * std::max(std::fabs(va), std::fabs(vb)) + 1e-12L)
        what = "value variance term";
      if (what.empty() && exact.values.count() > 0) {
        const long double ma = stored.values.mean(), mb = exact.values.mean();
        if (std::fabs(ma - mb) > 1e-9L * std::max(std::fabs(ma), std::fabs(mb)) + 1e-300L) what = "value mean";
      }
      if (what.empty() && (stored.extremes.min != exact.extremes.min || stored.extremes.max != exact.extremes.max) &&
          !(std::isnan(exact.extremes.min) && std::isnan(stored.extremes.min)))
        what = "min/max";
      if (what.empty() && stored.exact_sum != exact.exact_sum) what = "exact integer sum";
      if (!what.empty()) {
        ++report.mismatches;
        if (report.examples.size() < 5)
          report.examples.push_back("level " + std::to_string(level) + " node " + std::to_string(j) +
                                    " (elements " + std::to_string(layout.node_first(level, j)) + ":" +
                                    std::to_string(layout.node_end(level, j)) + "): " + what);
      }
    }
  }
  return report;
}

}  // namespace momenta
