// The one place that chooses a moment buffer's kind (tree/moment_buffer.h):
// from the tree's header when opening, from the options when building. The
// facade holds whatever these return and asks it, never the kind.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "buffers/tree/moment_buffer.h"
#include "buffers/tree/tree_options.h"

namespace momenta {

// Opens the buffer the tree's header names, its files beside the tree:
// kind hbb needs nothing more; kind ola maps the Ola file at `ola_path`
// (writable when `writable`). `require_clean`: it must be clean as of the
// tree's log sequence and identity. *why receives "" when the buffer is
// usable, else why it must be rebuilt (the buffer returned then answers no
// index moments of its own). Errors other than damage are returned.
Result<std::unique_ptr<MomentBuffer>> OpenMomentBuffer(const std::string& ola_path, const MomentTree& tree,
                                                       bool writable, uint64_t length, bool require_clean,
                                                       std::string* why);
// The buffer of kind `options` for `array` as of `sequence` and `identity`,
// built beside a fresh tree and renamed into place at `ola_path` (kind hbb:
// a file left there is removed). *stats (optional) is added the pass's reads
// and time. On failure nothing is left at `ola_path` but what was there.
Result<std::unique_ptr<MomentBuffer>> BuildMomentBuffer(const std::string& ola_path, ArrayFile& array,
                                                        const TreeOptions& options, uint64_t sequence,
                                                        const ArrayIdentity& identity, BuildStats* stats);
// Kind hbb's buffer (the tree alone), where nothing was opened yet.
std::unique_ptr<MomentBuffer> TreeAloneBuffer(const std::string& ola_path);

}  // namespace momenta
