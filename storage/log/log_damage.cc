#include "storage/log/log_damage.h"

namespace momenta {

namespace {

std::string Plural(uint64_t n, const char* word) { return std::to_string(n) + " " + word + (n == 1 ? "" : "s"); }

}  // namespace

std::string LogDamage::ToString() const {
  std::string out = segment + ": ";
  switch (kind) {
    case Kind::kTornTail:
      out += "torn tail of " + Plural(bytes, "byte") + " at offset " + std::to_string(offset) + (cut ? " cut" : "") +
             " (" + problem + ")";
      break;
    case Kind::kCorruptFrames:
      out += Plural(bytes, "corrupt byte") + " at offset " + std::to_string(offset) + " skipped (" + problem + ")";
      break;
    case Kind::kBadSegment:
      out += std::string(cut ? "segment removed" : "segment skipped") + " (" + problem + ")";
      break;
    case Kind::kMissingRecords:
      out += "records missing before offset " + std::to_string(offset);
      if (!problem.empty() && problem != "sequence gap") out += " (" + problem + ")";
      break;
    case Kind::kMissingEnd:
      out += "records missing at the end of the log (" + problem + ")";
      break;
    case Kind::kBadMark:
      return out + problem + "; sequence numbers of lost records cannot be told";
    case Kind::kOutOfPlace:
      return out +
             (records_skipped == 1 ? "record " + std::to_string(first_skipped)
                                   : "records " + std::to_string(first_skipped) + ".." +
                                         std::to_string(first_skipped + records_skipped - 1)) +
             " at offset " + std::to_string(offset) + " out of place (" + problem + ": sequence " +
             std::to_string(after) + " was read before) " +
             (returned ? "returned where it lies (so the loss reported before it is not one)" : "skipped") +
             ", kept in the file";
    case Kind::kUnusedSequences:
      return out + Plural(records_lost.value_or(0), "sequence") + " " + std::to_string(first_lost) + ".." +
             std::to_string(first_lost + records_lost.value_or(0) - 1) + " not reused (" + problem + ")";
  }
  if (!records_lost) {
    if (kind != Kind::kBadSegment) out += "; records lost: unknown";
  } else if (*records_lost == 0) {
    out += "; no record lost";
  } else {
    out += "; " + Plural(*records_lost, "record") + " lost";
    if (first_lost > 0) {
      out += *records_lost == 1 ? " (sequence " + std::to_string(first_lost) + ")"
                                : " (sequences " + std::to_string(first_lost) + ".." +
                                      std::to_string(first_lost + *records_lost - 1) + ")";
    }
  }
  return out;
}

}  // namespace momenta
