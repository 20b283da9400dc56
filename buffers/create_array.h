// Creating an array with its buffer, all or nothing: the one way a front end
// (`momenta create`, momenta.create) makes a new array.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "buffers/buffered_array.h"
#include "storage/npy/dtype.h"
#include "storage/util/status.h"

namespace momenta {

// Creates `path` as a new sparse array of `dtype` and `shape`
// (ArrayFile::Create: it must not exist) and opens it as a writer with a fresh
// buffer (all zero nodes over an all-hole array: instant). `options` is taken
// as given but for io.writable and fresh_array, which this sets. Notices (a
// fallback I/O backend, a sidecar set aside) are appended to *notices, in the
// order they arose, even when the create fails.
//
// A failure leaves nothing behind, so a retry does not meet "File exists": the
// array file (created exclusively, so this call's) is removed, and so is its
// sidecar unless one was there before.
Result<std::unique_ptr<BufferedArray>> CreateBufferedArray(const std::string& path, DType dtype,
                                                           std::span<const uint64_t> shape,
                                                           BufferedArrayOptions options,
                                                           std::vector<std::string>* notices);

}  // namespace momenta
