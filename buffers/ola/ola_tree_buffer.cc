#include "buffers/ola/ola_tree_buffer.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace momenta {
namespace {

// A log record's raw element bytes (LogRecord::old_raw, new_raw), as stored.
const char* Raw(const uint64_t& raw) { return reinterpret_cast<const char*>(&raw); }

}  // namespace

void OlaTreeBuffer::Describe(BufferDescription* d) const {
  const OlaLayout& l = file_->layout();
  d->ola = BufferDescription::Ola{
      l.nodes(), l.max_order(), l.bin(), l.levels(), l.slots(), file_->file_bytes(), static_cast<double>(l.growth())};
}

bool OlaTreeBuffer::NamesFile(const std::string& message) const {
  return message.find(file_->path()) != std::string::npos;
}

Status OlaTreeBuffer::AddIndexMoments(const QueryIo& io, ArrayFile& array, std::span<const IndexRange> ranges,
                                      std::vector<RangeSummary>* out, std::vector<QueryCost>* costs,
                                      QueryCost* attempt) const {
  for (size_t k = 0; k < ranges.size(); ++k) {
    QueryCost ola_cost;
    MOMENTA_RETURN_IF_ERROR(IndexMoments(io, array, ranges[k].begin, ranges[k].end, &(*out)[k].index, &ola_cost));
    if (attempt) *attempt += ola_cost;  // each range's cells are one batch of their own
    if (costs) {
      (*costs)[k].array_bytes += ola_cost.array_bytes;
      (*costs)[k].tier_bytes += ola_cost.tier_bytes;
      (*costs)[k].requests += ola_cost.requests;
    }
  }
  return Status::OK();
}

Status OlaTreeBuffer::IndexMoments(const QueryIo& io, ArrayFile& array, uint64_t p, uint64_t q,
                                   momenta::IndexMoments* out, QueryCost* cost) const {
  // The slots the answer reads pass their checks, then the cells are read.
  const OlaBuffer& ola = file_->buffer();
  const std::vector<IndexRange> slots = ola.SlotsFor(p, q);
  MOMENTA_RETURN_IF_ERROR(file_->CheckSlots(slots));
  IoBackend& array_io = io.array ? *io.array : array.io();
  const std::vector<IndexRange> runs = ola.CellsFor(p, q);
  const size_t item = array.itemsize();
  std::vector<std::vector<char>> raw(runs.size());
  std::vector<ReadRequest> reads;
  for (size_t k = 0; k < runs.size(); ++k) {
    raw[k].resize(runs[k].size() * item);
    if (runs[k].size() > 0) reads.push_back({array.ByteOffset(runs[k].begin), raw[k].size(), raw[k].data()});
  }
  MOMENTA_RETURN_IF_ERROR(array_io.ReadBatch(reads));
  if (cost) {
    *cost = QueryCost{};
    for (const ReadRequest& r : reads) cost->array_bytes += r.length;
    for (const IndexRange& s : slots) cost->tier_bytes += s.size() * sizeof(double);
    cost->requests = reads.size();
  }
  std::vector<std::vector<double>> cells(runs.size());
  std::vector<std::span<const double>> views(runs.size());
  for (size_t k = 0; k < runs.size(); ++k) {
    cells[k].resize(runs[k].size());
    DecodeDoubles(array.dtype(), raw[k].data(), cells[k].size(), cells[k].data());
    views[k] = cells[k];
  }
  *out = ola.Answer(p, q, views);
  return Status::OK();
}

Status OlaTreeBuffer::CheckValue(const ArrayFile& array, uint64_t index, const Value& value) const {
  if (value.kind != Value::Kind::kFloat || std::isfinite(value.f)) return Status::OK();
  return Status::InvalidArgument(array.path(), "value '" + FormatValue(value) + "' at index " + std::to_string(index) +
                                                   " is not finite: the Ola buffer holds finite values only "
                                                   "(the default buffer, --buffer hbb, counts them apart)");
}

Status OlaTreeBuffer::Update(DType dtype, const LogRecord& r) {
  return file_->Update(r.index, DecodeDouble(dtype, Raw(r.old_raw)), DecodeDouble(dtype, Raw(r.new_raw)));
}

std::string OlaTreeBuffer::ReplayableFor(uint64_t sequence) const {
  return file_->ReplayableFor(sequence, /*tree_updating=*/true);
}

void OlaTreeBuffer::Touched(DType dtype, const LogRecord& r) {
  file_->Touch(r.index);
  file_->Held(DecodeDouble(dtype, Raw(r.new_raw)));
}

Status OlaTreeBuffer::Recompute(DType dtype, const LogRecord& r, const OlaBuffer::CellReader& read) {
  file_->Held(DecodeDouble(dtype, Raw(r.new_raw)));
  return file_->Recompute(r.index, read);
}

// Every block's check, then every slot against a fresh build, to within the
// rounding updates may have added (OLA.md: K updates touching a slot move it
// by at most K·2^-53 of the largest value it held), with S the largest |slot|
// of the fresh build:
//   |stored − fresh| <= 1e-9 · max(|stored|, |fresh|, 1e-3 · S)
Status OlaTreeBuffer::Verify(ArrayFile& array, uint64_t* checked,
                             const std::function<void(std::string)>& mismatch) const {
  const std::string scratch = file_->path() + ".verify-" + std::to_string(::getpid());
  struct Remove {
    std::string path;
    ~Remove() { ::unlink(path.c_str()); }
  } remove{scratch};
  const OlaLayout& layout = file_->layout();
  auto fresh = OlaFile::Build(scratch, array, OlaFileOptions(layout.nodes(), layout.bin()), 0, ArrayIdentity{});
  if (!fresh.ok()) return fresh.status();
  const std::span<const double> stored = file_->buffer().slots(), exact = (*fresh)->buffer().slots();
  const IndexRange all{0, stored.size()};
  if (Status s = file_->CheckSlots({&all, 1}); !s.ok()) mismatch(s.ToString());
  long double scale = 0;
  for (double v : exact) scale = std::max(scale, std::fabs(static_cast<long double>(v)));
  for (uint64_t s = 0; s < stored.size(); ++s) {
    ++*checked;
    const long double a = stored[s], b = exact[s];
    const long double tolerance = 1e-9L * std::max({std::fabs(a), std::fabs(b), scale * 1e-3L});
    if (!(std::fabs(a - b) <= tolerance))
      mismatch(file_->path() + ": slot " + std::to_string(s) + " holds " + std::to_string(static_cast<double>(a)) +
               ", the array gives " + std::to_string(static_cast<double>(b)));
  }
  return Status::OK();
}

}  // namespace momenta
