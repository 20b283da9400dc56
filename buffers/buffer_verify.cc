// BufferedArray::Verify: every node of the buffer against a scratch tree
// built afresh from the array.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include "buffers/buffered_array_internal.h"
#include "buffers/tree/tree_seqlock.h"

namespace momenta {
namespace {

// Where the scratch tree goes: beside the buffer, or to $TMPDIR for a reader
// that may not write there (verify only reads the array and the buffer).
std::string ScratchTreePath(const std::string& sidecar, const std::string& tree_path) {
  const char* tmp = std::getenv("TMPDIR");
  const std::string beside =
      SidecarWritable(sidecar) ? tree_path : std::string(tmp && *tmp ? tmp : "/tmp") + "/momenta-tree";
  return beside + ".verify-" + std::to_string(::getpid());
}

// What differs between a stored node and the exact one, in a few words; ""
// when they agree. Tolerances: the moments' own scale (a few ulps of long
// double after a build; updates drift by ~N·2^-64, see moments.h):
//   |a − b| <= 1e-9 · max(|a|, |b|)   for the index moments and the mean,
//   |a − b| <= 1e-6 · max(|a|, |b|)   for the central sum of squares;
// extremes, exact sums and non-finite counts must be equal.
std::string NodeMismatch(const RangeSummary& stored, const RangeSummary& exact, int order) {
  for (int m = 0; m <= order; ++m) {
    const long double a = stored.index.moment(m), b = exact.index.moment(m);
    const long double scale = std::max(std::fabs(a), std::fabs(b));
    if (std::fabs(a - b) > 1e-9L * scale + 1e-300L) return "index moment " + std::to_string(m);
  }
  const long double va = stored.values.central_sum_of_squares(), vb = exact.values.central_sum_of_squares();
  if (std::fabs(va - vb) > 1e-6L * std::max(std::fabs(va), std::fabs(vb)) + 1e-12L) return "value variance term";
  if (exact.values.count() > 0) {
    const long double ma = stored.values.mean(), mb = exact.values.mean();
    if (std::fabs(ma - mb) > 1e-9L * std::max(std::fabs(ma), std::fabs(mb)) + 1e-300L) return "value mean";
  }
  if ((stored.extremes.min != exact.extremes.min || stored.extremes.max != exact.extremes.max) &&
      !(std::isnan(exact.extremes.min) && std::isnan(stored.extremes.min)))
    return "min/max";
  if (stored.exact_sum != exact.exact_sum) return "exact integer sum";
  if (!(stored.exact_sumsq == exact.exact_sumsq)) return "exact integer sum of squares";
  if (!(stored.nonfinite == exact.nonfinite)) return "NaN and infinity counts";
  return "";
}

// Counts a mismatch, keeping the first few lines.
void Report(VerifyReport& report, std::string line) {
  ++report.mismatches;
  if (report.examples.size() < 5) report.examples.push_back(std::move(line));
}

}  // namespace

Result<VerifyReport> VerifyBuffer(BufferState& s, const BuildProgress& progress) {
  const std::string scratch = ScratchTreePath(s.sidecar_, s.tree_path_);
  auto fresh =
      internal::BuildTreeFile(scratch, *s.array_, OptionsOfHeader(s.tree_->header()), s.options_.io, progress, nullptr);
  struct Remove {
    std::string path;
    ~Remove() { ::unlink(path.c_str()); }
  } remove{scratch};
  if (!fresh.ok()) return fresh.status();
  VerifyReport report;
  const TreeLayout& layout = s.tree_->layout();
  for (int level = 1; level <= layout.levels(); ++level) {
    for (uint64_t j = 0; j < layout.nodes(level); ++j) {
      ++report.nodes_checked;
      MomentTree::ParentMemo memo;
      if (Status check = s.tree_->VerifyNode(level, j, s.tree_->Node(level, j), &memo); !check.ok()) {
        Report(report, check.ToString());
        continue;
      }
      const std::string what = NodeMismatch(s.tree_->Summary(level, j), (*fresh)->Summary(level, j), s.tree_->order());
      if (!what.empty())
        Report(report, "level " + std::to_string(level) + " node " + std::to_string(j) + " (elements " +
                           std::to_string(layout.node_first(level, j)) + ":" +
                           std::to_string(layout.node_end(level, j)) + "): " + what);
    }
  }
  MOMENTA_RETURN_IF_ERROR(
      s.buffer_->Verify(*s.array_, &report.nodes_checked, [&](std::string line) { Report(report, std::move(line)); }));
  return report;
}

}  // namespace momenta
