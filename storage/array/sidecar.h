// The sidecar folder: where momenta keeps what is its own about an array (the
// moment buffer, the update log, the writer lock, the identity record), and
// the identity record that ties a sidecar to the one array file it describes.
//
// Where the sidecar is (SidecarPath), first match wins:
//   1. an explicit folder (`--sidecar DIR`, BufferedArrayOptions::sidecar);
//   2. MOMENTA_SIDECAR_DIR=ROOT: ROOT + the array's absolute, resolved path +
//      ".momenta" (ROOT/data/x.npy.momenta for /data/x.npy): data on
//      read-only media, or owned by someone else, gets its sidecar elsewhere;
//   3. beside the array: "<path>.momenta", with symbolic links resolved first,
//      so every name that reaches the file through links shares one sidecar
//      (and one writer lock). Hard links cannot be resolved to one name:
//      writers refuse a file with more than one (BufferedArray::Open).
//
// The identity record, "<sidecar>/identity" (format below), says which array
// the sidecar belongs to. A sidecar whose record names another dtype, shape or
// header layout — or another file whose size and modification time the buffer
// does not know — belongs to another array (the file was replaced by np.save,
// rm + create, cp, import --force): it is set aside, renamed
// "<sidecar>.orphan-<UTC time>", with its log intact, and never misread.
//
//   identity, 64 bytes, little-endian
//    0  8  magic "MOMSIDE\0"       24  8  data offset (bytes)
//    8  4  version (1)             32  8  device of the array file
//   12  4  dtype (DType)           40  8  inode of the array file
//   16  8  element count           48  8  hash of the shape (FNV-1a of its dims)
//                                  56  4  ndim      60  4  crc32c of bytes [0, 60)
#pragma once

#include <cstdint>
#include <string>

#include "storage/npy/dtype.h"
#include "storage/npy/npy_format.h"
#include "storage/util/status.h"

namespace momenta {

// The sidecar folder of `array_path` (rules above). `explicit_dir`, when not
// empty, is the answer itself.
std::string SidecarPath(const std::string& array_path, const std::string& explicit_dir = "");

struct SidecarIdentity {
  DType dtype = DType::kF8;
  uint64_t length = 0;
  uint64_t data_offset = 0;
  uint64_t device = 0;
  uint64_t inode = 0;
  uint64_t shape_hash = 0;
  uint32_t ndim = 0;
  bool operator==(const SidecarIdentity&) const = default;

  // The identity of the array file at `array_path` with header `header`.
  static Result<SidecarIdentity> Of(const std::string& array_path, const NpyHeader& header);
  // Same dtype, shape and layout: the log's records decode against it.
  bool SameLayout(const SidecarIdentity& o) const {
    return dtype == o.dtype && length == o.length && data_offset == o.data_offset && shape_hash == o.shape_hash &&
           ndim == o.ndim;
  }
  bool SameFile(const SidecarIdentity& o) const { return device == o.device && inode == o.inode; }
  // "f8 (1000,) at byte 4096"
  std::string Describe() const;
};

inline constexpr uint64_t kSidecarIdentityBytes = 64;

// "<sidecar>/identity".
std::string SidecarIdentityPath(const std::string& sidecar);
// NotFound when there is no record; Corruption when it does not check.
Result<SidecarIdentity> ReadSidecarIdentity(const std::string& sidecar);
// Writes the record atomically (a temporary renamed into place).
[[nodiscard]] Status WriteSidecarIdentity(const std::string& sidecar, const SidecarIdentity& id);

// Renames `sidecar` to "<sidecar>.orphan-<UTC time>" (a suffix is added when
// that exists); returns the new name.
Result<std::string> SetSidecarAside(const std::string& sidecar);

// True when this process may create and change files in `sidecar` (or create
// it, when it does not exist yet). Takes no lock and writes nothing.
bool SidecarWritable(const std::string& sidecar);

}  // namespace momenta
