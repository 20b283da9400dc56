// BufferedArray::Describe: the condition of an array's buffer and, where it
// stays in place, what it is (momenta info), read as it is.
#include <string>

#include "buffers/buffer_kind.h"
#include "buffers/buffered_array.h"
#include "buffers/tree/moment_tree.h"
#include "storage/array/sidecar.h"

namespace momenta {

Result<BufferInfo> BufferedArray::Describe(const std::string& path, const BufferedArrayOptions& options) {
  BufferInfo info;
  auto condition = Inspect(path, options);
  if (!condition.ok()) return condition.status();
  info.condition = *condition;
  using Kind = BufferCondition::Kind;
  if (condition->kind != Kind::kCurrent && condition->kind != Kind::kLiveWriter && condition->kind != Kind::kRecover)
    return info;
  IoOptions io = options.io;
  io.writable = false;
  const std::string sidecar = SidecarPath(path, options.sidecar);
  auto tree = MomentTree::Open(sidecar + "/tree", /*writable=*/false, io);
  if (!tree.ok()) return info;  // as the next command will find it: it says so then
  info.buffer = DescribeTree(**tree);
  std::string why;
  auto buffer = OpenMomentBuffer(sidecar + "/ola", **tree, /*writable=*/false, (*tree)->layout().length(),
                                 /*require_clean=*/false, &why);
  if (buffer.ok()) (*buffer)->Describe(&*info.buffer);  // an unreadable Ola file: described as missing
  return info;
}

}  // namespace momenta
