#include "buffers/tree/moment_tree.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

namespace momenta {
namespace {

constexpr char kTreeMagic[8] = {'M', 'O', 'M', 'T', 'R', 'E', 'E', '\0'};
constexpr uint32_t kTreeVersion = 4;  // what Create writes
// Formats 2 and 3 (nodes without the exact sum of squares) are refused, as
// format 1 is: a buffer is derived data, rebuilt from its array in one pass
// (a sidecar's owner does so on open), and reading them would need a second
// node layout in every decoding and update path.
constexpr uint32_t kOldestTreeVersion = 4;
constexpr uint64_t kPage = 4096;

TreeLayoutParams ParamsOf(const TreeFileHeader& h) {
  TreeLayoutParams p;
  p.length = h.length;
  p.node_bytes = h.node_bytes;
  p.ram_budget = h.ram_budget;
  p.fanout = h.fanout;
  p.disk_tier = h.disk_tier != 0;
  p.leaf_span = h.leaf_span;
  p.itemsize = DTypeSize(static_cast<DType>(h.dtype));
  return p;
}

uint64_t FileBytes(const TreeLayout& layout, uint64_t node_bytes) {
  return kTreeHeaderBytes + layout.total_nodes() * node_bytes;
}

std::string U(uint64_t v) { return std::to_string(v); }

// Every check of a header that needs no layout: Corruption naming the field.
Status CheckHeader(const std::string& path, const TreeFileHeader& h, const char* page) {
  if (std::memcmp(h.magic, kTreeMagic, sizeof h.magic) != 0)
    return Status::Corruption(path, "not a momenta moment buffer (header field magic)");
  if (h.version == 1)
    return Status::NotSupported(path, "moment buffer format version 1 (before NaN counts and node checks)");
  if (h.version == 2 || h.version == 3)
    return Status::NotSupported(path, "moment buffer format version " + U(h.version) +
                                          " (before exact integer sums of squares): run `momenta build` to rebuild it");
  if (h.version < kOldestTreeVersion || h.version > kTreeVersion)
    return Status::NotSupported(path, "moment buffer format version " + U(h.version) + " (this momenta reads " +
                                          U(kOldestTreeVersion) + ".." + U(kTreeVersion) + ")");
  if (h.params_crc != ParamsCrc(h))
    return Status::Corruption(path,
                              "moment buffer header fails its check (params_crc: magic, version, order, "
                              "fanout, leaf_span, ram_budget, disk_tier, node_bytes, length or dtype "
                              "changed, or params_crc itself)");
  auto bad = [&](const char* field, uint64_t value, const std::string& why) {
    return Status::Corruption(path, std::string("header field ") + field + " " + U(value) + " " + why);
  };
  if (h.order > kMaxMomentOrder) return bad("order", h.order, "is above " + U(kMaxMomentOrder));
  if (h.fanout < 2 || h.fanout > kMaxFanout) return bad("fanout", h.fanout, "is not 2.." + U(kMaxFanout));
  if (h.dtype > static_cast<uint32_t>(DType::kU1)) return bad("dtype", h.dtype, "is not a dtype");
  if (h.node_bytes != NodeCodec(static_cast<int>(h.order)).bytes())
    return bad("node_bytes", h.node_bytes,
               "does not match order " + U(h.order) + " (" + U(NodeCodec(static_cast<int>(h.order)).bytes()) + ")");
  if (h.length >= (uint64_t{1} << 62)) return bad("length", h.length, "is too large");
  if (h.length > 0 && h.leaf_span == 0) return bad("leaf_span", h.leaf_span, "is 0");
  if (h.disk_tier > 1) return bad("disk_tier", h.disk_tier, "is not 0 or 1");
  if (h.ram_budget == 0) return bad("ram_budget", h.ram_budget, "is 0");
  if (h.ola_nodes != 0 && (h.ola_nodes % 2 != 0 || h.ola_nodes > kOlaMaxNodes))
    return bad("ola_nodes", h.ola_nodes, "is not 0 or an even number of nodes up to 8");
  if ((h.ola_nodes == 0) != (h.ola_bin == 0) || h.ola_bin == 1)
    return bad("ola_bin", h.ola_bin, "does not match ola_nodes " + U(h.ola_nodes));
  if (h.state > kTreeRetired) return bad("state", h.state, "is not a state");
  for (uint64_t k = sizeof(TreeFileHeader); k < kTreeHeaderBytes; ++k)
    if (page[k] != 0) return bad("padding byte", k, "is not 0");
  if (h.state == kTreeClean) {
    if (h.write_epoch % 2 != 0) return bad("write_epoch", h.write_epoch, "is odd in a clean buffer");
    if (h.clean_crc != SealedHeaderCrc(h))
      return Status::Corruption(path,
                                "moment buffer header fails its check (clean_crc: state, array identity, "
                                "log_sequence, checkpoint_sequence, write_epoch, top_mask or "
                                "updates_since_build changed)");
  }
  return Status::OK();
}

}  // namespace

uint64_t ResolveRamBudget(uint64_t requested, uint64_t array_bytes) {
  if (requested != 0) return requested;
  return std::max<uint64_t>(kMinRamBudget, array_bytes >> 20);
}

TreeLayout LayoutOf(const TreeFileHeader& h) { return TreeLayout(ParamsOf(h)); }

MomentTree::MomentTree(std::unique_ptr<MappedFile> file, std::unique_ptr<IoBackend> io, TreeLayout layout, int order,
                       bool bind_slot)
    : file_(std::move(file)),
      io_(std::move(io)),
      layout_(std::move(layout)),
      codec_(order, bind_slot),
      verified_(layout_.total_nodes()) {
  const uint64_t node_pages = layout_.total_nodes() * codec_.bytes() / kPage + 2;
  allocated_pages_.assign((node_pages + 63) / 64, 0);
}

MomentTree::~MomentTree() = default;

Result<std::unique_ptr<MomentTree>> MomentTree::Create(const std::string& path, ArrayFile& array,
                                                       const TreeOptions& options, const IoOptions& io) {
  if (options.order < 0 || options.order > kMaxMomentOrder)
    return Status::InvalidArgument(path, "moment order must be 0.." + std::to_string(kMaxMomentOrder));
  if (options.fanout < 2 || options.fanout > kMaxFanout)
    return Status::InvalidArgument(path, "fanout must be 2.." + std::to_string(kMaxFanout));
  TreeFileHeader h{};
  std::memcpy(h.magic, kTreeMagic, sizeof h.magic);
  h.version = kTreeVersion;
  h.state = kTreeBuilding;
  h.order = static_cast<uint32_t>(options.order);
  h.ola_nodes = static_cast<uint32_t>(options.ola_nodes);
  h.ola_bin = options.ola_nodes > 0 ? static_cast<uint32_t>(options.ola_bin) : 0;
  h.fanout = options.fanout;
  h.ram_budget = ResolveRamBudget(options.ram_budget, array.length() * array.itemsize());
  h.disk_tier = options.disk_tier ? 1 : 0;
  h.node_bytes = static_cast<uint32_t>(NodeCodec(options.order).bytes());
  h.length = array.length();
  h.dtype = static_cast<uint32_t>(array.dtype());
  TreeLayoutParams params = ParamsOf(h);
  params.leaf_span = options.leaf_span;
  TreeLayout layout(params);
  h.leaf_span = layout.leaf_span();  // the resolved default
  h.params_crc = ParamsCrc(h);

  auto file = MappedFile::Create(path, FileBytes(layout, h.node_bytes), /*allocate_all=*/false);
  if (!file.ok()) return file.status();
  MOMENTA_RETURN_IF_ERROR((*file)->Allocate(0, kTreeHeaderBytes));
  std::memcpy((*file)->data(), &h, sizeof h);

  IoOptions tree_io = io;
  tree_io.writable = false;
  tree_io.direct = false;  // node reads must see the mapping's stores
  auto backend = OpenIoBackend(path, tree_io);
  if (!backend.ok()) return backend.status();
  return std::unique_ptr<MomentTree>(new MomentTree(std::move(file).value(), std::move(backend).value(),
                                                    std::move(layout), options.order, /*bind_slot=*/true));
}

Result<std::unique_ptr<MomentTree>> MomentTree::Open(const std::string& path, bool writable, const IoOptions& io) {
  auto file = MappedFile::Open(path, writable);
  if (!file.ok()) return file.status();
  if ((*file)->size() < kTreeHeaderBytes) return Status::Corruption(path, "too short for a moment-buffer header");
  // A live writer may change the header while it is copied (a checkpoint
  // seals it, then marks it clean): a copy that fails its check while the
  // header is still moving is taken again.
  TreeFileHeader h;
  Status check;
  for (int attempt = 0; attempt < 8; ++attempt) {
    std::memcpy(&h, (*file)->data(), sizeof h);
    check = CheckHeader(path, h, (*file)->data());
    if (check.ok() || check.code() != Status::Code::kCorruption) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (std::memcmp(&h, (*file)->data(), sizeof h) == 0) break;  // it holds still: damage
  }
  MOMENTA_RETURN_IF_ERROR(check);
  TreeLayout layout(ParamsOf(h));
  if (layout.leaf_span() != h.leaf_span)
    return Status::Corruption(path, "header field leaf_span " + std::to_string(h.leaf_span) +
                                        " is not the one its parameters give (" + std::to_string(layout.leaf_span()) +
                                        ")");
  if ((*file)->size() != FileBytes(layout, h.node_bytes))
    return Status::Corruption(path, "size " + std::to_string((*file)->size()) +
                                        " does not match its parameters (expected " +
                                        std::to_string(FileBytes(layout, h.node_bytes)) + ")");
  if (layout.levels() > 0 && layout.nodes(layout.levels()) < 64 && (h.top_mask >> layout.nodes(layout.levels())) != 0)
    return Status::Corruption(path, "header field top_mask names top-level nodes that do not exist");
  IoOptions tree_io = io;
  tree_io.writable = false;
  tree_io.direct = false;
  auto backend = OpenIoBackend(path, tree_io);
  if (!backend.ok()) return backend.status();
  std::unique_ptr<MomentTree> tree(new MomentTree(std::move(file).value(), std::move(backend).value(),
                                                  std::move(layout), static_cast<int>(h.order),
                                                  /*bind_slot=*/true));
  // The RAM tier is read in one batch now rather than faulted in a page at
  // a time by the first queries (it is what every query touches).
  if (tree->layout_.levels() > 0 && tree->layout_.ram_nodes() > 0)
    tree->file_->Populate(tree->NodeOffset(tree->layout_.ram_from(), 0), tree->ram_tier_bytes());
  return tree;
}

Status MomentTree::FlushHeader() {
  if (header().state == kTreeClean) SealHeader();
  return file_->Flush(0, kTreeHeaderBytes);
}

void MomentTree::SealHeader() { header().clean_crc = SealedHeaderCrc(header()); }

void MomentTree::MarkClean() {
  SealHeader();
  std::atomic_ref<uint32_t>(header().state).store(kTreeClean, std::memory_order_release);
}

Status MomentTree::VerifyNode(int level, uint64_t j, const double* node, ParentMemo* memo) const {
  auto damaged = [&](const std::string& what) {
    return Status::Corruption(
        path(), what + ": node " + std::to_string(j) + " of level " + std::to_string(level) + " fails its check");
  };
  switch (codec_.Classify(Slot(level, j), node)) {
    case NodeCodec::NodeState::kWritten:
      return Status::OK();
    case NodeCodec::NodeState::kDamaged:
      return damaged("moment buffer damaged (bytes do not match the node's check)");
    case NodeCodec::NodeState::kHole:
      break;
  }
  // A hole stands for zeros only if it was never written.
  uint64_t mask;
  if (level == layout_.levels()) {
    mask = header().top_mask;
  } else {
    const uint64_t parent = j / layout_.fanout();
    if (memo && memo->level == level + 1 && memo->index == parent) {
      mask = memo->mask;
    } else {
      const double* p = Node(level + 1, parent);
      MOMENTA_RETURN_IF_ERROR(VerifyNode(level + 1, parent, p));
      mask = codec_.ChildrenMask(p);
      if (memo) *memo = ParentMemo{level + 1, parent, mask};
    }
  }
  if ((mask >> (j % layout_.fanout())) & 1)
    return damaged("moment buffer damaged (zeroed, though its parent records it written)");
  return Status::OK();
}

uint64_t MomentTree::ReadEpoch() const {
  // atomic_ref needs a non-const object; the load does not store.
  auto& epoch = const_cast<uint64_t&>(header().write_epoch);
  return std::atomic_ref<uint64_t>(epoch).load(std::memory_order_acquire);
}

Status MomentTree::MarkWritten(int level, uint64_t j) {
  if (level == layout_.levels()) {
    header().top_mask |= uint64_t{1} << j;
    return Status::OK();
  }
  const uint64_t parent = j / layout_.fanout();
  MOMENTA_RETURN_IF_ERROR(AllocateNodes(level + 1, parent, 1));
  codec_.SetChild(Node(level + 1, parent), static_cast<uint32_t>(j % layout_.fanout()));
  return Status::OK();
}

Status MomentTree::AllocateNodes(int level, uint64_t first, uint64_t count) {
  if (count == 0) return Status::OK();
  const uint64_t begin = NodeOffset(level, first);
  const uint64_t end = begin + count * codec_.bytes();
  const uint64_t first_page = (begin - kTreeHeaderBytes) / kPage;
  const uint64_t last_page = (end - 1 - kTreeHeaderBytes) / kPage;
  bool all_known = true;
  for (uint64_t p = first_page; p <= last_page && all_known; ++p)
    all_known = (allocated_pages_[p / 64] >> (p % 64)) & 1;
  if (all_known) return Status::OK();
  MOMENTA_RETURN_IF_ERROR(file_->Allocate(kTreeHeaderBytes + first_page * kPage, (last_page - first_page + 1) * kPage));
  for (uint64_t p = first_page; p <= last_page; ++p) allocated_pages_[p / 64] |= uint64_t{1} << (p % 64);
  return Status::OK();
}

void MomentTree::FetchNodes(int level, uint64_t first, uint64_t count, IndexSet* asked) {
  if (count == 0) return;
  const uint64_t begin = NodeOffset(level, first) / kPage;
  const uint64_t end = (NodeOffset(level, first + count - 1) + codec_.bytes() - 1) / kPage;  // inclusive
  for (uint64_t p = begin; p <= end; ++p)
    if (asked->insert(p)) file_->Prefetch(p * kPage, kPage);
}

uint64_t MomentTree::ram_tier_bytes() const { return layout_.ram_nodes() * codec_.bytes(); }

uint64_t MomentTree::disk_tier_bytes() const { return (layout_.total_nodes() - layout_.ram_nodes()) * codec_.bytes(); }

}  // namespace momenta
