#include "buffers/tree/tree_buffer.h"

namespace momenta {

Status TreeBuffer::CheckIndexAlone(const MomentTree& tree, const ArrayFile& array) const {
  // A header naming kind ola whose file did not open: the read below says
  // it is missing.
  if (tree.header().ola_nodes > 0) return Status::OK();
  return Status::InvalidArgument(array.path(), "has no Ola buffer (its buffer is hbb): build it with --buffer ola");
}

Status TreeBuffer::IndexMoments(const QueryIo&, ArrayFile&, uint64_t, uint64_t, momenta::IndexMoments*,
                                QueryCost*) const {
  return Status::Corruption(ola_path_, "the Ola buffer is missing");
}

std::unique_ptr<MomentBuffer> TreeAloneBuffer(const std::string& ola_path) {
  return std::make_unique<TreeBuffer>(ola_path);
}

}  // namespace momenta
