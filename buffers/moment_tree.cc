#include "buffers/moment_tree.h"

#include <algorithm>
#include <cstring>

namespace momenta {
namespace {

constexpr char kTreeMagic[8] = {'M', 'O', 'M', 'T', 'R', 'E', 'E', '\0'};
constexpr uint32_t kTreeVersion = 1;
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

}  // namespace

uint64_t ResolveRamBudget(uint64_t requested, uint64_t array_bytes) {
  if (requested != 0) return requested;
  return std::max<uint64_t>(kMinRamBudget, array_bytes >> 20);
}

TreeLayout LayoutOf(const TreeFileHeader& h) { return TreeLayout(ParamsOf(h)); }

MomentTree::MomentTree(std::unique_ptr<MappedFile> file, std::unique_ptr<IoBackend> io,
                       TreeLayout layout, int order)
    : file_(std::move(file)), io_(std::move(io)), layout_(std::move(layout)), codec_(order) {
  const uint64_t node_pages = layout_.total_nodes() * codec_.bytes() / kPage + 2;
  allocated_pages_.assign((node_pages + 63) / 64, 0);
}

MomentTree::~MomentTree() = default;

Result<std::unique_ptr<MomentTree>> MomentTree::Create(const std::string& path, ArrayFile& array,
                                                       const TreeOptions& options,
                                                       const IoOptions& io) {
  if (options.order < 0 || options.order > kMaxMomentOrder)
    return Status::InvalidArgument(path, "moment order must be 0.." + std::to_string(kMaxMomentOrder));
  if (options.fanout < 2) return Status::InvalidArgument(path, "fanout must be at least 2");
  TreeFileHeader h{};
  std::memcpy(h.magic, kTreeMagic, sizeof h.magic);
  h.version = kTreeVersion;
  h.state = kTreeBuilding;
  h.order = static_cast<uint32_t>(options.order);
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

  auto file = MappedFile::Create(path, FileBytes(layout, h.node_bytes), /*allocate_all=*/false);
  if (!file.ok()) return file.status();
  MOMENTA_RETURN_IF_ERROR((*file)->Allocate(0, kTreeHeaderBytes));
  std::memcpy((*file)->data(), &h, sizeof h);

  IoOptions tree_io = io;
  tree_io.writable = false;
  tree_io.direct = false;  // node reads must see the mapping's stores
  auto backend = OpenIoBackend(path, tree_io);
  if (!backend.ok()) return backend.status();
  return std::unique_ptr<MomentTree>(
      new MomentTree(std::move(file).value(), std::move(backend).value(), std::move(layout), options.order));
}

Result<std::unique_ptr<MomentTree>> MomentTree::Open(const std::string& path, bool writable,
                                                     const IoOptions& io) {
  auto file = MappedFile::Open(path, writable);
  if (!file.ok()) return file.status();
  if ((*file)->size() < kTreeHeaderBytes)
    return Status::Corruption(path, "too short for a moment-buffer header");
  TreeFileHeader h;
  std::memcpy(&h, (*file)->data(), sizeof h);
  if (std::memcmp(h.magic, kTreeMagic, sizeof h.magic) != 0)
    return Status::Corruption(path, "not a momenta moment buffer");
  if (h.version != kTreeVersion)
    return Status::NotSupported(path, "moment buffer version " + std::to_string(h.version));
  if (h.order > kMaxMomentOrder || h.fanout < 2 || h.dtype > static_cast<uint32_t>(DType::kU1) ||
      h.node_bytes != NodeCodec(static_cast<int>(h.order)).bytes() ||
      (h.length > 0 && h.leaf_span == 0))
    return Status::Corruption(path, "moment buffer header has impossible parameters");
  TreeLayout layout(ParamsOf(h));
  if ((*file)->size() != FileBytes(layout, h.node_bytes))
    return Status::Corruption(path, "size " + std::to_string((*file)->size()) +
                                        " does not match its parameters (expected " +
                                        std::to_string(FileBytes(layout, h.node_bytes)) + ")");
  IoOptions tree_io = io;
  tree_io.writable = false;
  tree_io.direct = false;
  auto backend = OpenIoBackend(path, tree_io);
  if (!backend.ok()) return backend.status();
  return std::unique_ptr<MomentTree>(new MomentTree(std::move(file).value(), std::move(backend).value(),
                                                    std::move(layout), static_cast<int>(h.order)));
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
  MOMENTA_RETURN_IF_ERROR(file_->Allocate(kTreeHeaderBytes + first_page * kPage,
                                          (last_page - first_page + 1) * kPage));
  for (uint64_t p = first_page; p <= last_page; ++p) allocated_pages_[p / 64] |= uint64_t{1} << (p % 64);
  return Status::OK();
}

uint64_t MomentTree::ram_tier_bytes() const {
  return layout_.ram_nodes() * codec_.bytes();
}

uint64_t MomentTree::disk_tier_bytes() const {
  return (layout_.total_nodes() - layout_.ram_nodes()) * codec_.bytes();
}

}  // namespace momenta
