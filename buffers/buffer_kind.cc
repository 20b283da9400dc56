#include "buffers/buffer_kind.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>

#include "buffers/ola/ola_file.h"
#include "buffers/ola/ola_tree_buffer.h"
#include "buffers/tree/tree_buffer.h"

namespace momenta {

Result<std::unique_ptr<MomentBuffer>> OpenMomentBuffer(const std::string& ola_path, const MomentTree& tree,
                                                       bool writable, uint64_t length, bool require_clean,
                                                       std::string* why) {
  why->clear();
  const TreeFileHeader& h = tree.header();
  if (h.ola_nodes == 0) return TreeAloneBuffer(ola_path);
  if (::access(ola_path.c_str(), F_OK) != 0) {
    *why = "its Ola buffer is missing";
    return TreeAloneBuffer(ola_path);
  }
  auto ola = OlaFile::Open(ola_path, writable, OlaFileOptions(static_cast<int>(h.ola_nodes), h.ola_bin), length);
  if (!ola.ok()) {
    if (ola.status().code() != Status::Code::kCorruption) return ola.status();
    *why = ola.status().ToString();
    return TreeAloneBuffer(ola_path);
  }
  if (require_clean) {
    const std::string unclean = (*ola)->CleanFor(h.log_sequence, h.array);
    if (!unclean.empty()) {
      *why = "its Ola buffer is not current: " + unclean;
      return TreeAloneBuffer(ola_path);
    }
  }
  return std::unique_ptr<MomentBuffer>(std::make_unique<OlaTreeBuffer>(std::move(ola).value()));
}

Result<std::unique_ptr<MomentBuffer>> BuildMomentBuffer(const std::string& ola_path, ArrayFile& array,
                                                        const TreeOptions& options, uint64_t sequence,
                                                        const ArrayIdentity& identity, BuildStats* stats) {
  if (options.ola_nodes == 0) {
    ::unlink(ola_path.c_str());
    return TreeAloneBuffer(ola_path);
  }
  // Built beside, then renamed into place.
  const std::string fresh_path = ola_path + ".new-" + std::to_string(::getpid());
  uint64_t bytes = 0;
  const auto start = std::chrono::steady_clock::now();
  auto ola =
      OlaFile::Build(fresh_path, array, OlaFileOptions(options.ola_nodes, options.ola_bin), sequence, identity, &bytes);
  if (!ola.ok() || ::rename(fresh_path.c_str(), ola_path.c_str()) != 0) {
    const Status s = ola.ok() ? Status::FromErrno(ola_path, errno) : ola.status();
    ::unlink(fresh_path.c_str());
    return s;
  }
  if (stats) {  // the build is both passes
    stats->data_bytes_read += bytes;
    stats->seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return std::unique_ptr<MomentBuffer>(std::make_unique<OlaTreeBuffer>(std::move(ola).value()));
}

}  // namespace momenta
